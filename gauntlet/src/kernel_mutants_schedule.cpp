// Classes 9 and 10: synchronisation, lanes, and the work split.
#include "kernel_mutants.hpp"

namespace pmqa::gauntlet::detail {
namespace {

namespace kd = pmqa::kdev;

// Class 9, a race: __syncthreads() missing. The kernels stage q and the weights into shared memory
// and read them after a barrier; without it a thread reads entries other threads have not written
// yet (or have already overwritten with the next head chunk). Which values it sees depends on the
// interleaving, so seeded schedules give different results launch to launch.
struct MissingBarrier : kd::Faithful {
  static PMQA_DEV void barrier() {}
};

// Class 9, deterministic garbage: one lane (thread 130 of every block) adds 0.25 to the partial
// sum it contributes, as an accumulator initialised from a stale register would: stable from run
// to run, wrong against the reference.
struct GarbageInOneLane : kd::Faithful {
  static PMQA_DEV float lane_partial(float acc, unsigned thread) { return thread == 130u ? acc + 0.25f : acc; }
};

// Class 10: a grid-stride loop whose stride is sized for a hard-coded 304-CU device (MI300X,
// 4 resident blocks per CU) while run_path launches the blocks the actual device holds
// (flat_blocks(cells, resident_blocks()): 4 per OS thread on the host). On any smaller device the
// cells between the launched threads and the assumed stride are never written (the -inf fill)
// or never summed (the head sum).
struct WorkSplitFor304Cus : kd::Faithful {
  static PMQA_DEV std::int64_t grid_stride() { return std::int64_t{304} * 4 * blockDim.x; }
};

}  // namespace

void add_schedule_mutants(std::vector<Mutant>& out) {
  out.push_back(kernel_mutant(9, "missing-barrier",
                              "race: no __syncthreads() between staging q/weights in shared memory and reading them",
                              "spec §6 class 9: DeepGEMM 392, 434", "Hooks::barrier does nothing",
                              factory<MissingBarrier>("missing-barrier")));
  out.push_back(kernel_mutant(9, "garbage-in-one-lane", "deterministic garbage: thread 130 of each block adds 0.25 to its partial sum",
                              "spec §6 class 9: DeepGEMM 392, 434", "Hooks::lane_partial",
                              factory<GarbageInOneLane>("garbage-in-one-lane")));
  Mutant split = kernel_mutant(10, "work-split-for-304-cus",
                               "head-sum grid-stride loop sized for a hard-coded 304-CU device; launched for the real one",
                               "spec §6 class 10: AITER 3760", "Hooks::grid_stride",
                               factory<WorkSplitFor304Cus>("work-split-for-304-cus"));
  // Only the two-stage path's flat kernels (the -inf fill, the head sum) loop with a grid stride;
  // the fused kernels' grids cover their work exactly.
  split.not_planted_in = {KernelId::fused_wgmma, KernelId::fused_mma_sync, KernelId::fused_mfma, KernelId::fused_scalar};
  out.push_back(std::move(split));
}

}  // namespace pmqa::gauntlet::detail
