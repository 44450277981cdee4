// pmqa verify on inputs that are not a valid case file with logits: exit status 2 and a message
// naming the file, the field and the problem. Each bad file is a good one with one thing broken,
// so the message can only come from that one defect.
#include <functional>

#include <gtest/gtest.h>

#include "case_file_test_support.hpp"
#include "cli_test_support.hpp"

namespace pmqa::clitest {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

class VerifyInvalidInput : public ::testing::Test {
 protected:
  void SetUp() override {
    good_ = reference_case_file("edge-lengths-1d");
    good_bytes_ = cases::serialize_case_file(good_);
  }

  // Writes `bytes` as <name>.safetensors, runs verify on it, and expects exit 2 with a message
  // that names the file and contains `field` and `problem`.
  void expect_invalid(const std::string& name, const std::vector<std::uint8_t>& bytes, const std::string& field,
                      const std::string& problem) {
    const fs::path file = tmp_ / (name + ".safetensors");
    write_bytes(file, bytes);
    const auto r = run_pmqa("verify " + q(file));
    EXPECT_EQ(r.status, 2) << name << ":\n" << r.output;
    EXPECT_NE(r.output.find(file.string() + ": " + field), std::string::npos)
        << name << ": the message names the file and then the field '" << field << "':\n" << r.output;
    EXPECT_NE(r.output.find(problem), std::string::npos) << name << ": expected '" << problem << "':\n" << r.output;
    EXPECT_NE(r.output.find("1 file(s): 0 passed, 0 failed, 1 invalid"), std::string::npos) << r.output;
  }

  std::vector<std::uint8_t> edited(const std::function<void(json&)>& edit) const {
    return testing::edit_header(good_bytes_, edit);
  }

