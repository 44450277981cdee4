// The numeric half of the arch matrix (issues 4 and 5): for every row whose decision is runnable,
// run the decision (kernels::run_decision: the decided path and kernel family, in the arch's fp8
// format and KV layout) on the host executor emulating the row's arch, and on the GPU when one is
// found (standing in for the other archs), and compare with the reference. The dispatch trace
// records what ran where.
#include <map>
#include <memory>

#include <gtest/gtest.h>

#include "pmqa/dispatch/dispatch.hpp"
#include "pmqa/fixtures/generate.hpp"
#include "pmqa/kernels/run_decision.hpp"
#include "pmqa/reference/compare.hpp"

namespace pmqa {
namespace {

// A small case in the row's shape and the decision's format and layout.
Case case_for(const dispatch::MatrixRow& row, const dispatch::Decision& d) {
  fixtures::CaseSpec s;
  s.name = "matrix-row-" + std::to_string(row.index);
  s.seed = 5000 + row.index;
  s.format = value_format_of(*d.fp8);
  s.layout = *d.layout;
  s.batch = 3;
  s.next_n = row.context.next_n;
  s.heads = row.context.heads;
  s.head_dim = 128;
  s.block_size = row.context.block_size;
  s.max_model_len = 2 * row.context.block_size + 40;
  s.context_lens = {static_cast<std::int32_t>(s.max_model_len), static_cast<std::int32_t>(row.context.block_size + 1), 1};
  s.specials = fixtures::SpecialCodes::finite;
  return fixtures::make_case(s);
}

// The reference fallback is the framework's eager op: the fp32 reference stands in for it.
OutputBuffer run_reference_fallback(const Case& c) { return reference_output(c); }

TEST(ArchMatrixNumeric, EveryRunnableRowMatchesTheReference) {
  const auto& table = dispatch::ArchTable::builtin();
  std::map<std::string, std::unique_ptr<kernels::Executor>> host;  // by target, emulating its device
  for (const auto& row : table.entries())
    host[row.target] = kernels::make_host_executor({.emulate = kernels::caps_from_arch(row, /*runs_sm90a_code=*/true)});
  const std::unique_ptr<kernels::Executor> gpu = kernels::find_gpu() ? kernels::make_gpu_executor() : nullptr;

  int rows_run = 0;
  dispatch::ScopedTraceRecorder trace;
  const dispatch::NumericHook hook = [&](const dispatch::MatrixRow& row, const dispatch::Decision& d) {
    const Case c = case_for(row, d);
    const Reference ref = compute_reference(c, {.precision = Precision::fp64});
    const std::string target = dispatch::parse_arch(row.arch).target;
    std::vector<kernels::Executor*> executors{host.at(target).get()};
    if (gpu) executors.push_back(gpu.get());
    for (auto* exec : executors) {
      OutputBuffer out;
      Tolerance tolerance = Tolerance::fp32();
      if (d.path == Path::reference_fallback) {
        out = run_reference_fallback(c);
        dispatch::Trace::global().note_executor(d.trace_id, exec->name() + " ran the fp32 reference");
      } else {
        // The host emulating the arch runs the decided kernel family or fails; the GPU stands in
        // for the archs it is not.
        const bool stand_in = exec->caps().target != target;
        auto run = kernels::run_decision(*exec, d, c, {.stand_in = stand_in});
        tolerance = kernels::tolerance_for(run);
        out = std::move(run.out);
      }
      const Report rep = compare(c, ref, out, {.judging = {.tolerance = tolerance}});
      if (!rep.passed()) return dispatch::NumericResult{false, exec->name() + ": " + rep.to_text()};
    }
    ++rows_run;
    return dispatch::NumericResult{true, ""};
  };
  const auto report = dispatch::check_matrix(dispatch::ArchMatrix::builtin(), dispatch::default_policy(), table, hook);
  EXPECT_TRUE(report.passed()) << report.failure_text();
  EXPECT_GT(rows_run, 50) << "the matrix should have many runnable rows";
  // What actually ran is on record: every runnable decision names the executor it ran on.
  int noted = 0;
  for (const auto& e : trace.entries()) {
    if (!e.decision.runnable()) continue;
    const auto now = dispatch::Trace::global().find(e.id);
    ASSERT_TRUE(now.has_value());
    EXPECT_TRUE(now->executor.has_value()) << now->describe();
    ++noted;
  }
  EXPECT_EQ(noted, rows_run);
  if (!gpu) std::printf("no GPU found: the numeric half ran on the host executor only\n");
}

}  // namespace
}  // namespace pmqa
