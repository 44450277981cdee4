// The e2m1 (MXFP4) cases the kernel tests run: a test-local list, kept out of the built-in suites
// (quick, standard, nightly), whose case counts other tests rely on. Shared by the faithful runs
// (e2m1_kernels_test.cpp) and the planted mutants (e2m1_mutants_test.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "pmqa/fixtures/generate.hpp"

namespace pmqa::test {

// Every producer's quantizer x head_dim 64 and 128 x block 32 and 64, next_n cycling through 1..4
// and 1-D / 2-D lengths alternating; then the edges: negative zeros and all-maximum codes, scale
// bytes pushed to their extremes both ways, padded strides, and the two other layouts.
inline std::vector<fixtures::CaseSpec> e2m1_specs() {
  std::vector<fixtures::CaseSpec> out;
  auto base = [&](const std::string& name) {
    fixtures::CaseSpec s;
    s.name = name;
    s.suite = "e2m1-kernels";
    s.seed = 4400 + out.size();
    s.format = ValueFormat::e2m1;
    s.batch = 3;
    s.heads = 8;
    s.max_model_len = 200;
    return s;
  };
  // Lengths: sequence 1 ends mid-block, sequence 2 is short (< one block). 2-D rows need not fall
  // or rise with n (spec §1.2).
  auto lens = [](fixtures::CaseSpec& s, bool two_d) {
    s.context_lens_2d = two_d;
    s.context_lens.clear();
    const std::int32_t seq[3] = {200, 131, 7};
    for (std::int64_t b = 0; b < s.batch; ++b) {
      if (!two_d) {
        s.context_lens.push_back(seq[b] < s.next_n ? static_cast<std::int32_t>(s.next_n) : seq[b]);
        continue;
      }
      for (std::int64_t n = 0; n < s.next_n; ++n)  // lengths are >= 0; 0 leaves a row all -inf
        s.context_lens.push_back(std::max<std::int32_t>(0, static_cast<std::int32_t>(seq[b] - 3 * ((n * 5 + b) % s.next_n))));
    }
  };
  int k = 0;
  for (const char* quantizer : {"deepgemm", "aiter", "vllm"})
    for (const int head_dim : {64, 128})
      for (const int block : {32, 64}) {
        auto s = base(std::string(quantizer) + "-d" + std::to_string(head_dim) + "-b" + std::to_string(block));
        s.fp4_quantizer = quantizer;
        s.head_dim = head_dim;
        s.block_size = block;
        s.next_n = 1 + k % 4;
        lens(s, k % 2 == 1);
        s.name += "-n" + std::to_string(s.next_n) + (s.context_lens_2d ? "-2d" : "-1d");
        out.push_back(s);
        ++k;
      }
  for (const int head_dim : {64, 128}) {
    auto s = base("specials-d" + std::to_string(head_dim));  // 0x8 (-0) and all-maximum (+-6) codes
    s.head_dim = head_dim;
    s.block_size = 32;
    s.next_n = 2;
    s.specials = fixtures::SpecialCodes::finite;
    lens(s, false);
    out.push_back(s);
  }
  for (const int shift : {110, -110}) {  // key scale bytes near 1 and q's near 254, and the reverse
    auto s = base("scale-shift" + std::to_string(shift));
    s.head_dim = 128;
    s.block_size = 64;
    s.next_n = 3;
    s.fp4_scale_shift = shift;
    lens(s, true);
    out.push_back(s);
  }
  {
    auto s = base("padded-stride-vllm");  // block_stride past block_size*(D/2 + 4), not a multiple of 4
    s.fp4_quantizer = "vllm";
    s.head_dim = 64;
    s.block_size = 32;
    s.next_n = 4;
    s.block_stride_pad = 13;
    lens(s, false);
    out.push_back(s);
  }
  {
    auto s = base("interleaved-b128");  // FlashInfer's scale-word order
    s.layout = KvLayout::interleaved;
    s.head_dim = 128;
    s.block_size = 128;
    s.next_n = 3;
    s.max_model_len = 300;
    lens(s, false);
    s.context_lens[0] = 300;
    out.push_back(s);
  }
  {
    auto s = base("shuffle-aiter");  // AITER's preshuffled 64-token page
    s.layout = KvLayout::shuffle;
    s.fp4_quantizer = "aiter";
    s.head_dim = 128;
    s.block_size = 64;
    s.next_n = 2;
    lens(s, false);
    out.push_back(s);
  }
  return out;
}

}  // namespace pmqa::test
