// The gates a pmqa-run applies beside the numbers, judged from what a result file records, so that
// every reader of a run (pmqa-run itself, pmqa verify, the Python API and its pytest plugin) reaches
// the same verdict on it: a file whose run failed a gate fails wherever it is read.
//
// - The speed gate (pmqa-run --max-floor-ratio R): the median kernel time over the case's byte floor
//   (byte_floor.hpp) at the run's copy bandwidth must be at most R. Launch latency dominates small
//   cases, so a case whose floor is under --floor-min-mb is "not gated" (its ratio is still shown).
//   A kernel time the profiler did not see (a timed call with no device activity) cannot be judged
//   and fails, rather than passing at 0. A runner without a device clock records no kernel_ms: the
//   wall time is judged, and the gate says so.
// - The path gate (pmqa-run --expect-path P): the path the launched kernels mean (fused, two-stage,
//   eager, none; classified by the runner from the reviewed kernel-name table) must be P, and no
//   kernel may be one the table does not know.
//
// What a result file records (metadata; pmqa-run writes the inputs, then the speed gate's derived
// keys from judge_speed_gate, so the run and every later reader judge the same recorded numbers):
//   speed gate inputs   floor_max_ratio (R), floor_min_mb, copy_gbps (GB/s), bench_ms (median wall
//                       time), kernel_ms (median kernel time; absent: judged on wall time),
//                       kernel_unseen_calls ("N of M" timed calls the profiler saw nothing of)
//   speed gate derived  floor_bytes, floor_ms, floor_ratio ("unknown" when unseen), floor_ratio_wall,
//                       floor_gate ("at most R" or "not gated: ...")
//   path gate           expected_path, path, kernels_unknown (a JSON array of names),
//                       kernels_seen (the kernels in words: "name (library path) xN, ...")
// The floor is recomputed from the case, never read back: a recorded floor_bytes or floor_ms is the
// run's report, not an input.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "pmqa/cases/byte_floor.hpp"
#include "pmqa/cases/case_file.hpp"

namespace pmqa::cases {

// pmqa-run's defaults, chosen from the speed gate's own table on an H200 (README "On the GPU runner";
// bench/results/2026-12-02-h200-speed-gate.md): R = 7 sits near the geometric middle of the slowest
// fused kernel (5.5) and the fastest two-stage run (8.86); decode-shape floors are 69 to 79 MB.
inline constexpr double kDefaultMaxFloorRatio = 7.0;
inline constexpr double kDefaultFloorMinMb = 16.0;

enum class GateOutcome : std::uint8_t { passed, failed, not_gated };
std::string_view to_string(GateOutcome outcome) noexcept;  // "pass", "fail", "not gated"

struct GateVerdict {
  std::string gate;  // "speed" or "path"
  GateOutcome outcome = GateOutcome::passed;
  std::string message;  // the verdict in words (why it failed, or the figures it passed with)

  bool failed() const noexcept { return outcome == GateOutcome::failed; }
  std::string option() const;  // the pmqa-run option that set the gate: "--max-floor-ratio", "--expect-path"
};

struct SpeedGate {
  GateVerdict verdict;
  FloorBytes floor;
  std::map<std::string, std::string> derived;  // floor_bytes, floor_ms, floor_ratio, floor_ratio_wall, floor_gate
};

// The speed gate over the case (its shape, lengths and block table: q and kv_cache may be empty) under
// `contract`, from the recorded inputs in `metadata`. A missing or malformed input is a CaseFileError
// naming `source` and the key.
SpeedGate judge_speed_gate(const Case& c, Contract contract, const std::map<std::string, std::string>& metadata,
                           const std::string& source);

// The path gate: `expected` empty judges only the unknown kernels. `seen` describes the launches.
GateVerdict judge_path_gate(std::string_view expected, std::string_view path, const std::vector<std::string>& unknown,
                            std::string_view seen);

struct RunGates {
  std::vector<GateVerdict> gates;  // the gates the file records: speed, then path

  bool passed() const noexcept;
  std::vector<std::string> failed() const;  // the failed gates' names
  std::string summary() const;  // "speed gate failed: MESSAGE; path gate failed: MESSAGE" (failed ones only)
  // One line per gate, each after `indent`: "speed gate (--max-floor-ratio): fail: MESSAGE".
  std::string to_text(std::string_view indent = "  ") const;
  // What a failed verdict's report adds ("" when every gate passed): a heading, then every gate's line.
  std::string failure_text() const;
  nlohmann::json to_json() const;  // [{"gate", "option", "outcome", "passed", "message"}, ...]
};

// The gates a result file records, re-judged (the speed gate only where floor_max_ratio is recorded,
// the path gate only where expected_path is; a file from pmqa verify's own writers has neither).
// Malformed gate metadata is a CaseFileError naming `source` and the key.
RunGates judge_recorded_gates(const CaseFile& f, const std::string& source);

}  // namespace pmqa::cases
