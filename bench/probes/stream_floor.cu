// The decode launch's bytes alone: how fast can any kernel be that reads what fused-mma must read
// and writes what it must write, timed the way the GPU benchmark times fused-mma (L2 flushed by the
// benchmark's memset, device events around one launch, median of many)?
//
// The probe reads every live chunk of the DeepSeek-V3.2 decode case (64 keys of 128 fp8 codes plus
// their 64 scales: one block, 8,448 contiguous bytes) through the same shuffled block table, and
// writes every output cell once (the chunks' cells and the -inf tails past them). It computes
// nothing, and its schedule is perfect and free: the host splits the live chunks into equal
// contiguous shares and hands each CTA its list of blocks, so no context length is read and no
// share is searched for in the launch. The bytes move either by 16-byte vector loads marked
// streaming (evict first), several chunks in flight per thread, or by the copy engine (bulk copies
// into a shared ring, evict-first in L2, as fused-mma's keys move). So its time is a floor for the
// fused path under the benchmark's conditions: a fused kernel also finds its schedule, waits for
// its bytes before it multiplies, and folds.
//
// It prints the floor for a few grid shapes, with both of the benchmark's flushes (memset: dirty
// L2 lines; reads: clean), and each half (keys alone, output alone). Compare with fused-mma's time
// in the same run (bench/h200/run.sh prints both). Before a grid is timed, one untimed launch is
// checked (every live chunk's words read once, every cell written): a probe that skipped work
// would report a floor that is not one, so a failed check ends the tool with status 1.
//
//   pmqa_probe_stream_floor [--reps N]
#include <hip/hip_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "pmqa/kernels/lab_hip.hpp"
#include "gpu_timing.hpp"
#include "pmqa_kernels/arch/nv_tma.hpp"

