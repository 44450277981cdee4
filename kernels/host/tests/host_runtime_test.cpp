// Tests of the host executor. Every behaviour is checked for warp sizes 32 and 64, on 1 and 2 OS
// threads, with the in-order schedule (seed 0) and a shuffled one (seed != 0). Expected values are
// computed here from the HIP/CUDA documentation's wording, not from the runtime's code.
#include <gmock/gmock.h>
#include <sys/wait.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <new>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "pmqa/kernels/host/hip_host.hpp"

namespace {

using pmqa::host::HostRuntimeError;
using pmqa::host::launch;
using pmqa::host::LaunchConfig;
using ::testing::HasSubstr;

// ---------------------------------------------------------------------------------------------
// kernels

constexpr int kRounds = 4;

__global__ void barrier_kernel(int* out) {
  __shared__ int tile[1024];
  const unsigned n = blockDim.x;
  const unsigned t = threadIdx.x;
  for (int r = 0; r < kRounds; ++r) {
    tile[t] = static_cast<int>(blockIdx.x * 100000 + static_cast<unsigned>(r) * 1000 + t);
    __syncthreads();  // writes of round r before the reads of round r
    out[(blockIdx.x * n + t) * kRounds + static_cast<unsigned>(r)] = tile[(t + 1 + 5 * static_cast<unsigned>(r)) % n];
    __syncthreads();  // reads of round r before the writes of round r + 1
  }
}

__global__ void param_copy_kernel(int n, int* out) {
  n += static_cast<int>(threadIdx.x);  // each thread owns its copy of the arguments
  __syncthreads();
  out[threadIdx.x] = n;
}

enum ShflOp : int { kIdx = 0, kUp = 1, kDown = 2, kXor = 3 };
struct ShflCase {
  int op;
  int width;
  int arg;
};

template <class T>
T value_of(unsigned tid) {
  if constexpr (std::is_same_v<T, int>) return -3 * static_cast<int>(tid) - 1;
  else if constexpr (std::is_same_v<T, unsigned>) return 0x80000000u + tid;
  else if constexpr (std::is_same_v<T, long long>) return -(1LL << 40) * (static_cast<long long>(tid) + 1) - 7;
  else if constexpr (std::is_same_v<T, unsigned long long>) return (1ULL << 63) + (static_cast<unsigned long long>(tid) << 33) + 1;
  else if constexpr (std::is_same_v<T, float>) return static_cast<float>(tid) * 0.25f - 3.5f;
  else return static_cast<double>(tid) * 1.0e10 + 0.125;
}

// The per-lane source argument of __shfl: varies by lane, may be negative or >= width.
int idx_arg(int base, unsigned lane) { return base + 3 * static_cast<int>(lane) - 5; }

template <class T>
__global__ void shfl_kernel(const ShflCase* cases, int ncases, T* out) {
  const unsigned tid = threadIdx.x;
  const unsigned lane = tid % static_cast<unsigned>(warpSize);
  const T v = value_of<T>(tid);
  for (int c = 0; c < ncases; ++c) {
    const ShflCase k = cases[c];
    T r{};
    switch (k.op) {
      case kIdx: r = __shfl(v, idx_arg(k.arg, lane), k.width); break;
      case kUp: r = __shfl_up(v, static_cast<unsigned>(k.arg), k.width); break;
      case kDown: r = __shfl_down(v, static_cast<unsigned>(k.arg), k.width); break;
      default: r = __shfl_xor(v, k.arg, k.width); break;
    }
    out[static_cast<unsigned>(c) * blockDim.x + tid] = r;
  }
}

// Which lane a lane reads, in the documentation's words: lanes form groups of `width`; __shfl reads
// lane srcLane modulo width of its group; up/down read delta lanes before/after within the group,
// else keep their own value; xor reads lane ^ mask unless that lies in a later group (own value).
int doc_source(const ShflCase& k, int lane, int warp_size) {
  const int first = lane / k.width * k.width;
  switch (k.op) {
    case kIdx: {
      const int s = idx_arg(k.arg, static_cast<unsigned>(lane));
      return first + ((s % k.width) + k.width) % k.width;
    }
    case kUp: return lane - first >= k.arg ? lane - k.arg : lane;
    case kDown: return lane - first + k.arg < k.width ? lane + k.arg : lane;
    default: {
      const int t = lane ^ k.arg;
      return t < first + k.width && t < warp_size ? t : lane;
    }
  }
}

std::vector<ShflCase> shfl_cases(int warp_size) {
  std::vector<ShflCase> cases;
  for (int w = 1; w <= warp_size; w *= 2) {
    for (int a : {0, 1, -1, 7, w + 3}) cases.push_back({kIdx, w, a});
    for (int d : {0, 1, 2, 3, w / 2, w - 1, w, w + 1}) {
      if (d >= 0) {
        cases.push_back({kUp, w, d});
        cases.push_back({kDown, w, d});
      }
    }
    for (int m : {0, 1, 2, 3, 5, w - 1, w, w | 1, 2 * w, warp_size / 2}) cases.push_back({kXor, w, m});
  }
  return cases;
}

struct Geometry3D {
  unsigned tid[3], bid[3], bdim[3], gdim[3];
  int warp_size;
  unsigned lane0_linear;  // __shfl(linear, 0): the linear id of lane 0 of this thread's warp
};

__global__ void indices_kernel(Geometry3D* out) {
  const unsigned linear = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned lane0 = __shfl(linear, 0);
  Geometry3D& g = out[block * blockDim.x * blockDim.y * blockDim.z + linear];
  g = Geometry3D{{threadIdx.x, threadIdx.y, threadIdx.z},
                 {blockIdx.x, blockIdx.y, blockIdx.z},
                 {blockDim.x, blockDim.y, blockDim.z},
                 {gridDim.x, gridDim.y, gridDim.z},
                 warpSize,
                 lane0};
}

std::atomic<unsigned> g_blocks_in{0};

// Two blocks that must be alive at the same time on two OS threads (spin = 1) and each must see its
// own __shared__ tile while the other one writes its own.
__global__ void isolation_kernel(int* ok, std::uint64_t* os_thread, int spin) {
  __shared__ unsigned tile[256];
  const unsigned t = threadIdx.x;
  const unsigned n = blockDim.x;
  tile[t] = blockIdx.x * 1000 + t;
  __syncthreads();
  int good = 1;
  if (t == 0) {
    os_thread[blockIdx.x] = std::hash<std::thread::id>{}(std::this_thread::get_id());
    if (spin != 0) {  // wait until every block of the grid is inside the kernel
      g_blocks_in.fetch_add(1);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (g_blocks_in.load() < gridDim.x && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::yield();
      }
      good &= static_cast<int>(g_blocks_in.load() >= gridDim.x);
    }
  }
  __syncthreads();
  tile[t] += 1;  // both blocks write their tile now
  __syncthreads();
  const unsigned v = __shfl_xor(tile[(t + 1) % n], 1);
  __syncthreads();
  for (unsigned j = 0; j < n; ++j) {
    good &= static_cast<int>(tile[j] == blockIdx.x * 1000 + j + 1);
  }
  good &= static_cast<int>(v == blockIdx.x * 1000 + ((t ^ 1U) + 1) % n + 1);
  ok[blockIdx.x * n + t] = good;
}

__global__ void atomic_kernel(int* count, float* fsum, unsigned* usum, int* tickets) {
  const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  tickets[g] = atomicAdd(count, 1);
  __syncthreads();
  atomicAdd(fsum, 0.5f);
  atomicAdd(usum, g);
}

__global__ void partial_warp_kernel(int* out) {
  // Sum of 4-lane groups with a width-4 butterfly: exact in any partial warp whose size is a
  // multiple of 4; plus the warp/lane numbering the runtime gives threads.
  __shared__ int tile[1024];
  const unsigned t = threadIdx.x;
  const int lane = static_cast<int>(t % static_cast<unsigned>(warpSize));
  int v = static_cast<int>(t);
  for (int m = 1; m < 4; m <<= 1) v += __shfl_xor(v, m, 4);
  tile[t] = v;
  __syncthreads();
  out[3 * t] = tile[(t + 1) % blockDim.x];
  out[3 * t + 1] = lane;
  out[3 * t + 2] = __shfl(static_cast<int>(t), 0);
}

__global__ void early_return_kernel(int* out, int bad_block, int bad_thread) {
  __shared__ int tile[1024];
  if (static_cast<int>(blockIdx.x) == bad_block && static_cast<int>(threadIdx.x) == bad_thread) return;
  tile[threadIdx.x] = 1;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = tile[(threadIdx.x + 1) % blockDim.x];
}

__global__ void split_barrier_kernel(int* out) {
  if (threadIdx.x < 10) {
    __syncthreads();
  } else {
    __syncthreads();
  }
  out[threadIdx.x] = 1;
}

__global__ void shfl_exit_kernel(float* out) {
  if (threadIdx.x == 3) return;
  out[threadIdx.x] = __shfl_xor(static_cast<float>(threadIdx.x), 1);
}

__global__ void shfl_disagree_kernel(float* out) {
  float v = static_cast<float>(threadIdx.x);
  if (threadIdx.x % 2 == 0) {
    v = __shfl_xor(v, 1);
  } else {
    v = __shfl_down(v, 1);
  }
  out[threadIdx.x] = v;
}

__global__ void shfl_width_disagree_kernel(float* out) {
  out[threadIdx.x] = __shfl_xor(static_cast<float>(threadIdx.x), 1, threadIdx.x < 4 ? 2 : 4);
}

__global__ void shfl_bad_width_kernel(float* out) {
  out[threadIdx.x] = __shfl_xor(static_cast<float>(threadIdx.x), 1, 3);
}

std::atomic<int> g_trackers{0};
struct Tracker {
  Tracker() { g_trackers.fetch_add(1); }
  ~Tracker() { g_trackers.fetch_sub(1); }
  Tracker(const Tracker&) = delete;
  Tracker& operator=(const Tracker&) = delete;
};

__global__ void throwing_kernel(float* out, int bad_block, int bad_thread) {
  const Tracker tracker;  // must be destroyed in every thread, also the suspended ones
  __syncthreads();
  if (static_cast<int>(blockIdx.x) == bad_block && static_cast<int>(threadIdx.x) == bad_thread) {
    throw std::invalid_argument("boom");
  }
  const float v = __shfl_xor(static_cast<float>(threadIdx.x), 1);
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

__global__ void trap_kernel(int* out) {
  if (threadIdx.x == 7) __trap();
  __syncthreads();
  out[threadIdx.x] = 1;
}

__global__ void noop_kernel(int* out) { out[0] = 0; }
__global__ void nested_launch_kernel(int* out) {
  if (threadIdx.x == 0) launch({}, noop_kernel, out);
}

// A thread reads its neighbour's slot, written in the same phase: without the barrier the value
// depends on whether the neighbour ran first (a race).
template <bool kBarrier>
__global__ void neighbour_kernel(int* out) {
  __shared__ int tile[1024];
  const unsigned t = threadIdx.x;
  const unsigned n = blockDim.x;
  tile[t] = -1;
  __syncthreads();
  tile[t] = static_cast<int>(t);
  if constexpr (kBarrier) __syncthreads();
  out[blockIdx.x * n + t] = tile[(t + 1) % n];
}

// The same within a warp, fenced by __syncwarp alone (fused-mma's per-warp pipelines rely on it).
template <bool kBarrier>
__global__ void warp_neighbour_kernel(int* out) {
  __shared__ int tile[1024];
  const unsigned t = threadIdx.x;
  const unsigned w = static_cast<unsigned>(warpSize);
  tile[t] = -1;
  __syncthreads();
  tile[t] = static_cast<int>(t);
  if constexpr (kBarrier) __syncwarp();
  out[blockIdx.x * blockDim.x + t] = tile[t - t % w + (t + 1) % w];
}

// Block b reads what block b - 1 wrote, with nothing ordering the blocks: a dependency between
// blocks, right only if they run in order.
__global__ void chain_kernel(int* cells) {
  if (threadIdx.x == 0 && blockIdx.x > 0) cells[blockIdx.x] = cells[blockIdx.x - 1] + 1;
}

// Every thread reads its shared entry before anything wrote it: the race a missing __syncthreads()
// makes, in the first block the worker runs with this declaration.
__global__ void read_before_write_kernel(int* out) {
  PMQA_SHARED(int, tile, [256]);
  out[blockIdx.x * blockDim.x + threadIdx.x] = tile[threadIdx.x];
}

__global__ void big_frame_kernel(int* out, int i) {
  volatile char buf[96 * 1024];
  buf[i] = 1;
  out[0] = buf[i];
}

// ---------------------------------------------------------------------------------------------
// fixtures

using Param = std::tuple<int, int, std::uint64_t>;  // warp_size, os_threads, schedule_seed

class HostRuntime : public ::testing::TestWithParam<Param> {
 protected:
  [[nodiscard]] int warp() const { return std::get<0>(GetParam()); }
  [[nodiscard]] int os_threads() const { return std::get<1>(GetParam()); }
  [[nodiscard]] std::uint64_t seed() const { return std::get<2>(GetParam()); }
  [[nodiscard]] LaunchConfig cfg(dim3 grid, dim3 block, const char* name) const {
    return {.grid = grid, .block = block, .warp_size = warp(), .os_threads = os_threads(),
            .schedule_seed = seed(), .name = name};
  }
};

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  return "warp" + std::to_string(std::get<0>(info.param)) + "_threads" + std::to_string(std::get<1>(info.param)) +
         "_seed" + std::to_string(std::get<2>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Modes, HostRuntime,
                         ::testing::Combine(::testing::Values(32, 64), ::testing::Values(1, 2),
                                            ::testing::Values(std::uint64_t{0}, std::uint64_t{0x5eed})),
                         param_name);

std::string launch_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const HostRuntimeError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no HostRuntimeError";
  return {};
}

// ---------------------------------------------------------------------------------------------
// tests

TEST_P(HostRuntime, BarrierOrdersSharedWritesBeforeReads) {
  for (unsigned n : {256U, 100U, 1024U}) {
    const unsigned grid = 6;
    std::vector<int> out(grid * n * kRounds, -7);
    launch(cfg(grid, n, "barrier_kernel"), barrier_kernel, out.data());
    for (unsigned b = 0; b < grid; ++b) {
      for (unsigned t = 0; t < n; ++t) {
        for (unsigned r = 0; r < kRounds; ++r) {
          const auto want = static_cast<int>(b * 100000 + r * 1000 + (t + 1 + 5 * r) % n);
          ASSERT_EQ(out[(b * n + t) * kRounds + r], want) << "block " << b << " thread " << t << " round " << r;
        }
      }
    }
  }
}

TEST_P(HostRuntime, EachThreadGetsItsOwnArgumentCopies) {
  std::vector<int> out(64, 0);
  launch(cfg(1, 64, "param_copy_kernel"), param_copy_kernel, 1000, out.data());
  for (int t = 0; t < 64; ++t) EXPECT_EQ(out[static_cast<std::size_t>(t)], 1000 + t);
}

template <class T>
void check_shuffles(const LaunchConfig& c, int warp_size, std::uint64_t seed) {
  const std::vector<ShflCase> cases = shfl_cases(warp_size);
  const unsigned n = c.block.x;
  std::vector<T> out(cases.size() * n);
  launch(c, shfl_kernel<T>, cases.data(), static_cast<int>(cases.size()), out.data());
  const auto ws = static_cast<unsigned>(warp_size);
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const ShflCase& k = cases[ci];
    for (unsigned tid = 0; tid < n; ++tid) {
      const unsigned base = tid / ws * ws;
      const unsigned lanes_here = std::min(ws, n - base);  // fewer in a partial last warp
      const int src = doc_source(k, static_cast<int>(tid - base), warp_size);
      const T got = out[ci * n + tid];
      if (static_cast<unsigned>(src) >= lanes_here) {
        // source lane does not exist: unspecified; the in-order schedule gives the caller's own value
        if (seed == 0) {
          ASSERT_EQ(got, value_of<T>(tid)) << "missing source lane, op " << k.op << " width " << k.width;
        }
        continue;
      }
      ASSERT_EQ(got, value_of<T>(base + static_cast<unsigned>(src)))
          << "op " << k.op << " width " << k.width << " arg " << k.arg << " thread " << tid;
    }
  }
}

