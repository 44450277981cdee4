// Runtime check of the HIP wrappers that cmake/hip_nvidia/ patches for CUDA 13, on an NVIDIA GPU:
// device properties read through cudaDeviceGetAttribute (hunks 06, 07, 09), the removed
// multi-device-cooperative fields reported as 0 (08, 10), hipChooseDevice (03-05),
// hipMemAdvise / hipMemPrefetchAsync with cudaMemLocation (01, 02), the graph-edge functions
// (16-20) and the stream-capture ones (21, 22). Hunk 11 (hipCtxCreate, a driver-API call) and the
// removed texture-reference / multi-device-launch wrappers (12-15) are only compiled: using a cu*
// wrapper would make the binary need libcuda.so.1 to start, and this test must run (and skip)
// where there is no driver.
//
// Exit codes as nvidia_smoke.cu: 0 passed, 1 failed, 77 skipped (no GPU; PMQA_REQUIRE_GPU=1 makes
// that a failure).
#include <hip/hip_runtime.h>

#include "pmqa/kernels/toolchain/gpu_presence.hpp"
#include "pmqa/kernels/toolchain/hip_check.hpp"

#include <cstdio>
#include <exception>
#include <string>

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "  ok  " : "  FAIL", what.c_str());
  if (!ok) {
    ++failures;
  }
}

__global__ void add_one(int* p, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    p[i] += 1;
  }
}

