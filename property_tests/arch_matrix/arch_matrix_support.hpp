// Shared pieces of the arch matrix suite: the injected policies of the regression replays.
#pragma once

#include <set>
#include <string>

#include "pmqa/dispatch/dispatch.hpp"

namespace pmqa::arch_matrix_test {

namespace pd = pmqa::dispatch;

// vLLM's guard before PR 42062: fused only on gfx942.
const pd::Policy& pre_fix_policy();
// Any arch the table does not know silently falls back to the reference (AITER's dtype-table anti-pattern).
const pd::Policy& unknown_arch_fallback_policy();
// The right path, but reading NORMAL where the cache is SHUFFLE.
const pd::Policy& normal_on_shuffle_policy();
// "Enable gfx1250": the guard edit that names gfx950 and gfx1250 and drops gfx942 (hard-coded version).
const pd::Policy& gfx1250_edit_drops_gfx942_policy();
// "Enable gfx1250" through a table edit that also flips gfx942's fp8 format to OCP (copy-paste).
const pd::Policy& gfx1250_edit_flips_gfx942_format_policy();
// Decides by the full gcnArchName instead of the target: a name with feature flags misses the guard.
const pd::Policy& full_name_guard_policy();

// Row indices of a report's failures.
std::set<std::size_t> failed_rows(const pd::MatrixReport& report);
// Row indices of the matrix whose row satisfies `pred`.
template <class Pred>
std::set<std::size_t> rows_where(const pd::ArchMatrix& m, Pred pred) {
  std::set<std::size_t> out;
  for (const auto& r : m.rows)
    if (pred(r)) out.insert(r.index);
  return out;
}
// The row's target, or "" when the name does not parse.
std::string target_of(const pd::MatrixRow& row);

}  // namespace pmqa::arch_matrix_test
