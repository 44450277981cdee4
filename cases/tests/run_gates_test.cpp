// The byte floor against hand counts, and the run's gates as pmqa-run judges them and pmqa verify
// re-judges them from a result file's metadata: passing, failing, "not gated", an unseen kernel time,
// the path gate, and malformed metadata refused naming the key.
#include <gtest/gtest.h>

#include "pmqa/cases/byte_floor.hpp"
#include "pmqa/cases/run_gates.hpp"

namespace pmqa::cases {
namespace {

// A case with only what the floor reads: the shape, the lengths and the block table.
Case shaped(std::int64_t batch, std::int64_t next_n, std::int64_t heads, std::int64_t head_dim, std::int64_t block_size,
            std::vector<std::int32_t> lens, bool lens_2d, std::vector<std::int32_t> table, std::int64_t max_blocks,
            std::int64_t max_model_len) {
  Case c;
  c.batch = batch, c.next_n = next_n, c.heads = heads, c.head_dim = head_dim, c.block_size = block_size;
  c.context_lens = std::move(lens);
  c.context_lens_2d = lens_2d;
  c.block_table = std::move(table);
  c.max_blocks_per_seq = max_blocks;
  c.max_model_len = max_model_len;
  return c;
}

// B 2, N 1, H 4, D 16, bs 16, lengths 20 and 5: sequence 0 reads pages 3 and 1, sequence 1 page 0.
Case two_sequences() { return shaped(2, 1, 4, 16, 16, {20, 5}, false, {3, 1, -1, 0, 7, 7}, 3, 40); }

void expect_floor(const FloorBytes& f, std::int64_t q, std::int64_t kv, std::int64_t w, std::int64_t bt,
                  std::int64_t cl, std::int64_t out) {
  EXPECT_EQ(f.q, q);
  EXPECT_EQ(f.kv, kv);
  EXPECT_EQ(f.weights, w);
  EXPECT_EQ(f.block_table, bt);
  EXPECT_EQ(f.context_lens, cl);
  EXPECT_EQ(f.output, out);
  EXPECT_EQ(f.total(), q + kv + w + bt + cl + out);
}

TEST(ByteFloor, TwoSequencesClean) {
  expect_floor(floor_bytes(two_sequences(), Contract::clean),
               2 * 1 * 4 * 16,     // q: 128
               3 * 16 * (16 + 4),  // three pages: 960
               2 * 1 * 4 * 4,      // weights: 32
               (2 + 1) * 4,        // block table entries read: 12 (the -1 past sequence 0's blocks is not)
               2 * 4,              // lengths: 8
               2 * 40 * 4);        // clean: every cell, 320
  EXPECT_EQ(floor_bytes(two_sequences(), Contract::clean).describe(),
            "0.00 MB (q 128, kv 960, weights 32, block table 12, lengths 8, output 320 bytes)");
}

TEST(ByteFloor, SharedPagesCountOnceAndValidOnlyCountsValidCells) {
  // B 2, N 2, 1-D lengths 8 and 6: E_r 7, 8 and 5, 6; both sequences read page 5 first.
  const Case c = shaped(2, 2, 2, 32, 4, {8, 6}, false, {5, 2, 5, 7}, 2, 10);
  expect_floor(floor_bytes(c, Contract::valid_only), 2 * 2 * 2 * 32, 3 * 4 * (32 + 4), 2 * 2 * 2 * 4, (2 + 2) * 4, 2 * 4,
               (7 + 8 + 5 + 6) * 4);  // 256, 432 (pages 5, 2, 7 once each), 32, 16, 8, 104
}

TEST(ByteFloor, TwoDimensionalLengthsWithEmptyRows) {
  // B 3, N 2, 2-D lengths [0, 0], [3, 9], [0, 17], bs 8: sequence 0 reads nothing.
  const Case c = shaped(3, 2, 1, 16, 8, {0, 0, 3, 9, 0, 17}, true, {9, 9, 9, 1, 2, 9, 3, 4, 5}, 3, 24);
  expect_floor(floor_bytes(c, Contract::clean), 96, 5 * 8 * (16 + 4), 24, (0 + 2 + 3) * 4, 6 * 4, 6 * 24 * 4);
  EXPECT_EQ(floor_bytes(c, Contract::valid_only).output, (3 + 9 + 17) * 4);
  EXPECT_EQ(floor_bytes(shaped(0, 1, 4, 16, 16, {}, false, {}, 0, 40), Contract::clean).total(), 0);  // B = 0
}

using Metadata = std::map<std::string, std::string>;

// The floor of two_sequences() is 1460 bytes: at 1 GB/s, 0.00146 ms.
Metadata timed(std::string kernel_ms, std::string max_ratio) {
  return {{"floor_max_ratio", std::move(max_ratio)}, {"floor_min_mb", "0.0"}, {"copy_gbps", "1"},
          {"bench_ms", "0.05"}, {"kernel_ms", std::move(kernel_ms)}, {"kernel_unseen_calls", "0 of 3"}};
}

TEST(SpeedGate, PassesAtOrUnderRAndRecordsWhatItDerived) {
  const SpeedGate g = judge_speed_gate(two_sequences(), Contract::clean, timed("0.01", "7.0"), "f");
  EXPECT_EQ(g.verdict.outcome, GateOutcome::passed) << g.verdict.message;
  EXPECT_EQ(g.floor.total(), 1460);
  EXPECT_EQ(g.derived.at("floor_bytes"), "1460");
  EXPECT_EQ(g.derived.at("floor_ms"), "0.00146");
  EXPECT_EQ(g.derived.at("floor_ratio"), "6.849");  // 0.01 / 0.00146
  EXPECT_EQ(g.derived.at("floor_ratio_wall"), "34.25");
  EXPECT_EQ(g.derived.at("floor_gate"), "at most 7");
  EXPECT_EQ(g.verdict.message, "kernel time 0.01 ms is 6.85x the byte floor 0.00146 ms, at most 7");
}

TEST(SpeedGate, FailsAboveRNamingTheFloorAndTheBandwidth) {
  // The same run under R = 6: a gate that ignored R, or judged the wall time, would decide otherwise.
  const SpeedGate g = judge_speed_gate(two_sequences(), Contract::clean, timed("0.01", "6"), "f");
  EXPECT_EQ(g.verdict.outcome, GateOutcome::failed);
  EXPECT_EQ(g.verdict.message,
            "kernel time 0.01 ms is 6.85x the byte floor 0.00146 ms (0.00 MB (q 128, kv 960, weights 32, block table 12, "
            "lengths 8, output 320 bytes) at the run's copy bandwidth, 1 GB/s), above --max-floor-ratio 6: a slow path "
            "(wall time 0.05 ms, x34.2)");
}

TEST(SpeedGate, JudgesTheWallTimeWithoutAKernelTime) {
  Metadata m = timed("0", "7");
  m.erase("kernel_ms");
  const SpeedGate g = judge_speed_gate(two_sequences(), Contract::clean, m, "f");
  EXPECT_EQ(g.verdict.outcome, GateOutcome::failed);  // 0.05 ms is 34x the floor
  EXPECT_EQ(g.verdict.message.rfind("wall time 0.05 ms is 34.2x the byte floor", 0), 0u) << g.verdict.message;
}

TEST(SpeedGate, SmallFloorsAreNotGated) {
  Metadata m = timed("1000", "7");  // however slow
  m["floor_min_mb"] = "0.01";       // 10000 bytes > 1460
  const SpeedGate g = judge_speed_gate(two_sequences(), Contract::clean, m, "f");
  EXPECT_EQ(g.verdict.outcome, GateOutcome::not_gated);
  EXPECT_EQ(g.derived.at("floor_gate"), "not gated: floor 0.00146 MB below --floor-min-mb 0.01");
  RunGates gates{{g.verdict}};
  EXPECT_TRUE(gates.passed());
}

TEST(SpeedGate, AnUnseenKernelTimeFailsRatherThanPassingAtZero) {
  Metadata m = timed("0", "7");  // a time of 0 would pass any R
  m["kernel_unseen_calls"] = "2 of 3";
  const SpeedGate g = judge_speed_gate(two_sequences(), Contract::clean, m, "f");
  EXPECT_EQ(g.verdict.outcome, GateOutcome::failed);
  EXPECT_EQ(g.derived.at("floor_ratio"), "unknown");
  EXPECT_NE(g.verdict.message.find("no device activity in 2 of 3 timed call(s)"), std::string::npos) << g.verdict.message;
}

TEST(SpeedGate, MalformedInputsAreRefusedNamingTheKey) {
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"copy_gbps", ""}, {"copy_gbps", "0"}, {"kernel_ms", "fast"}, {"floor_max_ratio", "-1"},
           {"floor_max_ratio", "nan"}, {"bench_ms", "1 ms"}, {"kernel_unseen_calls", "2 of 1"}}) {
    Metadata m = timed("0.01", "7");
    m[key] = value;
    try {
      (void)judge_speed_gate(two_sequences(), Contract::clean, m, "out/x.safetensors");
      ADD_FAILURE() << key << " = " << value << " was accepted";
    } catch (const CaseFileError& e) {
      EXPECT_EQ(e.field(), "__metadata__." + key) << e.what();
      EXPECT_EQ(e.file(), "out/x.safetensors");
    }
  }
  Metadata m = timed("0.01", "7");
  m.erase("bench_ms");
  EXPECT_THROW((void)judge_speed_gate(two_sequences(), Contract::clean, m, "f"), CaseFileError);
}

