// pmqa._core: the C++ oracle, tolerance model and comparison, in process for Python (pybind11).
//
// Nothing here computes a logit or judges a cell: a case is read (read_case_file) or generated
// (fixtures::make_case) by the C++ code, the oracle is compute_reference, the defaults are
// `pmqa verify`'s (file_judging: the one resolution of a file's Judging), the verdict is compare(). The Python package (pmqa/)
// turns tensors into float32 arrays and arrays into torch tensors; this module only moves bytes.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bindings.hpp"

#include "pmqa/cases/case_file.hpp"
#include "pmqa/cases/envelope.hpp"
#include "pmqa/cases/error_map_picture.hpp"
#include "pmqa/cases/logits_file.hpp"
#include "pmqa/cases/run_gates.hpp"
#include "pmqa/cases/verdict.hpp"
#include "pmqa/fixtures/fit.hpp"
#include "pmqa/fixtures/suites.hpp"
#include "pmqa/model/shard.hpp"
#include "pmqa/reference/compare.hpp"
#include "pmqa/reference/reference.hpp"

namespace py = pybind11;

namespace pmqa::python {
namespace {

// One case: read from a file, or a suite's spec generated on first use. The buffers can be
// released between tests (a standard suite holds gigabytes in all) and come back on the next use;
// arrays already handed out keep their own reference to the buffers they view.
class CaseHandle {
 public:
  // A case file, or a logits-only result file joined with its input found in `cases_dir` (as pmqa
  // verify --cases joins it: the input's SHA-256 checked).
  static std::shared_ptr<CaseHandle> from_file(const std::string& path, const std::optional<std::string>& cases_dir = {}) {
    auto h = std::make_shared<CaseHandle>();
    h->file_ = std::make_shared<cases::CaseFile>(
        cases_dir && cases::is_logits_file(path)
            ? cases::join_logits_file(cases::read_logits_file(path), path, *cases_dir)
            : cases::read_case_file(path));
    h->source_ = path;
    h->name_ = h->file_->c.name;
    return h;
  }
  // gen_args: the `pmqa gen` arguments that write this case's suite ("--suite quick",
  // "--suite standard --fit deepgemm --platform cuda").
  static std::shared_ptr<CaseHandle> from_suite(const fixtures::SuiteCase& sc, const std::string& suite,
                                                const std::string& gen_args) {
    auto h = std::make_shared<CaseHandle>();
    h->spec_ = sc;
    h->suite_ = suite;
    h->name_ = sc.name;
    h->gen_args_ = gen_args;
    return h;
  }

  // The file, generating it when needed. Thread-safe; the GIL is released while generating.
  std::shared_ptr<const cases::CaseFile> file() {
    std::lock_guard lock(mu_);
    if (!file_) {
      auto f = std::make_shared<cases::CaseFile>();
      f->c = fixtures::make_case(spec_->spec);
      f->contract = Contract::clean;
      f->producer = "pmqa gen";  // what `pmqa gen` would write for this case
      file_ = std::move(f);
    }
    return file_;
  }

  std::shared_ptr<const Reference> oracle() {
    const auto f = file();
    std::lock_guard lock(mu_);
    if (!oracle_) oracle_ = std::make_shared<Reference>(compute_reference(f->c, {.precision = Precision::fp64, .with_noise = true}));
    return oracle_;
  }

  // Drops the buffers and the oracle of a generated case (a file's stay: they cannot come back).
  void release() {
    std::lock_guard lock(mu_);
    oracle_.reset();
    if (spec_) file_.reset();
  }
  bool loaded() {
    std::lock_guard lock(mu_);
    return file_ != nullptr;
  }

  const std::string& name() const noexcept { return name_; }
  const std::string& source() const noexcept { return source_; }  // the file's path; empty for a suite case
  const std::string& suite() const noexcept { return suite_; }
  const std::string& gen_args() const noexcept { return gen_args_; }
  const std::optional<fixtures::SuiteCase>& spec() const noexcept { return spec_; }

