// Where the time of one fused-mma launch goes (the wgmma kernel, sm_90a), measured inside it:
// thread 0 of every CTA stamps %globaltimer and clock64 at the kernel's WgMark points (entry, share
// known, first copies issued, loop start, each chunk landed and folded, end). From one L2-flushed
// launch (the median of several by device events) it prints, across CTAs, when each point is
// reached; per CTA, how long each step takes; per SM, when its CTAs end; and over the launch, how
// many chunks land per microsecond (the bandwidth the kernel achieves while it runs). Cases: the
// decode shape as built, with the key copies on L2's default policy, and without key copies; one
// short sequence (the fixed costs); and an empty kernel of the same grid (the launch alone, as the
// events see it).
//
//   pmqa_probe_timeline [--reps N]
#include <hip/hip_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "pmqa/fixtures/generate.hpp"
#include "pmqa/fixtures/rng.hpp"
#include "pmqa/kernels/lab_hip.hpp"
#include "gpu_timing.hpp"
#include "probes.hpp"

namespace {

using pmqa::kdev::WgMark;
using pmqa::Path;
using pmqa::kernels::lab::HipBackend;
using pmqa::kernels::lab::PreparedRun;
using pmqa::bench::decode_case;
using pmqa::bench::Events;
using pmqa::bench::L2Flusher;

constexpr int kMaxCtas = 2048;
__device__ unsigned long long g_time[kMaxCtas * WgMark::kPoints];  // %globaltimer, ns (0: not reached)
__device__ long long g_clock[kMaxCtas * WgMark::kPoints];          // the SM's cycle counter
__device__ unsigned g_smid[kMaxCtas];                               // the SM a CTA ran on

// Stamps the time as each CTA passes a WgMark point (the wgmma kernel calls Probe::mark).
struct TimelineProbe : pmqa::kdev::NoProbe {
  static __device__ void mark(int point) {
    if (threadIdx.x != 0 || blockIdx.x >= kMaxCtas) return;
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
    const int at = static_cast<int>(blockIdx.x) * WgMark::kPoints + point;
    g_clock[at] = clock64();
    g_time[at] = t;
    if (point == WgMark::kEntry) {
      unsigned sm;
      asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
      g_smid[blockIdx.x] = sm;
    }
  }
};
using Timeline = pmqa::probes::Probed<TimelineProbe>;
using TimelineNoEvictFirst = pmqa::probes::NoEvictFirst<TimelineProbe>;

__global__ void empty_kernel(int) {}

// One launch's stamps, copied back.
struct Stamps {
  double event_us = 0;
  std::vector<unsigned long long> time;
  std::vector<long long> clock;
  std::vector<unsigned> smid;
  unsigned long long t(int cta, int point) const { return time[static_cast<std::size_t>(cta) * WgMark::kPoints + point]; }
  long long c(int cta, int point) const { return clock[static_cast<std::size_t>(cta) * WgMark::kPoints + point]; }
};

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

// One line per row: its label, then min, p50, p90 and max of its values (rows without values are
// left out).
struct Row {
  const char* label;
  const std::vector<double>& v;
};
void print_rows(std::initializer_list<Row> rows) {
  for (const Row& r : rows)
    if (!r.v.empty())
      std::printf("  %-34s %8.2f %8.2f %8.2f %8.2f\n", r.label, quantile(r.v, 0), quantile(r.v, 0.5), quantile(r.v, 0.9),
                  quantile(r.v, 1));
}

// Every launch's stamps, sorted by their event time (the median is the one printed).
template <class Launch>
std::vector<Stamps> timed_all(Launch&& launch, L2Flusher& flusher, int reps) {
  void *time_at = nullptr, *clock_at = nullptr, *smid_at = nullptr;
  PMQA_HIP_CHECK(hipGetSymbolAddress(&time_at, HIP_SYMBOL(g_time)));
  PMQA_HIP_CHECK(hipGetSymbolAddress(&clock_at, HIP_SYMBOL(g_clock)));
  PMQA_HIP_CHECK(hipGetSymbolAddress(&smid_at, HIP_SYMBOL(g_smid)));
  for (int i = 0; i < 3; ++i) launch();
  Events ev;
  std::vector<Stamps> runs;
  for (int i = 0; i < reps; ++i) {
    PMQA_HIP_CHECK(hipMemset(time_at, 0, sizeof(g_time)));
    flusher.flush();
    PMQA_HIP_CHECK(hipEventRecord(ev.start, 0));
    launch();
    PMQA_HIP_CHECK(hipEventRecord(ev.stop, 0));
    Stamps s;
    s.event_us = ev.ms() * 1e3;
    s.time.resize(kMaxCtas * WgMark::kPoints);
    s.clock.resize(kMaxCtas * WgMark::kPoints);
    PMQA_HIP_CHECK(hipMemcpy(s.time.data(), time_at, sizeof(g_time), hipMemcpyDeviceToHost));
    PMQA_HIP_CHECK(hipMemcpy(s.clock.data(), clock_at, sizeof(g_clock), hipMemcpyDeviceToHost));
    s.smid.resize(kMaxCtas);
    PMQA_HIP_CHECK(hipMemcpy(s.smid.data(), smid_at, sizeof(g_smid), hipMemcpyDeviceToHost));
    runs.push_back(std::move(s));
  }
  std::sort(runs.begin(), runs.end(), [](const Stamps& a, const Stamps& b) { return a.event_us < b.event_us; });
  return runs;
}
template <class Launch>
Stamps timed(Launch&& launch, L2Flusher& flusher, int reps) {
  std::vector<Stamps> runs = timed_all(launch, flusher, reps);
  return std::move(runs[runs.size() / 2]);
}

// Which of each CTA's chunks start a new sequence (its q tile reloaded), from the kernel's split
// of the live chunks (schedule/chunk_work.hpp, find_share): the launch laid out sequence by sequence as
// `weight` switch slots then the sequence's chunks, cut into equal contiguous parts; a part
// takes the chunk slots inside it. A part's first chunk is loaded in the prologue, not switched to.
std::vector<std::vector<bool>> sequence_starts(const std::vector<std::int64_t>& chunks_per_seq, int ctas, std::uint32_t weight) {
  std::vector<int> slot;  // over all slots: -1 a switch slot, 1 a sequence's first chunk, 0 another chunk
  for (const std::int64_t n : chunks_per_seq) {
    if (n > 0) slot.insert(slot.end(), weight, -1);
    for (std::int64_t c = 0; c < n; ++c) slot.push_back(c == 0 ? 1 : 0);
  }
  const auto total = static_cast<std::int64_t>(slot.size());
  std::vector<std::vector<bool>> starts(static_cast<std::size_t>(ctas));
  for (int b = 0; b < ctas; ++b) {
    const std::int64_t begin = total * b / ctas, end = total * (b + 1) / ctas;
    for (std::int64_t i = begin; i < end; ++i) {
      const int s = slot[static_cast<std::size_t>(i)];
      if (s >= 0) starts[b].push_back(!starts[b].empty() && s == 1);
    }
  }
  return starts;
}

// Spearman's rank correlation of two equally long series (no tie correction: the stamps are
// 32-ns steps, ties are rare and only shrink it).
double rank_correlation(const std::vector<double>& a, const std::vector<double>& b) {
  auto ranks = [](const std::vector<double>& v) {
    std::vector<std::size_t> order(v.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return v[i] < v[j]; });
    std::vector<double> r(v.size());
    for (std::size_t i = 0; i < order.size(); ++i) r[order[i]] = static_cast<double>(i);
    return r;
  };
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size()), mean = (n - 1) / 2;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - mean) * (rb[i] - mean);
    saa += (ra[i] - mean) * (ra[i] - mean);
    sbb += (rb[i] - mean) * (rb[i] - mean);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0;
}

