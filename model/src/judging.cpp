#include "pmqa/model/judging.hpp"

namespace pmqa {

std::string Judging::describe() const {
  return "contract " + std::string(to_string(contract)) + ", tolerance " + tolerance.name + ", NaN rule " +
         std::string(to_string(nan));
}

Judging resolve_judging(const JudgingOverrides& overrides, const JudgingMetadata& metadata) {
  Judging j;
  j.contract = overrides.contract.value_or(metadata.contract.value_or(j.contract));
  if (overrides.tolerance) {
    j.tolerance = *overrides.tolerance;
  } else if (metadata.tolerance) {
    try {
      j.tolerance = Tolerance::named(*metadata.tolerance);
    } catch (const std::invalid_argument& e) {
      throw JudgingError("tolerance", e.what());
    }
  }
  if (overrides.nan) {
    j.nan = *overrides.nan;
  } else if (metadata.nan) {
    try {
      j.nan = parse_nan_rule(*metadata.nan);
    } catch (const std::invalid_argument& e) {
      throw JudgingError("nan", e.what());
    }
  }
  return j;
}

}  // namespace pmqa