TEST_P(HostRuntime, ShufflesGiveHipResultsForEveryKindWidthAndType) {
  for (unsigned n : {2U * static_cast<unsigned>(warp()), static_cast<unsigned>(warp()) + 5U, 20U}) {
    SCOPED_TRACE("block " + std::to_string(n));
    const LaunchConfig c = cfg(3, n, "shfl_kernel");
    check_shuffles<int>(c, warp(), seed());
    check_shuffles<unsigned>(c, warp(), seed());
    check_shuffles<long long>(c, warp(), seed());
    check_shuffles<unsigned long long>(c, warp(), seed());
    check_shuffles<float>(c, warp(), seed());
    check_shuffles<double>(c, warp(), seed());
  }
}

TEST_P(HostRuntime, PartialWarpsHaveFewerLanes) {
  for (unsigned n : {20U, 36U, 68U, 100U}) {  // multiples of 4, none a multiple of 32
    std::vector<int> out(3 * n, -1);
    launch(cfg(2, n, "partial_warp_kernel"), partial_warp_kernel, out.data());
    const auto ws = static_cast<unsigned>(warp());
    for (unsigned t = 0; t < n; ++t) {
      const unsigned u = (t + 1) % n;
      const unsigned g = u / 4 * 4;
      EXPECT_EQ(out[3 * t], static_cast<int>(4 * g + 6)) << "n " << n << " t " << t;
      EXPECT_EQ(out[3 * t + 1], static_cast<int>(t % ws));
      EXPECT_EQ(out[3 * t + 2], static_cast<int>(t / ws * ws));
    }
  }
}

