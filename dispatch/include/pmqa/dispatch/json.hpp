// JSON views of the dispatch types (for `pmqa dispatch --json`, `pmqa matrix --json`, CI logs).
// nlohmann's ADL hooks: `nlohmann::json j = decision;`.
#pragma once

#include <nlohmann/json.hpp>

#include "pmqa/dispatch/arch.hpp"
#include "pmqa/dispatch/arch_table.hpp"
#include "pmqa/dispatch/device_check.hpp"
#include "pmqa/dispatch/matrix.hpp"
#include "pmqa/dispatch/policy.hpp"
#include "pmqa/dispatch/trace.hpp"

namespace pmqa::dispatch {

void to_json(nlohmann::json& j, const FeatureFlag& flag);
void to_json(nlohmann::json& j, const Arch& arch);
void to_json(nlohmann::json& j, const ArchInfo& info);
void to_json(nlohmann::json& j, const Context& ctx);
void to_json(nlohmann::json& j, const Decision& decision);
void to_json(nlohmann::json& j, const TraceEntry& entry);
void to_json(nlohmann::json& j, const MatrixRow& row);
void to_json(nlohmann::json& j, const RowResult& result);
void to_json(nlohmann::json& j, const MatrixReport& report);
void to_json(nlohmann::json& j, const ArchCheckResult& result);

}  // namespace pmqa::dispatch
