// pmqa matrix: the expected-decision matrix (fixtures/arch_matrix.json, compiled in; --matrix FILE
// for another) against the dispatch policy, one line per row, every mismatch spelled out.
//   pmqa matrix [--json] [--matrix FILE] [--failures-only] [--notes] [--grid] [--rocm-fused T1,T2]
// The row list ends with the arch x (library, block size, next_n) grid (matrix_grid.hpp).
// Exit 0 when every row matches, 1 on any mismatch, 2 when the matrix file is unusable.
// Until cli/CMakeLists.txt links pmqa_dispatch the dispatch headers are not on the include path;
// the command then says so (exit 2) instead of breaking the build of the other commands.
#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "matrix_grid.hpp"
#include "rocm_fused_option.hpp"
#include "pmqa/dispatch/dispatch.hpp"
#include "pmqa/dispatch/json.hpp"

namespace pmqa::cli {
namespace {

namespace pd = pmqa::dispatch;

struct MatrixOptions {
  std::string matrix_file;
  bool json = false;
  bool failures_only = false;
  bool notes = false;
  bool grid_only = false;
  RocmFusedOption rocm_fused;
};

std::string arch_cell(const pd::MatrixRow& row) { return row.arch.empty() ? std::string("\"\"") : "\"" + row.arch + "\""; }

std::string actual_cell(const pd::RowResult& r) {
  if (r.actual) return r.actual->summary();
  return "error " + std::string(pd::to_string(r.actual_error));
}

int run_matrix(const MatrixOptions& o) {
  pd::ArchMatrix loaded;
  const pd::ArchMatrix* matrix = nullptr;
  try {
    if (o.matrix_file.empty()) {
      matrix = &pd::ArchMatrix::builtin();
    } else {
      loaded = pd::ArchMatrix::load(o.matrix_file);
      matrix = &loaded;
    }
  } catch (const pd::MatrixError& e) {
    std::fprintf(stderr, "pmqa matrix: %s\n", e.what());
    return kExitInvalid;
  }

  const pd::Policy& policy = o.rocm_fused.policy();

  const pd::MatrixReport report = pd::check_matrix(*matrix, policy);
  const std::vector<std::string> unused = pd::unused_fused_kernels(policy);
  const std::vector<std::string> missing = pd::missing_grid_rows(*matrix);

  if (o.json) {
    nlohmann::json j = report;
    j["unused_fused_kernels"] = unused;
    j["missing_grid_rows"] = missing;
    std::cout << j.dump(2) << "\n";
  } else {
    std::ostringstream out;
    std::size_t arch_w = 4, exp_w = 8;
    for (const auto& r : report.results) {
      arch_w = std::max(arch_w, arch_cell(r.row).size());
      exp_w = std::max(exp_w, r.row.expected_text().size());
    }
    out << report.summary() << "\n";
    if (o.grid_only) {
      out << "\n" << matrix_grid(report) << "\n" << (report.passed() ? "PASS: " : "FAIL: ") << report.summary() << "\n";
      std::cout << out.str();
      return report.passed() ? kExitPass : kExitMismatch;
    }
    out << std::left << std::setw(5) << "row" << std::setw(6) << "ok" << std::setw(static_cast<int>(arch_w) + 2)
        << "arch" << std::setw(9) << "kernels" << std::setw(7) << "block" << std::setw(7) << "next_n" << std::setw(7)
        << "heads" << std::setw(static_cast<int>(exp_w) + 2) << "expected"
        << "actual\n";
    for (const auto& r : report.results) {
      if (o.failures_only && r.pass) continue;
      const auto& c = r.row.context;
      out << std::left << std::setw(5) << r.row.index << std::setw(6) << (r.pass ? "ok" : "FAIL")
          << std::setw(static_cast<int>(arch_w) + 2) << arch_cell(r.row) << std::setw(9)
          << (c.kernels_present ? "present" : "absent") << std::setw(7) << c.block_size << std::setw(7) << c.next_n
          << std::setw(7) << c.heads << std::setw(static_cast<int>(exp_w) + 2) << r.row.expected_text()
          << actual_cell(r) << "\n";
      if (o.notes && !r.row.note.empty()) out << "       note: " << r.row.note << "\n";
    }
    if (!report.passed()) {
      out << "\nmismatches (" << report.failures() << "):\n";
      for (const auto* r : report.failed()) out << "  row " << r->row.index << ": " << r->message << "\n";
    }
    if (!missing.empty()) {
      out << "\ngrid rows the matrix lacks (" << missing.size() << "):\n";
      for (const auto& m : missing) out << "  " << m << "\n";
    }
    if (!unused.empty()) {
      out << "\nobservations: kernel library ships a fused kernel the policy does not use:\n";
      for (const auto& u : unused) out << "  " << u << "\n";
    }
    out << "\n" << matrix_grid(report);
    out << "\n" << (report.passed() ? "PASS: " : "FAIL: ") << report.summary() << "\n";
    std::cout << out.str();
  }
  return report.passed() ? kExitPass : kExitMismatch;
}

}  // namespace

Command add_matrix_command(CLI::App& parent) {
  auto o = std::make_shared<MatrixOptions>();
  Command cmd;
  cmd.app = parent.add_subcommand("matrix", "Check the dispatch policy against the expected-decision matrix (exit 1 on any mismatch)");
  cmd.app->add_option("--matrix", o->matrix_file, "Matrix file (default: fixtures/arch_matrix.json as built in)");
  cmd.app->add_flag("--json", o->json, "Print the report as JSON");
  cmd.app->add_flag("--failures-only", o->failures_only, "List only the rows that do not match");
  cmd.app->add_flag("--notes", o->notes, "Print each row's reviewer note under it");
  cmd.app->add_flag("--grid", o->grid_only, "Print only the arch x (library, block size, next_n) grid and the verdict");
  o->rocm_fused.add_to(*cmd.app);
  cmd.run = [o] { return run_matrix(*o); };
  return cmd;
}

}  // namespace pmqa::cli
