#include "pmqa/cases/verdict.hpp"

#include <cstring>
#include <stdexcept>

namespace pmqa::cases {
namespace {

std::optional<std::string> metadata(const CaseFile& f, const char* key) {
  const auto it = f.extra.find(key);
  if (it == f.extra.end()) return std::nullopt;
  return it->second;
}

}  // namespace

CompareOptions file_compare_options(const CaseFile& f, const std::string& source, const JudgeOverrides& o) {
  CompareOptions options;
  options.contract = o.contract.value_or(f.contract);
  if (o.tolerance) {
    options.tolerance = *o.tolerance;
  } else if (const auto name = metadata(f, "tolerance")) {
    try {
      options.tolerance = Tolerance::named(*name);
    } catch (const std::invalid_argument& e) {
      throw CaseFileError(source, "__metadata__.tolerance", e.what());
    }
  }
  if (o.nan) {
    options.nan = *o.nan;
  } else if (const auto rule = metadata(f, "nan")) {
    try {
      options.nan = parse_nan_rule(*rule);
    } catch (const std::invalid_argument& e) {
      throw CaseFileError(source, "__metadata__.nan", e.what());
    }
  }
  return options;
}

OutputBuffer file_output(const CaseFile& f, const std::string& source) {
  if (!f.logits)
    throw CaseFileError(source, "tensor logits",
                        "missing: the file holds no kernel output to verify (store it as logits, F32 [B*N, max_model_len])");
  OutputBuffer out(f.c.rows(), f.c.max_model_len, /*row_pad=*/0, /*guard=*/0);
  if (!f.logits->empty()) std::memcpy(out.data(), f.logits->data(), f.logits->size() * sizeof(float));
  return out;
}

Report judge_case_file(const CaseFile& f, const std::string& source, const JudgeOverrides& overrides, bool with_map) {
  const OutputBuffer out = file_output(f, source);
  CompareOptions options = file_compare_options(f, source, overrides);
  options.with_map = with_map;
  const Reference oracle =
      compute_reference(f.c, {.precision = Precision::fp64, .with_noise = true, .threads = overrides.threads});
  return compare(f.c, oracle, out, options);
}

}  // namespace pmqa::cases
