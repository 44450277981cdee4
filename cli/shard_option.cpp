#include "shard_option.hpp"

#include <sched.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <thread>

#include "command.hpp"
#include "pmqa/cases/logits_file.hpp"

namespace pmqa::cli {
namespace fs = std::filesystem;
namespace {

std::optional<std::int64_t> whole(const std::map<std::string, std::string>& md, const char* key) {
  const auto it = md.find(key);
  if (it == md.end() || it->second.empty() || it->second.size() > 12 ||
      it->second.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoll(it->second);
}

}  // namespace

std::optional<Shard> shard_option(const std::string& text, const std::string& command) {
  if (text.empty()) return std::nullopt;
  try {
    return parse_shard(text);
  } catch (const std::invalid_argument& e) {
    throw UsageError(command + ": " + e.what());
  }
}

std::vector<bool> in_shard(const std::vector<ShardItem>& items, const std::optional<Shard>& shard) {
  std::vector<bool> keep(items.size(), true);
  if (!shard) return keep;
  const auto which = assign_shards(items, shard->count);
  for (std::size_t i = 0; i < items.size(); ++i) keep[i] = which[i] == shard->index;
  return keep;
}

SuiteShard suite_shard(const std::vector<fixtures::SuiteCase>& cases, bool include_large,
                       const std::optional<Shard>& shard) {
  SuiteShard out;
  out.taken.assign(cases.size(), false);
  std::vector<ShardItem> items;
  std::vector<std::size_t> where;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& sc = cases[i];
    if (sc.large && !include_large) {
      ++out.large_left_out;
      continue;
    }
    items.push_back({sc.name, shard_work(sc.spec.batch, sc.spec.next_n, sc.spec.heads, sc.spec.head_dim,
                                         sc.spec.max_model_len)});
    where.push_back(i);
  }
  out.total = items.size();
  const auto keep = in_shard(items, shard);
  for (std::size_t k = 0; k < items.size(); ++k) out.taken[where[k]] = keep[k];
  return out;
}

std::string shard_words(const std::optional<Shard>& shard, std::size_t taken, std::size_t total, const char* what) {
  if (!shard) return "";
  return "shard " + to_string(*shard) + ": " + std::to_string(taken) + " of " + std::to_string(total) + " " + what;
}

ShardItem shard_item_of_file(const fs::path& file, const std::optional<fs::path>& cases) {
  ShardItem item{file.stem().string(), 1};
  const auto md = cases::read_header_metadata(file);
  if (const auto it = md.find("name"); it != md.end() && !it->second.empty()) item.name = it->second;
  auto heads = whole(md, "heads"), head_dim = whole(md, "head_dim");
  if ((!heads || !head_dim) && cases) {
    // A logits-only result file: the input case file holds the rest of the shape.
    if (const auto input = md.find("input_file");
        input != md.end() && !input->second.empty() && input->second.find('/') == std::string::npos) {
      const auto in_md = cases::read_header_metadata(*cases / input->second);
      heads = whole(in_md, "heads");
      head_dim = whole(in_md, "head_dim");
    }
  }
  const auto batch = whole(md, "batch"), next_n = whole(md, "next_n"), len = whole(md, "max_model_len");
  if (batch && next_n && heads && head_dim && len) item.work = shard_work(*batch, *next_n, *heads, *head_dim, *len);
  return item;
}

int available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace pmqa::cli
