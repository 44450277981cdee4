#include "matrix_grid.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <tuple>
#include <vector>

namespace pmqa::cli {
namespace {

namespace pd = pmqa::dispatch;

// A column: library present first, then block size and next_n ascending; heads other than 64
// get columns of their own (a cell holds one context).
using Column = std::tuple<bool, std::int64_t, std::int64_t, std::int64_t>;  // !present, block, next_n, heads

char path_letter(const pd::RowResult& r) {
  if (!r.actual) return 'E';
  switch (r.actual->path) {
    case pmqa::Path::fused: return 'F';
    case pmqa::Path::two_stage: return '2';
    case pmqa::Path::reference_fallback: return 'R';
    case pmqa::Path::unsupported: return '-';
  }
  return '?';
}

std::string pad(const std::string& s, std::size_t w) { return s.size() >= w ? s : s + std::string(w - s.size(), ' '); }
std::string rpad(const std::string& s, std::size_t w) { return s.size() >= w ? s : std::string(w - s.size(), ' ') + s; }

}  // namespace

std::string matrix_grid(const pd::MatrixReport& report) {
  std::vector<std::string> archs;
  std::vector<Column> columns;
  struct Cell {
    std::string letters;  // distinct letters of the rows in the cell
    bool mismatch = false;
  };
  std::map<std::pair<std::string, Column>, Cell> cells;
  for (const auto& r : report.results) {
    const std::string arch = r.row.arch.empty() ? "\"\"" : "\"" + r.row.arch + "\"";
    if (std::find(archs.begin(), archs.end(), arch) == archs.end()) archs.push_back(arch);
    const auto& c = r.row.context;
    const Column col{!c.kernels_present, c.block_size, c.next_n, c.heads};
    if (std::find(columns.begin(), columns.end(), col) == columns.end()) columns.push_back(col);
    Cell& cell = cells[{arch, col}];
    const char letter = path_letter(r);
    if (cell.letters.find(letter) == std::string::npos) cell.letters += letter;
    cell.mismatch |= !r.pass;
  }
  std::sort(columns.begin(), columns.end());

  std::size_t arch_w = 17;
  for (const auto& a : archs) arch_w = std::max(arch_w, a.size() + 2);
  constexpr std::size_t cw = 4;
  std::ostringstream s;
  s << "arch x (kernel library, block_size, next_n): F fused, 2 two-stage, R reference fallback, - unsupported, "
       "E error; ! the policy differs from the row\n";
  std::string lib = pad("library present", arch_w), block = pad("block_size", arch_w), next = pad("next_n", arch_w),
              heads = pad("heads", arch_w);
  bool other_heads = false;
  for (const auto& [absent, bs, nn, h] : columns) {
    lib += rpad(absent ? "no" : "yes", cw);
    block += rpad(std::to_string(bs), cw);
    next += rpad(std::to_string(nn), cw);
    heads += rpad(std::to_string(h), cw);
    other_heads |= h != 64;
  }
  s << lib << "\n" << block << "\n" << next << "\n";
  if (other_heads) s << heads << "\n";
  for (const auto& a : archs) {
    std::string line = pad(a, arch_w);
    for (const auto& col : columns) {
      const auto it = cells.find({a, col});
      std::string text = ".";
      if (it != cells.end()) text = (it->second.letters.size() == 1 ? it->second.letters : "*") +
                                    (it->second.mismatch ? "!" : "");
      line += rpad(text, cw);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    s << line << "\n";
  }
  s << "(. no row for that context; * rows of one cell decided differently; the library: AITER on ROCm, DeepGEMM "
       "on NVIDIA)\n";
  return s.str();
}

}  // namespace pmqa::cli