TEST_P(HostRuntime, SharedMemoryIsPerBlockEvenOnConcurrentOsThreads) {
  for (unsigned grid : {2U, 48U}) {
    const unsigned n = 128;
    std::vector<int> ok(grid * n, 0);
    std::vector<std::uint64_t> os_thread(grid, 0);
    // With 2 OS threads and 2 blocks, both blocks must be inside the kernel at once.
    const int spin = os_threads() == 2 && grid == 2 ? 1 : 0;
    g_blocks_in = 0;
    launch(cfg(grid, n, "isolation_kernel"), isolation_kernel, ok.data(), os_thread.data(), spin);
    for (unsigned i = 0; i < grid * n; ++i) ASSERT_EQ(ok[i], 1) << "grid " << grid << " thread " << i;
    if (spin != 0) {
      EXPECT_NE(os_thread[0], os_thread[1]) << "the two blocks ran on one OS thread";
    }
  }
}

TEST_P(HostRuntime, AtomicAddTotals) {
  const unsigned grid = 40;
  const unsigned n = 200;
  int count = 0;
  float fsum = 0.0f;
  unsigned usum = 0;
  std::vector<int> tickets(grid * n, -1);
  launch(cfg(grid, n, "atomic_kernel"), atomic_kernel, &count, &fsum, &usum, tickets.data());
  EXPECT_EQ(count, static_cast<int>(grid * n));
  EXPECT_EQ(fsum, 0.5f * static_cast<float>(grid * n));
  EXPECT_EQ(usum, (grid * n - 1) * (grid * n) / 2);
  std::sort(tickets.begin(), tickets.end());
  for (unsigned i = 0; i < grid * n; ++i) ASSERT_EQ(tickets[i], static_cast<int>(i));  // each old value once
}

