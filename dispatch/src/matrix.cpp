#include "pmqa/dispatch/matrix.hpp"

#include <fstream>
#include <map>
#include <sstream>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "embedded.hpp"
#include "json_fields.hpp"
#include "pmqa/model/kernel_id.hpp"

namespace pmqa::dispatch {
namespace {

constexpr std::string_view kSchema = "pmqa-arch-matrix/1";

[[noreturn]] void matrix_fail(const std::string& message) { throw MatrixError(message); }
using MatrixFields = detail::Fields;

std::string in_quotes(std::string_view text) { return "\"" + std::string(text) + "\""; }

MatrixRow parse_row(const nlohmann::json& j, std::string_view source, std::size_t index) {
  std::string where = std::string(source) + ": row " + std::to_string(index);
  if (j.is_object() && j.contains("arch") && j["arch"].is_string()) where += " (" + in_quotes(j["arch"].get<std::string>()) + ")";
  MatrixFields f(j, where, &matrix_fail);

  MatrixRow row;
  row.index = index;
  row.arch = f.string("arch");
  const std::string kernels = f.string("kernels");
  if (kernels == "present")
    row.context.kernels_present = true;
  else if (kernels == "absent")
    row.context.kernels_present = false;
  else
    f.field_error("kernels", "must be \"present\" or \"absent\", got " + in_quotes(kernels));
  auto positive = [&](std::string_view name, std::int64_t value) {
    if (value < 1) f.field_error(name, "must be >= 1, got " + std::to_string(value));
    return value;
  };
  row.context.block_size = positive("block_size", f.integer("block_size"));
  row.context.next_n = positive("next_n", f.integer("next_n"));
  if (auto heads = f.optional_integer("heads")) row.context.heads = positive("heads", *heads);

  if (auto error = f.optional_string("error")) {
    if (*error == "unknown-arch")
      row.error = ExpectedError::unknown_arch;
    else if (*error == "malformed-arch")
      row.error = ExpectedError::malformed_arch;
    else
      f.field_error("error", "must be \"unknown-arch\" or \"malformed-arch\", got " + in_quotes(*error));
    for (std::string_view other : {"path", "fp8", "layout", "reason_contains", "kernel"})
      if (f.has(other)) f.field_error(other, "cannot be given with \"error\" (the row expects no decision)");
  } else {
    const std::string path = f.string("path");
    try {
      row.path = parse_path(path);
    } catch (const std::invalid_argument&) {
      f.field_error("path", "must be fused, two-stage, reference-fallback or unsupported, got " + in_quotes(path));
    }
    if (*row.path != Path::unsupported) {
      const std::string fp8 = f.string("fp8");
      try {
        row.fp8 = parse_fp8_format(fp8);
      } catch (const std::invalid_argument&) {
        f.field_error("fp8", "must be e4m3fn or e4m3fnuz, got " + in_quotes(fp8));
      }
      const std::string layout = f.string("layout");
      if (layout != "normal" && layout != "shuffle")
        f.field_error("layout", "must be normal or shuffle, got " + in_quotes(layout));
      row.layout = parse_kv_layout(layout);
    } else {
      for (std::string_view other : {"fp8", "layout"})
        if (f.has(other)) f.field_error(other, "cannot be given for an unsupported path");
    }
    if (auto text = f.optional_string("reason_contains")) {
      if (text->empty()) f.field_error("reason_contains", "is empty");
      row.reason_contains = *text;
    }
    if (auto kernel = f.optional_string("kernel")) {
      if (*row.path != Path::fused) f.field_error("kernel", "is only for fused rows");
      if (!is_kernel_family(*kernel, Path::fused))
        f.field_error("kernel", "must be one of " + kernel_family_names(Path::fused) + ", got " + in_quotes(*kernel));
      row.kernel = *kernel;
    }
  }
  if (auto note = f.optional_string("note")) row.note = *note;
  f.no_other_fields();
  return row;
}

// Scalars only: an entry keyword is a configuration switch, not data.
std::map<std::string, std::string> parse_entry_kwargs(MatrixFields& f) {
  std::map<std::string, std::string> out;
  if (!f.has("entry_kwargs")) return out;
  const auto& v = f.required("entry_kwargs");
  if (!v.is_object() || v.empty()) f.field_error("entry_kwargs", "must be a non-empty object, got " + MatrixFields::kind(v));
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!(it->is_number_integer() || it->is_boolean() || it->is_string()))
      f.field_error("entry_kwargs", "value of " + in_quotes(it.key()) + " must be an integer, a boolean or a string, got " +
                                        MatrixFields::kind(*it));
    out.emplace(it.key(), it->dump());
  }
  return out;
}

