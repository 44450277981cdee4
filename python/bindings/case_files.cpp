// Case files and logits-only result files for Python: the C++ readers and writers (cases/), so that
// Python and `pmqa verify` agree on which files are valid by construction, with the same messages.
//
// A file read from Python is one C++ CaseFile (or LogitsFile) whose buffers the numpy arrays view:
// the file's bytes are copied once, into those buffers, and the arrays keep them alive. Writing
// copies each array once into a C++ CaseFile, whose writer checks everything the reader would.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "pmqa/cases/case_file.hpp"
#include "pmqa/cases/logits_file.hpp"
#include "pmqa/cases/sha256.hpp"

namespace py = pybind11;

namespace pmqa::python {
namespace {

using cases::CaseFile;
using cases::CaseFileError;
using cases::LogitsFile;
using Path = std::filesystem::path;

// A numpy array over `data`, a buffer of the object `owner` holds; the array keeps `owner` alive.
// Writable: each read gives its own buffers (torch.from_numpy, for one, wants a writable array).
template <class T, class Owner>
py::array view_of(const std::shared_ptr<Owner>& owner, const std::vector<T>& data, std::vector<py::ssize_t> shape) {
  auto* keep = new std::shared_ptr<Owner>(owner);
  py::capsule capsule(keep, [](void* p) { delete static_cast<std::shared_ptr<Owner>*>(p); });
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t stride = sizeof(T);
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  return py::array(py::dtype::of<T>(), shape, strides, data.data(), capsule);
}

// A message as a Python str even where it holds bytes that are not UTF-8 (a file name can): those
// come out as \xNN rather than as a UnicodeDecodeError in place of the real error.
py::str python_text(std::string_view text) {
  return py::reinterpret_steal<py::str>(
      PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "backslashreplace"));
}

py::dict string_map(const std::map<std::string, std::string>& m) {
  py::dict d;
  for (const auto& [k, v] : m) d[py::str(k)] = py::str(v);
  return d;
}

// What pmqa.cases.CaseFile is built from: its arrays and its metadata, by the dataclass's names.
py::dict case_fields(std::shared_ptr<CaseFile> f) {
  const Case& c = f->c;
  py::dict d;
  d["q"] = view_of(f, c.q, {c.batch, c.next_n, c.heads, c.token_value_bytes()});
  d["kv_cache"] = view_of(f, c.kv_cache, {c.num_blocks, c.block_stride});
  d["weights"] = view_of(f, c.weights, {c.rows(), c.heads});
  d["context_lens"] = c.context_lens_2d ? view_of(f, c.context_lens, {c.batch, c.next_n})
                                        : view_of(f, c.context_lens, {c.batch});
  d["block_table"] = view_of(f, c.block_table, {c.batch, c.max_blocks_per_seq});
  d["logits"] = f->logits ? py::object(view_of(f, *f->logits, {c.rows(), c.max_model_len})) : py::none();
  d["q_scales"] = is_fp4(c.format) ? py::object(view_of(f, c.q_scales, {c.batch, c.next_n, c.heads, kScaleWordBytes}))
                                   : py::none();
  d["block_size"] = c.block_size;
  d["max_model_len"] = c.max_model_len;
  d["value_format"] = std::string(to_string(c.format));
  d["kv_layout"] = std::string(to_string(c.layout));
  d["contract"] = std::string(to_string(f->contract));
  d["name"] = c.name;
  d["suite"] = c.suite;
  d["seed"] = c.seed;
  d["producer"] = f->producer;
  d["extra"] = string_map(f->extra);
  return d;
}

py::dict logits_fields(std::shared_ptr<LogitsFile> f) {
  py::dict d;
  d["logits"] = view_of(f, f->logits, {f->batch * f->next_n, f->max_model_len});
  d["name"] = f->name;
  d["producer"] = f->producer;
  d["input_file"] = f->input_file;
  d["input_sha256"] = f->input_sha256;
  d["contract"] = std::string(to_string(f->contract));
  d["batch"] = f->batch;
  d["next_n"] = f->next_n;
  d["max_model_len"] = f->max_model_len;
  d["extra"] = string_map(f->extra);
  return d;
}

// ---- from Python: every problem a CaseFileError naming the field, as the C++ writer's are

const char* type_name(const py::handle& v) { return Py_TYPE(v.ptr())->tp_name; }

std::string cat_type(const char* before, const py::handle& v, const char* after) {
  return std::string(before) + type_name(v) + after;
}

std::string text_of(const py::handle& v, const std::string& src, const std::string& field) {
  if (!PyUnicode_Check(v.ptr())) throw CaseFileError(src, field, cat_type("is a ", v, ", expected a string"));
  Py_ssize_t size = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(v.ptr(), &size);
  if (utf8 == nullptr) {
    PyErr_Clear();  // a lone surrogate: not encodable as UTF-8
    throw CaseFileError(src, field, "is not valid UTF-8: " + py::repr(v).cast<std::string>());
  }
  return {utf8, static_cast<std::size_t>(size)};
}

std::int64_t int_of(const py::handle& v, const std::string& src, const std::string& field, std::int64_t low,
                    std::int64_t high) {
  if (!PyLong_Check(v.ptr()) || PyBool_Check(v.ptr()))
    throw CaseFileError(src, field, cat_type("is a ", v, ", expected an integer"));
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow || x < low || x > high)
    throw CaseFileError(src, field, py::repr(v).cast<std::string>() + " is outside [" + std::to_string(low) + ", " +
                                        std::to_string(high) + "]");
  return x;
}

