// Asynchronous global -> shared copies (cp.async, NVIDIA sm_80+) so a CTA can fetch its next key
// chunks while it computes on the current one. Elsewhere (the host executor, AMD builds for now)
// the copy happens at once and the commit/wait calls do nothing: same results, no overlap.
#pragma once

#include "pmqa_kernels/common/hip_compat.hpp"

#if !defined(PMQA_DEVICE_BUILD)
#include <cstring>
#endif

PMQA_KDEV_BEGIN

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define PMQA_CP_ASYNC 1
#endif

// Copies `bytes` (4 or 16; both addresses aligned to it) from src to dst, or writes zeros when
// !valid (src is then not read, but must still be a valid address).
template <int kBytes>
PMQA_DEV void async_copy(void* dst, const void* src, bool valid) {
  static_assert(kBytes == 4 || kBytes == 16, "cp.async copies 4, 8 or 16 bytes; pmqa uses 4 and 16");
#if defined(PMQA_CP_ASYNC)
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  const int n = valid ? kBytes : 0;  // src-size 0: zero-fill
  if constexpr (kBytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(n) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(src), "r"(n) : "memory");
#else
  if (valid) __builtin_memcpy(dst, src, kBytes);
  else __builtin_memset(dst, 0, kBytes);
#endif
}

// Closes the group of copies issued since the last commit.
PMQA_DEV void async_commit() {
#if defined(PMQA_CP_ASYNC)
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most kPending of this thread's committed groups are still in flight. A barrier
// after it makes every thread's copies visible to the whole CTA.
template <int kPending>
PMQA_DEV void async_wait() {
#if defined(PMQA_CP_ASYNC)
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
#endif
}

PMQA_KDEV_END
