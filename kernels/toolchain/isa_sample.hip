// A sample for the AMD ISA check (pmqa_add_amd_isa_check in cmake/PmqaAmd.cmake): two kernels, each
// instantiated for both E4M3 formats of spec.md §3. The hardware fp8 instructions decode the arch's
// own format only (FNUZ on gfx940/941/942, OCP E4M3FN on gfx950), so each kernel uses them only when
// its format is the arch's; otherwise, and on every other target (the host executor included), it
// runs the portable code. Compiled for gfx942, the expected listing is therefore:
//   decode<FNUZ> -> v_cvt_f32_fp8, mfma<FNUZ> -> v_mfma_f32_16x16x32_fp8_fp8, the OCP ones -> none.
#include <hip/hip_runtime.h>

#include <cstdint>

namespace pmqa_isa_sample {

enum class Fp8Format { fnuz, ocp };

#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
#define PMQA_SAMPLE_NATIVE_FP8 1
constexpr Fp8Format kNativeFp8 = Fp8Format::fnuz;
#elif defined(__gfx950__)  // clang-19 does not know gfx950: this branch needs ROCm 7's compiler
#define PMQA_SAMPLE_NATIVE_FP8 1
constexpr Fp8Format kNativeFp8 = Fp8Format::ocp;
#else
#define PMQA_SAMPLE_NATIVE_FP8 0
#endif

// The spec's formula: FNUZ has bias 8, subnormal step 2^-10, NaN only at 0x80; OCP E4M3FN has bias 7,
// subnormal step 2^-9, NaN at 0x7F and 0xFF.
template <Fp8Format F>
__host__ __device__ inline float decode_portable(uint32_t byte) {
  const uint32_t b = byte & 0xFFu;
  const float sign = (b & 0x80u) != 0 ? -1.0f : 1.0f;
  const int e = static_cast<int>((b >> 3) & 0xFu);
  const int m = static_cast<int>(b & 0x7u);
  if (F == Fp8Format::fnuz ? b == 0x80u : (b & 0x7Fu) == 0x7Fu) {
    return __builtin_nanf("");
  }
  const int bias = F == Fp8Format::fnuz ? 8 : 7;
  if (e == 0) {
    return sign * ldexpf(static_cast<float>(m), 1 - bias - 3);
  }
  return sign * ldexpf(1.0f + static_cast<float>(m) / 8.0f, e - bias);
}

template <Fp8Format F>
__device__ inline float decode(uint32_t byte) {
#if PMQA_SAMPLE_NATIVE_FP8
  if constexpr (F == kNativeFp8) {
    return __builtin_amdgcn_cvt_f32_fp8(static_cast<int>(byte), 0);
  }
#endif
  return decode_portable<F>(byte);
}

// out[i] = decode(in[i]).
template <Fp8Format F>
__global__ void decode_fp8(const uint8_t* in, float* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    out[i] = decode<F>(in[i]);
  }
}

// One 16x16x32 fp8 tile, launched as one block of 64 threads. Operands in the MFMA register layout:
// lane l holds A[l % 16][8 * (l / 16) + j] and B[8 * (l / 16) + j][l % 16] in byte j of a[l] / b[l];
// it receives C[4 * (l / 16) + i][l % 16] in c[4 * l + i].
template <Fp8Format F>
__global__ void mfma_fp8_16x16x32(const uint64_t* a, const uint64_t* b, float* c) {
  const int lane = static_cast<int>(threadIdx.x);
  if (lane >= 64) {
    return;
  }
#if PMQA_SAMPLE_NATIVE_FP8
  if constexpr (F == kNativeFp8) {
    typedef float float4_t __attribute__((ext_vector_type(4)));
    float4_t acc = {0.0f, 0.0f, 0.0f, 0.0f};
    acc = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(static_cast<long>(a[lane]), static_cast<long>(b[lane]), acc,
                                                     0, 0, 0);
    for (int i = 0; i < 4; ++i) {
      c[4 * lane + i] = acc[i];
    }
    return;
  }
#endif
  const int col = lane % 16;
  for (int i = 0; i < 4; ++i) {
    const int row = 4 * (lane / 16) + i;
    float sum = 0.0f;
    for (int k = 0; k < 32; ++k) {
      const uint32_t ab = static_cast<uint32_t>(a[(k / 8) * 16 + row] >> (8 * (k % 8)));
      const uint32_t bb = static_cast<uint32_t>(b[(k / 8) * 16 + col] >> (8 * (k % 8)));
      sum += decode_portable<F>(ab) * decode_portable<F>(bb);
    }
    c[4 * lane + i] = sum;
  }
}

template __global__ void decode_fp8<Fp8Format::fnuz>(const uint8_t*, float*, int);
template __global__ void decode_fp8<Fp8Format::ocp>(const uint8_t*, float*, int);
template __global__ void mfma_fp8_16x16x32<Fp8Format::fnuz>(const uint64_t*, const uint64_t*, float*);
template __global__ void mfma_fp8_16x16x32<Fp8Format::ocp>(const uint64_t*, const uint64_t*, float*);

}  // namespace pmqa_isa_sample
