// The host executor's backend for run_path: host memory, memcpy, and launches through the fiber
// runtime. A header so detection tests can run the real kernels with mutant Hooks on it.
#pragma once

#include <algorithm>
#include <cstring>
#include <new>
#include <optional>
#include <thread>

#include "pmqa/kernels/detail/run_path.hpp"
#include "pmqa/kernels/host/runtime.hpp"

namespace pmqa::kernels::detail {

// The device the host emulates: the one asked for, else host_caps(warp_size). The emulations are
// written for a wave size each: NVIDIA's fp8 mma.sync fragments and Hopper's wgmma (a warpgroup of
// 4 warps) for a warp of 32, AMD's fp8 MFMA for a wave of 64 (either fp8 format).
inline DeviceCaps emulated_caps(const HostExecutorOptions& o) {
  const DeviceCaps d = o.emulate ? *o.emulate : host_caps(o.warp_size);
  if (d.wave_size != 32 && d.wave_size != 64)
    throw KernelError("host executor: warp_size " + std::to_string(d.wave_size) + " (expected 32 or 64)");
  // Each matrix instruction's emulation is written for the wave size the instruction runs at.
  for (const MatrixKind k : d.matrix)
    if (wave_size_of(k) != d.wave_size)
      throw KernelError("host executor: the " + std::string(to_string(k)) + " emulation runs at wave " +
                        std::to_string(wave_size_of(k)) + " (asked: " + d.describe() + ")");
  return d;
}

class HostBackend {
 public:
  explicit HostBackend(const HostExecutorOptions& o)
      : options_(o), caps_(emulated_caps(o)),
        threads_(o.os_threads > 0 ? o.os_threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))) {}
  const DeviceCaps& caps() const noexcept { return caps_; }
  void* allocate(std::size_t bytes) { return ::operator new(bytes, std::align_val_t{64}); }
  void release(void* p) noexcept { ::operator delete(p, std::align_val_t{64}); }
  void copy_to_device(void* dst, const void* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }
  void synchronize() noexcept {}
  // Grid-stride kernels get a few blocks per OS thread: the host "device" has that many workers.
  std::int64_t resident_blocks() const noexcept { return 4 * threads_; }
  // The wgmma kernel's tensor map of the keys, in the emulation's encoding (arch/nv_tma.hpp).
  std::optional<kdev::KeyMap> key_map(const kdev::KeyMapFields& f) const { return kdev::host_key_map(f); }
  // Persistent kernels: a few blocks per OS thread (several, so work splits between blocks run).
  std::int64_t persistent_blocks(int per_multiprocessor) const noexcept {
    return static_cast<std::int64_t>(per_multiprocessor) * threads_;
  }
  // The host gives PMQA_SHARED_OBJECT its own buffer: the size is not needed.
  template <class... P, class... A>
  void launch_shared(const char* name, void (*kernel)(P...), dim3 grid, dim3 block, std::size_t /*shared_bytes*/,
                     A&&... args) {
    launch(name, kernel, grid, block, std::forward<A>(args)...);
  }

  template <class... P, class... A>
  void launch(const char* name, void (*kernel)(P...), dim3 grid, dim3 block, A&&... args) {
    host::LaunchConfig cfg;
    cfg.grid = grid;
    cfg.block = block;
    cfg.warp_size = caps_.wave_size;
    cfg.os_threads = threads_;
    // A new interleaving for every launch when seeded, so relaunches can expose races.
    cfg.schedule_seed = options_.schedule_seed ? options_.schedule_seed + launches_++ : 0;
    cfg.name = name;
    host::launch(cfg, kernel, std::forward<A>(args)...);
  }

 private:
  HostExecutorOptions options_;
  DeviceCaps caps_;
  int threads_;
  std::uint64_t launches_ = 0;
};

template <class Hooks = kdev::Faithful>
class HostExecutor final : public Executor {
 public:
  explicit HostExecutor(const HostExecutorOptions& o) : options_(o), caps_(emulated_caps(o)) {}
  // "host-w64", or "host-w64 as gfx942" when emulating a table arch.
  std::string name() const override {
    return "host-w" + std::to_string(caps_.wave_size) + (caps_.target == "host" ? "" : " as " + caps_.target);
  }
  std::string arch() const override { return "host"; }
  int warp_size() const override { return caps_.wave_size; }
  DeviceCaps caps() const override { return caps_; }
  RunResult run(Path path, const Case& c, const RunOptions& o) override {
    HostBackend be(options_);
    return run_path<HostBackend, Hooks>(be, path, c, o);
  }

 private:
  HostExecutorOptions options_;
  DeviceCaps caps_;
};

}  // namespace pmqa::kernels::detail
