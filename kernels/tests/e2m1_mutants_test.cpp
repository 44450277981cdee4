// Planted e2m1 bugs must fail: each mutant is kdev::Faithful with one e2m1 hook replaced
// (pmqa_kernels/common/faults.hpp), run inside the real fused-scalar and two-stage kernels on the
// host executor and judged as `pmqa verify` judges (fp64 oracle with noise, fp32 profile). Every
// case of e2m1_cases.hpp has keys past its first block and groups whose scales differ, so each
// mutant must fail on every case of every kernel (measured: 19 of 19 each); the counts are printed.
#include <cstdio>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "pmqa/kernels/lab_host.hpp"
#include "pmqa/reference/compare.hpp"
#include "e2m1_cases.hpp"

namespace pmqa {
namespace {

namespace kd = pmqa::kdev;

// The keys' nibbles read high first (a reader that packs element 2i into the high nibble). The
// queries keep the right order: swapped on both sides the dots would not change.
struct KeyNibblesSwapped : kd::Faithful {
  static PMQA_DEV std::uint32_t k_nibble(std::uint8_t byte, int d) { return kd::Faithful::k_nibble(byte, d ^ 1); }
};

// The same on the queries' side.
struct QueryNibblesSwapped : kd::Faithful {
  static PMQA_DEV std::uint32_t q_nibble(std::uint8_t byte, int d) { return kd::Faithful::q_nibble(byte, d ^ 1); }
};

// A key's scale byte of group 1 read one too large: that group's values doubled.
struct ScaleByteOffByOne : kd::Faithful {
  static PMQA_DEV float k_group_scale(std::uint8_t byte, int g) {
    return kd::Faithful::k_group_scale(static_cast<std::uint8_t>(g == 1 ? byte + 1 : byte), g);
  }
};

// Every key group scale 1 % too large (a wrong constant folded into the scale decode).
struct ScaleOnePercentLarge : kd::Faithful {
  static PMQA_DEV float k_group_scale(std::uint8_t byte, int g) { return kd::Faithful::k_group_scale(byte, g) * 1.01f; }
};

// The group boundary shifted by one group: group g + 1 takes group g's scale byte (group 0 its own).
struct GroupScaleShifted : kd::Faithful {
  template <int kD>
  static PMQA_DEV std::int64_t e2m1_scale_offset(const kd::LogitsParams& p, std::int64_t t, int g) {
    return kd::Faithful::e2m1_scale_offset<kD>(p, t, g > 0 ? g - 1 : 0);
  }
};

// A wrong page: logical block 1 of every sequence read from logical block 0's physical block.
struct WrongPage : kd::Faithful {
  static PMQA_DEV std::int64_t page(const kd::LogitsParams& p, std::int64_t b, std::int64_t logical) {
    return kd::Faithful::page(p, b, logical == 1 ? 0 : logical);
  }
};

struct Cases {
  std::vector<Case> cases;
  std::vector<Reference> oracles;
};

const Cases& e2m1_cases() {
  static const Cases all = [] {
    Cases c;
    for (const auto& spec : test::e2m1_specs()) {
      c.cases.push_back(fixtures::make_case(spec));
      c.oracles.push_back(compute_reference(c.cases.back(), {.precision = Precision::fp64, .with_noise = true}));
    }
    return c;
  }();
  return all;
}

// The cases on which the judge fails mutant Hooks on `kernel`.
template <class Hooks>
int caught_on(KernelId kernel, const std::string& mutant) {
  const Cases& all = e2m1_cases();
  kernels::lab::HostBackend be({.warp_size = 32});
  int caught = 0;
  for (std::size_t i = 0; i < all.cases.size(); ++i) {
    const Case& c = all.cases[i];
    const auto run = kernels::lab::run_path<kernels::lab::HostBackend, Hooks>(be, path_of(kernel), c, {.kernel = kernel});
    const Report rep = compare(c, all.oracles[i], run.out, {.judging = {.tolerance = Tolerance::fp32()}});
    if (!rep.passed()) ++caught;
  }
  std::printf("%-24s %-13s caught on %d of %zu e2m1 cases\n", mutant.c_str(), std::string(to_string(kernel)).c_str(), caught,
              all.cases.size());
  return caught;
}

template <class Hooks>
void expect_caught_everywhere(const std::string& mutant) {
  for (const KernelId kernel : {KernelId::fused_scalar, KernelId::two_stage})
    EXPECT_EQ(caught_on<Hooks>(kernel, mutant), static_cast<int>(e2m1_cases().cases.size()))
        << mutant << " passed some e2m1 case on " << to_string(kernel);
}

TEST(Fp4KernelMutants, FaithfulPassesEveryCase) {
  for (const KernelId kernel : {KernelId::fused_scalar, KernelId::two_stage})
    EXPECT_EQ(caught_on<kd::Faithful>(kernel, "faithful"), 0) << to_string(kernel);
}

TEST(Fp4KernelMutants, KeyNibblesSwappedFails) { expect_caught_everywhere<KeyNibblesSwapped>("key-nibbles-swapped"); }
TEST(Fp4KernelMutants, QueryNibblesSwappedFails) { expect_caught_everywhere<QueryNibblesSwapped>("query-nibbles-swapped"); }
TEST(Fp4KernelMutants, ScaleByteOffByOneFails) { expect_caught_everywhere<ScaleByteOffByOne>("scale-byte-off-by-one"); }
TEST(Fp4KernelMutants, ScaleOnePercentLargeFails) { expect_caught_everywhere<ScaleOnePercentLarge>("scale-one-percent-large"); }
TEST(Fp4KernelMutants, GroupScaleShiftedFails) { expect_caught_everywhere<GroupScaleShifted>("group-scale-shifted"); }
TEST(Fp4KernelMutants, WrongPageFails) { expect_caught_everywhere<WrongPage>("wrong-page"); }

}  // namespace
}  // namespace pmqa