namespace {

using pmqa::bench::decode_case;
using pmqa::bench::L2Flusher;
using pmqa::bench::time_us;
using pmqa::kernels::lab::HipBackend;

// The decode case's block: 64 tokens x (128 codes + 4 scale bytes), read whole (as fused-mma's copies do).
constexpr int kBlockPieces = 64 * (128 + 4) / 16;  // 16-byte pieces
constexpr int kMaxShare = 128;                      // chunks a CTA may hold (the host checks)

// One live chunk: its physical block and where its cells start (row 0 of its sequence's next_n rows).
struct ProbeChunk {
  std::uint32_t block;
  std::uint32_t cell;  // element offset of (row b * next_n, column 64 * logical block)
};

struct ProbeArgs {
  const ProbeChunk* chunks;  // the live chunks, CTA c's share at [share[c], share[c + 1])
  const int* share;
  const unsigned char* cache;
  std::int64_t block_stride;
  float* out;          // [rows, cells]
  const int* live;     // per sequence: 64 x its chunks, the cells its chunks write
  int rows, next_n, cells;
  bool keys, output;   // which half runs (both: the floor)
  bool check;          // the untimed check launch: every thread adds its words' sum to *sum
  unsigned* sum;       // else written only when impossible: keeps the loads
};

// What the check launch adds up (mod 2^32): every 32-bit word of every live chunk's block, once.
__device__ void add_sum(const ProbeArgs& a, unsigned acc) {
  if (a.check) atomicAdd(a.sum, acc);
  else if (acc == 0x5A5A5A5Au) *a.sum = acc;
}

__device__ __forceinline__ uint4 load_streaming(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.cs.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// The -inf tails: every 4 cells of the output past its sequence's chunks, by thread `first` of
// `threads` (the grid's) in a grid-stride pass.
__device__ void write_tails(const ProbeArgs& a, unsigned first, unsigned threads) {
  const float ninf = -__int_as_float(0x7F800000);
  const float4 tail = make_float4(ninf, ninf, ninf, ninf);
  const int quads = a.cells / 4, all = a.rows * quads;  // the host keeps this below 2^31
  for (int i = static_cast<int>(first); i < all; i += static_cast<int>(threads)) {
    const int r = i / quads, j = 4 * (i % quads);
    if (j >= a.live[r / a.next_n]) reinterpret_cast<float4*>(a.out)[i] = tail;
  }
}

// A chunk's cells (16 float4 per row of its sequence), by thread `first` of `threads` (the CTA's).
__device__ void write_chunk(const ProbeArgs& a, const ProbeChunk& c, int first, int threads) {
  for (int i = first; i < 16 * a.next_n; i += threads)
    reinterpret_cast<float4*>(a.out + c.cell + static_cast<std::int64_t>(i >> 4) * a.cells)[i & 15] =
        make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}

// Plain loads: every thread of the CTA loads its 16-byte pieces of kStep chunks at a time.
template <int kThreads, int kStep>
__global__ __launch_bounds__(kThreads) void stream_floor_kernel(ProbeArgs a) {
  constexpr int kPieces = (kBlockPieces + kThreads - 1) / kThreads;
  __shared__ ProbeChunk mine[kMaxShare];
  const int tid = static_cast<int>(threadIdx.x);
  const int begin = a.share[blockIdx.x], n = a.share[blockIdx.x + 1] - begin;
  for (int i = tid; i < n; i += kThreads) mine[i] = a.chunks[begin + i];

  if (a.output) write_tails(a, blockIdx.x * kThreads + tid, gridDim.x * kThreads);
  __syncthreads();

  unsigned acc = 0;
  for (int s = 0; s < n; s += kStep) {
    if (a.keys) {
      uint4 v[kStep][kPieces];
#pragma unroll
      for (int c = 0; c < kStep; ++c) {
        const auto* base = reinterpret_cast<const uint4*>(a.cache + mine[s + c < n ? s + c : s].block * a.block_stride);
#pragma unroll
        for (int k = 0; k < kPieces; ++k) {
          const int p = tid + k * kThreads;
          v[c][k] = s + c < n && p < kBlockPieces ? load_streaming(base + p) : make_uint4(0, 0, 0, 0);
        }
      }
#pragma unroll
      for (int c = 0; c < kStep; ++c)
#pragma unroll
        for (int k = 0; k < kPieces; ++k) acc += v[c][k].x + v[c][k].y + v[c][k].z + v[c][k].w;
    }
    if (a.output)
#pragma unroll
      for (int c = 0; c < kStep; ++c)
        if (s + c < n) write_chunk(a, mine[s + c], tid, kThreads);
  }
  add_sum(a, acc);
}

// The copy engine, as fused-mma moves its keys: lane 0 of warp 0 keeps kStages chunks in flight
// (one bulk copy of the whole block each, evict-first in L2) and refills a stage as soon as its
// chunk has landed; warp 1 writes the tails and the chunks' cells meanwhile, unpaced.
constexpr int kBlockBytes = 16 * kBlockPieces;
template <int kStages>
std::size_t bulk_shared_bytes() {
  return kStages * (kBlockBytes + sizeof(pmqa::kdev::Mbarrier));
}
template <int kStages>
__global__ __launch_bounds__(64) void bulk_floor_kernel(ProbeArgs a) {
  namespace kd = pmqa::kdev;
  extern __shared__ __align__(128) unsigned char ring[];  // kStages blocks, then their barriers
  auto* full = reinterpret_cast<kd::Mbarrier*>(ring + kStages * kBlockBytes);
  __shared__ ProbeChunk mine[kMaxShare];
  const int tid = static_cast<int>(threadIdx.x);
  const int begin = a.share[blockIdx.x], n = a.share[blockIdx.x + 1] - begin;
  for (int i = tid; i < n; i += 64) mine[i] = a.chunks[begin + i];
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) kd::mbar_init(full[s], 1);
    kd::mbar_init_fence();
  }
  __syncthreads();
  if (tid >= 32) {
    if (a.output) {
      write_tails(a, blockIdx.x * 32 + (tid - 32), gridDim.x * 32);
      for (int i = 0; i < n; ++i) write_chunk(a, mine[i], tid - 32, 32);
    }
    return;
  }
  // Timed: lane 0 alone. The check launch: warp 0 adds up each landed block before its stage is
  // refilled (what the copy engine delivered, not what it was asked for).
  if (!a.keys || (tid != 0 && !a.check)) return;
  const std::uint64_t policy = kd::stream_once_policy();
  auto issue = [&](int i) {
    kd::Mbarrier& bar = full[i % kStages];
    kd::mbar_arrive_expect(bar, kBlockBytes);
    kd::bulk_load<true>(ring + (i % kStages) * kBlockBytes, a.cache + mine[i].block * a.block_stride, kBlockBytes, bar, policy);
  };
  unsigned acc = 0;
  if (tid == 0)
    for (int i = 0; i < kStages && i < n; ++i) issue(i);
  for (int i = 0; i < n; ++i) {
    kd::mbar_wait(full[i % kStages], (i / kStages) & 1);
    if (a.check) {
      const auto* words = reinterpret_cast<const unsigned*>(ring + (i % kStages) * kBlockBytes);
      for (int w = tid; w < kBlockBytes / 4; w += 32) acc += words[w];
      __syncwarp();
    }
    if (tid == 0 && i + kStages < n) issue(i + kStages);
  }
  if (a.check) add_sum(a, acc);
}

