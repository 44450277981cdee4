// pmqa gen: not built yet.
#include "command.hpp"

namespace pmqa::cli {

Command add_gen_command(CLI::App& parent) {
  Command cmd;
  cmd.app = parent.add_subcommand("gen", "(not available yet)");
  cmd.run = [] { throw UsageError("pmqa gen is not available in this build"); return kExitInvalid; };
  return cmd;
}

}  // namespace pmqa::cli
