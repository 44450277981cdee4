// pmqa matrix: not built yet.
#include "command.hpp"

namespace pmqa::cli {

Command add_matrix_command(CLI::App& parent) {
  Command cmd;
  cmd.app = parent.add_subcommand("matrix", "(not available yet)");
  cmd.run = [] { throw UsageError("pmqa matrix is not available in this build"); return kExitInvalid; };
  return cmd;
}

}  // namespace pmqa::cli
