// The two-stage path as the host API sees it: fill the per-head buffer with -inf, stage 1, head sum
// (three launches).
#pragma once

#include "pmqa_kernels/common/launch.hpp"
#include "pmqa_kernels/two_stage/kernel.hpp"

namespace pmqa::kernels::detail {

struct TwoStageSpec {
  static constexpr KernelId kId = KernelId::two_stage;
  static constexpr bool kPerHeadBuffer = true;  // stage 1 writes [H, B*N, max_model_len]
  static Tolerance tolerance() { return Tolerance::fp32(); }
  static KernelShapes shapes() { return {}; }
  // Stage 1 is fused-scalar's head loop: any device, fp8 or e2m1 in any layout.
  static std::string unfit(const Case&, const DeviceCaps&) { return ""; }

  template <class Hooks, class Backend>
  static void launch(Backend& be, const LaunchArgs& a) {
    const Case& c = a.c;
    const std::int64_t cells = c.heads * c.rows() * c.max_model_len;
    be.launch("fill_minus_infinity_kernel", kdev::fill_minus_infinity_kernel<Hooks>,
              dim3(static_cast<unsigned>(flat_blocks(cells, be.resident_blocks(), kdev::kFlatThreads))), dim3(kdev::kFlatThreads),
              a.p.per_head, cells);
    if (is_fp4(c.format)) {
      with_e2m1_instance(c, [&]<int kD>() {
        be.launch("stage1_e2m1_kernel", kdev::stage1_e2m1_kernel<Hooks, kD>, kdev::scalar_grid(c.max_model_len, c.batch),
                  dim3(kdev::kFusedThreads), a.p);
      });
    } else {
      with_instance(c, [&]<int kD, bool kFnuz>() {
        be.launch("stage1_kernel", kdev::stage1_kernel<Hooks, kD, kFnuz>, kdev::scalar_grid(c.max_model_len, c.batch),
                  dim3(kdev::kFusedThreads), a.p);
      });
    }
    be.launch("head_sum_kernel", kdev::head_sum_kernel<Hooks>,
              dim3(static_cast<unsigned>(flat_blocks(c.rows() * c.max_model_len, be.resident_blocks(), kdev::kFlatThreads))),
              dim3(kdev::kFlatThreads), a.p);
  }
};

}  // namespace pmqa::kernels::detail
