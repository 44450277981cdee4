// The path-selection policy (spec §4): which kernel path runs FP8 paged MQA logits for an arch, with
// which fp8 format and KV value layout, and why. The policy is an interface so tests and users can
// inject another one (a pre-fix guard, a framework's own rules); every decision any policy makes
// through Policy::select is recorded in the process trace (trace.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pmqa/dispatch/arch.hpp"
#include "pmqa/dispatch/arch_table.hpp"
#include "pmqa/model/case.hpp"
#include "pmqa/model/fp8_format.hpp"
#include "pmqa/model/path.hpp"

namespace pmqa::dispatch {

// The path a decision takes (fused, two-stage, reference-fallback, unsupported), and the KV layouts
// and fp8 formats a decision names, with their spellings: the model's, one of each (to_string for
// files and JSON, message_name for "NORMAL" / "SHUFFLE" in messages and summaries).
using pmqa::to_string;
using pmqa::message_name;
using pmqa::parse_kv_layout;
using pmqa::parse_fp8_format;

// The kernel library a vendor's dispatch depends on: "AITER" (ROCm), "DeepGEMM" (NVIDIA).
std::string_view kernel_library(Vendor vendor) noexcept;

// What the caller knows besides the arch.
struct Context {
  bool kernels_present = true;   // the kernel library (AITER on ROCm, DeepGEMM on NVIDIA) is importable
  std::int64_t block_size = 64;  // tokens per KV block
  std::int64_t next_n = 1;       // query tokens per sequence
  std::int64_t heads = 64;       // H

  friend bool operator==(const Context&, const Context&) = default;
};

// "AITER present, block_size 64, next_n 1, heads 64"
std::string describe(const Context& ctx, Vendor vendor);

// A context no policy can reason about (block_size, next_n or heads below 1): names the field.
class ContextError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct Decision {
  Path path = Path::unsupported;
  std::optional<Fp8Format> fp8;    // set when runnable: the format q and the KV values are in
  std::optional<KvLayout> layout;  // set when runnable: the KV value layout the path reads
  std::string reason;              // never empty
  std::uint64_t trace_id = 0;      // the trace entry Policy::select recorded (0: not recorded)
  // For the fused path: pmqa's kernel serving it on this arch (the arch table's pmqa_fused_kernel,
  // "fused-mfma" on gfx942/gfx950, ...); empty otherwise. Filled in by Policy::select.
  std::string kernel;

  bool runnable() const noexcept { return path != Path::unsupported; }
  std::string summary() const;  // "fused, e4m3fn, SHUFFLE" / "unsupported"
};

// Same path, format and layout (reason and trace id aside).
bool same_choice(const Decision& a, const Decision& b) noexcept;

// A policy that broke the Decision invariants (runnable without a format or layout, an unsupported
// decision carrying one, an empty reason). Names the policy and the arch.
class PolicyError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  // The arch table this policy decides from (the built-in one unless a policy says otherwise).
  virtual const ArchTable& table() const { return ArchTable::builtin(); }

  // The decision for `arch` in `ctx`, recorded in the process trace (its id in Decision::trace_id).
  // Throws ContextError for an invalid context, and whatever the policy throws (the default policy:
  // UnknownArchError for an arch the table does not know); PolicyError for a malformed decision.
  Decision select(const Arch& arch, const Context& ctx) const;

 protected:
  virtual Decision decide(const Arch& arch, const Context& ctx) const = 0;
};

// The spec's policy (§4, after the gfx950 fix), over an arch table:
//  - no fp8 instructions (gfx90a, gfx11xx): unsupported;
//  - ROCm, AITER absent: reference fallback, the arch's format, NORMAL;
//  - ROCm, AITER present, target in rocm_fused_targets: fused, the arch's format, SHUFFLE when
//    block_size > 1 (which needs block_size % 16 == 0, else unsupported), NORMAL when 1;
//  - ROCm, AITER present, any other target: two-stage, NORMAL;
//  - NVIDIA target not in nvidia_fused_targets (sm_89): reference fallback, NORMAL;
//  - NVIDIA, DeepGEMM absent: reference fallback, NORMAL;
//  - NVIDIA, DeepGEMM present: fused, NORMAL, within DeepGEMM's limits (block_size 64, next_n 1 or 2,
//    heads 32 or 64); outside them unsupported, the reason naming each limit broken.
// A target the table does not know throws UnknownArchError. Feature flags never matter.
struct DefaultPolicyOptions {
  std::vector<std::string> rocm_fused_targets{"gfx942", "gfx950"};  // vLLM's guard after PR 42062
  std::vector<std::string> nvidia_fused_targets{"sm_90", "sm_100"};  // the arches DeepGEMM's kernel supports
};

class DefaultPolicy final : public Policy {
 public:
  // Throws ArchTableError when an option names a target the table does not have, of the wrong
  // vendor, or without fp8. The table must outlive the policy.
  explicit DefaultPolicy(DefaultPolicyOptions options = {}, const ArchTable& table = ArchTable::builtin(),
                         std::string name = "default");
  std::string name() const override { return name_; }
  const DefaultPolicyOptions& options() const noexcept { return options_; }
  const ArchTable& table() const noexcept override { return *table_; }

 protected:
  Decision decide(const Arch& arch, const Context& ctx) const override;

 private:
  DefaultPolicyOptions options_;
  const ArchTable* table_;
  std::string name_;
};

// A policy from a function: how tests inject a buggy guard, and how users plug in their own rules.
class FunctionPolicy final : public Policy {
 public:
  using DecideFn = std::function<Decision(const Arch&, const Context&)>;
  FunctionPolicy(std::string name, DecideFn decide);
  std::string name() const override { return name_; }

 protected:
  Decision decide(const Arch& arch, const Context& ctx) const override { return decide_(arch, ctx); }

 private:
  std::string name_;
  DecideFn decide_;
};

// The spec's policy over the built-in table (one instance per process).
const Policy& default_policy();

// parse_arch(name) then policy.select. Throws ArchParseError, UnknownArchError, ContextError.
Decision select(std::string_view arch_name, const Context& ctx, const Policy& policy = default_policy());
Decision select(const Arch& arch, const Context& ctx, const Policy& policy = default_policy());

// The KV cache holds its values in `cache` layout; can the decided path read it?
class LayoutMismatchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
bool can_read(const Decision& decision, KvLayout cache) noexcept;
// Throws LayoutMismatchError, e.g. "path fused reads SHUFFLE, the cache is NORMAL (reason: ...)",
// or for an unsupported decision "path unsupported reads no KV cache (reason: ...)".
void require_readable(const Decision& decision, KvLayout cache);

}  // namespace pmqa::dispatch