// Whether the late ones are late in every launch: the rank correlation, between consecutive
// launches (sorted by event time), of each SM's mean CTA end and of each CTA's end, and how many
// CTAs ran on the same SM as in the launch before. The split is the same in every launch, the
// placement is not: SMs late in every launch while their CTAs change are slow by their place in
// the chip, which no split by CTA can know; CTAs late in every launch are slow by their share.
void print_consistency(const std::vector<Stamps>& runs, int ctas) {
  std::vector<double> by_sm, by_cta, same_sm;
  auto ends = [&](const Stamps& s, std::map<unsigned, std::vector<double>>& per_sm, std::vector<double>& per_cta) {
    for (int b = 0; b < ctas; ++b) {
      const double e = static_cast<double>(s.t(b, WgMark::kEnd) - s.t(b, WgMark::kEntry));
      per_cta.push_back(e);
      per_sm[s.smid[static_cast<std::size_t>(b)]].push_back(e);
    }
  };
  for (std::size_t i = 1; i < runs.size(); ++i) {
    std::map<unsigned, std::vector<double>> sa, sb;
    std::vector<double> ca, cb, ma, mb;
    ends(runs[i - 1], sa, ca);
    ends(runs[i], sb, cb);
    for (const auto& [sm, e] : sa)
      if (sb.count(sm)) {
        ma.push_back(std::accumulate(e.begin(), e.end(), 0.0) / static_cast<double>(e.size()));
        mb.push_back(std::accumulate(sb[sm].begin(), sb[sm].end(), 0.0) / static_cast<double>(sb[sm].size()));
      }
    by_sm.push_back(rank_correlation(ma, mb));
    by_cta.push_back(rank_correlation(ca, cb));
    int same = 0;
    for (int b = 0; b < ctas; ++b) same += runs[i].smid[static_cast<std::size_t>(b)] == runs[i - 1].smid[static_cast<std::size_t>(b)];
    same_sm.push_back(same);
  }
  std::printf("  %-34s %8s %8s %8s %8s   (rank correlation, consecutive launches)\n", "same late ones?", "min", "p50",
              "p90", "max");
  print_rows({{"an SM's mean CTA end (run time)", by_sm}, {"a CTA's end - entry", by_cta},
              {"CTAs on the SM of the launch before", same_sm}});
}

