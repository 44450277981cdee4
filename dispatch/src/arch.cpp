#include "pmqa/dispatch/arch.hpp"

#include <cctype>
#include <string>
#include <utility>

namespace pmqa::dispatch {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_lower_alnum(char c) { return is_digit(c) || (c >= 'a' && c <= 'z'); }

// Quotes a name for a message, showing control characters and spaces so they can be seen.
std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u >= 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

[[noreturn]] void fail(std::string_view text, std::string problem) {
  throw ArchParseError(std::string(text), std::move(problem));
}

// "gfx" then a processor id: a digit, then lowercase letters/digits, optionally "-"-separated parts
// (LLVM's generic targets, "gfx9-4-generic").
void check_amd_target(std::string_view full, std::string_view target) {
  const std::string_view id = target.substr(3);
  if (id.empty()) fail(full, "\"gfx\" is not followed by a processor id (e.g. gfx942)");
  if (!is_digit(id.front())) fail(full, "the processor id after \"gfx\" must start with a digit, got " + quoted(id));
  std::size_t part = 0;
  for (std::size_t i = 0; i < id.size(); ++i) {
    const char c = id[i];
    if (c == '-') {
      if (part == 0) fail(full, "empty part in processor id " + quoted(id));
      part = 0;
      continue;
    }
    if (!is_lower_alnum(c))
      fail(full, "character " + quoted(std::string_view(&id[i], 1)) + " is not allowed in processor id " + quoted(id) +
                     " (lowercase letters and digits only)");
    ++part;
  }
  if (part == 0) fail(full, "processor id " + quoted(id) + " ends with '-'");
}

Arch parse_amd(std::string_view text) {
  Arch arch;
  arch.text = std::string(text);
  arch.vendor = Vendor::amd;
  const auto colon = text.find(':');
  const std::string_view target = text.substr(0, colon);
  check_amd_target(text, target);
  arch.target = std::string(target);
  if (colon == std::string_view::npos) return arch;

  std::string_view rest = text.substr(colon + 1);
  std::size_t position = 1;
  while (true) {
    const auto next = rest.find(':');
    const std::string_view item = rest.substr(0, next);
    const std::string where = "feature " + std::to_string(position);
    if (item.empty())
      fail(text, where + " is empty (" + (next == std::string_view::npos ? "trailing ':'" : "\"::\"") + ")");
    const char sign = item.back();
    const std::string_view name = item.substr(0, item.size() - 1);
    if (sign != '+' && sign != '-') fail(text, "feature " + quoted(item) + " has no '+' or '-' suffix");
    if (name.empty()) fail(text, where + " " + quoted(item) + " has a sign but no name");
    if (!(name.front() >= 'a' && name.front() <= 'z'))
      fail(text, "feature name " + quoted(name) + " must start with a lowercase letter");
    for (char c : name)
      if (!is_lower_alnum(c) && c != '_')
        fail(text, "feature name " + quoted(name) + " holds " + quoted(std::string_view(&c, 1)) +
                       " (lowercase letters, digits and '_' only)");
    for (const auto& f : arch.features)
      if (f.name == name) fail(text, "feature " + quoted(name) + " is given twice");
    arch.features.push_back({std::string(name), sign == '+'});
    if (next == std::string_view::npos) break;
    rest = rest.substr(next + 1);
    ++position;
  }
  return arch;
}

Arch parse_nvidia(std::string_view text) {
  const std::string_view digits = text.substr(3);
  if (digits.empty()) fail(text, "\"sm_\" is not followed by a compute capability (e.g. sm_90)");
  std::size_t n = 0;
  while (n < digits.size() && is_digit(digits[n])) ++n;
  if (n < digits.size()) {
    const std::string_view tail = digits.substr(n);
    if (n >= 2 && (tail == "a" || tail == "f"))
      fail(text, "the suffix " + quoted(tail) + " marks a compile target; a device reports " +
                     quoted(text.substr(0, 3 + n)));
    fail(text, "the compute capability after \"sm_\" must be digits only, got " + quoted(digits));
  }
  if (n < 2)
    fail(text, "the compute capability after \"sm_\" needs a major and a minor digit (sm_90 is 9.0), got " +
                   quoted(digits));
  if (n > 3) fail(text, "compute capability " + quoted(digits) + " is too long (major: 1 or 2 digits, minor: 1 digit)");
  if (digits.front() == '0') fail(text, "compute capability " + quoted(digits) + " has a leading zero");
  Arch arch;
  arch.text = std::string(text);
  arch.vendor = Vendor::nvidia;
  arch.target = std::string(text);
  arch.cc_major = std::stoi(std::string(digits.substr(0, n - 1)));
  arch.cc_minor = digits[n - 1] - '0';
  return arch;
}

}  // namespace

std::string_view to_string(Vendor vendor) noexcept {
  switch (vendor) {
    case Vendor::amd: return "amd";
    case Vendor::nvidia: return "nvidia";
  }
  return "?";
}

std::optional<bool> Arch::feature(std::string_view name) const {
  for (const auto& f : features)
    if (f.name == name) return f.enabled;
  return std::nullopt;
}

ArchParseError::ArchParseError(std::string text, std::string problem)
    : std::invalid_argument("malformed arch name " + quoted(text) + ": " + problem),
      text_(std::move(text)),
      problem_(std::move(problem)) {}

Arch parse_arch(std::string_view text) {
  if (text.empty()) fail(text, "the name is empty (expected e.g. \"gfx942:sramecc+:xnack-\" or \"sm_90\")");
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isspace(u) || u < 0x20 || u >= 0x7f)
      fail(text, "it holds whitespace or a non-printable character (trim the runtime's string first)");
  }
  for (char c : text)
    if (c >= 'A' && c <= 'Z') {
      std::string lower(text);
      for (auto& d : lower) d = static_cast<char>(std::tolower(static_cast<unsigned char>(d)));
      fail(text, "arch names are lowercase (did you mean " + quoted(lower) + "?)");
    }
  if (text.starts_with("gfx")) return parse_amd(text);
  if (text.starts_with("sm_")) return parse_nvidia(text);
  fail(text, "it names neither an AMD target (\"gfx...\", e.g. gfx942) nor an NVIDIA one (\"sm_XY\", e.g. sm_90)");
}

Arch arch_from_compute_capability(int major, int minor) {
  const std::string shown = std::to_string(major) + "." + std::to_string(minor);
  if (major <= 0 || major > 99 || minor < 0 || minor > 9)
    fail(shown, "compute capability needs a major in 1..99 and a minor in 0..9");
  return parse_arch("sm_" + std::to_string(major) + std::to_string(minor));
}

}  // namespace pmqa::dispatch
