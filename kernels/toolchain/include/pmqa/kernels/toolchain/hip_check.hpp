// PMQA_HIP_CHECK(call): evaluate a HIP runtime call; unless it returns hipSuccess, throw
// std::runtime_error naming the call, the file and line, the error name and hipGetErrorString.
//
//   PMQA_HIP_CHECK(hipMalloc(&ptr, bytes));
//   -> "HIP call hipMalloc(&ptr, bytes) failed at src/run.cpp:42: hipErrorOutOfMemory (2): out of memory"
//
// The header includes no HIP header: hipSuccess, hipGetErrorName and hipGetErrorString are looked up
// where the macro is used, so it works with HIP (AMD or NVIDIA backend) and with any runtime that
// provides those three names. Include the runtime first.
#pragma once

#include <stdexcept>
#include <string>

namespace pmqa::kernels::toolchain {

[[noreturn]] inline void throw_hip_error(long code, const char* name, const char* text,
                                         const char* call, const char* file, int line) {
  std::string msg = "HIP call ";
  msg += call;
  msg += " failed at ";
  msg += file;
  msg += ':';
  msg += std::to_string(line);
  msg += ": ";
  msg += name != nullptr ? name : "(unnamed error)";
  msg += " (";
  msg += std::to_string(code);
  msg += "): ";
  msg += text != nullptr ? text : "(no description)";
  throw std::runtime_error(msg);
}

}  // namespace pmqa::kernels::toolchain

#define PMQA_HIP_CHECK(call)                                                                        \
  do {                                                                                              \
    const auto pmqa_hip_check_status_ = (call);                                                     \
    if (pmqa_hip_check_status_ != hipSuccess) {                                                     \
      ::pmqa::kernels::toolchain::throw_hip_error(                                                  \
          static_cast<long>(pmqa_hip_check_status_), hipGetErrorName(pmqa_hip_check_status_),       \
          hipGetErrorString(pmqa_hip_check_status_), #call, __FILE__, __LINE__);                    \
    }                                                                                               \
  } while (0)
