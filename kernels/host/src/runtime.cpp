// The host executor's scheduler: per OS thread a Worker owns up to 1024 persistent fibers (one per
// thread of a block, reused by every block and launch), the state of the block barrier and of the
// warp collectives, and runs blocks one after another. Launches with os_threads > 1 spread blocks
// over a process-wide pool of worker threads (created on demand, kept for the next launch).
#include <cxxabi.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/context/fiber.hpp>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <typeinfo>
#include <unordered_map>
#include <vector>

#include "pmqa/kernels/host/runtime.hpp"
#include "stack_pool.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define PMQA_HOST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PMQA_HOST_ASAN 1
#endif
#endif
#ifndef PMQA_HOST_ASAN
#define PMQA_HOST_ASAN 0
#endif
#if PMQA_HOST_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

#include <pthread.h>

namespace pmqa::host {

std::string to_string(const Dim3& d) {
  std::string s(1, '(');  // appends only: g++ 12 warns (-Wrestrict) about "literal" + std::string&&
  s.append(std::to_string(d.x)).append(1, ',').append(std::to_string(d.y)).append(1, ',');
  s.append(std::to_string(d.z)).append(1, ')');
  return s;
}

namespace detail {
namespace {

constexpr std::uint32_t kMaxBlockThreads = 1024;
constexpr std::uint32_t kMaxLanes = 64;
constexpr std::uint32_t kMaxWarps = kMaxBlockThreads / 32;
constexpr int kMaxOsThreads = 256;
constexpr std::uint64_t kMaxBlocks = std::uint64_t{1} << 40;
constexpr std::size_t kMaxStackBytes = std::size_t{64} << 20;

// Scheduling state of a fiber within the current block (ThreadCtx::state).
enum State : std::uint8_t {
  kFresh,      // not started in this block
  kRunnable,   // started, may continue
  kAtBarrier,  // waits in __syncthreads()
  kAtWarp,     // waits in a warp collective
  kDone,       // returned (or was unwound)
};

constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

struct Rng {
  std::uint64_t s = 0;
  std::uint64_t next() { return mix64(s += 0x9e3779b97f4a7c15ULL); }
  // Uniform enough in [0, n) for scheduling (n <= 1024).
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(((next() >> 32) * n) >> 32); }
};

// A seeded permutation of [0, n) without a table: a 4-round Feistel network on the smallest even
// number of bits covering n, walked until it lands inside [0, n).
class BlockOrder {
 public:
  BlockOrder(std::uint64_t n, std::uint64_t seed) : n_(n) {
    unsigned bits = 2;
    while ((std::uint64_t{1} << bits) < n) {
      ++bits;
    }
    bits += bits % 2;
    half_ = bits / 2;
    mask_ = (std::uint64_t{1} << half_) - 1;
    Rng r{seed};
    for (auto& k : keys_) {
      k = r.next();
    }
  }
  std::uint64_t operator()(std::uint64_t i) const {
    do {
      i = permute(i);
    } while (i >= n_);
    return i;
  }

 private:
  [[nodiscard]] std::uint64_t permute(std::uint64_t x) const {
    std::uint64_t l = x >> half_;
    std::uint64_t r = x & mask_;
    for (const std::uint64_t k : keys_) {
      const std::uint64_t t = l ^ (mix64(r ^ k) & mask_);
      l = r;
      r = t;
    }
    return (l << half_) | r;
  }
  std::uint64_t n_;
  unsigned half_ = 1;
  std::uint64_t mask_ = 1;
  std::array<std::uint64_t, 4> keys_{};
};

// Thrown at a yield point to unwind the threads of an aborted block; not a std::exception, so a
// kernel's catch (const std::exception&) does not stop it.
struct Unwind {};

struct Launch {
  const LaunchConfig* cfg = nullptr;
  ErasedKernel kernel = nullptr;
  Invoker invoker = nullptr;
  void* params = nullptr;
  std::uint64_t nblocks = 0;
  std::uint32_t nthreads = 0;
  std::size_t stack_bytes = 0;
  std::optional<BlockOrder> order;
  std::atomic<std::uint64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::exception_ptr error;