TEST(PathGate, TheExpectedPathAndKnownKernelsPass) {
  EXPECT_EQ(judge_path_gate("fused", "fused", {}, "k (aiter fused) x1").outcome, GateOutcome::passed);
  const GateVerdict v = judge_path_gate("fused", "two-stage", {}, "s1 (aiter two-stage) x1");
  EXPECT_EQ(v.outcome, GateOutcome::failed);
  EXPECT_EQ(v.message, "expected the fused path, the op took the two-stage path: it launched s1 (aiter two-stage) x1");
  const GateVerdict u = judge_path_gate("", "fused", {"a", "b", "c", "d", "e"}, "seen");
  EXPECT_EQ(u.outcome, GateOutcome::failed);  // nothing expected: an unknown kernel still fails
  EXPECT_EQ(u.message,
            "the op launched kernel(s) the kernel-name table does not know: a, b, c, d and 1 more (kernels seen: "
            "seen); review them and add them with --kernel-names FILE");
  EXPECT_EQ(judge_path_gate("", "none", {}, "no kernel").outcome, GateOutcome::passed);
}

CaseFile result_file(Metadata extra) {
  CaseFile f;
  f.c = two_sequences();
  f.contract = Contract::clean;
  f.extra = std::move(extra);
  return f;
}

TEST(RecordedGates, AFileRecordsWhichGatesItsRunApplied) {
  EXPECT_TRUE(judge_recorded_gates(result_file({{"bench_ms", "3"}}), "f").gates.empty());  // no gate recorded
  // A floor_gate without floor_max_ratio (an earlier pmqa-run) records no inputs to re-judge.
  EXPECT_TRUE(judge_recorded_gates(result_file({{"floor_gate", "at most 7"}}), "f").gates.empty());

  Metadata m = timed("0.01", "6");
  m["floor_bytes"] = "999999999";  // a recorded floor is never trusted: the case's own is 1460
  m["expected_path"] = "fused";
  m["path"] = "two-stage";
  m["kernels_unknown"] = "[]";
  m["kernels_seen"] = "s1 (aiter two-stage) x1";
  const RunGates g = judge_recorded_gates(result_file(m), "f");
  ASSERT_EQ(g.gates.size(), 2u);
  EXPECT_FALSE(g.passed());
  EXPECT_EQ(g.failed(), (std::vector<std::string>{"speed", "path"}));
  EXPECT_EQ(g.summary().rfind("speed gate failed: kernel time 0.01 ms is 6.85x the byte floor 0.00146 ms", 0), 0u)
      << g.summary();
  EXPECT_NE(g.summary().find("; path gate failed: expected the fused path, the op took the two-stage path"),
            std::string::npos);
  EXPECT_NE(g.failure_text().find("    path gate (--expect-path): fail: expected the fused path"), std::string::npos);
  EXPECT_EQ(g.to_json()[0]["outcome"], "fail");
  EXPECT_EQ(g.to_json()[1]["option"], "--expect-path");

  m["floor_max_ratio"] = "7";
  m["path"] = "fused";
  const RunGates ok = judge_recorded_gates(result_file(m), "f");
  EXPECT_TRUE(ok.passed()) << ok.to_text();
  EXPECT_EQ(ok.failure_text(), "");
}

TEST(RecordedGates, MalformedPathGateMetadataIsRefused) {
  const Metadata base{{"expected_path", "fused"}, {"path", "fused"}};
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"expected_path", "fast"}, {"path", "sideways"}, {"kernels_unknown", "not json"},
           {"kernels_unknown", "[1]"}}) {
    Metadata m = base;
    m[key] = value;
    try {
      (void)judge_recorded_gates(result_file(m), "f");
      ADD_FAILURE() << key << " = " << value << " was accepted";
    } catch (const CaseFileError& e) {
      EXPECT_EQ(e.field(), "__metadata__." + key);
    }
  }
  EXPECT_THROW((void)judge_recorded_gates(result_file({{"expected_path", "fused"}}), "f"), CaseFileError);  // no path
}

}  // namespace
}  // namespace pmqa::cases
