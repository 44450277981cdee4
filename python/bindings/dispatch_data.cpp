// pmqa's reviewed dispatch data for Python (pmqa-probe): the arch table and the expected-decision
// matrix as the C++ loaders (dispatch/) read and validate them, handed over as plain dicts. The
// builtin ones are compiled in; a path names another file (the probe's --matrix, --arch-table).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "bindings.hpp"
#include "pmqa/dispatch/arch.hpp"
#include "pmqa/dispatch/arch_table.hpp"
#include "pmqa/dispatch/matrix.hpp"

namespace py = pybind11;

namespace pmqa::python {
namespace {

using namespace pmqa::dispatch;

template <class T>
py::object name_or_none(const std::optional<T>& v) {
  return v ? py::object(py::str(std::string(to_string(*v)))) : py::none();
}

std::string text_of_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(path + ": cannot be read");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

py::dict context_fields(const Context& c) {
  py::dict d;
  d["kernels_present"] = c.kernels_present;
  d["block_size"] = c.block_size;
  d["next_n"] = c.next_n;
  d["heads"] = c.heads;
  return d;
}

// Python objects of an entry's keyword arguments (the file holds each as compact JSON).
py::dict entry_kwargs(const std::map<std::string, std::string>& kwargs) {
  const py::object loads = py::module_::import("json").attr("loads");
  py::dict d;
  for (const auto& [key, json] : kwargs) d[py::str(key)] = loads(json);
  return d;
}

py::dict matrix_fields(const ArchMatrix& m) {
  py::list rows, engine_rows;
  for (const MatrixRow& r : m.rows) {
    py::dict d = context_fields(r.context);
    d["index"] = r.index;
    d["arch"] = r.arch;
    d["path"] = name_or_none(r.path);
    d["fp8"] = name_or_none(r.fp8);
    d["layout"] = name_or_none(r.layout);
    d["error"] = r.error == ExpectedError::none ? py::object(py::none()) : py::str(std::string(to_string(r.error)));
    d["reason_contains"] = r.reason_contains;
    d["note"] = r.note;
    rows.append(d);
  }
  for (const EngineRow& r : m.engine_rows) {
    py::dict d = context_fields(r.context);
    d["index"] = r.index;
    d["engine"] = r.engine;
    d["arch"] = r.arch;
    d["kernels_enabled"] = r.kernels_enabled;
    d["entry_kwargs"] = entry_kwargs(r.entry_kwargs);
    d["path"] = std::string(to_string(r.path));
    d["fp8"] = name_or_none(r.fp8);
    d["layout"] = name_or_none(r.layout);
    d["entry"] = r.entry;
    d["replaces_policy_row"] = r.replaces_policy_row;
    d["reason"] = r.reason;
    d["note"] = r.note;
    engine_rows.append(d);
  }
  py::dict out;
  out["source"] = m.source;
  out["rows"] = rows;
  out["engine_rows"] = engine_rows;
  return out;
}

}  // namespace

void bind_dispatch_data(py::module_& m) {
  py::register_exception<ArchTableError>(m, "ArchTableError", PyExc_ValueError);
  py::register_exception<MatrixError>(m, "MatrixError", PyExc_ValueError);
  // pmqa's own arch parser decides what a device identity is: a name it refuses has no vendor.
  m.def(
      "arch_vendor",
      [](const std::string& text) -> py::object {
        try {
          return py::str(std::string(to_string(parse_arch(text).vendor)));
        } catch (const ArchParseError&) {
          return py::none();
        }
      },
      py::arg("text"), "\"amd\" or \"nvidia\" for a well-formed arch name (dispatch/arch.hpp); None otherwise");
  m.def(
      "arch_table",
      [](const std::optional<std::string>& path) {
        const ArchTable table = path ? ArchTable::parse(text_of_file(*path), *path) : ArchTable::builtin();
        py::list out;
        for (const ArchInfo& a : table.entries()) {
          py::dict d;
          d["target"] = a.target;
          d["vendor"] = std::string(to_string(a.vendor));
          d["fp8"] = a.fp8 ? std::string(to_string(*a.fp8)) : std::string("none");
          d["products"] = a.products;
          d["note"] = a.note;
          out.append(d);
        }
        py::dict result;
        result["source"] = path ? *path : std::string(ArchTable::builtin_source());
        result["archs"] = out;
        return result;
      },
      py::arg("path") = py::none(), "The arch table's entries (the builtin one, or the file at path), validated");
  m.def(
      "arch_matrix",
      [](const std::optional<std::string>& path) {
        return matrix_fields(path ? ArchMatrix::load(*path) : ArchMatrix::builtin());
      },
      py::arg("path") = py::none(), "The expected-decision matrix's rows and engine rows, validated");
}

}  // namespace pmqa::python
