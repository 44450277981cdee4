// The HIP subset that pmqa's kernel sources may use, for host builds (the host executor).
// GPU builds include <hip/hip_runtime.h> instead; the same kernel source compiles against both.
//
// Supported, with HIP semantics unless noted:
//   qualifiers   __global__ __device__ __host__ __forceinline__ __launch_bounds__(...)
//                __restrict__ (g++'s own keyword)
//   __shared__   `static thread_local` (all fibers of a block run on one OS thread, and the blocks of
//                one OS thread run in turn, so this is exactly per-block storage). Limits: no
//                initialiser, trivially constructible types only, no `extern __shared__` (dynamic
//                shared memory does not compile), and like on a GPU the contents at block start are
//                whatever the previous block on that OS thread left (never rely on them).
//   dim3, threadIdx blockIdx blockDim gridDim (.x .y .z, unsigned int), warpSize (int, 32 or 64,
//                chosen per launch: read it, never assume it). Reading them outside a kernel throws.
//   __syncthreads()            block barrier; every thread of the block must reach the same call
//                              site; a thread that returned instead is a reported deadlock.
//   __shfl(v, srcLane, width = warpSize)      } v: int, unsigned, long long, unsigned long long,
//   __shfl_xor(v, laneMask, width = warpSize) }    float, double. width: a power of two <= warpSize.
//   __shfl_up(v, delta, width = warpSize)     } Lanes form segments of `width`; a source outside the
//   __shfl_down(v, delta, width = warpSize)   } segment gives the caller's own value (HIP's rule; xor
//                may read an earlier segment). __shfl takes srcLane modulo width, as CUDA and current
//                HIP do (HIP 5.x headers did not: keep srcLane in [0, width) for portable kernels).
//                Every existing lane of the warp must take part, at the same call site with the same
//                type and width. In a partial warp (block size not a multiple of warpSize) a source
//                lane that does not exist gives an unspecified value: the caller's own with
//                schedule_seed 0, seeded garbage bits otherwise.
//   __syncwarp()               warp barrier (full mask only): every existing lane of the warp must
//                              reach the same call site; it orders the lanes' memory accesses.
//   __threadfence_block(), __threadfence()
//   atomicAdd(float*|int*|unsigned*, value)   correct across OS threads (std::atomic_ref, relaxed)
//   __trap()                                  throws HostRuntimeError naming the thread
//   the C/C++ standard library of the host (<cmath> is included), as plain host code.
// Anything else does not compile: the common HIP/CUDA intrinsics below fail with a
// "pmqa host runtime: X is not supported" message, everything else as an undeclared name.
// Arch-specific code (MFMA, mma.sync, fp8 conversion builtins) belongs behind #if with a portable
// fallback; PMQA_HIP_HOST is defined to 1 in host builds for that purpose.
#pragma once

#if defined(__HIPCC__) || defined(__CUDACC__) || defined(__HIP_DEVICE_COMPILE__)
#error "hip_host.hpp is for host builds of the kernels; GPU builds include <hip/hip_runtime.h>"
#endif

#include <atomic>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <source_location>
#include <type_traits>

#include "pmqa/kernels/host/runtime.hpp"

#define PMQA_HIP_HOST 1

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
#define __shared__ static thread_local

