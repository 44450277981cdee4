#include "pmqa/cases/error_map_picture.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <utility>
#include <vector>

namespace pmqa::cases {
namespace {

struct Rgb {
  int r, g, b;
};

// The checks a block can break, most severe first (the order ErrorMap::text uses).
struct Mark {
  ErrorMap::Flag flag;
  Rgb colour;
  const char* label;
};
constexpr std::array<Mark, 6> kMarks{{
    {ErrorMap::nan, {0, 0, 0}, "NaN mismatch"},
    {ErrorMap::unwritten, {130, 130, 130}, "unwritten"},
    {ErrorMap::inf_pattern, {106, 61, 154}, "-inf pattern"},
    {ErrorMap::element, {215, 25, 28}, "over the element limit"},
    {ErrorMap::block_gate, {227, 26, 180}, "block gate (rms)"},
    {ErrorMap::bias_gate, {241, 105, 19}, "bias gate (signed mean)"},
}};
constexpr Rgb kRowGate{215, 25, 28};
constexpr Rgb kGuard{33, 113, 181};
constexpr Rgb kNotCompared{250, 250, 250};

// Within the limit: pale green at 1e-4 of it or less, through yellow, to orange at the limit, on
// a log scale (a correct kernel sits several decades below 1; a near miss shows orange).
Rgb within_limit(float worst) {
  const double w = std::isfinite(worst) ? static_cast<double>(worst) : 1.0;
  const double t = w <= 0 ? 0.0 : std::clamp((std::log10(w) + 4.0) / 4.0, 0.0, 1.0);
  constexpr Rgb lo{229, 245, 224}, mid{255, 237, 160}, hi{253, 141, 60};
  auto mix = [](Rgb a, Rgb b, double u) {
    auto ch = [u](int x, int y) { return static_cast<int>(std::lround(x + (y - x) * u)); };
    return Rgb{ch(a.r, b.r), ch(a.g, b.g), ch(a.b, b.b)};
  };
  return t < 0.75 ? mix(lo, mid, t / 0.75) : mix(mid, hi, (t - 0.75) / 0.25);
}

std::string hex(Rgb c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default:
        if (static_cast<unsigned char>(ch) >= 0x20 || ch == '\t') out += ch;
    }
  }
  return out;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// One drawn cell: a range of rows and blocks pooled, its most severe mark and worst value.
struct Pooled {
  int mark = -1;  // index into kMarks, -1 none
  bool compared = false;
  float worst = 0;
};

// Text widths for the layout, in pixels per character of sans-serif at 11 and 13 pixels: generous
// (digits and capitals are the wide ones), so that a label never runs into the next swatch.
constexpr double kCharW = 6.6, kTitleCharW = 7.8;

// Breaks text into lines of at most max_chars characters, at spaces where it can and inside a long
// word (a path) where it must.
std::vector<std::string> wrap(const std::string& text, std::size_t max_chars) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream words(text);
  for (std::string w; words >> w;) {
    while (w.size() > max_chars) {  // a word longer than a line: the line is cut inside it
      if (!line.empty()) lines.push_back(std::exchange(line, {}));
      lines.push_back(w.substr(0, max_chars));
      w.erase(0, max_chars);
    }
    if (!line.empty() && line.size() + 1 + w.size() > max_chars) lines.push_back(std::exchange(line, {}));
    line += (line.empty() ? "" : " ") + w;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

// Legend items laid out left to right, wrapping at the picture's width.
struct Flow {
  std::ostringstream& s;
  int width, x = 8, y;
  void item(const std::string& fill, const std::string& label, bool stroke = false, int swatch = 14) {
    const int advance = swatch + 5 + static_cast<int>(static_cast<double>(label.size()) * kCharW) + 16;
    if (x > 8 && x + advance > width - 8) {
      x = 8;
      y += 20;
    }
    s << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << swatch << "\" height=\"12\" fill=\"" << fill << "\""
      << (stroke ? " stroke=\"#999999\"" : "") << "/><text x=\"" << x + swatch + 5 << "\" y=\"" << y + 10 << "\">"
      << xml_escape(label) << "</text>\n";
    x += advance;
  }
  void text(const std::string& label, const std::string& colour = "") {
    const int advance = static_cast<int>(static_cast<double>(label.size()) * kCharW) + 10;
    if (x > 8 && x + advance > width - 8) {
      x = 8;
      y += 20;
    }
    s << "<text x=\"" << x << "\" y=\"" << y + 10 << "\"" << (colour.empty() ? "" : " fill=\"" + colour + "\"") << ">"
      << xml_escape(label) << "</text>\n";
    x += advance;
  }
  void newline() {
    x = 8;
    y += 20;
  }
};

}  // namespace

std::string error_map_svg(const ErrorMap& m, const SvgMapOptions& o) {
  const std::int64_t cols = std::max<std::int64_t>(1, std::min<std::int64_t>(m.blocks, std::max(1, o.max_columns)));
  const std::int64_t rows = std::max<std::int64_t>(1, std::min<std::int64_t>(m.rows, std::max(1, o.max_rows)));
  const bool empty = m.rows == 0 || m.blocks == 0;
  const bool pooled = !empty && (cols < m.blocks || rows < m.rows);

  // Cells between 4 and 24 pixels, the grid about 720 x 480 at most; the picture is as wide as the
  // grid with its row marks, or as the legend needs (kMinWidth), and the text wraps to that width.
  const int cw = static_cast<int>(std::clamp<std::int64_t>(720 / cols, 4, 24));
  const int ch = static_cast<int>(std::clamp<std::int64_t>(480 / rows, 4, 24));
  const int left = 64, marker_w = 12;
  const int grid_w = static_cast<int>(cols) * cw, grid_h = static_cast<int>(rows) * ch;
  const int width = std::max(left + grid_w + 2 * marker_w + 24, kMinWidth);
  const auto chars = static_cast<std::size_t>((width - 16) / kCharW);
  const auto title_chars = static_cast<std::size_t>((width - 16) / kTitleCharW);

  std::ostringstream head;  // the text above the grid; its height sets where the grid starts
  int head_y = 0;
  auto line = [&](const std::string& text, int size, const std::string& colour) {
    head_y += size + 5;
    head << "<text x=\"8\" y=\"" << head_y << "\"" << (size != 11 ? " font-size=\"" + std::to_string(size) + "\"" : "")
         << (colour.empty() ? "" : " fill=\"" + colour + "\"") << ">" << xml_escape(text) << "</text>\n";
  };
  for (const auto& l : wrap(o.title, title_chars)) line(l, 13, "");
  for (const auto& note : o.notes)
    for (const auto& l : wrap(note, chars)) line(l, 11, "");
  std::string sub = "rows " + std::to_string(m.rows) + " x logical blocks " + std::to_string(m.blocks) + " (block_size " +
                    std::to_string(m.block_size) + ")";
  if (pooled) sub += ", pooled to " + std::to_string(rows) + " x " + std::to_string(cols) + " keeping the worst";
  sub += "; colour: worst |out - ref| / element limit";
  for (const auto& l : wrap(sub, chars)) line(l, 11, "#444444");
  std::string alarms;
  if (m.global_gate) alarms += "global gate broken";
  if (m.global_bias) alarms += std::string(alarms.empty() ? "" : "; ") + "global bias gate broken";
  if (m.guard_outside_rows) alarms += std::string(alarms.empty() ? "" : "; ") + "guard cells outside the rows written";
  if (!alarms.empty()) line(alarms, 11, hex(kRowGate));
  const int top = head_y + 30;  // room for the column labels
  const int legend_top = top + grid_h + 28;

  std::ostringstream s;
  std::ostringstream legend;
  Flow flow{legend, width, 8, legend_top};
  if (!empty) {
    // Legend: the scale within the limit, then each mark, then the row marks.
    flow.text("within the limit:");
    for (double w : {1e-4, 1e-3, 1e-2, 1e-1, 0.5, 0.99}) flow.item(hex(within_limit(static_cast<float>(w))), number(w), true);
    flow.newline();
    for (const auto& mark : kMarks) flow.item(hex(mark.colour), mark.label);
    flow.newline();
    flow.item(hex(kRowGate), "right of a row: row (or row bias) gate broken", false, 10);
    flow.item(hex(kGuard), "guard cell after the row written", false, 10);
    flow.newline();
    flow.text("blank: no compared cell in the block", "#666666");
  }
  const int height = empty ? top + 24 : flow.y + 28;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height << "\" viewBox=\"0 0 "
    << width << " " << height << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  if (!o.title.empty()) s << "<title>" << xml_escape(o.title) << "</title>\n";
  s << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n" << head.str();

  if (empty) {
    s << "<text x=\"" << left << "\" y=\"" << top + 12 << "\">(empty map: no rows or no columns)</text>\n</svg>\n";
    return s.str();
  }

  // Axis labels: every row or block whose label fits (14 and 32 pixels apart).
  const std::int64_t row_step = std::max<std::int64_t>(1, (14 + ch - 1) / ch);
  const std::int64_t col_step = std::max<std::int64_t>(1, (32 + cw - 1) / cw);
  s << "<text x=\"" << left - 4 << "\" y=\"" << top - 4 << "\" text-anchor=\"end\">row \\ block</text>\n";
  for (std::int64_t y = 0; y < rows; y += row_step)
    s << "<text x=\"" << left - 4 << "\" y=\"" << top + y * ch + std::min(ch, 12) - 1 << "\" text-anchor=\"end\">"
      << y * m.rows / rows << "</text>\n";
  for (std::int64_t x = 0; x < cols; x += col_step)
    s << "<text x=\"" << left + x * cw << "\" y=\"" << top - 4 << "\">" << x * m.blocks / cols << "</text>\n";
  s << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << grid_w << "\" height=\"" << grid_h << "\" fill=\""
    << hex(kNotCompared) << "\" stroke=\"#bbbbbb\"/>\n";
  // The blocks in <g id="cells">, the row marks in <g id="rows">, then <g id="legend">.
  std::ostringstream row_marks;

  s << "<g id=\"cells\">\n";
  for (std::int64_t y = 0; y < rows; ++y) {
    const std::int64_t r0 = y * m.rows / rows, r1 = (y + 1) * m.rows / rows;
    // Runs of equal colour along a line are one rectangle: a 64-row decode map stays small.
    std::string run_fill;
    std::int64_t run_start = 0;
    auto flush = [&](std::int64_t end) {
      if (!run_fill.empty())
        s << "<rect x=\"" << left + run_start * cw << "\" y=\"" << top + y * ch << "\" width=\"" << (end - run_start) * cw
          << "\" height=\"" << ch << "\" fill=\"" << run_fill << "\"/>\n";
    };
    for (std::int64_t x = 0; x < cols; ++x) {
      const std::int64_t b0 = x * m.blocks / cols, b1 = (x + 1) * m.blocks / cols;
      Pooled p;
      for (std::int64_t r = r0; r < r1; ++r)
        for (std::int64_t b = b0; b < b1; ++b) {
          const auto i = static_cast<std::size_t>(m.at(r, b));
          for (int k = 0; k < static_cast<int>(kMarks.size()); ++k)
            if ((m.flags[i] & kMarks[static_cast<std::size_t>(k)].flag) && (p.mark < 0 || k < p.mark)) p.mark = k;
          if (m.compared[i]) {
            p.compared = true;
            p.worst = std::max(p.worst, std::isfinite(m.worst[i]) ? m.worst[i] : 1.0f);
          }
        }
      std::string fill;
      if (p.mark >= 0) fill = hex(kMarks[static_cast<std::size_t>(p.mark)].colour);
      else if (p.compared) fill = hex(within_limit(p.worst));
      if (fill != run_fill) {
        flush(x);
        run_fill = fill;
        run_start = x;
      }
    }
    flush(cols);

    bool row_gate = false, row_bias = false, guard = false;
    for (std::int64_t r = r0; r < r1; ++r) {
      row_gate |= (m.row_flags[static_cast<std::size_t>(r)] & ErrorMap::row_gate) != 0;
      row_bias |= (m.row_flags[static_cast<std::size_t>(r)] & ErrorMap::row_bias) != 0;
      guard |= (m.row_flags[static_cast<std::size_t>(r)] & ErrorMap::guard) != 0;
    }
    const std::string where = r1 - r0 == 1 ? "row " + std::to_string(r0)
                                           : "rows " + std::to_string(r0) + "-" + std::to_string(r1 - 1);
    if (row_gate || row_bias)
      row_marks << "<rect x=\"" << left + grid_w + 4 << "\" y=\"" << top + y * ch << "\" width=\"" << marker_w - 2
        << "\" height=\"" << ch << "\" fill=\"" << hex(kRowGate) << "\"><title>" << where << ": "
        << (row_gate && row_bias ? "row gate and row bias gate" : row_gate ? "row gate" : "row bias gate")
        << " broken</title></rect>\n";
    if (guard)
      row_marks << "<rect x=\"" << left + grid_w + 4 + marker_w << "\" y=\"" << top + y * ch << "\" width=\"" << marker_w - 2
        << "\" height=\"" << ch << "\" fill=\"" << hex(kGuard) << "\"><title>" << where
        << ": guard cell after the row written</title></rect>\n";
  }

  s << "</g>\n<g id=\"rows\">\n" << row_marks.str() << "</g>\n<g id=\"legend\">\n" << legend.str() << "</g>\n</svg>\n";
  return s.str();
}

std::string report_svg(const Report& r, const std::string& where) {
  std::string title = r.passed() ? "PASS" : "FAIL (" + r.broken() + "): " + std::to_string(r.failing_cells()) +
                                                " failing cell(s), " + std::to_string(r.failing_regions()) + " region(s);";
  char worst[160];
  std::snprintf(worst, sizeof worst, " worst over the limit: element %.3g, block %.3g, row %.3g, global %.3g",
                r.worst_bound_ratio, r.block.worst, r.row.worst, r.global.worst);
  title += worst;
  std::vector<std::string> notes{r.case_description};
  notes.push_back(r.judging.describe() + (where.empty() ? "" : "; " + where));
  return error_map_svg(*r.map, {.title = title, .notes = notes});
}

std::string error_map_block(const ErrorMap& map, int width, int height) {
  std::string out =
      "  error map, rows x logical blocks (' ' nothing compared, '.' under 0.1 of the element limit, 'o' under it, "
      "'X' over it, 'b' block gate, 'B' block bias gate, 'U' unwritten, 'I' -inf pattern, 'N' NaN; after a row: R "
      "row gate, B row bias gate, G guard):\n";
  std::istringstream lines(map.text(width, height));
  for (std::string line; std::getline(lines, line);) out += "    " + line + "\n";
  return out;
}

}  // namespace pmqa::cases
