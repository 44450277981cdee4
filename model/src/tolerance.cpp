#include "pmqa/model/tolerance.hpp"

#include <stdexcept>

namespace pmqa {

std::string_view to_string(NanRule rule) noexcept {
  switch (rule) {
    case NanRule::propagate: return "propagate";
    case NanRule::relu_clamp: return "relu-clamp";
  }
  return "?";
}

NanRule parse_nan_rule(std::string_view text) {
  if (text == "propagate") return NanRule::propagate;
  if (text == "relu-clamp") return NanRule::relu_clamp;
  throw std::invalid_argument("unknown NaN rule '" + std::string(text) + "' (expected propagate or relu-clamp)");
}

std::vector<std::string> nan_rule_names() {
  std::vector<std::string> names;
  for (const NanRule r : {NanRule::propagate, NanRule::relu_clamp}) names.emplace_back(to_string(r));
  return names;
}

Tolerance Tolerance::fp32() { return {}; }

Tolerance Tolerance::matrix_unit() {
  Tolerance t;
  t.name = "matrix-unit";
  t.unit_d = 0x1p-13;  // ~14 significant bits kept inside the matrix unit's accumulation
  t.bias_allowed = 0.25;  // the H200's fp8 tensor cores shrink |logit| by up to 0.027 sigma (tolerance.hpp)
  return t;
}

Tolerance Tolerance::bf16_output() {
  Tolerance t;
  t.name = "bf16-output";
  t.unit_terms = 0x1p-8;  // bf16 keeps 8 significant bits: round to nearest errs by at most 2^-8
  t.unit_out = 0x1p-8;
  return t;
}

Tolerance Tolerance::matrix_unit_bf16() {
  Tolerance t = bf16_output();
  t.name = "matrix-unit-bf16";
  t.unit_d = matrix_unit().unit_d;
  // bf16's rounding dominates sigma: the tensor cores' bias is under 0.01 sigma here (tolerance.hpp)
  return t;
}

std::vector<std::string> Tolerance::names() { return {"fp32", "matrix-unit", "bf16-output", "matrix-unit-bf16"}; }

Tolerance Tolerance::named(std::string_view name) {
  if (name == "fp32") return fp32();
  if (name == "matrix-unit") return matrix_unit();
  if (name == "bf16-output") return bf16_output();
  if (name == "matrix-unit-bf16") return matrix_unit_bf16();
  throw std::invalid_argument("unknown tolerance profile '" + std::string(name) +
                              "' (expected fp32, matrix-unit, bf16-output or matrix-unit-bf16)");
}

JudgingProfile profile_for_logits(std::string_view recorded, std::string_view logits_dtype,
                                  std::optional<bool> tensor_cores) {
  const bool low_dtype = logits_dtype == "bfloat16" || logits_dtype == "float16";
  const bool matrix_unit = tensor_cores ? *tensor_cores : recorded == "matrix-unit" || recorded == "matrix-unit-bf16";
  const bool low = low_dtype || recorded == "bf16-output" || recorded == "matrix-unit-bf16";
  JudgingProfile out{matrix_unit ? (low ? "matrix-unit-bf16" : "matrix-unit") : (low ? "bf16-output" : "fp32"), ""};
  std::vector<std::string> reasons;
  if (low_dtype) reasons.push_back("the logits are " + std::string(logits_dtype));
  if (tensor_cores) reasons.push_back(std::string("tensor_cores=") + (*tensor_cores ? "True" : "False"));
  if (recorded != "fp32" && !tensor_cores) reasons.push_back("the case file records " + std::string(recorded));
  for (const auto& r : reasons) out.why += (out.why.empty() ? "" : ", ") + r;
  if (out.why.empty()) out.why = "the default";
  return out;
}

}  // namespace pmqa
