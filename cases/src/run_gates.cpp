#include "pmqa/cases/run_gates.hpp"

#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>

namespace pmqa::cases {
namespace {

using Metadata = std::map<std::string, std::string>;

// printf into a string: the figures are formatted as pmqa-run's Python formatted them (%g is the same
// in both), so a message reads the same from the run and from a reader of its files.
std::string format(const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

const std::string* find(const Metadata& m, const char* key) {
  const auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}

[[noreturn]] void bad(const std::string& source, const char* key, const std::string& problem) {
  throw CaseFileError(source, std::string("__metadata__.") + key, problem);
}

// A recorded number: the whole text a finite decimal (what the runner wrote with %g or repr).
double number_in(const std::string& text, const std::string& source, const char* key) {
  char* end = nullptr;
  const double x = text.empty() ? 0 : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(x))
    bad(source, key, "\"" + text.substr(0, 40) + "\" is not a finite number (the speed gate reads it)");
  return x;
}

std::optional<double> optional_number(const Metadata& m, const char* key, const std::string& source) {
  const std::string* v = find(m, key);
  if (!v) return std::nullopt;
  return number_in(*v, source, key);
}

double required_number(const Metadata& m, const char* key, const std::string& source) {
  const std::string* v = find(m, key);
  if (!v) bad(source, key, "missing: the speed gate is recorded (floor_max_ratio) but not this input of it");
  return number_in(*v, source, key);
}

// "N of M" timed calls the profiler recorded no device activity in.
std::pair<long long, long long> unseen_calls(const Metadata& m, const std::string& source) {
  const std::string* v = find(m, "kernel_unseen_calls");
  if (!v) return {0, 0};
  long long n = -1, of = -1;
  int used = 0;
  if (std::sscanf(v->c_str(), "%lld of %lld%n", &n, &of, &used) != 2 || used != static_cast<int>(v->size()) || n < 0 ||
      of < n)
    bad(source, "kernel_unseen_calls", "\"" + v->substr(0, 40) + "\" is not \"N of M\" timed calls");
  return {n, of};
}

bool one_of(std::string_view x, std::initializer_list<std::string_view> names) {
  for (auto n : names)
    if (x == n) return true;
  return false;
}

}  // namespace

std::string_view to_string(GateOutcome outcome) noexcept {
  switch (outcome) {
    case GateOutcome::passed: return "pass";
    case GateOutcome::failed: return "fail";
    case GateOutcome::not_gated: return "not gated";
  }
  return "?";
}

std::string GateVerdict::option() const { return gate == "speed" ? "--max-floor-ratio" : "--expect-path"; }

SpeedGate judge_speed_gate(const Case& c, Contract contract, const Metadata& metadata, const std::string& source) {
  const double max_ratio = required_number(metadata, "floor_max_ratio", source);
  if (!(max_ratio > 0)) bad(source, "floor_max_ratio", "must be > 0");
  const double min_mb = required_number(metadata, "floor_min_mb", source);
  const double gbps = required_number(metadata, "copy_gbps", source);
  if (!(gbps > 0)) bad(source, "copy_gbps", "must be > 0 (GB/s)");
  const double wall_ms = required_number(metadata, "bench_ms", source);
  const std::optional<double> kernel_ms = optional_number(metadata, "kernel_ms", source);
  const auto [unseen, timed] = kernel_ms ? unseen_calls(metadata, source) : std::pair<long long, long long>{0, 0};

  SpeedGate g;
  g.verdict.gate = "speed";
  g.floor = floor_bytes(c, contract);
  const std::int64_t total = g.floor.total();
  const double bw = gbps * 1e9;
  const double fl = floor_ms(total, bw);
  auto over = [&](double ms) { return fl > 0 ? ms / fl : std::numeric_limits<double>::infinity(); };
  const double measured = kernel_ms ? *kernel_ms : wall_ms;
  const bool gated = static_cast<double>(total) >= min_mb * 1e6;
  const char* what = kernel_ms ? "kernel time" : "wall time";

  g.derived["floor_bytes"] = std::to_string(total);
  g.derived["floor_ms"] = format("%.6g", fl);
  g.derived["floor_ratio"] = format("%.4g", over(measured));
  g.derived["floor_ratio_wall"] = format("%.4g", over(wall_ms));
  g.derived["floor_gate"] = gated ? format("at most %g", max_ratio)
                                  : format("not gated: floor %.3g MB below --floor-min-mb %g",
                                           static_cast<double>(total) / 1e6, min_mb);
  if (!gated) {
    g.verdict.outcome = GateOutcome::not_gated;
    g.verdict.message = g.derived["floor_gate"] + format(" (x%.4g the floor)", over(measured));
    return g;
  }
  if (kernel_ms && unseen > 0) {
    // A time of zero would pass any R: an op that ran nothing the profiler sees is not judged fast.
    g.derived["floor_ratio"] = "unknown";
    g.verdict.outcome = GateOutcome::failed;
    g.verdict.message = format(
        "--max-floor-ratio: the profiler recorded no device activity in %lld of %lld timed call(s), so their kernel "
        "time is unknown and the gate cannot judge it (an op that ran nothing on this device, or a profiler that "
        "records nothing here); wall time %.4g ms, %.3gx the byte floor",
        unseen, timed, wall_ms, over(wall_ms));
    return g;
  }
  if (over(measured) > max_ratio) {
    g.verdict.outcome = GateOutcome::failed;
    g.verdict.message = format("%s %.4g ms is %.3gx the byte floor %.4g ms (", what, measured, over(measured), fl) +
                        g.floor.describe() +
                        format(" at the run's copy bandwidth, %.4g GB/s), above --max-floor-ratio %g: a slow path "
                               "(wall time %.4g ms, x%.3g)",
                               gbps, max_ratio, wall_ms, over(wall_ms));
    return g;
  }
  g.verdict.outcome = GateOutcome::passed;
  g.verdict.message =
      format("%s %.4g ms is %.3gx the byte floor %.4g ms, at most %g", what, measured, over(measured), fl, max_ratio);
  return g;
}

GateVerdict judge_path_gate(std::string_view expected, std::string_view path, const std::vector<std::string>& unknown,
                            std::string_view seen) {
  GateVerdict v;
  v.gate = "path";
  if (!unknown.empty()) {
    std::string shown;
    for (std::size_t i = 0; i < unknown.size() && i < 4; ++i) shown += (i ? ", " : "") + unknown[i];
    if (unknown.size() > 4) shown += " and " + std::to_string(unknown.size() - 4) + " more";
    v.outcome = GateOutcome::failed;
    v.message = "the op launched kernel(s) the kernel-name table does not know: " + shown + " (kernels seen: " +
                std::string(seen) + "); review them and add them with --kernel-names FILE";
  } else if (!expected.empty() && path != expected) {
    v.outcome = GateOutcome::failed;
    v.message = "expected the " + std::string(expected) + " path, the op took the " + std::string(path) +
                " path: it launched " + std::string(seen);
  } else {
    v.outcome = GateOutcome::passed;
    v.message = expected.empty() ? "every kernel known: " + std::string(seen)
                                 : "the " + std::string(path) + " path, as expected: " + std::string(seen);
  }
  return v;
}

bool RunGates::passed() const noexcept {
  for (const auto& g : gates)
    if (g.failed()) return false;
  return true;
}

std::vector<std::string> RunGates::failed() const {
  std::vector<std::string> out;
  for (const auto& g : gates)
    if (g.failed()) out.push_back(g.gate);
  return out;
}

std::string RunGates::summary() const {
  std::string out;
  for (const auto& g : gates)
    if (g.failed()) out += (out.empty() ? "" : "; ") + g.gate + " gate failed: " + g.message;
  return out;
}

std::string RunGates::to_text(std::string_view indent) const {
  std::string out;
  for (const auto& g : gates)
    out += std::string(indent) + g.gate + " gate (" + g.option() + "): " + std::string(to_string(g.outcome)) + ": " +
           g.message + "\n";
  return out;
}

std::string RunGates::failure_text() const {
  return passed() ? "" : "  the run's gates, re-judged from the file:\n" + to_text("    ");
}

nlohmann::json RunGates::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& g : gates)
    list.push_back({{"gate", g.gate}, {"option", g.option()}, {"outcome", std::string(to_string(g.outcome))},
                    {"passed", !g.failed()}, {"message", g.message}});
  return list;
}

