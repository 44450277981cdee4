// pmqa verify: not built yet.
#include "command.hpp"

namespace pmqa::cli {

Command add_verify_command(CLI::App& parent) {
  Command cmd;
  cmd.app = parent.add_subcommand("verify", "(not available yet)");
  cmd.run = [] { throw UsageError("pmqa verify is not available in this build"); return kExitInvalid; };
  return cmd;
}

}  // namespace pmqa::cli
