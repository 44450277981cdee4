#include "pmqa/gauntlet/gauntlet.hpp"

#include <algorithm>
#include <chrono>
#include <sstream>

#include <nlohmann/json.hpp>

#include "pmqa/checks/property.hpp"

namespace pmqa::gauntlet {
namespace {

void append(std::vector<Finding>& to, std::vector<Finding> from) {
  for (auto& f : from) to.push_back(std::move(f));
}

// The ordinary kernel checks, on the mutant's executors.
std::vector<Finding> kernel_checks(const KernelFactory& make, bool gigabytes, const GauntletOptions& o) {
  const checks::JudgeOptions judge{.tolerance = o.tolerance, .checker = o.judge};
  std::vector<Finding> out;
  checks::PropertyOptions po;
  po.seed = o.seed;
  po.cases = o.property_cases;
  po.per_case.judge = judge;
  append(out, checks::kernel_property(make, po));
  append(out, checks::quick_suite(make, judge));
  out.push_back(checks::relaunch(make));
  if (gigabytes) out.push_back(checks::output_past_2g(make, judge));
  return out;
}

// "3 generated cases", "1 matrix row".
std::string count_text(std::int64_t n, const std::string& unit) {
  std::string u = unit;
  if (n == 1 && !u.empty() && u.back() == 's') u.pop_back();
  return std::to_string(n) + " " + u;
}

std::string check_label(const Finding& f) { return f.config.empty() ? f.check : f.check + " [" + f.config + "]"; }

// Rows of cells as aligned columns, the first row a header ruled off below.
std::string columns_text(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::ostringstream out;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    std::string line;
    for (std::size_t i = 0; i < rows[k].size(); ++i) {
      line += rows[k][i];
      if (i + 1 < rows[k].size()) line += std::string(width[i] - rows[k][i].size() + 2, ' ');
    }
    out << line << "\n";
    if (k == 0) {
      std::string rule;
      for (std::size_t i = 0; i < width.size(); ++i) rule += std::string(width[i], '-') + (i + 1 < width.size() ? "  " : "");
      out << rule << "\n";
    }
  }
  return out.str();
}

}  // namespace

bool MutantResult::survived() const noexcept {
  if (not_run) return false;
  return std::none_of(findings.begin(), findings.end(), [](const Finding& f) { return f.ordinary && f.caught; });
}

const Finding* MutantResult::first_catch() const noexcept {
  const Finding* best = nullptr;
  for (const auto& f : findings)
    if (f.ordinary && f.caught && (!best || f.first_detection < best->first_detection)) best = &f;
  return best;
}

MutantResult run_mutant(const Mutant& m, const GauntletOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  MutantResult r;
  r.mutant = &m;
  switch (m.kind) {
    case MutantKind::kernel:
      r.findings = kernel_checks(m.kernel, m.needs_gigabytes && o.gigabyte_checks, o);
      r.not_run = m.needs_gigabytes && !o.gigabyte_checks && std::none_of(r.findings.begin(), r.findings.end(),
                                                                         [](const Finding& f) { return f.caught; });
      break;
    case MutantKind::dispatch: r.findings.push_back(checks::arch_matrix(m.policy())); break;
    case MutantKind::checker: r.findings.push_back(checks::planted_corpus(m.checker, o.tolerance)); break;
    case MutantKind::ci: r.findings.push_back(checks::device_arch(m.ci)); break;
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::vector<Finding> run_baseline(const GauntletOptions& o) {
  std::vector<Finding> out = kernel_checks(checks::host_factory(), o.gigabyte_checks, o);
  out.push_back(checks::arch_matrix(dispatch::default_policy()));
  out.push_back(checks::planted_corpus(o.judge ? o.judge : checks::pmqa_checker(), o.tolerance));
  out.push_back(checks::device_arch(CiJob{"gfx950", Path::fused, "gfx950:sramecc+:xnack-"}));
  return out;
}

std::optional<std::int64_t> cases_to_catch_on(const MutantResult& r, KernelId kernel) {
  std::optional<std::int64_t> best;
  for (const auto& f : r.findings)
    if (f.ordinary && f.caught && f.caught_on == to_string(kernel) && (!best || f.first_detection < *best)) best = f.first_detection;
  return best;
}

std::string kernel_table_text(const std::vector<MutantResult>& results) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head{"class", "mutant"};
  for (const KernelInfo& k : kKernelTable) head.emplace_back(k.name);
  rows.push_back(std::move(head));
  for (const auto& r : results) {
    if (r.mutant->kind != MutantKind::kernel) continue;
    std::vector<std::string> row{std::to_string(r.mutant->bug_class), r.mutant->name};
    for (const KernelInfo& k : kKernelTable) {
      const auto& skip = r.mutant->not_planted_in;
      const auto n = cases_to_catch_on(r, k.id);
      row.push_back(n                                                        ? std::to_string(*n)
                    : r.not_run                                              ? "not run"
                    : std::find(skip.begin(), skip.end(), k.id) != skip.end() ? "n/a"
                                                                             : "-");
    }
    rows.push_back(std::move(row));
  }
  return columns_text(rows);
}

std::string table_text(const std::vector<MutantResult>& results) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"class", "mutant", "caught by", "cases to first detection", "also caught by"});
  for (const auto& r : results) {
    std::vector<std::string> row{std::to_string(r.mutant->bug_class), r.mutant->name};
    if (const Finding* f = r.first_catch()) {
      row.push_back(check_label(*f));
      row.push_back(count_text(f->first_detection, f->unit));
      // Every other ordinary check that caught it, with its fewest cases over its configurations.
      std::vector<const Finding*> also;
      for (const auto& g : r.findings) {
        if (!g.ordinary || !g.caught || g.check == f->check) continue;
        auto same = std::find_if(also.begin(), also.end(), [&](const Finding* a) { return a->check == g.check; });
        if (same == also.end()) also.push_back(&g);
        else if (g.first_detection < (*same)->first_detection) *same = &g;
      }
      std::string text;
      for (const Finding* a : also)
        text += (text.empty() ? "" : ", ") + a->check + " (" + count_text(a->first_detection, a->unit) + ")";
      row.push_back(text.empty() ? "-" : text);
    } else if (r.not_run) {
      row.push_back("not run (--no-gigabytes)");
      row.push_back("-");
      row.push_back("-");
    } else {
      std::string proposed;
      for (const auto& g : r.findings)
        if (!g.ordinary && g.caught) proposed = g.check + ": " + count_text(g.first_detection, g.unit);
      row.push_back("SURVIVED");
      row.push_back("-");
      row.push_back(proposed.empty() ? "-" : "(proposed check " + proposed + ")");
    }
    rows.push_back(std::move(row));
  }
  return columns_text(rows);
}

