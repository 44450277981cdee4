// Fiber stacks for the host executor: mmap'ed in chunks, each stack with a PROT_NONE guard page
// below it (stacks grow down), handed out and taken back without system calls once mapped.
#pragma once

#include <boost/context/stack_context.hpp>

#include <cstddef>
#include <utility>
#include <vector>

namespace pmqa::host::detail {

class StackPool {
 public:
  StackPool() = default;
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;
  ~StackPool();

  // Usable bytes per stack (rounded up to whole pages). Only while no stack is handed out.
  void reset(std::size_t usable_bytes);
  // The size asked for in the last reset (0 before any).
  [[nodiscard]] std::size_t requested_bytes() const { return requested_; }
  [[nodiscard]] std::size_t outstanding() const { return outstanding_; }

  boost::context::stack_context allocate();
  void deallocate(boost::context::stack_context& sctx) noexcept;

 private:
  void grow();
  void unmap_all() noexcept;

  static constexpr std::size_t kStacksPerChunk = 32;
  // Stack tops are staggered ("coloured") by multiples of 256 bytes over kColourBytes, so that the
  // hot top-of-stack lines of hundreds of fibers do not all map to the same cache sets (with every
  // top at the same offset in its page, a 256-thread block thrashes L1). Boost.Context aligns its
  // control record to 256 bytes, hence the step. The colour comes on top of the usable size.
  static constexpr std::size_t kColourStep = 256;
  static constexpr std::size_t kColours = 64;
  static constexpr std::size_t kColourBytes = kColourStep * kColours;
  std::size_t next_colour_ = 0;
  std::size_t requested_ = 0;
  std::size_t usable_ = 0;
  std::size_t page_ = 0;
  std::size_t outstanding_ = 0;
  std::vector<std::pair<void*, std::size_t>> chunks_;
  std::vector<void*> free_;  // stack tops
};

// The stack allocator Boost.Context's fiber expects; stays bound to one pool. Records the stack it
// hands out in *out (the runtime tells AddressSanitizer about stack switches).
struct PooledStack {
  StackPool* pool;
  boost::context::stack_context* out;
  boost::context::stack_context allocate() { return *out = pool->allocate(); }
  void deallocate(boost::context::stack_context& sctx) noexcept { pool->deallocate(sctx); }
};

}  // namespace pmqa::host::detail
