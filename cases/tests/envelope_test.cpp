// Envelopes: the builtin data read strictly, each convention's limits judged against facts written
// here by hand from ../shared/realworld/README.md (so a wrong number in a data file, or a checker
// that ignores a limit, fails), and fitted cases that all lie inside.
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "pmqa/cases/envelope.hpp"
#include "pmqa/fixtures/fit.hpp"
#include "pmqa/fixtures/rapidcheck.hpp"
#include "pmqa/fixtures/suites.hpp"

namespace pmqa::fixtures {

// The envelopes are the interchange layer's (pmqa::cases); the specs and fitted suites are fixtures'.
using namespace pmqa::cases;
using cases::traits_of;  // beside fixtures::traits_of(CaseSpec)
namespace {

using Facts = std::map<std::string, std::function<bool(const CaseTraits&)>>;  // limit id -> inside?

bool pow2(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// The limits each envelope must hold, by id, written from the corpus README and spec, not read
// from the data files.
Facts facts(const std::string& convention, const std::string& platform) {
  Facts f;
  const bool cuda = platform == "cuda";
  if (convention == "deepgemm" && cuda) {
    f["block-size"] = [](const CaseTraits& t) { return t.block_size == 64; };
    f["heads"] = [](const CaseTraits& t) { return t.heads == 32 || t.heads == 64; };
    f["next-n"] = [](const CaseTraits& t) { return t.next_n == 1 || t.next_n == 2; };
    f["head-dim"] = [](const CaseTraits& t) { return t.head_dim == 32 || t.head_dim == 64 || t.head_dim == 128; };
    f["fp8-format"] = [](const CaseTraits& t) { return t.value_format == "e4m3fn"; };
    f["layout"] = [](const CaseTraits& t) { return t.kv_layout == "normal"; };
    f["block-stride"] = [](const CaseTraits& t) { return t.block_stride % 16 == 0; };
    f["lengths-fall"] = [](const CaseTraits& t) { return t.last_row_longest; };
  }
  if (convention == "aiter-fused") {
    f["lengths-1d"] = [](const CaseTraits& t) { return t.context_lens == "1-d"; };
    f["empty-batch"] = [](const CaseTraits& t) { return t.batch >= 1; };
    if (cuda) {
      f["fp8-format"] = [](const CaseTraits& t) { return t.value_format == "e4m3fn"; };
      f["layout"] = [](const CaseTraits& t) { return t.kv_layout == "normal"; };
      f["block-stride"] = [](const CaseTraits& t) { return t.block_stride % 4 == 0; };
      f["heads-power-of-two"] = [](const CaseTraits& t) { return pow2(t.heads); };
    }
  }
  if (convention == "aiter-stage1") {
    f["lengths-1d"] = [](const CaseTraits& t) { return t.context_lens == "1-d"; };
    f["layout"] = [](const CaseTraits& t) { return t.kv_layout == "normal"; };
    f["chunk-q"] = [](const CaseTraits& t) { return t.chunk_q == 0 || t.heads % t.chunk_q == 0; };
    if (cuda) {
      f["fp8-format"] = [](const CaseTraits& t) { return t.value_format == "e4m3fn"; };
      f["block-stride"] = [](const CaseTraits& t) { return t.block_stride % 4 == 0; };
      f["heads-power-of-two"] = [](const CaseTraits& t) { return pow2(t.heads); };
      f["empty-batch"] = [](const CaseTraits& t) { return t.batch >= 1; };
    }
  }
  if (convention == "eager") f["layout"] = [](const CaseTraits& t) { return t.kv_layout == "normal"; };
  if (convention == "vllm-rocm") {
    f["lengths-1d"] = [](const CaseTraits& t) { return t.context_lens == "1-d"; };
    f["layout"] = [](const CaseTraits& t) { return t.block_size < 2 || t.kv_layout == "shuffle"; };
    f["empty-batch"] = [](const CaseTraits& t) { return t.batch >= 1; };
    f["fp8-gfx942"] = [](const CaseTraits& t) { return t.arch != "gfx942" || t.value_format == "e4m3fnuz"; };
    f["fp8-gfx950"] = [](const CaseTraits& t) { return t.arch != "gfx950" || t.value_format == "e4m3fn"; };
  }
  return f;
}

std::vector<std::pair<std::string, std::string>> every_envelope() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& c : envelope_conventions())
    for (const auto& p : envelope_platforms(c)) out.emplace_back(c, p);
  return out;
}

SpecRanges small() {
  SpecRanges r;
  r.max_model_len = 300;
  r.max_work = 4'000'000;
  return r;
}

TEST(Envelope, BuiltinFilesCoverTheConventions) {
  EXPECT_EQ(envelope_conventions(),
            (std::vector<std::string>{"aiter-fused", "aiter-stage1", "deepgemm", "eager", "vllm-rocm"}));
  EXPECT_EQ(envelope_platforms("vllm-rocm"), std::vector<std::string>{"rocm"});
  EXPECT_EQ(envelope_platforms("deepgemm"), std::vector<std::string>{"cuda"});
  for (const auto& [c, p] : every_envelope()) {
    const Envelope e = make_envelope(c, p);
    std::set<std::string> ids;
    for (const auto& l : e.limits) {
      EXPECT_FALSE(l.reason.empty()) << c << " " << l.id;
      ids.insert(l.id);
    }
    std::set<std::string> want;
    for (const auto& [id, fn] : facts(c, p)) want.insert(id);
    EXPECT_EQ(ids, want) << c << " on " << p << ": the data's limits are not the facts this test knows";
  }
}

// Every generated case (no fitting): the envelope refuses exactly the cases the hand-written facts
// say are outside, naming each limit they break.
TEST(Envelope, RefusesExactlyTheCasesOutsideWithTheLimitTheyBreak) {
  for (const auto& [c, p] : every_envelope()) {
    const Envelope e = make_envelope(c, p);
    const Facts f = facts(c, p);
    const bool ok = rc::check(c + " on " + p + ": breaches are the facts' breaches", [&] {
      const CaseSpec spec = *rc::gen::map(gen_knobs(small()), [](const SpecKnobs& k) { return assemble_spec(k); });
      const std::int64_t chunk = *rc::gen::inRange<std::int64_t>(0, 130);
      const std::string arch = *rc::gen::element<std::string>("", "gfx942", "gfx950", "sm_90");
      const CaseTraits t = traits_of(spec, {.chunk_q = chunk, .arch = arch});
      std::set<std::string> want, got;
      for (const auto& [id, inside] : f)
        if (!inside(t)) want.insert(id);
      const auto breaches = e.breaches(t);
      for (const auto& b : breaches) {
        got.insert(b.limit->id);
        RC_ASSERT(b.message().find("limit " + b.limit->id + ": " + b.limit->field) == 0);
        RC_ASSERT(b.message().find(b.limit->reason) != std::string::npos);
      }
      RC_ASSERT(got == want);
      RC_ASSERT(e.contains(t) == want.empty());
      RC_ASSERT(e.refusal(t).empty() == want.empty());
    });
    EXPECT_TRUE(ok) << c << " on " << p;
  }
}

TEST(Envelope, TraitsOfASpecAreTheTraitsOfItsCase) {
  const bool ok = rc::check("traits_of(spec) == traits_of(make_case(spec))", [] {
    const CaseSpec spec = *gen_case_spec(small());
    const CaseTraits a = traits_of(spec), b = traits_of(make_case(spec));
    for (const auto& field : trait_fields()) RC_ASSERT(a.get(field) == b.get(field));
  });
  EXPECT_TRUE(ok);
}

TEST(Envelope, FittedSpecsLieInsideAndBuild) {
  for (auto [c, p] : every_envelope()) {
    Envelope e = make_envelope(c, p);
    if (c == "vllm-rocm") e.arch = "gfx942";  // its formats follow the arch
    const bool ok = rc::check(c + " on " + p + ": fitted specs are inside", [&] {
      const CaseSpec spec = *gen_case_spec(small(), e);
      RC_ASSERT(e.contains(traits_of(spec)));
      const Case built = make_case(spec);  // valid (make_case validates)
      RC_ASSERT(e.contains(traits_of(built)));
      for (const auto& [id, inside] : facts(c, p)) RC_ASSERT(inside(traits_of(built, {.chunk_q = std::nullopt, .arch = e.arch})));
    });
    EXPECT_TRUE(ok) << c << " on " << p;
  }
}

// fit_spec checks its result, so a fit that goes wrong shows up as knobs it cannot fit: almost
// every knob set must fit (the rest are discarded by the generators).
TEST(Envelope, AlmostEveryKnobSetFits) {
  for (const auto& [c, p] : every_envelope()) {
    const Envelope e = make_envelope(c, p);
    int fitted = 0;
    const int draws = 500;
    for (int seed = 1; seed <= draws; ++seed) fitted += fit_spec(random_knobs(static_cast<std::uint64_t>(seed), small()), e).has_value();
    EXPECT_GE(fitted, draws * 99 / 100) << c << " on " << p;
  }
}

TEST(Envelope, FitMovesKnobsToTheNearestAllowedValue) {
  const Envelope e = make_envelope("deepgemm", "cuda");
  SpecKnobs k;
  k.seed = 5;
  k.batch = 2;
  k.next_n = 5;
  k.heads = 40;
  k.head_dim = 128;
  k.block_size = 16;
  k.max_model_len = 90;
  k.stride_pad = 3;
  k.fnuz = true;
  k.shuffle = true;
  k.lens_2d = true;
  k.length_kinds = {LengthKind::max_model_len, LengthKind::zero};
  const auto s = fit_spec(k, e);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->next_n, 2);
  EXPECT_EQ(s->heads, 32);
  EXPECT_EQ(s->block_size, 64);
  EXPECT_EQ(s->format, ValueFormat::e4m3fn);
  EXPECT_EQ(s->layout, KvLayout::normal);
  EXPECT_EQ((s->block_size * (s->head_dim + 4) + s->block_stride_pad) % 16, 0);
  EXPECT_GE(s->block_stride_pad, 3);
  // [90, 0] falls with n: the longest row is moved last.
  EXPECT_EQ(s->context_lens, (std::vector<std::int32_t>{0, 90, 0, 90}));
}

