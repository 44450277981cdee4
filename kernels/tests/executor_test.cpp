// The kernels on the host executor, both wave sizes, on the quick suite's hand-picked cases, with
// the output contract checked cell by cell against the fp64 reference.
#include <link.h>

#include <cctype>
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

// A wave-64 host with fp8 MFMA in both formats (gfx942 has FNUZ, gfx950 OCP).
const DeviceCaps kMfmaHost = kernels::host_caps_for(KernelId::fused_mfma);

bool fits(KernelId kernel, const Case& c, const DeviceCaps& device) {
  for (const auto& f : kernels::kernel_fits(Path::fused, c, device))
    if (f.kernel == kernel) return f.fits();
  return false;
}

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
                           std::string name = checks::config_name(p.param);
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

// fused-mma's two kernels at wave 32, each instruction emulated on the host (mma.sync for a warp;
// wgmma for a warpgroup, from the swizzled shared-memory tiles): every quick case each takes.
class FusedMmaOnHost : public ::testing::TestWithParam<KernelId> {};

TEST_P(FusedMmaOnHost, EveryFittingCaseMatchesTheReference) {
  const auto exec = kernels::make_host_executor({.warp_size = 32});
  int ran = 0;
  std::map<std::string, int> copies;  // by key_copies
  for (const auto& sc : fixtures::suite("quick")) {
    const Case c = fixtures::make_case(sc.spec);
    if (!fits(GetParam(), c, exec->caps())) continue;
    const auto run = exec->run(Path::fused, c, {.kernel = GetParam()});
    ASSERT_EQ(run.kernel, GetParam()) << sc.name;
    ++ran;
    ++copies[run.key_copies];
    const Report rep = compare(c, compute_reference(c, {.precision = Precision::fp64}), run.out, {.judging = {.tolerance = kernels::tolerance_for(run)}});
    EXPECT_TRUE(rep.passed()) << sc.name << " (" << to_string(run.kernel) << ", " << run.key_copies << " on host-w32)\n"
                              << rep.to_text();
  }
  EXPECT_GE(ran, 5);
  // The wgmma kernel's two copy paths both ran (tensor-map copies where the cache allows them);
  // mma.sync reads keys by cp.async only.
  if (GetParam() == KernelId::fused_wgmma) {
    EXPECT_GE(copies["tensor-map"], 1);
    EXPECT_GE(copies["cp.async"], 1);
  } else {
    EXPECT_EQ(copies[""], ran);
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
    const auto run = exec->run(Path::fused, c, {.kernel = GetParam(), .launches = 3});
    EXPECT_EQ(run.kernel, GetParam());
    const bool wgmma = GetParam() == KernelId::fused_wgmma;
    EXPECT_EQ(run.key_copies, !wgmma ? "" : block_size == 64 ? "tensor-map" : "cp.async") << "block_size " << block_size;
    EXPECT_TRUE(run.deterministic()) << run.differing_cells << " cells differ, block_size " << block_size;
    const Report rep = compare(c, compute_reference(c, {.precision = Precision::fp64}), run.out, {.judging = {.tolerance = Tolerance::matrix_unit()}});
    EXPECT_TRUE(rep.passed()) << "block_size " << block_size << "\n" << rep.to_text();
  }
}

// fused-mma's work split past the first group of 128 context lengths (many_sequences_case.hpp);
// block 64 (the wgmma kernel's tensor-map copies) and 16 (cp.async).
TEST_P(FusedMmaOnHost, SharesFindTheirFirstChunkPastTheFirstGroup) {
  for (const int block_size : {64, 16}) {
    const Case c = test::many_sequences(block_size);
    const auto run = kernels::make_host_executor({.warp_size = 32})->run(Path::fused, c, {.kernel = GetParam()});
    ASSERT_EQ(run.kernel, GetParam());
    const Report rep = compare(c, compute_reference(c, {.precision = Precision::fp64}), run.out, {.judging = {.tolerance = Tolerance::matrix_unit()}});
    EXPECT_TRUE(rep.passed()) << "block_size " << block_size << " (" << to_string(run.kernel) << ", " << run.key_copies << ")\n"
                              << rep.to_text();
  }
}

