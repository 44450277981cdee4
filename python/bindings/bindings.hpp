// pmqa._core's parts: each binds one piece of the C++ core and is called once from the module's
// init (core.cpp). Python gets no logic of its own from here: every rule is the C++ one.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace pmqa::python {

// A Python str as UTF-8 bytes, for text headed into a file the C++ writers make safe: characters
// Python decoded with surrogateescape (a file name that is not UTF-8) come back as the bytes they
// stand for, where a plain conversion would raise instead of writing the run's record or report.
// Anything but a str is a TypeError naming `what`.
inline std::string utf8_of(pybind11::handle text, const char* what) {
  if (!PyUnicode_Check(text.ptr()))
    throw pybind11::type_error(std::string(what) + ": expected a str, got " + Py_TYPE(text.ptr())->tp_name);
  PyObject* bytes = PyUnicode_AsEncodedString(text.ptr(), "utf-8", "surrogateescape");
  if (bytes == nullptr) throw pybind11::error_already_set();  // a surrogate no byte stands for
  std::string out(PyBytes_AS_STRING(bytes), static_cast<std::size_t>(PyBytes_GET_SIZE(bytes)));
  Py_DECREF(bytes);
  return out;
}

// Text from a C++ writer or reader as a Python str, bytes that are not UTF-8 decoded with
// surrogateescape (the inverse of utf8_of).
inline pybind11::str text_of_utf8(const std::string& text) {
  return pybind11::reinterpret_steal<pybind11::str>(
      PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "surrogateescape"));
}

// Case files and logits-only result files: read, parse, validate, serialize, write; SHA-256; the
// format's names. Registers CaseError and CaseFileError (case_files.cpp).
void bind_case_files(pybind11::module_& m);

// Envelopes: builtin and overlay files, a convention's envelope on a platform, a case's traits
// and its refusal. Registers EnvelopeError (envelopes.cpp).
void bind_envelopes(pybind11::module_& m);

// The model's names (profiles, contracts, NaN rules, fp8 formats, layouts) and the shard split
// (model_names.cpp).
void bind_model_names(pybind11::module_& m);

// The arch table and the expected-decision matrix, as dispatch/ loads them (dispatch_data.cpp).
void bind_dispatch_data(pybind11::module_& m);

// The byte floor of a case and the run's gates (speed, path) as pmqa-run judges them and every
// reader of its files re-judges them (run_gates.cpp).
void bind_run_gates(pybind11::module_& m);

// A pmqa-run's record of its folder: read (strict), written (the JSON pmqa-run always wrote), the
// rule for result names. Registers RunRecordError (run_records.cpp).
void bind_run_records(pybind11::module_& m);

// Result files: JUnit XML (the one writer of pmqa check, pmqa verify and pmqa-run) and atomic
// writes; a refused write is an OSError carrying errno (result_files.cpp).
void bind_result_files(pybind11::module_& m);

}  // namespace pmqa::python
