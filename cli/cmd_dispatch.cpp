// pmqa dispatch: the dispatch decision for one arch (spec §4): path, fp8 format, KV layout, reason.
//   pmqa dispatch --arch NAME [--block-size N] [--next-n N] [--heads N] [--no-aiter] [--json]
// Exit 0 with the decision (unsupported included: it is a decision), 2 on an unknown or malformed
// arch or an invalid context, with the message.
// Until cli/CMakeLists.txt links pmqa_dispatch the dispatch headers are not on the include path;
// the command then says so (exit 2) instead of breaking the build of the other commands.
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "rocm_fused_option.hpp"
#include "pmqa/dispatch/dispatch.hpp"
#include "pmqa/dispatch/json.hpp"

namespace pmqa::cli {
namespace {

namespace pd = pmqa::dispatch;

struct DispatchOptions {
  std::string arch;
  std::int64_t block_size = 64;
  std::int64_t next_n = 1;
  std::int64_t heads = 64;
  bool no_kernels = false;
  bool json = false;
  RocmFusedOption rocm_fused;
};

std::string flags_text(const pd::Arch& arch) {
  std::string out;
  for (const auto& f : arch.features) out += (out.empty() ? "" : " ") + f.name + (f.enabled ? "+" : "-");
  return out;
}

int report_error(const DispatchOptions& o, std::string_view kind, const std::string& message) {
  if (o.json) {
    nlohmann::json j{{"arch", o.arch}, {"error", {{"kind", kind}, {"message", message}}}};
    std::cout << j.dump(2) << "\n";
  }
  std::fprintf(stderr, "pmqa dispatch: %s\n", message.c_str());
  return kExitInvalid;
}

int run_dispatch(const DispatchOptions& o) {
  const pd::Context ctx{!o.no_kernels, o.block_size, o.next_n, o.heads};
  const pd::Policy& policy = o.rocm_fused.policy();

  pd::Arch arch;
  pd::Decision decision;
  try {
    arch = pd::parse_arch(o.arch);
    decision = policy.select(arch, ctx);
  } catch (const pd::ArchParseError& e) {
    return report_error(o, "malformed-arch", e.what());
  } catch (const pd::UnknownArchError& e) {
    return report_error(o, "unknown-arch", e.what());
  } catch (const pd::ContextError& e) {
    return report_error(o, "invalid-context", e.what());
  }
  const pd::ArchInfo& info = pd::ArchTable::builtin().at(arch);

  if (o.json) {
    nlohmann::json j{{"arch", arch}, {"arch_info", info}, {"context", ctx}, {"policy", policy.name()},
                     {"decision", decision}};
    std::cout << j.dump(2) << "\n";
    return kExitPass;
  }
  std::ostringstream out;
  out << "arch      " << arch.text;
  if (arch.text != arch.target) out << " (target " << arch.target << ", flags " << flags_text(arch) << ")";
  out << "\n";
  out << "table     " << info.family << ": " << info.products_text() << "; fp8 "
      << (info.fp8 ? pd::to_string(*info.fp8) : std::string_view("none")) << ", wave " << info.wave_size
      << ", fp8 matrix " << pd::to_string(info.fp8_matrix);
  if (info.has_fp8_matrix()) out << " (" << info.fp8_matrix_example << ")";
  if (info.fused_kernel_library) out << ", " << *info.fused_kernel_library << " ships a fused kernel";
  out << "\n";
  out << "context   " << pd::describe(ctx, arch.vendor) << "\n";
  out << "policy    " << policy.name() << "\n";
  out << "path      " << pd::to_string(decision.path) << "\n";
  out << "fp8       " << (decision.fp8 ? pd::to_string(*decision.fp8) : std::string_view("-")) << "\n";
  out << "layout    " << (decision.layout ? pd::message_name(*decision.layout) : std::string_view("-")) << "\n";
  if (!decision.kernel.empty()) out << "kernel    " << decision.kernel << " (pmqa's kernel for this path here)\n";
  out << "reason    " << decision.reason << "\n";
  if (!info.note.empty()) out << "note      " << info.note << "\n";
  std::cout << out.str();
  return kExitPass;
}

}  // namespace

Command add_dispatch_command(CLI::App& parent) {
  auto o = std::make_shared<DispatchOptions>();
  Command cmd;
  cmd.app = parent.add_subcommand("dispatch", "Show the dispatch decision (path, fp8 format, KV layout, reason) for an arch");
  cmd.app->add_option("--arch", o->arch, "Arch name: HIP gcnArchName (gfx942:sramecc+:xnack-, gfx950) or sm_XY (sm_90)")
      ->required();
  cmd.app->add_option("--block-size", o->block_size, "Tokens per KV block")->capture_default_str();
  cmd.app->add_option("--next-n", o->next_n, "Query tokens per sequence")->capture_default_str();
  cmd.app->add_option("--heads", o->heads, "Query heads")->capture_default_str();
  cmd.app->add_flag("--no-aiter,--no-kernels", o->no_kernels,
                    "The kernel library is absent (AITER on ROCm, DeepGEMM on NVIDIA)");
  cmd.app->add_flag("--json", o->json, "Print the decision as JSON");
  o->rocm_fused.add_to(*cmd.app);
  cmd.run = [o] { return run_dispatch(*o); };
  return cmd;
}

}  // namespace pmqa::cli
