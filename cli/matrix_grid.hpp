// The arch matrix at a glance (pmqa matrix): one line per arch, one column per (kernel library
// present/absent, block size, next_n) the matrix has rows for, each cell the policy's path with a
// mark where it differs from the row's expectation. A guard too narrow for one arch (vLLM 42062)
// reads as one line of 2s among Fs.
#pragma once

#include <string>

#include "pmqa/dispatch/matrix.hpp"

namespace pmqa::cli {

std::string matrix_grid(const dispatch::MatrixReport& report);

}  // namespace pmqa::cli