std::uint64_t seed_of(const py::handle& v, const std::string& src) {
  if (!PyLong_Check(v.ptr()) || PyBool_Check(v.ptr()))
    throw CaseFileError(src, "seed", cat_type("is a ", v, ", expected an integer"));
  const unsigned long long x = PyLong_AsUnsignedLongLong(v.ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    throw CaseFileError(src, "seed", py::repr(v).cast<std::string>() + " is not an integer in [0, 2^64)");
  }
  return x;
}

template <class E>
E enum_of(const py::handle& v, const std::string& src, const std::string& field, E (*parse)(std::string_view),
          const std::vector<std::string>& names) {
  const std::string t = text_of(v, src, field);
  try {
    return parse(t);
  } catch (const std::invalid_argument&) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : " or ") + n;
    throw CaseFileError(src, field, py::repr(v).cast<std::string>() + " is not one of " + list);
  }
}

// A numpy array of T's kind and width (any byte order or strides), with one of the ranks `ranks`;
// its elements are copied into `out` and its shape returned.
template <class T>
std::vector<py::ssize_t> take_array(const py::handle& v, const std::string& src, const std::string& field,
                                    std::initializer_list<int> ranks, std::vector<T>& out) {
  if (!py::isinstance<py::array>(v)) throw CaseFileError(src, field, cat_type("is a ", v, ", expected a numpy array"));
  const auto a = py::reinterpret_borrow<py::array>(v);
  const py::dtype want = py::dtype::of<T>();
  if (a.dtype().kind() != want.kind() || a.dtype().itemsize() != want.itemsize())
    throw CaseFileError(src, field, "has dtype " + a.dtype().attr("name").cast<std::string>() + ", expected " +
                                        want.attr("name").cast<std::string>());
  if (std::find(ranks.begin(), ranks.end(), static_cast<int>(a.ndim())) == ranks.end())
    throw CaseFileError(src, field, "has " + std::to_string(a.ndim()) + " dimensions");
  const auto dense = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(a);  // native order
  if (!dense) throw py::error_already_set();
  out.assign(dense.data(), dense.data() + dense.size());
  return {a.shape(), a.shape() + a.ndim()};
}

std::map<std::string, std::string> string_map_of(const py::handle& v, const std::string& src) {
  if (!PyDict_Check(v.ptr())) throw CaseFileError(src, "extra", cat_type("is a ", v, ", expected a dict of strings"));
  std::map<std::string, std::string> m;
  for (const auto& [key, value] : py::reinterpret_borrow<py::dict>(v)) {
    const std::string k = text_of(key, src, "extra key " + py::repr(key).cast<std::string>());
    m[k] = text_of(value, src, "extra key " + k);
  }
  return m;
}

