#include "pmqa/dispatch/arch_table.hpp"

#include "pmqa/model/kernel_id.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "embedded.hpp"
#include "json_fields.hpp"
#include "pmqa/dispatch/policy.hpp"

namespace pmqa::dispatch {
namespace {

constexpr std::string_view kSchema = "pmqa-arch-table/1";

[[noreturn]] void table_fail(const std::string& message) { throw ArchTableError(message); }
using TableFields = detail::Fields;

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

MatrixKind parse_matrix_kind(TableFields& f, const std::string& text) {
  if (const auto kind = pmqa::parse_matrix_kind(text)) return *kind;
  f.field_error("fp8_matrix", "must be one of " + std::string(matrix_kind_names()) + "; got \"" + text + "\"");
}

bool matrix_kind_of(MatrixKind kind, Vendor vendor) {
  switch (kind) {
    case MatrixKind::none: return true;
    case MatrixKind::mfma:
    case MatrixKind::wmma: return vendor == Vendor::amd;
    case MatrixKind::mma_sync:
    case MatrixKind::wgmma:
    case MatrixKind::tcgen05: return vendor == Vendor::nvidia;
  }
  return false;
}

ArchInfo parse_entry(const nlohmann::json& j, std::string_view source, std::size_t index,
                     const std::set<std::string>& seen) {
  // Name the entry by its target as soon as it is known.
  std::string where = std::string(source) + ": entry " + std::to_string(index);
  if (j.is_object() && j.contains("target") && j["target"].is_string())
    where += " (" + j["target"].get<std::string>() + ")";
  TableFields f(j, where, &table_fail);

  ArchInfo info;
  info.target = f.string("target");
  Arch parsed;
  try {
    parsed = parse_arch(info.target);
  } catch (const ArchParseError& e) {
    f.field_error("target", std::string("is not a valid arch: ") + e.what());
  }
  if (!parsed.features.empty())
    f.field_error("target", "must be a bare target without feature flags, got \"" + info.target + "\"");
  if (seen.contains(info.target)) f.field_error("target", "\"" + info.target + "\" appears twice in the table");

  const std::string vendor = f.string("vendor");
  if (vendor == "amd")
    info.vendor = Vendor::amd;
  else if (vendor == "nvidia")
    info.vendor = Vendor::nvidia;
  else
    f.field_error("vendor", "must be \"amd\" or \"nvidia\", got \"" + vendor + "\"");
  if (info.vendor != parsed.vendor)
    f.field_error("vendor", "is \"" + vendor + "\" but target \"" + info.target + "\" is " +
                                std::string(to_string(parsed.vendor)));

  info.family = f.string("family");
  if (info.family.empty()) f.field_error("family", "is empty");

  const std::string fp8 = f.string("fp8");
  if (fp8 == "none") {
    info.fp8 = std::nullopt;
  } else if (fp8 == "e4m3fn") {
    info.fp8 = Fp8Format::e4m3fn;
  } else if (fp8 == "e4m3fnuz") {
    info.fp8 = Fp8Format::e4m3fnuz;
  } else {
    f.field_error("fp8", "must be \"none\", \"e4m3fn\" or \"e4m3fnuz\", got \"" + fp8 + "\"");
  }
  if (info.vendor == Vendor::nvidia && info.fp8 == Fp8Format::e4m3fnuz)
    f.field_error("fp8", "is e4m3fnuz, which no NVIDIA arch uses (spec §3: sm_89+ are OCP e4m3fn)");

  const std::int64_t wave = f.integer("wave_size");
  if (wave != 32 && wave != 64) f.field_error("wave_size", "must be 32 or 64, got " + std::to_string(wave));
  if (info.vendor == Vendor::nvidia && wave != 32)
    f.field_error("wave_size", "must be 32 on NVIDIA (a warp), got " + std::to_string(wave));
  info.wave_size = static_cast<int>(wave);

  info.fp8_matrix = parse_matrix_kind(f, f.string("fp8_matrix"));
  if (!matrix_kind_of(info.fp8_matrix, info.vendor))
    f.field_error("fp8_matrix", "is " + std::string(to_string(info.fp8_matrix)) + ", which " +
                                    std::string(to_string(info.vendor)) + " hardware does not have");
  if (!info.fp8 && info.fp8_matrix != MatrixKind::none)
    f.field_error("fp8_matrix", "is " + std::string(to_string(info.fp8_matrix)) +
                                    " but \"fp8\" is none: fp8 matrix instructions need an fp8 format");
  info.fp8_matrix_example = f.string("fp8_matrix_example");
  if (info.fp8_matrix == MatrixKind::none && !info.fp8_matrix_example.empty())
    f.field_error("fp8_matrix_example", "must be empty when \"fp8_matrix\" is none");
  if (info.fp8_matrix != MatrixKind::none && info.fp8_matrix_example.empty())
    f.field_error("fp8_matrix_example", "is empty; name one " + std::string(to_string(info.fp8_matrix)) +
                                            " fp8 instruction");

  if (!f.has("fused_kernel_library")) f.field_error("fused_kernel_library", "is missing (use null for none)");
  info.fused_kernel_library = f.optional_string("fused_kernel_library");
  if (info.fused_kernel_library) {
    const std::string_view expected = kernel_library(info.vendor);
    if (*info.fused_kernel_library != expected)
      f.field_error("fused_kernel_library", "is \"" + *info.fused_kernel_library + "\"; on " +
                                                std::string(to_string(info.vendor)) + " the kernel library is \"" +
                                                std::string(expected) + "\" (or null)");
    if (!info.fp8) f.field_error("fused_kernel_library", "is set but the target has no fp8");
  }

  if (!f.has("pmqa_fused_kernel")) f.field_error("pmqa_fused_kernel", "is missing (use null for a target without fp8)");
  info.pmqa_fused_kernel = f.optional_string("pmqa_fused_kernel");
  if (info.pmqa_fused_kernel) {
    // Which family fits which arch is the kernels' to say: kernels/tests checks that this names the
    // first fused kernel that fits the arch's capabilities.
    const std::string& k = *info.pmqa_fused_kernel;
    if (!is_kernel_family(k, Path::fused))
      f.field_error("pmqa_fused_kernel", "must be " + kernel_family_names(Path::fused) + " or null, got \"" + k + "\"");
    if (!info.fp8) f.field_error("pmqa_fused_kernel", "is set but the target has no fp8 (use null)");
  } else if (info.fp8) {
    f.field_error("pmqa_fused_kernel", "is null but the target has fp8 (name the kernel, fused-scalar at least)");
  }

  info.products = f.strings("products");
  if (info.products.empty()) f.field_error("products", "is empty; name at least one product");
  for (std::size_t i = 0; i < info.products.size(); ++i)
    if (info.products[i].empty()) f.field_error("products", "item " + std::to_string(i) + " is empty");

  info.note = f.string("note");
  f.no_other_fields();
  return info;
}

}  // namespace

std::string ArchInfo::products_text() const { return join(products, "/"); }

std::string ArchInfo::label() const { return target + " (" + products_text() + ")"; }

UnknownArchError::UnknownArchError(std::string arch, std::vector<std::string> known)
    : std::runtime_error("unknown arch \"" + arch + "\": not in the arch table, which knows " + join(known, ", ") +
                         " (an unknown arch is an error, never a fallback; to support it, add it to " +
                         std::string(ArchTable::builtin_source()) + " and its expected rows to " +
                         "fixtures/arch_matrix.json)"),
      arch_(std::move(arch)),
      known_(std::move(known)) {}

std::string_view ArchTable::builtin_json() noexcept {
  return detail::embedded_text(detail::arch_table_json_data, detail::arch_table_json_size);
}

std::string_view ArchTable::builtin_source() noexcept { return detail::arch_table_json_source; }

const ArchTable& ArchTable::builtin() {
  static const ArchTable table = parse(builtin_json(), builtin_source());
  return table;
}

ArchTable ArchTable::parse(std::string_view json_text, std::string_view source) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    throw ArchTableError(std::string(source) + ": not valid JSON: " + e.what());
  }
  TableFields top(doc, std::string(source), &table_fail);
  const std::string schema = top.string("schema");
  if (schema != kSchema)
    top.field_error("schema", "is \"" + schema + "\"; this library reads \"" + std::string(kSchema) + "\"");
  if (top.has("description")) (void)top.string("description");
  const auto& archs = top.required("archs");
  if (!archs.is_array() || archs.empty()) top.field_error("archs", "must be a non-empty array of entries");
  top.no_other_fields();

  ArchTable table;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < archs.size(); ++i) {
    table.entries_.push_back(parse_entry(archs[i], source, i, seen));
    seen.insert(table.entries_.back().target);
  }
  return table;
}

std::vector<std::string> ArchTable::targets() const {
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const auto& e : entries_) out.push_back(e.target);
  return out;
}

const ArchInfo* ArchTable::find(std::string_view target) const noexcept {
  for (const auto& e : entries_)
    if (e.target == target) return &e;
  return nullptr;
}

const ArchInfo& ArchTable::at(const Arch& arch) const {
  if (const ArchInfo* info = find(arch.target)) return *info;
  throw UnknownArchError(arch.text.empty() ? arch.target : arch.text, targets());
}

const ArchInfo& ArchTable::at(std::string_view target) const {
  if (const ArchInfo* info = find(target)) return *info;
  throw UnknownArchError(std::string(target), targets());
}

}  // namespace pmqa::dispatch
