// The byte floor and the run's gates for Python: pmqa-run's speed gate and path gate are judged here,
// by the functions pmqa verify re-judges a result file with (pmqa/cases/run_gates.hpp), so the run and
// every later reader of its files reach the same verdict on the same recorded numbers.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "pmqa/cases/byte_floor.hpp"
#include "pmqa/cases/kernel_names.hpp"
#include "pmqa/cases/run_gates.hpp"

namespace py = pybind11;

namespace pmqa::python {
namespace {

using cases::FloorBytes;
using cases::GateVerdict;
using cases::RunGates;

// What the floor reads of a pmqa.cases.CaseFile (q's shape, block_size, max_model_len, context_lens,
// block_table): q and the cache stay in Python, uncopied.
Case floor_case_of(const py::handle& cf) {
  Case c;
  const auto shape = cf.attr("q").attr("shape").cast<std::vector<std::int64_t>>();
  if (shape.size() != 4) throw std::invalid_argument("q: expected [B, N, H, D]");
  c.batch = shape[0];
  c.next_n = shape[1];
  c.heads = shape[2];
  c.head_dim = shape[3];
  c.block_size = cf.attr("block_size").cast<std::int64_t>();
  c.max_model_len = cf.attr("max_model_len").cast<std::int64_t>();
  const auto lens = py::array_t<std::int32_t, py::array::c_style | py::array::forcecast>::ensure(cf.attr("context_lens"));
  const auto table = py::array_t<std::int32_t, py::array::c_style | py::array::forcecast>::ensure(cf.attr("block_table"));
  if (!lens || !table) throw py::error_already_set();
  if (table.ndim() != 2 || table.shape(0) != c.batch) throw std::invalid_argument("block_table: expected [B, max_blocks]");
  c.context_lens_2d = lens.ndim() == 2;
  if (lens.size() != (c.context_lens_2d ? c.batch * c.next_n : c.batch))
    throw std::invalid_argument("context_lens: expected [B] or [B, N]");
  c.context_lens.assign(lens.data(), lens.data() + lens.size());
  c.max_blocks_per_seq = table.shape(1);
  c.block_table.assign(table.data(), table.data() + table.size());
  return c;
}

py::object json_to_python(const nlohmann::json& j) { return py::module_::import("json").attr("loads")(j.dump()); }

}  // namespace

void bind_run_gates(py::module_& m) {
  // The kernel-name table and what a call's launches mean (cases/kernel_names.hpp).
  py::register_exception<cases::KernelNamesError>(m, "KernelNamesError", PyExc_ValueError);
  py::class_<cases::KernelEntry>(m, "KernelEntry")
      .def_readonly("pattern", &cases::KernelEntry::pattern)
      .def_readonly("library", &cases::KernelEntry::library)
      .def_readonly("means", &cases::KernelEntry::means)
      .def_readonly("role", &cases::KernelEntry::role)
      .def_readonly("source", &cases::KernelEntry::source)
      .def_readonly("origin", &cases::KernelEntry::origin);
  py::class_<cases::PathReport>(m, "PathReport")
      .def_readonly("path", &cases::PathReport::path)
      .def_readonly("kernels", &cases::PathReport::kernels)
      .def_readonly("known", &cases::PathReport::known)
      .def_readonly("unknown", &cases::PathReport::unknown)
      .def("describe", &cases::PathReport::describe, py::arg("limit") = 6)
      .def("metadata", &cases::PathReport::metadata);
  m.def("parse_kernel_names", &cases::parse_kernel_names, py::arg("text"), py::arg("origin"));
  m.def("load_kernel_names", &cases::load_kernel_names, py::arg("extra_files") = std::vector<std::string>{});
  m.def("classify_kernels", &cases::classify, py::arg("launched"), py::arg("entries"));

  m.attr("DEFAULT_MAX_FLOOR_RATIO") = cases::kDefaultMaxFloorRatio;
  m.attr("DEFAULT_FLOOR_MIN_MB") = cases::kDefaultFloorMinMb;

  py::class_<FloorBytes>(m, "FloorBytes")
      .def_readonly("q", &FloorBytes::q)
      .def_readonly("kv", &FloorBytes::kv)
      .def_readonly("weights", &FloorBytes::weights)
      .def_readonly("block_table", &FloorBytes::block_table)
      .def_readonly("context_lens", &FloorBytes::context_lens)
      .def_readonly("output", &FloorBytes::output)
      .def_property_readonly("total", &FloorBytes::total)
      .def("describe", &FloorBytes::describe)
      .def("__repr__", [](const FloorBytes& f) { return "<pmqa FloorBytes " + f.describe() + ">"; });
  m.def(
      "floor_bytes",
      [](const py::object& cf, const std::string& contract) {
        return cases::floor_bytes(floor_case_of(cf), parse_contract(contract));
      },
      py::arg("case_file"), py::arg("contract"), "The bytes of a pmqa.cases.CaseFile the op must move");
  m.def("floor_ms", &cases::floor_ms, py::arg("total_bytes"), py::arg("bytes_per_s"));

  py::class_<GateVerdict>(m, "GateVerdict")
      .def_readonly("gate", &GateVerdict::gate)
      .def_property_readonly("outcome", [](const GateVerdict& g) { return std::string(cases::to_string(g.outcome)); })
      .def_property_readonly("passed", [](const GateVerdict& g) { return !g.failed(); })
      .def_property_readonly("option", &GateVerdict::option)
      .def_readonly("message", &GateVerdict::message)
      .def("__repr__", [](const GateVerdict& g) {
        return "<pmqa GateVerdict " + g.gate + " gate: " + std::string(cases::to_string(g.outcome)) + ">";
      });
  py::class_<RunGates>(m, "RunGates")
      .def_readonly("gates", &RunGates::gates)
      .def_property_readonly("passed", &RunGates::passed)
      .def_property_readonly("failed", &RunGates::failed)
      .def("summary", &RunGates::summary)
      .def("failure_text", &RunGates::failure_text)
      .def("to_text", [](const RunGates& g, const std::string& indent) { return g.to_text(indent); },
           py::arg("indent") = "  ")
      .def("to_json", [](const RunGates& g) { return json_to_python(g.to_json()); })
      .def("__len__", [](const RunGates& g) { return g.gates.size(); });

  // The speed gate at the end of a case's timing: the verdict, and the metadata it derives (the floor,
  // the ratios, "at most R" or "not gated") for the result file beside the inputs it judged.
  m.def(
      "speed_gate",
      [](const py::object& cf, const std::string& contract, const std::map<std::string, std::string>& metadata,
         const std::string& source) {
        const Case c = floor_case_of(cf);
        const cases::SpeedGate g = cases::judge_speed_gate(c, parse_contract(contract), metadata, source);
        return py::make_tuple(g.verdict, g.derived, g.floor);
      },
      py::arg("case_file"), py::arg("contract"), py::arg("metadata"), py::arg("source") = "<run>");
  m.def(
      "path_gate",
      [](const std::string& expected, const std::string& path, const std::vector<std::string>& unknown,
         const std::string& seen) { return cases::judge_path_gate(expected, path, unknown, seen); },
      py::arg("expected"), py::arg("path"), py::arg("unknown"), py::arg("seen"),
      "The path gate (expected \"\": only the unknown kernels are judged)");
}

}  // namespace pmqa::python