// A pmqa.cases.CaseFile's fields (its attributes, read by name) as the C++ CaseFile. The shapes come
// from the arrays; the writer then checks that they agree.
CaseFile case_file_of(const py::handle& cf, const std::string& src) {
  CaseFile f;
  Case& c = f.c;
  c.format = enum_of(cf.attr("value_format"), src, "value_format", &parse_value_format, value_format_names());
  const auto q = take_array(cf.attr("q"), src, "q", {4}, c.q);
  c.batch = q[0];
  c.next_n = q[1];
  c.heads = q[2];
  c.head_dim = is_fp4(c.format) ? 2 * q[3] : q[3];  // e2m1: two values a byte
  if (const py::object qs = cf.attr("q_scales"); !qs.is_none())
    take_array(qs, src, "q_scales", {4}, c.q_scales);
  else if (is_fp4(c.format))
    throw CaseFileError(src, "q_scales", "missing: e2m1 values need their UE8M0 scales, [B, N, H, 4] uint8");
  const auto kv = take_array(cf.attr("kv_cache"), src, "kv_cache", {2}, c.kv_cache);
  c.num_blocks = kv[0];
  c.block_stride = kv[1];
  const auto w = take_array(cf.attr("weights"), src, "weights", {2}, c.weights);
  const auto lens = take_array(cf.attr("context_lens"), src, "context_lens", {1, 2}, c.context_lens);
  c.context_lens_2d = lens.size() == 2;
  const auto table = take_array(cf.attr("block_table"), src, "block_table", {2}, c.block_table);
  c.max_blocks_per_seq = table[1];
  auto agree = [&](const char* field, const std::vector<py::ssize_t>& got, std::vector<py::ssize_t> want,
                   const char* dims) {
    if (got == want) return;
    auto text = [](const std::vector<py::ssize_t>& s) {
      std::string t = "[";
      for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
      return t + "]";
    };
    throw CaseFileError(src, field, "shape " + text(got) + " disagrees with q's shape " + text(q) + ": expected " +
                                        dims + " = " + text(want));
  };
  const py::ssize_t rows = q[0] * q[1];
  agree("weights", w, {rows, q[2]}, "[B*N, H]");
  agree("context_lens", lens, c.context_lens_2d ? std::vector<py::ssize_t>{q[0], q[1]} : std::vector<py::ssize_t>{q[0]},
        "[B] or [B, N]");
  agree("block_table", table, {q[0], table[1]}, "[B, max_blocks_per_seq]");
  constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();
  c.block_size = int_of(cf.attr("block_size"), src, "block_size", 1, kInt32Max);
  c.max_model_len = int_of(cf.attr("max_model_len"), src, "max_model_len", 0, kInt32Max);
  const py::object logits = cf.attr("logits");
  if (!logits.is_none()) {
    f.logits.emplace();
    agree("logits", take_array(logits, src, "logits", {2}, *f.logits), {rows, c.max_model_len}, "[B*N, max_model_len]");
  }
  c.layout = enum_of(cf.attr("kv_layout"), src, "kv_layout", &parse_kv_layout, kv_layout_names());
  f.contract = enum_of(cf.attr("contract"), src, "contract", &parse_contract, contract_names());
  c.name = text_of(cf.attr("name"), src, "name");
  c.suite = text_of(cf.attr("suite"), src, "suite");
  c.seed = seed_of(cf.attr("seed"), src);
  f.producer = text_of(cf.attr("producer"), src, "producer");
  f.extra = string_map_of(cf.attr("extra"), src);
  return f;
}

LogitsFile logits_file_of(const py::handle& lf, const std::string& src) {
  LogitsFile f;
  const auto shape = take_array(lf.attr("logits"), src, "logits", {2}, f.logits);
  constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();
  f.batch = int_of(lf.attr("batch"), src, "__metadata__.batch", 0, kInt32Max);
  f.next_n = int_of(lf.attr("next_n"), src, "__metadata__.next_n", 1, kInt32Max);
  f.max_model_len = int_of(lf.attr("max_model_len"), src, "__metadata__.max_model_len", 0, kInt32Max);
  if (shape != std::vector<py::ssize_t>{f.batch * f.next_n, f.max_model_len})
    throw CaseFileError(src, "logits", "shape [" + std::to_string(shape[0]) + ", " + std::to_string(shape[1]) +
                                           "] disagrees with B*N = " + std::to_string(f.batch * f.next_n) +
                                           ", max_model_len = " + std::to_string(f.max_model_len));
  f.name = text_of(lf.attr("name"), src, "__metadata__.name");
  f.producer = text_of(lf.attr("producer"), src, "__metadata__.producer");
  f.input_file = text_of(lf.attr("input_file"), src, "__metadata__.input_file");
  f.input_sha256 = text_of(lf.attr("input_sha256"), src, "__metadata__.input_sha256");
  f.contract = enum_of(lf.attr("contract"), src, "__metadata__.contract", &parse_contract, contract_names());
  f.extra = string_map_of(lf.attr("extra"), src);
  return f;
}

std::span<const std::uint8_t> bytes_of(const py::buffer_info& info) {
  return {static_cast<const std::uint8_t*>(info.ptr), static_cast<std::size_t>(info.size * info.itemsize)};
}

py::bytes as_bytes(const std::vector<std::uint8_t>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size()};
}

}  // namespace

