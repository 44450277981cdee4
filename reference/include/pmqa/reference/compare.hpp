// Comparison of a kernel's output with the reference, and the structured report (design.md,
// Conventions): every check fails hard, and a failure names the cells that failed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "pmqa/model/case.hpp"
#include "pmqa/model/judging.hpp"
#include "pmqa/model/output.hpp"
#include "pmqa/reference/reference.hpp"
#include "pmqa/model/tolerance.hpp"
#include "pmqa/reference/noise.hpp"

namespace pmqa {

struct CompareOptions {
  Judging judging{};    // contract, tolerance profile and the NaN behaviour the kernel is allowed (spec §1.1)
  int max_listed = 10;  // mismatches (and regions) decoded in the report
  bool with_map = false;  // also fill Report::map
};

// Where a comparison's errors sit, one cell per (row, logical block), so one wrong page or one
// wrong row shows at a glance (pmqa verify --map draws it).
struct ErrorMap {
  enum Flag : std::uint8_t {
    element = 1,      // a cell broke the element gate
    block_gate = 2,   // the block's rms broke the block gate
    unwritten = 4,    // a cell still held the sentinel
    inf_pattern = 8,  // -inf where a logit was due, or anything but -inf where -inf was
    nan = 16,         // a NaN mismatch
    bias_gate = 32,   // the block's signed mean broke the bias gate
  };
  enum RowFlag : std::uint8_t {
    row_gate = 1,     // the row's rms broke the row gate
    guard = 2,        // a guard cell after the row was written
    row_bias = 4,     // the row's signed mean broke the bias gate
  };
  std::int64_t rows = 0;
  std::int64_t blocks = 0;               // ceil(max_model_len / block_size)
  std::int64_t block_size = 1;
  std::vector<float> worst;              // [rows * blocks]: max err / element limit over the block's compared cells
  std::vector<std::uint8_t> flags;       // [rows * blocks]: Flag bits
  std::vector<std::uint8_t> compared;    // [rows * blocks]: 1 where the block holds a compared valid cell
  std::vector<std::uint8_t> row_flags;   // [rows]: RowFlag bits
  bool global_gate = false;              // the whole output's rms broke the global gate
  bool global_bias = false;              // the whole output's signed mean broke the bias gate
  bool guard_outside_rows = false;       // a guard cell before the first or after the last row was written

  std::int64_t at(std::int64_t r, std::int64_t block) const noexcept { return r * blocks + block; }
  // A text picture at most `width` columns by `height` lines (larger maps are pooled, keeping the
  // worst): ' ' nothing compared, '.' under 0.1 of the limit, 'o' under the limit, 'X' a cell over
  // the element limit, 'b' the block gate, 'B' the block's bias gate, 'U' unwritten, 'I' -inf
  // pattern, 'N' NaN; after each line 'R' marks a broken row gate, 'B' the row's bias gate and 'G'
  // a written guard cell.
  std::string text(int width = 64, int height = 24) const;
};

enum class MismatchKind : std::uint8_t {
  value,        // both finite, |out - ref| > the element gate's limit
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

// A region (a (row, logical block), a row, or the whole output) whose errors broke a gate: the
// block, row or global gate (rms(err / sigma) over its compared cells above region_limit), or the
// bias gate (a signed mean above bias_limit; noise.hpp).
struct RegionMismatch {
  Gate gate = Gate::block;           // block, row, global or bias
  Gate over = Gate::block;           // the region: block, row or global (for the rms gates, = gate)
  std::int64_t row = -1;             // -1 for the whole output
  std::int64_t b = -1, n = -1;
  std::int64_t logical_block = -1;   // a block only
  std::int64_t physical_block = -1;  // a block only
  std::int64_t cells = 0;
  double rms = 0, limit = 0;         // rms(err / sigma) over the region; the broken gate's limit
  BiasKind bias_kind = BiasKind::scale;  // bias gate: which mean broke it (the one further over)
  double bias = 0;                   // bias gate: that mean, signed (bias_sign says what it means)
};

// One gate over the whole output: its worst statistic over its limit, and how many cells (element
// gate) or regions (the others) broke it.
struct GateSummary {
  double worst = 0;
  std::int64_t failing = 0;
};

// The bias gate's means over the whole output, signed, whether or not a gate broke (a correct
// matrix-unit kernel shows its own small negative scale mean here), and the signs of the failing
// regions.
struct BiasSummary {
  double offset = 0;  // mean err / sigma over every compared valid cell
  double scale = 0;   // mean err / sigma x sign(ref)
  double limit = 0;   // bias_limit over those cells
  std::int64_t cells = 0;
  // The signs of the failing regions (each region's mean further over its limit).
  bool too_large = false, too_small = false, above = false, below = false;
  std::string signs() const;  // "magnitude too small", "above the reference, magnitude too large", ... or ""
};

// What the output did in the cells that hold a NaN head term (spec §1.1): kept the NaN
// (propagate), held the relu-clamp logit within the element gate (relu-clamp), or neither.
struct NanBehaviour {
  std::int64_t cells = 0;  // valid cells with a NaN head term
  std::int64_t propagated = 0, clamped = 0, other = 0;
  std::string describe() const;  // "no NaN term", "propagate", "relu-clamp" or "mixed (...)"
};

struct Report {
  std::string case_description;  // describe(case)
  Judging judging;  // what the output was judged under (the reproduce line is built from it)