TEST(Envelope, FittedSuitesLieInsideAndAreLargeEnough) {
  for (const auto& [c, p] : every_envelope()) {
    const Envelope e = make_envelope(c, p);
    for (const char* name : {"quick", "standard"}) {
      const auto cases = fit_suite(name, e);
      std::set<std::string> names;
      for (const auto& sc : cases) {
        EXPECT_TRUE(e.contains(traits_of(sc.spec))) << c << " " << name << " " << sc.name << ": " << e.refusal(traits_of(sc.spec));
        EXPECT_TRUE(names.insert(sc.name).second) << sc.name;
        EXPECT_EQ(sc.spec.name, sc.name);
      }
      EXPECT_GE(cases.size(), suite(name).size()) << c << " " << name;
      if (std::string(name) == "standard") {
        EXPECT_GE(cases.size(), 150u);
      }
      // Deterministic: the same envelope gives the same suite.
      const auto again = fit_suite(name, e);
      ASSERT_EQ(again.size(), cases.size());
      for (std::size_t i = 0; i < cases.size(); ++i) {
        std::ostringstream x, y;
        x << cases[i].spec;
        y << again[i].spec;
        EXPECT_EQ(x.str(), y.str());
      }
    }
  }
  // The edge cases survive the fit: DeepGEMM's fitted standard suite still has them.
  std::set<std::string> names;
  for (const auto& sc : fit_suite("standard", make_envelope("deepgemm", "cuda"))) names.insert(sc.name);
  for (const char* n : {"fit-edge-lengths", "fit-edge-lengths-2d", "fit-empty-batch", "fit-padded-stride",
                        "fit-nan-codes-e4m3fn", "fit-special-codes-e4m3fn", "fit-shared-prefix", "deepseek-2k-n1"})
    EXPECT_TRUE(names.count(n)) << n;
}