// PMQA_SHARED(type, name, [dims]): per-block shared memory without thread_local. __shared__ above
// is static thread_local, which puts every array of every kernel instantiation into the static TLS
// block of *every* thread of the process (the user's own std::threads included): with the
// matrix-unit kernels' ~50 KB of shared arrays times their instantiations that passed 8 MB and
// overflowed 8 MB thread stacks. PMQA_SHARED asks the worker running the block for a buffer
// instead (one per declaration, kept for later blocks; at block start it holds what the worker's
// previous block left, as on a GPU, and zeros in its first block). pmqa's kernels use it
// (pmqa_kernels/common/hip_compat.hpp maps it to __shared__ on GPUs).
#define PMQA_SHARED(type, name, dims)                                                              \
  static const char name##_pmqa_shared_tag = 0;                                                   \
  type(&name) dims = *static_cast<type(*) dims>(                                                  \
      ::pmqa::host::detail::block_shared(&name##_pmqa_shared_tag, sizeof(type dims), alignof(type)))

using dim3 = ::pmqa::host::Dim3;

#define threadIdx (::pmqa::host::detail::current_thread("threadIdx").thread_idx)
#define blockIdx (::pmqa::host::detail::current_thread("blockIdx").block->block_idx)
#define blockDim (::pmqa::host::detail::current_thread("blockDim").block->block_dim)
#define gridDim (::pmqa::host::detail::current_thread("gridDim").block->grid_dim)
#define warpSize (::pmqa::host::detail::current_thread("warpSize").block->warp_size)

namespace pmqa::host::detail {

template <class T>
concept ShflValue = std::same_as<T, int> || std::same_as<T, unsigned> || std::same_as<T, long long> ||
                    std::same_as<T, unsigned long long> || std::same_as<T, float> || std::same_as<T, double>;

template <ShflValue T>
constexpr ShflType shfl_type_of() {
  if constexpr (std::same_as<T, int>) return ShflType::i32;
  else if constexpr (std::same_as<T, unsigned>) return ShflType::u32;
  else if constexpr (std::same_as<T, long long>) return ShflType::i64;
  else if constexpr (std::same_as<T, unsigned long long>) return ShflType::u64;
  else if constexpr (std::same_as<T, float>) return ShflType::f32;
  else return ShflType::f64;
}

template <ShflValue T>
T shuffle(T v, ShflKind kind, long long arg, int width, const std::source_location& where) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof v);
  bits = warp_shuffle(bits, kind, arg, width, shfl_type_of<T>(), where);
  T r;
  std::memcpy(&r, &bits, sizeof r);
  return r;
}

template <class...>
inline constexpr bool unsupported = false;

template <class T>
concept AtomicAddValue = std::same_as<T, float> || std::same_as<T, int> || std::same_as<T, unsigned>;

}  // namespace pmqa::host::detail

// ---- block barrier, fences, trap