RunGates judge_recorded_gates(const CaseFile& f, const std::string& source) {
  RunGates out;
  if (f.extra.count("floor_max_ratio")) out.gates.push_back(judge_speed_gate(f.c, f.contract, f.extra, source).verdict);
  if (const std::string* expected = find(f.extra, "expected_path")) {
    if (!one_of(*expected, {"fused", "two-stage", "eager"}))
      bad(source, "expected_path", "\"" + expected->substr(0, 40) + "\" is not fused, two-stage or eager");
    const std::string* path = find(f.extra, "path");
    if (!path) bad(source, "path", "missing: the path gate is recorded (expected_path) but not the path taken");
    if (!one_of(*path, {"fused", "two-stage", "eager", "none"}))
      bad(source, "path", "\"" + path->substr(0, 40) + "\" is not fused, two-stage, eager or none");
    std::vector<std::string> unknown;
    if (const std::string* names = find(f.extra, "kernels_unknown")) {
      const auto j = nlohmann::json::parse(*names, nullptr, /*allow_exceptions=*/false);
      if (j.is_discarded() || !j.is_array()) bad(source, "kernels_unknown", "is not a JSON array of kernel names");
      for (const auto& n : j) {
        if (!n.is_string()) bad(source, "kernels_unknown", "is not a JSON array of kernel names");
        unknown.push_back(n.get<std::string>());
      }
    }
    const std::string* seen = find(f.extra, "kernels_seen");
    const std::string* kernels = find(f.extra, "kernels");
    out.gates.push_back(judge_path_gate(*expected, *path, unknown, seen ? *seen : kernels ? *kernels : "no kernel"));
  }
  return out;
}

}  // namespace pmqa::cases
