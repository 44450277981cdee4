// pmqa verify --map: where each judged file's picture (an SVG error map) goes, and writing it.
#pragma once

#include <cstddef>
#include <filesystem>

#include "pmqa/reference/compare.hpp"

namespace pmqa::cli {

// One input: the --map argument itself. Several: the argument is a folder and each file's map
// mirrors the input's path under it (out/aiter/x.safetensors -> MAP/out/aiter/x.svg), so inputs of
// the same name in different folders do not overwrite each other.
std::filesystem::path map_file_for(const std::filesystem::path& map_arg, const std::filesystem::path& input,
                                   std::size_t inputs);

// Writes the report's map (Report::map must be set) as SVG, creating the folder; throws
// std::runtime_error naming the path when it cannot.
void write_error_map(const std::filesystem::path& path, const Report& report, const std::filesystem::path& input);

}  // namespace pmqa::cli
