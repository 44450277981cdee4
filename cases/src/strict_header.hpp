// The strict rules both safetensors readers (case files, logits-only result files) apply to a
// header, in one place so the two cannot drift: well-formed UTF-8, JSON without duplicate keys,
// bounded depth and size, canonical non-negative integers, printable names; and the quoting that
// makes an untrusted string safe to print. Internal to pmqa_cases.
#pragma once

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace pmqa::cases::detail {

template <class... T>
std::string cat(const T&... parts) {
  std::ostringstream s;
  (s << ... << parts);
  return s.str();
}

// An untrusted string made safe to print: quoted, control and non-ASCII bytes escaped, truncated.
std::string quoted(std::string_view text, std::size_t max_chars = 64);

// A JSON key as part of a field name: plain when it is a simple identifier, quoted otherwise.
std::string key_text(std::string_view key);

// Offset of the first byte that is not part of well-formed UTF-8 (RFC 3629), or npos.
std::size_t first_invalid_utf8(std::string_view s);

// Offset of the first control character (C0, DEL, or C1 U+0080..U+009F as UTF-8) in well-formed
// UTF-8, or npos. Names may hold none: NUL cuts a printed report short, ESC drives a terminal.
std::size_t first_control_character(std::string_view s);

// Throws CaseFileError(src, field, problem) unless text is printable (first_control_character).
void check_printable(const std::string& src, const std::string& field, const std::string& text);

// The header's JSON: valid UTF-8 starting with '{', no duplicate key in any object, at most
// kCaseFileMaxJsonDepth levels and 65536 values. Any problem is a CaseFileError(src, "header", ...).
nlohmann::json parse_strict_header(const std::string& src, std::string_view text);

// A JSON integer >= 0 (not a float, not a boolean) that fits int64; else CaseFileError(src, field).
std::int64_t json_non_negative(const std::string& src, const std::string& field, const nlohmann::json& v);

// Removes md[key] and returns it; CaseFileError(src, "__metadata__.KEY", "missing") if absent.
std::string take_metadata(const std::string& src, std::map<std::string, std::string>& md, const std::string& key);

// A canonical non-negative decimal (ASCII digits, no sign, no leading zero) at most max, taken
// from md[key]; else CaseFileError(src, "__metadata__.KEY", ...).
std::uint64_t take_decimal(const std::string& src, std::map<std::string, std::string>& md, const std::string& key,
                           std::uint64_t max);

// The judging names a file may carry beside its contract ("tolerance", "nan": what a runner records
// from its convention): each, where present, must be a profile and a NaN rule the model knows, so
// every reader refuses a file `pmqa verify` could not judge; else CaseFileError(src,
// "__metadata__.KEY", the model's own words).
void check_judging_metadata(const std::string& src, const std::map<std::string, std::string>& md);

}  // namespace pmqa::cases::detail

namespace pmqa::cases::detail {

// What a path is when it is not a regular file ("a FIFO", "a directory", ...), "" for a regular file
// (symbolic links followed), "a symbolic link to nothing (it dangles)", "a symbolic link loop", or
// "no such file".
std::string not_a_regular_file(const std::string& path);

// A regular file's bytes, opened without blocking (a FIFO named as input must never hang a reader);
// anything else, or a read that fails, is CaseFileError(src, "file", ...).
std::vector<std::uint8_t> read_regular_file(const std::string& path, const std::string& src);

}  // namespace pmqa::cases::detail