TEST(Envelope, TheFittedEdgeCaseHitsEveryLengthEdge) {
  for (const auto& [c, p] : every_envelope()) {
    const auto cases = fit_suite("standard", make_envelope(c, p));
    const auto it = std::find_if(cases.begin(), cases.end(), [](const SuiteCase& sc) { return sc.name == "fit-edge-lengths"; });
    ASSERT_NE(it, cases.end()) << c;
    const auto& s = it->spec;
    std::set<std::int32_t> lens(s.context_lens.begin(), s.context_lens.end());
    for (std::int64_t v : {std::int64_t{0}, std::int64_t{1}, s.next_n - 1, s.next_n, s.block_size - 1, s.block_size,
                           s.block_size + 1, s.max_model_len})
      EXPECT_TRUE(lens.count(static_cast<std::int32_t>(v))) << c << " on " << p << ": no length " << v;
  }
}

TEST(Envelope, FitFollowsTheArch) {
  Envelope e = make_envelope("vllm-rocm", "rocm");
  for (const char* arch : {"gfx942", "gfx950"}) {
    e.arch = arch;
    for (const auto& sc : fit_suite("quick", e)) {
      EXPECT_EQ(sc.spec.format, std::string(arch) == "gfx942" ? ValueFormat::e4m3fnuz : ValueFormat::e4m3fn) << arch << " " << sc.name;
      EXPECT_TRUE(sc.spec.block_size == 1 || sc.spec.layout == KvLayout::shuffle) << sc.name;
    }
  }
}