void print_timeline(const char* name, const Stamps& s, int ctas, int waves, double chunk_bytes,
                    const std::vector<std::vector<bool>>& starts) {
  unsigned long long t0 = ~0ull;
  for (int b = 0; b < ctas; ++b)
    if (s.t(b, WgMark::kEntry)) t0 = std::min(t0, s.t(b, WgMark::kEntry));
  auto since = [&](int b, int point) { return (static_cast<double>(s.t(b, point)) - static_cast<double>(t0)) * 1e-3; };
  // The SM clock, from each CTA's stamps at its entry and its end (globaltimer is coarse: its
  // smallest step is printed below; within a CTA the cycle counter times the steps).
  std::vector<double> ghz;
  std::vector<unsigned long long> all;  // every stamp: their smallest gap is the timer's step
  for (int b = 0; b < ctas; ++b) {
    const double dt = static_cast<double>(s.t(b, WgMark::kEnd) - s.t(b, WgMark::kEntry));
    if (s.t(b, WgMark::kEntry) && dt > 2000) ghz.push_back(static_cast<double>(s.c(b, WgMark::kEnd) - s.c(b, WgMark::kEntry)) / dt);
    for (int q = 0; q < WgMark::kPoints; ++q)
      if (s.t(b, q)) all.push_back(s.t(b, q));
  }
  std::sort(all.begin(), all.end());
  unsigned long long step = 0;
  for (std::size_t i = 1; i < all.size(); ++i)
    if (all[i] != all[i - 1] && (step == 0 || all[i] - all[i - 1] < step)) step = all[i] - all[i - 1];
  const double clock_ghz = ghz.empty() ? 1.98 : quantile(ghz, 0.5);
  std::printf("\n%s: events %.1f us; %d CTAs; SM clock %.2f GHz; globaltimer step %llu ns\n", name, s.event_us,
              ctas, clock_ghz, step);

  std::printf("  %-34s %8s %8s %8s %8s   (us after the first CTA's entry)\n", "point reached", "min", "p50", "p90", "max");
  const struct { const char* label; int point; } points[] = {{"entry", WgMark::kEntry},
                                                            {"share known", WgMark::kShare},
                                                            {"first copies issued", WgMark::kFirstIssue},
                                                            {"loop start (q, tails done)", WgMark::kLoop},
                                                            {"first chunk landed", WgMark::landed(0)},
                                                            {"end", WgMark::kEnd}};
  for (const auto& pt : points) {
    std::vector<double> v;
    for (int b = 0; b < ctas; ++b)
      if (s.t(b, pt.point)) v.push_back(since(b, pt.point));
    print_rows({{pt.label, v}});
  }

  // Per CTA, by its cycle counter: each step of the prologue, and per chunk the wait for its bytes
  // (from the previous chunk's end) and its compute (landed -> folded).
  auto us = [&](long long cycles) { return static_cast<double>(cycles) / clock_ghz * 1e-3; };
  std::vector<double> share, issue, to_loop, first_wait, wait, compute, compute_switch, chunks, stream, stream_switch;
  for (int b = 0; b < ctas; ++b) {
    if (!s.t(b, WgMark::kEntry)) continue;
    share.push_back(us(s.c(b, WgMark::kShare) - s.c(b, WgMark::kEntry)));
    issue.push_back(us(s.c(b, WgMark::kFirstIssue) - s.c(b, WgMark::kShare)));
    to_loop.push_back(us(s.c(b, WgMark::kLoop) - s.c(b, WgMark::kFirstIssue)));
    int n = 0;
    while (n < WgMark::kChunks && s.t(b, WgMark::landed(n))) ++n;
    chunks.push_back(n);
    if (n == 0) continue;
    first_wait.push_back(us(s.c(b, WgMark::landed(0)) - s.c(b, WgMark::kLoop)));
    bool switches = false;
    for (int i = 0; i < n; ++i) {
      const bool starts_sequence = static_cast<std::size_t>(i) < starts[b].size() && starts[b][i];
      switches = switches || starts_sequence;
      (starts_sequence ? compute_switch : compute).push_back(us(s.c(b, WgMark::folded(i)) - s.c(b, WgMark::landed(i))));
      if (i > 0) wait.push_back(us(s.c(b, WgMark::landed(i)) - s.c(b, WgMark::folded(i - 1))));
    }
    (switches ? stream_switch : stream).push_back(us(s.c(b, WgMark::kEnd) - s.c(b, WgMark::kLoop)));
  }
  std::printf("  %-34s %8s %8s %8s %8s   (us, per CTA or per chunk)\n", "step", "min", "p50", "p90", "max");
  print_rows({{"entry -> share known", share},          {"share -> first copies issued", issue},
              {"issued -> loop start", to_loop},        {"loop start -> first chunk landed", first_wait},
              {"wait for a later chunk's bytes", wait}, {"one chunk's compute", compute},
              {"... a chunk starting a sequence", compute_switch},
              {"loop, CTAs on one sequence", stream},   {"loop, CTAs crossing a sequence", stream_switch},
              {"chunks per CTA (count)", chunks}});

  // The ends grouped by SM: whether CTAs of one SM finish apart (work shared inside an SM would
  // even them out) or whole SMs finish late (only sharing across SMs would). "mean end" is where
  // an SM would end if its CTAs finished together at its total rate.
  std::map<unsigned, std::vector<double>> ends_by_sm;
  for (int b = 0; b < ctas; ++b)
    if (s.t(b, WgMark::kEnd)) ends_by_sm[s.smid[static_cast<std::size_t>(b)]].push_back(since(b, WgMark::kEnd));
  std::vector<double> last, first, mean, spread, per_sm;
  for (const auto& [sm, e] : ends_by_sm) {
    const auto [lo, hi] = std::minmax_element(e.begin(), e.end());
    last.push_back(*hi);
    first.push_back(*lo);
    spread.push_back(*hi - *lo);
    mean.push_back(std::accumulate(e.begin(), e.end(), 0.0) / static_cast<double>(e.size()));
    per_sm.push_back(static_cast<double>(e.size()));
  }
  std::printf("  %-34s %8s %8s %8s %8s   (us after the first entry, over %zu SMs)\n", "by SM", "min", "p50", "p90", "max",
              ends_by_sm.size());
  print_rows({{"an SM's first CTA end", first}, {"an SM's mean CTA end", mean}, {"an SM's last CTA end", last},
              {"last - first end in one SM", spread}, {"CTAs per SM (count)", per_sm}});

  // Whether the late SMs are those whose CTAs cross into a new sequence (the split's fixed
  // costs) or not (the SM's own rate): mean CTA end of SMs by how many of their CTAs cross.
  std::map<unsigned, int> crossing_by_sm;
  for (int b = 0; b < ctas; ++b) {
    const auto& st = starts[static_cast<std::size_t>(b)];
    if (s.t(b, WgMark::kEnd)) crossing_by_sm[s.smid[static_cast<std::size_t>(b)]] += std::count(st.begin(), st.end(), true) > 0;
  }
  std::map<int, std::vector<double>> mean_by_crossing;
  for (const auto& [sm, e] : ends_by_sm)
    mean_by_crossing[crossing_by_sm[sm]].push_back(std::accumulate(e.begin(), e.end(), 0.0) / static_cast<double>(e.size()));
  for (const auto& [n, v] : mean_by_crossing) {
    const std::string label = "mean end, SMs with " + std::to_string(n) + " crossing";
    print_rows({{label.c_str(), v}});
  }

  // The ends by wave (CTA b is in wave b * waves / CTAs: the grid launches as `waves` waves of
  // one CTA per SM) and by the order the CTAs of one SM entered: whether the schedulers favour
  // the CTAs that came first.
  std::map<unsigned, std::vector<std::pair<unsigned long long, int>>> entries_by_sm;
  for (int b = 0; b < ctas; ++b)
    if (s.t(b, WgMark::kEnd)) entries_by_sm[s.smid[static_cast<std::size_t>(b)]].push_back({s.t(b, WgMark::kEntry), b});
  std::vector<std::vector<double>> end_by_wave(static_cast<std::size_t>(waves)), loop_by_wave(end_by_wave),
      chunks_by_wave(end_by_wave), end_by_rank(end_by_wave);
  int rank_is_wave = 0, ranked = 0;
  for (auto& [sm, e] : entries_by_sm) {
    std::sort(e.begin(), e.end());
    for (std::size_t r = 0; r < e.size() && r < static_cast<std::size_t>(waves); ++r) {
      const int b = e[r].second;
      const auto wave = static_cast<std::size_t>(std::int64_t{b} * waves / ctas);
      end_by_rank[r].push_back(since(b, WgMark::kEnd));
      end_by_wave[wave].push_back(since(b, WgMark::kEnd));
      loop_by_wave[wave].push_back(us(s.c(b, WgMark::kEnd) - s.c(b, WgMark::kLoop)));
      int n = 0;
      while (n < WgMark::kChunks && s.t(b, WgMark::landed(n))) ++n;
      chunks_by_wave[wave].push_back(n);
      rank_is_wave += wave == r;
      ++ranked;
    }
  }
  std::printf("  %-34s %8s %8s %8s %8s   (us; wave = CTA * %d / %d; %d of %d CTAs entered their SM in wave order)\n",
              "by wave", "min", "p50", "p90", "max", waves, ctas, rank_is_wave, ranked);
  for (std::size_t w = 0; w < end_by_wave.size(); ++w) {
    const std::string end = "wave " + std::to_string(w) + ": end", loop = "wave " + std::to_string(w) + ": loop",
                      count = "wave " + std::to_string(w) + ": chunks (count)",
                      rank = "entry rank " + std::to_string(w) + " in its SM: end";
    print_rows({{end.c_str(), end_by_wave[w]}, {loop.c_str(), loop_by_wave[w]}, {count.c_str(), chunks_by_wave[w]},
                {rank.c_str(), end_by_rank[w]}});
  }

  // Chunks landed per 2-us bin over the launch, as GB/s of key bytes (stamps of the first
  // kChunks chunks of each CTA; at the decode shape every chunk is stamped).
  constexpr double kBin = 2.0;
  std::vector<int> bins;
  for (int b = 0; b < ctas; ++b)
    for (int i = 0; i < WgMark::kChunks && s.t(b, WgMark::landed(i)); ++i) {
      const auto at = static_cast<std::size_t>(since(b, WgMark::landed(i)) / kBin);
      if (bins.size() <= at) bins.resize(at + 1, 0);
      ++bins[at];
    }
  std::printf("  chunks landed per %.0f us (GB/s of %.0f-byte chunks):", kBin, chunk_bytes);
  for (std::size_t i = 0; i < bins.size(); ++i)
    std::printf("%s %.0f-%.0f: %d (%.0f)", i % 4 == 0 ? "\n   " : "", kBin * static_cast<double>(i),
                kBin * static_cast<double>(i + 1), bins[i], bins[i] * chunk_bytes / (kBin * 1e3));
  std::printf("\n");
}

