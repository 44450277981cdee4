// fused-scalar as the host API sees it: its id, its tolerance profile, what it takes, how it launches.
#pragma once

#include "pmqa_kernels/common/launch.hpp"
#include "pmqa_kernels/fused_scalar/kernel.hpp"

namespace pmqa::kernels::detail {

struct FusedScalarSpec {
  static constexpr KernelId kId = KernelId::fused_scalar;
  static Tolerance tolerance() { return Tolerance::fp32(); }
  static KernelShapes shapes() { return {}; }
  // Portable fp32 FMAs: any device, any case the host API takes, fp8 or e2m1 in any layout.
  static std::string unfit(const Case&, const DeviceCaps&) { return ""; }

  template <class Hooks, class Backend>
  static void launch(Backend& be, const LaunchArgs& a) {
    if (is_fp4(a.c.format)) {
      with_e2m1_instance(a.c, [&]<int kD>() {
        be.launch("fused_logits_e2m1_kernel", kdev::fused_logits_e2m1_kernel<Hooks, kD>,
                  kdev::scalar_grid(a.c.max_model_len, a.c.batch), dim3(kdev::kFusedThreads), a.p);
      });
      return;
    }
    with_instance(a.c, [&]<int kD, bool kFnuz>() {
      be.launch("fused_logits_kernel", kdev::fused_logits_kernel<Hooks, kD, kFnuz>, kdev::scalar_grid(a.c.max_model_len, a.c.batch),
                dim3(kdev::kFusedThreads), a.p);
    });
  }
};

}  // namespace pmqa::kernels::detail