// The decode case on the device, its live chunks split into `ctas` equal contiguous shares.
struct Probe {
  HipBackend& be;
  ProbeArgs args{};
  int chunks = 0;
  unsigned sum = 0;        // of every word of every live chunk's block, mod 2^32
  std::vector<int> live;   // per sequence: the cells its chunks write
  std::vector<void*> owned;

  template <class T>
  T* upload(const std::vector<T>& v) {
    void* p = be.allocate(std::max<std::size_t>(1, v.size() * sizeof(T)));
    PMQA_HIP_CHECK(hipMemcpy(p, v.data(), v.size() * sizeof(T), hipMemcpyHostToDevice));
    owned.push_back(p);
    return static_cast<T*>(p);
  }

  Probe(const Probe&) = delete;  // it owns device buffers
  Probe& operator=(const Probe&) = delete;
  Probe(HipBackend& backend, const pmqa::Case& c) : be(backend) {
    if (c.block_size != 64 || c.head_dim != 128 || c.max_model_len % 64 != 0 || c.block_stride % 16 != 0 ||
        c.rows() * c.max_model_len >= (std::int64_t{1} << 31))
      throw std::runtime_error("stream floor: the probe reads 64-token blocks of 128 codes, 16-byte aligned, into < 2^31 cells");
    std::vector<ProbeChunk> list;
    for (std::int64_t b = 0; b < c.batch; ++b) {
      std::int64_t blocks = 0;
      for (std::int64_t n = 0; n < c.next_n; ++n) blocks = std::max(blocks, c.blocks_read(b * c.next_n + n));
      for (std::int64_t l = 0; l < blocks; ++l)
        list.push_back({static_cast<std::uint32_t>(c.physical_block(b, l)),
                        static_cast<std::uint32_t>(b * c.next_n * c.max_model_len + 64 * l)});
      live.push_back(static_cast<int>(64 * blocks));
    }
    for (const ProbeChunk& k : list)
      for (std::int64_t w = 0; w < 16 * kBlockPieces; w += 4) {
        unsigned word = 0;
        std::memcpy(&word, &c.kv_cache[static_cast<std::size_t>(k.block * c.block_stride + w)], 4);
        sum += word;
      }
    chunks = static_cast<int>(list.size());
    args.chunks = upload(list);
    args.live = upload(live);
    args.cache = upload(c.kv_cache);
    args.block_stride = c.block_stride;
    args.rows = static_cast<int>(c.rows());
    args.next_n = static_cast<int>(c.next_n);
    args.cells = static_cast<int>(c.max_model_len);
    args.out = static_cast<float*>(be.allocate(static_cast<std::size_t>(c.rows() * c.max_model_len) * sizeof(float)));
    owned.push_back(args.out);
    args.sum = static_cast<unsigned*>(be.allocate(sizeof(unsigned)));
    owned.push_back(args.sum);
  }
  ~Probe() {
    for (void* p : owned) be.release(p);
    if (share_) be.release(share_);
  }
  // Equal contiguous shares for `ctas` CTAs (they differ by one chunk at most), replacing the last.
  void split(int ctas) {
    std::vector<int> share(static_cast<std::size_t>(ctas) + 1);
    for (int i = 0; i <= ctas; ++i) share[i] = static_cast<int>(static_cast<std::int64_t>(chunks) * i / ctas);
    if ((chunks + ctas - 1) / ctas > kMaxShare) throw std::runtime_error("stream floor: a share past kMaxShare chunks");
    if (share_) be.release(share_);
    share_ = static_cast<int*>(be.allocate(share.size() * sizeof(int)));
    PMQA_HIP_CHECK(hipMemcpy(share_, share.data(), share.size() * sizeof(int), hipMemcpyHostToDevice));
    args.share = share_;
  }

