#include "pmqa/model/fp8_format.hpp"

#include <stdexcept>
#include <string>

namespace pmqa {

std::string_view to_string(Fp8Format format) noexcept {
  switch (format) {
    case Fp8Format::e4m3fn: return "e4m3fn";
    case Fp8Format::e4m3fnuz: return "e4m3fnuz";
  }
  return "?";
}

std::string_view short_name(Fp8Format format) noexcept {
  switch (format) {
    case Fp8Format::e4m3fn: return "fn";
    case Fp8Format::e4m3fnuz: return "fnuz";
  }
  return "?";
}

std::string_view to_string(Fp8Overflow overflow) noexcept {
  return overflow == Fp8Overflow::saturate ? "saturate" : "nan";
}

Fp8Format parse_fp8_format(std::string_view text) {
  if (text == "e4m3fn") return Fp8Format::e4m3fn;
  if (text == "e4m3fnuz") return Fp8Format::e4m3fnuz;
  throw std::invalid_argument("unknown fp8 format \"" + std::string(text) + "\" (expected e4m3fn or e4m3fnuz)");
}

std::vector<std::string> fp8_format_names() {
  std::vector<std::string> names;
  for (const Fp8Format f : {Fp8Format::e4m3fn, Fp8Format::e4m3fnuz}) names.emplace_back(to_string(f));
  return names;
}

}  // namespace pmqa
