// Output rows past 2^31 bytes (bug class 5): only 64-bit output offsets reach them.
#include <exception>

#include "pmqa/checks/checks.hpp"
#include "support.hpp"

namespace pmqa::checks {

Finding output_past_2g(const KernelFactory& make, const JudgeOptions& judge, const LargeOutputShape& shape) {
  Finding f = detail::finding("output rows past 2^31 bytes (host)",
                              "checks::output_past_2g: kernels/tests/large_output_test.cpp (HostExecutorLargeOffsets, label slow)",
                              "host-w" + std::to_string(shape.warp_size) + " fused, two-stage", "large cases");
  const auto t0 = detail::Clock::now();
  fixtures::CaseSpec s;
  s.name = "output-past-2g-host";
  s.seed = 631;
  s.batch = 64;
  s.next_n = 1;
  s.heads = shape.heads;
  s.head_dim = shape.head_dim;
  s.block_size = 16;
  s.max_model_len = 64;
  for (std::int64_t b = 0; b < s.batch; ++b) s.context_lens.push_back(static_cast<std::int32_t>(b % 3 == 0 ? 64 : 40 + b % 17));
  const auto p = detail::prepare(fixtures::make_case(s));
  // Row stride ceil(2^29 / 62) floats: rows 62 and 63 start at or past 2^31 bytes of output.
  constexpr std::int64_t kStride = ((std::int64_t{1} << 29) + 61) / 62;
  static_assert(62 * kStride * 4 >= std::int64_t{1} << 31);
  const std::shared_ptr<kernels::Executor> exec = make({.warp_size = shape.warp_size});
  for (const auto path : {Path::fused, Path::two_stage}) {
    ++f.cases_run;
    const Subject subject{std::string(to_string(path)) + "/" + exec->name(), true, [&](const Case& c) {
                            auto run = exec->run(path, c, {.row_pad = kStride - s.max_model_len});
                            SubjectOutput o;
                            o.judging = kernel_judging(run);
                            o.out = std::move(run.out);
                            o.kernel = std::string(to_string(run.kernel));
                            return o;
                          }};
    try {
      const CaseJudgement j = judge_case(subject, p->c, p->oracle, judge);
      f.ran(j.produced.kernel);
      if (!j.verdict.pass) {
        f.caught = true;
        f.first_detection = f.cases_run;
        f.evidence = std::string(to_string(path)) + " (" + j.produced.kernel + "): " + detail::first_lines(j.verdict.text, 6);
        break;
      }
    } catch (const HarnessError&) {
      throw;
    } catch (const std::exception& e) {
      f.caught = true;
      f.first_detection = f.cases_run;
      f.evidence = std::string(to_string(path)) + ": the run threw: " + e.what();
      break;
    }
  }
  f.seconds = detail::seconds_since(t0);
  return f;
}

}  // namespace pmqa::checks
