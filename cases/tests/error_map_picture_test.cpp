// The error map's pictures: each check a block broke has its colour, larger maps are pooled
// keeping the worst, and the map compare() fills for a wrong page marks that page only.
#include <algorithm>
#include <utility>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "pmqa/cases/error_map_picture.hpp"
#include "pmqa/fixtures/generate.hpp"
#include "pmqa/fixtures/suites.hpp"
#include "pmqa/reference/compare.hpp"
#include "pmqa/reference/reference.hpp"

namespace pmqa::cases {
namespace {

ErrorMap blank(std::int64_t rows, std::int64_t blocks) {
  ErrorMap m;
  m.rows = rows;
  m.blocks = blocks;
  m.block_size = 16;
  const auto n = static_cast<std::size_t>(rows * blocks);
  m.worst.assign(n, 0.001f);
  m.flags.assign(n, 0);
  m.compared.assign(n, 1);
  m.row_flags.assign(static_cast<std::size_t>(rows), 0);
  return m;
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// One group of the picture: "cells", "rows" or "legend".
std::string group(const std::string& svg, const std::string& id) {
  const auto begin = svg.find("<g id=\"" + id + "\">");
  if (begin == std::string::npos) return "";
  return svg.substr(begin, svg.find("</g>", begin) - begin);
}

// Where the grid starts: its background rectangle, the first one with a stroke.
std::pair<int, int> grid_origin(const std::string& svg) {
  std::smatch m;
  const std::regex bg("<rect x=\"([0-9]+)\" y=\"([0-9]+)\" width=\"[0-9]+\" height=\"[0-9]+\" fill=\"#fafafa\" stroke=");
  return std::regex_search(svg, m, bg) ? std::pair{std::stoi(m[1]), std::stoi(m[2])} : std::pair{-1, -1};
}

int attribute(const std::string& svg, const std::string& name) {
  std::smatch m;
  return std::regex_search(svg, m, std::regex("<svg [^>]*" + name + "=\"([0-9]+)\"")) ? std::stoi(m[1]) : -1;
}

// The fill of the block rectangle starting at pixel (px, py), or "" when none starts there (runs
// of one colour along a line are one rectangle).
std::string fill_at(const std::string& svg_text, int px, int py) {
  const std::string svg = group(svg_text, "cells");
  const std::regex rect("<rect x=\"" + std::to_string(px) + "\" y=\"" + std::to_string(py) +
                        "\" width=\"[0-9]+\" height=\"[0-9]+\" fill=\"(#[0-9a-f]{6})\"");
  std::smatch m;
  return std::regex_search(svg, m, rect) ? m[1].str() : "";
}

TEST(ErrorMapSvg, EachCheckHasItsColourAndTheRowMarks) {
  ErrorMap m = blank(4, 6);
  m.flags[m.at(0, 1)] = ErrorMap::element;
  m.flags[m.at(1, 2)] = ErrorMap::nan | ErrorMap::element;  // the most severe wins
  m.flags[m.at(2, 3)] = ErrorMap::unwritten;
  m.flags[m.at(3, 4)] = ErrorMap::inf_pattern;
  m.flags[m.at(3, 0)] = ErrorMap::block_gate;
  m.flags[m.at(0, 5)] = ErrorMap::bias_gate;
  m.compared[m.at(2, 5)] = 0;
  m.row_flags[1] = ErrorMap::row_gate;
  m.row_flags[2] = ErrorMap::guard;
  m.row_flags[3] = ErrorMap::row_bias;
  m.global_gate = true;
  m.global_bias = true;
  const std::string svg = error_map_svg(m, {.title = "a <title> & more", .notes = {}});
  ASSERT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u) << svg;
  EXPECT_NE(svg.find("a &lt;title&gt; &amp; more"), std::string::npos) << "the title is escaped";
  EXPECT_NE(svg.find("global gate broken; global bias gate broken"), std::string::npos);
  const int cw = 24, ch = 24;  // 6 x 4 cells get the largest size
  const auto [left, top] = grid_origin(svg);
  ASSERT_EQ(left, 64) << svg;
  auto at = [&](int x, int y) { return fill_at(svg, left + x * cw, top + y * ch); };
  EXPECT_EQ(at(1, 0), "#d7191c") << "element: red\n" << svg;
  EXPECT_EQ(at(2, 1), "#000000") << "NaN over element";
  EXPECT_EQ(at(3, 2), "#828282") << "unwritten";
  EXPECT_EQ(at(4, 3), "#6a3d9a") << "-inf pattern";
  EXPECT_EQ(at(0, 3), "#e31ab4") << "block gate";
  EXPECT_EQ(at(5, 0), "#f16913") << "bias gate";
  EXPECT_EQ(at(0, 0), "#eef2cb") << "a block at 0.001 of its limit";
  EXPECT_EQ(at(5, 2), "") << "nothing compared: no rectangle";
  const std::string marks = group(svg, "rows");
  EXPECT_NE(marks.find("row 1: row gate broken"), std::string::npos) << marks;
  EXPECT_NE(marks.find("row 2: guard cell after the row written"), std::string::npos) << marks;
  EXPECT_NE(marks.find("row 3: row bias gate broken"), std::string::npos) << marks;
  EXPECT_EQ(count(marks, "<rect "), 3u) << marks;
  EXPECT_NE(m.text().find("  0\t|.X...B|\n"), std::string::npos) << m.text();
  EXPECT_NE(m.text().find("  3\t|b...I.| B\n"), std::string::npos) << m.text();
  EXPECT_EQ(count(svg, "<svg"), 1u);
  EXPECT_EQ(count(svg, "</svg>"), 1u);
}

TEST(ErrorMapSvg, PoolingKeepsTheWorst) {
  ErrorMap m = blank(1000, 4096);
  m.flags[m.at(517, 3001)] = ErrorMap::element;
  m.worst[m.at(900, 10)] = 0.5f;
  const std::string svg = error_map_svg(m, {.title = "", .notes = {}, .max_columns = 128, .max_rows = 100});
  EXPECT_NE(svg.find("pooled to 100 x 128 keeping the worst"), std::string::npos);
  EXPECT_EQ(count(group(svg, "cells"), "fill=\"#d7191c\""), 1u) << "the one bad block";
  // Runs of one colour: a rectangle per line, plus two where the bad block splits its line and one
  // where the 0.5 block (pooled into the first column) does.
  EXPECT_EQ(count(group(svg, "cells"), "<rect "), 100u + 2u + 1u);
  EXPECT_LT(svg.size(), 400000u) << "runs of one colour are one rectangle";
  const std::string text = m.text(64, 16);
  EXPECT_NE(text.find('X'), std::string::npos);
}

TEST(ErrorMapSvg, EmptyMapSaysSo) {
  ErrorMap m;
  EXPECT_NE(error_map_svg(m).find("empty map"), std::string::npos);
}

TEST(ErrorMapBlock, TheTextMapWithItsLegend) {
  ErrorMap m = blank(3, 5);
  m.flags[m.at(1, 2)] = ErrorMap::element;
  m.row_flags[1] = ErrorMap::row_gate;
  const std::string block = error_map_block(m);
  EXPECT_EQ(block.rfind("  error map, rows x logical blocks", 0), 0u) << block;
  EXPECT_NE(block.find("      1\t|..X..| R\n"), std::string::npos) << block;
}

// The map compare() fills, drawn: a wrong page is one red cell at its (row, logical block).
TEST(ErrorMapSvg, AWrongPageOfARealComparison) {
  fixtures::SuiteCase sc;
  for (const auto& c : fixtures::suite("quick"))
    if (c.name == "deepseek-small") sc = c;
  const Case c = fixtures::make_case(sc.spec);
  const Reference oracle = compute_reference(c, {.precision = Precision::fp64});
  OutputBuffer out = reference_output(c);
  const std::int64_t r = 2, page = 1;
  ASSERT_GT(oracle.valid(r), 2 * c.block_size);
  for (std::int64_t j = page * c.block_size; j < (page + 1) * c.block_size; ++j) out.at(r, j) *= 1.5f;
  const Report rep = compare(c, oracle, out, {.with_map = true});
  ASSERT_FALSE(rep.passed());
  ASSERT_TRUE(rep.map.has_value());
  const ErrorMap& m = *rep.map;
  for (std::int64_t y = 0; y < m.rows; ++y)
    for (std::int64_t b = 0; b < m.blocks; ++b)
      EXPECT_EQ((m.flags[m.at(y, b)] & ErrorMap::element) != 0, y == r && b == page) << y << " " << b;
  const std::string svg = error_map_svg(m);
  const int cw = static_cast<int>(std::clamp<std::int64_t>(720 / m.blocks, 4, 24));
  const int ch = static_cast<int>(std::clamp<std::int64_t>(480 / m.rows, 4, 24));
  const auto [left, top] = grid_origin(svg);
  EXPECT_EQ(fill_at(svg, left + static_cast<int>(page) * cw, top + static_cast<int>(r) * ch), "#d7191c") << svg;

  // The report's own picture: titled with the verdict and the worst gate, then the case and settings.
  const std::string titled = report_svg(rep, "some/dir/deepseek-small.safetensors");
  EXPECT_NE(titled.find("<title>FAIL (" + rep.broken() + "): " + std::to_string(rep.failing_cells()) +
                        " failing cell(s), " + std::to_string(rep.failing_regions()) +
                        " region(s); worst over the limit: element "),
            std::string::npos)
      << titled;
  EXPECT_NE(titled.find("contract clean, tolerance fp32, NaN rule propagate; some/dir/deepseek-small.safetensors"),
            std::string::npos) << titled;
  EXPECT_NE(titled.find(rep.case_description.substr(0, 40)), std::string::npos) << titled;
}

// The picture is as wide as its grid needs (at least the legend's kMinWidth), whatever the title's
// length: long text wraps inside it, and no legend label runs into the next swatch.
TEST(ErrorMapSvg, SizedToTheMapWithTextInside) {
  ErrorMap m = blank(64, 3);
  const std::string path(300, 'p');
  const std::string svg = error_map_svg(m, {.title = "FAIL (element) " + path, .notes = {std::string(500, 'n')}});
  const int width = attribute(svg, "width");
  EXPECT_EQ(width, kMinWidth) << "a 3-block map is no wider than the legend needs";
  const std::regex text("<text x=\"([0-9]+)\" y=\"[0-9]+\"( font-size=\"([0-9]+)\")?[^>]*>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text); it != std::sregex_iterator(); ++it) {
    const double char_w = (*it)[3].matched && (*it)[3] == "13" ? 7.8 : 6.6;
    const double end = std::stoi((*it)[1]) + char_w * static_cast<double>((*it)[4].length());
    EXPECT_LE(end, width) << "text past the right edge: " << (*it)[0];
  }
  // Legend: each swatch of a line starts after the previous label ends.
  const std::string legend = group(svg, "legend");
  const std::regex item("<rect x=\"([0-9]+)\" y=\"([0-9]+)\"[^>]*/><text x=\"([0-9]+)\" y=\"[0-9]+\">([^<]*)</text>");
  int prev_end = -1, prev_y = -1, items = 0;
  for (auto it = std::sregex_iterator(legend.begin(), legend.end(), item); it != std::sregex_iterator(); ++it, ++items) {
    const int x = std::stoi((*it)[1]), y = std::stoi((*it)[2]);
    if (y == prev_y) {
      EXPECT_GT(x, prev_end) << "overlap at " << (*it)[0];
    }
    prev_y = y;
    prev_end = std::stoi((*it)[3]) + static_cast<int>(6.6 * static_cast<double>((*it)[4].length()));
  }
  EXPECT_EQ(items, 6 + 6 + 2) << legend;  // the scale, the six marks (the bias gate's too), the two row marks
  const std::string wide = error_map_svg(blank(8, 200));
  EXPECT_EQ(attribute(wide, "width"), 64 + 200 * 4 + 2 * 12 + 24) << "a wide map sets the width";
}

}  // namespace
}  // namespace pmqa::cases