 private:
  int* share_ = nullptr;
};

// One untimed launch of the whole probe on poisoned output, then its work checked: the sum of the
// words it read is the host's (every live chunk read once), chunk cells hold 0 and every other
// cell -inf (each written). A probe that skipped work would pass for a floor it is not.
template <class Launch>
void check(Probe& probe, Launch&& launch, const std::string& what) {
  const std::size_t cells = static_cast<std::size_t>(probe.args.rows) * probe.args.cells;
  PMQA_HIP_CHECK(hipMemset(probe.args.out, 0xFF, cells * sizeof(float)));  // NaN
  PMQA_HIP_CHECK(hipMemset(probe.args.sum, 0, sizeof(unsigned)));
  launch();
  std::vector<float> out(cells);
  unsigned sum = 0;
  PMQA_HIP_CHECK(hipMemcpy(out.data(), probe.args.out, cells * sizeof(float), hipMemcpyDeviceToHost));
  PMQA_HIP_CHECK(hipMemcpy(&sum, probe.args.sum, sizeof(unsigned), hipMemcpyDeviceToHost));
  if (sum != probe.sum) {
    char m[160];
    std::snprintf(m, sizeof m, "stream floor check (%s): the words read sum to %08x, the live chunks' to %08x", what.c_str(), sum,
                  probe.sum);
    throw std::runtime_error(m);
  }
  for (std::size_t i = 0; i < cells; ++i) {
    const int r = static_cast<int>(i / probe.args.cells), j = static_cast<int>(i % probe.args.cells);
    const bool live = j < probe.live[static_cast<std::size_t>(r / probe.args.next_n)];
    if (live ? out[i] != 0.0f : !(std::isinf(out[i]) && out[i] < 0)) {
      char m[160];
      std::snprintf(m, sizeof m, "stream floor check (%s): cell (%d, %d) holds %g, not %s", what.c_str(), r, j, out[i],
                    live ? "0" : "-inf");
      throw std::runtime_error(m);
    }
  }
}

// One way to move the bytes: a name for the table and a launch of the probe's kernel with given args.
struct Grid {
  std::string name;
  int ctas;
  std::function<void(const ProbeArgs&)> launch;
};

std::string named(const char* format, int ctas) {
  char text[96];
  std::snprintf(text, sizeof text, format, ctas);
  return text;
}

// Plain loads, kThreads a CTA loading kStep chunks at a time.
template <int kThreads, int kStep>
Grid loads(int ctas, const char* format) {
  return {named(format, ctas), ctas, [ctas](const ProbeArgs& a) {
            hipLaunchKernelGGL((stream_floor_kernel<kThreads, kStep>), dim3(ctas), dim3(kThreads), 0, 0, a);
          }};
}

