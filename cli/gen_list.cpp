#include "gen_list.hpp"

#include <vector>

#include "shard_option.hpp"
#include "table.hpp"

namespace pmqa::cli {

std::string spec_shape_summary(const fixtures::CaseSpec& spec) {
  Case scalars;  // only the fields shape_summary reads; no buffers
  scalars.batch = spec.batch;
  scalars.next_n = spec.next_n;
  scalars.heads = spec.heads;
  scalars.head_dim = spec.head_dim;
  scalars.block_size = spec.block_size;
  scalars.format = spec.format;
  scalars.layout = spec.layout;
  return shape_summary(scalars);
}

void print_case_table(std::FILE* out, const std::string& heading, const std::vector<fixtures::SuiteCase>& cases,
                      bool include_large, const std::optional<Shard>& shard) {
  const SuiteShard split = suite_shard(cases, include_large, shard);
  if (shard) {
    std::size_t taken = 0;
    for (const bool t : split.taken) taken += t ? 1 : 0;
    std::fprintf(out, "%s, %s", heading.c_str(), shard_words(shard, taken, split.total, "case(s)").c_str());
    if (split.large_left_out)
      std::fprintf(out, " (%zu large case(s) in no shard: --include-large puts them in one)", split.large_left_out);
    std::fprintf(out, "\n");
  } else {
    std::fprintf(out, "%s: %zu cases\n", heading.c_str(), cases.size());
  }
  Table table({"case", "shape", "max_model_len", "seed", "description"});
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& sc = cases[i];
    if (shard && !split.taken[i]) continue;
    table.row({sc.name, spec_shape_summary(sc.spec), std::to_string(sc.spec.max_model_len), std::to_string(sc.spec.seed),
               (sc.large ? "[large: --include-large] " : "") + sc.description});
  }
  table.print(out);
}

void print_suite_list(std::FILE* out, const std::string& suite, bool include_large, const std::optional<Shard>& shard) {
  const std::vector<std::string> names = suite.empty() ? fixtures::suite_names() : std::vector<std::string>{suite};
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) std::fprintf(out, "\n");
    print_case_table(out, "suite " + names[i], fixtures::suite(names[i]), include_large, shard);
  }
}

}  // namespace pmqa::cli
