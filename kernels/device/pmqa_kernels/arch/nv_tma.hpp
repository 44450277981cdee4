// Hopper's tensor memory accelerator (TMA) and the shared-memory barriers its copies complete on,
// as fused-mma's wgmma kernel uses them: one thread copies a whole 64-key chunk (8 KB, written in
// the tensor cores' 128-byte swizzle by the copy engine itself) and its 256 bytes of scales, and
// the warpgroup waits on the stage's barrier. The 128 threads then spend no instruction on
// addresses or copies (the cp.async form took ~90 of a warp's ~300 instructions per chunk on the
// H200).
//
// On sm_90a (PMQA_WGMMA) these are the PTX instructions. Everywhere else (the host executor) they
// are emulated: the copy happens at once, byte for byte as the hardware places it, and the
// barrier keeps its phase, pending arrivals and transaction bytes, so a wait on a phase that
// cannot have completed (a missing arrival, a wrong parity) traps instead of passing.
//
// KeyMap: the keys of the KV cache as a 3-D tensor of bytes, (d: 128, token: block_size, block:
// num_blocks) with strides (1, 128, block_stride); a copy takes the box (128, box_rows, 1) at
// (0, row, page). On a GPU it holds the driver's encoding (cuTensorMapEncodeTiled, built by the
// executor, passed as a __grid_constant__ kernel argument); on the host the fields the emulation
// reads.
#pragma once

#include "pmqa_kernels/arch/nv_swizzle.hpp"
#include "pmqa_kernels/arch/nv_wgmma.hpp"

PMQA_KDEV_BEGIN

// NVIDIA device code reads a tensor map where it was passed: in the kernel's parameter space.
#if defined(__CUDACC__) && defined(PMQA_DEVICE_BUILD)
#define PMQA_GRID_CONSTANT __grid_constant__
#else
#define PMQA_GRID_CONSTANT
#endif

struct alignas(128) KeyMap {
  std::uint64_t words[16] = {};  // CUtensorMap's 128 bytes on a GPU; KeyMapFields on the host
};

// A KeyMap's meaning, and the host executor's encoding of it.
struct KeyMapFields {
  const std::uint8_t* base = nullptr;
  std::int64_t block_stride = 0, block_size = 0, blocks = 0;
  std::int64_t box_rows = 0;  // tokens a copy takes (the kernel's chunk)
};
inline KeyMap host_key_map(const KeyMapFields& f) {
  static_assert(sizeof(KeyMapFields) <= sizeof(KeyMap));
  KeyMap m;
  __builtin_memcpy(m.words, &f, sizeof f);
  return m;
}

// A shared-memory barrier (mbarrier): 8 bytes, 8-byte aligned, in shared memory.
using Mbarrier = std::uint64_t;

#if defined(PMQA_WGMMA)
PMQA_DEV unsigned shared_address(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }
#else
// The host emulation's barrier state: arrivals per phase (16 bits), pending arrivals (16),
// the phase's parity (1), pending transaction bytes (24).
struct MbarrierState {
  std::uint32_t count, pending, phase, tx;
};
PMQA_DEV MbarrierState mbar_unpack(Mbarrier w) {
  return {static_cast<std::uint32_t>(w & 0xFFFF), static_cast<std::uint32_t>((w >> 16) & 0xFFFF),
          static_cast<std::uint32_t>((w >> 32) & 1), static_cast<std::uint32_t>(w >> 33)};
}
// Stores the state, completing the phase when no arrival and no byte is pending.
PMQA_DEV void mbar_pack(Mbarrier& b, MbarrierState s) {
  if (s.pending == 0 && s.tx == 0) {
    s.pending = s.count;
    s.phase ^= 1;
  }
  b = s.count | (std::uint64_t{s.pending} << 16) | (std::uint64_t{s.phase} << 32) | (std::uint64_t{s.tx} << 33);
}
// One arrival announcing `bytes` more to come; then `bytes` delivered by a copy.
PMQA_DEV void mbar_emulate_arrival(Mbarrier& b, int bytes) {
  MbarrierState s = mbar_unpack(b);
  if (s.pending == 0) __trap();  // more arrivals than the phase has
  --s.pending;
  s.tx += static_cast<std::uint32_t>(bytes);
  mbar_pack(b, s);
}
PMQA_DEV void mbar_complete_tx(Mbarrier& b, int bytes) {
  MbarrierState s = mbar_unpack(b);
  if (s.tx < static_cast<std::uint32_t>(bytes)) __trap();  // more bytes than announced
  s.tx -= static_cast<std::uint32_t>(bytes);
  mbar_pack(b, s);
}
#endif

// Sets the barrier up for `count` arrivals per phase (one thread, then mbar_init_fence and a
// barrier before anyone else uses it).
PMQA_DEV void mbar_init(Mbarrier& b, int count) {
#if defined(PMQA_WGMMA)
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(&b)), "r"(count) : "memory");
#else
  b = static_cast<std::uint64_t>(count) | (static_cast<std::uint64_t>(count) << 16);
#endif
}

