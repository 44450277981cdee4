#include "gen_list.hpp"

#include <vector>

#include "table.hpp"

namespace pmqa::cli {

std::string spec_shape_summary(const fixtures::CaseSpec& spec) {
  Case scalars;  // only the fields shape_summary reads; no buffers
  scalars.batch = spec.batch;
  scalars.next_n = spec.next_n;
  scalars.heads = spec.heads;
  scalars.head_dim = spec.head_dim;
  scalars.block_size = spec.block_size;
  scalars.fp8 = spec.fp8;
  scalars.layout = spec.layout;
  return shape_summary(scalars);
}

void print_suite_list(std::FILE* out, const std::string& suite) {
  const std::vector<std::string> names = suite.empty() ? fixtures::suite_names() : std::vector<std::string>{suite};
  bool first = true;
  for (const auto& name : names) {
    const auto cases = fixtures::suite(name);
    std::fprintf(out, "%ssuite %s: %zu cases\n", first ? "" : "\n", name.c_str(), cases.size());
    first = false;
    Table table({"case", "shape", "max_model_len", "seed", "description"});
    for (const auto& sc : cases)
      table.row({sc.name, spec_shape_summary(sc.spec), std::to_string(sc.spec.max_model_len),
                 std::to_string(sc.spec.seed), (sc.large ? "[large: --include-large] " : "") + sc.description});
    table.print(out);
  }
}

}  // namespace pmqa::cli
