// Kernels that use what the host executor does not provide. Compiled by CTest with one
// -DPMQA_REJECT_<name> at a time; every one must fail to compile with a clear message.
#include "pmqa/kernels/host/hip_host.hpp"

#if defined(PMQA_REJECT_ballot)
__global__ void k(unsigned long long* out) { out[0] = __ballot(threadIdx.x < 3); }
#elif defined(PMQA_REJECT_atomic_max)
__global__ void k(int* out) { atomicMax(out, 3); }
#elif defined(PMQA_REJECT_atomic_add_double)
__global__ void k(double* out) { atomicAdd(out, 1.0); }
#elif defined(PMQA_REJECT_shfl_long)
__global__ void k(long* out) { out[threadIdx.x] = __shfl_xor(out[threadIdx.x], 1); }
#elif defined(PMQA_REJECT_shfl_sync)
__global__ void k(float* out) { out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, out[threadIdx.x], 1); }
#elif defined(PMQA_REJECT_dynamic_shared)
__global__ void k(float* out) {
  extern __shared__ float dyn[];
  out[threadIdx.x] = dyn[threadIdx.x];
}
#else
#error "define one PMQA_REJECT_<name>"
#endif
