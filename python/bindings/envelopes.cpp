// Envelopes for Python: the C++ model (cases/envelope.hpp) and its builtin files, compiled in. A
// runner asks for a convention's envelope on its platform, the traits of a case and the refusal.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "pmqa/cases/envelope.hpp"

namespace py = pybind11;

namespace pmqa::python {
namespace {

using cases::CaseTraits;
using cases::Envelope;
using cases::EnvelopeFile;
using cases::Limit;

py::object trait_value(const cases::TraitValue& v) {
  return std::visit([](const auto& x) -> py::object { return py::cast(x); }, v);
}

// A pmqa.cases.CaseFile's traits (its attributes, read by name), as the C++ traits_of computes them.
CaseTraits traits_of_file(const py::handle& cf, std::optional<std::int64_t> chunk_q, const std::string& arch) {
  cases::CaseShape s;
  s.batch = cf.attr("batch").cast<std::int64_t>();
  s.next_n = cf.attr("next_n").cast<std::int64_t>();
  s.heads = cf.attr("heads").cast<std::int64_t>();
  s.head_dim = cf.attr("head_dim").cast<std::int64_t>();
  s.block_size = cf.attr("block_size").cast<std::int64_t>();
  s.max_model_len = cf.attr("max_model_len").cast<std::int64_t>();
  s.block_stride = cf.attr("block_stride").cast<std::int64_t>();
  s.format = parse_value_format(cf.attr("value_format").cast<std::string>());
  s.layout = parse_kv_layout(cf.attr("kv_layout").cast<std::string>());
  s.context_lens_2d = cf.attr("context_lens_2d").cast<bool>();
  const auto lens = py::array_t<std::int32_t, py::array::c_style | py::array::forcecast>::ensure(cf.attr("context_lens"));
  if (!lens) throw py::error_already_set();
  s.context_lens.assign(lens.data(), lens.data() + lens.size());
  return cases::traits_of(s, {.chunk_q = chunk_q, .arch = arch});
}

}  // namespace

void bind_envelopes(py::module_& m) {
  py::register_exception<cases::EnvelopeError>(m, "EnvelopeError", PyExc_ValueError);

  // A case's traits read like a dict: t["heads"], set(t), dict(t.items()).
  py::class_<CaseTraits>(m, "CaseTraits")
      .def("__getitem__", [](const CaseTraits& t, const std::string& field) { return trait_value(t.get(field)); })
      .def("__contains__", [](const CaseTraits&, const std::string& field) {
        const auto& f = cases::trait_fields();
        return std::find(f.begin(), f.end(), field) != f.end();
      })
      .def("__iter__", [](const CaseTraits&) { return py::iter(py::cast(cases::trait_fields())); })
      .def("__len__", [](const CaseTraits&) { return cases::trait_fields().size(); })
      .def("keys", [](const CaseTraits&) { return cases::trait_fields(); })
      .def("items", [](const CaseTraits& t) {
        py::list out;
        for (const auto& f : cases::trait_fields()) out.append(py::make_tuple(f, trait_value(t.get(f))));
        return out;
      })
      .def("__repr__", [](const CaseTraits& t) {
        std::string s = "CaseTraits(";
        for (const auto& f : cases::trait_fields()) s += f + "=" + py::repr(trait_value(t.get(f))).cast<std::string>() + ", ";
        return s.substr(0, s.size() - 2) + ")";
      });

  py::class_<Limit>(m, "Limit")
      .def_readonly("id", &Limit::id)
      .def_readonly("field", &Limit::field)
      .def_readonly("reason", &Limit::reason)
      .def_readonly("section", &Limit::section)
      .def_readonly("origin", &Limit::origin)
      .def("describe", [](const Limit& l) {
        return l.field + " " + l.predicate.describe() + (l.when ? " when " + *l.when_field + " " + l.when->describe() : "");
      });

  py::class_<EnvelopeFile>(m, "EnvelopeFile")
      .def_readonly("overlay", &EnvelopeFile::overlay)
      .def_readonly("convention", &EnvelopeFile::convention)
      .def_readonly("calls", &EnvelopeFile::calls)
      .def_readonly("origin", &EnvelopeFile::origin)
      .def_property_readonly("common", [](const EnvelopeFile& f) { return f.common.limits; })
      .def_property_readonly("platforms", [](const EnvelopeFile& f) {
        py::dict d;
        for (const auto& [name, section] : f.platforms) d[py::str(name)] = section.limits;
        return d;
      });

  py::class_<Envelope>(m, "Envelope")
      .def_readonly("convention", &Envelope::convention)
      .def_readonly("platform", &Envelope::platform)
      .def_readonly("platform_listed", &Envelope::platform_listed)
      .def_readonly("calls", &Envelope::calls)
      .def_readonly("limits", &Envelope::limits)
      .def_readonly("origins", &Envelope::origins)
      .def("describe", &Envelope::describe)
      // (limit id, message) for a case outside, None inside: the id is what a run counts refusals by.
      .def("refusal", [](const Envelope& e, const CaseTraits& t) -> py::object {
        const std::string why = e.refusal(t);
        if (why.empty()) return py::none();
        const auto breaches = e.breaches(t);
        return py::make_tuple(e.platform_listed ? breaches.front().limit->id : std::string("platform"), why);
      });

  m.def("envelope_conventions", &cases::envelope_conventions);
  m.def("builtin_envelope_file", &cases::builtin_envelope_file, py::arg("convention"),
        py::return_value_policy::copy);
  m.def("parse_envelope", &cases::parse_envelope, py::arg("text"), py::arg("origin"));
  m.def(
      "read_envelope_file", [](const std::filesystem::path& path) { return cases::read_envelope_file(path.string()); },
      py::arg("path"));
  m.def(
      "make_envelope",
      [](const std::string& convention, const std::optional<std::string>& platform, const std::vector<EnvelopeFile>& overlays) {
        return cases::make_envelope(convention, platform.value_or(""), overlays);
      },
      py::arg("convention"), py::arg("platform") = py::none(), py::arg("overlays") = std::vector<EnvelopeFile>{});
  m.def("traits_of", &traits_of_file, py::arg("case_file"), py::arg("chunk_q") = py::none(), py::arg("arch") = "",
        "The fields a limit can name, for a pmqa.cases.CaseFile (cases::traits_of)");
  m.def("trait_fields", &cases::trait_fields);
}

}  // namespace pmqa::python
