// The tolerance model of spec §5: how far a correct kernel's output may be from the reference.
//
// Same-bytes bound per element, with A[r][j] the magnitude the sums run over:
//   |out - ref| <= safety * ( (D * u_d + (H + 2) * u_h) * A  +  u_out * |ref| )  + ref_term
// u_d: relative error per add of the sum over D (fp32: 2^-24; a matrix unit that keeps ~14
//      significant bits: ~2^-13), u_h: per add of the sum over heads (the +2 covers the scale
//      and weight products), u_out: the output rounding (0 for fp32 beyond u_h's share, 2^-8 for
//      bf16). ref_term is the reference's own error when it is computed in fp32.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pmqa {

struct Tolerance {
  std::string name = "fp32";
  double unit_d = 0x1p-24;    // per-add relative error of the sum over D
  double unit_h = 0x1p-24;    // per-add relative error of the sum over H
  double unit_out = 0x1p-24;  // rounding of the stored output
  double safety = 2.0;        // c in spec §5

  // A kernel that accumulates in fp32 everywhere and writes fp32.
  static Tolerance fp32();
  // fp8 matrix instructions whose internal accumulation keeps ~14 significant bits (Hopper's
  // fp8 mma, per DeepSeek-V3's report), promoted to fp32 between instructions.
  static Tolerance matrix_unit();
  // fp32 accumulation, logits stored as bf16 (8 significant bits).
  static Tolerance bf16_output();

  // Looks up one of the named profiles ("fp32", "matrix-unit", "bf16-output");
  // throws std::invalid_argument listing the names otherwise.
  static Tolerance named(std::string_view name);
  static std::vector<std::string> names();

  // The bound for one element. ref_unit is the reference's own per-add error (2^-24 for the
  // fp32 reference, 2^-53 for fp64): it enters as (D + H + 2) * ref_unit * A.
  double bound(double magnitude, double abs_ref, long head_dim, long heads, double ref_unit) const noexcept;
};

}  // namespace pmqa
