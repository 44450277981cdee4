// pmqa gen --list: the suites and their cases, printed from the specs alone (building a case to
// describe it would allocate the gigabyte ones).
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "pmqa/fixtures/suites.hpp"
#include "pmqa/model/shard.hpp"

namespace pmqa::cli {

// "B8 N2 H4 D32 bs16 fn normal", the same summary table.hpp gives a built case.
std::string spec_shape_summary(const fixtures::CaseSpec& spec);

// "HEADING: N cases" and a table of the cases; with a shard, "HEADING, shard K/N: n of T case(s)"
// and only the cases `pmqa gen --shard K/N` writes (suite_shard: the large ones in the split only
// with include_large; the heading counts those left out).
void print_case_table(std::FILE* out, const std::string& heading, const std::vector<fixtures::SuiteCase>& cases,
                      bool include_large, const std::optional<Shard>& shard);

// Every suite when `suite` is empty, else that one (throws std::invalid_argument for an unknown
// name); with a shard, each suite's shard K.
void print_suite_list(std::FILE* out, const std::string& suite, bool include_large = false,
                      const std::optional<Shard>& shard = std::nullopt);

}  // namespace pmqa::cli
