// Result files for Python: the JUnit XML pmqa check and pmqa verify write, for pmqa-probe's rows too
// (pmqa/cases/results.hpp; pmqa-run's JUnit is its record's, run_records.cpp), and the atomic writer
// every result file goes through (pmqa/cases/atomic_file.hpp). A write the system refuses is an OSError carrying its errno (ENOSPC,
// EROFS, ...), as os.write's was, so a runner tells "this folder takes no more writes" from a bad case.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <span>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "pmqa/cases/atomic_file.hpp"
#include "pmqa/cases/results.hpp"
#include "pmqa/cases/sha256.hpp"

namespace py = pybind11;

namespace pmqa::python {

void bind_result_files(py::module_& m) {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const std::system_error& e) {
      // OSError(errno, strerror): Python picks the subclass (FileNotFoundError, ...) by errno; callers
      // name the file themselves, as they did with os.write's errors.
      const py::object err =
          py::reinterpret_borrow<py::object>(PyExc_OSError)(e.code().value(), e.code().message());
      PyErr_SetObject(PyExc_OSError, err.ptr());
    }
  });

  m.def(
      "write_file_atomically",
      [](const std::filesystem::path& path, const py::iterable& parts) {
        // Each part is held (and its buffer pinned) until the write is done.
        std::vector<py::buffer_info> held;
        std::vector<std::span<const std::uint8_t>> spans;
        for (const auto& part : parts) {
          held.push_back(py::reinterpret_borrow<py::buffer>(part).request());
          const auto& info = held.back();
          spans.emplace_back(static_cast<const std::uint8_t*>(info.ptr),
                             static_cast<std::size_t>(info.size * info.itemsize));
        }
        py::gil_scoped_release release;
        cases::write_file_atomically(path, spans);
        return cases::sha256_hex(spans);
      },
      py::arg("path"), py::arg("parts"), "Writes the parts joined, atomically; returns their SHA-256");
  m.def(
      "describe_write_error",
      [](int os_errno) { return cases::describe_write_error(std::error_code(os_errno, std::generic_category())); },
      py::arg("os_errno"));
  m.def("no_more_writes_errnos", &cases::no_more_writes_errnos);

  // JUnit written atomically: results are objects with status (ok, failed, invalid, unsupported,
  // not-run; run_case_result says what each becomes), suite, name, path, message and seconds;
  // properties (name, value) pairs of the testsuite. OSError (with errno) when it cannot be written.
  m.def(
      "write_junit",
      [](const py::handle& path, const std::string& producer, const py::iterable& results,
         const std::vector<std::pair<py::object, py::object>>& properties) {
        std::vector<cases::Result> rs;
        for (const auto& r : results)
          rs.push_back(cases::run_case_result(utf8_of(r.attr("status"), "status"), utf8_of(r.attr("suite"), "suite"),
                                              utf8_of(r.attr("name"), "name"), utf8_of(r.attr("path"), "path"),
                                              utf8_of(r.attr("message"), "message"), r.attr("seconds").cast<double>()));
        cases::Properties props;
        for (const auto& [k, v] : properties) props.emplace_back(utf8_of(k, "property name"), utf8_of(v, "property value"));
        const std::string where = utf8_of(path, "path");
        py::gil_scoped_release release;
        cases::write_file_atomically(where, cases::junit_text(producer, rs, props));
      },
      py::arg("path"), py::arg("producer"), py::arg("results"),
      py::arg("properties") = std::vector<std::pair<py::object, py::object>>{});
}

}  // namespace pmqa::python
