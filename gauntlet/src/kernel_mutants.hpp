// Kernel mutants: each is kdev::Faithful with one function replaced, instantiated into the real
// kernels by MutantExecutor (the host executor's run_path on the sandboxed backend). They are
// spread over a few translation units because every Hooks type instantiates every kernel for every
// head_dim and fp8 format.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pmqa/gauntlet/gauntlet.hpp"
#include "pmqa/gauntlet/sandbox.hpp"

namespace pmqa::gauntlet::detail {

template <class Hooks, class Backend = SandboxBackend>
KernelFactory factory(std::string name) {
  return [name = std::move(name)](const kernels::HostExecutorOptions& o) -> std::unique_ptr<kernels::Executor> {
    return std::make_unique<MutantExecutor<Hooks, Backend>>(name, o);
  };
}

inline Mutant kernel_mutant(int bug_class, std::string name, std::string bug, std::string seen_in, std::string planted,
                            KernelFactory make) {
  Mutant m;
  m.bug_class = bug_class;
  m.name = std::move(name);
  m.kind = MutantKind::kernel;
  m.bug = std::move(bug);
  m.seen_in = std::move(seen_in);
  m.planted = std::move(planted);
  m.kernel = std::move(make);
  return m;
}

void add_codec_mutants(std::vector<Mutant>& out);     // classes 3, 4
void add_layout_mutants(std::vector<Mutant>& out);    // classes 5, 6
void add_length_mutants(std::vector<Mutant>& out);    // classes 7, 8
void add_schedule_mutants(std::vector<Mutant>& out);  // classes 9, 10
void add_other_mutants(std::vector<Mutant>& out);     // dispatch (1, 2), checker and CI (11)

}  // namespace pmqa::gauntlet::detail
