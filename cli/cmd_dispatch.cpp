// pmqa dispatch: not built yet.
#include "command.hpp"

namespace pmqa::cli {

Command add_dispatch_command(CLI::App& parent) {
  Command cmd;
  cmd.app = parent.add_subcommand("dispatch", "(not available yet)");
  cmd.run = [] { throw UsageError("pmqa dispatch is not available in this build"); return kExitInvalid; };
  return cmd;
}

}  // namespace pmqa::cli
