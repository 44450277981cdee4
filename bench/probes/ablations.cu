// What each stage of the fused-mma wgmma kernel costs at the DeepSeek-V3.2 decode shape (next_n
// 1): the same launch with one stage left out by a probe (probes.hpp; the output is then wrong by
// design), timed as the GPU benchmark times fused-mma (L2 flushed by a memset, device events around
// one launch, median of many). "neither" leaves the kernel's own data movement, schedule search
// and sequence switches; "keys not evict-first" puts the key copies on L2's default policy.
//
//   pmqa_probe_ablations [--reps N]
#include <hip/hip_runtime.h>

#include <cstdio>

#include "gpu_timing.hpp"
#include "pmqa/kernels/lab_hip.hpp"
#include "probes.hpp"

namespace {

using pmqa::kernels::Path;
using pmqa::kernels::lab::HipBackend;
using pmqa::kernels::lab::PreparedRun;

template <class Tuning>
double time_tuned(HipBackend& be, const pmqa::Case& c, pmqa::bench::L2Flusher& flusher, int reps) {
  PreparedRun<HipBackend, pmqa::kdev::Faithful, Tuning> run(be, Path::fused, c, {.kernel = pmqa::KernelId::fused_wgmma});
  return pmqa::bench::time_us([&] { run.launch(); }, &flusher, reps) / 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<int> reps_arg = pmqa::bench::reps_option(argc, argv, 50, "pmqa_probe_ablations");
  if (!reps_arg) return 2;
  const auto gpu = pmqa::kernels::find_gpu();
  if (!gpu) {
    std::printf("pmqa_probe_ablations: no GPU found: nothing measured\n");
    return 77;
  }
  try {
    if (!pmqa::kernels::lab::device_runs_wgmma(gpu->cc_major, gpu->cc_minor)) {
      std::printf("pmqa_probe_ablations: %s does not run the wgmma kernel: nothing measured\n", gpu->name.c_str());
      return 77;
    }
    HipBackend be(gpu->device, gpu->multiprocessors, pmqa::kernels::make_gpu_executor(gpu->device)->caps());
    pmqa::bench::L2Flusher flusher(be, std::size_t{512} << 20);
    const int reps = *reps_arg;
    const pmqa::Case c = pmqa::bench::decode_case(64, 8192, 1, 16384, false);
    namespace pr = pmqa::probes;
    const double full = time_tuned<pmqa::kdev::Shipped>(be, c, flusher, reps);
    const double no_loads = time_tuned<pr::Probed<pr::SkipKeyLoads>>(be, c, flusher, reps);
    const double no_mma = time_tuned<pr::Probed<pr::SkipMma>>(be, c, flusher, reps);
    const double no_epi = time_tuned<pr::Probed<pr::SkipEpilogue>>(be, c, flusher, reps);
    const double neither = time_tuned<pr::Probed<pr::SkipCompute>>(be, c, flusher, reps);
    const double default_l2 = time_tuned<pr::NoEvictFirst<>>(be, c, flusher, reps);
    std::printf("fused-mma ablations (%s; decode shape, next_n 1; ms, median of %d; each leaves one stage out, output "
                "wrong by design):\n",
                gpu->name.c_str(), reps);
    std::printf("  full %.4f ms | no key loads %.4f | no mma %.4f | no epilogue %.4f | neither %.4f | keys not evict-first %.4f\n",
                full, no_loads, no_mma, no_epi, neither, default_l2);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pmqa_probe_ablations: %s\n", e.what());
    return 2;
  }
}