  std::int64_t cells_checked = 0;  // cells the contract compares
  std::int64_t value_mismatches = 0;
  std::int64_t nan_mismatches = 0;
  std::int64_t inf_pattern_errors = 0;
  std::int64_t unwritten = 0;
  std::int64_t guard_violations = 0;

  double max_abs_error = 0;    // over finite valid cells
  double max_rel_error = 0;    // |out - ref| / |ref| over finite valid cells with ref != 0
  double worst_bound_ratio = 0;  // the element gate: max |out - ref| / limit (0/0 counts as 0)
  GateSummary block, row, global;  // the region gates (value_mismatches counts the element gate's cells)
  GateSummary bias;                // over every block, row and the whole output, both means
  BiasSummary means;               // the whole output's signed means and the failing regions' signs
  NanBehaviour nan_seen;
  std::optional<double> calc_diff;  // DeepGEMM's metric over finite valid cells; none if no cell

  std::vector<Mismatch> first;           // up to max_listed, in (row, col) order
  std::vector<RegionMismatch> regions;   // blocks and rows in row order (up to max_listed), then the whole output's
  std::optional<ErrorMap> map;           // with CompareOptions::with_map
  std::string reproduce;                 // one command that reproduces this case (set by the caller)

  std::int64_t failing_cells() const noexcept {
    return value_mismatches + nan_mismatches + inf_pattern_errors + unwritten + guard_violations;
  }
  std::int64_t failing_regions() const noexcept {
    return block.failing + row.failing + global.failing + bias.failing;
  }
  std::int64_t failures() const noexcept { return failing_cells() + failing_regions(); }
  bool passed() const noexcept { return failures() == 0; }
  // The gates a failing output broke, in the order element, block, row, global, bias (with the
  // bias's sign; the cell checks -inf pattern, NaN, unwritten and guard are named too):
  // "element, block", "bias (magnitude too small)" or "-inf pattern".
  std::string broken() const;
  std::string to_text() const;
  nlohmann::json to_json() const;
};

// calc_diff(x, y) = 1 - 2*sum(x*y) / sum(x*x + y*y) in double; 0 when both are all zero.
// Empty inputs give std::nullopt: a metric over nothing must not read as a pass.
std::optional<double> calc_diff(const std::vector<double>& x, const std::vector<double>& y);

// The element gate's limit at valid cell (r, j): what compare() allows there.
double element_limit(const Case& c, const Reference& ref, const Tolerance& tolerance, std::int64_t r, std::int64_t j);

// Compares out (with guard cells) to ref (with its noise scales) under the contract, tolerance and NaN rule.
Report compare(const Case& c, const Reference& ref, const OutputBuffer& out, const CompareOptions& options = {});

}  // namespace pmqa
