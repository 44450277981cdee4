#include "verify_case.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "pmqa/fixtures/case_file.hpp"
#include "pmqa/reference/compare.hpp"
#include "table.hpp"

namespace pmqa::cli {
namespace fs = std::filesystem;
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// JUnit groups results by folder: a CI run over several folders (one per kernel, say) reads as
// one testsuite each.
std::string suite_of(const fs::path& file) {
  const fs::path parent = file.parent_path();
  return parent.empty() ? "." : parent.string();
}

// The kernel's time as the runner stored it ("bench_ms" metadata). A value that is not a number
// is shown as it is rather than dropped, so a runner's bug stays visible.
std::string kernel_time(const CaseFile& f) {
  const auto it = f.extra.find("bench_ms");
  if (it == f.extra.end()) return "";
  const std::string v = it->second.substr(0, 32);
  char* end = nullptr;
  const double ms = std::strtod(v.c_str(), &end);
  if (!v.empty() && end == v.c_str() + v.size() && std::isfinite(ms)) return v + " ms";
  return "bench_ms \"" + v + "\"";
}

// The flag wins over the file's own "tolerance" metadata, which wins over the fp32 default.
Tolerance pick_tolerance(const CaseFile& f, const fs::path& file, const VerifyOptions& o) {
  if (o.tolerance) return Tolerance::named(*o.tolerance);  // the command checked the name already
  const auto it = f.extra.find("tolerance");
  if (it == f.extra.end()) return Tolerance::fp32();
  try {
    return Tolerance::named(it->second);
  } catch (const std::invalid_argument& e) {
    throw CaseFileError(file.string(), "__metadata__.tolerance", e.what());
  }
}

// The file's logits in an OutputBuffer. A file holds exactly [rows, max_model_len] cells and no
// guard cells (a write outside a row cannot be seen once the runner has copied the rows out), so
// the buffer has none either. Cells are copied bit for bit: a runner that pre-filled its output
// with pmqa's sentinel NaN (0x7FF0CAFE) and stored it gets the "every valid cell written" check.
OutputBuffer output_from_file(const CaseFile& f) {
  OutputBuffer out(f.c.rows(), f.c.max_model_len, /*row_pad=*/0, /*guard=*/0);
  if (!f.logits->empty()) std::memcpy(out.data(), f.logits->data(), f.logits->size() * sizeof(float));
  return out;
}

std::string verdict_line(const char* verdict, const std::string& time, const CaseFile& f, const Report& rep,
                         const fs::path& file) {
  std::string line = verdict;
  if (!time.empty()) line += " " + time;
  char buf[512];
  std::snprintf(buf, sizeof buf, "  %-26s %-34s err/bound %-8s calc_diff %-9s", f.c.name.c_str(),
                shape_summary(f.c).c_str(), format_g(rep.worst_bound_ratio).c_str(),
                rep.calc_diff ? format_g(*rep.calc_diff).c_str() : "n/a");
  line += buf;
  if (!rep.passed()) line += " " + std::to_string(rep.failures()) + " failing cell(s)";
  line += "  " + file.string();
  return line;
}

}  // namespace

std::string shell_quote(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                             "0123456789_./-+=:,@%") == std::string::npos;
  if (plain) return word;
  std::string out = "'";
  for (char ch : word) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

Verdict invalid_input(const fs::path& file, const std::string& message) {
  Verdict v;
  v.status = kExitInvalid;
  v.line = "ERROR " + message;
  v.result = {suite_of(file), file.filename().string(), false, false, true, 0, message, message,
              {{"file", file.string()}, {"error", message}}};
  return v;
}

Verdict verify_case_file(const fs::path& file, const VerifyOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  try {
    const CaseFile f = read_case_file(file);  // strict: structure, metadata, then validate()
    if (!f.logits)
      throw CaseFileError(file.string(), "tensor logits",
                          "missing: the file holds no kernel output to verify (store it as logits, F32 [B*N, max_model_len])");
    const Tolerance tolerance = pick_tolerance(f, file, options);
    const Contract contract = options.contract.value_or(f.contract);
    const Reference oracle = compute_reference(f.c, {.precision = Precision::fp64, .with_magnitude = true});
    Report rep = compare(f.c, oracle, output_from_file(f), {.contract = contract, .tolerance = tolerance});
    rep.reproduce = "pmqa verify " + shell_quote(file.string()) + " --contract " + std::string(to_string(contract)) +
                    " --tolerance " + tolerance.name;

    Verdict v;
    const bool ok = rep.passed();
    v.status = ok ? kExitPass : kExitMismatch;
    v.line = verdict_line(ok ? "PASS" : "FAIL", kernel_time(f), f, rep, file);
    if (!ok) v.report = rep.to_text();
    nlohmann::json j = rep.to_json();
    j["file"] = file.string();
    if (const auto it = f.extra.find("bench_ms"); it != f.extra.end()) j["bench_ms"] = it->second;
    v.result = {suite_of(file), file.filename().string(), ok, false, false, seconds_since(t0),
                ok ? "worst error/bound " + format_g(rep.worst_bound_ratio)
                   : std::to_string(rep.failures()) + " failing cell(s) under contract " +
                         std::string(to_string(contract)) + ", tolerance " + tolerance.name,
                rep.to_text(), std::move(j)};
    return v;
  } catch (const CaseFileError& e) {
    return invalid_input(file, e.what());
  } catch (const CaseError& e) {
    return invalid_input(file, file.string() + ": case: " + e.what());
  } catch (const std::bad_alloc&) {
    return invalid_input(file, file.string() + ": file: not enough memory to verify it");
  } catch (const std::exception& e) {
    return invalid_input(file, file.string() + ": " + e.what());
  }
}

}  // namespace pmqa::cli
