#include "arch_matrix_support.hpp"

#include <nlohmann/json.hpp>

namespace pmqa::arch_matrix_test {

const pd::Policy& pre_fix_policy() {
  static const pd::DefaultPolicy p(pd::DefaultPolicyOptions{{"gfx942"}, {"sm_90", "sm_100"}}, pd::ArchTable::builtin(),
                                   "pre-fix guard (gfx942 only)");
  return p;
}

const pd::Policy& unknown_arch_fallback_policy() {
  static const pd::FunctionPolicy p("unknown arch -> silent fallback", [](const pd::Arch& arch, const pd::Context& ctx) {
    try {
      return pd::default_policy().select(arch, ctx);
    } catch (const pd::UnknownArchError&) {
      return pd::Decision{pmqa::Path::reference_fallback, Fp8Format::e4m3fn, KvLayout::normal,
                          "unknown arch: falling back to the reference", 0, ""};
    }
  });
  return p;
}

const pd::Policy& normal_on_shuffle_policy() {
  static const pd::FunctionPolicy p("reads NORMAL on a SHUFFLE cache", [](const pd::Arch& arch, const pd::Context& ctx) {
    pd::Decision d = pd::default_policy().select(arch, ctx);
    if (d.layout == KvLayout::shuffle) d.layout = KvLayout::normal;
    return d;
  });
  return p;
}

const pd::Policy& gfx1250_edit_drops_gfx942_policy() {
  static const pd::DefaultPolicy p(pd::DefaultPolicyOptions{{"gfx950", "gfx1250"}, {"sm_90", "sm_100"}},
                                   pd::ArchTable::builtin(), "gfx1250 edit that dropped gfx942 from the guard");
  return p;
}

const pd::Policy& gfx1250_edit_flips_gfx942_format_policy() {
  static const pd::ArchTable table = [] {
    auto doc = nlohmann::json::parse(pd::ArchTable::builtin_json());
    for (auto& e : doc["archs"])
      if (e["target"] == "gfx942") e["fp8"] = "e4m3fn";  // pasted from the gfx1250 row
    return pd::ArchTable::parse(doc.dump(), "arch_table.json with the gfx1250 edit");
  }();
  static const pd::DefaultPolicy p(pd::DefaultPolicyOptions{{"gfx942", "gfx950", "gfx1250"}, {"sm_90", "sm_100"}}, table,
                                   "gfx1250 edit that flipped gfx942 to e4m3fn");
  return p;
}

const pd::Policy& full_name_guard_policy() {
  static const pd::FunctionPolicy p("guard compares the full gcnArchName", [](const pd::Arch& arch, const pd::Context& ctx) {
    pd::Decision d = pd::default_policy().select(arch, ctx);
    if (arch.text != arch.target && d.path == pmqa::Path::fused && arch.vendor == pd::Vendor::amd) {
      d.path = pmqa::Path::two_stage;
      d.layout = KvLayout::normal;
      d.reason = "\"" + arch.text + "\" is not \"gfx942\" or \"gfx950\"";
    }
    return d;
  });
  return p;
}

std::set<std::size_t> failed_rows(const pd::MatrixReport& report) {
  std::set<std::size_t> out;
  for (const auto* r : report.failed()) out.insert(r->row.index);
  return out;
}

std::string target_of(const pd::MatrixRow& row) {
  try {
    return pd::parse_arch(row.arch).target;
  } catch (const pd::ArchParseError&) {
    return "";
  }
}

}  // namespace pmqa::arch_matrix_test