inline void __syncthreads(std::source_location where = std::source_location::current()) {
  ::pmqa::host::detail::block_barrier(where);
}
// A warp collective like the shuffles (every lane waits for all), so it is a warp barrier; the
// fibers of a warp share one OS thread, so that orders their memory accesses too.
inline void __syncwarp(unsigned mask = 0xFFFFFFFFu, std::source_location where = std::source_location::current()) {
  if (mask != 0xFFFFFFFFu) ::pmqa::host::detail::trap(where);  // partial-warp barriers are not supported
  const int lane = static_cast<int>(::pmqa::host::detail::current_thread("__syncwarp").lane);
  static_cast<void>(::pmqa::host::detail::shuffle(0, ::pmqa::host::detail::ShflKind::idx, lane, warpSize, where));
}
// All threads of a block share one OS thread: ordering the compiler's accesses is enough.
inline void __threadfence_block() { std::atomic_signal_fence(std::memory_order_seq_cst); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
[[noreturn]] inline void __trap(std::source_location where = std::source_location::current()) {
  ::pmqa::host::detail::trap(where);
}

// ---- warp shuffles

template <::pmqa::host::detail::ShflValue T>
T __shfl(T var, int srcLane, int width = warpSize, std::source_location where = std::source_location::current()) {
  return ::pmqa::host::detail::shuffle(var, ::pmqa::host::detail::ShflKind::idx, srcLane, width, where);
}
template <::pmqa::host::detail::ShflValue T>
T __shfl_xor(T var, int laneMask, int width = warpSize,
             std::source_location where = std::source_location::current()) {
  return ::pmqa::host::detail::shuffle(var, ::pmqa::host::detail::ShflKind::bxor, laneMask, width, where);
}
template <::pmqa::host::detail::ShflValue T>
T __shfl_up(T var, unsigned int delta, int width = warpSize,
            std::source_location where = std::source_location::current()) {
  return ::pmqa::host::detail::shuffle(var, ::pmqa::host::detail::ShflKind::up, delta, width, where);
}
template <::pmqa::host::detail::ShflValue T>
T __shfl_down(T var, unsigned int delta, int width = warpSize,
              std::source_location where = std::source_location::current()) {
  return ::pmqa::host::detail::shuffle(var, ::pmqa::host::detail::ShflKind::down, delta, width, where);
}

#define PMQA_HOST_SHFL_TYPES "int, unsigned, long long, unsigned long long, float and double"
template <class T>
  requires(!::pmqa::host::detail::ShflValue<T>)
T __shfl(T var, int, int = 0) {
  static_assert(::pmqa::host::detail::unsupported<T>, "pmqa host runtime: __shfl supports " PMQA_HOST_SHFL_TYPES " only");
  return var;
}
template <class T>
  requires(!::pmqa::host::detail::ShflValue<T>)
T __shfl_xor(T var, int, int = 0) {
  static_assert(::pmqa::host::detail::unsupported<T>,
                "pmqa host runtime: __shfl_xor supports " PMQA_HOST_SHFL_TYPES " only");
  return var;
}
template <class T>
  requires(!::pmqa::host::detail::ShflValue<T>)
T __shfl_up(T var, unsigned int, int = 0) {
  static_assert(::pmqa::host::detail::unsupported<T>,
                "pmqa host runtime: __shfl_up supports " PMQA_HOST_SHFL_TYPES " only");
  return var;
}
template <class T>
  requires(!::pmqa::host::detail::ShflValue<T>)
T __shfl_down(T var, unsigned int, int = 0) {
  static_assert(::pmqa::host::detail::unsupported<T>,
                "pmqa host runtime: __shfl_down supports " PMQA_HOST_SHFL_TYPES " only");
  return var;
}
#undef PMQA_HOST_SHFL_TYPES

// ---- atomics (relaxed, device scope, as on the GPU)

inline float atomicAdd(float* address, float val) {
  return std::atomic_ref<float>(*address).fetch_add(val, std::memory_order_relaxed);
}
inline int atomicAdd(int* address, int val) {
  return std::atomic_ref<int>(*address).fetch_add(val, std::memory_order_relaxed);
}
inline unsigned atomicAdd(unsigned* address, unsigned val) {
  return std::atomic_ref<unsigned>(*address).fetch_add(val, std::memory_order_relaxed);
}
template <class T, class U>
  requires(!::pmqa::host::detail::AtomicAddValue<T>)
T atomicAdd(T* address, U) {
  static_assert(::pmqa::host::detail::unsupported<T>,
                "pmqa host runtime: atomicAdd supports float*, int* and unsigned* (non-const) only");
  return *address;
}

// ---- what the host executor does not provide: a clear compile error instead of a silent stand-in
#define PMQA_HOST_UNSUPPORTED(name)                                                                  \
  template <class... T>                                                                              \
  auto name(T&&...) {                                                                                \
    static_assert(::pmqa::host::detail::unsupported<T...>,                                           \
                  "pmqa host runtime: " #name " is not supported by the host executor "               \
                  "(supported list: pmqa/kernels/host/hip_host.hpp)");                                \
    return 0;                                                                                        \
  }
PMQA_HOST_UNSUPPORTED(__syncthreads_count)
PMQA_HOST_UNSUPPORTED(__syncthreads_and)
PMQA_HOST_UNSUPPORTED(__syncthreads_or)
PMQA_HOST_UNSUPPORTED(__threadfence_system)
PMQA_HOST_UNSUPPORTED(__activemask)
PMQA_HOST_UNSUPPORTED(__lane_id)
PMQA_HOST_UNSUPPORTED(__ballot)
PMQA_HOST_UNSUPPORTED(__any)
PMQA_HOST_UNSUPPORTED(__all)
PMQA_HOST_UNSUPPORTED(__ballot_sync)
PMQA_HOST_UNSUPPORTED(__any_sync)
PMQA_HOST_UNSUPPORTED(__all_sync)
PMQA_HOST_UNSUPPORTED(__match_any_sync)
PMQA_HOST_UNSUPPORTED(__shfl_sync)
PMQA_HOST_UNSUPPORTED(__shfl_up_sync)
PMQA_HOST_UNSUPPORTED(__shfl_down_sync)
PMQA_HOST_UNSUPPORTED(__shfl_xor_sync)
PMQA_HOST_UNSUPPORTED(__reduce_add_sync)
PMQA_HOST_UNSUPPORTED(__ldg)
PMQA_HOST_UNSUPPORTED(__nanosleep)
PMQA_HOST_UNSUPPORTED(clock64)
PMQA_HOST_UNSUPPORTED(atomicSub)
PMQA_HOST_UNSUPPORTED(atomicExch)
PMQA_HOST_UNSUPPORTED(atomicMin)
PMQA_HOST_UNSUPPORTED(atomicMax)
PMQA_HOST_UNSUPPORTED(atomicCAS)
PMQA_HOST_UNSUPPORTED(atomicAnd)
PMQA_HOST_UNSUPPORTED(atomicOr)
PMQA_HOST_UNSUPPORTED(atomicXor)
PMQA_HOST_UNSUPPORTED(atomicInc)
PMQA_HOST_UNSUPPORTED(atomicDec)
PMQA_HOST_UNSUPPORTED(atomicAdd_system)
PMQA_HOST_UNSUPPORTED(hipLaunchKernelGGL)
#undef PMQA_HOST_UNSUPPORTED
