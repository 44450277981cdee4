// run_decision: a dispatch decision carried out by the kernels on an executor, with what ran noted
// in the dispatch trace; refused, with the reason, where the executor cannot run it as decided.
#include <string>

#include <gtest/gtest.h>

#include "pmqa/dispatch/arch_table.hpp"
#include "pmqa/dispatch/trace.hpp"
#include "pmqa/fixtures/generate.hpp"
#include "pmqa/kernels/run_decision.hpp"
#include "pmqa/reference/compare.hpp"

namespace pmqa {
namespace {

using kernels::KernelError;

// A decode case in the decision's format and layout.
Case case_for(const dispatch::Decision& d) {
  fixtures::CaseSpec s;
  s.format = value_format_of(*d.fp8);
  s.layout = *d.layout;
  s.batch = 2;
  s.heads = 64;
  s.head_dim = 128;
  s.block_size = 64;
  s.context_lens = {200, 65};
  s.max_model_len = 256;
  return fixtures::make_case(s);
}

std::unique_ptr<kernels::Executor> host_as(std::string_view target) {
  return kernels::make_host_executor({.emulate = kernels::caps_from_arch(dispatch::ArchTable::builtin().at(target), true)});
}

TEST(RunDecision, RunsTheDecidedKernelAndNotesItInTheTrace) {
  dispatch::ScopedTraceRecorder trace;
  for (const char* arch : {"gfx942", "gfx950", "sm_90", "sm_100"}) {
    const auto d = dispatch::select(arch, {});
    ASSERT_EQ(d.path, Path::fused) << arch;
    const Case c = case_for(d);
    const auto exec = host_as(arch);
    const auto run = kernels::run_decision(*exec, d, c);
    EXPECT_EQ(family_name(run.kernel), d.kernel) << arch;
    const Report rep = compare(c, compute_reference(c, {.precision = Precision::fp64}), run.out, {.judging = {.tolerance = kernels::tolerance_for(run)}});
    EXPECT_TRUE(rep.passed()) << arch << "\n" << rep.to_text();
    const auto entry = dispatch::Trace::global().find(d.trace_id);
    ASSERT_TRUE(entry && entry->executor) << arch;
    EXPECT_EQ(*entry->executor, exec->name() + " ran " + std::string(to_string(run.kernel)));
  }
  // A fused decision for fused-mma: sm_90 runs its wgmma kernel, sm_89 (no wgmma) its mma.sync one.
  dispatch::Decision fused;
  fused.path = Path::fused;
  fused.fp8 = Fp8Format::e4m3fn;
  fused.layout = KvLayout::normal;
  fused.reason = "a fused-mma decision";
  fused.kernel = "fused-mma";
  EXPECT_EQ(kernels::run_decision(*host_as("sm_90"), fused, case_for(fused)).kernel, KernelId::fused_wgmma);
  EXPECT_EQ(kernels::run_decision(*host_as("sm_89"), fused, case_for(fused)).kernel, KernelId::fused_mma_sync);
}

TEST(RunDecision, AnExecutorWithoutTheDecidedKernelRefusesUnlessItStandsIn) {
  const auto d = dispatch::select("gfx942", {});
  const Case c = case_for(d);
  const auto plain = kernels::make_host_executor({.warp_size = 64});  // no MFMA
  try {
    kernels::run_decision(*plain, d, c);
    ADD_FAILURE() << "fused-mfma ran without MFMA";
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("fused-mfma cannot run on host-w64"), std::string::npos) << e.what();
  }
  const auto run = kernels::run_decision(*plain, d, c, {.stand_in = true});
  EXPECT_EQ(run.kernel, KernelId::fused_scalar);
  EXPECT_NE(run.kernel_reason.find("standing in"), std::string::npos) << run.kernel_reason;
}

TEST(RunDecision, RefusesWhatIsNoKernelPathAndCasesInAnotherFormat) {
  const auto exec = host_as("gfx942");
  const auto fallback = dispatch::select("gfx942", {.kernels_present = false});
  ASSERT_EQ(fallback.path, Path::reference_fallback);
  EXPECT_THROW(kernels::run_decision(*exec, fallback, case_for(fallback)), KernelError);
  const auto d = dispatch::select("gfx942", {});
  Case ocp = case_for(d);
  ocp.format = ValueFormat::e4m3fn;
  try {
    kernels::run_decision(*exec, d, ocp);
    ADD_FAILURE() << "an OCP case ran as gfx942's FNUZ decision";
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("the decision reads e4m3fnuz"), std::string::npos) << e.what();
  }
  kernels::DecisionOptions asked;
  asked.run.kernel = KernelId::fused_scalar;
  EXPECT_THROW(kernels::run_decision(*exec, d, case_for(d), asked), KernelError);
}

}  // namespace
}  // namespace pmqa
