// Kernel-side host code as the build lets it be written: it links pmqa::kernels (and through it the
// model) and nothing else. model/tests/CMakeLists.txt builds it three ways: calling the model (it
// builds), including the oracle's codec header (not on the include path), and declaring the
// oracle's decode by hand (no library defines it). The last two must fail to build.
#include <cstdint>

#include "pmqa/kernels/executor.hpp"
#if defined(PMQA_APART_INCLUDE_ORACLE)
#include "pmqa/reference/fp8.hpp"
#elif defined(PMQA_APART_DECLARE_ORACLE)
namespace pmqa {
float decode_fp8(Fp8Format format, std::uint8_t code) noexcept;
}  // namespace pmqa
#endif

int main() {
#if defined(PMQA_APART_INCLUDE_ORACLE) || defined(PMQA_APART_DECLARE_ORACLE)
  return pmqa::decode_fp8(pmqa::Fp8Format::e4m3fn, 0x38) == 1.0f ? 0 : 1;
#else
  return pmqa::parse_fp8_format(pmqa::to_string(pmqa::Fp8Format::e4m3fn)) == pmqa::Fp8Format::e4m3fn ? 0 : 1;
#endif
}
