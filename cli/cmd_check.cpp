// pmqa check: placeholder.
#include "command.hpp"
namespace pmqa::cli {
Command add_check_command(CLI::App& parent) {
  Command cmd;
  cmd.app = parent.add_subcommand("check", "check");
  cmd.run = [] { return kExitInvalid; };
  return cmd;
}
}  // namespace pmqa::cli
