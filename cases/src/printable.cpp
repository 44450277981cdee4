#include "pmqa/cases/printable.hpp"

namespace pmqa::cases {
namespace {

void escape_byte(std::string& out, unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629), 0 if it is not one.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const unsigned char c = p[i];
  std::size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (s.size() - i < len || p[i + 1] < lo || p[i + 1] > hi) return 0;
  for (std::size_t k = 2; k < len; ++k)
    if (p[i + k] < 0x80 || p[i + k] > 0xBF) return 0;
  return len;
}

}  // namespace

std::string printable(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if ((c < 0x20 && !(keep_newlines && (c == '\n' || c == '\t'))) || c == 0x7F) escape_byte(out, c);
      else out += static_cast<char>(c);
      ++i;
      continue;
    }
    const std::size_t len = utf8_length(text, i);
    const bool c1 = len == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) <= 0x9F;
    const bool nonchar = len == 3 && c == 0xEF && static_cast<unsigned char>(text[i + 1]) == 0xBF &&
                         static_cast<unsigned char>(text[i + 2]) >= 0xBE;
    if (len == 0 || c1 || nonchar) {
      const std::size_t n = len == 0 ? 1 : len;
      for (std::size_t k = 0; k < n; ++k) escape_byte(out, static_cast<unsigned char>(text[i + k]));
      i += n;
      continue;
    }
    out.append(text.substr(i, len));
    i += len;
  }
  return out;
}

}  // namespace pmqa::cases
