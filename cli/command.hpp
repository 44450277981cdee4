// The pmqa command is a set of subcommands, one per file (cmd_<name>.cpp). Each registers its
// options on the parent app and returns the function that runs it once parsing selected it.
#pragma once

#include <functional>
#include <stdexcept>

#include <CLI/CLI.hpp>

namespace pmqa::cli {

// Exit statuses every subcommand keeps to (a CI job gates on them).
inline constexpr int kExitPass = 0;      // all checks passed
inline constexpr int kExitMismatch = 1;  // a check failed
inline constexpr int kExitInvalid = 2;   // invalid input, usage error, or nothing to run on

// Thrown by a subcommand for bad input; main prints it and exits kExitInvalid.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Command add_check_command(CLI::App& parent);
Command add_gen_command(CLI::App& parent);
Command add_verify_command(CLI::App& parent);
Command add_dispatch_command(CLI::App& parent);
Command add_matrix_command(CLI::App& parent);

}  // namespace pmqa::cli
