// pmqa_shard_tool N: reads "NAME WORK" lines from stdin, prints each item's shard of N (1-based),
// one per line in the same order: what the Python split (pmqa.cases.shard) is compared with.
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "pmqa/model/shard.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: pmqa_shard_tool N < items\n";
    return 2;
  }
  std::vector<pmqa::ShardItem> items;
  std::string name;
  std::uint64_t work = 0;
  while (std::cin >> name >> work) items.push_back({name, work});
  for (const int s : pmqa::assign_shards(items, std::atoi(argv[1]))) std::cout << s << "\n";
  return 0;
}
