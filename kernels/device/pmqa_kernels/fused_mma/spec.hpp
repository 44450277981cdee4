// fused-mma's two kernels as the host API sees them: the wgmma one (Hopper, OCP) first, the
// mma.sync one (sm_89 and later, either format) where wgmma does not fit.
#pragma once

#include "pmqa_kernels/common/launch.hpp"
#include "pmqa_kernels/fused_mma/mma_sync.hpp"
#include "pmqa_kernels/fused_mma/wgmma.hpp"

namespace pmqa::kernels::detail {

struct FusedWgmmaSpec {
  static constexpr KernelId kId = KernelId::fused_wgmma;
  static Tolerance tolerance() { return Tolerance::matrix_unit(); }
  static constexpr bool kTakesTuning = true;  // Tuning::Wgmma (fused_mma/tuning.hpp)
  static KernelShapes shapes() { return matrix_shapes(); }
  static std::string unfit(const Case& c, const DeviceCaps& d) {
    if (const std::string why = e2m1_unfit(c, "wgmma"); !why.empty()) return why;
    if (!d.has(MatrixKind::wgmma)) return "the device has no wgmma (sm_90 running sm_90a code)";
    if (c.format != ValueFormat::e4m3fn) return "wgmma takes OCP e4m3 only and the case is FNUZ";
    return shape_unfit(shapes(), c);
  }
  // One tensor-map copy per chunk where the cache allows it (the plain layout, whole 64-key boxes
  // inside a block, 16-byte strides) and the backend encodes the map; cp.async by every thread
  // otherwise (a kernel of its own).
  static bool key_map_fits(const Case& c) {
    return c.layout == KvLayout::normal && c.block_size % kdev::kChunkKeys == 0 && c.block_stride % 16 == 0;
  }

  template <class Hooks, class Backend, class Tuning>
  static void launch(Backend& be, const LaunchArgs& a) {
    using Config = typename Tuning::Wgmma;
    for_each_row_piece(a.c, a.p, [&](const kdev::LogitsParams& q, int rows) {
      auto wgmma = [&](auto fn) {
        const dim3 grid(static_cast<unsigned>(
            share_units(be.persistent_blocks(rows == 128 ? kdev::kWgCtasPerSm<128> : kdev::kWgCtasPerSm<64>), 1)));
        const std::size_t shared = rows == 128 ? sizeof(kdev::WgSharedSpace<128>) : sizeof(kdev::WgSharedSpace<64>);
        be.launch_shared("fused_wgmma_kernel", fn, grid, dim3(kdev::kWgThreads), shared, q, a.key_map);
      };
      if (a.p.key_tma != 0)
        by_rows(rows, wgmma, kdev::fused_wgmma_kernel<Hooks, Config, 32, true>, kdev::fused_wgmma_kernel<Hooks, Config, 64, true>,
                kdev::fused_wgmma_kernel<Hooks, Config, 128, true>);
      else
        by_rows(rows, wgmma, kdev::fused_wgmma_kernel<Hooks, Config, 32, false>,
                kdev::fused_wgmma_kernel<Hooks, Config, 64, false>, kdev::fused_wgmma_kernel<Hooks, Config, 128, false>);
    });
  }
};

struct FusedMmaSyncSpec {
  static constexpr KernelId kId = KernelId::fused_mma_sync;
  static Tolerance tolerance() { return Tolerance::matrix_unit(); }
  static constexpr bool kTakesTuning = true;  // Tuning::MmaSync (fused_mma/tuning.hpp)
  static KernelShapes shapes() { return matrix_shapes(); }
  // The fp8 is decoded exactly to f16 before the mma, so either format runs wherever mma.sync does.
  static std::string unfit(const Case& c, const DeviceCaps& d) {
    if (const std::string why = e2m1_unfit(c, "mma.sync"); !why.empty()) return why;
    if (!d.has(MatrixKind::mma_sync)) return "the device has no fp8 mma.sync (NVIDIA sm_89 and later)";
    return shape_unfit(shapes(), c);
  }

  // A persistent grid of warps splitting the live chunks.
  template <class Hooks, class Backend, class Tuning>
  static void launch(Backend& be, const LaunchArgs& a) {
    using Config = typename Tuning::MmaSync;
    const dim3 grid(static_cast<unsigned>(share_units(be.persistent_blocks(kdev::kMmaCtasPerSm), kdev::kMmaWarps)));
    for_each_row_piece(a.c, a.p, [&](const kdev::LogitsParams& q, int rows) {
      auto mma = [&](auto fn) {
        be.launch_shared("fused_mma_kernel", fn, grid, dim3(kdev::kMmaThreads), sizeof(kdev::MmaShared), q);
      };
      if (a.c.format == ValueFormat::e4m3fnuz)
        by_rows(rows, mma, kdev::fused_mma_kernel<Hooks, Config, true, 32>, kdev::fused_mma_kernel<Hooks, Config, true, 64>,
                kdev::fused_mma_kernel<Hooks, Config, true, 128>);
      else
        by_rows(rows, mma, kdev::fused_mma_kernel<Hooks, Config, false, 32>, kdev::fused_mma_kernel<Hooks, Config, false, 64>,
                kdev::fused_mma_kernel<Hooks, Config, false, 128>);
    });
  }
};

}  // namespace pmqa::kernels::detail
