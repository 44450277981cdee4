#include "pmqa/model/shard.hpp"

#include <algorithm>
#include <charconv>
#include <numeric>
#include <stdexcept>

namespace pmqa {
namespace {

int parse_int(std::string_view digits, std::string_view text) {
  int v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size())
    throw std::invalid_argument("--shard " + std::string(text) + ": expected K/N, two whole numbers (e.g. 2/8)");
  return v;
}

}  // namespace

Shard parse_shard(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos)
    throw std::invalid_argument("--shard " + std::string(text) + ": expected K/N, two whole numbers (e.g. 2/8)");
  const Shard s{parse_int(text.substr(0, slash), text), parse_int(text.substr(slash + 1), text)};
  if (s.count < 1 || s.count > 4096)
    throw std::invalid_argument("--shard " + std::string(text) + ": N must be 1 to 4096");
  if (s.index < 1 || s.index > s.count)
    throw std::invalid_argument("--shard " + std::string(text) + ": K must be 1 to N (shards are numbered from 1)");
  return s;
}

std::string to_string(const Shard& shard) { return std::to_string(shard.index) + "/" + std::to_string(shard.count); }

std::uint64_t shard_work(std::int64_t batch, std::int64_t next_n, std::int64_t heads, std::int64_t head_dim,
                         std::int64_t max_model_len) {
  const auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(std::max<std::int64_t>(v, 0)); };
  return u(batch) * u(next_n) * u(heads) * u(head_dim) * u(max_model_len) + 1;
}

std::vector<int> assign_shards(const std::vector<ShardItem>& items, int count) {
  if (count < 1) throw std::invalid_argument("assign_shards: count must be at least 1");
  std::vector<std::size_t> order(items.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (items[a].work != items[b].work) return items[a].work > items[b].work;
    return items[a].name < items[b].name;
  });
  std::vector<std::uint64_t> load(static_cast<std::size_t>(count), 0);
  std::vector<int> shard(items.size(), 0);
  for (const std::size_t i : order) {
    const auto least = std::min_element(load.begin(), load.end()) - load.begin();  // first of the least loaded
    load[static_cast<std::size_t>(least)] += items[i].work;
    shard[i] = static_cast<int>(least) + 1;
  }
  return shard;
}

}  // namespace pmqa
