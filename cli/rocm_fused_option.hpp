// --rocm-fused T1,T2: the ROCm fused guard's targets replaced (default gfx942,gfx950), for pmqa
// dispatch and pmqa matrix alike; `--rocm-fused gfx942` replays the guard before vLLM PR 42062.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "pmqa/dispatch/dispatch.hpp"

namespace pmqa::cli {

class RocmFusedOption {
 public:
  void add_to(CLI::App& app);
  // The policy a command checks: the default one, or the default with the given targets (built
  // on first use, after parsing).
  const dispatch::Policy& policy() const;

 private:
  std::vector<std::string> targets_;
  CLI::Option* option_ = nullptr;
  mutable std::unique_ptr<dispatch::DefaultPolicy> custom_;
};

}  // namespace pmqa::cli
