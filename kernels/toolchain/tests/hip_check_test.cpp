// Unit test of PMQA_HIP_CHECK without a GPU or HIP install: a minimal stand-in runtime provides the
// three names the macro uses (hipSuccess, hipGetErrorName, hipGetErrorString), as the host
// executor's runtime may. Checks: success passes through and evaluates the call once; a failure
// throws std::runtime_error naming the call, the file, the line, the error name, code and text.
#include <cstdio>
#include <stdexcept>
#include <string>

enum hipError_t { hipSuccess = 0, hipErrorOutOfMemory = 2 };
inline const char* hipGetErrorName(hipError_t e) { return e == hipSuccess ? "hipSuccess" : "hipErrorOutOfMemory"; }
inline const char* hipGetErrorString(hipError_t e) { return e == hipSuccess ? "no error" : "out of memory"; }

#include "pmqa/kernels/toolchain/hip_check.hpp"

namespace {

int calls = 0;
hipError_t fake_malloc(void** p, unsigned long bytes) {
  ++calls;
  *p = nullptr;
  return bytes > 1024 ? hipErrorOutOfMemory : hipSuccess;
}

int failures = 0;
void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::printf("FAIL: %s\n", what.c_str());
    ++failures;
  }
}

}  // namespace

int main() {
  void* p = nullptr;
  PMQA_HIP_CHECK(fake_malloc(&p, 16));
  expect(calls == 1, "the call is evaluated exactly once");

  const int line = __LINE__ + 2;
  try {
    PMQA_HIP_CHECK(fake_malloc(&p, 1 << 20));
    expect(false, "a failing call must throw");
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    std::printf("message: %s\n", msg.c_str());
    for (const std::string& part : {std::string("fake_malloc(&p, 1 << 20)"), std::string("hip_check_test.cpp:") +
                                    std::to_string(line), std::string("hipErrorOutOfMemory (2)"),
                                    std::string("out of memory")}) {
      expect(msg.find(part) != std::string::npos, "the message contains '" + part + "'");
    }
  }
  expect(calls == 2, "the failing call is evaluated exactly once");
  if (failures == 0) {
    std::printf("passed\n");
  }
  return failures == 0 ? 0 : 1;
}