 private:
  std::mutex mu_;
  std::shared_ptr<const cases::CaseFile> file_;
  std::shared_ptr<const Reference> oracle_;
  std::optional<fixtures::SuiteCase> spec_;
  std::string source_, suite_, name_, gen_args_;
};

using Handle = std::shared_ptr<CaseHandle>;

std::shared_ptr<const cases::CaseFile> loaded_file(const Handle& h) {
  py::gil_scoped_release release;
  return h->file();
}

std::shared_ptr<const Reference> loaded_oracle(const Handle& h) {
  py::gil_scoped_release release;
  return h->oracle();
}

// A read-only numpy view of a buffer of the file; the array keeps the file alive.
template <class T>
py::array view(const std::shared_ptr<const cases::CaseFile>& f, const std::vector<T>& data, std::vector<py::ssize_t> shape) {
  auto* keep = new std::shared_ptr<const cases::CaseFile>(f);
  py::capsule owner(keep, [](void* p) { delete static_cast<std::shared_ptr<const cases::CaseFile>*>(p); });
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t stride = sizeof(T);
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  py::array a(py::dtype::of<T>(), shape, strides, data.data(), owner);
  a.attr("setflags")(py::arg("write") = false);  // the case's inputs: a kernel that writes them is a bug
  return a;
}

// The parts of a Judging Python forces, one dict {"contract", "tolerance", "nan"} of names (a part
// left out or None: the file's, else the default). Each name parsed here, once; a bad one or an
// unknown key is a ValueError naming it.
JudgingOverrides overrides_from(const std::optional<py::dict>& judging) {
  JudgingOverrides o;
  if (!judging) return o;
  for (const auto& [key_obj, value] : *judging) {
    const std::string key = py::str(key_obj);
    if (value.is_none()) continue;
    const std::string name = py::str(value);
    try {
      if (key == "contract") o.contract = parse_contract(name);
      else if (key == "tolerance") o.tolerance = Tolerance::named(name);
      else if (key == "nan") o.nan = parse_nan_rule(name);
      else throw std::invalid_argument("unknown part (expected contract, tolerance or nan)");
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("judging[" + key + "]: " + e.what());  // std::invalid_argument -> ValueError
    }
  }
  return o;
}

// The logits as pmqa verify sees a file's: [B*N, max_model_len], cells copied bit for bit (the
// sentinel NaN stays the sentinel), no guard cells. Any strides.
OutputBuffer output_from(const Case& c, const py::array_t<float>& logits) {
  if (logits.ndim() != 2 || logits.shape(0) != c.rows() || logits.shape(1) != c.max_model_len)
    throw std::invalid_argument("logits: shape [" +
                                [&] {
                                  std::string s;
                                  for (py::ssize_t i = 0; i < logits.ndim(); ++i)
                                    s += (i ? ", " : "") + std::to_string(logits.shape(i));
                                  return s;
                                }() +
                                "], the case needs [B*N, max_model_len] = [" + std::to_string(c.rows()) + ", " +
                                std::to_string(c.max_model_len) + "]");
  OutputBuffer out(c.rows(), c.max_model_len, /*row_pad=*/0, /*guard=*/0);
  const auto* base = reinterpret_cast<const char*>(logits.data());
  const py::ssize_t s0 = logits.strides(0), s1 = logits.strides(1);
  for (std::int64_t r = 0; r < c.rows(); ++r) {
    const char* row = base + r * s0;
    float* dst = out.data() + r * out.row_stride();
    if (s1 == static_cast<py::ssize_t>(sizeof(float))) {
      std::memcpy(dst, row, static_cast<std::size_t>(c.max_model_len) * sizeof(float));
    } else {
      for (std::int64_t j = 0; j < c.max_model_len; ++j) std::memcpy(dst + j, row + j * s1, sizeof(float));
    }
  }
  return out;
}

py::dict case_fields(const Handle& h) {
  const auto f = loaded_file(h);
  const Case& c = f->c;
  py::dict d;
  d["name"] = c.name;
  d["suite"] = c.suite;
  d["seed"] = c.seed;
  d["fp8"] = std::string(to_string(c.format));  // kept for callers of .fp8; "format" is the name for every value format
  d["format"] = std::string(to_string(c.format));
  d["layout"] = std::string(to_string(c.layout));
  d["batch"] = c.batch;
  d["next_n"] = c.next_n;
  d["heads"] = c.heads;
  d["head_dim"] = c.head_dim;
  d["block_size"] = c.block_size;
  d["num_blocks"] = c.num_blocks;
  d["block_stride"] = c.block_stride;
  d["max_blocks_per_seq"] = c.max_blocks_per_seq;
  d["max_model_len"] = c.max_model_len;
  d["context_lens_2d"] = c.context_lens_2d;
  d["contract"] = std::string(to_string(f->contract));
  d["producer"] = f->producer;
  d["description"] = describe(c);
  py::dict extra;
  for (const auto& [k, v] : f->extra) extra[py::str(k)] = v;
  d["metadata"] = extra;
  return d;
}

py::dict case_arrays(const Handle& h) {
  const auto f = loaded_file(h);
  const Case& c = f->c;
  py::dict d;
  d["q"] = view(f, c.q, {c.batch, c.next_n, c.heads, c.head_dim});
  d["kv_cache"] = view(f, c.kv_cache, {c.num_blocks, c.block_stride});
  d["weights"] = view(f, c.weights, {c.rows(), c.heads});
  if (c.context_lens_2d) d["context_lens"] = view(f, c.context_lens, {c.batch, c.next_n});
  else d["context_lens"] = view(f, c.context_lens, {c.batch});
  d["block_table"] = view(f, c.block_table, {c.batch, c.max_blocks_per_seq});
  if (f->logits) d["logits"] = view(f, *f->logits, {c.rows(), c.max_model_len});
  else d["logits"] = py::none();
  return d;
}

py::array_t<std::int64_t> valid_keys(const Handle& h) {
  const auto f = loaded_file(h);
  py::array_t<std::int64_t> out(f->c.rows());
  auto w = out.mutable_unchecked<1>();
  for (std::int64_t r = 0; r < f->c.rows(); ++r) w(r) = f->c.valid_keys(r);
  return out;
}

// The oracle's logits, dense [rows, max_model_len] float64 (-inf past E_r), under a NaN rule.
py::array_t<double> reference_logits(const Handle& h, const std::optional<std::string>& nan, const std::string& precision) {
  const auto f = loaded_file(h);
  JudgingOverrides given;
  if (nan) given.nan = parse_nan_rule(*nan);
  const NanRule rule = cases::file_judging(*f, h->source().empty() ? h->name() : h->source(), given).nan;
  std::shared_ptr<const Reference> ref;
  if (precision == "fp64") {
    ref = loaded_oracle(h);
  } else if (precision == "fp32") {
    py::gil_scoped_release release;
    ref = std::make_shared<Reference>(compute_reference(f->c, {.precision = Precision::fp32, .with_noise = false}));
  } else {
    throw std::invalid_argument("precision " + precision + ": expected fp64 or fp32");
  }
  py::array_t<double> out({ref->rows, ref->cols});
  auto w = out.mutable_unchecked<2>();
  for (std::int64_t r = 0; r < ref->rows; ++r)
    for (std::int64_t j = 0; j < ref->cols; ++j) w(r, j) = ref->at(r, j, rule);
  return out;
}

// The comparison pmqa verify makes of a file, on these logits.
Report verify(const Handle& h, const py::array_t<float>& logits, const std::optional<py::dict>& judging, int max_listed) {
  const auto f = loaded_file(h);
  const std::string source = h->source().empty() ? h->name() : h->source();
  const CompareOptions options{
      .judging = cases::file_judging(*f, source, overrides_from(judging)), .max_listed = max_listed, .with_map = true};
  OutputBuffer out = output_from(f->c, logits);
  const auto oracle = loaded_oracle(h);
  py::gil_scoped_release release;
  return compare(f->c, *oracle, out, options);
}

// A Judging as Python sees it: {"contract": ..., "tolerance": ..., "nan": ...}, each by its name.
py::dict judging_dict(const Judging& j) {
  py::dict d;
  d["contract"] = std::string(to_string(j.contract));
  d["tolerance"] = j.tolerance.name;
  d["nan"] = std::string(to_string(j.nan));
  return d;
}

// The Judging pmqa verify would judge this case under, before any logits (a Report records its own).
py::dict judged_options(const Handle& h, const std::optional<py::dict>& judging) {
  const auto f = loaded_file(h);
  const std::string source = h->source().empty() ? h->name() : h->source();
  return judging_dict(cases::file_judging(*f, source, overrides_from(judging)));
}

void write_case(const Handle& h, const std::string& path, const std::optional<py::array_t<float>>& logits,
                const std::optional<std::string>& contract, const std::map<std::string, std::string>& metadata) {
  const auto f = loaded_file(h);
  cases::CaseFile out = *f;
  if (logits) {
    const OutputBuffer buf = output_from(f->c, *logits);
    out.logits.emplace(buf.storage().begin(), buf.storage().end());
  }
  if (contract) out.contract = parse_contract(*contract);
  for (const auto& [k, v] : metadata) out.extra[k] = v;
  py::gil_scoped_release release;
  cases::write_case_file(path, out);
}

// A convention's envelope on a platform ("" : the one it lists) with overlay files applied.
cases::Envelope envelope_of(const std::string& convention, const std::string& platform,
                               const std::vector<std::string>& overlays) {
  std::vector<cases::EnvelopeFile> files;
  for (const auto& path : overlays) files.push_back(cases::read_envelope_file(path));
  return cases::make_envelope(convention, platform, files);
}

std::string gen_args_for(const std::string& suite, const cases::Envelope& e, const std::vector<std::string>& overlays) {
  std::string args = "--suite " + suite + " --fit " + e.convention + " --platform " + e.platform;
  for (const auto& path : overlays) args += " --envelope " + path;
  return args;
}

// The suite drawn inside the envelope (`pmqa gen --suite S --fit C`): fit_suite.
std::vector<Handle> fitted_suite(const std::string& suite, const std::string& convention, const std::string& platform,
                                 const std::vector<std::string>& overlays) {
  const cases::Envelope e = envelope_of(convention, platform, overlays);
  if (!e.platform_listed) throw std::invalid_argument(e.refusal({}) + "; nothing can be drawn inside it");
  std::vector<Handle> out;
  const std::string args = gen_args_for(suite, e, overlays);
  for (const auto& sc : fixtures::fit_suite(suite, e)) out.push_back(CaseHandle::from_suite(sc, suite, args));
  return out;
}

// Why the envelope refuses each case ("" where it lies inside), from the spec without building it
// (the gigabyte cases stay cheap) or from the case file.
std::vector<std::string> refusals(const std::vector<Handle>& cases, const std::string& convention,
                                  const std::string& platform, const std::vector<std::string>& overlays) {
  const cases::Envelope e = envelope_of(convention, platform, overlays);
  std::vector<std::string> out;
  for (const auto& h : cases) {
    const cases::CaseTraits t = h->spec() ? fixtures::traits_of(h->spec()->spec) : cases::traits_of(h->file()->c);
    const std::string why = e.refusal(t);
    out.push_back(why.empty() ? why : "outside " + e.convention + " on " + e.platform + ": " + why);
  }
  return out;
}

template <class T>
py::array_t<T> map_array(const std::vector<T>& v, std::int64_t rows, std::int64_t cols) {
  py::array_t<T> a({rows, cols});
  if (!v.empty()) std::memcpy(a.mutable_data(), v.data(), v.size() * sizeof(T));
  return a;
}

py::object json_to_python(const nlohmann::json& j) { return py::module_::import("json").attr("loads")(j.dump()); }

}  // namespace
}  // namespace pmqa::python

