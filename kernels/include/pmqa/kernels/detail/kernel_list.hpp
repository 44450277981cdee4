// pmqa's kernels in one ordered list per path. A run takes the first that fits the case and the
// device, or the one asked for (KernelError with its reason when that does not fit). Each kernel
// describes itself beside its code (kernels/device/pmqa_kernels/<kernel>/spec.hpp): its id (its row
// of model/kernel_id.hpp's table), its tolerance profile, the shapes it takes, why a case or a
// device does not fit it, and how it launches. A new kernel is a row of the table, a folder and an
// entry here.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "pmqa_kernels/fused_mfma/spec.hpp"
#include "pmqa_kernels/fused_mma/spec.hpp"
#include "pmqa_kernels/fused_scalar/spec.hpp"
#include "pmqa_kernels/two_stage/spec.hpp"
#include "pmqa/kernels/executor.hpp"

namespace pmqa::kernels::detail {

template <class... Specs>
struct KernelList {};

// Priority order: the matrix-unit kernels before the portable one.
using FusedKernels = KernelList<FusedWgmmaSpec, FusedMmaSyncSpec, FusedMfmaSpec, FusedScalarSpec>;
using TwoStageKernels = KernelList<TwoStageSpec>;

// Calls f.template operator()<Spec>() for each kernel serving `path`, in priority order.
template <class F>
void for_each_kernel(Path path, F&& f) {
  auto each = [&]<class... Specs>(KernelList<Specs...>) { (f.template operator()<Specs>(), ...); };
  if (path == Path::fused) each(FusedKernels{});
  else if (path == Path::two_stage) each(TwoStageKernels{});
}

template <class Spec>
constexpr bool kUsesKeyMap = requires { Spec::key_map_fits; };
template <class Spec>
constexpr bool kUsesPerHeadBuffer = requires { Spec::kPerHeadBuffer; };
// Only the kernels with tunables take a Tuning (fused_mma/tuning.hpp).
template <class Spec>
constexpr bool kTakesTuning = requires { Spec::kTakesTuning; };

// The kernel a run launches, instantiated for its fault hooks and tunables.
template <class Backend>
struct ChosenKernel {
  KernelId id = KernelId::fused_scalar;
  std::string reason;
  void (*launch)(Backend&, const LaunchArgs&) = nullptr;
  bool (*key_map_fits)(const Case&) = nullptr;  // set for a kernel that can read keys through a tensor map
  bool per_head_buffer = false;
};

// Each kernel of the path in priority order, with why it does not fit ("" when it does).
inline std::vector<KernelFit> fits_of(Path path, const Case& c, const DeviceCaps& d) {
  std::vector<KernelFit> out;
  for_each_kernel(path, [&]<class Spec>() { out.push_back({Spec::kId, Spec::unfit(c, d)}); });
  return out;
}

// The kernel asked for, else the first that fits; the reason names the ones passed over.
template <class Hooks, class Tuning, class Backend>
ChosenKernel<Backend> choose_kernel(Path path, const Case& c, const DeviceCaps& d, std::optional<KernelId> asked) {
  if (!is_kernel_path(path)) throw KernelError("the kernels run the fused and two-stage paths, not " + std::string(to_string(path)));
  if (asked && path_of(*asked) != path)
    throw KernelError(std::string(to_string(*asked)) + " asked for, but it serves the " + std::string(to_string(path_of(*asked))) +
                      " path, not " + std::string(to_string(path)));
  std::optional<ChosenKernel<Backend>> pick;
  std::string passed;
  for_each_kernel(path, [&]<class Spec>() {
    if (pick || (asked && *asked != Spec::kId)) return;
    const std::string why = Spec::unfit(c, d);
    if (!why.empty()) {
      if (asked) throw KernelError(std::string(to_string(Spec::kId)) + " asked for, but " + why);
      passed += (passed.empty() ? "" : "; ") + std::string(to_string(Spec::kId)) + " does not: " + why;
      return;
    }
    ChosenKernel<Backend> k;
    k.id = Spec::kId;
    k.reason = asked ? "asked for" : passed.empty() ? "the first of the path's kernels, and it fits" : "the first that fits (" + passed + ")";
    if constexpr (kTakesTuning<Spec>) k.launch = &Spec::template launch<Hooks, Backend, Tuning>;
    else k.launch = &Spec::template launch<Hooks, Backend>;
    if constexpr (kUsesKeyMap<Spec>) k.key_map_fits = &Spec::key_map_fits;
    k.per_head_buffer = kUsesPerHeadBuffer<Spec>;
    pick = std::move(k);
  });
  if (!pick) throw KernelError("no kernel of the " + std::string(to_string(path)) + " path fits: " + passed);
  return *pick;
}

// Calls f.template operator()<Spec>() for the spec of `id`.
template <class F>
void with_spec(KernelId id, F&& f) {
  bool found = false;
  for_each_kernel(path_of(id), [&]<class Spec>() {
    if (Spec::kId != id) return;
    found = true;
    f.template operator()<Spec>();
  });
  if (!found) throw std::logic_error("kernel " + std::string(to_string(id)) + " is in the kernel table but not in the kernel list");
}

// A kernel's tolerance profile (spec §5: accumulator precision is a property of the kernel).
inline Tolerance kernel_tolerance(KernelId id) {
  Tolerance t = Tolerance::fp32();
  with_spec(id, [&]<class Spec>() { t = Spec::tolerance(); });
  return t;
}

// The shapes a kernel takes beyond those of every kernel.
inline KernelShapes kernel_shapes(KernelId id) {
  KernelShapes s;
  with_spec(id, [&]<class Spec>() { s = Spec::shapes(); });
  return s;
}

}  // namespace pmqa::kernels::detail
