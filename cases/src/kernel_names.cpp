#include "pmqa/cases/kernel_names.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace pmqa::cases {
namespace detail {
extern const unsigned char kernel_names_json_data[];
extern const std::size_t kernel_names_json_size;
extern const char kernel_names_json_source[];
}  // namespace detail

namespace {

using json = nlohmann::json;

constexpr std::string_view kSchema = "pmqa-kernel-names/1";
constexpr std::string_view kMeans[] = {"fused", "two-stage", "eager", "any"};
constexpr const char* kEntryKeys[] = {"pattern", "library", "means", "role", "source"};

[[noreturn]] void fail(std::string_view origin, std::string_view where, const std::string& problem) {
  throw KernelNamesError(std::string(origin) + ": " + std::string(where) + ": " + problem);
}

// nlohmann's parser keeps the last of two equal keys; the table must not say one thing twice.
struct NoDuplicates {
  std::string_view origin;
  std::vector<std::vector<std::string>> seen;
  bool operator()(int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) seen.emplace_back();
    if (event == json::parse_event_t::object_end) seen.pop_back();
    if (event == json::parse_event_t::key) {
      auto& keys = seen.back();
      const std::string key = parsed.get<std::string>();
      if (std::find(keys.begin(), keys.end(), key) != keys.end())
        fail(origin, "JSON", "key \"" + key + "\" appears twice in one object");
      keys.push_back(key);
    }
    (void)depth;
    return true;
  }
};

}  // namespace

std::vector<KernelEntry> parse_kernel_names(std::string_view text, std::string_view origin) {
  json doc;
  try {
    NoDuplicates check{origin, {}};
    doc = json::parse(text.begin(), text.end(), [&](int d, json::parse_event_t e, json& p) { return check(d, e, p); });
  } catch (const json::exception& e) {
    fail(origin, "JSON", e.what());
  }
  if (!doc.is_object() || !doc.contains("schema") || doc["schema"] != kSchema)
    fail(origin, "schema", "expected \"" + std::string(kSchema) + "\"");
  for (const auto& [key, value] : doc.items()) {
    (void)value;
    if (key != "schema" && key != "about" && key != "kernels")
      fail(origin, "top level", "unknown key \"" + key + "\" (known: schema, about, kernels)");
  }
  const json& kernels = doc.contains("kernels") ? doc["kernels"] : json();
  if (!kernels.is_array() || kernels.empty()) fail(origin, "kernels", "expected a non-empty array");
  std::vector<KernelEntry> out;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const std::string where = "kernels[" + std::to_string(i) + "]";
    const json& e = kernels[i];
    if (!e.is_object()) fail(origin, where, "expected an object");
    for (const auto& [key, value] : e.items()) {
      (void)value;
      if (std::find(std::begin(kEntryKeys), std::end(kEntryKeys), key) == std::end(kEntryKeys))
        fail(origin, where, "unknown key \"" + key + "\" (known: pattern, library, means, role, source)");
    }
    std::string fields[5];
    for (int k = 0; k < 5; ++k) {
      const char* key = kEntryKeys[k];
      if (!e.contains(key) || !e[key].is_string() ||
          e[key].get<std::string>().find_first_not_of(" \t\r\n") == std::string::npos)
        fail(origin, where + "." + key, "missing or empty");
      fields[k] = e[key].get<std::string>();
    }
    if (std::find(std::begin(kMeans), std::end(kMeans), fields[2]) == std::end(kMeans))
      fail(origin, where + ".means", "\"" + fields[2] + "\" is not one of fused, two-stage, eager, any");
    out.push_back({fields[0], fields[1], fields[2], fields[3], fields[4], std::string(origin)});
  }
  return out;
}

std::vector<KernelEntry> load_kernel_names(const std::vector<std::string>& extra_files) {
  std::vector<KernelEntry> entries;
  for (const auto& path : extra_files) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path, "file", "cannot read the kernel-name file");
    std::ostringstream text;
    text << in.rdbuf();
    auto more = parse_kernel_names(text.str(), path);
    entries.insert(entries.end(), more.begin(), more.end());
  }
  static const std::vector<KernelEntry> builtin = parse_kernel_names(
      std::string_view(reinterpret_cast<const char*>(detail::kernel_names_json_data), detail::kernel_names_json_size),
      detail::kernel_names_json_source);
  entries.insert(entries.end(), builtin.begin(), builtin.end());
  return entries;
}

std::string PathReport::describe(std::size_t limit) const {
  std::string out;
  for (std::size_t i = 0; i < kernels.size() && i < limit; ++i) {
    const auto& [name, count] = kernels[i];
    const std::string shown = name.size() <= 90 ? name : name.substr(0, 87) + "...";
    const auto it = known.find(name);
    out += (out.empty() ? "" : ", ") + shown +
           (it != known.end() ? " (" + it->second.library + " " + it->second.means + ")" : " (unknown)") + " x" +
           std::to_string(count);
  }
  if (kernels.size() > limit) out += ", and " + std::to_string(kernels.size() - limit) + " more";
  return out.empty() ? "no kernel" : out;
}

std::string PathReport::metadata() const {
  std::string out;
  for (const auto& [name, count] : kernels) out += (out.empty() ? "" : "; ") + name + " x" + std::to_string(count);
  return out;
}

PathReport classify(const std::vector<std::string>& launched, const std::vector<KernelEntry>& entries) {
  PathReport r;
  for (const auto& name : launched) {
    auto it = std::find_if(r.kernels.begin(), r.kernels.end(), [&](const auto& k) { return k.first == name; });
    if (it == r.kernels.end()) r.kernels.emplace_back(name, 1);
    else ++it->second;
  }
  bool means[3] = {false, false, false};  // two-stage, fused, eager
  for (const auto& [name, count] : r.kernels) {
    (void)count;
    const auto e = std::find_if(entries.begin(), entries.end(),
                                [&](const KernelEntry& k) { return ::fnmatch(k.pattern.c_str(), name.c_str(), FNM_NOESCAPE) == 0; });
    if (e == entries.end()) {
      r.unknown.push_back(name);
      continue;
    }
    r.known.emplace(name, *e);
    if (e->means == "two-stage") means[0] = true;
    if (e->means == "fused") means[1] = true;
    if (e->means == "eager") means[2] = true;
  }
  r.path = means[0] ? "two-stage" : means[1] ? "fused" : means[2] ? "eager" : "none";
  return r;
}

}  // namespace pmqa::cases
