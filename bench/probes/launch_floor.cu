// The fixed costs every fused-mma launch pays before and around its key stream, measured alone,
// the way the GPU benchmark measures a launch (L2 flushed by the benchmark's memset, then device
// events around one launch, median of many):
// - the launch itself: an empty kernel, at fused-mma's grid (660 CTAs of 128 threads, 44 KB of
//   dynamic shared memory, its ~400 bytes of parameters) and at other shapes a redesign could choose (one
//   CTA, one CTA per SM, one 640-thread CTA per SM holding five warpgroups);
// - the dependent round trips of its prologue on a cold L2: thread 0 of every CTA follows a chain
//   of 1, 2 or 3 dependent loads (context lengths -> block table -> key block, fused-mma's order),
//   every CTA reading the same first line as fused-mma's CTAs do.
// The differences between rows are the floor a kernel of this shape cannot go below
// (bench/results/notes.md, "The decode shape and its floors").
//
//   pmqa_probe_launch_floor [--reps N]
#include <hip/hip_runtime.h>

#include <cstdio>
#include <vector>

#include "pmqa/kernels/lab_hip.hpp"
#include "gpu_timing.hpp"

namespace {

using pmqa::bench::L2Flusher;
using pmqa::bench::time_us;
using pmqa::kernels::lab::HipBackend;

// fused-mma's launch parameters are ~250 bytes of LogitsParams plus a 128-byte tensor map.
struct BigParams {
  unsigned char bytes[384];
};

__global__ void empty_small(int) {}
__global__ void empty_big(BigParams) {}

// 44 KB of static shared memory, as fused-mma's 64-row kernel (5 CTAs per SM).
__global__ void empty_shared(BigParams p) {
  __shared__ unsigned char tile[44 * 1024];
  if (p.bytes[0] == 0xEE) tile[threadIdx.x] = 1;  // never true: keeps the allocation
  if (p.bytes[1] == 0xEE) p.bytes[2] = tile[threadIdx.x ^ 1];
}

// Dynamic shared memory: up to 5 x 44 KB, one CTA per SM holding five warpgroups (its limit
// raised past 48 KB), and fused-mma's own 44 KB per CTA (a kernel whose limit stays at 48 KB).
__global__ void empty_dynamic(BigParams p) {
  extern __shared__ unsigned char dyn[];
  if (p.bytes[0] == 0xEE) dyn[threadIdx.x] = 1;
}
__global__ void empty_dynamic44(BigParams p) {
  extern __shared__ unsigned char dyn[];
  if (p.bytes[0] == 0xEE) dyn[threadIdx.x] = 1;
}

// Thread 0 of every CTA follows `depth` dependent loads: a[0] (the same line for every CTA, as
// the context lengths), then a line picked by it per CTA (a block-table entry), then a line picked
// by that (a key block). The result goes to sink only when impossible, so nothing is written.
__global__ void chain(const int* a, int depth, int stride, int* sink) {
  if (threadIdx.x != 0) return;
  int v = a[0];
  if (depth > 1) v = a[(v + 1 + static_cast<int>(blockIdx.x)) * stride];
  if (depth > 2) v = a[(v + 1 + static_cast<int>(blockIdx.x) * 7) * stride];
  if (v == 0x7EADBEEF) *sink = v;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<int> reps_arg = pmqa::bench::reps_option(argc, argv, 200, "pmqa_probe_launch_floor");
  if (!reps_arg) return 2;
  const int reps = *reps_arg;
  const auto gpu = pmqa::kernels::find_gpu();
  if (!gpu) {
    std::printf("pmqa_probe_launch_floor: no GPU found: nothing measured\n");
    return 77;
  }
  try {
    HipBackend be(gpu->device, gpu->multiprocessors, pmqa::kernels::make_gpu_executor(gpu->device)->caps());
    L2Flusher flusher(be, std::size_t{512} << 20);
    const int sms = gpu->multiprocessors;
    BigParams big{};
    std::printf("pmqa_probe_launch_floor: %s, %d SMs; median of %d launches between device events, L2 flushed by the "
                "benchmark's memset before each\n\n",
                gpu->name.c_str(), sms, reps);
    std::printf("  %-62s %8s\n", "what runs between the events", "us");
    auto row = [](const char* what, double us) { std::printf("  %-62s %8.2f\n", what, us); };
    row("nothing", time_us([] {}, &flusher, reps));
    row("empty kernel, 1 CTA of 128 threads", time_us([] { hipLaunchKernelGGL(empty_small, dim3(1), dim3(128), 0, 0, 0); }, &flusher, reps));
    row("empty kernel, 1 CTA per SM of 128 threads",
        time_us([&] { hipLaunchKernelGGL(empty_small, dim3(sms), dim3(128), 0, 0, 0); }, &flusher, reps));
    row("empty kernel, 5 CTAs per SM of 128 threads",
        time_us([&] { hipLaunchKernelGGL(empty_small, dim3(5 * sms), dim3(128), 0, 0, 0); }, &flusher, reps));
    row("  ... with 384 bytes of parameters",
        time_us([&] { hipLaunchKernelGGL(empty_big, dim3(5 * sms), dim3(128), 0, 0, big); }, &flusher, reps));
    row("  ... and 44 KB of static shared memory",
        time_us([&] { hipLaunchKernelGGL(empty_shared, dim3(5 * sms), dim3(128), 0, 0, big); }, &flusher, reps));
    // Why static shared memory costs more than dynamic: the carveout (L1 against shared) chosen
    // per launch, or not.
    PMQA_HIP_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(&empty_shared), hipFuncAttributePreferredSharedMemoryCarveout, 100));
    row("  ... the same, carveout preferred at 100 % shared",
        time_us([&] { hipLaunchKernelGGL(empty_shared, dim3(5 * sms), dim3(128), 0, 0, big); }, &flusher, reps));
    const int dyn = 5 * 44 * 1024;
    PMQA_HIP_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(&empty_dynamic), hipFuncAttributeMaxDynamicSharedMemorySize, dyn));
    row("empty kernel, 1 CTA per SM of 640 threads, 220 KB dynamic shared",
        time_us([&] { hipLaunchKernelGGL(empty_dynamic, dim3(sms), dim3(640), dyn, 0, big); }, &flusher, reps));
    row("empty kernel, 5 CTAs/SM, 384 B, 44 KB dynamic shared (fused-mma's)",
        time_us([&] { hipLaunchKernelGGL(empty_dynamic44, dim3(5 * sms), dim3(128), 44 * 1024, 0, big); }, &flusher, reps));
    row("empty kernel, 1 CTA per SM of 640 threads, 44 KB dynamic shared",
        time_us([&] { hipLaunchKernelGGL(empty_dynamic, dim3(sms), dim3(640), 44 * 1024, 0, big); }, &flusher, reps));
    row("empty kernel, 1 CTA per SM of 640 threads, no shared",
        time_us([&] { hipLaunchKernelGGL(empty_big, dim3(sms), dim3(640), 0, 0, big); }, &flusher, reps));
    row("empty kernel, 5 CTAs per SM, no flush before it",
        time_us([&] { hipLaunchKernelGGL(empty_shared, dim3(5 * sms), dim3(128), 0, 0, big); }, nullptr, reps));

    // The load chains read a 64 MB array (indices stay inside it), cold after each flush.
    constexpr int kStride = 32;  // one 128-byte line per index step
    const std::size_t n = std::size_t{64} << 20 >> 2;
    std::vector<int> host(n, 0);
    for (std::size_t i = 0; i < n; i += kStride) host[i] = static_cast<int>((i * 2654435761u) % 4096);
    int* a = static_cast<int*>(be.allocate(n * sizeof(int)));
    int* sink = static_cast<int*>(be.allocate(sizeof(int)));
    PMQA_HIP_CHECK(hipMemcpy(a, host.data(), n * sizeof(int), hipMemcpyHostToDevice));
    for (int depth = 1; depth <= 3; ++depth) {
      char what[96];
      std::snprintf(what, sizeof what, "%d dependent cold load%s by thread 0 of each of 5 CTAs per SM", depth, depth > 1 ? "s" : "");
      row(what, time_us([&] { hipLaunchKernelGGL(chain, dim3(5 * sms), dim3(128), 0, 0, a, depth, kStride, sink); }, &flusher, reps));
    }
    be.release(a);
    be.release(sink);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pmqa_probe_launch_floor: %s\n", e.what());
    return 1;
  }
  return 0;
}
