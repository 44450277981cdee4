// Envelopes: what the library behind a calling convention supports, as reviewed data with a
// reason for every limit (cases/data/envelopes/<convention>.json, compiled into the library;
// Python's pmqa.cases.envelope binds this model). A case outside its convention's envelope is refused before
// the op is called ("unsupported", with the limit's reason); `pmqa gen --fit CONVENTION` draws cases
// inside it.
//
// A file ("pmqa-envelope/1"):
//   {"schema": "pmqa-envelope/1", "convention": NAME, "calls": TEXT, "sources": TEXT,
//    "limits": [LIMIT...],                          the convention's own: every platform
//    "platforms": {"cuda": {"note": TEXT, "limits": [LIMIT...]}, "rocm": {...}}}
// A platform that is not listed runs nothing ("deepgemm" lists only cuda).
// LIMIT: {"id": "block-size", "field": FIELD, PREDICATE, "when": {"field": FIELD, PREDICATE}?,
//         "reason": TEXT}
// with exactly one PREDICATE: "in": [values], "not_in": [values], "min": int, "max": int,
// "multiple_of": int, "power_of_two": true or "equals": value. "when" makes the limit apply only to
// cases where its predicate holds.
// An overlay ("pmqa-envelope-overlay/1", `--envelope FILE`) has the same "convention", "calls",
// "sources", "limits" and "platforms"; each of its limits replaces the limit of the same id in the
// same section, or is added; {"id": ..., "drop": true, "reason": ...} removes one. An overlay may add
// a platform.
// Validation is strict: an unknown key, a missing or empty reason, an unknown field, a predicate
// that does not fit the field's type or a duplicate id is an EnvelopeError naming the file and the
// place.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "pmqa/model/case.hpp"

namespace pmqa::cases {

class EnvelopeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using TraitValue = std::variant<std::int64_t, bool, std::string>;

// The fields a limit can name, as traits_of computes them (Python's pmqa.cases.envelope.traits_of is this one):
//   batch, next_n, heads, head_dim, block_size, max_model_len      ints, as in the case
//   block_stride     bytes between physical blocks; stride_pad: block_stride - block_size*(D+4)
//   value_format     "e4m3fn" | "e4m3fnuz" | "e2m1";  kv_layout "normal" | "shuffle" | "interleaved"
//   context_lens     "1-d" | "2-d"
//   last_row_longest           every row's E_r <= the E_r of its sequence's last row (always true
//                              for 1-D lengths)
//   blocks_past_max_model_len  some sequence's last read block ends past max_model_len:
//                              ceil(max_n E_r / block_size) * block_size > max_model_len
//   chunk_q          the ChunkQ a convention passes (aiter-stage1: heads unless told otherwise; 0
//                    when the call has none); heads_mod_chunk_q: heads % chunk_q (0 when chunk_q is 0)
//   arch             the device's target ("gfx942", "sm_90"; "" when unknown)
struct CaseTraits {
  std::int64_t batch = 0, next_n = 1, heads = 1, head_dim = 1, block_size = 1, max_model_len = 0;
  std::int64_t block_stride = 0, stride_pad = 0;
  std::string value_format = "e4m3fn", kv_layout = "normal", context_lens = "1-d";
  bool last_row_longest = true;
  bool blocks_past_max_model_len = false;
  std::int64_t chunk_q = 0, heads_mod_chunk_q = 0;
  std::string arch;

  // Throws EnvelopeError for a name that is not a field.
  TraitValue get(std::string_view field) const;
};

// Call parameters and the device, which are not part of a case.
struct CallContext {
  std::optional<std::int64_t> chunk_q;  // empty: the call passes no ChunkQ (0); aiter-stage1 passes heads
  std::string arch;
};

CaseTraits traits_of(const Case& c, const CallContext& call = {});

// The fields of a case the traits read, without its tensors: fixtures' CaseSpec gives one without
// building the case (cheap for the gigabyte nightly cases; fixtures::traits_of(spec) in fit.hpp).
struct CaseShape {
  std::int64_t batch = 0, next_n = 1, heads = 1, head_dim = 1, block_size = 1, max_model_len = 0;
  std::int64_t block_stride = 0;
  ValueFormat format = ValueFormat::e4m3fn;
  KvLayout layout = KvLayout::normal;
  bool context_lens_2d = false;
  std::vector<std::int32_t> context_lens;
};
CaseTraits traits_of(const CaseShape& shape, const CallContext& call = {});
const std::vector<std::string>& trait_fields();

struct Predicate {
  enum class Kind : std::uint8_t { in, not_in, min, max, multiple_of, power_of_two, equals };
  Kind kind = Kind::equals;
  std::vector<TraitValue> values;  // in / not_in; equals: one value
  std::int64_t number = 0;         // min / max / multiple_of
  bool holds(const TraitValue& v) const;
  std::string describe() const;    // "is one of 64", "is a multiple of 16"
};

struct Limit {
  std::string id;
  std::string field;
  Predicate predicate;
  std::optional<std::string> when_field;
  std::optional<Predicate> when;
  std::string reason;
  std::string section;  // "common" or the platform's name
  std::string origin;   // the file it came from
};

struct Breach {
  const Limit* limit = nullptr;
  TraitValue value;
  // "limit block-size: block_size 16 is not one of 64 (<reason>)"
  std::string message() const;
};

// One convention's envelope on one platform: the common limits and the platform's.
struct Envelope {
  std::string convention;
  std::string platform;  // "cuda", "rocm" or "none" (the convention's own limits only)
  bool platform_listed = true;  // false: the library does not run on this platform at all
  std::string arch;             // the device's target the envelope is judged for ("" unknown): the
                                // traits fit_spec and fit_suite compute carry it
  std::string calls;
  std::vector<Limit> limits;
  std::vector<std::string> origins;  // the files, builtin first, then each overlay

  bool applies(const Limit& l, const CaseTraits& t) const;
  std::vector<Breach> breaches(const CaseTraits& t) const;  // every limit the case breaks
  bool contains(const CaseTraits& t) const { return platform_listed && breaches(t).empty(); }
  // Why the case is refused (empty when it is inside): the first breach, or the unlisted platform.
  std::string refusal(const CaseTraits& t) const;
  std::string describe() const;  // every limit with its reason, one per line
};

// A parsed file (builtin or overlay), before a platform is chosen.
struct EnvelopeSection {
  std::string note;
  std::vector<Limit> limits;
  std::vector<std::string> dropped;  // overlay: ids removed
  std::vector<std::string> dropped_reasons;
};
struct EnvelopeFile {
  bool overlay = false;
  std::string convention, calls, sources, origin;
  EnvelopeSection common;
  std::vector<std::pair<std::string, EnvelopeSection>> platforms;
};

EnvelopeFile parse_envelope(std::string_view json_text, std::string_view origin);
EnvelopeFile read_envelope_file(const std::string& path);

// The conventions with a builtin envelope (sorted) and their platforms.
std::vector<std::string> envelope_conventions();
std::vector<std::string> envelope_platforms(std::string_view convention);
const EnvelopeFile& builtin_envelope_file(std::string_view convention);

// The builtin envelope of `convention` on `platform` with the overlays applied in order. Overlays
// for another convention are an error. platform "" means: the only platform the convention lists,
// and an error naming them when it lists several.
Envelope make_envelope(std::string_view convention, std::string_view platform,
                       const std::vector<EnvelopeFile>& overlays = {});

}  // namespace pmqa::cases