EngineRow parse_engine_row(const nlohmann::json& j, std::string_view source, std::size_t index) {
  std::string where = std::string(source) + ": engine row " + std::to_string(index);
  if (j.is_object() && j.contains("arch") && j["arch"].is_string()) where += " (" + in_quotes(j["arch"].get<std::string>()) + ")";
  MatrixFields f(j, where, &matrix_fail);

  EngineRow row;
  row.index = index;
  row.engine = f.string("engine");
  if (row.engine.empty() || row.engine.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos)
    f.field_error("engine", "must be a lowercase adapter name, got " + in_quotes(row.engine));
  row.arch = f.string("arch");
  const std::string kernels = f.string("kernels");
  if (kernels == "present")
    row.context.kernels_present = true;
  else if (kernels == "absent")
    row.context.kernels_present = false;
  else
    f.field_error("kernels", "must be \"present\" or \"absent\", got " + in_quotes(kernels));
  if (f.has("kernels_enabled")) row.kernels_enabled = f.boolean("kernels_enabled");
  if (!row.kernels_enabled && !row.context.kernels_present)
    f.field_error("kernels_enabled", "can be false only when the kernels are present (a switch for a library that is absent)");
  auto positive = [&](std::string_view name, std::int64_t value) {
    if (value < 1) f.field_error(name, "must be >= 1, got " + std::to_string(value));
    return value;
  };
  row.context.block_size = positive("block_size", f.integer("block_size"));
  row.context.next_n = positive("next_n", f.integer("next_n"));
  if (auto heads = f.optional_integer("heads")) row.context.heads = positive("heads", *heads);
  row.entry_kwargs = parse_entry_kwargs(f);

  if (f.has("error")) f.field_error("error", "is not for engine rows (an engine row states a decision)");
  const std::string path = f.string("path");
  try {
    row.path = parse_path(path);
  } catch (const std::invalid_argument&) {
    f.field_error("path", "must be fused, two-stage, reference-fallback or unsupported, got " + in_quotes(path));
  }
  if (row.path != Path::unsupported) {
    const std::string fp8 = f.string("fp8");
    try {
      row.fp8 = parse_fp8_format(fp8);
    } catch (const std::invalid_argument&) {
      f.field_error("fp8", "must be e4m3fn or e4m3fnuz, got " + in_quotes(fp8));
    }
    const std::string layout = f.string("layout");
    if (layout != "normal" && layout != "shuffle")
      f.field_error("layout", "must be normal or shuffle, got " + in_quotes(layout));
    row.layout = parse_kv_layout(layout);
  } else {
    for (std::string_view other : {"fp8", "layout"})
      if (f.has(other)) f.field_error(other, "cannot be given for an unsupported path");
  }
  if (auto entry = f.optional_string("entry")) {
    if (entry->empty()) f.field_error("entry", "is empty");
    row.entry = *entry;
  }
  if (f.has("replaces_policy_row")) row.replaces_policy_row = f.boolean("replaces_policy_row");
  row.reason = f.string("reason");
  if (row.reason.empty()) f.field_error("reason", "is empty (say why the engine decides this)");
  if (auto note = f.optional_string("note")) row.note = *note;
  f.no_other_fields();
  return row;
}

