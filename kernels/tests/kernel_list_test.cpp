// The kernel list: a run takes the first kernel of the path that fits the case and the device, or
// the one asked for; each kernel's tolerance profile and fit come from its own spec; and every arch
// table row names the fused kernel its capabilities select.
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "pmqa/dispatch/arch_table.hpp"
#include "pmqa/fixtures/generate.hpp"
#include "pmqa/kernels/executor.hpp"

namespace pmqa {
namespace {

using kernels::KernelError;

Case decode_case(Fp8Format fp8, std::int64_t head_dim = 128, std::int64_t heads = 64) {
  fixtures::CaseSpec s;
  s.format = value_format_of(fp8);
  s.heads = heads;
  s.head_dim = head_dim;
  s.context_lens = {100};
  s.max_model_len = 128;
  return fixtures::make_case(s);
}

// The message of the KernelError f throws ("" when it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const KernelError& e) {
    return e.what();
  }
  return "";
}

TEST(KernelList, TheFirstKernelThatFitsRuns) {
  const auto w32 = kernels::make_host_executor({.warp_size = 32});
  const auto ocp = w32->run(Path::fused, decode_case(Fp8Format::e4m3fn));
  EXPECT_EQ(ocp.kernel, KernelId::fused_wgmma);
  EXPECT_EQ(ocp.kernel_reason, "the first of the path's kernels, and it fits");
  // wgmma takes OCP only: FNUZ falls to mma.sync, and the reason says why.
  const auto fnuz = w32->run(Path::fused, decode_case(Fp8Format::e4m3fnuz));
  EXPECT_EQ(fnuz.kernel, KernelId::fused_mma_sync);
  EXPECT_NE(fnuz.kernel_reason.find("fused-mma/wgmma does not: wgmma takes OCP"), std::string::npos) << fnuz.kernel_reason;
  // A shape no matrix-unit kernel takes falls to the portable one.
  const auto small = w32->run(Path::fused, decode_case(Fp8Format::e4m3fn, 64, 8));
  EXPECT_EQ(small.kernel, KernelId::fused_scalar);
  EXPECT_NE(small.kernel_reason.find("head_dim 128"), std::string::npos) << small.kernel_reason;
  // Wave 64 without matrix units, and with the MFMA of both formats.
  EXPECT_EQ(kernels::make_host_executor({.warp_size = 64})->run(Path::fused, decode_case(Fp8Format::e4m3fn)).kernel,
            KernelId::fused_scalar);
  EXPECT_EQ(kernels::make_host_executor({.emulate = kernels::host_caps_for(KernelId::fused_mfma)})->run(Path::fused, decode_case(Fp8Format::e4m3fnuz)).kernel,
            KernelId::fused_mfma);
  EXPECT_EQ(w32->run(Path::two_stage, decode_case(Fp8Format::e4m3fn)).kernel, KernelId::two_stage);
}

TEST(KernelList, AKernelAskedForRunsOrSaysWhyNot) {
  const auto w32 = kernels::make_host_executor({.warp_size = 32});
  const Case fnuz = decode_case(Fp8Format::e4m3fnuz);
  EXPECT_EQ(w32->run(Path::fused, fnuz, {.kernel = KernelId::fused_scalar}).kernel, KernelId::fused_scalar);
  EXPECT_NE(error_of([&] { w32->run(Path::fused, fnuz, {.kernel = KernelId::fused_wgmma}); }).find("OCP"), std::string::npos);
  EXPECT_NE(error_of([&] { w32->run(Path::fused, fnuz, {.kernel = KernelId::fused_mfma}); }).find("no fp8 MFMA"), std::string::npos);
  const auto w64 = kernels::make_host_executor({.warp_size = 64});
  EXPECT_NE(error_of([&] { w64->run(Path::fused, fnuz, {.kernel = KernelId::fused_mma_sync}); }).find("no fp8 mma.sync"),
            std::string::npos);
  EXPECT_NE(error_of([&] { w64->run(Path::fused, fnuz, {.kernel = KernelId::two_stage}); }).find("serves the two-stage path"),
            std::string::npos);
  EXPECT_NE(error_of([&] { w64->run(Path::reference_fallback, fnuz); }).find("not reference-fallback"), std::string::npos);
}

// One list holds every kernel, once, under the path its name says it serves.
TEST(KernelList, EveryKernelIsListedOnceUnderItsPath) {
  const Case c = decode_case(Fp8Format::e4m3fn);
  std::multiset<KernelId> listed;
  for (const Path path : {Path::fused, Path::two_stage})
    for (const auto& f : kernels::kernel_fits(path, c, kernels::host_caps(32))) {
      listed.insert(f.kernel);
      EXPECT_EQ(path_of(f.kernel), path) << to_string(f.kernel);
    }
  for (const KernelId id : kAllKernels) EXPECT_EQ(listed.count(id), 1u) << to_string(id);
  EXPECT_EQ(listed.size(), kAllKernels.size());
}

TEST(KernelList, ToleranceIsTheKernelsOwn) {
  for (const KernelId id : {KernelId::fused_wgmma, KernelId::fused_mma_sync, KernelId::fused_mfma})
    EXPECT_EQ(kernels::tolerance_for(id).name, Tolerance::matrix_unit().name) << to_string(id);
  for (const KernelId id : {KernelId::fused_scalar, KernelId::two_stage})
    EXPECT_EQ(kernels::tolerance_for(id).name, Tolerance::fp32().name) << to_string(id);
}

