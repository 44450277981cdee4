// What the GPU benchmark and the probes (bench/probes/) share: device-event timing, the L2 flush
// before a timed launch, and the DeepSeek-V3.2 decode cases they time.
#pragma once

#include <hip/hip_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "pmqa/fixtures/generate.hpp"
#include "pmqa/fixtures/rng.hpp"
#include "pmqa/kernels/lab_hip.hpp"

namespace pmqa::bench {

using pmqa::kernels::lab::HipBackend;

// A start and a stop event on the default stream; ms() waits for the stop.
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

// The one option of a tool that takes nothing else, --reps N: N (at least 1), `fallback` without
// it; on anything else the usage line is printed and nullopt returned (exit status 2).
std::optional<int> reps_option(int argc, char** argv, int fallback, const char* program) {
  int reps = fallback;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: %s [--reps N]\n", program);
      return std::nullopt;
    }
  }
  return reps;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Reads every 16 bytes of a buffer; a sum nobody uses keeps the loads.
__global__ void l2_read_flush_kernel(const uint4* p, std::size_t n, unsigned* sink) {
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
    const uint4 v = p[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x5A5A5A5Au) *sink = acc;
}

// Passes a buffer larger than L2 through it so the next launch reads its inputs from HBM. The
// benchmark's flush overwrites it (as DeepGEMM's tests do, with a zero-fill), which leaves L2 full
// of dirty lines the next launch writes back as it reads; by_reads reads it instead, leaving clean
// lines: the dirty lines cost a decode launch of fused-mma ~2.3 us, 8 % (bench/results/notes.md).
struct L2Flusher {
  HipBackend& be;
  std::size_t bytes;
  void* buf;
  bool by_reads = false;
  unsigned* sink = nullptr;  // by_reads: where the read kernel would store its sum
  L2Flusher(HipBackend& b, std::size_t n, bool reads = false)
      : be(b), bytes(n), buf(b.allocate(n)), by_reads(reads),
        sink(reads ? static_cast<unsigned*>(b.allocate(sizeof(unsigned))) : nullptr) {}
  ~L2Flusher() {
    be.release(buf);
    if (sink) be.release(sink);
  }
  void flush() {
    if (by_reads)
      hipLaunchKernelGGL(l2_read_flush_kernel, dim3(1024), dim3(512), 0, 0, static_cast<const uint4*>(buf), bytes / sizeof(uint4),
                         sink);
    else
      PMQA_HIP_CHECK(hipMemsetAsync(buf, static_cast<int>(++round & 0xFF), bytes, 0));
  }
  unsigned round = 0;
};

// The median time (us) between device events around one launch, over `reps` launches, each after
// an L2 flush (none when flusher is null); three untimed launches first.
template <class Launch>
double time_us(Launch&& launch, L2Flusher* flusher, int reps) {
  for (int i = 0; i < 3; ++i) launch();
  Events ev;
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    if (flusher) flusher->flush();
    PMQA_HIP_CHECK(hipEventRecord(ev.start, 0));
    launch();
    PMQA_HIP_CHECK(hipEventRecord(ev.stop, 0));
    t.push_back(ev.ms() * 1e3);
  }
  return median(t);
}

// DeepSeek-V3.2 indexer shape (H 64, D 128, block 64), 1-D lengths uniform in [0.7, 1.3] x context,
// shuffled block table. quantize=false fills keys with random codes (same bytes, faster to build).
pmqa::Case decode_case(std::int64_t batch, std::int64_t context, std::int64_t next_n, std::int64_t max_model_len,
                       bool quantize = true) {
  pmqa::fixtures::CaseSpec s;
  s.name = "deepseek-v32-B" + std::to_string(batch) + "-ctx" + std::to_string(context) + "-n" + std::to_string(next_n);
  s.seed = 7000 + static_cast<std::uint64_t>(batch * 131 + context * 7 + next_n);
  s.batch = batch;
  s.next_n = next_n;
  s.heads = 64;
  s.head_dim = 128;
  s.block_size = 64;
  s.max_model_len = max_model_len;
  s.garbage_unused = false;
  s.quantize_keys = quantize;
  pmqa::fixtures::Rng rng(s.seed);
  for (std::int64_t b = 0; b < batch; ++b)
    s.context_lens.push_back(static_cast<std::int32_t>(rng.between(context * 7 / 10, context * 13 / 10)));
  return pmqa::fixtures::make_case(s);
}

}  // namespace pmqa::bench