TEST_P(HostRuntime, GridAndBlockIndicesIn3D) {
  const dim3 grid(3, 2, 2);
  const dim3 block(4, 3, 5);  // 60 threads: a partial warp for both warp sizes
  std::vector<Geometry3D> out(grid.volume() * block.volume());
  launch(cfg(grid, block, "indices_kernel"), indices_kernel, out.data());
  const auto ws = static_cast<unsigned>(warp());
  std::size_t i = 0;
  for (unsigned bz = 0; bz < 2; ++bz)
    for (unsigned by = 0; by < 2; ++by)
      for (unsigned bx = 0; bx < 3; ++bx)
        for (unsigned tz = 0; tz < 5; ++tz)
          for (unsigned ty = 0; ty < 3; ++ty)
            for (unsigned tx = 0; tx < 4; ++tx, ++i) {
              const Geometry3D& g = out[i];
              const unsigned linear = tx + 4 * (ty + 3 * tz);
              ASSERT_EQ(std::vector<unsigned>(g.tid, g.tid + 3), (std::vector<unsigned>{tx, ty, tz}));
              ASSERT_EQ(std::vector<unsigned>(g.bid, g.bid + 3), (std::vector<unsigned>{bx, by, bz}));
              ASSERT_EQ(std::vector<unsigned>(g.bdim, g.bdim + 3), (std::vector<unsigned>{4, 3, 5}));
              ASSERT_EQ(std::vector<unsigned>(g.gdim, g.gdim + 3), (std::vector<unsigned>{3, 2, 2}));
              ASSERT_EQ(g.warp_size, warp());
              ASSERT_EQ(g.lane0_linear, linear / ws * ws);
            }
}