  void fail(std::exception_ptr e) {
    const std::lock_guard lock(mu);
    if (!error) {
      error = std::move(e);
    }
    failed.store(true, std::memory_order_relaxed);
  }
  [[nodiscard]] std::string describe() const {
    return std::string("pmqa::host::launch(") + (cfg->name != nullptr ? cfg->name : "kernel") +
           ", grid " + to_string(cfg->grid) + ", block " + to_string(cfg->block) +
           ", warp_size " + std::to_string(cfg->warp_size) + ", os_threads " + std::to_string(cfg->os_threads) +
           ", schedule_seed " + std::to_string(cfg->schedule_seed) + ")";
  }
};

// Concatenation by appends (g++ 12 gives false -Wrestrict warnings on "literal" + std::string&&).
template <class... S>
std::string cat(const S&... parts) {
  std::string r;
  (r.append(parts), ...);
  return r;
}

std::string site(const std::source_location& w) {
  return std::string(w.file_name()) + ":" + std::to_string(w.line()) + ":" + std::to_string(w.column());
}

bool same_site(const std::source_location& a, const std::source_location& b) {
  return a.line() == b.line() && a.column() == b.column() &&
         (a.file_name() == b.file_name() || std::strcmp(a.file_name(), b.file_name()) == 0);
}

const char* kind_name(ShflKind k) {
  switch (k) {
    case ShflKind::idx: return "__shfl";
    case ShflKind::up: return "__shfl_up";
    case ShflKind::down: return "__shfl_down";
    case ShflKind::bxor: return "__shfl_xor";
  }
  return "__shfl?";
}

const char* type_name(ShflType t) {
  switch (t) {
    case ShflType::i32: return "int";
    case ShflType::u32: return "unsigned";
    case ShflType::i64: return "long long";
    case ShflType::u64: return "unsigned long long";
    case ShflType::f32: return "float";
    case ShflType::f64: return "double";
  }
  return "?";
}

std::string demangled(const char* mangled) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> p(abi::__cxa_demangle(mangled, nullptr, nullptr, &status), &std::free);
  return status == 0 && p ? std::string(p.get()) : std::string(mangled);
}

struct Collective {
  ShflKind kind = ShflKind::idx;
  ShflType type = ShflType::i32;
  int width = 0;
  std::source_location where;
  std::uint32_t first_lane = 0;

  [[nodiscard]] std::string describe() const {
    return std::string(kind_name(kind)) + "(" + type_name(type) + ", width " + std::to_string(width) + ") at " +
           site(where);
  }
};

struct WarpState {
  std::uint32_t nlanes = 0;   // lanes that exist (fewer in the last warp of a partial block)
  std::uint32_t arrived = 0;  // lanes waiting at the current collective
  Collective op;
  std::array<std::uint64_t, kMaxLanes> vals{};
  std::array<std::uint64_t, kMaxLanes> out{};
  std::array<std::int32_t, kMaxLanes> src{};  // -1: a lane that does not exist
};

class Worker {
 public:
  Worker()
      : slots_(std::make_unique<Slot[]>(kMaxBlockThreads)),
        warps_(std::make_unique<WarpState[]>(kMaxWarps)),
        order_(std::make_unique<std::uint16_t[]>(kMaxBlockThreads)) {}
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
  ~Worker() {
    retire_fibers();
    for (auto& [tag, buf] : shared_) ::operator delete(buf.data, std::align_val_t{std::max<std::size_t>(buf.align, 64)});
  }

  // PMQA_SHARED storage: one buffer per declaration (tag), kept for later blocks and launches on
  // this OS thread. Blocks of one worker run in turn, so this is exactly per-block memory.
  // A new buffer starts zeroed. On a GPU, shared memory holds whatever an earlier block left; here
  // a kernel that reads before the write it should wait for (a missing __syncthreads()) sees zeros
  // in its first block and an earlier block's values after, never the heap's leftovers: its results
  // depend on the schedule seed alone, and an index it reads stays one some block computed (a heap
  // leftover taken as a loop count or a sequence index sent the racing mutant far outside every
  // buffer, a crash one run in a few).
  void* shared(const void* tag, std::size_t bytes, std::size_t align) {
    auto it = shared_.find(tag);
    if (it == shared_.end()) {
      void* p = ::operator new(bytes, std::align_val_t{std::max<std::size_t>(align, 64)});
      std::memset(p, 0, bytes);
      it = shared_.emplace(tag, SharedBuffer{p, align}).first;
    }
    return it->second.data;
  }

  // Takes blocks of L until none is left or the launch failed; errors go to L.fail.
  void run(Launch& L) noexcept {
    try {
      prepare(L);
      for (;;) {
        if (L.failed.load(std::memory_order_relaxed)) {
          break;
        }
        const std::uint64_t k = L.next.fetch_add(1, std::memory_order_relaxed);
        if (k >= L.nblocks) {
          break;
        }
        run_block(L, L.order ? (*L.order)(k) : k);
      }
    } catch (...) {
      L.fail(std::current_exception());
    }
    tls_thread = nullptr;
    launch_ = nullptr;
  }

