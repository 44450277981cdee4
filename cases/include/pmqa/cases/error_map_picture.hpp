// The pictures of a comparison. error_map_svg (pmqa verify --map FILE.svg, pmqa.Report.map().svg()):
// the ErrorMap's rows x logical blocks as an SVG image, each cell coloured by its worst error over the
// element limit, the cells that broke a check in colours of their own, a broken row gate or a
// written guard cell marked beside its row. One wrong page is one red cell; one wrong row is a
// red line. error_map_block: ErrorMap::text with its legend, the lines `pmqa verify` prints under a
// failing file's report (and its JUnit failure text, and pmqa.assert_matches' message).
#pragma once

#include <string>
#include <vector>

#include "pmqa/reference/compare.hpp"

namespace pmqa::cases {

struct SvgMapOptions {
  std::string title;               // the headline above the map (and the document's <title>)
  std::vector<std::string> notes;  // lines under it (the case, the judging settings); all text wraps to the width
  int max_columns = 256;  // larger maps are pooled, keeping the worst, as ErrorMap::text does
  int max_rows = 256;
};

// Pictures are at least this wide (the legend's lines); wider only as the grid needs.
inline constexpr int kMinWidth = 640;

// A standalone SVG document (UTF-8 text). Severity, most severe first: NaN mismatch, unwritten,
// -inf pattern, over the element limit, block gate; then the worst error over the limit of a
// compared block; blank where nothing was compared.
std::string error_map_svg(const ErrorMap& map, const SvgMapOptions& options = {});

// A report's map titled with its verdict and worst gate, the case and the judging settings (where:
// the file judged, or ""). The report must have a map (CompareOptions::with_map).
std::string report_svg(const Report& report, const std::string& where = "");

// "  error map (legend):\n" then ErrorMap::text(width, height), each line indented by four spaces.
std::string error_map_block(const ErrorMap& map, int width = 64, int height = 16);

}  // namespace pmqa::cases
