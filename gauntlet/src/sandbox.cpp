#include "pmqa/gauntlet/sandbox.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <string>

namespace pmqa::gauntlet {
namespace {

std::size_t page_size() {
  static const std::size_t size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

}  // namespace

SandboxBackend::~SandboxBackend() {
  for (auto& [p, m] : mappings_) munmap(m.base, m.length);
}

void* SandboxBackend::allocate(std::size_t bytes) {
  const std::size_t body = round_up(std::max<std::size_t>(bytes, 1), page_size());
  const std::size_t slack = round_up(std::max(kMinSlack, body), page_size());
  const std::size_t length = slack + body + slack;
  void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED)
    throw SandboxError("gauntlet sandbox: mmap of " + std::to_string(length >> 20) + " MiB (MAP_NORESERVE) failed: " +
                       std::strerror(errno) + " (vm.overcommit_memory=2 ignores MAP_NORESERVE)");
  void* p = static_cast<char*>(base) + slack;
  // Gigabyte buffers (the case past 2^31 bytes): huge pages where the kernel allows them cut the
  // page faults of filling them by 512x. Advice only; failure changes nothing.
  if (body >= (std::size_t{64} << 20)) madvise(p, body, MADV_HUGEPAGE);
  mappings_.emplace(p, Mapping{base, length});
  return p;
}

void SandboxBackend::release(void* p) noexcept {
  const auto it = mappings_.find(p);
  if (it == mappings_.end()) return;
  munmap(it->second.base, it->second.length);
  mappings_.erase(it);
}

std::unique_ptr<kernels::Executor> make_sandboxed_executor(const kernels::HostExecutorOptions& o) {
  return std::make_unique<MutantExecutor<kdev::Faithful>>("unmutated", o);
}

}  // namespace pmqa::gauntlet
