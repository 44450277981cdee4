#include "pmqa/dispatch/policy.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "pmqa/dispatch/trace.hpp"

namespace pmqa::dispatch {
namespace {

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

bool contains(const std::vector<std::string>& items, std::string_view item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

void validate_context(const Context& ctx) {
  auto check = [](std::string_view field, std::int64_t value) {
    if (value < 1)
      throw ContextError("dispatch context: " + std::string(field) + " must be >= 1, got " + std::to_string(value));
  };
  check("block_size", ctx.block_size);
  check("next_n", ctx.next_n);
  check("heads", ctx.heads);
}

void validate_decision(const Decision& d, const std::string& policy, const Arch& arch) {
  auto bad = [&](const std::string& what) {
    throw PolicyError("policy \"" + policy + "\" for arch \"" + arch.text + "\" returned a malformed decision (" +
                      std::string(to_string(d.path)) + "): " + what);
  };
  if (d.reason.empty()) bad("the reason is empty; every decision must say why");
  if (d.runnable()) {
    if (!d.fp8) bad("a runnable path needs an fp8 format");
    if (!d.layout) bad("a runnable path needs the KV layout it reads");
  } else {
    if (d.fp8 || d.layout) bad("an unsupported decision must not carry an fp8 format or a layout");
  }
}

Decision make(Path path, std::optional<Fp8Format> fp8, std::optional<KvLayout> layout, std::string reason) {
  Decision d;
  d.path = path;
  d.fp8 = fp8;
  d.layout = layout;
  d.reason = std::move(reason);
  return d;
}

Decision unsupported(std::string reason) { return make(Path::unsupported, std::nullopt, std::nullopt, std::move(reason)); }

std::string guard_text(const std::vector<std::string>& targets) {
  return targets.empty() ? std::string("no targets") : join(targets, ", ");
}

}  // namespace

std::string_view kernel_library(Vendor vendor) noexcept {
  return vendor == Vendor::amd ? std::string_view("AITER") : std::string_view("DeepGEMM");
}

std::string describe(const Context& ctx, Vendor vendor) {
  return std::string(kernel_library(vendor)) + (ctx.kernels_present ? " present" : " absent") + ", block_size " +
         std::to_string(ctx.block_size) + ", next_n " + std::to_string(ctx.next_n) + ", heads " +
         std::to_string(ctx.heads);
}

std::string Decision::summary() const {
  std::string out(to_string(path));
  if (fp8) out += ", " + std::string(to_string(*fp8));
  if (layout) out += ", " + std::string(message_name(*layout));
  return out;
}

bool same_choice(const Decision& a, const Decision& b) noexcept {
  return a.path == b.path && a.fp8 == b.fp8 && a.layout == b.layout;
}

Decision Policy::select(const Arch& arch, const Context& ctx) const {
  validate_context(ctx);
  Decision d = decide(arch, ctx);
  const std::string policy = name();
  validate_decision(d, policy, arch);
  d.kernel.clear();
  if (d.path == Path::fused)
    if (const ArchInfo* info = table().find(arch.target); info && info->pmqa_fused_kernel) d.kernel = *info->pmqa_fused_kernel;
  d.trace_id = Trace::global().record(arch, ctx, policy, d);
  return d;
}

DefaultPolicy::DefaultPolicy(DefaultPolicyOptions options, const ArchTable& table, std::string name)
    : options_(std::move(options)), table_(&table), name_(std::move(name)) {
  auto check = [&](const std::vector<std::string>& targets, Vendor vendor, std::string_view option) {
    for (const auto& t : targets) {
      const ArchInfo* info = table.find(t);
      std::string problem;
      if (!info)
        problem = "is not in the arch table";
      else if (info->vendor != vendor)
        problem = "is not an " + std::string(to_string(vendor)) + " target";
      else if (!info->has_fp8())
        problem = "has no fp8, so no fused fp8 kernel can run there";
      if (!problem.empty())
        throw ArchTableError("policy \"" + name_ + "\": " + std::string(option) + " names \"" + t + "\", which " +
                             problem);
    }
  };
  check(options_.rocm_fused_targets, Vendor::amd, "rocm_fused_targets");
  check(options_.nvidia_fused_targets, Vendor::nvidia, "nvidia_fused_targets");
}

Decision DefaultPolicy::decide(const Arch& arch, const Context& ctx) const {
  const ArchInfo& info = table_->at(arch);  // UnknownArchError: never a fallback
  const std::string who = info.label();
  if (!info.fp8)
    return unsupported(who + " (" + info.family + ") has no fp8 instructions, so FP8 paged MQA logits cannot run there");
  const Fp8Format fmt = *info.fp8;
  const std::string fmt_text(to_string(fmt));

  if (info.vendor == Vendor::amd) {
    if (!ctx.kernels_present)
      return make(Path::reference_fallback, fmt, KvLayout::normal,
                  "AITER is absent, so the framework's eager reference runs on " + who + " (" + fmt_text +
                      ", NORMAL layout)");
    const std::string guard = guard_text(options_.rocm_fused_targets);
    if (contains(options_.rocm_fused_targets, info.target)) {
      if (ctx.block_size == 1)
        return make(Path::fused, fmt, KvLayout::normal,
                    "AITER present and " + info.target + " is in the fused guard (" + guard +
                        "): the fused kernel runs in " + fmt_text + " and reads NORMAL because block_size is 1");
      if (ctx.block_size % 16 != 0)
        return unsupported("AITER present and " + info.target + " is in the fused guard (" + guard +
                           "), whose kernel reads SHUFFLE when block_size > 1; SHUFFLE needs block_size % 16 == 0, "
                           "got block_size " +
                           std::to_string(ctx.block_size));
      return make(Path::fused, fmt, KvLayout::shuffle,
                  "AITER present and " + info.target + " is in the fused guard (" + guard +
                      "): the fused kernel runs in " + fmt_text + " and reads SHUFFLE because block_size " +
                      std::to_string(ctx.block_size) + " > 1");
    }
    std::string reason = "AITER present but " + info.target + " is not in the fused guard (" + guard +
                         "): the two-stage path (stage 1 + head sum) runs in " + fmt_text + " and reads NORMAL";
    if (info.fused_kernel_library)
      reason += "; note: " + *info.fused_kernel_library + " itself ships a fused kernel for " + info.target +
                ", which this guard leaves unused (the slow path, spec §6 bug class 1)";
    return make(Path::two_stage, fmt, KvLayout::normal, std::move(reason));
  }

  // NVIDIA
  if (!contains(options_.nvidia_fused_targets, info.target))
    return make(Path::reference_fallback, fmt, KvLayout::normal,
                "DeepGEMM's fp8 paged MQA logits kernel supports " + guard_text(options_.nvidia_fused_targets) +
                    " only, so " + who + " runs the framework's eager reference (" + fmt_text + ", NORMAL layout)");
  if (!ctx.kernels_present)
    return make(Path::reference_fallback, fmt, KvLayout::normal,
                "DeepGEMM is absent, so the framework's eager reference runs on " + who + " (" + fmt_text +
                    ", NORMAL layout)");
  std::vector<std::string> broken;
  if (ctx.block_size != 64) broken.push_back("block_size 64 only (got " + std::to_string(ctx.block_size) + ")");
  if (ctx.next_n != 1 && ctx.next_n != 2) broken.push_back("next_n 1 or 2 only (got " + std::to_string(ctx.next_n) + ")");
  if (ctx.heads != 32 && ctx.heads != 64) broken.push_back("heads 32 or 64 only (got " + std::to_string(ctx.heads) + ")");
  if (!broken.empty())
    return unsupported("DeepGEMM's fused kernel on " + info.target + " supports " + join(broken, "; ") +
                       ": unsupported, with no silent fallback");
  return make(Path::fused, fmt, KvLayout::normal,
              "DeepGEMM present on " + who + ": its fused kernel runs in " + fmt_text +
                  " and reads NORMAL (block_size 64, next_n " + std::to_string(ctx.next_n) + ", heads " +
                  std::to_string(ctx.heads) + " are within its limits)");
}

FunctionPolicy::FunctionPolicy(std::string name, DecideFn decide) : name_(std::move(name)), decide_(std::move(decide)) {
  if (!decide_) throw std::invalid_argument("FunctionPolicy \"" + name_ + "\": the decide function is empty");
}

const Policy& default_policy() {
  static const DefaultPolicy policy;
  return policy;
}

Decision select(std::string_view arch_name, const Context& ctx, const Policy& policy) {
  return policy.select(parse_arch(arch_name), ctx);
}

Decision select(const Arch& arch, const Context& ctx, const Policy& policy) { return policy.select(arch, ctx); }

bool can_read(const Decision& decision, KvLayout cache) noexcept {
  return decision.runnable() && decision.layout == cache;
}

void require_readable(const Decision& decision, KvLayout cache) {
  if (can_read(decision, cache)) return;
  if (!decision.runnable() || !decision.layout)
    throw LayoutMismatchError("path " + std::string(to_string(decision.path)) + " reads no KV cache (reason: " +
                              decision.reason + ")");
  throw LayoutMismatchError("path " + std::string(to_string(decision.path)) + " reads " +
                            std::string(message_name(*decision.layout)) + ", the cache is " +
                            std::string(message_name(cache)) + " (reason: " + decision.reason + ")");
}

}  // namespace pmqa::dispatch
