// GPU timing of the fused path's two kernels (fused-mma on fp8 tensor cores, fused-scalar) and the
// two-stage path at the DeepSeek-V3.2 decode shape (B=64, H=64, D=128, block_size 64, context
// uniform in [0.7, 1.3] x 8192, max_model_len 16384, shuffled block table), next_n 1 and 2; then a
// scaling table of fused-mma over context, batch and next_n. Device events around each launch, L2
// flushed before each timed launch, warm-up, median of many. Beside each time: achieved GB/s
// (minimal bytes / time), TFLOP/s, the copy-bandwidth floor (minimal bytes / measured copy
// bandwidth), the fp32 floor (the larger of that and FLOPs / the measured fp32 FMA rate: what the
// portable kernels can reach), and the ratio to the two-stage path. The copy bandwidth and the fp32 FMA rate are
// measured in the same run. Each kernel of the main table is checked once against the reference
// (matrix-unit tolerance), so a fast wrong kernel cannot report a time.
//
//   pmqa_bench_gpu [--reps N] [--no-scaling] [--json FILE]
//   pmqa_bench_gpu --case FILE [--case FILE ...] [--reps N] [--json FILE]
// With --case it times the given case files instead (pmqa gen's, e.g. the nightly suite's
// deepseek-8k-n1): each through the fused path as the kernel list picks it and through the
// two-stage path, checked once against the reference first, then the median of N launches with L2
// flushed before each; the JSON gives each run's kernel and time and the copy bandwidth measured
// here, for bench/h200/speed_gate.py's floor ratios. Launched from C++, nothing of the host lies
// between a launch's events: the time is the kernels' own (the two-stage path's three back to back).
// (What each stage of fused-mma costs, and where its time goes inside a launch, are probes:
// bench/probes/.)
#include <hip/hip_runtime.h>

#include <utility>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pmqa/cases/case_file.hpp"
#include "pmqa/fixtures/generate.hpp"
#include "pmqa/fixtures/rng.hpp"
#include "pmqa/kernels/lab_hip.hpp"
#include "gpu_timing.hpp"
#include "pmqa_kernels/arch/nv_mma_sync.hpp"
#include "pmqa/reference/compare.hpp"

namespace {

using pmqa::Path;
using pmqa::kernels::lab::HipBackend;
using pmqa::kernels::lab::PreparedRun;
using pmqa::bench::decode_case;
using pmqa::bench::Events;
using pmqa::bench::L2Flusher;
using pmqa::bench::median;

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

// Independent chains of f16 mma.sync m16n8k16 per warp: the tensor-core instruction fused-mma
// issues (on sm_90 fp8 mma.sync is itself lowered to it), so its ceiling.
constexpr int kMmaChains = 4, kMmaIters = 2048;
__global__ void mma_peak_kernel(float* out, std::uint32_t seed) {
  const std::uint32_t a[4] = {0x3C003800u ^ seed, 0x38003C00u, 0x3C003C00u, 0x38003800u};
  const std::uint32_t b[2] = {0x3C003800u, 0x38003C00u ^ seed};
  float acc[kMmaChains][4] = {};
  for (int i = 0; i < kMmaIters; ++i)
#pragma unroll
    for (int c = 0; c < kMmaChains; ++c) pmqa::kdev::NvMmaF16::mma(acc[c], a, b);
  float s = 0;
  for (int c = 0; c < kMmaChains; ++c) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
  if (s == 1234.5f) out[0] = s;
}

double mma_rate(HipBackend& be, int multiprocessors, int reps) {
  float* out = static_cast<float*>(be.allocate(sizeof(float)));
  const dim3 grid(static_cast<unsigned>(multiprocessors * 8)), block(256);
  Events ev;
  std::vector<double> t;
  for (int i = 0; i < reps + 3; ++i) {
    PMQA_HIP_CHECK(hipEventRecord(ev.start, 0));
    hipLaunchKernelGGL(mma_peak_kernel, grid, block, 0, 0, out, 0u);
    PMQA_HIP_CHECK(hipEventRecord(ev.stop, 0));
    const double ms = ev.ms();
    if (i >= 3) t.push_back(ms);
  }
  be.release(out);
  const double flops = 2.0 * 16 * 8 * 16 * kMmaChains * static_cast<double>(kMmaIters) * grid.x * (block.x / 32);
  return flops / (median(t) * 1e-3);
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
  std::string path;  // the kernel's name
  std::int64_t next_n;
  double ms, gbs, tflops, floor_ms;
  bool correct;
  double fp32_floor_ms = 0;  // max(bytes / copy bandwidth, FLOPs / fp32 FMA rate): the portable kernels' floor
};

// Median time of one launch of `run`, L2 flushed before each.
template <class Run>
double time_launch(Run& run, L2Flusher& flusher, int reps) {
  for (int i = 0; i < 3; ++i) run.launch();
  Events ev;
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    flusher.flush();
    PMQA_HIP_CHECK(hipEventRecord(ev.start, 0));
    run.launch();
    PMQA_HIP_CHECK(hipEventRecord(ev.stop, 0));
    t.push_back(ev.ms());
  }
  return median(t);
}