TEST_P(HostRuntime, ThreadReturningBeforeBarrierIsReportedDeadlock) {
  std::vector<int> out(4 * 256);
  const std::string msg = launch_error([&] { launch(cfg(4, 256, "early_return_kernel"), early_return_kernel, out.data(), 2, 0); });
  EXPECT_THAT(msg, HasSubstr("early_return_kernel"));
  EXPECT_THAT(msg, HasSubstr("grid (4,1,1), block (256,1,1), warp_size " + std::to_string(warp())));
  EXPECT_THAT(msg, HasSubstr("block (2,0,0): deadlock"));
  EXPECT_THAT(msg, HasSubstr("255 of 256 threads wait at __syncthreads()"));
  EXPECT_THAT(msg, HasSubstr("1 thread(s) returned: (0,0,0)"));
  EXPECT_THAT(msg, HasSubstr("divergent barrier"));
  // the runtime is usable afterwards
  launch(cfg(4, 256, "early_return_kernel"), early_return_kernel, out.data(), -1, -1);
  for (int v : out) ASSERT_EQ(v, 1);
}

TEST_P(HostRuntime, BarrierAtDifferentCallSitesIsReported) {
  std::vector<int> out(64);
  const std::string msg = launch_error([&] { launch(cfg(1, 64, "split"), split_barrier_kernel, out.data()); });
  EXPECT_THAT(msg, HasSubstr("waits at a different __syncthreads()"));
  EXPECT_THAT(msg, HasSubstr("a barrier in divergent code"));
  EXPECT_THAT(msg, HasSubstr("host_runtime_test.cpp:"));
}