// What a label says about the arch: "gfx950 (MI350X/MI355X)", "gfx1300 (not in the arch table)",
// "\"gfx942:\" (malformed)". Also gives the vendor when the name parses.
std::string arch_label(std::string_view name, const ArchTable& table, std::optional<Vendor>& vendor) {
  try {
    const Arch arch = parse_arch(name);
    vendor = arch.vendor;
    if (const ArchInfo* info = table.find(arch.target)) return arch.text + " (" + info->products_text() + ")";
    return arch.text + " (not in the arch table)";
  } catch (const ArchParseError&) {
    vendor.reset();
    return in_quotes(name) + " (malformed)";
  }
}

std::string decision_text(const Decision& d) { return d.summary() + " (reason: " + d.reason + ")"; }

}  // namespace

std::string_view to_string(ExpectedError error) noexcept {
  switch (error) {
    case ExpectedError::none: return "none";
    case ExpectedError::unknown_arch: return "unknown-arch";
    case ExpectedError::malformed_arch: return "malformed-arch";
    case ExpectedError::other: return "other";
  }
  return "?";
}

std::string MatrixRow::describe(const ArchTable& table) const {
  std::optional<Vendor> vendor;
  std::string out = arch_label(arch, table, vendor);
  out += ", ";
  out += vendor ? std::string(kernel_library(*vendor)) : std::string("kernels");
  out += context.kernels_present ? " present" : " absent";
  out += ", block_size " + std::to_string(context.block_size) + ", next_n " + std::to_string(context.next_n);
  if (context.heads != Context{}.heads) out += ", heads " + std::to_string(context.heads);
  return out;
}

std::string MatrixRow::expected_text() const {
  if (error != ExpectedError::none) return "error " + std::string(to_string(error));
  std::string out(path ? to_string(*path) : "?");
  if (fp8) out += ", " + std::string(to_string(*fp8));
  if (layout) out += ", " + std::string(message_name(*layout));
  return out;
}

std::string EngineRow::describe(const ArchTable& table) const {
  std::optional<Vendor> vendor;
  std::string out = engine + ": " + arch_label(arch, table, vendor) + ", ";
  out += vendor ? std::string(kernel_library(*vendor)) : std::string("kernels");
  out += context.kernels_present ? " present" : " absent";
  if (!kernels_enabled) out += ", switched off";
  out += ", block_size " + std::to_string(context.block_size) + ", next_n " + std::to_string(context.next_n);
  if (context.heads != Context{}.heads) out += ", heads " + std::to_string(context.heads);
  for (const auto& [key, value] : entry_kwargs) out += ", " + key + "=" + value;
  return out;
}

