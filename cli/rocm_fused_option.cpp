#include "rocm_fused_option.hpp"

namespace pmqa::cli {

void RocmFusedOption::add_to(CLI::App& app) {
  option_ = app.add_option("--rocm-fused", targets_,
                           "Replace the ROCm fused guard's targets (default gfx942,gfx950); --rocm-fused gfx942 replays "
                           "the guard before vLLM PR 42062")
                ->delimiter(',');
}

const dispatch::Policy& RocmFusedOption::policy() const {
  if (option_ == nullptr || option_->count() == 0) return dispatch::default_policy();
  if (!custom_) {
    dispatch::DefaultPolicyOptions options;
    options.rocm_fused_targets = targets_;
    custom_ = std::make_unique<dispatch::DefaultPolicy>(options, dispatch::ArchTable::builtin(), "default with --rocm-fused");
  }
  return *custom_;
}

}  // namespace pmqa::cli