  // The hot paths are inlined into block_barrier / warp_shuffle down to the jump itself: Boost's
  // jump_fcontext resumes with an indirect jmp, which leaves the CPU's return-stack predictor one
  // entry off, so every return between the switch and the kernel mispredicts. One return is cheap,
  // four (the naive call depth) doubled the cost of a yield.
  [[gnu::always_inline]] inline void barrier(const std::source_location& where);
  [[gnu::always_inline]] inline std::uint64_t shuffle(std::uint64_t bits, ShflKind kind, long long arg, int width,
                                                     ShflType type, const std::source_location& where);

 private:
  struct SharedBuffer {
    void* data;
    std::size_t align;
  };
  std::unordered_map<const void*, SharedBuffer> shared_;

  struct Slot {
    boost::context::fiber fiber;
    ThreadCtx ctx;
    boost::context::stack_context stack;
  };

  ThreadCtx& me() { return slots_[tls_thread->linear].ctx; }

  void prepare(const Launch& L);
  void run_block(const Launch& L, std::uint64_t linear);
  void abort_block();
  [[noreturn]] void throw_block_error(const Launch& L, const std::string& deadlock, std::exception_ptr err,
                                      std::uint32_t culprit);
  [[nodiscard]] std::string deadlock_report() const;
  [[nodiscard]] std::string threads_list(const std::vector<std::uint32_t>& ids) const;
  boost::context::fiber fiber_main(std::uint32_t i, boost::context::fiber&& jumper);
  void retire_fibers();

  // Switching. A fiber that blocks or finishes jumps straight to the next runnable fiber of the
  // current pass (one jump, not two through the scheduler); the last one of a pass returns to the
  // scheduler, which starts the next pass. Whoever jumps records itself in from_; the fiber that
  // wakes up stores the jumper's continuation (park).
  static constexpr std::uint32_t kScheduler = 0xffffffffU;

  [[nodiscard, gnu::always_inline]] std::uint32_t slot_at(std::uint32_t k) const { return seeded_ ? order_[k] : k; }
  [[nodiscard, gnu::always_inline]] std::uint32_t next_runnable(std::uint32_t k) const {
    for (; k < nthreads_; ++k) {
      const std::uint8_t st = slots_[slot_at(k)].ctx.state;
      if (st == kFresh || st == kRunnable) {
        break;
      }
    }
    return k;
  }
  [[gnu::always_inline]] void park(boost::context::fiber&& jumper) {
    (from_ == kScheduler ? sched_ : slots_[from_].fiber) = std::move(jumper);
  }
  // One switch to `target`, the continuation of fiber `to` or of the scheduler; returns the
  // continuation of whoever switches back here. Under AddressSanitizer every switch is announced
  // (Boost 1.74's fcontext fiber does not), else ASan mistakes fiber stacks for overflows.
  [[gnu::always_inline]] boost::context::fiber jump(boost::context::fiber& target, [[maybe_unused]] std::uint32_t to) {
#if PMQA_HOST_ASAN
    void* fake_stack = nullptr;
    asan_leave(&fake_stack, to);
#endif
    boost::context::fiber back = std::move(target).resume();
#if PMQA_HOST_ASAN
    asan_arrive(fake_stack);
#endif
    return back;
  }
#if PMQA_HOST_ASAN
  void asan_leave(void** fake_stack, std::uint32_t to) {
    if (to == kScheduler) {
      __sanitizer_start_switch_fiber(fake_stack, sched_bottom_, sched_size_);
    } else {
      const boost::context::stack_context& st = slots_[to].stack;
      __sanitizer_start_switch_fiber(fake_stack, static_cast<char*>(st.sp) - st.size, st.size);
    }
  }
  void asan_arrive(void* fake_stack) {
    const void* bottom = nullptr;
    std::size_t size = 0;
    __sanitizer_finish_switch_fiber(fake_stack, &bottom, &size);
    if (from_ == kScheduler) {
      sched_bottom_ = bottom;
      sched_size_ = size;
    }
  }
  const void* sched_bottom_ = nullptr;
  std::size_t sched_size_ = 0;
#endif
  // From the scheduler's context: run fiber i until control comes back to the scheduler.
  void run_from_scheduler(std::uint32_t i) {
    Slot& s = slots_[i];
    s.ctx.state = kRunnable;
    tls_thread = &s.ctx;
    from_ = kScheduler;
    park(jump(s.fiber, i));
  }
  // From fiber `self`, which has blocked or finished: hand the OS thread on.
  [[gnu::always_inline]] void hand_off(std::uint32_t self) {
    from_ = self;
    if (!error_ && !aborting_) [[likely]] {
      const std::uint32_t k = next_runnable(pos_ + 1);
      if (k < nthreads_) {
        pos_ = k;
        const std::uint32_t i = slot_at(k);
        Slot& s = slots_[i];
        s.ctx.state = kRunnable;
        tls_thread = &s.ctx;
        park(jump(s.fiber, i));
        return;
      }
    }
    park(jump(sched_, kScheduler));
  }
  // A kernel thread waits (barrier, collective) until made runnable again.
  [[gnu::always_inline]] void block_current(ThreadCtx& c, std::uint8_t state) {
    c.state = state;
    --runnable_;
    hand_off(c.linear);
    if (aborting_) [[unlikely]] {
      throw Unwind{};
    }
  }

