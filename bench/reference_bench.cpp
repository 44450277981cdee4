// Throughput of the fp32 reference at the DeepSeek-V3.2 decode shape (B=64, N=2, H=64, D=128,
// block_size 64, context lengths uniform in [0.7, 1.3] x 8192), beside one Eigen GEMM of the same
// total work on the same number of threads: the reference should reach at least half its rate.
//
//   build/bench/pmqa_bench_reference --benchmark_counters_tabular=true
//
// FLOPs counted: 2 * N * H * D * sum_b(L_b) (the q.k products; the relu and head sum add 1/D).
#include <algorithm>
#include <thread>
#include <vector>

#include <Eigen/Dense>
#include <benchmark/benchmark.h>

#include "pmqa/fixtures/generate.hpp"
#include "pmqa/fixtures/rng.hpp"
#include "pmqa/reference/reference.hpp"

namespace {

constexpr std::int64_t kB = 64, kN = 2, kH = 64, kD = 128, kBlock = 64, kContext = 8192;

const pmqa::Case& decode_case() {
  static const pmqa::Case c = [] {
    pmqa::fixtures::CaseSpec s;
    s.name = "deepseek-v32-decode";
    s.seed = 2026;
    s.batch = kB;
    s.next_n = kN;
    s.heads = kH;
    s.head_dim = kD;
    s.block_size = kBlock;
    s.max_model_len = 16384;
    s.garbage_unused = false;
    pmqa::fixtures::Rng rng(s.seed);
    for (std::int64_t b = 0; b < kB; ++b)
      s.context_lens.push_back(static_cast<std::int32_t>(rng.between(kContext * 7 / 10, kContext * 13 / 10)));
    return pmqa::fixtures::make_case(s);
  }();
  return c;
}

double flops(const pmqa::Case& c) {
  double keys = 0;
  for (auto L : c.context_lens) keys += L;
  return 2.0 * static_cast<double>(c.next_n * c.heads * c.head_dim) * keys;
}

int threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

void BM_ReferenceFp32(benchmark::State& state) {
  const auto& c = decode_case();
  const bool noise = state.range(0) != 0;
  for (auto _ : state) {
    auto ref = pmqa::compute_reference(c, {.precision = pmqa::Precision::fp32, .with_noise = noise, .threads = threads()});
    benchmark::DoNotOptimize(ref.values.data());
  }
  // With the noise scales the reference does twice the GEMM work; count only the logits' FLOPs.
  state.counters["FLOP/s"] = benchmark::Counter(flops(c), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = threads();
  state.SetLabel(noise ? "logits + noise scales (what verify runs)" : "logits only");
}
BENCHMARK(BM_ReferenceFp32)->Arg(0)->Arg(1)->ArgName("noise")->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);

// The same total work as one GEMM: [N*H, D] x [D, sum L], its columns split across the threads.
void BM_EigenGemmSameWork(benchmark::State& state) {
  const auto& c = decode_case();
  std::int64_t keys = 0;
  for (auto L : c.context_lens) keys += L;
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const Mat q = Mat::Random(kN * kH, kD);
  const Mat k = Mat::Random(keys, kD);
  const int t = threads();
  std::vector<Mat> out(static_cast<std::size_t>(t));
  for (auto _ : state) {
    std::vector<std::jthread> pool;
    for (int i = 0; i < t; ++i)
      pool.emplace_back([&, i] {
        const std::int64_t begin = keys * i / t, end = keys * (i + 1) / t;
        out[static_cast<std::size_t>(i)].noalias() = q * k.middleRows(begin, end - begin).transpose();
      });
    pool.clear();
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["FLOP/s"] = benchmark::Counter(flops(c), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = t;
}
BENCHMARK(BM_EigenGemmSameWork)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
