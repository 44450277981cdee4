// How a path runs, written once for every executor: a Backend (host fibers or HIP) supplies
// memory, copies and launches; Hooks pick the kernels' indexing (Faithful in production, a mutant
// in detection tests); Tuning the fused-mma kernels' tunables and probe (fused_mma/tuning.hpp: Shipped in
// production, a probe in bench/probes/). Included by the host executor (g++) and the GPU executor
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

#include "pmqa/kernels/executor.hpp"
#include "pmqa_kernels/fused_mfma/kernel.hpp"
#include "pmqa_kernels/fused_scalar/kernel.hpp"
#include "pmqa_kernels/fused_mma/mma_sync.hpp"
#include "pmqa_kernels/fused_mma/wgmma.hpp"
#include "pmqa_kernels/two_stage/kernel.hpp"

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

// A persistent fused-mma grid of `blocks` CTAs of `units_per_block` share units (schedule/chunk_work.hpp)
// each, capped so the units' 32-bit share arithmetic stays exact.
inline std::int64_t share_units(std::int64_t blocks, std::int64_t units_per_block) {
  return std::max<std::int64_t>(1, std::min<std::int64_t>(blocks, kdev::kMaxShareUnits / units_per_block));
}

inline void check_supported(const Case& c) {
  if (std::find(std::begin(kSupportedHeadDims), std::end(kSupportedHeadDims), c.head_dim) == std::end(kSupportedHeadDims))
    throw KernelError("head_dim = " + std::to_string(c.head_dim) + " is not supported by the kernels (32, 64 or 128)");
  if (c.batch > 65535) throw KernelError("batch = " + std::to_string(c.batch) + " exceeds the grid's y limit 65535");
  // 2^36 output cells (256 GiB of fp32) is past any GPU's memory; below it the kernels number a
  // launch's chunks and -inf pieces in 32 bits (schedule/chunk_work.hpp).
  if (c.max_model_len > 0 && c.rows() > ((std::int64_t{1} << 36) - 1) / c.max_model_len)  // rows * cells >= 2^36
    throw KernelError("B*N x max_model_len = " + std::to_string(c.rows()) + " x " + std::to_string(c.max_model_len) +
                      " output cells exceed the kernels' limit of 2^36");
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

// Why a case cannot take a matrix-unit variant (fused-mma, fused-mfma) on this backend, or ""
// when it can. Both take the same shapes (fused_mfma/key_chunks.hpp).
inline std::string matrix_unfit(const Case& c, const std::string& kernel, bool backend_has_it, const char* needs) {
  if (!backend_has_it) return "the executor has no " + std::string(needs);
  if (c.head_dim != kdev::kMmaD) return kernel + " takes head_dim 128 (got " + std::to_string(c.head_dim) + ")";
  if (c.heads != 32 && c.heads != 64 && c.heads != 128)
    return kernel + " takes heads 32, 64 or 128 (got " + std::to_string(c.heads) + ")";
  if (c.block_stride % 4 != 0)
    return kernel + " copies 4- or 16-byte segments: block_stride must be a multiple of 4 (got " + std::to_string(c.block_stride) + ")";
  return "";
}
inline constexpr const char* kNeedsMma = "fp8 mma.sync (NVIDIA sm_89+, or the host executor at wave 32)";
inline constexpr const char* kNeedsMfma = "fp8 MFMA in the case's format (gfx942 FNUZ, gfx950 OCP, or the host executor at wave 64)";

// Blocks for a grid-stride kernel over `count` items: enough to fill the device, never more
// than the items need (the kernel loops over the rest).
inline std::int64_t flat_blocks(std::int64_t count, std::int64_t resident_blocks) {
  const std::int64_t needed = (count + kdev::kFlatThreads - 1) / kdev::kFlatThreads;
  return std::max<std::int64_t>(1, std::min(needed, resident_blocks));
}

// One case's inputs on the device, with the output (and per-head) buffers allocated: launch()
// runs the path once. run_path uses it for checks; the GPU benchmark times launch() alone.
template <class Backend, class Hooks = kdev::Faithful, class Tuning = kdev::Shipped>
class PreparedRun {
 public:
  PreparedRun(Backend& be, Path path, const Case& c, const RunOptions& o)
      : be_(be), path_(path), c_(c),
        q_(be, c.q), kv_(be, c.kv_cache), weights_(be, c.weights), lens_(be, c.context_lens), table_(be, c.block_table),
        host_out_(c.rows(), c.max_model_len, o.row_pad, o.guard),
        out_(be, host_out_.storage().size()) {
    p_.q = q_.get();
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
    if (path == Path::fused) {
      // Asked for, or the executor's own matrix variant when the variant is automatic.
      const FusedVariant want = o.variant == FusedVariant::automatic ? be.automatic_variant(c) : o.variant;
      std::string unfit;
      if (want == FusedVariant::mma) unfit = matrix_unfit(c, "fused-mma", be.has_fp8_mma(), kNeedsMma);
      if (want == FusedVariant::mfma) unfit = matrix_unfit(c, "fused-mfma", be.has_fp8_mfma(c.fp8), kNeedsMfma);
      if (o.variant != FusedVariant::automatic && !unfit.empty())
        throw KernelError(std::string(to_string(o.variant)) + " asked for, but " + unfit);
      variant_ = unfit.empty() ? want : FusedVariant::scalar;
      kernel_ = variant_ == FusedVariant::mma ? "fused-mma" : variant_ == FusedVariant::mfma ? "fused-mfma" : "fused-scalar";
      if (variant_ == FusedVariant::mma) wgmma_ = pick_wgmma(be, c, o.mma_instruction);
      else if (o.mma_instruction != MmaInstruction::automatic && o.variant == FusedVariant::mma)
        throw KernelError("an mma instruction was asked for, but fused-mma does not run: " + unfit);
      reason_ = variant_ != FusedVariant::scalar    ? "fp8 matrix instructions available and the case fits them"
                : o.variant == FusedVariant::scalar ? "asked for the portable kernel"
                : !unfit.empty()                    ? unfit
                                                    : "the executor has no fp8 matrix variant (see kernel docs)";
    } else {
      kernel_ = "two-stage";
      reason_ = "the two-stage path was asked for";
    }
    if (wgmma_) use_key_map(c);
    if (path == Path::two_stage && !empty()) {
      per_head_ = std::make_unique<DeviceArray<Backend, float>>(be, static_cast<std::size_t>(c.heads * c.rows() * c.max_model_len));
      p_.per_head = per_head_->get();
    }
  }

  // fused-mma's instruction: wgmma when asked for or, automatically, where the backend has it and
  // the case is OCP (wgmma takes no FNUZ; the mma.sync kernel decodes either format exactly).
  static bool pick_wgmma(const Backend& be, const Case& c, MmaInstruction asked) {
    const bool ocp = c.fp8 == Fp8Format::e4m3fn;
    if (asked == MmaInstruction::wgmma) {
      if (!be.has_wgmma()) throw KernelError("wgmma asked for, but the executor has none (sm_90 with sm_90a code, or the host executor at wave 32)");
      if (!ocp) throw KernelError("wgmma asked for, but it takes OCP e4m3 only and the case is FNUZ");
      return true;
    }
    return asked == MmaInstruction::automatic && be.has_wgmma() && ocp;
  }

  // The wgmma kernel's key copies: one tensor-map copy per chunk where the cache allows it (the
  // plain layout, whole 64-key boxes inside a block, 16-byte strides and base, block numbers in 32
  // bits) and the backend can encode the map; cp.async by every thread otherwise.
  void use_key_map(const Case& c) {
    const auto base = reinterpret_cast<std::uintptr_t>(kv_.get());
    const std::int64_t blocks = c.block_stride > 0 ? static_cast<std::int64_t>(c.kv_cache.size()) / c.block_stride : 0;
    if (c.layout != KvLayout::normal || c.block_size % kdev::kChunkKeys != 0 || c.block_stride % 16 != 0 || base % 16 != 0 ||
        blocks < 1 || blocks > std::numeric_limits<std::int32_t>::max())
      return;
    if (const auto map = be_.key_map({kv_.get(), c.block_stride, c.block_size, blocks, kdev::kChunkKeys})) {
      key_map_ = *map;
      p_.key_tma = 1;
    }
  }

  bool empty() const noexcept { return c_.rows() == 0 || c_.max_model_len == 0; }
  const std::string& kernel() const noexcept { return kernel_; }
  // "wgmma" or "mma.sync" when fused-mma runs, else "".
  std::string instruction() const { return variant_ != FusedVariant::mma ? "" : wgmma_ ? "wgmma" : "mma.sync"; }
  // How fused-mma copies key chunks: "tensor-map" (the wgmma kernel's TMA copies) or "cp.async",
  // else "".
  std::string key_copies() const { return variant_ != FusedVariant::mma ? "" : p_.key_tma != 0 ? "tensor-map" : "cp.async"; }
  const std::string& kernel_reason() const noexcept { return reason_; }

  // Fills the device output (guards included) with the sentinel.
  void poison() {
    host_out_.poison();
    out_.upload(host_out_.storage());
  }

  // Launches the path's kernels (asynchronously on a GPU).
  void launch() {
    if (empty()) return;
    const Case& c = c_;
    const std::int64_t rows = c.rows();
    const std::int64_t tiles = (c.max_model_len + kdev::kKeysPerBlock - 1) / kdev::kKeysPerBlock;
    const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(c.batch));
    if (path_ == Path::fused && variant_ != FusedVariant::scalar) {
      // fused-mma: a persistent grid (its warps split the live chunks); fused-mfma: a block per
      // range of 8 chunks of one sequence.
      const dim3 mfma_grid(static_cast<unsigned>((c.max_model_len + kdev::kMmaKeysPerCta - 1) / kdev::kMmaKeysPerCta),
                           static_cast<unsigned>(c.batch));
      const bool fnuz = c.fp8 == Fp8Format::e4m3fnuz;
      const bool nv = variant_ == FusedVariant::mma;
      // 128, 64 or 32 query rows per launch (whole next_n values): the rows go in the largest
      // pieces that fit; H in {32, 64, 128} makes every N*H a sum of them.
      for (std::int64_t n0 = 0; n0 < c.next_n;) {
        const std::int64_t left = (c.next_n - n0) * c.heads;
        const std::int64_t piece = left >= 128 ? 128 : left >= 64 ? 64 : 32;
        kdev::LogitsParams q = p_;
        q.mma_n_begin = n0;
        q.mma_n_count = piece / c.heads;
        n0 += q.mma_n_count;
        auto pick = [&](auto launcher, auto k32, auto k64, auto k128) {
          if (piece == 128) launcher(k128);
          else if (piece == 64) launcher(k64);
          else launcher(k32);
        };
        auto mma = [&](auto fn) {
          const dim3 mma_grid(static_cast<unsigned>(share_units(be_.persistent_blocks(kdev::kMmaCtasPerSm), kdev::kMmaWarps)));
          be_.launch_shared("fused_mma_kernel", fn, mma_grid, dim3(kdev::kMmaThreads), sizeof(kdev::MmaShared), q);
        };
        auto wgmma = [&](auto fn) {
          const dim3 wg_grid(static_cast<unsigned>(share_units(be_.persistent_blocks(piece == 128 ? kdev::kWgCtasPerSm<128> : kdev::kWgCtasPerSm<64>), 1)));
          const std::size_t shared = piece == 128 ? sizeof(kdev::WgSharedSpace<128>) : sizeof(kdev::WgSharedSpace<64>);
          be_.launch_shared("fused_wgmma_kernel", fn, wg_grid, dim3(kdev::kWgThreads), shared, q, key_map_);
        };
        if (wgmma_ && p_.key_tma != 0) {
          pick(wgmma, kdev::fused_wgmma_kernel<Hooks, typename Tuning::Wgmma, 32, true>, kdev::fused_wgmma_kernel<Hooks, typename Tuning::Wgmma, 64, true>,
               kdev::fused_wgmma_kernel<Hooks, typename Tuning::Wgmma, 128, true>);
          continue;
        }
        if (wgmma_) {
          pick(wgmma, kdev::fused_wgmma_kernel<Hooks, typename Tuning::Wgmma, 32, false>, kdev::fused_wgmma_kernel<Hooks, typename Tuning::Wgmma, 64, false>,
               kdev::fused_wgmma_kernel<Hooks, typename Tuning::Wgmma, 128, false>);
          continue;
        }
        auto mfma = [&](auto fn) { be_.launch("fused_mfma_kernel", fn, mfma_grid, dim3(kdev::kMfmaThreads), q); };
        if (nv && fnuz)
          pick(mma, kdev::fused_mma_kernel<Hooks, typename Tuning::MmaSync, true, 32>, kdev::fused_mma_kernel<Hooks, typename Tuning::MmaSync, true, 64>,
               kdev::fused_mma_kernel<Hooks, typename Tuning::MmaSync, true, 128>);
        if (nv && !fnuz)
          pick(mma, kdev::fused_mma_kernel<Hooks, typename Tuning::MmaSync, false, 32>, kdev::fused_mma_kernel<Hooks, typename Tuning::MmaSync, false, 64>,
               kdev::fused_mma_kernel<Hooks, typename Tuning::MmaSync, false, 128>);
        if (!nv && fnuz)
          pick(mfma, kdev::fused_mfma_kernel<Hooks, true, 32>, kdev::fused_mfma_kernel<Hooks, true, 64>,
               kdev::fused_mfma_kernel<Hooks, true, 128>);
        if (!nv && !fnuz)
          pick(mfma, kdev::fused_mfma_kernel<Hooks, false, 32>, kdev::fused_mfma_kernel<Hooks, false, 64>,
               kdev::fused_mfma_kernel<Hooks, false, 128>);
      }
      return;
    }
    if (path_ == Path::fused) {
      with_instance(c, [&]<int kD, bool kFnuz>() {
        be_.launch("fused_logits_kernel", kdev::fused_logits_kernel<Hooks, kD, kFnuz>, grid, dim3(kdev::kFusedThreads), p_);
      });
      return;
    }
    const std::int64_t cells = c.heads * rows * c.max_model_len;
    be_.launch("fill_minus_infinity_kernel", kdev::fill_minus_infinity_kernel<Hooks>,
               dim3(static_cast<unsigned>(flat_blocks(cells, be_.resident_blocks()))), dim3(kdev::kFlatThreads), p_.per_head,
               cells);
    with_instance(c, [&]<int kD, bool kFnuz>() {
      be_.launch("stage1_kernel", kdev::stage1_kernel<Hooks, kD, kFnuz>, grid, dim3(kdev::kFusedThreads), p_);
    });
    be_.launch("head_sum_kernel", kdev::head_sum_kernel<Hooks>,
               dim3(static_cast<unsigned>(flat_blocks(rows * c.max_model_len, be_.resident_blocks()))),
               dim3(kdev::kFlatThreads), p_);
  }

  // Waits for the device and copies the whole output buffer (guards included) back.
  OutputBuffer& download() {
    be_.synchronize();
    out_.download(host_out_.storage());
    return host_out_;
  }

 private:
  Backend& be_;
  Path path_;
  const Case& c_;
  DeviceArray<Backend, std::uint8_t> q_, kv_;
  DeviceArray<Backend, float> weights_;
  DeviceArray<Backend, std::int32_t> lens_, table_;
  OutputBuffer host_out_;
  DeviceArray<Backend, float> out_;
  std::unique_ptr<DeviceArray<Backend, float>> per_head_;
  kdev::LogitsParams p_;
  FusedVariant variant_ = FusedVariant::scalar;
  bool wgmma_ = false;
  kdev::KeyMap key_map_;  // meaningful when p_.key_tma
  std::string kernel_, reason_;
};

// Validates the case, runs the path `o.launches` times on a freshly poisoned output, and
// compares every relaunch bitwise with the first (races show up as run-to-run differences).
template <class Backend, class Hooks = kdev::Faithful, class Tuning = kdev::Shipped>
RunResult run_path(Backend& be, Path path, const Case& c, const RunOptions& o) {
  if (!is_kernel_path(path)) throw KernelError("the kernels run the fused and two-stage paths, not " + std::string(to_string(path)));
  validate(c);
  check_supported(c);
  PreparedRun<Backend, Hooks, Tuning> prepared(be, path, c, o);
  RunResult result;
  result.launches = std::max(1, o.launches);
  result.kernel = prepared.kernel();
  result.kernel_reason = prepared.kernel_reason();
  result.instruction = prepared.instruction();
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
