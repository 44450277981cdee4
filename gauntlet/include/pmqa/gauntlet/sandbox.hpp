// Running a mutant kernel on the host without letting its bug take the test process down.
//
// A mutant reads and writes where the real kernel never does: a table entry of -1 that only an
// off-by-one rule reaches, an output offset that wrapped past 2^31 bytes to 2 GiB before the
// buffer. On a GPU that is an illegal-address fault or, through AMD's buffer instructions, a load
// of 0 and a dropped store. SandboxBackend is the host executor's backend with one change: every
// device buffer sits in the middle of a larger mapping (MAP_NORESERVE, so the slack costs address
// space, not memory), so such accesses read zero pages and write into slack that nothing checks,
// as the buffer instructions would. The kernels, run_path, the launches and the scheduler are the
// host executor's own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "pmqa/checks/finding.hpp"
#include "pmqa/kernels/lab_host.hpp"

namespace pmqa::gauntlet {

// The sandbox itself failed (no address space for its mapping): an error of the harness, never a
// detection. The checks let it through instead of counting it against the kernel under test.
class SandboxError : public checks::HarnessError {
 public:
  using checks::HarnessError::HarnessError;
};

class SandboxBackend : public kernels::lab::HostBackend {
 public:
  // Slack on each side of a buffer: at least this, and at least the buffer's own size (an offset
  // that wrapped past 2^31 bytes lands up to 2 GiB before the buffer it was meant for).
  static constexpr std::size_t kMinSlack = std::size_t{256} << 20;

  explicit SandboxBackend(const kernels::HostExecutorOptions& o) : HostBackend(o) {}
  ~SandboxBackend();
  SandboxBackend(const SandboxBackend&) = delete;
  SandboxBackend& operator=(const SandboxBackend&) = delete;

  void* allocate(std::size_t bytes);
  void release(void* p) noexcept;

 private:
  struct Mapping {
    void* base;
    std::size_t length;
  };
  std::unordered_map<void*, Mapping> mappings_;
};

// The host executor with mutant Hooks (and optionally another backend): the real kernels and
// run_path with one bug injected.
template <class Hooks, class Backend = SandboxBackend>
class MutantExecutor final : public kernels::Executor {
 public:
  // Rejects a bad warp size or emulated device now, as the host executor does.
  MutantExecutor(std::string mutant, const kernels::HostExecutorOptions& o)
      : mutant_(std::move(mutant)), options_(o), caps_(kernels::lab::emulated_caps(o)) {}
  std::string name() const override { return "host-w" + std::to_string(caps_.wave_size) + " [" + mutant_ + "]"; }
  std::string arch() const override { return "host"; }
  int warp_size() const override { return caps_.wave_size; }
  DeviceCaps caps() const override { return caps_; }
  kernels::RunResult run(Path path, const Case& c, const kernels::RunOptions& o) override {
    Backend be(options_);
    return kernels::lab::run_path<Backend, Hooks>(be, path, c, o);
  }

 private:
  std::string mutant_;
  kernels::HostExecutorOptions options_;
  DeviceCaps caps_;
};

// The executor every kernel mutant runs on, with production Hooks: what a mutant changes is then the
// mutant's doing (the unit tests check its outputs are bit-identical to the host executor's).
std::unique_ptr<kernels::Executor> make_sandboxed_executor(const kernels::HostExecutorOptions& o);

}  // namespace pmqa::gauntlet