  StackPool pool_;  // before the fibers: their stacks come from it
  std::unique_ptr<Slot[]> slots_;
  std::unique_ptr<WarpState[]> warps_;
  std::unique_ptr<std::uint16_t[]> order_;
  std::uint32_t nfibers_ = 0;
  boost::context::fiber sched_;  // the scheduler, while a fiber runs
  std::uint32_t from_ = kScheduler;
  std::uint32_t pos_ = 0;  // position of the running fiber in the current pass
  BlockInfo info_;
  const Launch* launch_ = nullptr;

  bool geom_valid_ = false;
  Dim3 geom_block_;
  int geom_warp_ = 0;
  std::uint32_t nthreads_ = 0;
  std::uint32_t nwarps_ = 0;

  std::uint32_t live_ = 0;      // threads not returned
  std::uint32_t runnable_ = 0;  // fresh or runnable threads
  std::uint32_t bar_arrived_ = 0;
  std::uint32_t bar_first_ = 0;
  std::source_location bar_where_;
  bool seeded_ = false;
  Rng rng_;
  bool aborting_ = false;
  bool quit_ = false;
  std::exception_ptr error_;
  std::uint32_t error_thread_ = 0;
};

Worker& this_thread_worker() {
  thread_local Worker w;
  return w;
}

void Worker::retire_fibers() {
  quit_ = true;
  for (std::uint32_t i = 0; i < nfibers_; ++i) {
    if (slots_[i].fiber) {
      from_ = kScheduler;
      slots_[i].fiber = jump(slots_[i].fiber, i);  // returns from fiber_main
    }
  }
  tls_thread = nullptr;
  nfibers_ = 0;
  quit_ = false;
}

boost::context::fiber Worker::fiber_main(std::uint32_t i, boost::context::fiber&& jumper) {
#if PMQA_HOST_ASAN
  asan_arrive(nullptr);
#endif
  park(std::move(jumper));
  while (!quit_) {
    try {
      launch_->invoker(launch_->kernel, launch_->params);
    } catch (const boost::context::detail::forced_unwind&) {
      throw;
    } catch (const Unwind&) {  // NOLINT(bugprone-empty-catch): the block is being aborted
    } catch (...) {
      if (!error_) {
        error_ = std::current_exception();
        error_thread_ = i;
      }
    }
    slots_[i].ctx.state = kDone;
    --live_;
    --runnable_;
    hand_off(i);  // waits here until the next block (or the end of the worker)
  }
#if PMQA_HOST_ASAN
  __sanitizer_start_switch_fiber(nullptr, sched_bottom_, sched_size_);  // this fiber ends
#endif
  return std::move(sched_);
}

void Worker::prepare(const Launch& L) {
  launch_ = &L;
  if (pool_.requested_bytes() != L.stack_bytes) {
    retire_fibers();
    pool_.reset(L.stack_bytes);
  }
  while (nfibers_ < L.nthreads) {
    const std::uint32_t i = nfibers_;
    slots_[i].fiber = boost::context::fiber(
        std::allocator_arg, PooledStack{&pool_, &slots_[i].stack},
        [this, i](boost::context::fiber&& sched) { return fiber_main(i, std::move(sched)); });
    ++nfibers_;
  }
  const LaunchConfig& cfg = *L.cfg;
  info_.grid_dim = cfg.grid;
  info_.block_dim = cfg.block;
  info_.warp_size = cfg.warp_size;
  if (!geom_valid_ || geom_block_ != cfg.block || geom_warp_ != cfg.warp_size) {
    const auto ws = static_cast<std::uint32_t>(cfg.warp_size);
    nthreads_ = L.nthreads;
    nwarps_ = (nthreads_ + ws - 1) / ws;
    for (std::uint32_t t = 0; t < nthreads_; ++t) {
      ThreadCtx& c = slots_[t].ctx;
      c.thread_idx = Dim3(t % cfg.block.x, (t / cfg.block.x) % cfg.block.y, t / (cfg.block.x * cfg.block.y));
      c.linear = t;
      c.warp = t / ws;
      c.lane = t % ws;
      c.block = &info_;
      c.worker = this;
    }
    for (std::uint32_t w = 0; w < nwarps_; ++w) {
      warps_[w].nlanes = std::min(ws, nthreads_ - w * ws);
    }
    geom_block_ = cfg.block;
    geom_warp_ = cfg.warp_size;
    geom_valid_ = true;
  }
}

void Worker::run_block(const Launch& L, std::uint64_t linear) {
  const LaunchConfig& cfg = *L.cfg;
  info_.block_idx = Dim3(linear % cfg.grid.x, (linear / cfg.grid.x) % cfg.grid.y,
                         linear / (std::uint64_t{cfg.grid.x} * cfg.grid.y));
  const std::uint32_t n = nthreads_;
  for (std::uint32_t i = 0; i < n; ++i) {
    slots_[i].ctx.state = kFresh;
  }
  for (std::uint32_t w = 0; w < nwarps_; ++w) {
    warps_[w].arrived = 0;
  }
  live_ = n;
  runnable_ = n;
  bar_arrived_ = 0;
  error_ = nullptr;
  aborting_ = false;
  seeded_ = cfg.schedule_seed != 0;
  rng_ = Rng{mix64(cfg.schedule_seed ^ mix64(linear + 0x632be59bd9b4e019ULL))};
  if (seeded_) {  // the interleaving of a block depends on the seed and the block only
    for (std::uint32_t i = 0; i < n; ++i) {
      order_[i] = static_cast<std::uint16_t>(i);
    }
  }

  std::string deadlock;
  while (live_ != 0 && !error_) {  // one pass per iteration
    if (runnable_ == 0) {
      deadlock = deadlock_report();
      break;
    }
    if (seeded_) {
      for (std::uint32_t k = n; k > 1; --k) {
        std::swap(order_[k - 1], order_[rng_.below(k)]);
      }
    }
    pos_ = next_runnable(0);
    run_from_scheduler(slot_at(pos_));
  }
  tls_thread = nullptr;
  if (deadlock.empty() && !error_) {
    return;
  }
  std::exception_ptr err = error_;
  const std::uint32_t culprit = error_thread_;
  abort_block();
  throw_block_error(L, deadlock, err, culprit);
}

void Worker::abort_block() {
  aborting_ = true;
  for (std::uint32_t i = 0; i < nthreads_; ++i) {
    Slot& s = slots_[i];
    if (s.ctx.state == kFresh) {
      s.ctx.state = kDone;  // never started in this block: stays parked
      continue;
    }
    while (s.ctx.state != kDone) {
      run_from_scheduler(i);  // throws Unwind at its yield point, unwinding the kernel's frames
    }
  }
  tls_thread = nullptr;
  aborting_ = false;
}

void Worker::throw_block_error(const Launch& L, const std::string& deadlock, std::exception_ptr err,
                               std::uint32_t culprit) {
  const std::string head = L.describe() + ": block " + to_string(info_.block_idx) + ": ";
  if (!deadlock.empty()) {
    throw HostRuntimeError(head + deadlock);
  }
  const std::string who = head + "thread " + to_string(slots_[culprit].ctx.thread_idx) + ": ";
  try {
    std::rethrow_exception(err);
  } catch (const HostRuntimeError& e) {
    throw HostRuntimeError(who + e.what());
  } catch (const std::exception& e) {
    std::throw_with_nested(HostRuntimeError(who + "the kernel threw " + demangled(typeid(e).name()) + ": " + e.what()));
  } catch (...) {
    std::throw_with_nested(HostRuntimeError(who + "the kernel threw an exception not derived from std::exception"));
  }
}

std::string Worker::threads_list(const std::vector<std::uint32_t>& ids) const {
  constexpr std::size_t kShown = 8;
  std::string s;
  for (std::size_t k = 0; k < ids.size() && k < kShown; ++k) {
    if (k != 0) {
      s += ' ';
    }
    s += to_string(slots_[ids[k]].ctx.thread_idx);
  }
  if (ids.size() > kShown) {
    s += " and " + std::to_string(ids.size() - kShown) + " more";
  }
  return s;
}

std::string Worker::deadlock_report() const {
  std::vector<std::uint32_t> done;
  std::vector<std::uint32_t> at_barrier;
  for (std::uint32_t i = 0; i < nthreads_; ++i) {
    if (slots_[i].ctx.state == kDone) {
      done.push_back(i);
    } else if (slots_[i].ctx.state == kAtBarrier) {
      at_barrier.push_back(i);
    }
  }
  std::string r = "deadlock, no thread of the block can continue:";
  if (!at_barrier.empty()) {
    r += cat(" ", std::to_string(at_barrier.size()), " of ", std::to_string(nthreads_),
             " threads wait at __syncthreads() at ", site(bar_where_), " (", threads_list(at_barrier), ");");
  }
  bool collective_with_returned = false;
  const auto ws = static_cast<std::uint32_t>(info_.warp_size);
  for (std::uint32_t w = 0; w < nwarps_; ++w) {
    const WarpState& st = warps_[w];
    if (st.arrived == 0) {
      continue;
    }
    std::vector<std::uint32_t> waiting;
    std::vector<std::uint32_t> returned;
    std::vector<std::uint32_t> barrier;
    for (std::uint32_t l = 0; l < st.nlanes; ++l) {
      const std::uint32_t t = w * ws + l;
      const std::uint8_t s = slots_[t].ctx.state;
      (s == kAtWarp ? waiting : s == kDone ? returned : barrier).push_back(t);
    }
    r += cat(" warp ", std::to_string(w), ": ", std::to_string(waiting.size()), " of ", std::to_string(st.nlanes),
             " lanes wait at ", st.op.describe());
    if (!returned.empty()) {
      r += ", lanes that returned: " + threads_list(returned);
      collective_with_returned = true;
    }
    if (!barrier.empty()) {
      r += ", lanes at __syncthreads(): " + threads_list(barrier);
    }
    r += ";";
  }
  if (!done.empty()) {
    r += cat(" ", std::to_string(done.size()), " thread(s) returned: ", threads_list(done), ".");
  }
  if (!at_barrier.empty() && !done.empty()) {
    r += " A __syncthreads() must be reached by every thread of the block; threads that return before it "
         "make it a divergent barrier.";
  }
  if (collective_with_returned) {
    r += " A warp collective needs every lane of the warp; some lanes returned before it.";
  }
  return r;
}

[[noreturn, gnu::noinline, gnu::cold]] void throw_divergent_barrier(const std::source_location& where,
                                                                   const Dim3& first,
                                                                   const std::source_location& first_where) {
  throw HostRuntimeError("reached __syncthreads() at " + site(where) + " while thread " + to_string(first) +
                         " waits at a different __syncthreads() at " + site(first_where) +
                         ": a barrier in divergent code");
}

[[noreturn, gnu::noinline, gnu::cold]] void throw_bad_shuffle(ShflKind kind, long long arg, int width, int warp_size,
                                                             const std::source_location& where) {
  if (kind == ShflKind::bxor && arg < 0) {
    throw HostRuntimeError("__shfl_xor at " + site(where) + ": negative laneMask " + std::to_string(arg));
  }
  throw HostRuntimeError(std::string(kind_name(kind)) + " at " + site(where) + ": width " + std::to_string(width) +
                         " is not a power of two in [1, warpSize = " + std::to_string(warp_size) + "]");
}

[[noreturn, gnu::noinline, gnu::cold]] void throw_lanes_disagree(std::uint32_t warp, const Collective& mine,
                                                                const Collective& first) {
  throw HostRuntimeError("lanes of warp " + std::to_string(warp) + " disagree at a warp collective: lane " +
                         std::to_string(mine.first_lane) + " is at " + mine.describe() + " while lane " +
                         std::to_string(first.first_lane) + " waits at " + first.describe());
}

inline void Worker::barrier(const std::source_location& where) {
  if (aborting_) [[unlikely]] {
    throw Unwind{};
  }
  ThreadCtx& c = me();
  if (bar_arrived_ == 0) {
    bar_where_ = where;
    bar_first_ = c.linear;
  } else if (!same_site(where, bar_where_)) [[unlikely]] {
    throw_divergent_barrier(where, slots_[bar_first_].ctx.thread_idx, bar_where_);
  }
  if (++bar_arrived_ == nthreads_) {
    bar_arrived_ = 0;
    for (std::uint32_t i = 0; i < nthreads_; ++i) {
      if (slots_[i].ctx.state == kAtBarrier) {
        slots_[i].ctx.state = kRunnable;
      }
    }
    runnable_ += nthreads_ - 1;
    return;  // the last to arrive goes on without yielding
  }
  block_current(c, kAtBarrier);
}

inline std::uint64_t Worker::shuffle(std::uint64_t bits, ShflKind kind, long long arg, int width, ShflType type,
                              const std::source_location& where) {
  if (aborting_) [[unlikely]] {
    throw Unwind{};
  }
  ThreadCtx& c = me();
  const int W = info_.warp_size;
  if (width <= 0 || width > W || (width & (width - 1)) != 0 || (kind == ShflKind::bxor && arg < 0)) [[unlikely]] {
    throw_bad_shuffle(kind, arg, width, W, where);
  }
  // HIP's rules (ds_bpermute index computation), lanes in segments of `width`.
  const long long lane = c.lane;
  const long long wd = width;
  const long long seg = lane & ~(wd - 1);
  long long src = lane;
  switch (kind) {
    case ShflKind::idx: src = seg + (arg & (wd - 1)); break;
    case ShflKind::up: src = lane - arg < seg ? lane : lane - arg; break;
    case ShflKind::down: src = (lane & (wd - 1)) + arg >= wd ? lane : lane + arg; break;
    case ShflKind::bxor: src = (lane ^ arg) >= seg + wd ? lane : (lane ^ arg); break;
  }
  WarpState& ws = warps_[c.warp];
  if (ws.arrived == 0) {
    ws.op = Collective{kind, type, width, where, c.lane};
  } else if (ws.op.kind != kind || ws.op.type != type || ws.op.width != width || !same_site(ws.op.where, where))
      [[unlikely]] {
    throw_lanes_disagree(c.warp, Collective{kind, type, width, where, c.lane}, ws.op);
  }
  ws.vals[c.lane] = bits;
  ws.src[c.lane] = src < ws.nlanes ? static_cast<std::int32_t>(src) : -1;
  if (++ws.arrived == ws.nlanes) {
    ws.arrived = 0;
    const std::uint32_t base = c.warp * static_cast<std::uint32_t>(W);
    for (std::uint32_t l = 0; l < ws.nlanes; ++l) {
      const std::int32_t s = ws.src[l];
      if (s >= 0) {
        ws.out[l] = ws.vals[static_cast<std::uint32_t>(s)];
      } else {  // a lane that does not exist in this partial warp: unspecified value
        ws.out[l] = seeded_ ? rng_.next() : ws.vals[l];
      }
      ThreadCtx& t = slots_[base + l].ctx;
      if (t.state == kAtWarp) {
        t.state = kRunnable;
      }
    }
    runnable_ += ws.nlanes - 1;
    return ws.out[c.lane];  // the last to arrive goes on without yielding
  }
  block_current(c, kAtWarp);
  return ws.out[c.lane];
}

// ---- the pool of OS threads for os_threads > 1

// Helper OS threads, created on demand and kept for later launches. Each owns a Worker (fibers,
// stacks) held by the pool itself rather than by the thread (no thread_local), so that everything
// stays reachable from the process-wide pool: a fork()ed child, which has none of these threads,
// can leave them behind without LeakSanitizer calling them leaks.
class Pool {
 public:
  static Pool& instance() {
    static Pool pool;
    return pool;
  }
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool() {
    {
      const std::lock_guard lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (const auto& h : helpers_) {
      ::pthread_join(h->thread, nullptr);
    }
  }

  // Runs L on the calling thread and nthreads - 1 pool threads; one such launch at a time.
  void run(Launch& L, int nthreads) {
    const std::lock_guard serial(run_mu_);
    const auto wanted = static_cast<std::size_t>(nthreads - 1);
    {
      const std::lock_guard lock(mu_);
      while (helpers_.size() < wanted) {
        start_helper();
      }
      job_ = &L;
      active_ = wanted;
      pending_ = wanted;
      ++gen_;
    }
    wake_.notify_all();
    this_thread_worker().run(L);
    std::unique_lock lock(mu_);
    done_.wait(lock, [this] { return pending_ == 0; });
    job_ = nullptr;
  }

 private:
  struct Helper {
    Pool* pool = nullptr;
    std::size_t index = 0;
    std::uint64_t seen = 0;  // the last job generation looked at
    pthread_t thread{};
    Worker worker;
  };

  Pool() {
    ::pthread_atfork(nullptr, nullptr, [] { Pool::instance().forget_threads_after_fork(); });
  }

  void start_helper() {  // with mu_ held
    auto h = std::make_unique<Helper>();
    h->pool = this;
    h->index = helpers_.size();
    h->seen = gen_;
    if (const int rc = ::pthread_create(&h->thread, nullptr, &Pool::helper_main, h.get()); rc != 0) {
      throw HostRuntimeError("pmqa host runtime: cannot start an OS thread: " + std::string(std::strerror(rc)));
    }
    helpers_.push_back(std::move(h));
  }

  static void* helper_main(void* arg) {
    auto& h = *static_cast<Helper*>(arg);
    h.pool->loop(h);
    return nullptr;
  }

  void loop(Helper& h) {
    for (;;) {
      Launch* job = nullptr;
      {
        std::unique_lock lock(mu_);
        wake_.wait(lock, [&] { return stop_ || gen_ != h.seen; });
        if (stop_) {
          return;
        }
        h.seen = gen_;
        if (h.index >= active_) {
          continue;
        }
        job = job_;
      }
      h.worker.run(*job);
      const std::lock_guard lock(mu_);
      if (--pending_ == 0) {
        done_.notify_all();
      }
    }
  }

  // In a fork()ed child (GoogleTest's default death tests fork): the helper threads do not exist
  // there. Keep their state (reachable, never touched again) and start afresh.
  void forget_threads_after_fork() {
    new (&run_mu_) std::mutex();
    new (&mu_) std::mutex();
    new (&wake_) std::condition_variable();
    new (&done_) std::condition_variable();
    for (auto& h : helpers_) {
      left_behind_.push_back(h.release());
    }
    helpers_.clear();
    job_ = nullptr;
    active_ = 0;
    pending_ = 0;
  }

  std::mutex run_mu_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::vector<std::unique_ptr<Helper>> helpers_;
  std::vector<Helper*> left_behind_;  // by a fork
  Launch* job_ = nullptr;
  std::uint64_t gen_ = 0;
  std::size_t active_ = 0;
  std::size_t pending_ = 0;
  bool stop_ = false;
};

std::string config_problem(const LaunchConfig& cfg) {
  if (cfg.warp_size != 32 && cfg.warp_size != 64) {
    return "warp_size must be 32 or 64";
  }
  if (cfg.block.volume() == 0) {
    return "block has a zero dimension";
  }
  if (cfg.block.volume() > kMaxBlockThreads) {
    return "block of " + std::to_string(cfg.block.volume()) + " threads exceeds 1024";
  }
  if (cfg.grid.volume() == 0) {
    return "grid has a zero dimension";
  }
  if (cfg.grid.volume() > kMaxBlocks) {
    return "grid of " + std::to_string(cfg.grid.volume()) + " blocks exceeds 2^40";
  }
  if (cfg.os_threads < 1 || cfg.os_threads > kMaxOsThreads) {
    return "os_threads must be in [1, " + std::to_string(kMaxOsThreads) + "]";
  }
  if (cfg.stack_bytes < kMinStackBytes || cfg.stack_bytes > kMaxStackBytes) {
    return "stack_bytes must be in [" + std::to_string(kMinStackBytes) + ", " + std::to_string(kMaxStackBytes) + "]";
  }
  return {};
}

}  // namespace

void outside_kernel(const char* what) {
  throw HostRuntimeError(std::string("pmqa host runtime: ") + what +
                         " used outside a kernel run by pmqa::host::launch");
}

[[gnu::flatten]] void block_barrier(const std::source_location& where) {
  const ThreadCtx& c = current_thread("__syncthreads()");
  static_cast<Worker*>(c.worker)->barrier(where);
}

[[gnu::flatten]] std::uint64_t warp_shuffle(std::uint64_t bits, ShflKind kind, long long arg, int width,
                                            ShflType type, const std::source_location& where) {
  const ThreadCtx& c = current_thread(kind_name(kind));
  return static_cast<Worker*>(c.worker)->shuffle(bits, kind, arg, width, type, where);
}

void trap(const std::source_location& where) { throw HostRuntimeError("__trap() called at " + site(where)); }

void* block_shared(const void* tag, std::size_t bytes, std::size_t align) {
  const ThreadCtx& c = current_thread("PMQA_SHARED");
  return static_cast<Worker*>(c.worker)->shared(tag, bytes, align);
}

void launch_erased(const LaunchConfig& cfg, ErasedKernel kernel, Invoker invoker, void* params) {
  Launch L;
  L.cfg = &cfg;
  if (tls_thread != nullptr) {
    throw HostRuntimeError(L.describe() + ": called from inside a kernel (dynamic parallelism is not supported)");
  }
  if (std::string problem = config_problem(cfg); !problem.empty()) {
    throw HostRuntimeError(L.describe() + ": " + problem);
  }
  L.kernel = kernel;
  L.invoker = invoker;
  L.params = params;
  L.nblocks = cfg.grid.volume();
  L.nthreads = static_cast<std::uint32_t>(cfg.block.volume());
  L.stack_bytes = cfg.stack_bytes;
  if (cfg.schedule_seed != 0) {
    L.order.emplace(L.nblocks, cfg.schedule_seed);
  }
  const int threads = static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(cfg.os_threads), L.nblocks));
  if (threads == 1) {
    this_thread_worker().run(L);
  } else {
    Pool::instance().run(L, threads);
  }
  if (L.error) {
    std::rethrow_exception(L.error);
  }
}

}  // namespace detail
}  // namespace pmqa::host
