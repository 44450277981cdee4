// Comparison of a kernel's output with the reference, and the structured report (design.md,
// Conventions): every check fails hard, and a failure names the cells that failed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "pmqa/reference/case.hpp"
#include "pmqa/reference/output.hpp"
#include "pmqa/reference/reference.hpp"
#include "pmqa/reference/tolerance.hpp"

namespace pmqa {

struct CompareOptions {
  Contract contract = Contract::clean;
  Tolerance tolerance = Tolerance::fp32();
  int max_listed = 10;  // mismatches decoded in the report
};

enum class MismatchKind : std::uint8_t {
  value,        // both finite, |out - ref| > bound
  nan,          // NaN where the reference is finite, or finite/inf where it is NaN
  inf_pattern,  // -inf expected and something else found, or +-inf where a finite value is due
  unwritten,    // the sentinel survived in a cell the contract says must be written
};
std::string_view to_string(MismatchKind kind) noexcept;

// One failing cell, decoded back to where its key came from.
struct Mismatch {
  MismatchKind kind = MismatchKind::value;
  std::int64_t row = 0, col = 0;  // r = b*N + n, j
  std::int64_t b = 0, n = 0;
  std::int64_t valid_keys = 0;          // E_r
  std::int64_t logical_block = -1;      // j / block_size (for j < E_r)
  std::int64_t physical_block = -1;     // block_table[b][logical]
  std::int64_t token_in_block = -1;     // j % block_size
  std::int64_t offset_in_block = -1;    // byte offset of value (t, 0) in the block
  double got = 0, expected = 0, bound = 0;
};

struct Report {
  std::string case_description;  // describe(case)
  Contract contract = Contract::clean;
  std::string tolerance;

  std::int64_t cells_checked = 0;  // cells the contract compares
  std::int64_t value_mismatches = 0;
  std::int64_t nan_mismatches = 0;
  std::int64_t inf_pattern_errors = 0;
  std::int64_t unwritten = 0;
  std::int64_t guard_violations = 0;

  double max_abs_error = 0;    // over finite valid cells
  double max_rel_error = 0;    // |out - ref| / |ref| over finite valid cells with ref != 0
  double worst_bound_ratio = 0;  // max |out - ref| / bound (0/0 counts as 0)
  std::optional<double> calc_diff;  // DeepGEMM's metric over finite valid cells; none if no cell

  std::vector<Mismatch> first;  // up to max_listed, in (row, col) order
  std::string reproduce;        // one command that reproduces this case (set by the caller)

  std::int64_t failures() const noexcept {
    return value_mismatches + nan_mismatches + inf_pattern_errors + unwritten + guard_violations;
  }
  bool passed() const noexcept { return failures() == 0; }
  std::string to_text() const;
  nlohmann::json to_json() const;
};

// calc_diff(x, y) = 1 - 2*sum(x*y) / sum(x*x + y*y) in double; 0 when both are all zero.
// Empty inputs give std::nullopt: a metric over nothing must not read as a pass.
std::optional<double> calc_diff(const std::vector<double>& x, const std::vector<double>& y);

// Compares out (with guard cells) to ref (with magnitude) under the contract and tolerance.
Report compare(const Case& c, const Reference& ref, const OutputBuffer& out, const CompareOptions& options = {});

}  // namespace pmqa