ArchMatrix ArchMatrix::parse(std::string_view json_text, std::string_view source) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    throw MatrixError(std::string(source) + ": not valid JSON: " + e.what());
  }
  MatrixFields top(doc, std::string(source), &matrix_fail);
  const std::string schema = top.string("schema");
  if (schema != kSchema)
    top.field_error("schema", "is " + in_quotes(schema) + "; this library reads " + in_quotes(kSchema));
  ArchMatrix m;
  m.source = std::string(source);
  if (auto d = top.optional_string("description")) m.description = *d;
  const auto& rows = top.required("rows");
  if (!rows.is_array() || rows.empty()) top.field_error("rows", "must be a non-empty array of rows");
  const nlohmann::json* engine_rows = nullptr;
  if (top.has("engine_rows")) {
    engine_rows = &top.required("engine_rows");
    if (!engine_rows->is_array() || engine_rows->empty())
      top.field_error("engine_rows", "must be a non-empty array of engine rows");
  }
  top.no_other_fields();

  std::map<std::tuple<std::string, bool, std::int64_t, std::int64_t, std::int64_t>, std::size_t> seen;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    MatrixRow row = parse_row(rows[i], source, i);
    const auto key = std::make_tuple(row.arch, row.context.kernels_present, row.context.block_size,
                                     row.context.next_n, row.context.heads);
    if (auto [it, inserted] = seen.emplace(key, i); !inserted)
      throw MatrixError(std::string(source) + ": row " + std::to_string(i) + " (" + in_quotes(row.arch) +
                        ") repeats the arch and context of row " + std::to_string(it->second));
    m.rows.push_back(std::move(row));
  }

  if (engine_rows) {
    using EngineKey = std::tuple<std::string, std::string, bool, std::int64_t, std::int64_t, std::int64_t, bool,
                                 std::map<std::string, std::string>>;
    std::map<EngineKey, std::size_t> seen_engine;
    for (std::size_t i = 0; i < engine_rows->size(); ++i) {
      EngineRow row = parse_engine_row((*engine_rows)[i], source, i);
      const std::string where = std::string(source) + ": engine row " + std::to_string(i) + " (" + in_quotes(row.arch) + ")";
      const EngineKey key{row.engine, row.arch, row.context.kernels_present, row.context.block_size, row.context.next_n,
                          row.context.heads, row.kernels_enabled, row.entry_kwargs};
      if (auto [it, inserted] = seen_engine.emplace(key, i); !inserted)
        throw MatrixError(where + " repeats the engine, arch and context of engine row " + std::to_string(it->second));
      // An engine row in a context of "rows" overrides that row for its engine: it must say so.
      const bool plain_context = row.kernels_enabled && row.entry_kwargs.empty();
      std::optional<std::size_t> coincides;
      for (const auto& r : m.rows)
        if (r.arch == row.arch && r.context == row.context) coincides = r.index;
      if (plain_context && coincides && !row.replaces_policy_row)
        throw MatrixError(where + " has the arch and context of row " + std::to_string(*coincides) +
                          ": set \"replaces_policy_row\": true to state the engine's own decision there, or drop the row");
      if (row.replaces_policy_row && !(plain_context && coincides))
        throw MatrixError(where + ": \"replaces_policy_row\" is set but no row of \"rows\" has this arch and context" +
                          (plain_context ? std::string() : std::string(" (an engine switch or entry keyword makes it a context of its own)")));
      m.engine_rows.push_back(std::move(row));
    }
  }
  return m;
}

ArchMatrix ArchMatrix::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw MatrixError(path + ": cannot open the matrix file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw MatrixError(path + ": read error");
  return parse(text.str(), path);
}

std::string_view ArchMatrix::builtin_json() noexcept {
  return detail::embedded_text(detail::arch_matrix_json_data, detail::arch_matrix_json_size);
}

std::string_view ArchMatrix::builtin_source() noexcept { return detail::arch_matrix_json_source; }

const ArchMatrix& ArchMatrix::builtin() {
  static const ArchMatrix matrix = parse(builtin_json(), builtin_source());
  return matrix;
}

