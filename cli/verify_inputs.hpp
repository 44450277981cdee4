// pmqa verify's command-line inputs turned into the list of case files to check: a file stands for
// itself, a directory for its *.safetensors files in sorted order (so a run is reproducible and CI
// shards see the same order on every machine).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace pmqa::cli {

struct VerifyInput {
  std::filesystem::path path;
  // Set when the argument itself is unusable (missing path, empty directory). It is reported as an
  // invalid input like a bad file, so one bad argument does not hide the others' results.
  std::string error;
};

std::vector<VerifyInput> expand_verify_inputs(const std::vector<std::string>& args);

}  // namespace pmqa::cli
