// pmqa gauntlet: not built yet.
#include "command.hpp"

namespace pmqa::cli {

Command add_gauntlet_command(CLI::App& parent) {
  Command cmd;
  cmd.app = parent.add_subcommand("gauntlet", "(not available yet)");
  cmd.run = [] { throw UsageError("pmqa gauntlet is not available in this build"); return kExitInvalid; };
  return cmd;
}

}  // namespace pmqa::cli
