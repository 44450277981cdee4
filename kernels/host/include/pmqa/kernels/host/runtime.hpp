// pmqa host executor: runs the project's HIP kernel sources on the CPU.
//
// One fiber (Boost.Context) per GPU thread, the threads of a block resumed round-robin on one OS
// thread, __syncthreads() and warp collectives are yield points, blocks run one after another per OS
// thread (optionally spread over several OS threads). Kernel sources include hip_host.hpp (the HIP
// subset shim) instead of <hip/hip_runtime.h>; host code calls pmqa::host::launch.
//
// This is a test backend, not a product: it supports exactly what pmqa's kernels use (the list is at
// the top of hip_host.hpp) and rejects everything else at compile time or with a HostRuntimeError.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <source_location>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace pmqa::host {

// Every error the runtime reports: bad launch configuration, deadlock or divergence at a barrier or
// warp collective, misuse of an intrinsic, or an exception thrown by a kernel thread (wrapped: the
// original is attached with std::nested_exception, get it back with std::rethrow_if_nested).
// The message names the launch geometry, the block and, where one is to blame, the thread.
class HostRuntimeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// HIP's dim3 (hip_host.hpp makes it visible as ::dim3). Unlike HIP it refuses negative or
// out-of-range values instead of wrapping them, and it accepts any integer type without a
// narrowing error, so `.grid = {nblocks}` works with an int.
struct Dim3 {
  std::uint32_t x = 1;
  std::uint32_t y = 1;
  std::uint32_t z = 1;

  constexpr Dim3() = default;
  template <std::integral X, std::integral Y = std::uint32_t, std::integral Z = std::uint32_t>
  constexpr Dim3(X x_, Y y_ = 1, Z z_ = 1) : x(checked(x_)), y(checked(y_)), z(checked(z_)) {}  // NOLINT: implicit like HIP's

  [[nodiscard]] constexpr std::uint64_t volume() const {
    return std::uint64_t{x} * std::uint64_t{y} * std::uint64_t{z};
  }
  friend constexpr bool operator==(const Dim3&, const Dim3&) = default;

 private:
  template <std::integral T>
  static constexpr std::uint32_t checked(T v) {
    if (std::cmp_less(v, 0) || std::cmp_greater(v, std::numeric_limits<std::uint32_t>::max())) {
      throw HostRuntimeError("pmqa::host::Dim3: component " + std::to_string(v) +
                             " is outside [0, 2^32)");
    }
    return static_cast<std::uint32_t>(v);
  }
};

// "(x,y,z)"
std::string to_string(const Dim3& d);

// Default fiber stack: 64 KiB of which a kernel thread touches only what it uses (the stacks are
// mmap'ed, so untouched pages cost no memory; a 1024-thread block reserves 68 MiB of address space,
// typically commits 8 KiB per fiber). Sizing: a kernel frame of this project (fp32 accumulators for
// a 128-wide head, a few fp8 fragments, indices) is 1-4 KiB in Release and up to ~3x that at -O0;
// throwing an exception through it (the C++ unwinder) needs ~6 KiB; a printf from a kernel ~8 KiB.
// 64 KiB leaves a margin of >3x over the worst of these combined. Below each stack lies a
// PROT_NONE guard page, so an overflow is a SIGSEGV at the guard, never silent corruption.
inline constexpr std::size_t kDefaultStackBytes = std::size_t{64} * 1024;
inline constexpr std::size_t kMinStackBytes = std::size_t{16} * 1024;

struct LaunchConfig {
  Dim3 grid{1};
  Dim3 block{1};
  // 64 (AMD CDNA wavefront) or 32 (NVIDIA warp, RDNA wave32).
  int warp_size = 64;
  // OS threads the blocks are spread over (each with its own fibers and __shared__ memory);
  // 1 runs everything on the calling thread. Capped at the number of blocks.
  int os_threads = 1;
  // 0: blocks in order, fibers resumed in order (deterministic). Non-zero: blocks in a seeded
  // shuffled order and, at every scheduling pass, fibers resumed in a seeded shuffled order; the
  // same seed gives the same interleaving within each block. A kernel with a missing barrier or a
  // dependency between blocks then gives different results for different seeds.
  std::uint64_t schedule_seed = 0;
  // Usable stack per fiber, rounded up to whole pages; at least kMinStackBytes.
  std::size_t stack_bytes = kDefaultStackBytes;
  // Shown in error messages (the runtime cannot recover a kernel's name from its address).
  const char* name = nullptr;
};

