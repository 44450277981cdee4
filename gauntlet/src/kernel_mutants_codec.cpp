// Classes 3 and 4: the fp8 decode.
#include "kernel_mutants.hpp"

namespace pmqa::gauntlet::detail {
namespace {

namespace kd = pmqa::kdev;

// Class 3: the kernel ignores the format and decodes every byte as OCP E4M3FN. On FNUZ data
// (gfx942) each value comes out twice as large, so every logit is four times too large.
struct FnuzDecodedAsFn : kd::Faithful {
  template <bool kFnuz>
  static PMQA_DEV float decode_q(std::uint8_t code) { return kd::fp8_to_float<false>(code); }
  template <bool kFnuz>
  static PMQA_DEV float decode_k(std::uint8_t code) { return kd::fp8_to_float<false>(code); }
};

// Class 3, mixed formats: the keys are decoded in the case's format, the queries always as FNUZ
// (a q tensor typed for MI300 while the cache is OCP): on OCP data every q value is halved (and
// 0x80, OCP's -0, becomes NaN).
struct QueriesDecodedAsFnuz : kd::Faithful {
  template <bool kFnuz>
  static PMQA_DEV float decode_q(std::uint8_t code) { return kd::fp8_to_float<true>(code); }
};

// Class 4: on FNUZ, 0x80 (its only NaN) decoded as -0, as an OCP decoder would: a NaN planted in
// q or k no longer reaches the row's logits.
struct FnuzNanAsMinusZero : kd::Faithful {
  template <bool kFnuz>
  static PMQA_DEV float decode(std::uint8_t code) {
    if (kFnuz && code == 0x80) return -0.0f;
    return kd::fp8_to_float<kFnuz>(code);
  }
  template <bool kFnuz>
  static PMQA_DEV float decode_q(std::uint8_t code) { return decode<kFnuz>(code); }
  template <bool kFnuz>
  static PMQA_DEV float decode_k(std::uint8_t code) { return decode<kFnuz>(code); }
};

// Class 4: on OCP, the NaN codes 0x7F / 0xFF decoded by the normal-number formula (e = 15, m = 7:
// +-480) instead of NaN.
struct FnNanAsNumber : kd::Faithful {
  template <bool kFnuz>
  static PMQA_DEV float decode(std::uint8_t code) {
    if (!kFnuz && (code & 0x7Fu) == 0x7Fu) return (code & 0x80u) ? -480.0f : 480.0f;
    return kd::fp8_to_float<kFnuz>(code);
  }
  template <bool kFnuz>
  static PMQA_DEV float decode_q(std::uint8_t code) { return decode<kFnuz>(code); }
  template <bool kFnuz>
  static PMQA_DEV float decode_k(std::uint8_t code) { return decode<kFnuz>(code); }
};

// Class 3, a scale constant close to 1: the keys decoded 1 % too large (the kind of error a wrong
// constant folded into a decode or a scale gives). Every logit is 1 % too large: inside every
// cell's noise under the bf16 profiles, so there only the sign of the errors (the bias gate) shows it.
struct KeysOnePercentLarge : kd::Faithful {
  template <bool kFnuz>
  static PMQA_DEV float decode_k(std::uint8_t code) { return kd::fp8_to_float<kFnuz>(code) * 1.01f; }
};

}  // namespace

void add_codec_mutants(std::vector<Mutant>& out) {
  out.push_back(kernel_mutant(3, "fnuz-decoded-as-fn",
                              "FNUZ bytes (gfx942) decoded as OCP E4M3FN: every q and k value doubled",
                              "spec §6 class 3: AITER 1408, vLLM 46730, sglang 28455", "Hooks::decode_q/decode_k ignore the format (always FN)",
                              factory<FnuzDecodedAsFn>("fnuz-decoded-as-fn")));
  out.push_back(kernel_mutant(3, "q-decoded-as-fnuz",
                              "mixed formats: keys in the case's format, queries always decoded as FNUZ",
                              "spec §6 class 3: AITER 1408, vLLM 46730, sglang 28455", "Hooks::decode_q always FNUZ", factory<QueriesDecodedAsFnuz>("q-decoded-as-fnuz")));
  out.push_back(kernel_mutant(4, "fnuz-nan-as-minus-zero",
                              "FNUZ 0x80 (its only NaN) decoded as -0: planted NaNs vanish from the logits",
                              "spec §6 class 4: Triton 10745", "Hooks::decode_q/decode_k: 0x80 -> -0 when FNUZ",
                              factory<FnuzNanAsMinusZero>("fnuz-nan-as-minus-zero")));
  out.push_back(kernel_mutant(4, "fn-nan-as-number", "OCP NaN codes 0x7F/0xFF decoded as +-480 by the normal formula",
                              "spec §6 class 4: Triton 10745", "Hooks::decode_q/decode_k: 0x7F/0xFF -> +-480 when FN",
                              factory<FnNanAsNumber>("fn-nan-as-number")));
  out.push_back(kernel_mutant(3, "keys-one-percent-large",
                              "the keys decoded 1 % too large (a wrong constant near 1): every logit 1 % too large",
                              "issue 35: a wrong scale constant inside bf16's noise", "Hooks::decode_k x 1.01",
                              factory<KeysOnePercentLarge>("keys-one-percent-large")));
}

}  // namespace pmqa::gauntlet::detail
