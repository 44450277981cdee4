// What the checks' units share: timing, short evidence, and cases prepared with their oracle.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "pmqa/checks/finding.hpp"
#include "pmqa/fixtures/generate.hpp"
#include "pmqa/reference/reference.hpp"

namespace pmqa::checks::detail {

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string first_lines(const std::string& text, int n);

Finding finding(std::string check, std::string source, std::string config, std::string unit);

// A case with its fp64 reference.
struct Prepared {
  Case c;
  Reference oracle;
};
std::shared_ptr<const Prepared> prepare(Case c);
// reuse: keep it for the next subject (every mutant of the gauntlet sees the same cases, so each
// reference is computed once).
std::shared_ptr<const Prepared> prepare(const fixtures::CaseSpec& spec, bool reuse);

}  // namespace pmqa::checks::detail