nlohmann::json to_json(const Finding& f) {
  return {{"check", f.check},
          {"source", f.source},
          {"config", f.config},
          {"ordinary", f.ordinary},
          {"caught", f.caught},
          {"cases_run", f.cases_run},
          {"first_detection", f.caught ? nlohmann::json(f.first_detection) : nlohmann::json(nullptr)},
          {"unit", f.unit},
          {"evidence", f.evidence},
          {"seconds", f.seconds},
          {"first_choice", f.first_choice ? nlohmann::json(std::string(to_string(*f.first_choice))) : nlohmann::json(nullptr)},
          {"kernels", f.kernels},
          {"caught_on", f.caught_on}};
}

nlohmann::json to_json(const MutantResult& r) {
  const Mutant& m = *r.mutant;
  nlohmann::json j = {{"class", m.bug_class},
                      {"mutant", m.name},
                      {"kind", to_string(m.kind)},
                      {"bug", m.bug},
                      {"seen_in", m.seen_in},
                      {"planted", m.planted},
                      {"survived", r.survived()},
                      {"seconds", r.seconds}};
  if (const Finding* f = r.first_catch()) {
    j["caught_by"] = check_label(*f);
    j["cases_to_first_detection"] = f->first_detection;
    j["unit"] = f->unit;
  } else {
    j["caught_by"] = nullptr;
    j["cases_to_first_detection"] = nullptr;
  }
  if (m.kind == MutantKind::kernel) {
    auto& by_kernel = j["cases_to_first_detection_by_kernel"] = nlohmann::json::object();
    for (const KernelInfo& k : kKernelTable) {
      const auto n = cases_to_catch_on(r, k.id);
      by_kernel[std::string(k.name)] = n ? nlohmann::json(*n) : nlohmann::json(nullptr);
    }
  }
  auto& list = j["findings"] = nlohmann::json::array();
  for (const auto& f : r.findings) list.push_back(to_json(f));
  return j;
}

nlohmann::json to_json(const std::vector<MutantResult>& results, const std::vector<Finding>& baseline,
                       const GauntletOptions& o) {
  nlohmann::json j;
  j["seed"] = o.seed;
  j["property_cases"] = o.property_cases;
  j["gigabyte_checks"] = o.gigabyte_checks;
  j["tolerance"] = o.tolerance ? o.tolerance->name : "each check's own";
  auto& ms = j["mutants"] = nlohmann::json::array();
  auto& survivors = j["survivors"] = nlohmann::json::array();
  for (const auto& r : results) {
    ms.push_back(to_json(r));
    if (r.survived()) survivors.push_back(r.mutant->name);
  }
  auto& b = j["baseline"] = nlohmann::json::array();
  bool false_alarm = false;
  for (const auto& f : baseline) {
    b.push_back(to_json(f));
    false_alarm = false_alarm || f.caught;
  }
  j["false_alarms"] = false_alarm;
  j["passed"] = survivors.empty() && !false_alarm;
  return j;
}

}  // namespace pmqa::gauntlet
