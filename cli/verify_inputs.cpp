#include "verify_inputs.hpp"

#include <algorithm>
#include <system_error>

namespace pmqa::cli {
namespace fs = std::filesystem;

std::vector<VerifyInput> expand_verify_inputs(const std::vector<std::string>& args) {
  std::vector<VerifyInput> out;
  for (const auto& arg : args) {
    const fs::path p(arg);
    std::error_code ec;
    const auto status = fs::status(p, ec);
    if (ec || !fs::exists(status)) {
      out.push_back({p, arg + ": file: does not exist"});
      continue;
    }
    if (!fs::is_directory(status)) {
      out.push_back({p, ""});  // the reader says what is wrong with it, if anything
      continue;
    }
    std::vector<fs::path> found;
    for (fs::directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".safetensors" && fs::is_regular_file(it->path())) found.push_back(it->path());
    if (ec) {
      out.push_back({p, arg + ": directory: cannot list: " + ec.message()});
      continue;
    }
    // A directory with nothing to verify must not read as a pass (a CI job pointed at the wrong
    // folder would otherwise go green).
    if (found.empty()) {
      out.push_back({p, arg + ": directory: holds no *.safetensors files"});
      continue;
    }
    std::sort(found.begin(), found.end());
    for (auto& f : found) out.push_back({std::move(f), ""});
  }
  return out;
}

}  // namespace pmqa::cli
