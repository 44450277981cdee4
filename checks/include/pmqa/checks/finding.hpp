// One check's outcome on one subject: what every function of pmqa::checks returns, what the unit
// tests assert on, and what the gauntlet counts.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "pmqa/model/kernel_id.hpp"

namespace pmqa::checks {

struct Finding {
  std::string check;     // "kernel-vs-reference property"
  std::string source;    // the function and the suites that call it
  std::string config;    // "fused-mfma on host-w64"; empty where the check has one configuration
  std::optional<KernelId> first_choice;  // a kernel check's configuration: the kernel it runs first
  bool ordinary = true;  // false: a check pmqa's ordinary suites lack (proposed; never counts)
  bool caught = false;
  std::int64_t cases_run = 0;
  std::int64_t first_detection = 0;  // 1-based index of the first failing case; 0: none failed
  std::string unit;      // what a case is: "generated cases", "suite cases", "matrix rows", ...
  std::string evidence;  // the first failure, a few lines
  double seconds = 0;
  std::vector<std::string> kernels;  // the kernels that ran under it, sorted ("fused-mfma", "fused-scalar")
  std::string caught_on;             // the kernel that ran the first failing case ("" if none, or unknown)

  void ran(const std::string& kernel);  // adds a kernel to `kernels` (once)
};

// The harness itself failed (e.g. a sandbox found no address space): never a detection. The checks
// let it through instead of counting it against the subject.
class HarnessError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace pmqa::checks