void bind_case_files(py::module_& m) {
  // Invalid input: CaseFileError (a file, a field, a problem) is a CaseError, both ValueErrors.
  static py::exception<CaseError> case_error(m, "CaseError", PyExc_ValueError);
  static py::exception<CaseFileError> case_file_error(m, "CaseFileError", case_error.ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const CaseFileError& e) {
      // The exception object carries the parts, so a caller can name the field (or tell a full disk
      // by its errno) without parsing the message.
      py::object err = py::reinterpret_borrow<py::object>(case_file_error.ptr())(python_text(e.what()));
      err.attr("file") = python_text(e.file());
      err.attr("field") = python_text(e.field());
      err.attr("problem") = python_text(e.problem());
      err.attr("os_errno") = e.os_errno() ? py::object(py::int_(e.os_errno())) : py::none();
      PyErr_SetObject(case_file_error.ptr(), err.ptr());
    } catch (const CaseError& e) {
      PyErr_SetObject(case_error.ptr(), python_text(e.what()).ptr());
    }
  });

  m.attr("FORMAT_VERSION") = std::string(cases::kCaseFileFormatVersion);
  m.attr("MAX_HEADER_BYTES") = cases::kCaseFileMaxHeaderBytes;
  m.def("case_file_reserved_keys", &cases::case_file_reserved_keys);
  m.def("logits_file_reserved_keys", &cases::logits_file_reserved_keys);

  m.def(
      "read_case_file",
      [](const Path& path) {
        std::shared_ptr<CaseFile> f;
        {
          py::gil_scoped_release release;
          f = std::make_shared<CaseFile>(cases::read_case_file(path));
        }
        return case_fields(std::move(f));
      },
      py::arg("path"), "A case file's fields (the C++ reader: strict, validated; CaseFileError on any problem)");
  m.def(
      "parse_case_file",
      [](const py::buffer& data, const std::string& source_name) {
        const py::buffer_info info = data.request();
        return case_fields(std::make_shared<CaseFile>(cases::parse_case_file(bytes_of(info), source_name)));
      },
      py::arg("data"), py::arg("source_name") = "<memory>");
  m.def(
      "serialize_case_file", [](const py::object& cf) { return as_bytes(cases::serialize_case_file(case_file_of(cf, "<memory>"))); },
      py::arg("case_file"));
  m.def(
      "write_case_file",
      [](const Path& path, const py::object& cf) {
        const CaseFile f = case_file_of(cf, path.string());
        py::gil_scoped_release release;
        return cases::write_case_file(path, f);
      },
      py::arg("path"), py::arg("case_file"), "Writes atomically; returns the SHA-256 of the bytes written");
  m.def(
      "validate_case",
      [](const py::object& cf) {
        const CaseFile f = case_file_of(cf, "<case>");
        try {
          validate(f.c);
        } catch (const CaseError& e) {
          throw CaseFileError("<case>", "case", e.what());
        }
      },
      py::arg("case_file"));

  m.def(
      "read_logits_file",
      [](const Path& path) {
        std::shared_ptr<LogitsFile> f;
        {
          py::gil_scoped_release release;
          f = std::make_shared<LogitsFile>(cases::read_logits_file(path));
        }
        return logits_fields(std::move(f));
      },
      py::arg("path"));
  m.def(
      "parse_logits_file",
      [](const py::buffer& data, const std::string& source_name) {
        const py::buffer_info info = data.request();
        return logits_fields(std::make_shared<LogitsFile>(cases::parse_logits_file(bytes_of(info), source_name)));
      },
      py::arg("data"), py::arg("source_name") = "<memory>");
  m.def(
      "serialize_logits_file",
      [](const py::object& lf) { return as_bytes(cases::serialize_logits_file(logits_file_of(lf, "<memory>"))); },
      py::arg("logits_file"));
  m.def(
      "write_logits_file",
      [](const Path& path, const py::object& lf) {
        const LogitsFile f = logits_file_of(lf, path.string());
        py::gil_scoped_release release;
        return cases::write_logits_file(path, f);
      },
      py::arg("path"), py::arg("logits_file"), "Writes atomically; returns the SHA-256 of the bytes written");
  m.def("is_logits_file", &cases::is_logits_file, py::arg("path"), py::call_guard<py::gil_scoped_release>());
  m.def("read_header_metadata", &cases::read_header_metadata, py::arg("path"),
        py::call_guard<py::gil_scoped_release>(),
        "A safetensors file's string metadata from its header alone ({} when unreadable): for sorting, never judging");
  m.def("sha256_file", &cases::sha256_file, py::arg("path"), py::call_guard<py::gil_scoped_release>());
}

}  // namespace pmqa::python
