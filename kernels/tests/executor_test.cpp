// The kernels on the host executor, both wave sizes, on the quick suite's hand-picked cases, with
// the output contract checked cell by cell against the fp64 reference.
#include <link.h>

#include <map>
#include <string>

#include <gtest/gtest.h>

#include "pmqa/checks/checks.hpp"
#include "pmqa/fixtures/suites.hpp"
#include "pmqa/kernels/executor.hpp"
#include "pmqa/reference/compare.hpp"
#include "many_sequences_case.hpp"

namespace pmqa {
namespace {

// checks::quick_suite, one configuration per test.
class QuickSuiteOnHost : public ::testing::TestWithParam<checks::KernelConfig> {};

TEST_P(QuickSuiteOnHost, EveryCaseMatchesTheReference) {
  for (const auto& f : checks::quick_suite(checks::host_factory(), {}, {GetParam()})) {
    EXPECT_FALSE(f.caught) << f.config << ": " << f.evidence;
    EXPECT_GE(f.cases_run, 20) << f.config;
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, QuickSuiteOnHost, ::testing::ValuesIn(checks::quick_suite_configs()),
                         [](const auto& p) {
                           return std::string(p.param.path == kernels::Path::fused ? "fused" : "two_stage") + "_w" +
                                  std::to_string(p.param.warp_size);
                         });

// The fp8 tensor-core variant at wave 32, each of its instructions emulated on the host (mma.sync
// for a warp; wgmma for a warpgroup, from the swizzled shared-memory tiles): every quick case whose
// shape (and, for wgmma, format) it takes.
class FusedMmaOnHost : public ::testing::TestWithParam<kernels::MmaInstruction> {};

TEST_P(FusedMmaOnHost, EveryFittingCaseMatchesTheReference) {
  const auto exec = kernels::make_host_executor({.warp_size = 32});
  int ran = 0;
  std::map<std::string, int> copies;  // by key_copies
  for (const auto& sc : fixtures::suite("quick")) {
    const Case c = fixtures::make_case(sc.spec);
    if (GetParam() == kernels::MmaInstruction::wgmma && c.fp8 != Fp8Format::e4m3fn) continue;  // OCP only
    const auto run = exec->run(kernels::Path::fused, c, {.mma_instruction = GetParam()});  // mma where it fits
    if (run.kernel != "fused-mma") continue;
    ++ran;
    ++copies[run.key_copies];
    EXPECT_EQ(run.instruction, kernels::to_string(GetParam())) << sc.name;
    const Report rep = compare(c, compute_reference(c, {.precision = Precision::fp64}), run.out);
    EXPECT_TRUE(rep.passed()) << sc.name << " (fused-mma " << run.instruction << ", " << run.key_copies << " on host-w32)\n"
                              << rep.to_text();
  }
  EXPECT_GE(ran, 5);
  // The wgmma kernel's two copy paths both ran (tensor-map copies where the cache allows them);
  // mma.sync has only cp.async.
  if (GetParam() == kernels::MmaInstruction::wgmma) {
    EXPECT_GE(copies["tensor-map"], 1);
    EXPECT_GE(copies["cp.async"], 1);
  } else {
    EXPECT_EQ(copies["cp.async"], ran);
  }
}

// The chunk pipeline reuses shared-memory stages: with the host's copies happening at once, a
// missing barrier would let one thread overwrite a stage another still reads. Shuffled schedules
// expose that as run-to-run differences.
// Block size 16 (cp.async copies) and 64 (the wgmma kernel's tensor-map copies).
TEST_P(FusedMmaOnHost, ShuffledSchedulesGiveTheSameBits) {
  for (const int block_size : {16, 64}) {
    fixtures::CaseSpec s;
    s.batch = 2;
    s.next_n = 2;
    s.heads = 64;
    s.head_dim = 128;
    s.block_size = block_size;
    s.max_model_len = 1100;
    s.context_lens = {1100, 700};
    const Case c = fixtures::make_case(s);
    const auto exec = kernels::make_host_executor({.warp_size = 32, .schedule_seed = 0xC0FFEE});
    const auto run = exec->run(kernels::Path::fused, c,
                               {.variant = kernels::FusedVariant::mma, .mma_instruction = GetParam(), .launches = 3});
    EXPECT_EQ(run.instruction, kernels::to_string(GetParam()));
    const bool tma = GetParam() == kernels::MmaInstruction::wgmma && block_size == 64;
    EXPECT_EQ(run.key_copies, tma ? "tensor-map" : "cp.async") << "block_size " << block_size;
    EXPECT_TRUE(run.deterministic()) << run.differing_cells << " cells differ, block_size " << block_size;
    const Report rep = compare(c, compute_reference(c, {.precision = Precision::fp64}), run.out, {.tolerance = Tolerance::matrix_unit()});
    EXPECT_TRUE(rep.passed()) << "block_size " << block_size << "\n" << rep.to_text();
  }
}

// fused-mma's work split past the first group of 128 context lengths (many_sequences_case.hpp);
// block 64 (the wgmma kernel's tensor-map copies) and 16 (cp.async).
TEST_P(FusedMmaOnHost, SharesFindTheirFirstChunkPastTheFirstGroup) {
  for (const int block_size : {64, 16}) {
    const Case c = test::many_sequences(block_size);
    const auto run = kernels::make_host_executor({.warp_size = 32})
                         ->run(kernels::Path::fused, c, {.variant = kernels::FusedVariant::mma, .mma_instruction = GetParam()});
    ASSERT_EQ(run.kernel, "fused-mma");
    const Report rep = compare(c, compute_reference(c, {.precision = Precision::fp64}), run.out);
    EXPECT_TRUE(rep.passed()) << "block_size " << block_size << " (" << run.instruction << ", " << run.key_copies << ")\n"
                              << rep.to_text();
  }
}

// Which cases the wgmma kernel copies through the tensor map: the plain layout with whole 64-key
// boxes in a block; the rest by cp.async (and every other kernel reports none or cp.async).
TEST(FusedMmaKeyCopies, TensorMapWhereTheCacheAllowsIt) {
  const auto w32 = kernels::make_host_executor({.warp_size = 32});
  auto copies = [&](int block_size, KvLayout layout, kernels::MmaInstruction instruction) {
    fixtures::CaseSpec s;
    s.heads = 32;
    s.head_dim = 128;
    s.block_size = block_size;
    s.layout = layout;
    s.context_lens = {300};
    s.max_model_len = 320;
    const Case c = fixtures::make_case(s);
    const auto run = w32->run(kernels::Path::fused, c, {.mma_instruction = instruction});
    const Report rep = compare(c, compute_reference(c, {.precision = Precision::fp64}), run.out);
    EXPECT_TRUE(rep.passed()) << "block_size " << block_size << "\n" << rep.to_text();
    return run.key_copies;
  };
  EXPECT_EQ(copies(64, KvLayout::normal, kernels::MmaInstruction::wgmma), "tensor-map");
  EXPECT_EQ(copies(128, KvLayout::normal, kernels::MmaInstruction::wgmma), "tensor-map");
  EXPECT_EQ(copies(32, KvLayout::normal, kernels::MmaInstruction::wgmma), "cp.async");
  EXPECT_EQ(copies(64, KvLayout::shuffle, kernels::MmaInstruction::wgmma), "cp.async");
  EXPECT_EQ(copies(64, KvLayout::normal, kernels::MmaInstruction::mma_sync), "cp.async");
  fixtures::CaseSpec s;
  s.context_lens = {100};
  s.max_model_len = 128;
  EXPECT_EQ(kernels::make_host_executor({.warp_size = 64})->run(kernels::Path::fused, fixtures::make_case(s)).key_copies, "");
}

INSTANTIATE_TEST_SUITE_P(Instructions, FusedMmaOnHost,
                         ::testing::Values(kernels::MmaInstruction::mma_sync, kernels::MmaInstruction::wgmma),
                         [](const auto& p) { return p.param == kernels::MmaInstruction::wgmma ? "wgmma" : "mma_sync"; });

// `automatic` takes wgmma where it can: OCP cases; FNUZ ones keep mma.sync. Asking for wgmma where
// it cannot run is an error, not a silent fallback.
TEST(FusedMmaInstruction, AutomaticPicksWgmmaForOcpOnly) {
  fixtures::CaseSpec s;
  s.heads = 64;
  s.head_dim = 128;
  s.context_lens = {100};
  s.max_model_len = 128;
  const auto w32 = kernels::make_host_executor({.warp_size = 32});
  const auto ocp = w32->run(kernels::Path::fused, fixtures::make_case(s));
  EXPECT_EQ(ocp.kernel, "fused-mma");
  EXPECT_EQ(ocp.instruction, "wgmma");
  s.fp8 = Fp8Format::e4m3fnuz;
  const Case fnuz = fixtures::make_case(s);
  EXPECT_EQ(w32->run(kernels::Path::fused, fnuz).instruction, "mma.sync");
  try {
    w32->run(kernels::Path::fused, fnuz, {.mma_instruction = kernels::MmaInstruction::wgmma});
    ADD_FAILURE() << "wgmma on FNUZ data";
  } catch (const kernels::KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("OCP"), std::string::npos) << e.what();
  }
  const auto w64 = kernels::make_host_executor({.warp_size = 64});
  EXPECT_EQ(w64->run(kernels::Path::fused, fixtures::make_case(s)).instruction, "");  // the portable kernel
  EXPECT_THROW(w64->run(kernels::Path::fused, fixtures::make_case(s),
                        {.variant = kernels::FusedVariant::mma, .mma_instruction = kernels::MmaInstruction::wgmma}),
               kernels::KernelError);
  EXPECT_EQ(kernels::parse_mma_instruction("mma.sync"), kernels::MmaInstruction::mma_sync);
  EXPECT_EQ(kernels::parse_mma_instruction("wgmma"), kernels::MmaInstruction::wgmma);
  EXPECT_THROW(kernels::parse_mma_instruction("hmma"), std::invalid_argument);
}

TEST(FusedMmaOnHost, VariantChoiceIsReported) {
  fixtures::CaseSpec s;
  s.heads = 8;
  s.context_lens = {20};
  const Case c = fixtures::make_case(s);
  const auto w32 = kernels::make_host_executor({.warp_size = 32});
  const auto run = w32->run(kernels::Path::fused, c);
  EXPECT_EQ(run.kernel, "fused-scalar");
  EXPECT_NE(run.kernel_reason.find("head_dim 128"), std::string::npos) << run.kernel_reason;
  EXPECT_THROW(w32->run(kernels::Path::fused, c, {.variant = kernels::FusedVariant::mma}), kernels::KernelError);
  const auto w64 = kernels::make_host_executor({.warp_size = 64});
  EXPECT_EQ(w64->run(kernels::Path::fused, c).kernel, "fused-scalar");
  EXPECT_THROW(w64->run(kernels::Path::fused, c, {.variant = kernels::FusedVariant::mma}), kernels::KernelError);
  EXPECT_THROW(w64->run(kernels::Path::fused, c, {.variant = kernels::FusedVariant::mfma}), kernels::KernelError);
  try {
    w32->run(kernels::Path::fused, c, {.variant = kernels::FusedVariant::mfma});
    ADD_FAILURE() << "fused-mfma at wave 32";
  } catch (const kernels::KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("no fp8 MFMA"), std::string::npos) << e.what();
  }
}

// The AMD matrix-core variant, its MFMA emulated on the host at wave 64, on every quick case whose
// shape it takes (the variant is asked for: at wave 64 `automatic` keeps the portable kernel).
TEST(FusedMfmaOnHost, EveryFittingCaseMatchesTheReference) {
  const auto exec = kernels::make_host_executor({.warp_size = 64});
  int ran = 0;
  for (const auto& sc : fixtures::suite("quick")) {
    const Case c = fixtures::make_case(sc.spec);
    kernels::RunResult run;
    try {
      run = exec->run(kernels::Path::fused, c, {.variant = kernels::FusedVariant::mfma});
    } catch (const kernels::KernelError&) {
      continue;  // a shape it does not take
    }
    ASSERT_EQ(run.kernel, "fused-mfma");
    ++ran;
    const Report rep = compare(c, compute_reference(c, {.precision = Precision::fp64}), run.out, {.tolerance = kernels::tolerance_for(run)});
    EXPECT_TRUE(rep.passed()) << sc.name << " (fused-mfma on host-w64)\n" << rep.to_text();
  }
  EXPECT_GE(ran, 6);
}

TEST(FusedMfmaOnHost, ShuffledSchedulesGiveTheSameBits) {
  fixtures::CaseSpec s;
  s.batch = 2;
  s.next_n = 2;
  s.heads = 64;
  s.head_dim = 128;
  s.block_size = 16;
  s.max_model_len = 1100;
  s.context_lens = {1100, 700};
  s.fp8 = Fp8Format::e4m3fnuz;
  const Case c = fixtures::make_case(s);
  const auto exec = kernels::make_host_executor({.warp_size = 64, .schedule_seed = 0xC0FFEE});
  const auto run = exec->run(kernels::Path::fused, c, {.variant = kernels::FusedVariant::mfma, .launches = 3});
  EXPECT_TRUE(run.deterministic()) << run.differing_cells << " cells differ";
  const Report rep = compare(c, compute_reference(c, {.precision = Precision::fp64}), run.out, {.tolerance = Tolerance::matrix_unit()});
  EXPECT_TRUE(rep.passed()) << rep.to_text();
}

// Kernel shared memory must not live in thread-local storage: static TLS is allocated in every
// thread of the process (a user's std::threads too, at 8 MB of stack each), and __shared__ as
// static thread_local over all kernel instantiations once passed 8 MB and crashed Eigen in the
// reference's worker threads. PMQA_SHARED keeps it per worker instead.
TEST(HostExecutor, KernelsAddNoThreadLocalStorage) {
  std::size_t tls = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        for (int i = 0; i < info->dlpi_phnum; ++i)
          if (info->dlpi_phdr[i].p_type == PT_TLS) *static_cast<std::size_t*>(data) += info->dlpi_phdr[i].p_memsz;
        return 0;
      },
      &tls);
  EXPECT_LT(tls, std::size_t{256} << 10) << tls << " bytes of static TLS per thread";
}

