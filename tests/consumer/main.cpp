// Checks a kernel the way a user's test would: build a case, run the fused path on the host
// executor, compare with the reference, ask the dispatch policy what gfx950 should run, and pass
// the case through a case file's bytes (pmqa::cases, the interchange layer).
#include <cstdio>

#include "pmqa/cases/case_file.hpp"
#include "pmqa/dispatch/dispatch.hpp"
#include "pmqa/fixtures/generate.hpp"
#include "pmqa/kernels/executor.hpp"
#include "pmqa/reference/compare.hpp"

int main() {
  pmqa::fixtures::CaseSpec spec;
  spec.batch = 2;
  spec.next_n = 2;
  spec.heads = 8;
  spec.head_dim = 64;
  spec.max_model_len = 100;
  spec.context_lens = {100, 37};
  pmqa::cases::CaseFile file;
  file.c = pmqa::fixtures::make_case(spec);
  const auto bytes = pmqa::cases::serialize_case_file(file);
  const pmqa::Case c = pmqa::cases::parse_case_file(bytes, "<consumer>").c;
  const auto run = pmqa::kernels::make_host_executor()->run(pmqa::Path::fused, c);
  const pmqa::Report report = pmqa::compare(c, pmqa::compute_reference(c), run.out);
  const auto decision = pmqa::dispatch::select("gfx950", pmqa::dispatch::Context{});
  std::printf("%s\ngfx950 -> %s\n", report.to_text().c_str(), decision.summary().c_str());
  return report.passed() && decision.path == pmqa::Path::fused ? 0 : 1;
}
