// GPU timing of both paths at the DeepSeek-V3.2 decode shape (B=64, H=64, D=128, block_size 64,
// context uniform in [0.7, 1.3] x 8192, max_model_len 16384, shuffled block table), next_n 1 and 2.
// Device events around each launch, L2 flushed before each timed launch, warm-up, median of many.
// Beside each time: achieved GB/s (minimal bytes / time), TFLOP/s, the fused/two-stage ratio, and
// the floor = max(minimal bytes / measured copy bandwidth, FLOPs / measured fp32 FMA rate); both
// ceilings are measured in the same run. Each timed configuration is also checked once against the
// reference, so a fast wrong kernel cannot report a time.
//
//   pmqa_bench_gpu [--reps N] [--json FILE]
#include <hip/hip_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "pmqa/fixtures/generate.hpp"
#include "pmqa/fixtures/rng.hpp"
#include "pmqa/kernels/detail/hip_backend.hpp"
#include "pmqa/kernels/detail/run_path.hpp"
#include "pmqa/reference/compare.hpp"

namespace {

using pmqa::kernels::Path;
using pmqa::kernels::detail::HipBackend;
using pmqa::kernels::detail::PreparedRun;

struct Events {
  hipEvent_t start{}, stop{};
  Events() {
    PMQA_HIP_CHECK(hipEventCreate(&start));
    PMQA_HIP_CHECK(hipEventCreate(&stop));
  }
  ~Events() {
    static_cast<void>(hipEventDestroy(start));
    static_cast<void>(hipEventDestroy(stop));
  }
  float ms() {
    PMQA_HIP_CHECK(hipEventSynchronize(stop));
    float t = 0;
    PMQA_HIP_CHECK(hipEventElapsedTime(&t, start, stop));
    return t;
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Overwrites a buffer larger than L2 so the next launch reads its inputs from HBM.
struct L2Flusher {
  HipBackend& be;
  std::size_t bytes;
  void* buf;
  L2Flusher(HipBackend& b, std::size_t n) : be(b), bytes(n), buf(b.allocate(n)) {}
  ~L2Flusher() { be.release(buf); }
  void flush() { PMQA_HIP_CHECK(hipMemsetAsync(buf, static_cast<int>(++round & 0xFF), bytes, 0)); }
  unsigned round = 0;
};

// Device-to-device copy bandwidth, counting bytes read plus bytes written.
double copy_bandwidth(HipBackend& be, int reps) {
  const std::size_t bytes = std::size_t{2} << 30;
  void* a = be.allocate(bytes);
  void* b = be.allocate(bytes);
  PMQA_HIP_CHECK(hipMemset(a, 1, bytes));
  Events ev;
  std::vector<double> t;
  for (int i = 0; i < reps + 3; ++i) {
    PMQA_HIP_CHECK(hipEventRecord(ev.start, 0));
    PMQA_HIP_CHECK(hipMemcpyAsync(b, a, bytes, hipMemcpyDeviceToDevice, 0));
    PMQA_HIP_CHECK(hipEventRecord(ev.stop, 0));
    const double ms = ev.ms();
    if (i >= 3) t.push_back(ms);
  }
  be.release(a);
  be.release(b);
  return 2.0 * static_cast<double>(bytes) / (median(t) * 1e-3);
}

// Independent FMA chains per thread: the fp32 (non-tensor) arithmetic ceiling.
constexpr int kChains = 8, kIters = 4096;
__global__ void fma_peak_kernel(float* out, float a, float b) {
  float x[kChains];
  for (int c = 0; c < kChains; ++c) x[c] = static_cast<float>(threadIdx.x + c);
  for (int i = 0; i < kIters; ++i)
#pragma unroll
    for (int c = 0; c < kChains; ++c) x[c] = fmaf(x[c], a, b);
  float s = 0;
  for (int c = 0; c < kChains; ++c) s += x[c];
  if (s == 1234.5f) out[0] = s;  // keeps the chains alive
}

double fma_rate(HipBackend& be, int multiprocessors, int reps) {
  float* out = static_cast<float*>(be.allocate(sizeof(float)));
  const dim3 grid(static_cast<unsigned>(multiprocessors * 16)), block(256);
  Events ev;
  std::vector<double> t;
  for (int i = 0; i < reps + 3; ++i) {
    PMQA_HIP_CHECK(hipEventRecord(ev.start, 0));
    hipLaunchKernelGGL(fma_peak_kernel, grid, block, 0, 0, out, 0.999f, 0.001f);
    PMQA_HIP_CHECK(hipEventRecord(ev.stop, 0));
    const double ms = ev.ms();
    if (i >= 3) t.push_back(ms);
  }
  be.release(out);
  const double flops = 2.0 * grid.x * block.x * kChains * static_cast<double>(kIters);
  return flops / (median(t) * 1e-3);
}

pmqa::Case decode_case(std::int64_t next_n) {
  pmqa::fixtures::CaseSpec s;
  s.name = "deepseek-v32-decode-n" + std::to_string(next_n);
  s.seed = 7000 + static_cast<std::uint64_t>(next_n);
  s.batch = 64;
  s.next_n = next_n;
  s.heads = 64;
  s.head_dim = 128;
  s.block_size = 64;
  s.max_model_len = 16384;
  s.garbage_unused = false;
  pmqa::fixtures::Rng rng(s.seed);
  for (int b = 0; b < 64; ++b) s.context_lens.push_back(static_cast<std::int32_t>(rng.between(8192 * 7 / 10, 8192 * 13 / 10)));
  return pmqa::fixtures::make_case(s);
}

// Each input read once, each output cell written once.
double minimal_bytes(const pmqa::Case& c) {
  double keys = 0;
  for (std::int64_t b = 0; b < c.batch; ++b) {
    std::int64_t longest = 0;
    for (std::int64_t n = 0; n < c.next_n; ++n) longest = std::max(longest, c.valid_keys(b * c.next_n + n));
    keys += static_cast<double>(longest);
  }
  return static_cast<double>(c.q.size() + c.weights.size() * 4 + c.context_lens.size() * 4 + c.block_table.size() * 4) +
         keys * static_cast<double>(c.head_dim + 4) + static_cast<double>(c.rows() * c.max_model_len) * 4;
}

double flop_count(const pmqa::Case& c) {
  double keys = 0;
  for (std::int64_t r = 0; r < c.rows(); ++r) keys += static_cast<double>(std::max<std::int64_t>(0, c.valid_keys(r)));
  return 2.0 * static_cast<double>(c.heads * c.head_dim) * keys;
}

struct Row {
  std::string path;
  std::int64_t next_n;
  double ms, gbs, tflops, floor_ms;
  bool correct;
};

}  // namespace

int main(int argc, char** argv) {
  int reps = 50;
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--json") && i + 1 < argc) json_path = argv[++i];
    else {
      std::fprintf(stderr, "usage: pmqa_bench_gpu [--reps N] [--json FILE]\n");
      return 2;
    }
  }
  const auto gpu = pmqa::kernels::find_gpu();
  if (!gpu) {
    std::printf("pmqa_bench_gpu: no GPU found: nothing timed\n");
    return 77;
  }
  try {
    HipBackend be(gpu->device, gpu->multiprocessors);
    const double bw = copy_bandwidth(be, 20);
    const double fma = fma_rate(be, gpu->multiprocessors, 20);
    std::printf("device: %s (%s), %d SMs; measured copy bandwidth %.0f GB/s, fp32 FMA rate %.1f TFLOP/s\n",
                gpu->name.c_str(), gpu->arch.c_str(), gpu->multiprocessors, bw / 1e9, fma / 1e12);
    L2Flusher flusher(be, std::size_t{512} << 20);
    std::vector<Row> rows;
    for (std::int64_t n : {1, 2}) {
      const pmqa::Case c = decode_case(n);
      const pmqa::Reference ref = pmqa::compute_reference(c, {.precision = pmqa::Precision::fp32});
      const double bytes = minimal_bytes(c), flops = flop_count(c);
      const double floor_ms = std::max(bytes / bw, flops / fma) * 1e3;
      for (Path path : {Path::fused, Path::two_stage}) {
        PreparedRun<HipBackend> run(be, path, c, {});
        run.poison();
        run.launch();
        const pmqa::Report rep = pmqa::compare(c, ref, run.download());
        for (int i = 0; i < 5; ++i) run.launch();
        Events ev;
        std::vector<double> t;
        for (int i = 0; i < reps; ++i) {
          flusher.flush();
          PMQA_HIP_CHECK(hipEventRecord(ev.start, 0));
          run.launch();
          PMQA_HIP_CHECK(hipEventRecord(ev.stop, 0));
          t.push_back(ev.ms());
        }
        const double ms = median(t);
        rows.push_back({std::string(pmqa::kernels::to_string(path)), n, ms, bytes / (ms * 1e-3) / 1e9,
                        flops / (ms * 1e-3) / 1e12, floor_ms, rep.passed()});
        if (!rep.passed()) std::fputs(rep.to_text().c_str(), stdout);
      }
    }
    std::printf("\n%-10s %-6s %10s %10s %9s %10s %12s %8s\n", "path", "next_n", "median ms", "GB/s", "TFLOP/s",
                "floor ms", "fused speedup", "correct");
    bool all_correct = true;
    for (const auto& r : rows) {
      double speedup = 0;
      for (const auto& o : rows)
        if (o.next_n == r.next_n && o.path == "two-stage") speedup = o.ms / r.ms;
      std::printf("%-10s %-6lld %10.4f %10.0f %9.2f %10.4f %12s %8s\n", r.path.c_str(), static_cast<long long>(r.next_n),
                  r.ms, r.gbs, r.tflops, r.floor_ms,
                  r.path == "fused" ? (std::to_string(speedup).substr(0, 5) + "x").c_str() : "-", r.correct ? "yes" : "NO");
      all_correct = all_correct && r.correct;
    }
    if (!json_path.empty()) {
      std::ofstream f(json_path);
      f << "{\"device\": \"" << gpu->name << "\", \"arch\": \"" << gpu->arch << "\", \"copy_gbs\": " << bw / 1e9
        << ", \"fma_tflops\": " << fma / 1e12 << ", \"rows\": [";
      for (std::size_t i = 0; i < rows.size(); ++i)
        f << (i ? ", " : "") << "{\"path\": \"" << rows[i].path << "\", \"next_n\": " << rows[i].next_n
          << ", \"ms\": " << rows[i].ms << ", \"gbs\": " << rows[i].gbs << ", \"tflops\": " << rows[i].tflops
          << ", \"floor_ms\": " << rows[i].floor_ms << ", \"correct\": " << (rows[i].correct ? "true" : "false") << "}";
      f << "]}\n";
    }
    return all_correct ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pmqa_bench_gpu: %s\n", e.what());
    return 2;
  }
}
