#include "table.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace pmqa::cli {

void Table::print(std::FILE* out) const {
  std::vector<std::size_t> width(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size() && i < width.size(); ++i) width[i] = std::max(width[i], cells[i].size());
  };
  measure(header_);
  for (const auto& r : rows_) measure(r);
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (std::size_t i = 0; i < width.size(); ++i) {
      const std::string& cell = i < cells.size() ? cells[i] : std::string();
      s += cell;
      if (i + 1 < width.size()) s += std::string(width[i] - cell.size() + 2, ' ');
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    std::fprintf(out, "%s\n", s.c_str());
  };
  line(header_);
  std::vector<std::string> rule;
  for (auto w : width) rule.push_back(std::string(w, '-'));
  line(rule);
  for (const auto& r : rows_) line(r);
}

std::string format_g(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string format_fixed(double v, int decimals) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string joined(const std::vector<std::string>& names, const std::string& separator) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : separator) + n;
  return out;
}

std::string shape_summary(const Case& c) {
  std::ostringstream s;
  s << "B" << c.batch << " N" << c.next_n << " H" << c.heads << " D" << c.head_dim << " bs" << c.block_size << " "
    << short_name(c.format) << " " << to_string(c.layout);
  return s.str();
}

}  // namespace pmqa::cli
