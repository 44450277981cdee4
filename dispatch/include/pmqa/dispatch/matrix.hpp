// The expected-decision matrix (fixtures/arch_matrix.json): a reviewed data file holding, for each
// arch x kernels present/absent x block_size x next_n (and a few negative rows), the decision the
// policy must make. check_matrix runs a policy over it and gives one result per row, with a message
// a reviewer understands at a glance:
//   gfx950 (MI350X/MI355X), AITER present, block_size 64, next_n 1: expected fused, e4m3fn, SHUFFLE,
//   got two-stage, e4m3fn, NORMAL (reason: ...)
// The numeric half (run the decided path, compare with the reference) plugs in through NumericHook.
// The file's optional "engine_rows" (EngineRow) are an engine's own decisions, read and validated
// here and checked against the engine's code by python/src/pmqa/probe, never against pmqa's policy.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pmqa/dispatch/arch_table.hpp"
#include "pmqa/dispatch/policy.hpp"

namespace pmqa::dispatch {

// The error a row expects instead of a decision.
enum class ExpectedError : unsigned char {
  none,
  unknown_arch,    // well-formed, but not in the arch table (UnknownArchError)
  malformed_arch,  // not an arch name at all (ArchParseError)
  other,           // any other exception (a result only; no row can expect it)
};
std::string_view to_string(ExpectedError error) noexcept;  // "none", "unknown-arch", "malformed-arch", "other"

struct MatrixRow {
  std::size_t index = 0;  // position in the file's "rows" (0-based)
  std::string arch;
  Context context;
  ExpectedError error = ExpectedError::none;
  std::optional<Path> path;        // set unless an error is expected
  std::optional<Fp8Format> fp8;    // set when path is runnable
  std::optional<KvLayout> layout;  // set when path is runnable
  std::string reason_contains;     // optional: the decision's reason must contain this text
  std::string kernel;              // optional, fused rows: pmqa's kernel the decision must name
  std::string note;

  // "gfx950 (MI350X/MI355X), AITER present, block_size 64, next_n 1" (heads only when not 64).
  std::string describe(const ArchTable& table = ArchTable::builtin()) const;
  std::string expected_text() const;  // "fused, e4m3fn, SHUFFLE" / "unsupported" / "error unknown-arch"
};

// A row of the file's "engine_rows": what one inference engine's own dispatch code decides for a
// context the engine has and pmqa's policy does not model (the engine's switch for its kernel library,
// keyword arguments of its entry point such as vLLM's compress_ratio), or, with replaces_policy_row,
// where the engine knowingly differs from the spec's policy for a context of "rows". pmqa's policy is
// never checked against these rows (it models the spec's dispatch, not an engine's switches); the
// engine's own code is, by python/src/pmqa/probe. The loader validates them as strictly as "rows".
struct EngineRow {
  std::size_t index = 0;  // position in the file's "engine_rows" (0-based)
  std::string engine;     // the probe adapter's name, e.g. "vllm"
  std::string arch;
  Context context;
  bool kernels_enabled = true;  // false: the library is installed but the engine's switch for it is off
  // Keyword arguments the engine's entry is called with, each value as compact JSON ("4", "true").
  std::map<std::string, std::string> entry_kwargs;
  Path path = Path::unsupported;
  std::optional<Fp8Format> fp8;    // set when path is runnable
  std::optional<KvLayout> layout;  // set when path is runnable
  std::string entry;               // optional: the engine or library entry that must run (adapter's name)
  bool replaces_policy_row = false;  // the row states the engine's decision for a context of "rows"
  std::string reason;                // why the engine decides this; never empty
  std::string note;

  // "vllm: gfx942 (MI300X/MI300A/MI325X), AITER present, switched off, block_size 64, next_n 1, compress_ratio=4"
  std::string describe(const ArchTable& table = ArchTable::builtin()) const;
};

// A matrix file that does not hold together: names the source, the row and the field.
class MatrixError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ArchMatrix {
  std::string source;
  std::string description;
  std::vector<MatrixRow> rows;
  std::vector<EngineRow> engine_rows;  // optional section; empty when the file has none

  // Parses and validates (strict: unknown fields, a runnable path without fp8/layout, duplicate rows
  // are errors; an engine row that coincides with a row of "rows" must say replaces_policy_row, and
  // one that says it must coincide). Throws MatrixError.
  static ArchMatrix parse(std::string_view json_text, std::string_view source);
  static ArchMatrix load(const std::string& path);  // reads the file, then parse; throws MatrixError
  // fixtures/arch_matrix.json as it was when the library was built.
  static const ArchMatrix& builtin();
  static std::string_view builtin_json() noexcept;
  static std::string_view builtin_source() noexcept;
};

// The numeric half of a row, reported by the hook.
struct NumericResult {
  bool pass = true;
  std::string message;
};
// Called for every row whose actual decision is runnable, with the row and that decision. A hook
// that throws fails the row with the exception's message.
using NumericHook = std::function<NumericResult(const MatrixRow&, const Decision&)>;

struct RowResult {
  MatrixRow row;
  std::string label;  // row.describe()
  bool pass = false;
  std::optional<Decision> actual;                 // the policy's decision, when it made one
  ExpectedError actual_error = ExpectedError::none;
  std::string actual_error_text;                  // what() of the error thrown, when one was
  std::optional<NumericResult> numeric;           // when the hook ran
  std::string message;  // "<label>: ok, fused, e4m3fn, SHUFFLE" or "<label>: expected ..., got ..."
};

struct MatrixReport {
  std::string policy;
  std::string source;
  std::vector<RowResult> results;

  std::size_t failures() const noexcept;
  bool passed() const noexcept { return failures() == 0; }
  std::vector<const RowResult*> failed() const;
  std::string summary() const;       // "arch matrix <source> against policy <name>: 170 rows, 6 failed"
  std::string failure_text() const;  // the failing rows' messages, one per line
};

RowResult check_row(const MatrixRow& row, const Policy& policy, const ArchTable& table = ArchTable::builtin(),
                    const NumericHook& numeric = {});
MatrixReport check_matrix(const ArchMatrix& matrix, const Policy& policy,
                          const ArchTable& table = ArchTable::builtin(), const NumericHook& numeric = {});

// Targets whose kernel library ships a fused kernel (ArchInfo::fused_kernel_library) but for which
// `policy` does not choose the fused path (kernels present, block_size 64, next_n 1, heads 64), as
// "gfx1250 (MI450 ...): AITER ships a fused kernel, policy \"default\" decides two-stage". These are
// candidates for the gfx950 bug class (a guard too narrow); the spec's policy has one: gfx1250.
std::vector<std::string> unused_fused_kernels(const Policy& policy, const ArchTable& table = ArchTable::builtin());

// Rows of `table` x kernels present/absent x block_size {1, 16, 64} x next_n {1, 2} (heads 64) that
// the matrix has no row for, as "gfx1250, AITER absent, block_size 16, next_n 2": a target added
// to the table without expected rows shows up here.
std::vector<std::string> missing_grid_rows(const ArchMatrix& matrix, const ArchTable& table = ArchTable::builtin());

}  // namespace pmqa::dispatch