namespace detail {

struct BlockInfo {
  Dim3 block_idx;
  Dim3 block_dim;
  Dim3 grid_dim;
  int warp_size = 64;
};

// The context of one GPU thread (fiber). Read by the inline accessors of hip_host.hpp.
struct ThreadCtx {
  Dim3 thread_idx;
  std::uint32_t linear = 0;  // x + y*bx + z*bx*by
  std::uint32_t warp = 0;    // linear / warp_size
  std::uint32_t lane = 0;    // linear % warp_size
  std::uint8_t state = 0;    // the worker's scheduling state
  const BlockInfo* block = nullptr;
  void* worker = nullptr;
};

// The thread being run on this OS thread; null outside a kernel.
inline constinit thread_local const ThreadCtx* tls_thread = nullptr;

[[noreturn]] void outside_kernel(const char* what);

inline const ThreadCtx& current_thread(const char* what) {
  const ThreadCtx* c = tls_thread;
  if (c == nullptr) [[unlikely]] {
    outside_kernel(what);
  }
  return *c;
}

enum class ShflKind : std::uint8_t { idx, up, down, bxor };
enum class ShflType : std::uint8_t { i32, u32, i64, u64, f32, f64 };

// The warp collective behind every __shfl*: `bits` holds the caller's value, `arg` the source lane,
// lane mask or delta. Returns the bits of the value read.
std::uint64_t warp_shuffle(std::uint64_t bits, ShflKind kind, long long arg, int width, ShflType type,
                           const std::source_location& where);
void block_barrier(const std::source_location& where);
// Per-block storage for one PMQA_SHARED declaration (tag: the address of a static unique to it).
void* block_shared(const void* tag, std::size_t bytes, std::size_t align);
[[noreturn]] void trap(const std::source_location& where);

using ErasedKernel = void (*)();
using Invoker = void (*)(ErasedKernel kernel, void* params);

void launch_erased(const LaunchConfig& cfg, ErasedKernel kernel, Invoker invoker, void* params);

template <class Tuple, class... P, std::size_t... I>
void invoke_kernel(ErasedKernel kernel, void* params, std::index_sequence<I...> /*unused*/) {
  auto* fn = reinterpret_cast<void (*)(P...)>(kernel);
  auto& t = *static_cast<Tuple*>(params);
  fn(std::get<I>(t)...);  // each thread gets its own copies, as kernel arguments on a GPU
}

template <class Tuple, class... P>
void invoke(ErasedKernel kernel, void* params) {
  invoke_kernel<Tuple, P...>(kernel, params, std::index_sequence_for<P...>{});
}

}  // namespace detail

// Runs `kernel` over cfg.grid x cfg.block threads and returns when every block is done. Arguments
// are converted to the kernel's parameter types once (as a GPU launch copies them); every thread
// receives its own copy. Throws HostRuntimeError on a bad configuration, a deadlock or divergence,
// or when a kernel thread throws (the first error stops the launch; remaining blocks do not run, the
// suspended threads of the failing block are unwound). The runtime stays usable afterwards.
// Not reentrant from inside a kernel (no dynamic parallelism).
template <class... P, class... A>
void launch(const LaunchConfig& cfg, void (*kernel)(P...), A&&... args) {
  static_assert(sizeof...(P) == sizeof...(A), "pmqa::host::launch: wrong number of kernel arguments");
  static_assert((!std::is_reference_v<P> && ...),
                "pmqa::host::launch: kernel parameters must be passed by value, as on a GPU");
  static_assert((std::is_trivially_copyable_v<P> && ...),
                "pmqa::host::launch: kernel parameters must be trivially copyable, as on a GPU");
  static_assert((std::is_constructible_v<P, A&&> && ...),
                "pmqa::host::launch: an argument does not convert to the kernel's parameter type");
  using Tuple = std::tuple<P...>;
  Tuple params(static_cast<P>(std::forward<A>(args))...);
  detail::launch_erased(cfg, reinterpret_cast<detail::ErasedKernel>(kernel), &detail::invoke<Tuple, P...>,
                        &params);
}

}  // namespace pmqa::host
