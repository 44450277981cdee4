// The one include every kernel source starts with: HIP itself in GPU builds (ROCm, or nvcc through
// HIP's NVIDIA headers), the host executor's HIP subset in host builds (PMQA_HIP_HOST).
#pragma once

#include <cstdint>

#if defined(__HIPCC__) || defined(__CUDACC__)
#include <hip/hip_runtime.h>
#define PMQA_DEVICE_BUILD 1
#else
#include <bit>
#include "pmqa/kernels/host/hip_host.hpp"
#endif

#define PMQA_DEV __device__ __forceinline__

// Per-block shared memory: __shared__ on GPUs; on the host executor a per-worker buffer (see
// hip_host.hpp for why not __shared__'s thread_local there). PMQA_SHARED(float, qs, [16][132]);
#if defined(PMQA_DEVICE_BUILD)
#define PMQA_SHARED(type, name, dims) __shared__ type name dims
#endif

// One shared-memory object larger than the 48 KB a GPU allows statically: dynamic shared memory on
// GPUs (the launch passes sizeof(type) and raises the kernel's limit), a per-worker buffer on the
// host. One per kernel. PMQA_SHARED_OBJECT(Ring, ring); then ring.member[...].
#if defined(PMQA_DEVICE_BUILD)
#define PMQA_SHARED_OBJECT(type, name)                    \
  extern __shared__ uint4 pmqa_dynamic_shared[];          \
  type& name = *reinterpret_cast<type*>(pmqa_dynamic_shared)
#else
#define PMQA_SHARED_OBJECT(type, name)  \
  PMQA_SHARED(type, name##_object, [1]); \
  type& name = name##_object[0]
#endif

// Unroll hints for the device compilers; g++ (host executor) decides for itself.
#if defined(PMQA_DEVICE_BUILD)
#define PMQA_UNROLL _Pragma("unroll")
#else
#define PMQA_UNROLL
#endif

// The kernels are compiled twice into one program (host executor by g++, GPU executor by nvcc):
// an inline namespace per build keeps their symbols apart (pmqa::kdev::X names either), so the
// linker can never merge a host instantiation with a GPU one.
#if defined(PMQA_DEVICE_BUILD)
#define PMQA_KDEV_BEGIN namespace pmqa::kdev { inline namespace gpu_build {
#else
#define PMQA_KDEV_BEGIN namespace pmqa::kdev { inline namespace host_build {
#endif
#define PMQA_KDEV_END } }

PMQA_KDEV_BEGIN

PMQA_DEV float bits_to_float(std::uint32_t u) {
#if defined(PMQA_DEVICE_BUILD)
  return __uint_as_float(u);
#else
  return std::bit_cast<float>(u);
#endif
}

// A barrier of the calling warp that also orders its lanes' shared-memory accesses (fused-mma's
// per-warp pipelines need nothing wider). AMD waves run in lockstep: a compiler barrier is enough.
PMQA_DEV void warp_sync() {
#if defined(__CUDACC__) || !defined(PMQA_DEVICE_BUILD)
  __syncwarp();  // NVIDIA, or the host runtime's warp barrier
#elif defined(__HIP_DEVICE_COMPILE__)
  __builtin_amdgcn_wave_barrier();
#endif
}

// True on every lane of a warp of 32 when `pred` holds on all of them: one vote instruction on
// NVIDIA; shuffles elsewhere (the host runtime has no votes).
PMQA_DEV bool warp32_all(bool pred) {
#if defined(__CUDACC__) && defined(PMQA_DEVICE_BUILD)
  return __all_sync(0xFFFFFFFFu, pred) != 0;
#else
  int ok = pred ? 1 : 0;
  for (int m = 16; m > 0; m /= 2) ok &= __shfl_xor(ok, m, 32);
  return ok != 0;
#endif
}

// The lowest lane of a warp of 32 where `pred` holds (32 where it holds nowhere): one vote and a
// find-first-set on NVIDIA; a 5-step shuffle reduction elsewhere.
PMQA_DEV int warp32_first(bool pred) {
#if defined(__CUDACC__) && defined(PMQA_DEVICE_BUILD)
  const unsigned m = __ballot_sync(0xFFFFFFFFu, pred);
  return m != 0 ? __ffs(static_cast<int>(m)) - 1 : 32;
#else
  int first = pred ? static_cast<int>(threadIdx.x % 32) : 32;
  for (int m = 16; m > 0; m /= 2) {
    const int o = __shfl_xor(first, m, 32);
    first = o < first ? o : first;
  }
  return first;
#endif
}

PMQA_DEV float quiet_nan() { return bits_to_float(0x7FC00000u); }
PMQA_DEV float minus_infinity() { return bits_to_float(0xFF800000u); }

PMQA_KDEV_END
