// Every production kernel instance, compiled for gfx942 by the ISA check (pmqa_kernels_isa): the
// test lists the fp8 instructions each kernel's assembly uses and fails when that list changes
// without kernels.gfx942.expected.txt changing with it. On gfx942 the FNUZ instances must decode
// with the hardware (v_cvt_f32_fp8) and fused-mfma's must multiply with it
// (v_mfma_f32_16x16x32_fp8_fp8); the OCP instances cannot (gfx942's fp8 is FNUZ only).
#include "pmqa_kernels/fused_mfma/kernel.hpp"
#include "pmqa_kernels/fused_scalar/kernel.hpp"
#include "pmqa_kernels/two_stage/kernel.hpp"

namespace pmqa::kdev {

#define PMQA_INSTANTIATE(D, FNUZ)                                                          \
  template __global__ void fused_logits_kernel<Faithful, D, FNUZ>(LogitsParams);         \
  template __global__ void stage1_kernel<Faithful, D, FNUZ>(LogitsParams);

PMQA_INSTANTIATE(32, false)
PMQA_INSTANTIATE(32, true)
PMQA_INSTANTIATE(64, false)
PMQA_INSTANTIATE(64, true)
PMQA_INSTANTIATE(128, false)
PMQA_INSTANTIATE(128, true)
#undef PMQA_INSTANTIATE

// The AMD matrix-unit variant: fused-mfma must use v_mfma_f32_16x16x32_fp8_fp8 for FNUZ data on
// gfx942 (its OCP instance emulates: gfx942's fp8 MFMA takes FNUZ only). fused-mma is NVIDIA's.
template __global__ void fused_mfma_kernel<Faithful, true, 64>(LogitsParams);
template __global__ void fused_mfma_kernel<Faithful, true, 128>(LogitsParams);
template __global__ void fused_mfma_kernel<Faithful, false, 64>(LogitsParams);

template __global__ void fill_minus_infinity_kernel<Faithful>(float*, std::int64_t);
template __global__ void head_sum_kernel<Faithful>(LogitsParams);

}  // namespace pmqa::kdev
