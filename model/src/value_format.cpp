#include "pmqa/model/value_format.hpp"

#include <stdexcept>

namespace pmqa {

std::string_view to_string(ValueFormat format) noexcept {
  switch (format) {
    case ValueFormat::e4m3fn: return "e4m3fn";
    case ValueFormat::e4m3fnuz: return "e4m3fnuz";
    case ValueFormat::e2m1: return "e2m1";
  }
  return "?";
}

std::string_view short_name(ValueFormat format) noexcept {
  switch (format) {
    case ValueFormat::e4m3fn: return "fn";
    case ValueFormat::e4m3fnuz: return "fnuz";
    case ValueFormat::e2m1: return "fp4";
  }
  return "?";
}

ValueFormat parse_value_format(std::string_view text) {
  for (const ValueFormat f : {ValueFormat::e4m3fn, ValueFormat::e4m3fnuz, ValueFormat::e2m1})
    if (text == to_string(f)) return f;
  throw std::invalid_argument("unknown value format \"" + std::string(text) + "\" (expected e4m3fn, e4m3fnuz or e2m1)");
}

std::vector<std::string> value_format_names() {
  std::vector<std::string> names;
  for (const ValueFormat f : {ValueFormat::e4m3fn, ValueFormat::e4m3fnuz, ValueFormat::e2m1}) names.emplace_back(to_string(f));
  return names;
}

}  // namespace pmqa
