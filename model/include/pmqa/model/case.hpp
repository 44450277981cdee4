// The case model: the inputs of one FP8 paged MQA logits call (spec §1, §2), and their validation.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pmqa/model/value_format.hpp"

namespace pmqa {

// How the values (and, for e2m1, the scale words) of one KV block are laid out (spec §2).
//   fp8:  normal   offset(t, d) = t*D + d; the token's fp32 scale at block_size*D + 4t
//         shuffle  16-token x 16-byte tiles (AITER preshuffle); block_size % 16 == 0 and D % 16 == 0;
//                  scales as normal (never shuffled)
//   e2m1: normal       the byte of (t, d) at t*D/2 + d/2; token t's scale word at block_size*D/2 + 4t
//                      (DeepGEMM, FlashInfer, vLLM)
//         interleaved  values as normal; scale word slot k holds token (k % 4)*32 + k/4 (FlashInfer,
//                      block_size 128)
//         shuffle      AITER's preshuffled page (block_size 64, D 128): the byte i of token t's 32-value
//                      chunk c at (c*64 + t)*16 + i, and its scale byte at block_size*D/2 + c*64 +
//                      (t % 16)*4 + t/16
enum class KvLayout : std::uint8_t {
  normal,
  shuffle,
  interleaved,
};

// Which output cells a kernel promises to write (spec §1.3).
enum class Contract : std::uint8_t {
  clean,       // every column: the logit for j < E_r, exactly -inf from E_r on
  valid_only,  // only columns j < E_r are compared
};

// Each enum's spellings, once. KV layouts are "normal" / "shuffle" in files, JSON and case
// descriptions, and "NORMAL" / "SHUFFLE" (the spec's names) in messages and decision summaries.
std::string_view to_string(KvLayout layout) noexcept;     // "normal" | "shuffle"
std::string_view message_name(KvLayout layout) noexcept;  // "NORMAL" | "SHUFFLE"
std::string_view to_string(Contract contract) noexcept;
KvLayout parse_kv_layout(std::string_view text);  // either spelling of either layout; throws std::invalid_argument
Contract parse_contract(std::string_view text);   // "clean" | "valid-only"; throws std::invalid_argument
std::vector<std::string> contract_names();        // every contract as to_string spells it, in enumerator order
std::vector<std::string> kv_layout_names();       // every layout as to_string spells it, in enumerator order
// Why `layout` cannot hold a case of this format and shape ("" when it can).
std::string layout_problem(KvLayout layout, ValueFormat format, std::int64_t block_size, std::int64_t head_dim);

// Invalid input: the message names the field, the index and the value.
class CaseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One call's inputs. Buffers are flat and row-major in the shapes given beside them.
struct Case {
  // Provenance: enough to regenerate the case.
  std::string name;
  std::string suite;
  std::uint64_t seed = 0;

  ValueFormat format = ValueFormat::e4m3fn;  // of q and of the KV values (value_format.hpp)
  KvLayout layout = KvLayout::normal;

  std::int64_t batch = 0;       // B
  std::int64_t next_n = 1;      // N: query tokens scored per sequence
  std::int64_t heads = 0;       // H
  std::int64_t head_dim = 0;    // D
  std::int64_t block_size = 0;  // tokens per KV block
  std::int64_t num_blocks = 0;  // physical blocks in kv_cache
  std::int64_t block_stride = 0;        // bytes from one physical block to the next (>= block_size*(D+4))
  std::int64_t max_blocks_per_seq = 0;  // columns of block_table
  std::int64_t max_model_len = 0;       // logit columns
  bool context_lens_2d = false;         // context_lens is [B, N] (E_r directly) instead of [B]

  std::vector<std::uint8_t> q;             // [B, N, H, value_bytes(D)]: fp8 codes, or e2m1 nibble pairs
  std::vector<std::uint8_t> q_scales;      // e2m1: [B, N, H, 4] UE8M0 bytes (byte g for values [32g, 32g + 32)); fp8: empty
  std::vector<std::uint8_t> kv_cache;      // [num_blocks, block_stride] bytes
  std::vector<float> weights;              // [B*N, H]
  std::vector<std::int32_t> context_lens;  // [B] or [B, N]
  std::vector<std::int32_t> block_table;   // [B, max_blocks_per_seq]

  std::int64_t rows() const noexcept { return batch * next_n; }  // r = b*N + n
  std::int64_t token_value_bytes() const noexcept { return value_bytes(format, head_dim); }
  std::int64_t value_bytes_per_block() const noexcept { return block_size * token_value_bytes(); }
  std::int64_t min_block_stride() const noexcept { return block_size * (token_value_bytes() + kScaleWordBytes); }

  // E_r: the number of valid keys of row r (spec §1.2). May be <= 0 (whole row invalid).
  // Requires the shapes to be consistent (validate() first on untrusted input).
  std::int64_t valid_keys(std::int64_t row) const noexcept;

  // Logical blocks row r reads: ceil(max(E_r, 0) / block_size).
  std::int64_t blocks_read(std::int64_t row) const noexcept;

  // The physical block holding logical block `logical` of sequence b (no range check).
  std::int32_t physical_block(std::int64_t b, std::int64_t logical) const noexcept {
    return block_table[static_cast<std::size_t>(b * max_blocks_per_seq + logical)];
  }
};

// Checks every invariant a kernel may rely on; throws CaseError naming field, index and value.
// Entries of block_table that no row reads are not checked (they may be -1 or garbage).
// Scales of every token a row reads must be finite and > 0 (e2m1: no scale byte a row reads, of the
// keys or of q, is the NaN 0xFF), and weights finite (spec §1.1).
void validate(const Case& c);

// A one-line description: shape, formats, seed.
std::string describe(const Case& c);

}  // namespace pmqa
