#include "stack_pool.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "pmqa/kernels/host/runtime.hpp"

namespace pmqa::host::detail {

StackPool::~StackPool() { unmap_all(); }

void StackPool::unmap_all() noexcept {
  for (auto& [base, bytes] : chunks_) {
    ::munmap(base, bytes);
  }
  chunks_.clear();
  free_.clear();
}

void StackPool::reset(std::size_t usable_bytes) {
  if (outstanding_ != 0) {
    throw HostRuntimeError("pmqa host runtime: internal error: stack pool reset with stacks in use");
  }
  unmap_all();
  page_ = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  requested_ = usable_bytes;
  usable_ = (usable_bytes + page_ - 1) / page_ * page_;
}

void StackPool::grow() {
  const std::size_t slot = page_ + usable_ + kColourBytes;  // guard page, then the stack
  const std::size_t bytes = slot * kStacksPerChunk;
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    throw HostRuntimeError("pmqa host runtime: cannot map " + std::to_string(bytes) +
                           " bytes of fiber stacks: " + std::strerror(errno));
  }
  chunks_.emplace_back(base, bytes);
  auto* p = static_cast<char*>(base);
  free_.reserve(chunks_.size() * kStacksPerChunk);  // every stack fits: deallocate never allocates
  for (std::size_t i = kStacksPerChunk; i-- > 0;) {
    char* guard = p + i * slot;
    if (::mprotect(guard, page_, PROT_NONE) != 0) {
      throw HostRuntimeError(std::string("pmqa host runtime: cannot protect a stack guard page: ") +
                             std::strerror(errno));
    }
    const std::size_t colour = (next_colour_++ * 37 % kColours) * kColourStep;
    free_.push_back(guard + slot - colour);  // top of the stack above this guard
  }
}

boost::context::stack_context StackPool::allocate() {
  if (free_.empty()) {
    grow();
  }
  boost::context::stack_context sctx;
  sctx.sp = free_.back();
  sctx.size = usable_;  // at least: the colour only moves the top down within the slot's extra bytes
  free_.pop_back();
  ++outstanding_;
  return sctx;
}

void StackPool::deallocate(boost::context::stack_context& sctx) noexcept {
  free_.push_back(sctx.sp);  // capacity reserved in grow(): no allocation here
  --outstanding_;
}

}  // namespace pmqa::host::detail
