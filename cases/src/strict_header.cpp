#include "strict_header.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <vector>

#include "pmqa/cases/case_file.hpp"
#include "pmqa/model/judging.hpp"

namespace pmqa::cases::detail {
namespace {

using json = nlohmann::json;
constexpr std::size_t kMaxJsonValues = 65536;  // values + containers in one header

struct JsonLimit {
  std::string problem;
};

bool is_ascii_digit(char ch) { return ch >= '0' && ch <= '9'; }

}  // namespace

std::string quoted(std::string_view text, std::size_t max_chars) {
  std::string out = "\"";
  std::size_t i = 0;
  for (; i < text.size() && i < max_chars; ++i) {
    const auto ch = static_cast<unsigned char>(text[i]);
    if (ch < 0x20 || ch >= 0x7F || ch == '"' || ch == '\\') {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[ch >> 4];
      out += kHex[ch & 15];
    } else {
      out += static_cast<char>(ch);
    }
  }
  out += '"';
  if (i < text.size()) out += cat("... (", text.size(), " bytes)");
  return out;
}

std::string key_text(std::string_view key) {
  const bool plain = !key.empty() && key.size() <= 64 && std::all_of(key.begin(), key.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
           ch == '-' || ch == '.';
  });
  return plain ? std::string(key) : detail::quoted(key);
}

std::size_t first_invalid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // no overlongs
      if (c == 0xED) hi = 0x9F;  // no surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;  // no overlongs
      if (c == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
    } else {
      return i;
    }
    if (n - i < len) return i;
    if (p[i + 1] < lo || p[i + 1] > hi) return i;
    for (std::size_t k = 2; k < len; ++k)
      if (p[i + k] < 0x80 || p[i + k] > 0xBF) return i;
    i += len;
  }
  return std::string_view::npos;
}

std::size_t first_control_character(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7F) return i;
    // C1 controls U+0080..U+009F are encoded C2 80..C2 9F.
    if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9F &&
        static_cast<unsigned char>(s[i + 1]) >= 0x80)
      return i;
  }
  return std::string_view::npos;
}

void check_printable(const std::string& src, const std::string& field, const std::string& text) {
  if (first_control_character(text) != std::string_view::npos)
    throw CaseFileError(src, field, detail::quoted(text) + " holds a control character (names must be printable)");
}

json parse_strict_header(const std::string& src, std::string_view text) {
  auto fail = [&](const std::string& problem) -> void { throw CaseFileError(src, "header", problem); };
  if (const auto bad = first_invalid_utf8(text); bad != std::string_view::npos)
    fail(cat("byte ", bad, " of the JSON header (0x", std::hex, static_cast<int>(static_cast<unsigned char>(text[bad])),
             std::dec, ") is not valid UTF-8"));
  if (text.empty() || text.front() != '{')
    fail("does not start with '{' (a JSON object is expected right after the length field)");
  // nlohmann's parser takes a NUL byte for the end of its input, so a NUL after the object would
  // pass unseen; JSON allows none anywhere (not even inside a string), and Python's parser refuses it.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos)
    fail(cat("byte ", nul, " of the JSON header is NUL (0x00), which JSON does not allow"));
  std::vector<std::set<std::string>> keys;  // keys seen, per open object
  std::size_t values = 0;
  auto guard = [&](int depth, json::parse_event_t event, json& parsed) -> bool {
    if (depth > kCaseFileMaxJsonDepth) throw JsonLimit{cat("nesting deeper than ", kCaseFileMaxJsonDepth, " levels")};
    switch (event) {
      case json::parse_event_t::object_start:
        keys.emplace_back();
        [[fallthrough]];
      case json::parse_event_t::array_start:
      case json::parse_event_t::value:
        if (++values > kMaxJsonValues) throw JsonLimit{cat("more than ", kMaxJsonValues, " values")};
        break;
      case json::parse_event_t::key:
        if (!keys.empty() && !keys.back().insert(parsed.get<std::string>()).second)
          throw JsonLimit{cat("duplicate key ", detail::quoted(parsed.get<std::string>()))};
        break;
      case json::parse_event_t::object_end:
        if (!keys.empty()) keys.pop_back();
        break;
      default:
        break;
    }
    return true;
  };
  json root;
  try {
    root = json::parse(text.begin(), text.end(), guard, /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const JsonLimit& e) {
    fail("JSON has " + e.problem);
  } catch (const json::exception& e) {
    // The parser's message quotes bytes it read, possibly cut inside a UTF-8 sequence: escaped, so
    // the message is printable and valid UTF-8 wherever it goes (a terminal, JUnit, Python).
    const std::string what = quoted(e.what(), std::string::npos);
    fail(cat("is not valid JSON: ", what.substr(1, what.size() - 2)));
  }
  if (!root.is_object()) fail(cat("is a JSON ", root.type_name(), ", expected an object"));
  return root;
}

std::int64_t json_non_negative(const std::string& src, const std::string& field, const json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      throw CaseFileError(src, field, cat(u, " is too large"));
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i < 0) throw CaseFileError(src, field, cat(i, " is negative"));
    return i;
  }
  if (v.is_number_float()) throw CaseFileError(src, field, cat(v.dump(), " is not an integer"));
  throw CaseFileError(src, field, cat("is a ", v.type_name(), ", expected a non-negative integer"));
}

