// PMQA_FIT reaches the property generators: run with PMQA_FIT (and PMQA_ENVELOPE) set by CTest.
//   pmqa_envelope_env_test CONVENTION PLATFORM    every gen_case_spec() draw lies inside
//   pmqa_envelope_env_test --error TEXT           reading the environment fails naming TEXT
#include <cstdio>
#include <cstring>
#include <string>

#include <rapidcheck.h>

#include "pmqa/fixtures/rapidcheck.hpp"

int main(int argc, char** argv) {
  using namespace pmqa::fixtures;
  if (argc == 3 && std::strcmp(argv[1], "--error") == 0) {
    try {
      (void)envelope_from_environment();
    } catch (const pmqa::cases::EnvelopeError& e) {
      std::printf("%s\n", e.what());
      return std::string(e.what()).find(argv[2]) != std::string::npos ? 0 : 1;
    }
    std::printf("no error from the environment\n");
    return 1;
  }
  if (argc != 3) return 2;
  const auto& e = envelope_from_environment();
  if (!e || e->convention != argv[1] || e->platform != argv[2]) {
    std::printf("PMQA_FIT did not give %s on %s\n", argv[1], argv[2]);
    return 1;
  }
  SpecRanges r;
  r.max_model_len = 300;
  r.max_work = 4'000'000;
  const bool ok = rc::check("gen_case_spec() draws inside PMQA_FIT's envelope", [&] {
    const CaseSpec s = *gen_case_spec(r);
    RC_ASSERT(e->contains(traits_of(s)));
  });
  return ok ? 0 : 1;
}