RowResult check_row(const MatrixRow& row, const Policy& policy, const ArchTable& table, const NumericHook& numeric) {
  RowResult r;
  r.row = row;
  r.label = row.describe(table);
  try {
    r.actual = policy.select(parse_arch(row.arch), row.context);
  } catch (const ArchParseError& e) {
    r.actual_error = ExpectedError::malformed_arch;
    r.actual_error_text = e.what();
  } catch (const UnknownArchError& e) {
    r.actual_error = ExpectedError::unknown_arch;
    r.actual_error_text = e.what();
  } catch (const std::exception& e) {
    r.actual_error = ExpectedError::other;
    r.actual_error_text = e.what();
  }

  const std::string got = r.actual ? decision_text(*r.actual)
                                   : "error " + std::string(to_string(r.actual_error)) + ": " + r.actual_error_text;
  std::string problem;
  if (row.error != ExpectedError::none) {
    if (r.actual_error != row.error) problem = "expected error " + std::string(to_string(row.error)) + ", got " + got;
  } else if (!r.actual) {
    problem = "expected " + row.expected_text() + ", got " + got;
  } else {
    const Decision& d = *r.actual;
    if (d.path != row.path || d.fp8 != row.fp8 || d.layout != row.layout)
      problem = "expected " + row.expected_text() + ", got " + got;
    else if (!row.reason_contains.empty() && d.reason.find(row.reason_contains) == std::string::npos)
      problem = "expected " + row.expected_text() + " with a reason naming " + in_quotes(row.reason_contains) +
                ", got reason: " + d.reason;
    else if (!row.kernel.empty() && d.kernel != row.kernel)
      problem = "expected " + row.expected_text() + " served by pmqa's " + row.kernel + ", got " +
                (d.kernel.empty() ? std::string("no kernel named") : d.kernel);
  }

  if (numeric && r.actual && r.actual->runnable()) {
    try {
      r.numeric = numeric(row, *r.actual);
    } catch (const std::exception& e) {
      r.numeric = NumericResult{false, std::string("the numeric check threw: ") + e.what()};
    }
    if (!r.numeric->pass) {
      const std::string text = "numeric check of " + r.actual->summary() + " failed: " + r.numeric->message;
      problem = problem.empty() ? text : problem + "; " + text;
    }
  }

  r.pass = problem.empty();
  if (r.pass) {
    r.message = r.label + ": ok, " + (r.actual ? r.actual->summary() : "error " + std::string(to_string(r.actual_error)));
    if (r.numeric && !r.numeric->message.empty()) r.message += "; numeric: " + r.numeric->message;
  } else {
    r.message = r.label + ": " + problem;
  }
  return r;
}

MatrixReport check_matrix(const ArchMatrix& matrix, const Policy& policy, const ArchTable& table,
                          const NumericHook& numeric) {
  MatrixReport report;
  report.policy = policy.name();
  report.source = matrix.source;
  report.results.reserve(matrix.rows.size());
  for (const auto& row : matrix.rows) report.results.push_back(check_row(row, policy, table, numeric));
  return report;
}

std::size_t MatrixReport::failures() const noexcept {
  std::size_t n = 0;
  for (const auto& r : results) n += r.pass ? 0 : 1;
  return n;
}

std::vector<const RowResult*> MatrixReport::failed() const {
  std::vector<const RowResult*> out;
  for (const auto& r : results)
    if (!r.pass) out.push_back(&r);
  return out;
}

std::string MatrixReport::summary() const {
  return "arch matrix " + source + " against policy \"" + policy + "\": " + std::to_string(results.size()) +
         " rows, " + std::to_string(failures()) + " failed";
}

std::string MatrixReport::failure_text() const {
  std::string out;
  for (const auto& r : results)
    if (!r.pass) out += r.message + "\n";
  return out;
}

std::vector<std::string> unused_fused_kernels(const Policy& policy, const ArchTable& table) {
  std::vector<std::string> out;
  for (const auto& info : table.entries()) {
    if (!info.fused_kernel_library) continue;
    Arch arch = parse_arch(info.target);
    std::string got;
    try {
      const Decision d = policy.select(arch, Context{});
      if (d.path == Path::fused) continue;
      got = d.summary();
    } catch (const std::exception& e) {
      got = std::string("an error: ") + e.what();
    }
    out.push_back(info.label() + ": " + *info.fused_kernel_library + " ships a fused kernel, policy \"" +
                  policy.name() + "\" decides " + got);
  }
  return out;
}

std::vector<std::string> missing_grid_rows(const ArchMatrix& matrix, const ArchTable& table) {
  std::vector<std::string> missing;
  for (const auto& info : table.entries())
    for (bool present : {true, false})
      for (std::int64_t bs : {1, 16, 64})
        for (std::int64_t nn : {1, 2}) {
          const Context ctx{present, bs, nn, 64};
          bool found = false;
          for (const auto& row : matrix.rows)
            if (row.arch == info.target && row.context == ctx) {
              found = true;
              break;
            }
          if (!found)
            missing.push_back(info.target + ", " + std::string(kernel_library(info.vendor)) +
                              (present ? " present" : " absent") + ", block_size " + std::to_string(bs) +
                              ", next_n " + std::to_string(nn));
        }
  return missing;
}

}  // namespace pmqa::dispatch
