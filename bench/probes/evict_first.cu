// What the wgmma kernel's evict-first key copies (fused_mma/tuning.hpp, kEvictFirst) gain at the
// DeepSeek-V3.2 decode shape (next_n 1): the shipped launch beside the same launch with the key
// copies on L2's default policy, timed as the GPU benchmark times fused-mma (L2 flushed by a
// memset, device events around one launch, median of many). Both outputs are correct: the probe
// changes a tunable, never a result. (The stage ablations that once left a stage out lived in the
// shipped kernel as branches; they were measured once, bench/results/notes.md, and removed.)
//
//   pmqa_probe_evict_first [--reps N]
#include <hip/hip_runtime.h>

#include <cstdio>

#include "gpu_timing.hpp"
#include "pmqa/kernels/lab_hip.hpp"
#include "probes.hpp"

namespace {

using pmqa::Path;
using pmqa::kernels::lab::HipBackend;
using pmqa::kernels::lab::PreparedRun;

template <class Tuning>
double time_tuned(HipBackend& be, const pmqa::Case& c, pmqa::bench::L2Flusher& flusher, int reps) {
  PreparedRun<HipBackend, pmqa::kdev::Faithful, Tuning> run(be, Path::fused, c, {.kernel = pmqa::KernelId::fused_wgmma});
  return pmqa::bench::time_us([&] { run.launch(); }, &flusher, reps) / 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<int> reps_arg = pmqa::bench::reps_option(argc, argv, 50, "pmqa_probe_evict_first");
  if (!reps_arg) return 2;
  const auto gpu = pmqa::kernels::find_gpu();
  if (!gpu) {
    std::printf("pmqa_probe_evict_first: no GPU found: nothing measured\n");
    return 77;
  }
  try {
    if (!pmqa::kernels::lab::device_runs_wgmma(gpu->cc_major, gpu->cc_minor)) {
      std::printf("pmqa_probe_evict_first: %s does not run the wgmma kernel: nothing measured\n", gpu->name.c_str());
      return 77;
    }
    HipBackend be(gpu->device, gpu->multiprocessors, pmqa::kernels::make_gpu_executor(gpu->device)->caps());
    pmqa::bench::L2Flusher flusher(be, std::size_t{512} << 20);
    const int reps = *reps_arg;
    const pmqa::Case c = pmqa::bench::decode_case(64, 8192, 1, 16384, false);
    namespace pr = pmqa::probes;
    const double shipped = time_tuned<pmqa::kdev::Shipped>(be, c, flusher, reps);
    const double default_l2 = time_tuned<pr::NoEvictFirst<>>(be, c, flusher, reps);
    std::printf("fused-mma key copies (%s; decode shape, next_n 1; ms, median of %d):\n", gpu->name.c_str(), reps);
    std::printf("  evict-first (shipped) %.4f ms | L2 default policy %.4f ms\n", shipped, default_l2);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pmqa_probe_evict_first: %s\n", e.what());
    return 2;
  }
}