TEST_P(HostRuntime, WarpCollectiveWithReturnedLaneIsReported) {
  std::vector<float> out(64);
  const std::string msg = launch_error([&] { launch(cfg(1, 64, "shfl_exit"), shfl_exit_kernel, out.data()); });
  EXPECT_THAT(msg, HasSubstr("warp 0: " + std::to_string(warp() - 1) + " of " + std::to_string(warp()) +
                             " lanes wait at __shfl_xor(float, width " + std::to_string(warp()) + ")"));
  EXPECT_THAT(msg, HasSubstr("lanes that returned: (3,0,0)"));
  EXPECT_THAT(msg, HasSubstr("A warp collective needs every lane of the warp"));
}

TEST_P(HostRuntime, LanesDisagreeingAtCollectiveAreReported) {
  std::vector<float> out(64);
  std::string msg = launch_error([&] { launch(cfg(1, 64, "disagree"), shfl_disagree_kernel, out.data()); });
  EXPECT_THAT(msg, HasSubstr("disagree at a warp collective"));
  EXPECT_THAT(msg, HasSubstr("__shfl_down(float, width " + std::to_string(warp()) + ")"));
  EXPECT_THAT(msg, HasSubstr("__shfl_xor(float, width " + std::to_string(warp()) + ")"));
  msg = launch_error([&] { launch(cfg(1, 64, "width"), shfl_width_disagree_kernel, out.data()); });
  EXPECT_THAT(msg, HasSubstr("disagree at a warp collective"));
  msg = launch_error([&] { launch(cfg(1, 64, "bad_width"), shfl_bad_width_kernel, out.data()); });
  EXPECT_THAT(msg, HasSubstr("width 3 is not a power of two in [1, warpSize = " + std::to_string(warp()) + "]"));
}

TEST_P(HostRuntime, KernelExceptionPropagatesAndUnwindsEveryThread) {
  std::vector<float> out(5 * 128);
  g_trackers = 0;
  try {
    launch(cfg(5, 128, "throwing_kernel"), throwing_kernel, out.data(), 2, 5);
    FAIL() << "no exception";
  } catch (const HostRuntimeError& e) {
    const std::string msg = e.what();
    EXPECT_THAT(msg, HasSubstr("block (2,0,0): thread (5,0,0): the kernel threw std::invalid_argument: boom"));
    EXPECT_THROW(std::rethrow_if_nested(e), std::invalid_argument);
  }
  EXPECT_EQ(g_trackers.load(), 0) << "threads of the failed launch were not unwound";
  std::vector<int> iout(64);
  const std::string msg = launch_error([&] { launch(cfg(1, 64, "trap_kernel"), trap_kernel, iout.data()); });
  EXPECT_THAT(msg, HasSubstr("thread (7,0,0): __trap() called at"));
  // still usable
  launch(cfg(5, 128, "throwing_kernel"), throwing_kernel, out.data(), -1, -1);
  EXPECT_EQ(out[2 * 128 + 5], 4.0f);
  EXPECT_EQ(g_trackers.load(), 0);
}

TEST_P(HostRuntime, StacksArePooledAcrossBlocksAndLaunches) {
  const auto maps = [] {
    std::ifstream f("/proc/self/maps");
    std::size_t lines = 0;
    for (std::string s; std::getline(f, s);) ++lines;
    return lines;
  };
  std::vector<int> out(8 * 1024 * kRounds);
  const LaunchConfig c = cfg(8, 1024, "barrier_kernel");
  launch(c, barrier_kernel, out.data());  // warm-up: maps the stacks of 1024 fibers per OS thread
  const std::size_t before = maps();
  for (int i = 0; i < 10; ++i) launch(c, barrier_kernel, out.data());
  EXPECT_LT(maps() - before, 8U) << "stacks are mapped per block or per launch";
}