// Bulk copies, kStages chunks in flight per CTA.
template <int kStages>
Grid bulk(int ctas) {
  const auto bytes = bulk_shared_bytes<kStages>();
  PMQA_HIP_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(&bulk_floor_kernel<kStages>),
                                     hipFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  return {named("bulk copies: %d CTAs, ", ctas) + std::to_string(kStages) + " in flight each", ctas,
          [ctas, bytes](const ProbeArgs& a) { hipLaunchKernelGGL((bulk_floor_kernel<kStages>), dim3(ctas), dim3(64), bytes, 0, a); }};
}

// One row of the table: the grid's shares made and its whole work checked once, then four
// timings (us): the whole probe after each flush, then the keys alone and the output alone.
void measure(Probe& probe, const Grid& g, L2Flusher& by_memset, L2Flusher& by_reads, int reps) {
  probe.split(g.ctas);
  ProbeArgs a = probe.args;
  a.keys = a.output = a.check = true;
  check(probe, [&] { g.launch(a); }, g.name);
  auto timed = [&](bool keys, bool output, L2Flusher& flusher) {
    a.keys = keys;
    a.output = output;
    a.check = false;
    return time_us([&] { g.launch(a); }, &flusher, reps);
  };
  const double full = timed(true, true, by_memset), clean = timed(true, true, by_reads);
  const double keys = timed(true, false, by_memset), out = timed(false, true, by_memset);
  std::printf("  %-44s %10.2f %10.2f %10.2f %10.2f\n", g.name.c_str(), full, clean, keys, out);
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<int> reps_arg = pmqa::bench::reps_option(argc, argv, 200, "pmqa_probe_stream_floor");
  if (!reps_arg) return 2;
  const int reps = *reps_arg;
  const auto gpu = pmqa::kernels::find_gpu();
  if (!gpu) {
    std::printf("pmqa_probe_stream_floor: no GPU found: nothing measured\n");
    return 77;
  }
  try {
    HipBackend be(gpu->device, gpu->multiprocessors, pmqa::kernels::make_gpu_executor(gpu->device)->caps());
    L2Flusher by_memset(be, std::size_t{512} << 20);
    L2Flusher by_reads(be, std::size_t{512} << 20, true);
    const int sms = gpu->multiprocessors;
    std::printf("pmqa_probe_stream_floor: %s, %d SMs; median of %d launches between device events\n", gpu->name.c_str(), sms,
                reps);
    for (std::int64_t next_n : {1, 2}) {
      const pmqa::Case c = decode_case(64, 8192, next_n, 16384, false);
      Probe probe(be, c);
      const double mb = (probe.chunks * 64.0 * (128 + 4) + static_cast<double>(c.rows() * c.max_model_len) * 4) / 1e6;
      std::printf("\ndecode shape, next_n %lld: %d live chunks, %.1f MB read and written (keys, scales, output)\n",
                  static_cast<long long>(next_n), probe.chunks, mb);
      std::printf("  %-44s %10s %10s %10s %10s\n", "loads: CTAs x threads, chunks a step", "memset us", "reads us",
                  "keys only", "out only");
      const Grid grids[] = {
          loads<128, 2>(5 * sms, "loads: %d x 128, 2 (fused-mma's grid)"),
          loads<128, 4>(5 * sms, "loads: %d x 128, 4"),
          loads<256, 2>(4 * sms, "loads: %d x 256, 2"),
          loads<256, 1>(8 * sms, "loads: %d x 256, 1"),
          loads<512, 2>(2 * sms, "loads: %d x 512, 2"),
          loads<1024, 1>(sms, "loads: %d x 1024, 1"),
          bulk<4>(5 * sms),
          bulk<5>(5 * sms),
          bulk<2>(10 * sms),
          bulk<1>(20 * sms),
          bulk<12>(2 * sms),
          bulk<25>(sms),
      };
      for (const Grid& g : grids) measure(probe, g, by_memset, by_reads, reps);
    }
  } catch (const std::exception& e) {
    std::fflush(stdout);  // the rows measured so far, before the reason on stderr
    std::fprintf(stderr, "pmqa_probe_stream_floor: %s\n", e.what());
    return 1;
  }
  return 0;
}