TEST(Envelope, UnlistedPlatformRunsNothing) {
  const Envelope e = make_envelope("deepgemm", "rocm");
  EXPECT_FALSE(e.platform_listed);
  EXPECT_NE(e.refusal(traits_of(suite("quick")[0].spec)).find("does not run there"), std::string::npos);
  EXPECT_TRUE(fit_suite("quick", e).empty());
  // "none": the convention's own limits only.
  const Envelope n = make_envelope("aiter-fused", "none");
  EXPECT_EQ(n.limits.size(), 2u);
  EXPECT_THROW(make_envelope("aiter-fused", ""), EnvelopeError);  // two platforms: choose
  EXPECT_THROW(make_envelope("nope", "cuda"), EnvelopeError);
}

// ---- strict parsing

const char* kOverlayHead = R"({"schema": "pmqa-envelope-overlay/1", "convention": "deepgemm", "calls": "c", "sources": "s", )";

std::string error_of(const std::string& text) {
  try {
    parse_envelope(text, "t.json");
  } catch (const EnvelopeError& e) {
    return e.what();
  }
  return "";
}

TEST(EnvelopeFile, RejectsWhatAReviewMustNotLetThrough) {
  const std::string full = R"({"schema": "pmqa-envelope/1", "convention": "x", "calls": "c", "sources": "s", "platforms": {"cuda": {"note": "n", "limits": []}}, )";
  auto lim = [&](const std::string& limit) { return full + R"("limits": [)" + limit + "]}"; };
  EXPECT_EQ(error_of(lim(R"({"id": "a", "field": "heads", "in": [64], "reason": "r"})")), "");
  EXPECT_NE(error_of(lim(R"({"id": "a", "field": "heads", "in": [64]})")).find("reason: missing"), std::string::npos);
  EXPECT_NE(error_of(lim(R"({"id": "a", "field": "heads", "in": [64], "reason": " "})")).find("is empty"), std::string::npos);
  EXPECT_NE(error_of(lim(R"({"id": "a", "field": "heads", "in": [64], "reason": "r", "why": 1})")).find("unknown key \"why\""),
            std::string::npos);
  EXPECT_NE(error_of(lim(R"({"id": "a", "field": "nheads", "in": [64], "reason": "r"})")).find("unknown field"), std::string::npos);
  EXPECT_NE(error_of(lim(R"({"id": "a", "field": "heads", "in": ["64"], "reason": "r"})")).find("takes integers"), std::string::npos);
  EXPECT_NE(error_of(lim(R"({"id": "a", "field": "kv_layout", "in": ["tiled"], "reason": "r"})")).find("not a value"),
            std::string::npos);
  EXPECT_NE(error_of(lim(R"({"id": "a", "field": "heads", "min": 1, "max": 2, "reason": "r"})")).find("more than one predicate"),
            std::string::npos);
  EXPECT_NE(error_of(lim(R"({"id": "a", "field": "heads", "reason": "r"})")).find("no predicate"), std::string::npos);
  EXPECT_NE(error_of(lim(R"({"id": "a", "field": "kv_layout", "min": 1, "reason": "r"})")).find("not an integer"), std::string::npos);
  EXPECT_NE(error_of(lim(R"({"id": "a", "field": "heads", "multiple_of": 0, "reason": "r"})")).find("at least 1"), std::string::npos);
  EXPECT_NE(error_of(lim(R"({"id": "a", "field": "heads", "min": 1, "reason": "r"}, {"id": "a", "field": "batch", "min": 1, "reason": "r"})"))
                .find("appears twice"),
            std::string::npos);
  EXPECT_NE(error_of(lim(R"({"id": "A b", "field": "heads", "min": 1, "reason": "r"})")).find("a-z"), std::string::npos);
  EXPECT_NE(error_of(lim(R"({"id": "a", "field": "heads", "min": 1, "when": {"field": "next_n"}, "reason": "r"})")).find("no predicate"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"schema": "pmqa-envelope/1", "schema": "pmqa-envelope/1"})").find("appears twice"), std::string::npos);
  EXPECT_NE(error_of(R"({"schema": "pmqa-envelope/2"})").find("schema"), std::string::npos);
  EXPECT_NE(error_of(full + R"("limits": [], "extra": 1})").find("unknown key \"extra\""), std::string::npos);
  EXPECT_NE(error_of(R"({"schema": "pmqa-envelope/1", "convention": "x", "calls": "c", "sources": "s", "limits": [], "platforms": {"tpu": {"note": "n", "limits": []}}})")
                .find("unknown platform"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"schema": "pmqa-envelope/1", "convention": "x", "calls": "c", "sources": "s", "limits": [], "platforms": {"cuda": {"limits": []}}})")
                .find("note: missing"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"schema": "pmqa-envelope/1", "convention": "x", "sources": "s", "limits": [], "platforms": {}})").find("calls: missing"),
            std::string::npos);
}

