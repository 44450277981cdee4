#include "python_json.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace pmqa::cases {
namespace {

void escape_u(std::string& out, unsigned cp) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\u%04x", cp);
  out += buf;
}

// The code point of the well-formed UTF-8 sequence at s[i] and its length; length 0 if there is none.
std::pair<unsigned, std::size_t> decode(const std::string& s, std::size_t i) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const unsigned c = p[i];
  std::size_t len = 0;
  unsigned cp = 0, lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2, cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3, cp = c & 0x0F;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4, cp = c & 0x07;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return {0, 0};
  }
  if (s.size() - i < len || p[i + 1] < lo || p[i + 1] > hi) return {0, 0};
  for (std::size_t k = 1; k < len; ++k) {
    if (p[i + k] < 0x80 || p[i + k] > 0xBF) return {0, 0};
    cp = (cp << 6) | (p[i + k] & 0x3F);
  }
  return {cp, len};
}

void string_text(std::string& out, const std::string& s) {
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
          if (c < 0x20 || c == 0x7F) escape_u(out, c);
          else out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    const auto [cp, len] = decode(s, i);
    if (len == 0) {  // not UTF-8: the surrogate Python's surrogateescape decodes this byte to
      escape_u(out, 0xDC00 + c);
      ++i;
      continue;
    }
    if (cp > 0xFFFF) {
      escape_u(out, 0xD800 + ((cp - 0x10000) >> 10));
      escape_u(out, 0xDC00 + ((cp - 0x10000) & 0x3FF));
    } else {
      escape_u(out, cp);
    }
    i += len;
  }
  out += '"';
}

void dump(std::string& out, const nlohmann::ordered_json& v, int level) {
  using T = nlohmann::ordered_json::value_t;
  const auto indent = [&](int l) { out += '\n' + std::string(static_cast<std::size_t>(l), ' '); };
  switch (v.type()) {
    case T::object: {
      if (v.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out += ',';
        first = false;
        indent(level + 1);
        string_text(out, it.key());
        out += ": ";
        dump(out, it.value(), level + 1);
      }
      indent(level);
      out += '}';
      return;
    }
    case T::array: {
      if (v.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      bool first = true;
      for (const auto& x : v) {
        if (!first) out += ',';
        first = false;
        indent(level + 1);
        dump(out, x, level + 1);
      }
      indent(level);
      out += ']';
      return;
    }
    case T::string: string_text(out, v.get_ref<const std::string&>()); return;
    case T::boolean: out += v.get<bool>() ? "true" : "false"; return;
    case T::number_integer: out += std::to_string(v.get<std::int64_t>()); return;
    case T::number_unsigned: out += std::to_string(v.get<std::uint64_t>()); return;
    case T::number_float: out += python_float_repr(v.get<double>()); return;
    case T::null:
    case T::discarded:
    case T::binary: out += "null"; return;
  }
}

}  // namespace

std::string python_float_repr(double x) {
  if (!std::isfinite(x)) throw std::invalid_argument("a number is not finite (JSON has no NaN or infinity)");
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);  // shortest: "-1.25e-05"
  std::string s(buf, res.ptr);
  const bool negative = s[0] == '-';
  if (negative) s.erase(0, 1);
  const std::size_t e = s.find('e');
  const int exp = std::atoi(s.c_str() + e + 1);
  std::string digits = s.substr(0, e);
  if (digits.size() > 1) digits.erase(1, 1);  // "1.25" -> "125"
  std::string out;
  if (exp >= -4 && exp < 16) {  // Python's repr: positional from 1e-4 up to 1e16
    if (exp >= 0) {
      const auto point = static_cast<std::size_t>(exp) + 1;
      out = digits.size() <= point ? digits + std::string(point - digits.size(), '0') + ".0"
                                   : digits.substr(0, point) + "." + digits.substr(point);
    } else {
      out = "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out.append(".").append(digits, 1);
    char tail[16];
    std::snprintf(tail, sizeof tail, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    out += tail;
  }
  return negative ? "-" + out : out;
}

std::string python_json_dump(const nlohmann::ordered_json& value) {
  std::string out;
  dump(out, value, 0);
  return out;
}

}  // namespace pmqa::cases