// One launch of a prepared run on poisoned output, compared with the reference (matrix-unit
// tolerance); the report is printed when it fails. Before any timing of that run.
template <class Run>
bool correct_once(Run& run, const pmqa::Case& c, const pmqa::Reference& ref) {
  run.poison();
  run.launch();
  const pmqa::Report rep = pmqa::compare(c, ref, run.download(), {.judging = {.tolerance = pmqa::Tolerance::matrix_unit()}});
  if (!rep.passed()) std::fputs(rep.to_text().c_str(), stdout);
  return rep.passed();
}

struct Kernel {
  const char* name;
  Path path;
  std::optional<pmqa::KernelId> kernel;  // absent: the path's first kernel that fits
};

// JSON's string escaping for the few strings the benchmark writes (names, paths).
std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (static_cast<unsigned char>(ch) >= 0x20) out += ch;
  }
  return out + "\"";
}

// --case: each file through the fused path (the kernel list's pick) and the two-stage path.
int time_case_files(HipBackend& be, const pmqa::kernels::GpuInfo& gpu, const std::vector<std::string>& files, int reps,
                    const std::string& json_path) {
  const double bw = copy_bandwidth(be, 20);
  std::printf("device: %s (%s), %d SMs; measured copy bandwidth %.0f GB/s\n", gpu.name.c_str(), gpu.arch.c_str(),
              gpu.multiprocessors, bw / 1e9);
  L2Flusher flusher(be, std::size_t{512} << 20);
  std::string json = "{\"device\": " + json_string(gpu.name) + ", \"arch\": " + json_string(gpu.arch) +
                     ", \"copy_gbs\": " + std::to_string(bw / 1e9) + ", \"reps\": " + std::to_string(reps) +
                     ", \"cases\": [";
  bool all_correct = true;
  std::printf("%-26s %-10s %-20s %10s %10s %8s\n", "case", "path", "kernel", "median ms", "min ms", "correct");
  for (std::size_t f = 0; f < files.size(); ++f) {
    const pmqa::cases::CaseFile cf = pmqa::cases::read_case_file(files[f]);
    const pmqa::Case& c = cf.c;
    const pmqa::Reference ref = pmqa::compute_reference(c, {.precision = pmqa::Precision::fp32});
    json += std::string(f ? ", " : "") + "{\"file\": " + json_string(files[f]) + ", \"case\": " + json_string(c.name) +
            ", \"runs\": [";
    const Path paths[] = {Path::fused, Path::two_stage};
    for (std::size_t k = 0; k < 2; ++k) {
      PreparedRun<HipBackend> run(be, paths[k], c, {});
      const std::string kernel(pmqa::to_string(run.kernel()));
      const bool correct = correct_once(run, c, ref);
      for (int i = 0; i < 3; ++i) run.launch();
      Events ev;
      std::vector<double> t;
      for (int i = 0; i < reps; ++i) {
        flusher.flush();
        PMQA_HIP_CHECK(hipEventRecord(ev.start, 0));
        run.launch();
        PMQA_HIP_CHECK(hipEventRecord(ev.stop, 0));
        t.push_back(ev.ms());
      }
      const double ms = median(t), least = *std::min_element(t.begin(), t.end());
      std::printf("%-26s %-10s %-20s %10.4f %10.4f %8s\n", c.name.c_str(), k ? "two-stage" : "fused", kernel.c_str(), ms,
                  least, correct ? "yes" : "NO");
      json += std::string(k ? ", " : "") + "{\"path\": \"" + (k ? "two-stage" : "fused") + "\", \"kernel\": " +
              json_string(kernel) + ", \"ms\": " + std::to_string(ms) + ", \"min_ms\": " + std::to_string(least) +
              ", \"correct\": " + (correct ? "true" : "false") + "}";
      all_correct = all_correct && correct;
      std::fflush(stdout);
    }
    json += "]}";
  }
  json += "]}\n";
  if (!json_path.empty()) std::ofstream(json_path) << json;
  return all_correct ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 50;
  bool scaling = true;
  std::string json_path;
  std::vector<std::string> case_files;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--json") && i + 1 < argc) json_path = argv[++i];
    else if (!std::strcmp(argv[i], "--case") && i + 1 < argc) case_files.emplace_back(argv[++i]);
    else if (!std::strcmp(argv[i], "--no-scaling")) scaling = false;
    else {
      std::fprintf(stderr, "usage: pmqa_bench_gpu [--reps N] [--no-scaling] [--json FILE]\n"
                           "       pmqa_bench_gpu --case FILE [--case FILE ...] [--reps N] [--json FILE]\n");
      return 2;
    }
  }
  const auto gpu = pmqa::kernels::find_gpu();
  if (!gpu) {
    std::printf("pmqa_bench_gpu: no GPU found: nothing timed\n");
    return 77;
  }
  try {
    HipBackend be(gpu->device, gpu->multiprocessors, pmqa::kernels::make_gpu_executor(gpu->device)->caps());
    if (!case_files.empty()) return time_case_files(be, *gpu, case_files, reps, json_path);
    const double bw = copy_bandwidth(be, 20);
    const double fma = fma_rate(be, gpu->multiprocessors, 20);
    const double mma = mma_rate(be, gpu->multiprocessors, 20);
    std::printf("device: %s (%s), %d SMs; measured copy bandwidth %.0f GB/s, fp32 FMA rate %.1f TFLOP/s, "
                "f16 mma.sync m16n8k16 rate %.0f TFLOP/s\n",
                gpu->name.c_str(), gpu->arch.c_str(), gpu->multiprocessors, bw / 1e9, fma / 1e12, mma / 1e12);
    L2Flusher flusher(be, std::size_t{512} << 20);
    // The fused path as the kernel list picks it (fused-mma's wgmma kernel on sm_90a) and, beside
    // it, fused-mma's mma.sync kernel and the portable one.
    const Kernel kernels[] = {{"fused-mma", Path::fused, std::nullopt},
                              {"mma.sync", Path::fused, pmqa::KernelId::fused_mma_sync},
                              {"fused-scalar", Path::fused, pmqa::KernelId::fused_scalar},
                              {"two-stage", Path::two_stage, std::nullopt}};
    std::vector<Row> rows;
    bool all_correct = true;
    std::printf("\nDeepSeek-V3.2 decode: B 64, H 64, D 128, block 64, context ~8192, max_model_len 16384\n");
    for (std::int64_t n : {1, 2}) {
      const pmqa::Case c = decode_case(64, 8192, n, 16384);
      const pmqa::Reference ref = pmqa::compute_reference(c, {.precision = pmqa::Precision::fp32});
      const double bytes = minimal_bytes(c), flops = flop_count(c);
      std::printf("next_n %lld: minimal bytes %.1f MB (copy floor %.4f ms), %.2f GFLOP\n", static_cast<long long>(n),
                  bytes / 1e6, bytes / bw * 1e3, flops / 1e9);
      for (const Kernel& k : kernels) {
        PreparedRun<HipBackend> run(be, k.path, c, {.kernel = k.kernel});
        if (k.path == Path::fused && !k.kernel)
          std::printf("  %s runs %s, keys by %s\n", k.name, std::string(pmqa::to_string(run.kernel())).c_str(),
                      run.key_copies().empty() ? "its own loads" : run.key_copies().c_str());
        const bool correct = correct_once(run, c, ref);
        const double ms = time_launch(run, flusher, reps);
        rows.push_back({k.name, n, ms, bytes / (ms * 1e-3) / 1e9, flops / (ms * 1e-3) / 1e12, bytes / bw * 1e3, correct,
                        std::max(bytes / bw, flops / fma) * 1e3});
        all_correct = all_correct && correct;
      }
    }
    std::printf("\n%-13s %-6s %10s %8s %8s %10s %8s %11s %10s %8s\n", "kernel", "next_n", "median ms", "GB/s", "TFLOP/s",
                "floor ms", "x floor", "fp32 floor", "vs 2-stage", "correct");
    for (const auto& r : rows) {
      double two = 0;
      for (const auto& o : rows)
        if (o.next_n == r.next_n && o.path == "two-stage") two = o.ms;
      std::printf("%-13s %-6lld %10.4f %8.0f %8.2f %10.4f %8.2f %11.4f %9.2fx %8s\n", r.path.c_str(),
                  static_cast<long long>(r.next_n), r.ms, r.gbs, r.tflops, r.floor_ms, r.ms / r.floor_ms, r.fp32_floor_ms,
                  two / r.ms, r.correct ? "yes" : "NO");
    }

    std::vector<Row> scale_rows;
    std::vector<std::string> scale_labels;
    if (scaling) {
      std::printf("\nScaling of fused-mma (H 64, D 128, block 64; keys random codes; timed only)\n");
      std::printf("%-8s %-6s %-6s %10s %10s %9s %8s %8s %8s\n", "context", "batch", "next_n", "MB", "GFLOP", "median ms",
                  "GB/s", "% copy", "TFLOP/s");
      struct Shape { std::int64_t ctx, batch, n; };
      std::vector<Shape> shapes;
      for (std::int64_t ctx : {1024, 4096, 16384, 65536})
        for (std::int64_t batch : {1, 16, 64, 256}) shapes.push_back({ctx, batch, 1});
      for (std::int64_t ctx : {1024, 8192, 65536})
        for (std::int64_t n : {2, 4}) shapes.push_back({ctx, 64, n});
      for (const auto& sh : shapes) {
        const pmqa::Case c = decode_case(sh.batch, sh.ctx, sh.n, sh.ctx * 13 / 10 + 64, false);
        const double bytes = minimal_bytes(c), flops = flop_count(c);
        PreparedRun<HipBackend> run(be, Path::fused, c, {});
        const double ms = time_launch(run, flusher, std::max(10, reps / 2));
        std::printf("%-8lld %-6lld %-6lld %10.1f %10.2f %9.4f %8.0f %7.0f%% %8.2f\n", static_cast<long long>(sh.ctx),
                    static_cast<long long>(sh.batch), static_cast<long long>(sh.n), bytes / 1e6, flops / 1e9, ms,
                    bytes / (ms * 1e-3) / 1e9, 100.0 * bytes / (ms * 1e-3) / bw, flops / (ms * 1e-3) / 1e12);
        std::fflush(stdout);
      }
    }
    if (!json_path.empty()) {
      std::ofstream f(json_path);
      f << "{\"device\": \"" << gpu->name << "\", \"arch\": \"" << gpu->arch << "\", \"copy_gbs\": " << bw / 1e9
        << ", \"fma_tflops\": " << fma / 1e12 << ", \"rows\": [";
      for (std::size_t i = 0; i < rows.size(); ++i)
        f << (i ? ", " : "") << "{\"kernel\": \"" << rows[i].path << "\", \"next_n\": " << rows[i].next_n
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
