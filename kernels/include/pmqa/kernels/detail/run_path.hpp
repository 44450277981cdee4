// How a path runs, written once for every executor: a Backend (host fibers or HIP) supplies
// memory, copies, launches and the device's capabilities; the kernel list (kernel_list.hpp) picks
// the kernel; Hooks pick the kernels' indexing (Faithful in production, a mutant in detection
// tests); Tuning the tunables and probe of the kernels that have them (fused-mma's,
// fused_mma/tuning.hpp: Shipped in production, a probe in bench/probes/). Included by the host executor (g++) and the GPU executor
// (nvcc / hipcc).
#pragma once

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pmqa/kernels/detail/kernel_list.hpp"
#include "pmqa/kernels/executor.hpp"

namespace pmqa::kernels::detail {

// A device allocation owned by a backend; freed on scope exit.
template <class Backend, class T>
class DeviceArray {
 public:
  DeviceArray(Backend& be, std::size_t count) : be_(be), count_(count) {
    ptr_ = static_cast<T*>(be_.allocate(std::max<std::size_t>(1, count) * sizeof(T)));
  }
  DeviceArray(Backend& be, const std::vector<T>& host) : DeviceArray(be, host.size()) { upload(host); }
  ~DeviceArray() { be_.release(ptr_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  void upload(const std::vector<T>& host) { if (!host.empty()) be_.copy_to_device(ptr_, host.data(), host.size() * sizeof(T)); }
  void download(std::vector<T>& host) const { if (!host.empty()) be_.copy_to_host(host.data(), ptr_, host.size() * sizeof(T)); }
  T* get() const noexcept { return ptr_; }

 private:
  Backend& be_;
  std::size_t count_;
  T* ptr_ = nullptr;
};

// One case's inputs on the device, with the output (and per-head) buffers allocated and the
// kernel chosen: launch() runs it once. run_path uses it for checks; the GPU benchmark times
// launch() alone.
template <class Backend, class Hooks = kdev::Faithful, class Tuning = kdev::Shipped>
class PreparedRun {
 public:
  PreparedRun(Backend& be, Path path, const Case& c, const RunOptions& o)
      : be_(be), c_(c), kernel_(choose_kernel<Hooks, Tuning, Backend>(path, c, be.caps(), o.kernel)),
        q_(be, c.q), q_scales_(be, c.q_scales), kv_(be, c.kv_cache), weights_(be, c.weights), lens_(be, c.context_lens), table_(be, c.block_table),
        host_out_(c.rows(), c.max_model_len, o.row_pad, o.guard),
        out_(be, host_out_.storage().size()) {
    p_.q = q_.get();
    p_.q_scales = q_scales_.get();  // e2m1; a 1-byte placeholder for fp8
    p_.kv = kv_.get();
    p_.weights = weights_.get();
    p_.context_lens = lens_.get();
    p_.block_table = table_.get();
    p_.out = out_.get() + o.guard;
    p_.out_row_stride = host_out_.row_stride();
    p_.batch = c.batch;
    p_.next_n = c.next_n;
    p_.heads = c.heads;
    p_.head_dim = c.head_dim;
    p_.block_size = c.block_size;
    p_.block_stride = c.block_stride;
    p_.max_blocks_per_seq = c.max_blocks_per_seq;
    p_.max_model_len = c.max_model_len;
    p_.block_shift = std::has_single_bit(static_cast<std::uint64_t>(c.block_size))
                         ? std::countr_zero(static_cast<std::uint64_t>(c.block_size))
                         : -1;
    p_.context_lens_2d = c.context_lens_2d ? 1 : 0;
    p_.shuffle = c.layout == KvLayout::shuffle ? 1 : 0;
    p_.interleaved = c.layout == KvLayout::interleaved ? 1 : 0;
    if (kernel_.key_map_fits) use_key_map(c);
    if (kernel_.per_head_buffer && !empty()) {
      per_head_ = std::make_unique<DeviceArray<Backend, float>>(be, static_cast<std::size_t>(c.heads * c.rows() * c.max_model_len));
      p_.per_head = per_head_->get();
    }
  }

  // A tensor map of the keys, for a kernel that can read them through one, where the case's cache
  // allows it and its block numbers fit 32 bits, the base is 16-byte aligned, and the backend
  // encodes the map.
  void use_key_map(const Case& c) {
    const auto base = reinterpret_cast<std::uintptr_t>(kv_.get());
    const std::int64_t blocks = c.block_stride > 0 ? static_cast<std::int64_t>(c.kv_cache.size()) / c.block_stride : 0;
    if (!kernel_.key_map_fits(c) || base % 16 != 0 || blocks < 1 || blocks > std::numeric_limits<std::int32_t>::max()) return;
    if (const auto map = be_.key_map({kv_.get(), c.block_stride, c.block_size, blocks, kdev::kChunkKeys})) {
      key_map_ = *map;
      p_.key_tma = 1;
    }
  }

  bool empty() const noexcept { return c_.rows() == 0 || c_.max_model_len == 0; }
  KernelId kernel() const noexcept { return kernel_.id; }
  const std::string& kernel_reason() const noexcept { return kernel_.reason; }
  // How a kernel that can read keys through a tensor map copies them: "tensor-map" or "cp.async";
  // "" for the others.
  std::string key_copies() const { return !kernel_.key_map_fits ? "" : p_.key_tma != 0 ? "tensor-map" : "cp.async"; }

  // Fills the device output (guards included) with the sentinel.
  void poison() {
    host_out_.poison();
    out_.upload(host_out_.storage());
  }

  // Launches the kernel (asynchronously on a GPU).
  void launch() {
    if (!empty()) kernel_.launch(be_, LaunchArgs{c_, p_, key_map_});
  }

  // Waits for the device and copies the whole output buffer (guards included) back.
  OutputBuffer& download() {
    be_.synchronize();
    out_.download(host_out_.storage());
    return host_out_;
  }

 private:
  Backend& be_;
  const Case& c_;
  ChosenKernel<Backend> kernel_;
  DeviceArray<Backend, std::uint8_t> q_, q_scales_, kv_;
  DeviceArray<Backend, float> weights_;
  DeviceArray<Backend, std::int32_t> lens_, table_;
  OutputBuffer host_out_;
  DeviceArray<Backend, float> out_;
  std::unique_ptr<DeviceArray<Backend, float>> per_head_;
  kdev::LogitsParams p_;
  kdev::KeyMap key_map_;  // meaningful when p_.key_tma
};

// Validates the case, runs the path `o.launches` times on a freshly poisoned output, and
// compares every relaunch bitwise with the first (races show up as run-to-run differences).
template <class Backend, class Hooks = kdev::Faithful, class Tuning = kdev::Shipped>
RunResult run_path(Backend& be, Path path, const Case& c, const RunOptions& o) {
  if (!is_kernel_path(path)) throw KernelError("the kernels run the fused and two-stage paths, not " + std::string(to_string(path)));
  validate(c);
  if (const std::string why = unsupported_shape(c); !why.empty()) throw KernelError(why);
  PreparedRun<Backend, Hooks, Tuning> prepared(be, path, c, o);
  RunResult result;
  result.launches = std::max(1, o.launches);
  result.kernel = prepared.kernel();
  result.kernel_reason = prepared.kernel_reason();
  result.key_copies = prepared.key_copies();
  for (int i = 0; i < result.launches; ++i) {
    prepared.poison();
    prepared.launch();
    OutputBuffer& out = prepared.download();
    if (i == 0) {
      // A single launch hands its buffer over (outputs past 2^31 bytes are gigabytes).
      if (result.launches == 1) result.out = std::move(out);
      else result.out = out;
      continue;
    }
    const auto& first = result.out.storage();
    const auto& again = out.storage();
    for (std::size_t k = 0; k < first.size(); ++k) {
      if (std::memcmp(&first[k], &again[k], sizeof(float)) == 0) continue;
      if (result.first_differing < 0) result.first_differing = static_cast<std::int64_t>(k);
      ++result.differing_cells;
    }
  }
  return result;
}

}  // namespace pmqa::kernels::detail
