// How a path runs, written once for every executor: a Backend (host fibers or HIP) supplies
// memory, copies and launches; Hooks pick the kernels' indexing (Faithful in production, a mutant
// in detection tests). Included by the host executor (g++) and the GPU executor (nvcc / hipcc).
#pragma once

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "pmqa/kernels/executor.hpp"
#include "pmqa_kernels/two_stage.hpp"

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

inline void check_supported(const Case& c) {
  if (std::find(std::begin(kSupportedHeadDims), std::end(kSupportedHeadDims), c.head_dim) == std::end(kSupportedHeadDims))
    throw KernelError("head_dim = " + std::to_string(c.head_dim) + " is not supported by the kernels (32, 64 or 128)");
  if (c.batch > 65535) throw KernelError("batch = " + std::to_string(c.batch) + " exceeds the grid's y limit 65535");
}

// Calls f.template operator()<kD, kFnuz>() for the case's head_dim and fp8 format.
template <class F>
void with_instance(const Case& c, F&& f) {
  const bool fnuz = c.fp8 == Fp8Format::e4m3fnuz;
  switch (c.head_dim) {
    case 32: fnuz ? f.template operator()<32, true>() : f.template operator()<32, false>(); break;
    case 64: fnuz ? f.template operator()<64, true>() : f.template operator()<64, false>(); break;
    case 128: fnuz ? f.template operator()<128, true>() : f.template operator()<128, false>(); break;
    default: check_supported(c);
  }
}

// Blocks for a grid-stride kernel over `count` items: enough to fill the device, never more
// than the items need (the kernel loops over the rest).
inline std::int64_t flat_blocks(std::int64_t count, std::int64_t resident_blocks) {
  const std::int64_t needed = (count + kdev::kFlatThreads - 1) / kdev::kFlatThreads;
  return std::max<std::int64_t>(1, std::min(needed, resident_blocks));
}

template <class Backend, class Hooks = kdev::Faithful>
RunResult run_path(Backend& be, Path path, const Case& c, const RunOptions& o) {
  validate(c);
  check_supported(c);
  DeviceArray<Backend, std::uint8_t> q(be, c.q), kv(be, c.kv_cache);
  DeviceArray<Backend, float> weights(be, c.weights);
  DeviceArray<Backend, std::int32_t> lens(be, c.context_lens), table(be, c.block_table);

  RunResult result;
  result.out = OutputBuffer(c.rows(), c.max_model_len, o.row_pad, o.guard);
  DeviceArray<Backend, float> out(be, result.out.storage().size());

  kdev::LogitsParams p;
  p.q = q.get();
  p.kv = kv.get();
  p.weights = weights.get();
  p.context_lens = lens.get();
  p.block_table = table.get();
  p.out = out.get() + o.guard;
  p.out_row_stride = result.out.row_stride();
  p.batch = c.batch;
  p.next_n = c.next_n;
  p.heads = c.heads;
  p.head_dim = c.head_dim;
  p.block_size = c.block_size;
  p.block_stride = c.block_stride;
  p.max_blocks_per_seq = c.max_blocks_per_seq;
  p.max_model_len = c.max_model_len;
  p.context_lens_2d = c.context_lens_2d ? 1 : 0;
  p.shuffle = c.layout == KvLayout::shuffle ? 1 : 0;

  const std::int64_t rows = c.rows();
  const std::int64_t tiles = (c.max_model_len + kdev::kKeysPerBlock - 1) / kdev::kKeysPerBlock;
  const bool empty = rows == 0 || c.max_model_len == 0;
  std::vector<float> per_head_host;
  std::unique_ptr<DeviceArray<Backend, float>> per_head;
  if (path == Path::two_stage && !empty) {
    per_head = std::make_unique<DeviceArray<Backend, float>>(be, static_cast<std::size_t>(c.heads * rows * c.max_model_len));
    p.per_head = per_head->get();
  }

  auto launch_once = [&] {
    if (empty) return;
    const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(c.batch));
    if (path == Path::fused) {
      with_instance(c, [&]<int kD, bool kFnuz>() {
        be.launch("fused_logits_kernel", kdev::fused_logits_kernel<Hooks, kD, kFnuz>, grid, dim3(kdev::kFusedThreads), p);
      });
      return;
    }
    const std::int64_t cells = c.heads * rows * c.max_model_len;
    be.launch("fill_minus_infinity_kernel", kdev::fill_minus_infinity_kernel,
              dim3(static_cast<unsigned>(flat_blocks(cells, be.resident_blocks()))), dim3(kdev::kFlatThreads), p.per_head, cells);
    with_instance(c, [&]<int kD, bool kFnuz>() {
      be.launch("stage1_kernel", kdev::stage1_kernel<Hooks, kD, kFnuz>, grid, dim3(kdev::kFusedThreads), p);
    });
    be.launch("head_sum_kernel", kdev::head_sum_kernel<Hooks>,
              dim3(static_cast<unsigned>(flat_blocks(rows * c.max_model_len, be.resident_blocks()))), dim3(kdev::kFlatThreads), p);
  };

  const int launches = std::max(1, o.launches);
  std::vector<float> again;
  for (int i = 0; i < launches; ++i) {
    std::vector<float>& dst = i == 0 ? result.out.storage() : again;
    if (i > 0) again.assign(result.out.storage().size(), sentinel());
    out.upload(i == 0 ? result.out.storage() : again);  // poisoned before every launch
    launch_once();
    be.synchronize();
    out.download(dst);
    if (i == 0) continue;
    const auto& first = result.out.storage();
    for (std::size_t k = 0; k < first.size(); ++k) {
      if (std::memcmp(&first[k], &again[k], sizeof(float)) == 0) continue;
      if (result.first_differing < 0) result.first_differing = static_cast<std::int64_t>(k);
      ++result.differing_cells;
    }
  }
  result.launches = launches;
  return result;
}

}  // namespace pmqa::kernels::detail
