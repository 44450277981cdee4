#include "pmqa/kernels/executor.hpp"

#include <string>

#include "pmqa/kernels/detail/host_backend.hpp"

namespace pmqa::kernels {

std::string_view to_string(FusedVariant v) noexcept {
  switch (v) {
    case FusedVariant::automatic: return "auto";
    case FusedVariant::scalar: return "scalar";
    case FusedVariant::mma: return "mma";
    case FusedVariant::mfma: return "mfma";
  }
  return "?";
}

FusedVariant parse_fused_variant(std::string_view text) {
  if (text == "auto") return FusedVariant::automatic;
  if (text == "scalar") return FusedVariant::scalar;
  if (text == "mma") return FusedVariant::mma;
  if (text == "mfma") return FusedVariant::mfma;
  throw std::invalid_argument("unknown fused variant '" + std::string(text) + "' (expected auto, scalar, mma or mfma)");
}

std::string_view to_string(MmaInstruction m) noexcept {
  switch (m) {
    case MmaInstruction::automatic: return "auto";
    case MmaInstruction::mma_sync: return "mma.sync";
    case MmaInstruction::wgmma: return "wgmma";
  }
  return "?";
}

MmaInstruction parse_mma_instruction(std::string_view text) {
  if (text == "auto") return MmaInstruction::automatic;
  if (text == "mma.sync" || text == "mma_sync") return MmaInstruction::mma_sync;
  if (text == "wgmma") return MmaInstruction::wgmma;
  throw std::invalid_argument("unknown mma instruction '" + std::string(text) + "' (expected auto, mma.sync or wgmma)");
}

Tolerance tolerance_for(const RunResult& run) {
  return run.kernel == "fused-mma" || run.kernel == "fused-mfma" ? Tolerance::matrix_unit() : Tolerance::fp32();
}

std::unique_ptr<Executor> make_host_executor(const HostExecutorOptions& options) {
  return std::make_unique<detail::HostExecutor<>>(options);
}

}  // namespace pmqa::kernels