TEST(HostExecutor, UnsupportedHeadDimIsAnError) {
  fixtures::CaseSpec s;
  s.head_dim = 96;
  s.context_lens = {10};
  const Case c = fixtures::make_case(s);
  EXPECT_THROW(kernels::make_host_executor()->run(kernels::Path::fused, c), kernels::KernelError);
}

// The kernels number a launch's chunks and -inf pieces in 32 bits, exact below 2^36 output cells
// (256 GiB of fp32, past any GPU's memory): a case at the bound is refused, with the reason,
// before anything is allocated.
TEST(HostExecutor, OutputsOf2To36CellsAreAnError) {
  fixtures::CaseSpec s;
  s.context_lens = {10};
  s.max_model_len = std::int64_t{1} << 36;
  const auto exec = kernels::make_host_executor();
  try {
    exec->run(kernels::Path::fused, fixtures::make_case(s));
    ADD_FAILURE() << "a launch of 2^36 output cells ran";
  } catch (const kernels::KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("2^36"), std::string::npos) << e.what();
  }
}

TEST(HostExecutor, RelaunchesAreBitwiseIdentical) {
  const checks::Finding f = checks::relaunch(checks::host_factory());
  EXPECT_FALSE(f.caught) << f.evidence;
}

}  // namespace
}  // namespace pmqa