// Makes initialised barriers visible to the copy engine (the async proxy).
PMQA_DEV void mbar_init_fence() {
#if defined(PMQA_WGMMA)
  asm volatile("fence.mbarrier_init.release.cluster;\nfence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

// One arrival.
PMQA_DEV void mbar_arrive(Mbarrier& b) {
#if defined(PMQA_WGMMA)
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(&b)) : "memory");
#else
  mbar_emulate_arrival(b, 0);
#endif
}

// One arrival that also announces `bytes` the copies below will deliver to this phase.
PMQA_DEV void mbar_arrive_expect(Mbarrier& b, int bytes) {
#if defined(PMQA_WGMMA)
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(&b)), "r"(bytes) : "memory");
#else
  mbar_emulate_arrival(b, bytes);
#endif
}

// An arrival when all of this thread's earlier cp.async copies have landed (counted in the
// barrier's arrivals per phase).
PMQA_DEV void mbar_arrive_on_copies(Mbarrier& b) {
#if defined(PMQA_WGMMA)
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(shared_address(&b)) : "memory");
#else
  mbar_arrive(b);  // the host's copies have landed already
#endif
}

// Waits until the phase with parity `parity` has completed; what its copies wrote is then visible
// to the waiting thread.
PMQA_DEV void mbar_wait(Mbarrier& b, int parity) {
#if defined(PMQA_WGMMA)
  const unsigned at = shared_address(&b);
  unsigned done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(at), "r"(parity)
        : "memory");
  } while (!done);
#else
  // Every copy the kernel waits for was issued (and, here, completed) before the barriers the
  // waiter passed since: a phase still open now would never complete on a GPU either.
  if (mbar_unpack(b).phase == static_cast<std::uint32_t>(parity)) __trap();
#endif
}

// Fetches the tensor map into the constant cache ahead of the first copy.
PMQA_DEV void prefetch_key_map(const KeyMap& map) {
#if defined(PMQA_WGMMA)
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(&map) : "memory");
#else
  static_cast<void>(map);
#endif
}

// The L2 policy of the key copies: every key byte is read once, so its lines go first when L2
// needs room, before the query rows, weights, block table and context lengths every CTA reuses.
// An opaque 64-bit value (none on the host), made once per thread and passed to the copies.
PMQA_DEV std::uint64_t stream_once_policy() {
  std::uint64_t policy = 0;
#if defined(PMQA_WGMMA)
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
#endif
  return policy;
}

// Starts fetching the 128-byte line at `at` into L2 (the host: nothing).
PMQA_DEV void prefetch_l2(const void* at) {
#if defined(PMQA_WGMMA)
  asm volatile("prefetch.global.L2 [%0];\n" ::"l"(at));
#else
  static_cast<void>(at);
#endif
}

// Keys (row .. row + box_rows - 1) of physical block `page` into a 1024-byte aligned stage,
// 128-byte swizzled (Swizzle128), completing the box's bytes on `bar`. Boxes past the tensor read
// zeros.
// kHint: with the L2 policy `policy` (stream_once_policy), else L2's default.
template <bool kHint>
PMQA_DEV void tma_load_keys(const KeyMap& map, std::int32_t page, std::int32_t row, std::uint8_t* stage, Mbarrier& bar,
                            std::uint64_t policy) {
#if defined(PMQA_WGMMA)
  if constexpr (kHint)
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
        " [%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(shared_address(stage)),
        "l"(&map), "r"(0), "r"(row), "r"(page), "r"(shared_address(&bar)), "l"(policy)
        : "memory");
  else
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(
            shared_address(stage)),
        "l"(&map), "r"(0), "r"(row), "r"(page), "r"(shared_address(&bar))
        : "memory");
#else
  static_cast<void>(policy);
  KeyMapFields f;
  __builtin_memcpy(&f, map.words, sizeof f);
  constexpr int kRow = Swizzle128::kRowBytes;
  for (int r = 0; r < static_cast<int>(f.box_rows); ++r) {
    const std::int64_t token = static_cast<std::int64_t>(row) + r;
    const bool inside = page >= 0 && page < f.blocks && token >= 0 && token < f.block_size;
    for (int s = 0; s < kRow / 16; ++s) {
      std::uint8_t* dst = stage + Swizzle128::segment(r, s);
      if (inside) __builtin_memcpy(dst, f.base + page * f.block_stride + token * kRow + 16 * s, 16);
      else __builtin_memset(dst, 0, 16);
    }
  }
  mbar_complete_tx(bar, static_cast<int>(f.box_rows) * kRow);
#endif
}

// `bytes` (a multiple of 16; both addresses 16-byte aligned) from global to shared memory,
// completing them on `bar`; kHint as tma_load_keys.
template <bool kHint>
PMQA_DEV void bulk_load(void* dst, const void* src, int bytes, Mbarrier& bar, std::uint64_t policy) {
#if defined(PMQA_WGMMA)
  if constexpr (kHint)
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;\n" ::"r"(
                     shared_address(dst)),
                 "l"(src), "r"(bytes), "r"(shared_address(&bar)), "l"(policy)
                 : "memory");
  else
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                     shared_address(dst)),
                 "l"(src), "r"(bytes), "r"(shared_address(&bar))
                 : "memory");
#else
  static_cast<void>(policy);
  __builtin_memcpy(dst, src, static_cast<std::size_t>(bytes));
  mbar_complete_tx(bar, bytes);
#endif
}

PMQA_KDEV_END
