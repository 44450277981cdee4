// What the GPU benchmark and the fused-mma timeline share: device-event timing, the L2 flush
// before a timed launch, and the DeepSeek-V3.2 decode cases they time.
#pragma once

#include <hip/hip_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "pmqa/fixtures/generate.hpp"
#include "pmqa/fixtures/rng.hpp"
#include "pmqa/kernels/detail/hip_backend.hpp"

namespace pmqa::bench {

using pmqa::kernels::detail::HipBackend;

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