TEST(HostEmulation, EachMatrixUnitAtTheWaveItsEmulationIsWrittenFor) {
  const DeviceCaps mfma_w32{.target = "host", .wave_size = 32, .matrix = {MatrixKind::mfma}, .matrix_fp8 = {Fp8Format::e4m3fn}};
  EXPECT_NE(error_of([&] { kernels::make_host_executor({.emulate = mfma_w32}); }).find("wave 64"), std::string::npos);
  const DeviceCaps wgmma_w64{.target = "host", .wave_size = 64, .matrix = {MatrixKind::wgmma}, .matrix_fp8 = {Fp8Format::e4m3fn}};
  EXPECT_NE(error_of([&] { kernels::make_host_executor({.emulate = wgmma_w64}); }).find("wave 32"), std::string::npos);
  EXPECT_THROW(kernels::make_host_executor({.warp_size = 48}), KernelError);
}

// A device's capabilities come from its arch table row; the row's pmqa_fused_kernel must name the
// family of the first fused kernel those capabilities select for the arch's own decode case (the
// arch's fp8 format, head_dim 128, 64 heads). A new arch is one row, and this keeps it honest.
TEST(ArchTableKernels, EachRowNamesTheFusedKernelItsCapabilitiesSelect) {
  int checked = 0;
  for (const auto& row : dispatch::ArchTable::builtin().entries()) {
    const DeviceCaps caps = kernels::caps_from_arch(row, /*runs_sm90a_code=*/true);
    EXPECT_EQ(caps.target, row.target);
    EXPECT_EQ(caps.wave_size, row.wave_size);
    // Every row's matrix instruction is one the device has (tcgen05 and WMMA rows included).
    if (row.fp8 && row.fp8_matrix != MatrixKind::none) EXPECT_TRUE(caps.runs(row.fp8_matrix, *row.fp8)) << caps.describe();
    if (!row.fp8) {
      EXPECT_FALSE(row.pmqa_fused_kernel) << row.target;
      continue;
    }
    ASSERT_TRUE(row.pmqa_fused_kernel) << row.target;
    std::string first;
    for (const auto& f : kernels::kernel_fits(Path::fused, decode_case(*row.fp8), caps))
      if (f.fits()) {
        first = family_name(f.kernel);
        break;
      }
    EXPECT_EQ(first, *row.pmqa_fused_kernel) << row.target << ": " << caps.describe();
    // The host emulates every arch whose matrix units it has an emulation of.
    EXPECT_NO_THROW(kernels::make_host_executor({.emulate = caps})) << row.target;
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

TEST(ArchTableKernels, HopperRunsWgmmaOnlyWithSm90aCode) {
  const auto& sm90 = dispatch::ArchTable::builtin().at("sm_90");
  EXPECT_TRUE(kernels::caps_from_arch(sm90, true).has(MatrixKind::wgmma));
  const DeviceCaps plain = kernels::caps_from_arch(sm90, false);
  EXPECT_FALSE(plain.has(MatrixKind::wgmma));
  EXPECT_TRUE(plain.has(MatrixKind::mma_sync));
  const auto& gfx942 = dispatch::ArchTable::builtin().at("gfx942");
  const DeviceCaps amd = kernels::caps_from_arch(gfx942, true);
  EXPECT_TRUE(amd.runs(MatrixKind::mfma, Fp8Format::e4m3fnuz));
  EXPECT_FALSE(amd.runs(MatrixKind::mfma, Fp8Format::e4m3fn));
  EXPECT_FALSE(amd.has(MatrixKind::mma_sync));
  EXPECT_EQ(amd.describe(), "gfx942, wave 64: MFMA (e4m3fnuz)");
}

// The device the checks emulate to run a kernel makes that kernel the first choice of its path
// on a case in its shapes (both fp8 formats where its instruction reads both).
TEST(KernelTable, EachKernelsHostDeviceRunsItFirst) {
  for (const KernelId id : kAllKernels) {
    const auto exec = kernels::make_host_executor({.emulate = kernels::host_caps_for(id)});
    const Fp8Format fp8 = id == KernelId::fused_wgmma ? Fp8Format::e4m3fn : Fp8Format::e4m3fnuz;
    EXPECT_EQ(exec->run(path_of(id), decode_case(fp8)).kernel, id) << to_string(id) << " on " << exec->caps().describe();
  }
}

// The table is the one place a kernel's identity is kept: names parse back, families and paths
// agree with the instruction column.
TEST(KernelTable, NamesFamiliesAndInstructionsAgree) {
  for (const KernelInfo& k : kKernelTable) {
    EXPECT_EQ(parse_kernel_id(k.name), k.id);
    EXPECT_TRUE(is_kernel_family(k.family, k.path)) << k.name;
    EXPECT_EQ(k.name, k.instruction.empty() ? std::string(k.family) : std::string(k.family) + "/" + std::string(k.instruction));
  }
  EXPECT_EQ(kernel_family_names(Path::fused), "fused-mma, fused-mfma, fused-scalar");
}

}  // namespace
}  // namespace pmqa
