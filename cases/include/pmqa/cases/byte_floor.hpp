// The byte floor of a case: what any implementation of the op must move, whatever its path. The
// speed gate (run_gates.hpp) divides a kernel time by the time these bytes take at the device's copy
// bandwidth; pmqa-run and pmqa verify both compute it here, from the case itself, so a verdict
// never rests on a floor someone recorded.
//
//   q             B*N*H*D bytes (fp8); e2m1: B*N*H*(D/2 + 4), its scale words included
//   kv_cache      block_size*(D+4) bytes for each distinct physical block a valid key lies in (the
//                 partial last block counts whole; pages shared between sequences once)
//   weights       B*N*H*4
//   block_table   4 bytes for each logical block a sequence reads (ceil(max_n E_r / block_size))
//   context_lens  4 bytes per entry ([B] or [B, N])
//   output        4 bytes per cell the contract needs written: every cell of [B*N, max_model_len]
//                 under clean, the valid cells (sum of min(E_r, max_model_len) over rows with
//                 E_r > 0) under valid-only
#pragma once

#include <cstdint>
#include <string>

#include "pmqa/model/case.hpp"

namespace pmqa::cases {

struct FloorBytes {
  std::int64_t q = 0, kv = 0, weights = 0, block_table = 0, context_lens = 0, output = 0;

  std::int64_t total() const noexcept { return q + kv + weights + block_table + context_lens + output; }
  // "74.12 MB (q 16384, kv ..., weights ..., block table ..., lengths ..., output ... bytes)"
  std::string describe() const;
};

// Reads only the shape, context_lens and block_table (the buffers the floor depends on), so a
// caller may leave q and kv_cache empty. Expects a valid case (validate()): block_table entries a
// row reads are counted as they are.
FloorBytes floor_bytes(const Case& c, Contract contract);

// The time `total_bytes` take at `bytes_per_s`, in milliseconds.
double floor_ms(std::int64_t total_bytes, double bytes_per_s) noexcept;

}  // namespace pmqa::cases
