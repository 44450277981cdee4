// pmqa gen --list: the suites and their cases, printed from the specs alone (building a case to
// describe it would allocate the gigabyte ones).
#pragma once

#include <cstdio>
#include <string>

#include "pmqa/fixtures/suites.hpp"

namespace pmqa::cli {

// "B8 N2 H4 D32 bs16 fn normal", the same summary table.hpp gives a built case.
std::string spec_shape_summary(const fixtures::CaseSpec& spec);

// Every suite when `suite` is empty, else that one (throws std::invalid_argument for an unknown name).
void print_suite_list(std::FILE* out, const std::string& suite);

}  // namespace pmqa::cli