  TempDir tmp_;
  cases::CaseFile good_;
  std::vector<std::uint8_t> good_bytes_;
};

TEST_F(VerifyInvalidInput, TheGoodFileItselfPasses) {
  write_bytes(tmp_ / "good.safetensors", good_bytes_);
  const auto r = run_pmqa("verify " + q(tmp_ / "good.safetensors"));
  EXPECT_EQ(r.status, 0) << r.output;
}

TEST_F(VerifyInvalidInput, TruncatedFile) {
  auto bytes = good_bytes_;
  bytes.resize(bytes.size() - 100);  // cuts into kv_cache, the last tensor
  expect_invalid("truncated", bytes, "tensor kv_cache.data_offsets", "run past the end of the data section");
}

TEST_F(VerifyInvalidInput, TruncatedInsideTheLengthField) {
  expect_invalid("stub", {good_bytes_.begin(), good_bytes_.begin() + 5}, "header length", "too short");
}

TEST_F(VerifyInvalidInput, HeaderLengthLargerThanTheFile) {
  auto bytes = good_bytes_;
  const std::uint64_t claimed = bytes.size();  // more than the bytes that follow the length field
  for (int i = 0; i < 8; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(claimed >> (8 * i));
  expect_invalid("long-header", bytes, "header length", "is larger than the");
}

TEST_F(VerifyInvalidInput, OverlappingTensorOffsets) {
  const auto bytes = edited([](json& h) {
    auto& off = h["block_table"]["data_offsets"];  // same size, moved 4 bytes into context_lens
    off = {off[0].get<std::uint64_t>() - 4, off[1].get<std::uint64_t>() - 4};
  });
  expect_invalid("overlap", bytes, "tensor block_table.data_offsets", "overlap tensor context_lens");
}

TEST_F(VerifyInvalidInput, WrongDtype) {
  const auto bytes = edited([](json& h) { h["weights"]["dtype"] = "I32"; });
  expect_invalid("dtype", bytes, "tensor weights.dtype", "\"I32\"");
}

TEST_F(VerifyInvalidInput, ShapeDisagreesWithTheMetadata) {
  const auto bytes = edited([](json& h) { h["__metadata__"]["heads"] = "5"; });  // q holds 4 heads
  expect_invalid("shape", bytes, "tensor q.shape", "disagrees with the metadata: heads is 5");
}

TEST_F(VerifyInvalidInput, LogitsShapeDisagreesWithMaxModelLen) {
  const auto bytes = edited([](json& h) { h["__metadata__"]["max_model_len"] = "47"; });
  expect_invalid("logits-shape", bytes, "tensor logits.shape", "disagrees with");
}

TEST_F(VerifyInvalidInput, BlockTableEntryOutOfRange) {
  cases::CaseFile bad = good_;
  // Sequence 7 (context 48) reads its logical block 0; point it past the cache.
  bad.c.block_table[static_cast<std::size_t>(7 * bad.c.max_blocks_per_seq)] = static_cast<std::int32_t>(bad.c.num_blocks + 7);
  expect_invalid("table", cases::serialize_case_file(bad), "case",
                 "block_table[7][0] = " + std::to_string(bad.c.num_blocks + 7) + " is outside [0, " +
                     std::to_string(bad.c.num_blocks) + ")");
}

TEST_F(VerifyInvalidInput, MissingTensor) {
  const auto bytes = edited([](json& h) { h.erase("q"); });
  expect_invalid("no-q", bytes, "tensor q", "missing");
}

TEST_F(VerifyInvalidInput, MissingLogits) {
  cases::CaseFile bare = good_;
  bare.logits.reset();
  expect_invalid("no-logits", cases::serialize_case_file(bare), "tensor logits", "missing");
}

TEST_F(VerifyInvalidInput, BadMetadataValue) {
  const auto bytes = edited([](json& h) { h["__metadata__"]["fp8_format"] = "e5m2"; });
  expect_invalid("format", bytes, "__metadata__.fp8_format", "\"e5m2\" is not one of e4m3fn or e4m3fnuz");
}

TEST_F(VerifyInvalidInput, NoInputFiles) {
  const auto r = run_pmqa("verify");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("no input files"), std::string::npos) << r.output;
}

TEST_F(VerifyInvalidInput, MissingPathAndEmptyDirectory) {
  const fs::path missing = tmp_ / "nope.safetensors";
  const fs::path empty = tmp_ / "empty";
  fs::create_directories(empty);
  const auto r = run_pmqa("verify " + q(missing) + " " + q(empty));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find(missing.string() + ": file: does not exist"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(empty.string() + ": directory: holds no *.safetensors files"), std::string::npos) << r.output;
}

// A symbolic link loop (ln -s a b; ln -s b a; and one to itself) is named as a loop, not as a
// link to nothing; a dangling link still is one. In a folder and named on the command line.
TEST_F(VerifyInvalidInput, SymbolicLinkLoopsAreNamedAsLoops) {
  const fs::path dir = tmp_ / "loops";
  fs::create_directories(dir);
  write_bytes(dir / "good.safetensors", good_bytes_);
  fs::create_symlink("b.safetensors", dir / "a.safetensors");
  fs::create_symlink("a.safetensors", dir / "b.safetensors");
  fs::create_symlink("self.safetensors", dir / "self.safetensors");
  fs::create_symlink("nowhere", dir / "dangling.safetensors");
  const auto r = run_pmqa("verify " + q(dir));
  EXPECT_EQ(r.status, 2) << r.output;
  for (const char* loop : {"a", "b", "self"})
    EXPECT_NE(r.output.find((dir / loop).string() + ".safetensors: file: is a symbolic link loop"), std::string::npos)
        << loop << "\n" << r.output;
  EXPECT_NE(r.output.find((dir / "dangling.safetensors").string() + ": file: is a symbolic link to nothing (it dangles)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("5 file(s): 1 passed, 0 failed, 4 invalid"), std::string::npos) << r.output;
  const auto one = run_pmqa("verify " + q(dir / "a.safetensors"));
  EXPECT_EQ(one.status, 2) << one.output;
  EXPECT_NE(one.output.find((dir / "a.safetensors").string() + ": file: is a symbolic link loop"), std::string::npos)
      << one.output;
  EXPECT_EQ(one.output.find("dangles"), std::string::npos) << one.output;
}

TEST_F(VerifyInvalidInput, BadFlagValues) {
  write_bytes(tmp_ / "good.safetensors", good_bytes_);
  const auto contract = run_pmqa("verify --contract sloppy " + q(tmp_ / "good.safetensors"));
  EXPECT_EQ(contract.status, 2) << contract.output;
  EXPECT_NE(contract.output.find("--contract sloppy"), std::string::npos) << contract.output;
  const auto tolerance = run_pmqa("verify --tolerance loose " + q(tmp_ / "good.safetensors"));
  EXPECT_EQ(tolerance.status, 2) << tolerance.output;
  EXPECT_NE(tolerance.output.find("unknown tolerance profile 'loose'"), std::string::npos) << tolerance.output;
}

}  // namespace
}  // namespace pmqa::clitest
