// Hopper's warpgroup tensor-core instruction as fused-mma's wgmma kernel issues it:
// wgmma.mma_async m64n64k32, fp8 e4m3 x e4m3 -> fp32, both operands read from shared memory.
// sm_90 has no fp8 mma.sync (ptxas lowers it to conversions and f16 HMMA, see
// bench/results/notes.md); wgmma is its native fp8 instruction. It exists only in code
// built for sm_90a (__CUDA_ARCH_FEAT_SM90_ALL); everywhere else (the host executor, other GPUs)
// every thread computes its own accumulator entries from shared memory, so the kernel's operand
// layout and fragment indexing run, and are checked, in CI.
//
// Operands (K-major, 128-byte swizzle): a 64-row tile of 128-byte rows, 1024-byte aligned, row r's
// 16-byte segment s stored at segment s ^ (r & 7) (arch/nv_swizzle.hpp's Swizzle128). A = 64 keys x
// 32 bytes of d, B = 64 query rows x the same 32 bytes; k-step `ks` reads bytes [32ks, 32ks+32).
// Accumulator (per thread of the warpgroup; warp w, lane = 4g + t):
//   d[i] -> D[16w + g + 8*((i>>1)&1)][8*(i>>2) + 2t + (i&1)]   (row = key, column = query row)
#pragma once

#include "pmqa_kernels/arch/nv_swizzle.hpp"
#include "pmqa_kernels/common/bytes.hpp"
#include "pmqa_kernels/common/fp8.hpp"

PMQA_KDEV_BEGIN

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define PMQA_WGMMA 1
#endif

struct WgmmaFp8 {
  static constexpr int kThreads = 128;  // a warpgroup: 4 warps
  static constexpr int kM = 64, kN = 64, kK = 32;
  static constexpr int kAcc = kM * kN / kThreads;  // 32 fp32 per thread

  // Orders this thread's earlier register and shared-memory accesses before the wgmma that follow.
  static PMQA_DEV void fence() {
#if defined(PMQA_WGMMA)
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
  }
  static PMQA_DEV void commit() {
#if defined(PMQA_WGMMA)
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
  }
  // Waits for every committed wgmma of this warpgroup; then settle() each accumulator read next.
  static PMQA_DEV void wait_all() {
#if defined(PMQA_WGMMA)
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#endif
  }
  // Keeps the compiler from reading d before the wait: it sees d written by the issuing asm, not
  // by the tensor cores, and would otherwise be free to move the reads up.
  static PMQA_DEV void settle(float (&d)[kAcc]) {
#if defined(PMQA_WGMMA)
    for (int i = 0; i < kAcc; ++i) asm volatile("" : "+f"(d[i])::"memory");
#else
    static_cast<void>(d);
#endif
  }

  // Shared-memory writes by ordinary stores or cp.async (the generic proxy) become visible to the
  // tensor cores (the async proxy) only after this fence, then a barrier of the writers.
  static PMQA_DEV void fence_shared_for_tensor_cores() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
  }

  // An operand tile: its address (what the emulation reads) and, on sm_90a, its descriptor, built
  // once per kernel and moved with integer adds (its address field counts 16-byte units).
  struct Tile {
    const std::uint8_t* at;
    std::uint64_t desc;
  };
  static PMQA_DEV Tile tile(const std::uint8_t* at) {
#if defined(PMQA_WGMMA)
    return {at, descriptor(at)};
#else
    return {at, 0};
#endif
  }
  // The tile `bytes` further on (a multiple of 1024, so the swizzle phase is kept).
  static PMQA_DEV Tile advance(const Tile& t, int bytes) {
    return {t.at + bytes, t.desc + static_cast<std::uint64_t>(bytes >> 4)};
  }

  // d (+)= A * B^T over bytes [32ks, 32ks+32) of the rows: A the 64-row tile a, B the 64-row tile
  // b. accumulate == false overwrites d. Asynchronous on the GPU: commit(), then wait_all().
  static PMQA_DEV void mma(float (&d)[kAcc], const Tile& a, const Tile& b, int ks, bool accumulate) {
#if defined(PMQA_WGMMA)
    issue(d, a.desc + static_cast<std::uint64_t>(2 * ks), b.desc + static_cast<std::uint64_t>(2 * ks), accumulate ? 1 : 0);
#else
    emulate(d, a.at, b.at, ks, accumulate);
#endif
  }

  // The byte of row r, column (d byte) c in a swizzled tile.
  static PMQA_DEV int at(int r, int c) { return Swizzle128::segment(r, c >> 4) + (c & 15); }

  static PMQA_DEV void emulate(float (&d)[kAcc], const std::uint8_t* a, const std::uint8_t* b, int ks, bool accumulate) {
    const int tid = static_cast<int>(threadIdx.x) % kThreads, w = tid / 32, g = (tid % 32) >> 2, t = tid & 3;
    for (int i = 0; i < kAcc; ++i) {
      const int row = 16 * w + g + 8 * ((i >> 1) & 1), col = 8 * (i >> 2) + 2 * t + (i & 1);
      float sum = accumulate ? d[i] : 0.0f;
      for (int k = kK * ks; k < kK * (ks + 1); ++k)  // products of fp8 values are exact in fp32
        sum += fp8_to_float<false>(a[at(row, k)]) * fp8_to_float<false>(b[at(col, k)]);
      d[i] = sum;
    }
  }

#if defined(PMQA_WGMMA)
  // The shared-memory matrix descriptor: start address, leading byte offset (unused by swizzled
  // K-major layouts; 16 B), stride byte offset (1024 B: from one 8-row group to the next), and
  // the 128-byte swizzle mode. Advancing the start by 32 B selects the next k-step: the hardware
  // swizzles on address bits, which is why tiles are 1024-byte aligned.
  static PMQA_DEV std::uint64_t descriptor(const std::uint8_t* tile) {
    const auto addr = static_cast<std::uint32_t>(__cvta_generic_to_shared(tile));
    return static_cast<std::uint64_t>((addr & 0x3FFFF) >> 4) | (std::uint64_t{16 >> 4} << 16) |
           (std::uint64_t{1024 >> 4} << 32) | (std::uint64_t{1} << 62);
  }

#define PMQA_WG_D4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define PMQA_WG_D16(i) PMQA_WG_D4(i), PMQA_WG_D4(i + 4), PMQA_WG_D4(i + 8), PMQA_WG_D4(i + 12)
  static PMQA_DEV void issue(float (&d)[kAcc], std::uint64_t a, std::uint64_t b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
        "%32, %33, p, 1, 1;\n}\n"
        : PMQA_WG_D16(0), PMQA_WG_D16(16)
        : "l"(a), "l"(b), "r"(accumulate));
  }
#undef PMQA_WG_D16
#undef PMQA_WG_D4
#endif
};

PMQA_KDEV_END
