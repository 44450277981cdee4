// A pmqa-run's record of its folder for Python: pmqa-run writes and re-reads OUT/pmqa-run.json through
// the reader and writer pmqa verify uses (pmqa/cases/run_record.hpp), so the record's shape and its
// rules (a result is a plain file name inside the folder, ...) are one code, whoever reads it.
//
// The Python side (pmqa.run.record) keeps the record as dataclasses, mutated as cases finish; they
// cross here field by field, by the same names.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <string>

#include "bindings.hpp"
#include "pmqa/cases/run_lock.hpp"
#include "pmqa/cases/run_record.hpp"
#include "pmqa/cases/run_report.hpp"

namespace py = pybind11;

namespace pmqa::python {
namespace {

using cases::RecordedCase;
using cases::RunRecord;
using nlohmann::ordered_json;

// A JSON value from the Python values a record's settings hold (what json.dumps accepts of them).
ordered_json json_of(const py::handle& v, const std::string& where) {
  if (v.is_none()) return nullptr;
  if (PyBool_Check(v.ptr())) return v.cast<bool>();
  if (PyLong_Check(v.ptr())) {
    int overflow = 0;
    const long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
    if (!overflow) return static_cast<std::int64_t>(x);
    const unsigned long long u = PyLong_AsUnsignedLongLong(v.ptr());
    if (PyErr_Occurred()) {
      PyErr_Clear();
      throw py::value_error(where + ": an integer out of JSON's range");
    }
    return static_cast<std::uint64_t>(u);
  }
  if (PyFloat_Check(v.ptr())) {
    const double x = v.cast<double>();
    if (!std::isfinite(x)) throw py::value_error(where + ": " + py::repr(v).cast<std::string>() + " is not a JSON number");
    return x;
  }
  if (PyUnicode_Check(v.ptr())) return utf8_of(v, where.c_str());
  if (PyList_Check(v.ptr()) || PyTuple_Check(v.ptr())) {
    ordered_json a = ordered_json::array();
    for (const auto& x : v) a.push_back(json_of(x, where));
    return a;
  }
  if (PyDict_Check(v.ptr())) {
    ordered_json o = ordered_json::object();
    for (const auto& [k, x] : py::reinterpret_borrow<py::dict>(v)) {
      const std::string key = utf8_of(k, (where + " key").c_str());
      o[key] = json_of(x, where + "." + key);
    }
    return o;
  }
  throw py::type_error(where + ": a " + std::string(Py_TYPE(v.ptr())->tp_name) + " is not a JSON value");
}

py::object python_of(const ordered_json& j) {
  switch (j.type()) {
    case ordered_json::value_t::object: {
      py::dict d;
      for (auto it = j.begin(); it != j.end(); ++it) d[text_of_utf8(it.key())] = python_of(it.value());
      return d;
    }
    case ordered_json::value_t::array: {
      py::list l;
      for (const auto& x : j) l.append(python_of(x));
      return l;
    }
    case ordered_json::value_t::string: return text_of_utf8(j.get_ref<const std::string&>());
    case ordered_json::value_t::boolean: return py::bool_(j.get<bool>());
    case ordered_json::value_t::number_integer: return py::int_(j.get<std::int64_t>());
    case ordered_json::value_t::number_unsigned: return py::int_(j.get<std::uint64_t>());
    case ordered_json::value_t::number_float: return py::float_(j.get<double>());
    default: return py::none();
  }
}

std::string text_attr(const py::handle& o, const char* name) { return utf8_of(o.attr(name), name); }

std::int64_t int_attr(const py::handle& o, const char* name) {
  const py::object v = o.attr(name);
  if (!PyLong_Check(v.ptr()) || PyBool_Check(v.ptr()))
    throw py::type_error(std::string(name) + ": expected an int, got " + Py_TYPE(v.ptr())->tp_name);
  return v.cast<std::int64_t>();
}

RecordedCase case_of(const py::handle& c) {
  RecordedCase rc;
  rc.file = text_attr(c, "file");
  rc.name = text_attr(c, "name");
  rc.suite = text_attr(c, "suite");
  rc.result = text_attr(c, "result");
  rc.status = text_attr(c, "status");
  rc.message = text_attr(c, "message");
  rc.written = c.attr("written").cast<bool>();
  rc.sha256 = text_attr(c, "sha256");
  rc.seconds = c.attr("seconds").cast<double>();
  rc.shape = text_attr(c, "shape");
  rc.limit = text_attr(c, "limit");
  rc.bench_ms = text_attr(c, "bench_ms");
  rc.floor_ratio = text_attr(c, "floor_ratio");
  rc.kernel_path = text_attr(c, "kernel_path");
  const std::int64_t work = int_attr(c, "work");
  if (work < 0) throw py::value_error("work: must be >= 0");
  rc.work = static_cast<std::uint64_t>(work);
  rc.device = text_attr(c, "device");
  return rc;
}

// A pmqa.run.record.RunRecord (its attributes) as the C++ record.
RunRecord record_of(const py::handle& r) {
  RunRecord rec;
  rec.folder = utf8_of(py::str(r.attr("out_dir")), "out_dir");
  rec.run_id = text_attr(r, "run_id");
  rec.producer = text_attr(r, "producer");
  rec.op = text_attr(r, "op");
  rec.convention = text_attr(r, "convention");
  rec.settings = json_of(r.attr("settings"), "settings");
  if (!rec.settings.is_object()) throw py::type_error("settings: expected a dict");
  for (const auto& c : r.attr("cases")) rec.cases.push_back(case_of(c));
  rec.started = text_attr(r, "started");
  rec.updated = text_attr(r, "updated");
  rec.complete = r.attr("complete").cast<bool>();
  rec.stopped = text_attr(r, "stopped");
  for (const auto& t : r.attr("resumed")) rec.resumed.push_back(utf8_of(t, "resumed"));
  rec.shard = text_attr(r, "shard");
  rec.shard_of = int_attr(r, "shard_of");
  return rec;
}

// The fields pmqa.run.record's dataclasses are built from, by their names.
py::dict fields_of(const RunRecord& rec) {
  py::list cases;
  for (const auto& c : rec.cases) {
    py::dict d;
    d["file"] = text_of_utf8(c.file);
    d["name"] = text_of_utf8(c.name);
    d["suite"] = text_of_utf8(c.suite);
    d["result"] = text_of_utf8(c.result);
    d["status"] = text_of_utf8(c.status);
    d["message"] = text_of_utf8(c.message);
    d["written"] = c.written;
    d["sha256"] = text_of_utf8(c.sha256);
    d["seconds"] = c.seconds;
    d["shape"] = text_of_utf8(c.shape);
    d["limit"] = text_of_utf8(c.limit);
    d["bench_ms"] = text_of_utf8(c.bench_ms);
    d["floor_ratio"] = text_of_utf8(c.floor_ratio);
    d["kernel_path"] = text_of_utf8(c.kernel_path);
    d["work"] = c.work;
    d["device"] = text_of_utf8(c.device);
    cases.append(d);
  }
  py::dict d;
  d["run_id"] = text_of_utf8(rec.run_id);
  d["producer"] = text_of_utf8(rec.producer);
  d["op"] = text_of_utf8(rec.op);
  d["convention"] = text_of_utf8(rec.convention);
  d["settings"] = python_of(rec.settings);
  d["cases"] = cases;
  d["started"] = text_of_utf8(rec.started);
  d["updated"] = text_of_utf8(rec.updated);
  d["complete"] = rec.complete;
  d["stopped"] = text_of_utf8(rec.stopped);
  py::list resumed;
  for (const auto& t : rec.resumed) resumed.append(text_of_utf8(t));
  d["resumed"] = resumed;
  d["shard"] = text_of_utf8(rec.shard);
  d["shard_of"] = rec.shard_of;
  return d;
}

}  // namespace

void bind_run_records(py::module_& m) {
  // A record refused or missing: a ValueError (pmqa.run.record.RecordError) with the C++ reader's message.
  py::register_exception<cases::RunRecordError>(m, "RunRecordError", PyExc_ValueError);
  m.attr("RUN_RECORD_NAME") = cases::kRunRecordName;
  m.attr("RUN_LOCK_NAME") = cases::kRunLockName;
  m.attr("RUN_RECORD_SCHEMA") = cases::kRunRecordSchema;

  m.def(
      "load_run_record",
      [](const std::string& folder) {
        RunRecord rec;
        {
          py::gil_scoped_release release;
          rec = cases::load_run_record(folder);
        }
        return fields_of(rec);
      },
      py::arg("folder"), "The folder's record as RunRecord's fields (RunRecordError when missing or refused)");
  m.def(
      "run_record_json", [](const py::object& record) { return cases::run_record_json(record_of(record)); },
      py::arg("record"), "The record's text as write_run_record writes it (this process not stamped in)");
  m.def(
      "write_run_record",
      [](const py::object& record) {
        RunRecord rec = record_of(record);
        py::gil_scoped_release release;
        cases::write_run_record(std::move(rec));
      },
      py::arg("record"), "Writes OUT/pmqa-run.json atomically; OSError (with errno) when the folder refuses it");
  m.def("result_name_problem", &cases::result_name_problem, py::arg("name"),
        "Why a name cannot be a result file's in a run's folder (\"\" when it can)");
  m.def("run_lock_held", [](const std::string& folder) { return cases::run_lock_held(folder); }, py::arg("folder"));
  // What pmqa-run says of its cases, of its record at the end, and its --junit (pmqa/cases/run_report.hpp).
  m.def(
      "case_line",
      [](const py::handle& r, const std::string& device, const py::dict& header, bool skip_unsupported) {
        cases::CaseOutcome c{text_attr(r, "status"),    text_attr(r, "name"),      text_attr(r, "path"),
                             text_attr(r, "message"),   text_attr(r, "shape"),     text_attr(r, "out_path"),
                             text_attr(r, "bench_ms"),  text_attr(r, "kernel_ms"), text_attr(r, "floor_ratio"),
                             text_attr(r, "kernel_path"), r.attr("floor_gated").cast<bool>(), device,
                             utf8_of(header["convention"], "convention"), utf8_of(header["platform"], "platform"),
                             skip_unsupported};
        return text_of_utf8(cases::case_line(c));
      },
      py::arg("result"), py::arg("device"), py::arg("header"), py::arg("skip_unsupported"),
      "The line printed when a case finishes (a CaseResult; header: the workers' convention and platform)");
  m.def(
      "run_summary_lines",
      [](const py::object& record, const py::iterable& case_filter, bool skip_unsupported, int status,
         int workers_started, std::size_t devices) {
        cases::RunSummaryFacts facts{{}, skip_unsupported, status, workers_started, devices};
        for (const auto& pattern : case_filter) facts.case_filter.push_back(utf8_of(pattern, "--case"));
        py::list lines;
        for (const auto& line : cases::run_summary_lines(record_of(record), facts)) lines.append(text_of_utf8(line));
        return lines;
      },
      py::arg("record"), py::arg("case_filter"), py::arg("skip_unsupported"), py::arg("status"),
      py::arg("workers_started"), py::arg("devices"));
  m.def(
      "write_run_junit",
      [](const py::handle& path, const py::object& record, const py::iterable& faults) {
        const RunRecord rec = record_of(record);
        std::vector<std::string> fs;
        for (const auto& f : faults) fs.push_back(utf8_of(f, "fault"));
        const std::string where = utf8_of(path, "--junit");
        py::gil_scoped_release release;
        cases::write_run_record_junit(where, rec, fs);
      },
      py::arg("path"), py::arg("record"), py::arg("faults"),
      "--junit FILE of the record as it stands, atomically; OSError (with errno) when it cannot be written");
  // Another run holds the folder's lock (pmqa.run.record.OutputBusy); its message says who.
  py::register_exception<cases::RunLockBusy>(m, "RunLockBusy", PyExc_Exception);
  m.def("lock_run_folder", &cases::lock_run_folder, py::arg("fd"), py::arg("run_id"), py::arg("producer"),
        "Takes OUT/pmqa-run.lock's write lock on fd (an OFD lock: closing fd releases it) and says who holds "
        "it; RunLockBusy when another run does, OSError (with errno) when the system refuses it");
}

}  // namespace pmqa::python
