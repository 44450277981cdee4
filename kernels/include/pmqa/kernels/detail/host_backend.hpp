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

class HostBackend {
 public:
  explicit HostBackend(const HostExecutorOptions& o)
      : options_(o),
        threads_(o.os_threads > 0 ? o.os_threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))) {
    if (o.warp_size != 32 && o.warp_size != 64)
      throw KernelError("host executor: warp_size " + std::to_string(o.warp_size) + " (expected 32 or 64)");
  }
  void* allocate(std::size_t bytes) { return ::operator new(bytes, std::align_val_t{64}); }
  void release(void* p) noexcept { ::operator delete(p, std::align_val_t{64}); }
  void copy_to_device(void* dst, const void* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }
  void synchronize() noexcept {}
  // Grid-stride kernels get a few blocks per OS thread: the host "device" has that many workers.
  std::int64_t resident_blocks() const noexcept { return 4 * threads_; }
  // The host executor emulates NVIDIA's fp8 mma.sync (fragments for a warp of 32) and AMD's fp8
  // MFMA (a wave of 64), each at its own wave size, in either fp8 format.
  bool has_fp8_mma() const noexcept { return options_.warp_size == 32; }
  bool has_fp8_mfma(Fp8Format) const noexcept { return options_.warp_size == 64; }
  // ... and Hopper's wgmma (a warpgroup of 4 warps of 32).
  bool has_wgmma() const noexcept { return options_.warp_size == 32; }
  // The wgmma kernel's tensor map of the keys, in the emulation's encoding (arch/nv_tma.hpp).
  std::optional<kdev::KeyMap> key_map(const kdev::KeyMapFields& f) const { return kdev::host_key_map(f); }
  // What `automatic` picks: fused-mma at wave 32 (its emulation is CI's cover of that kernel); at
  // wave 64 the portable kernel, the one the host's mutation tests exercise (fused-mfma on request).
  FusedVariant automatic_variant(const Case&) const noexcept {
    return options_.warp_size == 32 ? FusedVariant::mma : FusedVariant::scalar;
  }

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
    cfg.warp_size = options_.warp_size;
    cfg.os_threads = threads_;
    // A new interleaving for every launch when seeded, so relaunches can expose races.
    cfg.schedule_seed = options_.schedule_seed ? options_.schedule_seed + launches_++ : 0;
    cfg.name = name;
    host::launch(cfg, kernel, std::forward<A>(args)...);
  }

 private:
  HostExecutorOptions options_;
  int threads_;
  std::uint64_t launches_ = 0;
};

template <class Hooks = kdev::Faithful>
class HostExecutor final : public Executor {
 public:
  explicit HostExecutor(const HostExecutorOptions& o) : options_(o) { HostBackend check(o); }
  std::string name() const override { return "host-w" + std::to_string(options_.warp_size); }
  std::string arch() const override { return "host"; }
  int warp_size() const override { return options_.warp_size; }
  RunResult run(Path path, const Case& c, const RunOptions& o) override {
    HostBackend be(options_);
    return run_path<HostBackend, Hooks>(be, path, c, o);
  }

 private:
  HostExecutorOptions options_;
};

}  // namespace pmqa::kernels::detail