template <class Tuning>
void run_case(const char* name, HipBackend& be, const pmqa::Case& c, L2Flusher& flusher, int reps) {
  PreparedRun<HipBackend, pmqa::kdev::Faithful, Tuning> run(be, Path::fused, c, {.kernel = pmqa::KernelId::fused_wgmma});
  const std::vector<Stamps> runs = timed_all([&] { run.launch(); }, flusher, reps);
  constexpr int kWaves = pmqa::kdev::kWgCtasPerSm<64>;
  const int ctas = std::min(static_cast<int>(be.persistent_blocks(kWaves)), kMaxCtas);
  std::vector<std::int64_t> chunks_per_seq;  // next_n 1: a sequence's live keys are its context
  for (const std::int32_t len : c.context_lens) chunks_per_seq.push_back((std::min<std::int64_t>(len, c.max_model_len) + 63) / 64);
  print_timeline((std::string(name) + ", keys by " + run.key_copies()).c_str(), runs[runs.size() / 2], ctas, kWaves,
                 64.0 * 132, sequence_starts(chunks_per_seq, ctas, Tuning::Wgmma::kSwitchWeight));
  print_consistency(runs, ctas);
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<int> reps_arg = pmqa::bench::reps_option(argc, argv, 9, "pmqa_probe_timeline");
  if (!reps_arg) return 2;
  const int reps = *reps_arg;
  const auto gpu = pmqa::kernels::find_gpu();
  if (!gpu) {
    std::printf("pmqa_probe_timeline: no GPU found: nothing measured\n");
    return 77;
  }
  try {
    const bool wgmma = pmqa::kernels::lab::device_runs_wgmma(gpu->cc_major, gpu->cc_minor);
    if (!wgmma) {
      std::printf("pmqa_probe_timeline: %s does not run the wgmma kernel: nothing measured\n", gpu->name.c_str());
      return 77;
    }
    HipBackend be(gpu->device, gpu->multiprocessors, pmqa::kernels::make_gpu_executor(gpu->device)->caps());
    L2Flusher flusher(be, std::size_t{512} << 20);
    std::printf("pmqa_probe_timeline: %s, %d SMs, median of %d L2-flushed launches per case\n", gpu->name.c_str(),
                gpu->multiprocessors, reps);
    {
      const dim3 grid(static_cast<unsigned>(be.persistent_blocks(pmqa::kdev::kWgCtasPerSm<64>)));
      const Stamps s = timed([&] { hipLaunchKernelGGL(empty_kernel, grid, dim3(128), 0, 0, 0); }, flusher, reps);
      std::printf("\nempty kernel, same grid (%u CTAs of 128 threads): events %.1f us\n", grid.x, s.event_us);
    }
    const pmqa::Case decode = decode_case(64, 8192, 1, 16384, false);
    run_case<Timeline>("decode shape, next_n 1", be, decode, flusher, reps);
    run_case<TimelineNoEvictFirst>("decode shape, next_n 1, key copies without the evict-first policy", be, decode, flusher,
                                   reps);
    run_case<Timeline>("one sequence of ~1K keys", be, decode_case(1, 1024, 1, 16384, false), flusher, reps);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pmqa_probe_timeline: %s\n", e.what());
    return 2;
  }
}