PYBIND11_MODULE(_core, m) {
  using namespace pmqa;
  using namespace pmqa::python;
  m.doc() = "pmqa's C++ oracle, tolerance model and comparison (use the pmqa package, not this module)";
  m.attr("__version__") = PMQA_VERSION;  // CMakeLists.txt's project version: pmqa.__version__, pmqa --version's

  bind_case_files(m);  // first: CaseError and CaseFileError, which the rest raise
  bind_envelopes(m);
  bind_model_names(m);
  bind_dispatch_data(m);
  bind_run_gates(m);
  bind_run_records(m);
  bind_result_files(m);
  py::class_<CaseHandle, Handle>(m, "CaseHandle")
      .def_property_readonly("name", &CaseHandle::name)
      .def_property_readonly("source", &CaseHandle::source)
      .def_property_readonly("suite", &CaseHandle::suite)
      .def_property_readonly("gen_args", &CaseHandle::gen_args)
      .def_property_readonly("large", [](const CaseHandle& h) { return h.spec() && h.spec()->large; })
      // What balances a shard (pmqa/model/shard.hpp), from the spec: a suite case is not generated.
      .def_property_readonly("shard_work",
                             [](const Handle& h) {
                               if (h->spec()) {
                                 const auto& s = h->spec()->spec;
                                 return shard_work(s.batch, s.next_n, s.heads, s.head_dim, s.max_model_len);
                               }
                               const auto& c = loaded_file(h)->c;
                               return shard_work(c.batch, c.next_n, c.heads, c.head_dim, c.max_model_len);
                             })
      .def_property_readonly("suite_description",
                             [](const CaseHandle& h) { return h.spec() ? h.spec()->description : std::string(); })
      .def_property_readonly("loaded", &CaseHandle::loaded)
      .def("release", &CaseHandle::release, py::call_guard<py::gil_scoped_release>())
      .def("fields", &case_fields)
      .def("arrays", &case_arrays)
      .def("valid_keys", &valid_keys);

  m.def("read_case", &CaseHandle::from_file, py::arg("path"), py::arg("cases") = py::none(),
        py::call_guard<py::gil_scoped_release>(),
        "Reads a case file strictly (CaseFileError naming the file and field on any problem); a logits-only result "
        "file with the folder of its input (cases)");
  // The gates the run that wrote this file recorded, re-judged as pmqa verify re-judges them (none for
  // a case pmqa gen made or a suite's case).
  m.def(
      "run_gates",
      [](const Handle& h) {
        const auto f = loaded_file(h);
        return cases::judge_recorded_gates(*f, h->source().empty() ? h->name() : h->source());
      },
      py::arg("case"));
  m.def("suite_names", &fixtures::suite_names);
  m.def(
      "suite",
      [](const std::string& name) {
        std::vector<Handle> out;
        for (const auto& sc : fixtures::suite(name)) out.push_back(CaseHandle::from_suite(sc, name, "--suite " + name));
        return out;
      },
      py::arg("name"));
  m.def("fitted_suite", &fitted_suite, py::arg("suite"), py::arg("convention"), py::arg("platform") = "",
        py::arg("overlays") = std::vector<std::string>{});
  m.def("refusals", &refusals, py::arg("cases"), py::arg("convention"), py::arg("platform") = "",
        py::arg("overlays") = std::vector<std::string>{});
  m.def(
      "describe_envelope",
      [](const std::string& convention, const std::string& platform, const std::vector<std::string>& overlays) {
        return envelope_of(convention, platform, overlays).describe();
      },
      py::arg("convention"), py::arg("platform") = "", py::arg("overlays") = std::vector<std::string>{});
  m.def("reference", &reference_logits, py::arg("case"), py::arg("nan") = py::none(), py::arg("precision") = "fp64");
  m.def("verify", &verify, py::arg("case"), py::arg("logits"), py::arg("judging") = py::none(),
        py::arg("max_listed") = 10);
  m.def("judged_options", &judged_options, py::arg("case"), py::arg("judging") = py::none());
  m.def("write_case", &write_case, py::arg("case"), py::arg("path"), py::arg("logits") = py::none(),
        py::arg("contract") = py::none(), py::arg("metadata") = std::map<std::string, std::string>{});

  py::class_<Mismatch>(m, "Mismatch")
      .def_property_readonly("kind", [](const Mismatch& x) { return std::string(to_string(x.kind)); })
      .def_readonly("row", &Mismatch::row)
      .def_readonly("col", &Mismatch::col)
      .def_readonly("b", &Mismatch::b)
      .def_readonly("n", &Mismatch::n)
      .def_readonly("valid_keys", &Mismatch::valid_keys)
      .def_readonly("logical_block", &Mismatch::logical_block)
      .def_readonly("physical_block", &Mismatch::physical_block)
      .def_readonly("token_in_block", &Mismatch::token_in_block)
      .def_readonly("offset_in_block", &Mismatch::offset_in_block)
      .def_readonly("got", &Mismatch::got)
      .def_readonly("expected", &Mismatch::expected)
      .def_readonly("bound", &Mismatch::bound);

  py::class_<RegionMismatch>(m, "RegionMismatch")
      .def_property_readonly("gate", [](const RegionMismatch& g) { return std::string(to_string(g.gate)); })
      .def_readonly("row", &RegionMismatch::row)
      .def_readonly("b", &RegionMismatch::b)
      .def_readonly("n", &RegionMismatch::n)
      .def_readonly("logical_block", &RegionMismatch::logical_block)
      .def_readonly("physical_block", &RegionMismatch::physical_block)
      .def_readonly("cells", &RegionMismatch::cells)
      .def_readonly("rms", &RegionMismatch::rms)
      .def_readonly("limit", &RegionMismatch::limit)
      .def_property_readonly("over", [](const RegionMismatch& g) { return std::string(to_string(g.over)); })
      .def_property_readonly("bias_kind",
                             [](const RegionMismatch& g) -> py::object {
                               if (g.gate != Gate::bias) return py::none();
                               return py::str(std::string(to_string(g.bias_kind)));
                             })
      .def_property_readonly("bias",
                             [](const RegionMismatch& g) -> py::object {
                               if (g.gate != Gate::bias) return py::none();
                               return py::float_(g.bias);
                             })
      .def_property_readonly("sign", [](const RegionMismatch& g) -> py::object {
        if (g.gate != Gate::bias) return py::none();
        return py::str(std::string(bias_sign(g.bias_kind, g.bias)));
      });

  py::class_<ErrorMap> error_map(m, "ErrorMap");
  error_map.def_readonly("rows", &ErrorMap::rows)
      .def_readonly("blocks", &ErrorMap::blocks)
      .def_readonly("block_size", &ErrorMap::block_size)
      .def_readonly("global_gate", &ErrorMap::global_gate)
      .def_readonly("global_bias", &ErrorMap::global_bias)
      .def_readonly("guard_outside_rows", &ErrorMap::guard_outside_rows)
      .def_property_readonly("worst", [](const ErrorMap& x) { return map_array(x.worst, x.rows, x.blocks); })
      .def_property_readonly("flags", [](const ErrorMap& x) { return map_array(x.flags, x.rows, x.blocks); })
      .def_property_readonly("compared", [](const ErrorMap& x) { return map_array(x.compared, x.rows, x.blocks); })
      .def_property_readonly("row_flags", [](const ErrorMap& x) {
        py::array_t<std::uint8_t> a(x.rows);
        if (!x.row_flags.empty()) std::memcpy(a.mutable_data(), x.row_flags.data(), x.row_flags.size());
        return a;
      })
      .def("text", &ErrorMap::text, py::arg("width") = 64, py::arg("height") = 24)
      .def("block", &cases::error_map_block, py::arg("width") = 64, py::arg("height") = 16)
      .def(
          "svg",
          [](const ErrorMap& x, const std::string& title, int max_columns, int max_rows) {
            return cases::error_map_svg(x, {.title = title, .notes = {}, .max_columns = max_columns, .max_rows = max_rows});
          },
          py::arg("title") = "", py::arg("max_columns") = 256, py::arg("max_rows") = 256);
  error_map.attr("ELEMENT") = static_cast<int>(ErrorMap::element);
  error_map.attr("BLOCK_GATE") = static_cast<int>(ErrorMap::block_gate);
  error_map.attr("UNWRITTEN") = static_cast<int>(ErrorMap::unwritten);
  error_map.attr("INF_PATTERN") = static_cast<int>(ErrorMap::inf_pattern);
  error_map.attr("NAN") = static_cast<int>(ErrorMap::nan);
  error_map.attr("ROW_GATE") = static_cast<int>(ErrorMap::row_gate);
  error_map.attr("BIAS_GATE") = static_cast<int>(ErrorMap::bias_gate);
  error_map.attr("ROW_BIAS") = static_cast<int>(ErrorMap::row_bias);
  error_map.attr("GUARD") = static_cast<int>(ErrorMap::guard);

  py::class_<Report>(m, "Report")
      .def_property_readonly("passed", &Report::passed)
      .def_property_readonly("failures", &Report::failures)
      .def_property_readonly("failing_cells", &Report::failing_cells)
      .def_property_readonly("failing_regions", &Report::failing_regions)
      .def_property_readonly("broken", &Report::broken)
      .def(
          "svg",
          [](const Report& r, const std::string& where) {
            if (!r.map) throw std::invalid_argument("this report has no error map");
            return cases::report_svg(r, where);
          },
          py::arg("where") = "")
      .def_readonly("case_description", &Report::case_description)
      .def_property_readonly("judging", [](const Report& r) { return judging_dict(r.judging); })
      .def_property_readonly("contract", [](const Report& r) { return std::string(to_string(r.judging.contract)); })
      .def_property_readonly("tolerance", [](const Report& r) { return r.judging.tolerance.name; })
      .def_property_readonly("nan_rule", [](const Report& r) { return std::string(to_string(r.judging.nan)); })
      .def_readonly("cells_checked", &Report::cells_checked)
      .def_readonly("value_mismatches", &Report::value_mismatches)
      .def_readonly("nan_mismatches", &Report::nan_mismatches)
      .def_readonly("inf_pattern_errors", &Report::inf_pattern_errors)
      .def_readonly("unwritten", &Report::unwritten)
      .def_readonly("guard_violations", &Report::guard_violations)
      .def_readonly("max_abs_error", &Report::max_abs_error)
      .def_readonly("max_rel_error", &Report::max_rel_error)
      .def_readonly("worst_bound_ratio", &Report::worst_bound_ratio)
      .def_property_readonly("gates",
                             [](const Report& r) {
                               py::dict d;
                               d["element"] = py::make_tuple(r.worst_bound_ratio, r.value_mismatches);
                               d["block"] = py::make_tuple(r.block.worst, r.block.failing);
                               d["row"] = py::make_tuple(r.row.worst, r.row.failing);
                               d["global"] = py::make_tuple(r.global.worst, r.global.failing);
                               d["bias"] = py::make_tuple(r.bias.worst, r.bias.failing);
                               return d;
                             })
      .def_property_readonly("bias",
                             [](const Report& r) {
                               py::dict d;
                               d["offset"] = r.means.offset;
                               d["scale"] = r.means.scale;
                               d["limit"] = r.means.limit;
                               d["cells"] = r.means.cells;
                               d["signs"] = r.means.signs();
                               return d;
                             })
      .def_property_readonly("nan_seen",
                             [](const Report& r) {
                               py::dict d;
                               d["cells"] = r.nan_seen.cells;
                               d["propagated"] = r.nan_seen.propagated;
                               d["clamped"] = r.nan_seen.clamped;
                               d["other"] = r.nan_seen.other;
                               d["behaviour"] = r.nan_seen.describe();
                               return d;
                             })
      .def_readonly("calc_diff", &Report::calc_diff)
      .def_readonly("first", &Report::first)
      .def_readonly("regions", &Report::regions)
      .def_readwrite("reproduce", &Report::reproduce)
      .def_property_readonly("map", [](const Report& r) -> py::object {
        if (!r.map) return py::none();
        return py::cast(*r.map);
      })
      .def("to_text", &Report::to_text)
      .def("to_json", [](const Report& r) { return json_to_python(r.to_json()); });
}
