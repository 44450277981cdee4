// The paths FP8 paged MQA logits can take, by one spelling each: dispatch decides one, the kernels
// run the two that are kernels (fused, two-stage), the checks and the CLI name them.
#pragma once

#include <cstdint>
#include <string_view>

namespace pmqa {

enum class Path : std::uint8_t {
  fused,               // one kernel writes [B*N, max_model_len] (AITER Gluon / DeepGEMM / pmqa's fused kernels)
  two_stage,           // stage 1 per-head values into [H, B*N, max_model_len], then a head sum
  reference_fallback,  // the framework's eager reference (no kernel library)
  unsupported,         // nothing can run this (no fp8, or outside the kernel's limits)
};

std::string_view to_string(Path path) noexcept;  // "fused", "two-stage", "reference-fallback", "unsupported"
// Accepts the names above and "two_stage", "reference_fallback", "reference"; throws std::invalid_argument.
Path parse_path(std::string_view text);
// fused or two-stage: a path pmqa's kernels run.
constexpr bool is_kernel_path(Path path) noexcept { return path == Path::fused || path == Path::two_stage; }

}  // namespace pmqa