// Which cases the wgmma kernel copies through the tensor map: the plain layout with whole 64-key
// boxes in a block; the rest by cp.async (and every other kernel reports none).
TEST(FusedMmaKeyCopies, TensorMapWhereTheCacheAllowsIt) {
  const auto w32 = kernels::make_host_executor({.warp_size = 32});
  auto copies = [&](int block_size, KvLayout layout, KernelId kernel) {
    fixtures::CaseSpec s;
    s.heads = 32;
    s.head_dim = 128;
    s.block_size = block_size;
    s.layout = layout;
    s.context_lens = {300};
    s.max_model_len = 320;
    const Case c = fixtures::make_case(s);
    const auto run = w32->run(Path::fused, c, {.kernel = kernel});
    const Report rep = compare(c, compute_reference(c, {.precision = Precision::fp64}), run.out, {.judging = {.tolerance = Tolerance::matrix_unit()}});
    EXPECT_TRUE(rep.passed()) << "block_size " << block_size << "\n" << rep.to_text();
    return run.key_copies;
  };
  EXPECT_EQ(copies(64, KvLayout::normal, KernelId::fused_wgmma), "tensor-map");
  EXPECT_EQ(copies(128, KvLayout::normal, KernelId::fused_wgmma), "tensor-map");
  EXPECT_EQ(copies(32, KvLayout::normal, KernelId::fused_wgmma), "cp.async");
  EXPECT_EQ(copies(64, KvLayout::shuffle, KernelId::fused_wgmma), "cp.async");
  EXPECT_EQ(copies(64, KvLayout::normal, KernelId::fused_mma_sync), "");
  fixtures::CaseSpec s;
  s.context_lens = {100};
  s.max_model_len = 128;
  EXPECT_EQ(kernels::make_host_executor({.warp_size = 64})->run(Path::fused, fixtures::make_case(s)).key_copies, "");
}

INSTANTIATE_TEST_SUITE_P(Instructions, FusedMmaOnHost, ::testing::Values(KernelId::fused_mma_sync, KernelId::fused_wgmma),
                         [](const auto& p) { return p.param == KernelId::fused_wgmma ? "wgmma" : "mma_sync"; });

// The AMD matrix-core kernel, its MFMA emulated on the host at wave 64 in both formats, on every
// quick case whose shape it takes.
TEST(FusedMfmaOnHost, EveryFittingCaseMatchesTheReference) {
  const auto exec = kernels::make_host_executor({.emulate = kMfmaHost});
  int ran = 0;
  for (const auto& sc : fixtures::suite("quick")) {
    const Case c = fixtures::make_case(sc.spec);
    if (!fits(KernelId::fused_mfma, c, exec->caps())) continue;
    const auto run = exec->run(Path::fused, c);  // the first fused kernel that fits
    ASSERT_EQ(run.kernel, KernelId::fused_mfma) << run.kernel_reason;
    ++ran;
    const Report rep = compare(c, compute_reference(c, {.precision = Precision::fp64}), run.out, {.judging = {.tolerance = kernels::tolerance_for(run)}});
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
  s.format = ValueFormat::e4m3fnuz;
  const Case c = fixtures::make_case(s);
  const auto exec = kernels::make_host_executor({.emulate = kMfmaHost, .schedule_seed = 0xC0FFEE});
  const auto run = exec->run(Path::fused, c, {.kernel = KernelId::fused_mfma, .launches = 3});
  EXPECT_TRUE(run.deterministic()) << run.differing_cells << " cells differ";
  const Report rep = compare(c, compute_reference(c, {.precision = Precision::fp64}), run.out, {.judging = {.tolerance = Tolerance::matrix_unit()}});
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
  EXPECT_THROW(kernels::make_host_executor()->run(Path::fused, c), kernels::KernelError);
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
    exec->run(Path::fused, fixtures::make_case(s));
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
