// The model's names and the shard split for Python: every list Python shows (help texts, choices)
// and every split it makes is the C++ model's own, so none can drift.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "pmqa/model/case.hpp"
#include "pmqa/model/value_format.hpp"
#include "pmqa/model/output.hpp"
#include "pmqa/model/shard.hpp"
#include "pmqa/model/tolerance.hpp"

namespace py = pybind11;

namespace pmqa::python {

void bind_model_names(py::module_& m) {
  m.def("tolerance_names", &Tolerance::names);
  m.def(
      "profile_for_logits",
      [](const std::string& recorded, const std::string& logits_dtype, std::optional<bool> tensor_cores) {
        const JudgingProfile p = profile_for_logits(recorded, logits_dtype, tensor_cores);
        return std::make_pair(p.profile, p.why);
      },
      py::arg("recorded"), py::arg("logits_dtype"), py::arg("tensor_cores"),
      "(profile, why) for logits no profile was named for (pmqa/model/tolerance.hpp)");
  m.def("contract_names", &contract_names);
  m.def("nan_rule_names", &nan_rule_names);
  m.def("fp8_format_names", &fp8_format_names);
  m.def("value_format_names", &value_format_names);
  m.def("kv_layout_names", &kv_layout_names);
  m.def("sentinel_bits", [] { return kSentinelBits; });

  // "K/N" as (K, N); a bad text is a ValueError with the C++ message (std::invalid_argument).
  m.def(
      "parse_shard",
      [](const std::string& text) {
        const Shard s = parse_shard(text);
        return std::make_pair(s.index, s.count);
      },
      py::arg("text"));
  m.def("shard_work", &shard_work, py::arg("batch"), py::arg("next_n"), py::arg("heads"), py::arg("head_dim"),
        py::arg("max_model_len"));
  m.def(
      "assign_shards",
      [](const std::vector<std::pair<std::string, std::uint64_t>>& items, int count) {
        if (count < 1) throw std::invalid_argument("assign_shards: count must be at least 1");
        std::vector<ShardItem> in;
        in.reserve(items.size());
        for (const auto& [name, work] : items) in.push_back({name, work});
        return assign_shards(in, count);
      },
      py::arg("items"), py::arg("count"), "The shard (1-based) of each (name, work) item, in the items' order");
}

}  // namespace pmqa::python