int run() {
  const auto gpu = pmqa::kernels::toolchain::probe_gpus();
  if (gpu.state != pmqa::kernels::toolchain::GpuState::present) {
    std::printf("%s\n", gpu.message.c_str());
    return gpu.exit_code();
  }
  const int count = gpu.count;
  PMQA_HIP_CHECK(hipSetDevice(0));

  // Device properties: the fields CUDA 13 removed from cudaDeviceProp.
  hipDeviceProp_t prop;
  PMQA_HIP_CHECK(hipGetDeviceProperties(&prop, 0));
  int clock = 0, mem_clock = 0, mode = -1, timeout = -1, multi = -1;
  PMQA_HIP_CHECK(hipDeviceGetAttribute(&clock, hipDeviceAttributeClockRate, 0));
  PMQA_HIP_CHECK(hipDeviceGetAttribute(&mem_clock, hipDeviceAttributeMemoryClockRate, 0));
  PMQA_HIP_CHECK(hipDeviceGetAttribute(&mode, hipDeviceAttributeComputeMode, 0));
  PMQA_HIP_CHECK(hipDeviceGetAttribute(&timeout, hipDeviceAttributeKernelExecTimeout, 0));
  PMQA_HIP_CHECK(hipDeviceGetAttribute(&multi, hipDeviceAttributeCooperativeMultiDeviceLaunch, 0));
  std::printf("%s: clockRate %d kHz, memoryClockRate %d kHz, computeMode %d, kernelExecTimeoutEnabled %d\n",
              prop.name, prop.clockRate, prop.memoryClockRate, prop.computeMode, prop.kernelExecTimeoutEnabled);
  expect(prop.clockRate > 0 && prop.clockRate == clock, "clockRate from the attribute");
  expect(prop.clockInstructionRate == prop.clockRate, "clockInstructionRate = clockRate");
  expect(prop.memoryClockRate > 0 && prop.memoryClockRate == mem_clock, "memoryClockRate from the attribute");
  expect(prop.computeMode == mode, "computeMode from the attribute");
  expect(prop.kernelExecTimeoutEnabled == timeout, "kernelExecTimeoutEnabled from the attribute");
  expect(prop.cooperativeMultiDeviceLaunch == 0 && multi == 0, "cooperativeMultiDeviceLaunch reported as 0");
  int chosen = -1;
  PMQA_HIP_CHECK(hipChooseDevice(&chosen, &prop));
  expect(chosen >= 0 && chosen < count, "hipChooseDevice returns a device");

  // Managed memory: hipMemAdvise / hipMemPrefetchAsync to the device and to the host.
  const int n = 1 << 16;
  int* managed = nullptr;
  hipStream_t stream = nullptr;
  PMQA_HIP_CHECK(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking));
  PMQA_HIP_CHECK(hipMallocManaged(&managed, n * sizeof(int), hipMemAttachGlobal));
  for (int i = 0; i < n; ++i) {
    managed[i] = i;
  }
  int concurrent = 0;
  PMQA_HIP_CHECK(hipDeviceGetAttribute(&concurrent, hipDeviceAttributeConcurrentManagedAccess, 0));
  if (concurrent != 0) {
    PMQA_HIP_CHECK(hipMemAdvise(managed, n * sizeof(int), hipMemAdviseSetPreferredLocation, 0));
    PMQA_HIP_CHECK(hipMemAdvise(managed, n * sizeof(int), hipMemAdviseSetAccessedBy, hipCpuDeviceId));
    PMQA_HIP_CHECK(hipMemPrefetchAsync(managed, n * sizeof(int), 0, stream));
  }

  // Stream capture of two dependent launches, then the graph-edge functions.
  PMQA_HIP_CHECK(hipStreamBeginCapture(stream, hipStreamCaptureModeGlobal));
  hipLaunchKernelGGL(add_one, dim3(n / 256), dim3(256), 0, stream, managed, n);
  PMQA_HIP_CHECK(hipGetLastError());
  hipStreamCaptureStatus cap = hipStreamCaptureStatusNone;
  unsigned long long id = 0;
  hipGraph_t capturing = nullptr;
  const hipGraphNode_t* deps = nullptr;
  size_t n_deps = 0;
  PMQA_HIP_CHECK(hipStreamGetCaptureInfo_v2(stream, &cap, &id, &capturing, &deps, &n_deps));
  expect(cap == hipStreamCaptureStatusActive && n_deps == 1, "hipStreamGetCaptureInfo_v2: active, 1 dependency");
  hipGraphNode_t first = n_deps == 1 ? deps[0] : nullptr;
  PMQA_HIP_CHECK(hipStreamUpdateCaptureDependencies(stream, &first, 1, hipStreamSetCaptureDependencies));
  hipLaunchKernelGGL(add_one, dim3(n / 256), dim3(256), 0, stream, managed, n);
  PMQA_HIP_CHECK(hipGetLastError());
  hipGraph_t graph = nullptr;
  PMQA_HIP_CHECK(hipStreamEndCapture(stream, &graph));

  size_t n_nodes = 0, n_edges = 0, n_in = 0, n_out = 0;
  PMQA_HIP_CHECK(hipGraphGetNodes(graph, nullptr, &n_nodes));
  PMQA_HIP_CHECK(hipGraphGetEdges(graph, nullptr, nullptr, &n_edges));
  expect(n_nodes == 2 && n_edges == 1, "captured graph: 2 nodes, 1 edge");
  hipGraphNode_t from = nullptr, to = nullptr;
  PMQA_HIP_CHECK(hipGraphGetEdges(graph, &from, &to, &n_edges));
  PMQA_HIP_CHECK(hipGraphNodeGetDependencies(to, nullptr, &n_in));
  PMQA_HIP_CHECK(hipGraphNodeGetDependentNodes(from, nullptr, &n_out));
  expect(from == first && n_in == 1 && n_out == 1, "hipGraphGetEdges / NodeGetDependencies / NodeGetDependentNodes");
  PMQA_HIP_CHECK(hipGraphRemoveDependencies(graph, &from, &to, 1));
  PMQA_HIP_CHECK(hipGraphGetEdges(graph, nullptr, nullptr, &n_edges));
  expect(n_edges == 0, "hipGraphRemoveDependencies");
  PMQA_HIP_CHECK(hipGraphAddDependencies(graph, &from, &to, 1));
  PMQA_HIP_CHECK(hipGraphGetEdges(graph, nullptr, nullptr, &n_edges));
  expect(n_edges == 1, "hipGraphAddDependencies");

  hipGraphExec_t exec = nullptr;
  PMQA_HIP_CHECK(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
  PMQA_HIP_CHECK(hipGraphLaunch(exec, stream));
  PMQA_HIP_CHECK(hipStreamSynchronize(stream));
  if (concurrent != 0) {
    PMQA_HIP_CHECK(hipMemPrefetchAsync(managed, n * sizeof(int), hipCpuDeviceId, stream));
    PMQA_HIP_CHECK(hipStreamSynchronize(stream));
  }
  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    wrong += managed[i] != i + 2 ? 1 : 0;
  }
  expect(wrong == 0, "graph ran both launches on managed memory (" + std::to_string(wrong) + " wrong)");
  PMQA_HIP_CHECK(hipGraphExecDestroy(exec));
  PMQA_HIP_CHECK(hipGraphDestroy(graph));
  PMQA_HIP_CHECK(hipFree(managed));
  PMQA_HIP_CHECK(hipStreamDestroy(stream));

  if (failures != 0) {
    std::printf("FAILED: %d checks of the patched HIP wrappers\n", failures);
    return 1;
  }
  std::printf("passed: the CUDA 13 patched HIP wrappers work on %s\n", prop.name);
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
