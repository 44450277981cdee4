// The tolerance model of spec §5: how far a correct kernel's output may be from the reference.
// This header holds what a kernel or a command names (the profiles and their units, the NaN rule);
// the oracle computes the scales, sigma and the gates' limits from them (pmqa/reference/noise.hpp).
//
// A kernel's rounding errors are modelled as noise whose size follows the data each cell's sums
// run over, not their worst case. Per valid cell the oracle computes three scales (NoiseScales):
//
//   S_D^2 = sum_h (w_h s)^2 (|q_h o k|^2 / 2 + dot_h^2 / 3)   partial sums of the sums over D
//   S_H^2 = sum_h t_h^2 / 2 + logit^2 / 3                      partial sums of the sum over heads
//   S_T^2 = sum_h t_h^2                                        the per-head terms themselves
//
// with t_h = w_h relu(s dot_h). A sum of n terms whose every add errs by u relative to its partial
// sum errs by about u sqrt(sum of the partial sums^2): for random signs the partials grow like a
// random walk (the |q o k|^2 / 2 part), with a drift when the terms share a sign (the dot^2 / 3
// part). So one cell's noise is
//
//   sigma = unit_d sqrt(D) S_D + unit_h sqrt(H + 2) S_H + unit_terms S_T + unit_out |logit|
//
// (unit_terms: a kernel that stores each head's term in a narrow type before summing; unit_out:
// the rounding of the stored logit), plus the reference's own noise when it is computed in fp32.
//
// Five gates judge the errors against that noise (report: which one a cell or region broke):
//   element  |err| <= z_element sigma
//   block    rms(err / sigma) over a (row, logical block) <= region_limit(cells)
//   row      the same over a row
//   global   the same over every valid cell (DeepGEMM's calc_diff is reported beside it)
//   bias     over each block, each row and every valid cell, the signed means of err / sigma
//            (offset: is the output above or below the reference?) and of err / sigma x sign(ref)
//            (scale: is it larger or smaller in magnitude?) <= bias_limit(cells)
// region_limit(n) = max(z_region, z_element / sqrt(n)): one cell at its own limit never fails a
// region, and a region whose every cell errs a little in the same way (one page decoded with a
// slightly wrong scale) fails its block although no cell breaks the element gate.
// bias_limit(n) = max(bias_allowed + z_bias / sqrt(n), z_element / n): the rms gates ask how large
// the errors are and never their sign, so an error of one sign well inside the noise of every
// cell (a wrong scale constant, a missing factor close to 1, a rounding mode biased one way)
// passes them however many cells share it. Its mean cannot hide: z_bias / sqrt(n) is what the mean
// of n independent errors of one sigma reaches by chance, and bias_allowed the systematic part a
// correct kernel of the profile's class shows (a matrix unit that truncates its partial sums makes
// every |dot| a little small). One cell at its own limit never fails a region's mean either.
//
// Calibration (profile-wide, never per file): on real kernels' outputs of the standard suite
// (../shared/realworld; AITER's Triton kernels, DeepGEMM fp32 and bf16, vLLM's eager op, each under
// the profile it records) the largest err / sigma of any correct cell was 0.69 and the largest
// region rms 0.37; z_element = 10 and z_region = 4 leave 14x and 10x of headroom. The whole-output
// signed means were at most 0.027 in magnitude under matrix-unit (the H200's fp8 tensor cores: the
// scale mean of every AITER and DeepGEMM file is negative, -0.016 to -0.027, and the same on
// every file, so it is the hardware's, not noise), 0.010 under bf16-output and 0.008 on the eager
// op's files of 1000 cells or more under fp32; bias_allowed = 0.25 (matrix-unit) and 0.1 (the
// others) leave about 10x, and the whole output x1.003 still fails on every matrix-unit file. The
// corpus test (reference/tests/realworld_corpus_test.cpp) prints the measured worst per peer and
// fails above 0.1 of a gate's limit (0.15 for the bias gate's sampling term on short rows).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pmqa {

// What relu does with a NaN head term (spec §1.1). A judge names the one it accepts.
enum class NanRule : std::uint8_t {
  propagate,   // relu(NaN) = NaN: a NaN term makes its cell NaN (the spec's default)
  relu_clamp,  // relu = max(x, 0), which gives 0 for NaN: a NaN term counts 0
};
std::string_view to_string(NanRule rule) noexcept;
NanRule parse_nan_rule(std::string_view text);  // "propagate" | "relu-clamp"; throws std::invalid_argument
std::vector<std::string> nan_rule_names();      // every rule as to_string spells it, in enumerator order

struct Tolerance {
  std::string name = "fp32";
  double unit_d = 0x1p-24;      // per-add relative error of the sums over D
  double unit_h = 0x1p-24;      // per-add relative error of the sum over heads (and the scale, weight products)
  double unit_terms = 0;        // rounding of each head's term before the head sum (0: kept in fp32 registers)
  double unit_out = 0x1p-24;    // rounding of the stored logit
  double z_element = 10.0;      // element gate, in sigmas
  double z_region = 4.0;        // block, row and global gates: rms of err / sigma
  double z_bias = 4.0;          // bias gate: the chance part of a signed mean over n cells, z_bias / sqrt(n)
  double bias_allowed = 0.1;    // bias gate: the systematic signed mean (in sigmas) a correct kernel may show

  // fp32 accumulation everywhere, fp32 logits.
  static Tolerance fp32();
  // fp8 matrix instructions whose internal accumulation keeps ~14 significant bits (Hopper's fp8
  // mma, per DeepSeek-V3's report), promoted to fp32 between instructions; fp32 logits.
  static Tolerance matrix_unit();
  // Logits stored as bf16 (8 significant bits), and each head's term allowed a bf16 rounding
  // before the head sum (a two-stage path with a bf16 per-head buffer); sums over D in fp32.
  static Tolerance bf16_output();
  // matrix_unit's sums over D with bf16_output's roundings: an fp8 matrix-unit kernel that writes
  // bf16 logits (DeepGEMM with bf16 output).
  static Tolerance matrix_unit_bf16();

  // One of the named profiles ("fp32", "matrix-unit", "bf16-output", "matrix-unit-bf16");
  // throws std::invalid_argument listing the names otherwise.
  static Tolerance named(std::string_view name);
  static std::vector<std::string> names();
};

// Which profile judges logits nobody named a profile for, and why (README "How pmqa judges a
// kernel"): the output type is known from the logits themselves (logits_dtype: "bfloat16" and
// "float16" are low precision), the sums are the caller's word (tensor_cores; unset: what the case
// file records). recorded: the case file's "tolerance" (fp32 without it). why: "the default" when
// nothing moved it from fp32, else the reasons joined with ", ".
struct JudgingProfile {
  std::string profile, why;
};
JudgingProfile profile_for_logits(std::string_view recorded, std::string_view logits_dtype,
                                  std::optional<bool> tensor_cores);

}  // namespace pmqa
