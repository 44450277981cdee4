#include "pmqa/cases/verdict.hpp"

#include <cstring>
#include <stdexcept>

namespace pmqa::cases {
namespace {

std::optional<std::string_view> metadata(const CaseFile& f, const char* key) {
  const auto it = f.extra.find(key);
  if (it == f.extra.end()) return std::nullopt;
  return std::string_view(it->second);
}

}  // namespace

Judging file_judging(const CaseFile& f, const std::string& source, const JudgingOverrides& overrides) {
  try {
    return resolve_judging(overrides,
                           {.contract = f.contract, .tolerance = metadata(f, "tolerance"), .nan = metadata(f, "nan")});
  } catch (const JudgingError& e) {
    throw CaseFileError(source, "__metadata__." + e.field(), e.what());
  }
}

CompareOptions file_compare_options(const CaseFile& f, const std::string& source, const JudgeOverrides& o) {
  return {.judging = file_judging(f, source, o.judging)};
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
