// Cost of the host executor's scheduling. Reproduce:
//   cmake -S . -B build-host -G Ninja -DPMQA_GPU=OFF && cmake --build build-host --target pmqa_bench_host_runtime
//   build-host/kernels/host/pmqa_bench_host_runtime
// "per_block" is the time per 256-thread block doing 10 block barriers and a 5-step __shfl_xor
// butterfly (CPU time with one OS thread, wall time with two); "per_switch" the time per thread
// per barrier (one fiber switch plus the barrier's bookkeeping); BM_EmptyLaunch the fixed cost of
// a launch.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "pmqa/kernels/host/hip_host.hpp"

namespace {

__global__ void barriers_and_butterfly(float* out) {
  __shared__ float s[256];
  const unsigned t = threadIdx.x;
  float v = static_cast<float>(t);
  for (int i = 0; i < 5; ++i) {  // 10 barriers
    s[t] = v;
    __syncthreads();
    v += 0.5f * s[(t + 1) & 255U];
    __syncthreads();
  }
  for (int m = 1; m < 32; m <<= 1) v += __shfl_xor(v, m);  // 5-step butterfly
  if (t == 0) out[blockIdx.x] = v;
}

__global__ void barriers_only(int rounds) {
  for (int i = 0; i < rounds; ++i) __syncthreads();
}

__global__ void empty_kernel(int) {}

constexpr unsigned kBlocks = 64;

// args: warp size, os_threads, schedule_seed
void BM_Block256_10Barriers_5Shfl(benchmark::State& state) {
  std::vector<float> out(kBlocks);
  const pmqa::host::LaunchConfig cfg{.grid = kBlocks, .block = 256, .warp_size = static_cast<int>(state.range(0)),
                                     .os_threads = static_cast<int>(state.range(1)),
                                     .schedule_seed = static_cast<std::uint64_t>(state.range(2))};
  for (auto _ : state) {
    pmqa::host::launch(cfg, barriers_and_butterfly, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["per_block"] =
      benchmark::Counter(kBlocks, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
// One OS thread: timed in CPU time (robust on a shared CI machine).
BENCHMARK(BM_Block256_10Barriers_5Shfl)
    ->ArgNames({"warp", "os_threads", "seed"})
    ->Args({64, 1, 0})
    ->Args({32, 1, 0})
    ->Args({64, 1, 1})
    ->Args({32, 1, 1});
// Two OS threads: only wall-clock time means anything (CPU time counts the calling thread only).
BENCHMARK(BM_Block256_10Barriers_5Shfl)
    ->ArgNames({"warp", "os_threads", "seed"})
    ->Args({64, 2, 0})
    ->UseRealTime();

void BM_BarrierSwitch(benchmark::State& state) {
  const int rounds = 100;
  const auto threads = static_cast<unsigned>(state.range(0));
  const pmqa::host::LaunchConfig cfg{.grid = 1, .block = threads, .warp_size = 64};
  for (auto _ : state) pmqa::host::launch(cfg, barriers_only, rounds);
  state.counters["per_switch"] = benchmark::Counter(static_cast<double>(threads) * rounds,
                                                    benchmark::Counter::kIsIterationInvariantRate |
                                                        benchmark::Counter::kInvert);
}
BENCHMARK(BM_BarrierSwitch)->ArgName("threads")->Arg(256)->Arg(1024);

void BM_EmptyLaunch(benchmark::State& state) {
  const pmqa::host::LaunchConfig cfg{.grid = static_cast<unsigned>(state.range(1)), .block = 1,
                                     .os_threads = static_cast<int>(state.range(0))};
  for (auto _ : state) pmqa::host::launch(cfg, empty_kernel, 0);
}
BENCHMARK(BM_EmptyLaunch)->ArgNames({"os_threads", "blocks"})->Args({1, 1})->Args({2, 2})->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
