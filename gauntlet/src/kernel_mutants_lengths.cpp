// Classes 7 and 8: which keys a row sees, and next_n.
#include "kernel_mutants.hpp"

namespace pmqa::gauntlet::detail {
namespace {

namespace kd = pmqa::kdev;

// Class 7: the 1-D valid-key rule without its +1: row n sees keys j < L - N + n, one too few
// (its own position is dropped).
struct ValidKeysOffByOne : kd::Faithful {
  static PMQA_DEV std::int64_t valid_keys(const kd::LogitsParams& p, std::int64_t b, std::int64_t n) {
    if (p.context_lens_2d) return kd::Faithful::valid_keys(p, b, n);
    return static_cast<std::int64_t>(p.context_lens[b]) - p.next_n + n;
  }
};

// Class 7: a kernel that assumes every row has a key: rows with E_r <= 0 (context 0, context <
// next_n) still score key 0, reading whatever block_table[b][0] holds.
struct EmptyRowsScoreKey0 : kd::Faithful {
  static PMQA_DEV std::int64_t valid_keys(const kd::LogitsParams& p, std::int64_t b, std::int64_t n) {
    const std::int64_t e = kd::Faithful::valid_keys(p, b, n);
    return e < 1 ? 1 : e;
  }
};

// Class 8: next_n scheduled in atoms of 2 (DeepGEMM's kernel takes next_n 1 or 2): rows n >= 2
// re-read the queries of row n % 2.
struct NextNAtomsOf2 : kd::Faithful {
  static PMQA_DEV std::int64_t q_offset(const kd::LogitsParams& p, std::int64_t b, std::int64_t n, std::int64_t h, int d) {
    return kd::Faithful::q_offset(p, b, n % 2, h, d);
  }
};

// Class 8: 2-D context_lens [B, N] read as 1-D [B]: E_r = lens[b] - N + n + 1 with lens[b] an
// entry of the wrong shape.
struct Lens2dReadAs1d : kd::Faithful {
  static PMQA_DEV std::int64_t valid_keys(const kd::LogitsParams& p, std::int64_t b, std::int64_t n) {
    return static_cast<std::int64_t>(p.context_lens[b]) - p.next_n + n + 1;
  }
};

}  // namespace

void add_length_mutants(std::vector<Mutant>& out) {
  out.push_back(kernel_mutant(7, "valid-keys-off-by-one", "1-D valid-key rule E_r = L - N + n (the +1 missing)",
                              "spec §6 class 7: DeepGEMM 353, 344; a causal bound as in AITER 4290", "Hooks::valid_keys", factory<ValidKeysOffByOne>("valid-keys-off-by-one")));
  out.push_back(kernel_mutant(7, "empty-rows-score-key-0",
                              "rows with no valid key (context 0, context < next_n) still score key 0",
                              "spec §6 class 7: DeepGEMM 353, 344", "Hooks::valid_keys clamps E_r to >= 1",
                              factory<EmptyRowsScoreKey0>("empty-rows-score-key-0")));
  out.push_back(kernel_mutant(8, "next-n-atoms-of-2", "next_n > 2 run as atoms of 2: rows n >= 2 read row n % 2's queries",
                              "spec §6 class 8: vLLM 43457, 55270", "Hooks::q_offset(n -> n % 2)", factory<NextNAtomsOf2>("next-n-atoms-of-2")));
  out.push_back(kernel_mutant(8, "lens-2d-read-as-1d", "2-D context_lens [B, N] read as 1-D [B]", "spec §6 class 8: vLLM 43457, 55270",
                              "Hooks::valid_keys ignores context_lens_2d", factory<Lens2dReadAs1d>("lens-2d-read-as-1d")));
}

}  // namespace pmqa::gauntlet::detail
