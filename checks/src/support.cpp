#include "support.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <sstream>

namespace pmqa::checks {

void Finding::ran(const std::string& kernel) {
  const auto at = std::lower_bound(kernels.begin(), kernels.end(), kernel);
  if (at == kernels.end() || *at != kernel) kernels.insert(at, kernel);
}

}  // namespace pmqa::checks

namespace pmqa::checks::detail {

std::string first_lines(const std::string& text, int n) {
  std::string out;
  std::istringstream in(text);
  std::string line;
  for (int i = 0; i < n && std::getline(in, line); ++i) out += (i ? "\n" : "") + line;
  return out;
}

Finding finding(std::string check, std::string source, std::string config, std::string unit) {
  Finding f;
  f.check = std::move(check);
  f.source = std::move(source);
  f.config = std::move(config);
  f.unit = std::move(unit);
  return f;
}

std::shared_ptr<const Prepared> prepare(Case c) {
  auto p = std::make_shared<Prepared>();
  p->c = std::move(c);
  p->oracle = compute_reference(p->c, {.precision = Precision::fp64});
  return p;
}

std::shared_ptr<const Prepared> prepare(const fixtures::CaseSpec& spec, bool reuse) {
  if (!reuse) return prepare(fixtures::make_case(spec));
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const Prepared>> cache;
  std::ostringstream key;
  key << spec;
  {
    const std::lock_guard lock(mutex);
    if (const auto it = cache.find(key.str()); it != cache.end()) return it->second;
  }
  auto p = prepare(fixtures::make_case(spec));
  const std::lock_guard lock(mutex);
  if (cache.size() >= 4096) cache.clear();
  cache.emplace(key.str(), p);
  return p;
}

}  // namespace pmqa::checks::detail
