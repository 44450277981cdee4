// The spellings of the model's enums, read from the model itself (its to_string and parse pair), so
// the Python side's name lists can be generated from, or tested against, the C++ model
// (python/tests/test_cases_names.py) without a third hand-written copy here.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "pmqa/model/case.hpp"
#include "pmqa/model/tolerance.hpp"

namespace pmqa::python {

// Every value of E whose spelling parses back to it, in enumerator order. The model's enums have a
// one-byte underlying type, so trying each byte finds them all; a value past the last one spells
// "?" (an error to parse) or another value's name (which parses to that other value), never itself.
template <typename E, typename ToString, typename Parse>
std::vector<std::string> enum_names(ToString to_string_fn, Parse parse_fn) {
  static_assert(std::is_same_v<std::underlying_type_t<E>, std::uint8_t>);
  std::vector<std::string> names;
  for (unsigned v = 0; v <= 0xFF; ++v) {
    const auto value = static_cast<E>(v);
    const std::string name(to_string_fn(value));
    try {
      if (parse_fn(name) == value) names.push_back(name);
    } catch (const std::exception&) {
      // not a spelling: past the last enumerator
    }
  }
  return names;
}

inline std::vector<std::string> contract_names() {
  return enum_names<Contract>([](Contract c) { return to_string(c); }, [](const std::string& s) { return parse_contract(s); });
}

inline std::vector<std::string> nan_rule_names() {
  return enum_names<NanRule>([](NanRule r) { return to_string(r); }, [](const std::string& s) { return parse_nan_rule(s); });
}

}  // namespace pmqa::python
