// The value formats a case's q and keys are stored in, one spelling each, and what each is made of
// (the model's format table). Only names and sizes live here: the codecs that give the bytes a
// value are the oracle's (pmqa/reference/fp8.hpp, fp4.hpp) and the kernels' own.
//
//   e4m3fn, e4m3fnuz  one fp8 code per value; one fp32 scale per token (the 4 bytes after a block's
//                     values), q's scale folded into the weights (spec §1.1)
//   e2m1              MXFP4: two values per byte (element 2i in the low nibble), one UE8M0 scale per
//                     32 values along head_dim for keys and q alike; a token's (or a q row's) scales
//                     are one 4-byte word, byte g for values [32g, 32g + 32) (D = 64 leaves bytes 2
//                     and 3 unused). fp4-indexer-facts.md holds where each fact was read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pmqa/model/fp8_format.hpp"

namespace pmqa {

enum class ValueFormat : std::uint8_t {
  e4m3fn,    // fp8, OCP
  e4m3fnuz,  // fp8, FNUZ
  e2m1,      // fp4 with UE8M0 group scales (MXFP4)
};

std::string_view to_string(ValueFormat format) noexcept;   // "e4m3fn", "e4m3fnuz", "e2m1": files, messages
std::string_view short_name(ValueFormat format) noexcept;  // "fn", "fnuz", "fp4": narrow table columns
ValueFormat parse_value_format(std::string_view text);     // throws std::invalid_argument naming the three
std::vector<std::string> value_format_names();             // in enumerator order

inline constexpr std::int64_t kScaleGroup = 32;  // e2m1: values per UE8M0 scale
inline constexpr std::int64_t kScaleWordBytes = 4;  // a token's scale: one fp32, or four UE8M0 bytes

constexpr bool is_fp4(ValueFormat f) noexcept { return f == ValueFormat::e2m1; }
// The fp8 encoding of an fp8 format; nullopt for e2m1.
constexpr std::optional<Fp8Format> fp8_of(ValueFormat f) noexcept {
  if (f == ValueFormat::e4m3fn) return Fp8Format::e4m3fn;
  if (f == ValueFormat::e4m3fnuz) return Fp8Format::e4m3fnuz;
  return std::nullopt;
}
constexpr ValueFormat value_format_of(Fp8Format f) noexcept {
  return f == Fp8Format::e4m3fn ? ValueFormat::e4m3fn : ValueFormat::e4m3fnuz;
}
// Bytes of D values of one token (or of one q head).
constexpr std::int64_t value_bytes(ValueFormat f, std::int64_t head_dim) noexcept {
  return is_fp4(f) ? head_dim / 2 : head_dim;
}

}  // namespace pmqa
