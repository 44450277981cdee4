// The planted-defect corpus: outputs with a known defect (and two correct ones) that a comparison
// must judge right.
#include <cmath>
#include <exception>

#include "pmqa/checks/checks.hpp"
#include "pmqa/reference/fp8.hpp"
#include "support.hpp"

namespace pmqa::checks {
namespace {

struct Planted {
  std::string name;
  std::shared_ptr<const detail::Prepared> subject;  // the case and oracle the output is judged against
  OutputBuffer out;
  bool defective = true;
};

OutputBuffer filled(const Case& c, float value) {
  OutputBuffer out(c.rows(), c.max_model_len);
  for (std::int64_t r = 0; r < c.rows(); ++r)
    for (std::int64_t j = 0; j < c.max_model_len; ++j) out.at(r, j) = value;
  return out;
}

const std::vector<Planted>& planted_defects() {
  static const std::vector<Planted> corpus = [] {
    const auto base = detail::prepare(fixtures::make_case(planted_corpus_spec()));
    const Case& c = base->c;
    std::vector<Planted> v;
    v.push_back({"correct output", base, reference_output(c), false});

    Case wrong_page = c;  // sequence 0, logical block 3 read from another (valid) physical block
    wrong_page.block_table[3] = wrong_page.block_table[1];
    v.push_back({"one wrong page", base, reference_output(wrong_page), true});

    Case other_format = c;  // what a kernel decoding FN bytes as FNUZ sees: each q value halved
    for (auto& b : other_format.q)
      b = encode_fp8(Fp8Format::e4m3fn, decode_fp8(Fp8Format::e4m3fnuz, b), Fp8Overflow::saturate);
    v.push_back({"q decoded with the other format", base, reference_output(other_format), true});

    OutputBuffer extra = reference_output(c);
    extra.at(2, c.valid_keys(2)) = 0.5f;
    v.push_back({"one key too many", base, std::move(extra), true});
    OutputBuffer short_row = reference_output(c);
    short_row.at(2, c.valid_keys(2) - 1) = -INFINITY;
    v.push_back({"one key too few", base, std::move(short_row), true});

    OutputBuffer unwritten = reference_output(c);
    for (std::int64_t j = 0; j < c.max_model_len; ++j) unwritten.at(1, j) = sentinel();
    v.push_back({"unwritten row", base, std::move(unwritten), true});

    OutputBuffer past_end = reference_output(c);
    past_end.at(0, c.max_model_len) = 1.0f;  // the first pad cell after row 0
    v.push_back({"write one past the row end", base, std::move(past_end), true});

    OutputBuffer nan = reference_output(c);
    nan.at(1, 7) = NAN;
    v.push_back({"single NaN", base, std::move(nan), true});

    Case nan_case = c;
    nan_case.q[0] = 0x7F;  // row 0, head 0: row 0 is NaN wherever valid
    v.push_back({"numbers where the reference is NaN", detail::prepare(nan_case), reference_output(c), true});

    v.push_back({"all-zero output", base, filled(c, 0.0f), true});

    fixtures::CaseSpec m;
    m.batch = 2;
    m.next_n = 2;
    m.context_lens = {0, 0};  // every row has E_r <= 0
    const auto masked = detail::prepare(fixtures::make_case(m));
    OutputBuffer one_zero = filled(masked->c, -INFINITY);
    v.push_back({"all-masked case, all -inf", masked, filled(masked->c, -INFINITY), false});
    one_zero.at(0, 0) = 0.0f;
    v.push_back({"all-masked case, a 0 written", masked, std::move(one_zero), true});
    return v;
  }();
  return corpus;
}

}  // namespace

std::int64_t planted_corpus_size() { return static_cast<std::int64_t>(planted_defects().size()); }

fixtures::CaseSpec planted_corpus_spec() {
  fixtures::CaseSpec s;
  s.name = "compare";
  s.seed = 11;
  s.batch = 3;
  s.next_n = 2;
  s.heads = 8;
  s.head_dim = 64;
  s.block_size = 16;
  s.max_model_len = 120;
  s.context_lens = {120, 50, 1};  // row 4 has E = 0
  return s;
}

Finding planted_corpus(const Checker& checker, const std::optional<Tolerance>& tolerance) {
  Finding f = detail::finding("planted-defect corpus", "checks::planted_corpus: reference/tests/compare_test.cpp (CompareTest)",
                              "", "planted outputs");
  const auto t0 = detail::Clock::now();
  const CompareOptions options{.judging = {.contract = Contract::clean, .tolerance = tolerance.value_or(Tolerance::fp32())}};
  std::int64_t misjudged = 0;
  std::string names;
  const auto& corpus = planted_defects();
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    const Planted& p = corpus[i];
    ++f.cases_run;
    Verdict v;
    try {
      v = checker(p.subject->c, p.subject->oracle, p.out, options);
    } catch (const std::exception& e) {
      v = Verdict{false, std::string("the checker threw: ") + e.what(), std::nullopt};
    }
    if (v.pass != p.defective) continue;  // a defect failed, or a correct output passed
    ++misjudged;
    names += (names.empty() ? "" : ", ") + p.name;
    if (!f.caught) {
      f.caught = true;
      f.first_detection = static_cast<std::int64_t>(i) + 1;
    }
  }
  if (f.caught)
    f.evidence = "misjudged " + std::to_string(misjudged) + " of " + std::to_string(corpus.size()) + " planted outputs: " + names;
  f.seconds = detail::seconds_since(t0);
  return f;
}

}  // namespace pmqa::checks