TEST(EnvelopeFile, OverlaysReplaceAddAndDropLimits) {
  const auto o = parse_envelope(std::string(kOverlayHead) + R"("platforms": {"cuda": {"limits": [
      {"id": "heads", "field": "heads", "in": [32, 64, 128], "reason": "a new drop takes 128 heads"},
      {"id": "next-n", "drop": true, "reason": "a new drop takes any next_n"},
      {"id": "max-len", "field": "max_model_len", "max": 100000, "reason": "a new limit"}]}}})",
                                "o.json");
  const Envelope base = make_envelope("deepgemm", "cuda");
  const Envelope e = make_envelope("deepgemm", "cuda", {o});
  EXPECT_EQ(e.limits.size(), base.limits.size());  // one replaced, one dropped, one added
  CaseTraits t = traits_of(suite("standard")[0].spec);
  t.heads = 128;
  t.next_n = 5;
  t.block_size = 64;
  t.value_format = "e4m3fn";
  t.kv_layout = "normal";
  t.head_dim = 128;
  t.block_stride = 64 * 132;
  t.context_lens = "1-d";
  t.last_row_longest = true;
  EXPECT_FALSE(base.contains(t));
  EXPECT_TRUE(e.contains(t)) << e.refusal(t);
  t.max_model_len = 200000;
  EXPECT_NE(e.refusal(t).find("limit max-len"), std::string::npos);
  EXPECT_EQ(e.origins.size(), 2u);

  const auto bad_drop = parse_envelope(std::string(kOverlayHead) + R"("limits": [{"id": "nothing", "drop": true, "reason": "r"}]})", "d.json");
  EXPECT_THROW(make_envelope("deepgemm", "cuda", {bad_drop}), EnvelopeError);
  const auto drop_no_reason = std::string(kOverlayHead) + R"("limits": [{"id": "heads", "drop": true}]})";
  EXPECT_NE(error_of(drop_no_reason).find("reason: missing"), std::string::npos);
  const auto other = parse_envelope(R"({"schema": "pmqa-envelope-overlay/1", "convention": "eager", "calls": "c", "sources": "s"})", "e.json");
  EXPECT_THROW(make_envelope("deepgemm", "cuda", {other}), EnvelopeError);
  EXPECT_THROW(make_envelope("deepgemm", "cuda", {builtin_envelope_file("deepgemm")}), EnvelopeError);  // not an overlay
  // An overlay may add a platform.
  const auto rocm = parse_envelope(std::string(kOverlayHead) + R"("platforms": {"rocm": {"limits": []}}})", "r.json");
  EXPECT_TRUE(make_envelope("deepgemm", "rocm", {rocm}).platform_listed);
}