std::string take_metadata(const std::string& src, std::map<std::string, std::string>& md, const std::string& key) {
  auto it = md.find(key);
  if (it == md.end()) throw CaseFileError(src, "__metadata__." + key, "missing");
  std::string value = std::move(it->second);
  md.erase(it);
  return value;
}

std::uint64_t take_decimal(const std::string& src, std::map<std::string, std::string>& md, const std::string& key,
                           std::uint64_t max) {
  const std::string field = "__metadata__." + key;
  const std::string text = take_metadata(src, md, key);
  if (text.size() > 1 && text[0] == '-' && std::all_of(text.begin() + 1, text.end(), is_ascii_digit))
    throw CaseFileError(src, field, cat(detail::quoted(text), " is negative"));
  if (text.empty() || !std::all_of(text.begin(), text.end(), is_ascii_digit))
    throw CaseFileError(src, field, cat(detail::quoted(text), " is not a non-negative decimal integer"));
  if (text.size() > 1 && text[0] == '0') throw CaseFileError(src, field, cat(detail::quoted(text), " has a leading zero"));
  std::uint64_t v = 0;
  for (char ch : text) {
    if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, static_cast<unsigned>(ch - '0'), &v))
      throw CaseFileError(src, field, cat(detail::quoted(text), " is too large (at most ", max, ")"));
  }
  if (v > max) throw CaseFileError(src, field, cat(detail::quoted(text), " is too large (at most ", max, ")"));
  return v;
}

void check_judging_metadata(const std::string& src, const std::map<std::string, std::string>& md) {
  // The model parses each name (resolve_judging, as pmqa verify does); the message quotes the
  // untrusted text as every other field's does and lists the names, as a contract's does.
  auto check = [&](const char* key, const std::vector<std::string>& names, JudgingMetadata given) {
    const auto it = md.find(key);
    if (it == md.end()) return;
    try {
      (void)resolve_judging({}, given);
    } catch (const JudgingError&) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : " or ") + n;
      throw CaseFileError(src, cat("__metadata__.", key), cat(quoted(it->second), " is not one of ", list));
    }
  };
  const auto value = [&](const char* key) -> std::optional<std::string_view> {
    const auto it = md.find(key);
    return it == md.end() ? std::nullopt : std::optional<std::string_view>(it->second);
  };
  check("tolerance", Tolerance::names(), {.tolerance = value("tolerance")});
  check("nan", nan_rule_names(), {.nan = value("nan")});
}

namespace {

std::string kind_of(mode_t mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "a special file";
}

}  // namespace

std::string not_a_regular_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ELOOP) return "a symbolic link loop";  // ln -s a b; ln -s b a: it leads nowhere, and not to nothing
    struct stat link {};
    if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) return "a symbolic link to nothing (it dangles)";
    return "no such file";
  }
  return kind_of(st.st_mode);
}

std::vector<std::uint8_t> read_regular_file(const std::string& path, const std::string& src) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ELOOP) {
      const std::string what = not_a_regular_file(path);
      throw CaseFileError(src, "file", what == "no such file" ? "does not exist" : "is " + what);
    }
    throw CaseFileError(src, "file", cat("cannot open for reading: ", std::strerror(errno)));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw CaseFileError(src, "file", cat("cannot read: ", std::strerror(errno)));
  if (const std::string kind = kind_of(st.st_mode); !kind.empty())
    throw CaseFileError(src, "file", "is " + kind + ", not a regular file");
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw CaseFileError(src, "file", cat("cannot read: ", std::strerror(errno)));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  std::uint8_t one = 0;
  if (got != bytes.size() || ::read(fd, &one, 1) > 0)
    throw CaseFileError(src, "file", cat("changed while being read (", got, " of ", bytes.size(), " bytes)"));
  return bytes;
}

}  // namespace pmqa::cases::detail
