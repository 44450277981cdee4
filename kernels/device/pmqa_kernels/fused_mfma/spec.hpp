// fused-mfma as the host API sees it: AMD's fp8 MFMA in the arch's own format.
#pragma once

#include "pmqa_kernels/common/launch.hpp"
#include "pmqa_kernels/fused_mfma/kernel.hpp"

namespace pmqa::kernels::detail {

struct FusedMfmaSpec {
  static constexpr KernelId kId = KernelId::fused_mfma;
  static Tolerance tolerance() { return Tolerance::matrix_unit(); }
  static KernelShapes shapes() { return matrix_shapes(); }
  static std::string unfit(const Case& c, const DeviceCaps& d) {
    if (const std::string why = e2m1_unfit(c, "MFMA"); !why.empty()) return why;
    if (!d.runs(MatrixKind::mfma, *fp8_of(c.format)))  // an fp8 format past the line above
      return "the device has no fp8 MFMA for " + std::string(to_string(c.format)) + " (gfx942 takes FNUZ, gfx950 OCP)";
    return shape_unfit(shapes(), c);
  }

  // A block per kMmaKeysPerCta keys of each sequence, per piece of query rows.
  template <class Hooks, class Backend>
  static void launch(Backend& be, const LaunchArgs& a) {
    const dim3 grid(static_cast<unsigned>((a.c.max_model_len + kdev::kMmaKeysPerCta - 1) / kdev::kMmaKeysPerCta),
                    static_cast<unsigned>(a.c.batch));
    for_each_row_piece(a.c, a.p, [&](const kdev::LogitsParams& q, int rows) {
      auto mfma = [&](auto fn) { be.launch("fused_mfma_kernel", fn, grid, dim3(kdev::kMfmaThreads), q); };
      if (a.c.format == ValueFormat::e4m3fnuz)
        by_rows(rows, mfma, kdev::fused_mfma_kernel<Hooks, true, 32>, kdev::fused_mfma_kernel<Hooks, true, 64>,
                kdev::fused_mfma_kernel<Hooks, true, 128>);
      else
        by_rows(rows, mfma, kdev::fused_mfma_kernel<Hooks, false, 32>, kdev::fused_mfma_kernel<Hooks, false, 64>,
                kdev::fused_mfma_kernel<Hooks, false, 128>);
    });
  }
};

}  // namespace pmqa::kernels::detail