TEST_P(HostRuntime, LargeFramesFitWithALargerStack) {
  std::vector<int> out(1, 0);
  LaunchConfig c = cfg(2, 64, "big_frame_kernel");
  c.stack_bytes = 256 * 1024;
  launch(c, big_frame_kernel, out.data(), 5);
  EXPECT_EQ(out[0], 1);
}

TEST_P(HostRuntime, BadConfigurationsAreRejected) {
  std::vector<int> out(4);
  const auto err = [&](LaunchConfig c) { return launch_error([&] { launch(c, noop_kernel, out.data()); }); };
  LaunchConfig c = cfg(1, 64, "noop_kernel");
  c.block = dim3(0, 1, 1);
  EXPECT_THAT(err(c), HasSubstr("block (0,1,1), warp_size"));
  EXPECT_THAT(err(c), HasSubstr("block has a zero dimension"));
  c.block = dim3(1025);
  EXPECT_THAT(err(c), HasSubstr("block of 1025 threads exceeds 1024"));
  c.block = dim3(32, 32, 2);
  EXPECT_THAT(err(c), HasSubstr("block of 2048 threads exceeds 1024"));
  c = cfg(1, 64, "noop_kernel");
  c.warp_size = 16;
  EXPECT_THAT(err(c), HasSubstr("warp_size must be 32 or 64"));
  c = cfg(dim3(4, 0), 64, "noop_kernel");
  EXPECT_THAT(err(c), HasSubstr("grid has a zero dimension"));
  c = cfg(1, 64, "noop_kernel");
  c.os_threads = 0;
  EXPECT_THAT(err(c), HasSubstr("os_threads must be in [1, 256]"));
  c = cfg(1, 64, "noop_kernel");
  c.stack_bytes = 4096;
  EXPECT_THAT(err(c), HasSubstr("stack_bytes must be in"));
  EXPECT_THROW(dim3(-1), HostRuntimeError);
  EXPECT_THROW((void)threadIdx.x, HostRuntimeError);
  EXPECT_THROW(__syncthreads(), HostRuntimeError);
  EXPECT_THAT(launch_error([&] { launch(cfg(1, 8, "nested"), nested_launch_kernel, out.data()); }),
              HasSubstr("dynamic parallelism is not supported"));
}

// ---- races become visible as differences between schedule seeds

using SeedParam = std::tuple<int, int>;  // warp_size, os_threads
class HostRuntimeSeeds : public ::testing::TestWithParam<SeedParam> {
 protected:
  template <class... P>
  std::vector<int> run(unsigned grid, unsigned block, std::uint64_t seed, void (*k)(P...), std::vector<int> init) {
    const LaunchConfig c{.grid = grid, .block = block, .warp_size = std::get<0>(GetParam()),
                         .os_threads = std::get<1>(GetParam()), .schedule_seed = seed, .name = "seeded"};
    launch(c, k, init.data());
    return init;
  }
};

std::string seed_param_name(const ::testing::TestParamInfo<SeedParam>& p) {
  return "warp" + std::to_string(std::get<0>(p.param)) + "_threads" + std::to_string(std::get<1>(p.param));
}

INSTANTIATE_TEST_SUITE_P(Modes, HostRuntimeSeeds,
                         ::testing::Combine(::testing::Values(32, 64), ::testing::Values(1, 2)),
                         seed_param_name);

TEST_P(HostRuntimeSeeds, MissingBarrierShowsAsDifferencesBetweenSeeds) {
  const unsigned grid = 3;
  const unsigned n = 256;
  const std::vector<int> zeros(grid * n, 0);
  std::set<std::vector<int>> racy;
  std::set<std::vector<int>> fenced;
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    const std::vector<int> r = run(grid, n, seed, neighbour_kernel<false>, zeros);
    EXPECT_EQ(r, run(grid, n, seed, neighbour_kernel<false>, zeros)) << "seed " << seed << " is not reproducible";
    racy.insert(r);
    fenced.insert(run(grid, n, seed, neighbour_kernel<true>, zeros));
  }
  EXPECT_GE(racy.size(), 4U) << "the race did not show";
  ASSERT_EQ(fenced.size(), 1U) << "the barrier version depends on the schedule";
  const std::vector<int>& r = *fenced.begin();
  for (unsigned i = 0; i < grid * n; ++i) ASSERT_EQ(r[i], static_cast<int>((i % n + 1) % n));
}

