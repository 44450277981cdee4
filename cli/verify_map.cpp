#include "verify_map.hpp"

#include <fstream>
#include <stdexcept>
#include <string>

#include "pmqa/cases/error_map_picture.hpp"

namespace pmqa::cli {
namespace fs = std::filesystem;

fs::path map_file_for(const fs::path& map_arg, const fs::path& input, std::size_t inputs) {
  if (inputs <= 1) return map_arg;
  fs::path rel;
  for (const auto& part : input.lexically_normal().relative_path())
    if (part != ".." && part != ".") rel /= part;
  rel.replace_extension(".svg");
  return map_arg / rel;
}

void write_error_map(const fs::path& path, const Report& report, const fs::path& input) {
  if (!report.map) throw std::logic_error("write_error_map: the report has no map");
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << cases::report_svg(report, input.string());
  if (!f.flush()) throw std::runtime_error("--map: cannot write " + path.string());
}

}  // namespace pmqa::cli
