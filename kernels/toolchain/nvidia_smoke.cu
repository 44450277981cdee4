// Smoke test of the NVIDIA toolchain: a HIP program built by nvcc through HIP's (patched) NVIDIA
// headers, linked with the static cudart.
//
// Exit codes: 0 passed, 1 failed, 77 skipped (no NVIDIA GPU / driver on this machine; CTest shows
// it as Skipped through SKIP_RETURN_CODE 77). With PMQA_REQUIRE_GPU=1 in the environment a missing
// GPU is a failure instead, for runners that are supposed to have one.
//
// With a device: prints the device (name, sm_XY, gcnArchName, warpSize, multiProcessorCount), runs a
// __shfl_xor butterfly reduction over every warp (the width is warpSize: read on the host from the
// device properties, in the kernel from warpSize, and the two are compared) and checks every lane's
// result exactly.
#include <hip/hip_runtime.h>

#include "pmqa/kernels/toolchain/gpu_presence.hpp"
#include "pmqa/kernels/toolchain/hip_check.hpp"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace {

// Every lane ends with the sum over its warp; lane 0 of each warp also reports the device warpSize.
__global__ void warp_butterfly_sum(const float* in, float* out, int* device_warp_size, int n) {
  const int tid = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  float v = tid < n ? in[tid] : 0.0f;
  for (int mask = warpSize / 2; mask > 0; mask /= 2) {
    v += __shfl_xor(v, mask, warpSize);
  }
  if (tid < n) {
    out[tid] = v;
  }
  if (tid == 0) {
    *device_warp_size = warpSize;
  }
}

int run() {
  const auto gpu = pmqa::kernels::toolchain::probe_gpus();
  if (gpu.state != pmqa::kernels::toolchain::GpuState::present) {
    std::printf("%s\n", gpu.message.c_str());
    return gpu.exit_code();
  }
  const int count = gpu.count;

  const int device = 0;
  PMQA_HIP_CHECK(hipSetDevice(device));
  hipDeviceProp_t prop;
  PMQA_HIP_CHECK(hipGetDeviceProperties(&prop, device));
  const std::string arch = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
  std::printf("devices: %d; device %d: %s\n", count, device, prop.name);
  std::printf("  arch %s (compute capability %d.%d), gcnArchName \"%s\" (empty on NVIDIA)\n", arch.c_str(),
              prop.major, prop.minor, prop.gcnArchName);
  std::printf("  warpSize %d, multiProcessorCount %d, totalGlobalMem %zu MiB, clockRate %d kHz\n", prop.warpSize,
              prop.multiProcessorCount, static_cast<size_t>(prop.totalGlobalMem >> 20), prop.clockRate);

  const int warp = prop.warpSize;
  if (warp <= 0 || (warp & (warp - 1)) != 0) {
    std::printf("FAILED: warpSize %d from hipGetDeviceProperties is not a power of two\n", warp);
    return 1;
  }
  const int threads_per_block = 4 * warp;
  const int blocks = 2 * prop.multiProcessorCount;
  const int n = blocks * threads_per_block - warp / 2;  // the last warp is partly outside n
  std::vector<float> in(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    in[static_cast<size_t>(i)] = static_cast<float>((i * 7) % 23 - 11);  // small integers: exact sums
  }

  float* d_in = nullptr;
  float* d_out = nullptr;
  int* d_warp = nullptr;
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  PMQA_HIP_CHECK(hipMalloc(&d_in, bytes));
  PMQA_HIP_CHECK(hipMalloc(&d_out, bytes));
  PMQA_HIP_CHECK(hipMalloc(&d_warp, sizeof(int)));
  PMQA_HIP_CHECK(hipMemcpy(d_in, in.data(), bytes, hipMemcpyHostToDevice));
  PMQA_HIP_CHECK(hipMemset(d_out, 0, bytes));
  PMQA_HIP_CHECK(hipMemset(d_warp, 0, sizeof(int)));
  hipLaunchKernelGGL(warp_butterfly_sum, dim3(static_cast<unsigned>(blocks)),
                     dim3(static_cast<unsigned>(threads_per_block)), 0, 0, d_in, d_out, d_warp, n);
  PMQA_HIP_CHECK(hipGetLastError());
  PMQA_HIP_CHECK(hipDeviceSynchronize());
  std::vector<float> out(static_cast<size_t>(n));
  int device_warp = 0;
  PMQA_HIP_CHECK(hipMemcpy(out.data(), d_out, bytes, hipMemcpyDeviceToHost));
  PMQA_HIP_CHECK(hipMemcpy(&device_warp, d_warp, sizeof(int), hipMemcpyDeviceToHost));
  PMQA_HIP_CHECK(hipFree(d_in));
  PMQA_HIP_CHECK(hipFree(d_out));
  PMQA_HIP_CHECK(hipFree(d_warp));

  int bad = 0;
  if (device_warp != warp) {
    std::printf("FAILED: warpSize in the kernel is %d, hipGetDeviceProperties says %d\n", device_warp, warp);
    ++bad;
  }
  for (int w0 = 0; w0 < n; w0 += warp) {
    float expect = 0.0f;
    for (int i = w0; i < w0 + warp && i < n; ++i) {
      expect += in[static_cast<size_t>(i)];
    }
    for (int i = w0; i < w0 + warp && i < n; ++i) {
      if (out[static_cast<size_t>(i)] != expect) {
        if (bad < 10) {
          std::printf("FAILED: lane %d of warp %d: sum %g, expected %g\n", i - w0, w0 / warp,
                      static_cast<double>(out[static_cast<size_t>(i)]), static_cast<double>(expect));
        }
        ++bad;
      }
    }
  }
  if (bad != 0) {
    std::printf("FAILED: %d mismatches in the __shfl_xor reduction (%d elements, warp %d)\n", bad, n, warp);
    return 1;
  }
  std::printf("passed: __shfl_xor reduction over %d warps of %d lanes (%d blocks x %d threads) on %s\n",
              (n + warp - 1) / warp, warp, blocks, threads_per_block, arch.c_str());
  return 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    std::printf("FAILED: %s\n", e.what());
    return 1;
  }
}
