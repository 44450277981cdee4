#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "pmqa/dispatch/policy.hpp"
#include "pmqa/dispatch/trace.hpp"

namespace pd = pmqa::dispatch;

TEST(Trace, EveryDecisionIsRecordedWithItsReason) {
  pd::ScopedTraceRecorder rec;
  const auto a = pd::select("gfx950:sramecc+", pd::Context{true, 64, 1, 64});
  const auto b = pd::select("sm_90", pd::Context{false, 64, 2, 32});
  const auto entries = rec.entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].arch, "gfx950:sramecc+");
  EXPECT_EQ(entries[0].target, "gfx950");
  EXPECT_EQ(entries[0].policy, "default");
  EXPECT_EQ(entries[0].decision.path, pmqa::Path::fused);
  EXPECT_EQ(entries[0].decision.reason, a.reason);
  EXPECT_EQ(entries[0].id, a.trace_id);
  EXPECT_EQ(entries[1].context, (pd::Context{false, 64, 2, 32}));
  EXPECT_EQ(entries[1].decision.path, pmqa::Path::reference_fallback);
  EXPECT_EQ(entries[1].id, b.trace_id);
  EXPECT_LT(entries[0].id, entries[1].id);
  EXPECT_NE(entries[0].describe().find("gfx950:sramecc+ [AITER present, block_size 64"), std::string::npos)
      << entries[0].describe();
  // The global trace holds them too.
  EXPECT_TRUE(pd::Trace::global().find(a.trace_id).has_value());
}

TEST(Trace, ErrorsAreNotDecisions) {
  pd::ScopedTraceRecorder rec;
  EXPECT_THROW(pd::select("gfx1300", {}), pd::UnknownArchError);
  EXPECT_THROW(pd::select("gfx942:", {}), pd::ArchParseError);
  EXPECT_EQ(rec.size(), 0u);
}

TEST(Trace, ExecutorNote) {
  pd::ScopedTraceRecorder rec;
  const auto d = pd::select("gfx942", {});
  EXPECT_TRUE(pd::Trace::global().note_executor(d.trace_id, "host (wave 64)"));
  EXPECT_EQ(pd::Trace::global().find(d.trace_id)->executor, "host (wave 64)");
  EXPECT_EQ(rec.entries().at(0).executor, "host (wave 64)");
  EXPECT_NE(rec.entries().at(0).describe().find("ran on host (wave 64)"), std::string::npos);
  EXPECT_FALSE(pd::Trace::global().note_executor(0, "nowhere"));
}

TEST(Trace, ScopedRecordersNestAndSeeOnlyTheirScope) {
  (void)pd::select("gfx942", {});
  pd::ScopedTraceRecorder outer;
  (void)pd::select("gfx950", {});
  {
    pd::ScopedTraceRecorder inner;
    (void)pd::select("gfx1201", {});
    ASSERT_EQ(inner.size(), 1u);
    EXPECT_EQ(inner.entries()[0].target, "gfx1201");
  }
  (void)pd::select("sm_90", {});
  const auto e = outer.entries();
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].target, "gfx950");
  EXPECT_EQ(e[1].target, "gfx1201");
  EXPECT_EQ(e[2].target, "sm_90");
  outer.clear();
  EXPECT_EQ(outer.size(), 0u);
}

TEST(Trace, ClearAndCapacity) {
  pd::Trace trace;  // a private trace: the global one is shared with the other tests of this process
  const auto arch = pd::parse_arch("gfx942");
  const pd::Decision d{pmqa::Path::fused, pmqa::Fp8Format::e4m3fnuz, pmqa::KvLayout::shuffle, "r", 0, ""};
  trace.set_capacity(3);
  pd::ScopedTraceRecorder rec(trace);
  std::vector<std::uint64_t> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(trace.record(arch, {}, "p", d));
  EXPECT_EQ(trace.size(), 3u);
  EXPECT_EQ(trace.dropped(), 2u);
  EXPECT_EQ(trace.entries().front().id, ids[2]);
  EXPECT_EQ(rec.size(), 5u) << "a recorder keeps everything recorded while it lives";
  EXPECT_FALSE(trace.note_executor(ids[0], "x") && trace.find(ids[0]).has_value());
  trace.clear();
  EXPECT_EQ(trace.size(), 0u);
  EXPECT_EQ(trace.dropped(), 0u);
  EXPECT_GT(trace.record(arch, {}, "p", d), ids.back()) << "ids are never reused";
  EXPECT_THROW(trace.set_capacity(0), std::invalid_argument);
}

TEST(Trace, ConcurrentDecisionsAreAllRecorded) {
  pd::ScopedTraceRecorder rec;
  constexpr int kThreads = 4, kEach = 300;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([t] {
      const char* archs[] = {"gfx942", "gfx950", "sm_90", "gfx1201"};
      for (int i = 0; i < kEach; ++i) {
        const auto d = pd::select(archs[t], pd::Context{true, 64, 1 + i % 2, 64});
        pd::Trace::global().note_executor(d.trace_id, "thread " + std::to_string(t));
      }
    });
  for (auto& th : threads) th.join();
  const auto entries = rec.entries();
  ASSERT_EQ(entries.size(), static_cast<std::size_t>(kThreads * kEach));
  std::set<std::uint64_t> ids;
  for (const auto& e : entries) {
    ids.insert(e.id);
    ASSERT_TRUE(e.executor.has_value()) << e.describe();
  }
  EXPECT_EQ(ids.size(), entries.size()) << "ids are unique";
}