TEST(EnvelopeFile, TheFieldNameFromBeforeFp4StillLoads) {
  // Overlays written when the field was fp8_format mean value_format, in a limit and in its when.
  const auto o = parse_envelope(std::string(kOverlayHead) + R"("platforms": {"cuda": {"limits": [
      {"id": "fn-only", "field": "fp8_format", "in": ["e4m3fn"], "reason": "OCP only"},
      {"id": "fn-heads", "field": "heads", "in": [64], "when": {"field": "fp8_format", "in": ["e4m3fn"]},
       "reason": "64 heads in OCP"}]}}})",
                                "old.json");
  const Envelope e = make_envelope("deepgemm", "cuda", {o});
  CaseTraits t = traits_of(suite("standard")[0].spec);
  t.value_format = "e4m3fnuz";  // the refusal names every limit the case is outside
  EXPECT_NE(e.refusal(t).find("fn-only"), std::string::npos) << e.refusal(t);
  t.value_format = "e4m3fn";
  t.heads = 32;
  EXPECT_EQ(e.refusal(t).find("fn-only"), std::string::npos) << e.refusal(t);
  EXPECT_NE(e.refusal(t).find("fn-heads"), std::string::npos) << e.refusal(t);
  t.value_format = "e4m3fnuz";  // the when no longer holds
  EXPECT_EQ(e.refusal(t).find("fn-heads"), std::string::npos) << e.refusal(t);
}

TEST(EnvelopeFile, TheVllmEagerOverlayRefusesOnlyBlocksPastTheEnd) {
  const auto o = read_envelope_file(PMQA_ENVELOPE_DIR "/overlays/vllm-eager.json");
  const Envelope e = make_envelope("eager", "cuda", {o});
  int refused = 0;
  for (const auto& sc : suite("standard")) {
    const CaseTraits t = traits_of(sc.spec);
    if (t.kv_layout != "normal") continue;
    const bool past = t.next_n > 1 && t.blocks_past_max_model_len;
    EXPECT_EQ(e.contains(t), !past) << sc.name;
    refused += past;
  }
  // The measured count: 122 NORMAL standard cases, 97 ran under vLLM's eager op (corpus README).
  EXPECT_EQ(refused, 122 - 97);
}

}  // namespace
}  // namespace pmqa::fixtures
