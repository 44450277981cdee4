// pmqa::dispatch in one include: arch parsing, the arch table, the policy, the trace, the expected
// matrix and the device-arch check.
#pragma once

#include "pmqa/dispatch/arch.hpp"
#include "pmqa/dispatch/arch_table.hpp"
#include "pmqa/dispatch/device_check.hpp"
#include "pmqa/dispatch/matrix.hpp"
#include "pmqa/dispatch/policy.hpp"
#include "pmqa/dispatch/trace.hpp"
