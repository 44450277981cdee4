#include "pmqa/checks/subject.hpp"

#include "pmqa/reference/reference.hpp"

namespace pmqa::checks {

Judging kernel_judging(const kernels::RunResult& run) {
  return {.contract = Contract::clean, .tolerance = kernels::tolerance_for(run), .nan = NanRule::propagate};
}

Subject kernel_subject(std::shared_ptr<kernels::Executor> executor, Path path) {
  const bool gpu = executor->arch() != "host";
  std::string name = std::string(to_string(path)) + "/" + executor->name();
  // The gigabyte cases of the suites are sized for a GPU's fused path.
  Subject s{std::move(name), gpu && path == Path::fused, [executor = std::move(executor), path](const Case& c) {
            auto run = executor->run(path, c);
            SubjectOutput o;
            o.judging = kernel_judging(run);
            o.out = std::move(run.out);
            o.kernel = std::string(to_string(run.kernel));
            return o;
          }};
  s.names_kernel = path == Path::fused;  // the fused path has several kernels
  return s;
}

Subject reference_subject() {
  return {"reference-fp32", false, [](const Case& c) {
            SubjectOutput o;
            o.out = reference_output(c);
            o.kernel = "reference-fp32";
            return o;
          }};
}

KernelFactory host_factory() {
  return [](const kernels::HostExecutorOptions& o) { return kernels::make_host_executor(o); };
}

}  // namespace pmqa::checks
