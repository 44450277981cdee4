#include "pmqa/dispatch/json.hpp"

namespace pmqa::dispatch {

using nlohmann::json;

void to_json(json& j, const FeatureFlag& flag) { j = json{{"name", flag.name}, {"enabled", flag.enabled}}; }

void to_json(json& j, const Arch& arch) {
  j = json{{"text", arch.text}, {"vendor", to_string(arch.vendor)}, {"target", arch.target}};
  j["features"] = json::array();
  for (const auto& f : arch.features) j["features"].push_back(f);
  if (arch.vendor == Vendor::nvidia) j["compute_capability"] = {arch.cc_major, arch.cc_minor};
}

void to_json(json& j, const ArchInfo& info) {
  j = json{{"target", info.target},
           {"vendor", to_string(info.vendor)},
           {"family", info.family},
           {"fp8", info.fp8 ? json(to_string(*info.fp8)) : json("none")},
           {"wave_size", info.wave_size},
           {"fp8_matrix", to_string(info.fp8_matrix)},
           {"fp8_matrix_example", info.fp8_matrix_example},
           {"fused_kernel_library", info.fused_kernel_library ? json(*info.fused_kernel_library) : json(nullptr)},
           {"pmqa_fused_kernel", info.pmqa_fused_kernel ? json(*info.pmqa_fused_kernel) : json(nullptr)},
           {"products", info.products},
           {"note", info.note}};
}

void to_json(json& j, const Context& ctx) {
  j = json{{"kernels_present", ctx.kernels_present},
           {"block_size", ctx.block_size},
           {"next_n", ctx.next_n},
           {"heads", ctx.heads}};
}

void to_json(json& j, const Decision& d) {
  j = json{{"path", to_string(d.path)},
           {"fp8", d.fp8 ? json(to_string(*d.fp8)) : json(nullptr)},
           {"layout", d.layout ? json(to_string(*d.layout)) : json(nullptr)},
           {"reason", d.reason}};
  j["kernel"] = d.kernel.empty() ? json(nullptr) : json(d.kernel);
  if (d.trace_id) j["trace_id"] = d.trace_id;
}

void to_json(json& j, const TraceEntry& e) {
  j = json{{"id", e.id},         {"arch", e.arch},         {"target", e.target},
           {"vendor", to_string(e.vendor)}, {"context", e.context}, {"policy", e.policy},
           {"decision", e.decision}};
  j["executor"] = e.executor ? json(*e.executor) : json(nullptr);
}

void to_json(json& j, const MatrixRow& row) {
  j = json{{"index", row.index}, {"arch", row.arch}, {"context", row.context}};
  json expect;
  if (row.error != ExpectedError::none) {
    expect["error"] = to_string(row.error);
  } else {
    expect["path"] = row.path ? json(to_string(*row.path)) : json(nullptr);
    expect["fp8"] = row.fp8 ? json(to_string(*row.fp8)) : json(nullptr);
    expect["layout"] = row.layout ? json(to_string(*row.layout)) : json(nullptr);
    if (!row.reason_contains.empty()) expect["reason_contains"] = row.reason_contains;
  }
  j["expect"] = expect;
  if (!row.note.empty()) j["note"] = row.note;
}

void to_json(json& j, const RowResult& r) {
  j = json{{"row", r.row}, {"label", r.label}, {"pass", r.pass}, {"message", r.message}};
  if (r.actual) j["actual"] = *r.actual;
  if (r.actual_error != ExpectedError::none)
    j["actual_error"] = json{{"kind", to_string(r.actual_error)}, {"message", r.actual_error_text}};
  if (r.numeric) j["numeric"] = json{{"pass", r.numeric->pass}, {"message", r.numeric->message}};
}

void to_json(json& j, const MatrixReport& report) {
  j = json{{"policy", report.policy},
           {"source", report.source},
           {"rows", report.results.size()},
           {"failures", report.failures()},
           {"passed", report.passed()}};
  j["results"] = json::array();
  for (const auto& r : report.results) j["results"].push_back(r);
}

void to_json(json& j, const ArchCheckResult& r) {
  j = json{{"verdict", to_string(r.verdict)}, {"exit_code", r.exit_code()}, {"message", r.message}};
  if (r.device) j["device"] = *r.device;
  if (r.decision) j["decision"] = *r.decision;
}

}  // namespace pmqa::dispatch