TEST_P(HostRuntimeSeeds, MissingSyncwarpShowsAsDifferencesBetweenSeeds) {
  const unsigned grid = 2;
  const unsigned n = 128;
  const int w = std::get<0>(GetParam());
  const std::vector<int> zeros(grid * n, 0);
  std::set<std::vector<int>> racy;
  std::set<std::vector<int>> fenced;
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    racy.insert(run(grid, n, seed, warp_neighbour_kernel<false>, zeros));
    fenced.insert(run(grid, n, seed, warp_neighbour_kernel<true>, zeros));
  }
  EXPECT_GE(racy.size(), 4U) << "the race did not show";
  ASSERT_EQ(fenced.size(), 1U) << "the __syncwarp version depends on the schedule";
  const std::vector<int>& r = *fenced.begin();
  for (unsigned i = 0; i < grid * n; ++i) {
    const int t = static_cast<int>(i % n);
    ASSERT_EQ(r[i], t - t % w + (t + 1) % w) << "thread " << t;
  }
}

TEST_P(HostRuntimeSeeds, DependencyBetweenBlocksShowsAsDifferencesBetweenSeeds) {
  const unsigned grid = 64;
  std::vector<int> ordered(grid);
  for (unsigned b = 0; b < grid; ++b) ordered[b] = static_cast<int>(b);
  std::set<std::vector<int>> results;
  for (std::uint64_t seed = 1; seed < 6; ++seed) results.insert(run(grid, 32, seed, chain_kernel, std::vector<int>(grid, 0)));
  EXPECT_GE(results.size(), 2U);
  EXPECT_EQ(results.count(ordered), 0U) << "a shuffled block order ran the chain in order";
  if (std::get<1>(GetParam()) == 1) {
    EXPECT_EQ(run(grid, 32, 0, chain_kernel, std::vector<int>(grid, 0)), ordered);  // in order: works by accident
  }
}

// ---- a stack overflow hits the guard page (SIGSEGV), it does not corrupt a neighbour's stack

bool died_of_overflow(int status) {
  // SIGSEGV at the guard page; under AddressSanitizer, its own stack-overflow report and exit(1).
  return (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV) || (WIFEXITED(status) && WEXITSTATUS(status) != 0);
}

// A racing kernel's results depend on the schedule seed alone: a new shared buffer starts zeroed, not
// with whatever the heap held there (a leftover read as a loop bound or an index sent the gauntlet's
// missing-barrier mutant outside every buffer, a crash one run in a few).
TEST(HostRuntimeShared, ANewSharedBufferStartsZeroedWhateverTheHeapHeld) {
  const LaunchConfig c{.grid = 1, .block = 64, .warp_size = 32, .os_threads = 1, .schedule_seed = 0, .name = "shared"};
  std::vector<int> warm(64, 0);
  launch(c, param_copy_kernel, 0, warm.data());  // the worker, its fibers and stacks exist from here on
  // The heap's free lists now hold memory of the buffer's size and alignment, filled with a pattern.
  constexpr std::size_t kBytes = sizeof(int) * 256;
  std::vector<void*> dirty;
  for (int i = 0; i < 64; ++i) {
    dirty.push_back(::operator new(kBytes, std::align_val_t{64}));
    std::memset(dirty.back(), 0xA5, kBytes);
  }
  for (void* p : dirty) ::operator delete(p, std::align_val_t{64});
  std::vector<int> out(64, -1);
  launch(c, read_before_write_kernel, out.data());
  for (int t = 0; t < 64; ++t) ASSERT_EQ(out[static_cast<std::size_t>(t)], 0) << "thread " << t;
}

TEST(HostRuntimeDeathTest, StackOverflowHitsTheGuardPage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::vector<int> out(1, 0);
        launch({.grid = 1, .block = 64}, big_frame_kernel, out.data(), 5);
        std::exit(0);
      },
      died_of_overflow, "");
}

// GoogleTest's default ("fast") death tests fork without exec: the child has none of the pool's OS
// threads and must still be able to launch on several.
TEST(HostRuntimeDeathTest, ForkedChildLaunchesOnSeveralOsThreads) {
  GTEST_FLAG_SET(death_test_style, "fast");
  const unsigned n = 64;
  std::vector<int> out(4 * n * kRounds, 0);
  const LaunchConfig c{.grid = 4, .block = n, .os_threads = 2};
  launch(c, barrier_kernel, out.data());  // the pool has its threads now
  EXPECT_EXIT(
      {
        std::fill(out.begin(), out.end(), 0);
        launch(c, barrier_kernel, out.data());
        std::exit(out[((3 * n + 2) * kRounds) + 1] == static_cast<int>(3 * 100000 + 1000 + (2 + 1 + 5) % n) ? 0 : 3);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
