// pmqa: verify FP8 paged MQA logits kernels. See README.md for the commands.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "command.hpp"

int main(int argc, char** argv) {
  using namespace pmqa::cli;
  CLI::App app{"pmqa: reference and verification harness for FP8 paged MQA logits kernels"};
  app.set_version_flag("--version", std::string("pmqa ") + PMQA_VERSION, "print pmqa's version and exit");
  app.require_subcommand(1);
  std::vector<Command> commands;
  commands.push_back(add_check_command(app));
  commands.push_back(add_gen_command(app));
  commands.push_back(add_verify_command(app));
  commands.push_back(add_dispatch_command(app));
  commands.push_back(add_matrix_command(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitInvalid;
  }
  try {
    for (auto& c : commands)
      if (c.app->parsed()) return c.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pmqa: error: %s\n", e.what());
    return kExitInvalid;
  }
  return kExitInvalid;
}
