// How an output is judged: the output contract, the tolerance profile and the NaN rule, as one
// value. It is resolved once per output - from the flags that override it, a file's metadata, and
// the spec's defaults, in that order - and then carried whole to the comparison and the report, so
// no later step parses a name again or decides the settings a second time (issue 36).
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "pmqa/model/case.hpp"
#include "pmqa/model/tolerance.hpp"

namespace pmqa {

struct Judging {
  Contract contract = Contract::clean;       // what the output promises past E_r (spec §1.3)
  Tolerance tolerance = Tolerance::fp32();   // its accumulator's profile (spec §5)
  NanRule nan = NanRule::propagate;          // what it does with a NaN head term (spec §1.1)

  // Same contract, NaN rule and profile (a profile is its name: the named ones are fixed values).
  friend bool operator==(const Judging& a, const Judging& b) noexcept {
    return a.contract == b.contract && a.tolerance.name == b.tolerance.name && a.nan == b.nan;
  }
  // "contract clean, tolerance fp32, NaN rule propagate": what reports and messages print.
  std::string describe() const;
};

// The parts a caller forces (command-line flags, a runner's convention, a check that judges every
// subject under one profile), each already parsed; an absent part comes from the file or the default.
struct JudgingOverrides {
  std::optional<Contract> contract = std::nullopt;
  std::optional<Tolerance> tolerance = std::nullopt;
  std::optional<NanRule> nan = std::nullopt;
};

// What a file says about its judging. The contract is typed: case and result files require it and
// their readers parse it with the case. tolerance and nan are the optional metadata strings a
// runner writes from its convention, absent when the file has none.
struct JudgingMetadata {
  std::optional<Contract> contract = std::nullopt;
  std::optional<std::string_view> tolerance = std::nullopt;
  std::optional<std::string_view> nan = std::nullopt;
};

// A bad name in a file's metadata: field() is the metadata key ("tolerance" or "nan"), what() the
// problem alone ("unknown tolerance profile 'fp16' (expected ...)").
class JudgingError : public std::invalid_argument {
 public:
  JudgingError(std::string field, const std::string& problem)
      : std::invalid_argument(problem), field_(std::move(field)) {}
  const std::string& field() const noexcept { return field_; }

 private:
  std::string field_;
};

// The one resolution: each part from the override if given, else the file's metadata, else the
// default. A metadata name is parsed only when no override replaces it, and at most once; a bad
// one throws JudgingError naming its field.
Judging resolve_judging(const JudgingOverrides& overrides, const JudgingMetadata& metadata = {});

}  // namespace pmqa
