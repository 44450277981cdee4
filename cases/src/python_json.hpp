// JSON text as Python's json.dumps(value, indent=1, ensure_ascii=True, allow_nan=False) writes it, so a
// file Python's writer wrote before (the run record) keeps its bytes when C++ writes it: keys in the
// value's order, one space of indent per level, "," and ": " separators, every character outside
// printable ASCII escaped (\n and the other short forms, else \uXXXX, surrogate pairs past U+FFFF), and
// floats as Python's repr spells them (shortest round trip; exponent form below 1e-4 and from 1e16).
// A byte that is not UTF-8 comes out as \udcXX, as Python writes the surrogateescape'd character
// that stands for it.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace pmqa::cases {

// A non-finite float throws std::invalid_argument (allow_nan=False).
std::string python_json_dump(const nlohmann::ordered_json& value);

// Python's repr(float) of a finite double: "0.0", "7.0", "1e-05", "1.5e+16".
std::string python_float_repr(double x);

}  // namespace pmqa::cases
