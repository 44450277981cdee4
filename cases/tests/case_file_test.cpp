// Case files: round trips, determinism, and the reader's error messages.
#include "pmqa/cases/case_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "case_file_test_support.hpp"
#include "pmqa/cases/logits_file.hpp"

namespace pmqa::cases {
namespace {

using nlohmann::json;
using testing::TestShape;

std::vector<TestShape> shapes() {
  std::vector<TestShape> out;
  out.push_back({});  // defaults: B=2, N=2, H=2, D=16, 1-D, logits
  TestShape s;
  s.batch = 0;  // B = 0: every per-sequence tensor is empty
  out.push_back(s);
  s = {};
  s.batch = 0;
  s.num_blocks = 0;
  s.max_blocks = 0;
  s.logits = false;  // nothing at all but the (empty) tensors
  out.push_back(s);
  s = {};
  s.ctx2d = true;
  s.next_n = 3;
  out.push_back(s);
  s = {};
  s.format = ValueFormat::e4m3fnuz;
  s.layout = KvLayout::shuffle;
  s.stride_pad = 20;
  s.heads = 3;
  s.head_dim = 32;
  out.push_back(s);
  s = {};
  s.num_blocks = 0;  // no cache at all: every context length is 0
  out.push_back(s);
  s = {};
  s.max_model_len = 0;
  s.logits = true;  // [B*N, 0]
  out.push_back(s);
  s = {};
  s.block_size = 1;
  s.max_blocks = 40;
  s.max_model_len = 40;
  s.next_n = 4;
  s.batch = 3;
  s.logits = false;
  out.push_back(s);
  return out;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const CaseFileError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("UNEXPECTED exception type: ") + e.what();
  }
  return "NO EXCEPTION";
}

std::string parse_error(const std::vector<std::uint8_t>& bytes) {
  return message_of([&] { (void)parse_case_file(bytes, "bad.safetensors"); });
}

std::vector<std::uint8_t> sample_bytes() { return serialize_case_file(testing::sample_case_file()); }

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "message: " << (haystack)

// ---------------------------------------------------------------- round trips

TEST(CaseFileRoundTrip, ByteIdenticalAcrossShapes) {
  const auto all = shapes();
  for (std::size_t i = 0; i < all.size(); ++i) {
    for (std::uint64_t seed : {1u, 2u, 77u}) {
      SCOPED_TRACE("shape #" + std::to_string(i) + " seed " + std::to_string(seed));
      const CaseFile original = testing::make_case_file(all[i], seed);
      ASSERT_NO_THROW(validate(original.c));
      const auto bytes = serialize_case_file(original);
      const CaseFile back = parse_case_file(bytes, "memory");
      std::string why;
      EXPECT_TRUE(testing::same_case_file(original, back, &why)) << "first difference: " << why;
      EXPECT_EQ(serialize_case_file(back), bytes);
    }
  }
}

TEST(CaseFileRoundTrip, SampleWithNanLogitsUnicodeAndBigSeed) {
  const CaseFile original = testing::sample_case_file();
  const auto bytes = serialize_case_file(original);
  const CaseFile back = parse_case_file(bytes, "sample");
  std::string why;
  EXPECT_TRUE(testing::same_case_file(original, back, &why)) << why;
  EXPECT_EQ(back.c.seed, 12345678901234567890ull);
  EXPECT_TRUE(std::isnan((*back.logits)[45]));
  EXPECT_EQ(back.extra.at("note"), "h\xC3\xA9llo \xE2\x9C\x93");
  EXPECT_EQ(serialize_case_file(back), bytes);
}

TEST(CaseFileRoundTrip, ThroughDisk) {
  const auto dir = std::filesystem::temp_directory_path() / ("pmqa_case_file_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "sample.safetensors";
  const CaseFile original = testing::sample_case_file();
  write_case_file(path, original);
  EXPECT_FALSE(std::filesystem::exists(dir / "sample.safetensors.partial"));
  std::ifstream in(path, std::ios::binary);
  const std::vector<std::uint8_t> on_disk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(on_disk, serialize_case_file(original));
  const CaseFile back = read_case_file(path);
  std::string why;
  EXPECT_TRUE(testing::same_case_file(original, back, &why)) << why;
  // write, read, write again: the same bytes
  write_case_file(dir / "again.safetensors", back);
  std::ifstream in2(dir / "again.safetensors", std::ios::binary);
  const std::vector<std::uint8_t> again((std::istreambuf_iterator<char>(in2)), std::istreambuf_iterator<char>());
  EXPECT_EQ(again, on_disk);
  std::filesystem::remove_all(dir);
}

// The comparisons above must be able to fail: plant one change per field and check both the field
// comparison and the byte comparison notice it.
TEST(CaseFileRoundTrip, PlantedDifferencesAreDetected) {
  const CaseFile original = testing::sample_case_file();
  const auto bytes = serialize_case_file(original);
  const std::vector<std::pair<std::string, std::function<void(CaseFile&)>>> plants = {
      {"q", [](CaseFile& f) { f.c.q[5] ^= 1; }},
      {"kv_cache", [](CaseFile& f) { f.c.kv_cache.back() ^= 0x10; }},  // a padding byte
      {"weights", [](CaseFile& f) { f.c.weights[3] = std::nextafter(f.c.weights[3], 10.0f); }},
      {"context_lens", [](CaseFile& f) { f.c.context_lens[1] = 8; }},
      {"block_table", [](CaseFile& f) { f.c.block_table[5] = -2; }},  // an entry no row reads
      {"logits", [](CaseFile& f) { (*f.logits)[45] = std::bit_cast<float>(0x7FC00001u); }},  // NaN payload
      {"logits (presence)", [](CaseFile& f) { f.logits.reset(); }},
      {"contract", [](CaseFile& f) { f.contract = Contract::clean; }},
      {"producer", [](CaseFile& f) { f.producer += "!"; }},
      {"extra", [](CaseFile& f) { f.extra["bench_ms"] = "1.26"; }},
      {"seed", [](CaseFile& f) { f.c.seed += 1; }},
      {"name", [](CaseFile& f) { f.c.name = "other"; }},
      {"max_model_len", [](CaseFile& f) {
         f.c.max_model_len = 41;
         f.logits.reset();
       }},
  };
  for (const auto& [field, plant] : plants) {
    SCOPED_TRACE(field);
    CaseFile changed = parse_case_file(bytes, "sample");
    plant(changed);
    std::string why;
    EXPECT_FALSE(testing::same_case_file(original, changed, &why));
    EXPECT_EQ(why, field);
    EXPECT_NE(serialize_case_file(changed), bytes);
  }
}

TEST(CaseFileFormat, Deterministic) {
  EXPECT_EQ(serialize_case_file(testing::sample_case_file()), serialize_case_file(testing::sample_case_file()));
  EXPECT_EQ(serialize_case_file(testing::make_case_file({}, 9)), serialize_case_file(testing::make_case_file({}, 9)));
  EXPECT_NE(serialize_case_file(testing::make_case_file({}, 9)), serialize_case_file(testing::make_case_file({}, 10)));
}

TEST(CaseFileFormat, HeaderLayout) {
  const auto bytes = sample_bytes();
  const std::uint64_t len = testing::header_length(bytes);
  EXPECT_EQ((8 + len) % 8, 0u) << "the data section starts 8-aligned";
  EXPECT_EQ(bytes[8], '{');
  const auto parts = testing::split_file(bytes);
  const json& h = parts.header;
  // The exact header of the interop sample: a change here is a format change (bump format_version).
  const std::string expected =
      R"({"__metadata__":{"batch":"2","bench_ms":"1.25","block_size":"16","contract":"valid-only",)"
      R"("format_version":"1","fp8_format":"e4m3fnuz","head_dim":"16","heads":"3","kv_layout":"shuffle",)"
      R"("max_model_len":"40","name":"interop-sample","next_n":"2","note":"h\u00e9llo \u2713",)"
      R"("producer":"interop-sample","seed":"12345678901234567890","suite":"interop"},)"
      R"("block_table":{"data_offsets":[56,80],"dtype":"I32","shape":[2,3]},)"
      R"("context_lens":{"data_offsets":[48,56],"dtype":"I32","shape":[2]},)"
      R"("kv_cache":{"data_offsets":[912,2572],"dtype":"U8","shape":[5,332]},)"
      R"("logits":{"data_offsets":[80,720],"dtype":"F32","shape":[4,40]},)"
      R"("q":{"data_offsets":[720,912],"dtype":"U8","shape":[2,2,3,16]},)"
      R"("weights":{"data_offsets":[0,48],"dtype":"F32","shape":[4,3]}})";
  EXPECT_EQ(h, json::parse(expected));
  std::string text(bytes.begin() + 8, bytes.begin() + 8 + static_cast<std::ptrdiff_t>(len));
  while (!text.empty() && text.back() == ' ') text.pop_back();
  EXPECT_EQ(text, json::parse(expected).dump());
  EXPECT_EQ(parts.data.size(), 2572u);
}

TEST(CaseFileFormat, AcceptsF8DtypesForQ) {
  // e4m3fnuz sample: q stored as F8_E4M3FNUZ is accepted; the writer emits U8 again.
  const auto fnuz = testing::edit_header(sample_bytes(), [](json& h) { h["q"]["dtype"] = "F8_E4M3FNUZ"; });
  const CaseFile back = parse_case_file(fnuz, "fnuz");
  EXPECT_EQ(serialize_case_file(back), sample_bytes());
  // F8_E4M3 (OCP) disagrees with the metadata's e4m3fnuz
  const auto wrong = testing::edit_header(sample_bytes(), [](json& h) { h["q"]["dtype"] = "F8_E4M3"; });
  const auto m = parse_error(wrong);
  EXPECT_CONTAINS(m, "tensor q.dtype");
  EXPECT_CONTAINS(m, "the value format is e4m3fnuz");
  // and an OCP case accepts F8_E4M3
  const auto ocp = serialize_case_file(testing::make_case_file({}, 3));
  EXPECT_NO_THROW(parse_case_file(testing::edit_header(ocp, [](json& h) { h["q"]["dtype"] = "F8_E4M3"; }), "ocp"));
}

TEST(CaseFileFormat, AcceptsAnyTensorOrderAndUnpaddedHeader) {
  // Rebuild the sample with the tensors in reverse order of their offsets and no header padding.
  const auto bytes = sample_bytes();
  auto parts = testing::split_file(bytes);
  std::vector<std::pair<std::string, std::pair<std::uint64_t, std::uint64_t>>> ranges;
  for (auto& [name, entry] : parts.header.items())
    if (name != "__metadata__") ranges.push_back({name, {entry["data_offsets"][0], entry["data_offsets"][1]}});
  std::sort(ranges.begin(), ranges.end(), [](auto& a, auto& b) { return a.second.first > b.second.first; });
  std::vector<std::uint8_t> data;
  for (auto& [name, r] : ranges) {
    parts.header[name]["data_offsets"] = {data.size(), data.size() + (r.second - r.first)};
    data.insert(data.end(), parts.data.begin() + static_cast<std::ptrdiff_t>(r.first),
                parts.data.begin() + static_cast<std::ptrdiff_t>(r.second));
  }
  const auto reordered = testing::join_file(parts.header.dump(), data);
  ASSERT_NE(reordered, bytes);
  const CaseFile back = parse_case_file(reordered, "reordered");
  std::string why;
  EXPECT_TRUE(testing::same_case_file(back, testing::sample_case_file(), &why)) << why;
  EXPECT_EQ(serialize_case_file(back), bytes);
}

TEST(CaseFileFormat, ErrorIsACaseError) {
  try {
    (void)parse_case_file(std::vector<std::uint8_t>{1, 2, 3}, "x");
    FAIL() << "no exception";
  } catch (const CaseError& e) {
    const auto* cfe = dynamic_cast<const CaseFileError*>(&e);
    ASSERT_NE(cfe, nullptr);
    EXPECT_EQ(cfe->file(), "x");
    EXPECT_EQ(cfe->field(), "header length");
  }
}

// ---------------------------------------------------------------- errors: each names file and field

TEST(CaseFileErrors, Truncated) {
  const auto bytes = sample_bytes();
  const std::uint64_t len = testing::header_length(bytes);
  auto cut = [&](std::size_t n) { return std::vector<std::uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n)); };
  auto m = parse_error(cut(5));
  EXPECT_CONTAINS(m, "bad.safetensors: header length: the file is 5 bytes");
  m = parse_error(cut(8 + len / 2));
  EXPECT_CONTAINS(m, "bad.safetensors: header length:");
  EXPECT_CONTAINS(m, "larger than");
  m = parse_error(cut(bytes.size() - 1));  // the last tensor (kv_cache) loses its last byte
  EXPECT_CONTAINS(m, "bad.safetensors: tensor kv_cache.data_offsets: [912, 2572] run past the end of the data section (2571 bytes)");
}

TEST(CaseFileErrors, HeaderLengthLargerThanFile) {
  auto bytes = sample_bytes();
  bytes[5] = 1;  // + 2^40
  const auto m = parse_error(bytes);
  EXPECT_CONTAINS(m, "bad.safetensors: header length: 1099511628");
  EXPECT_CONTAINS(m, "is larger than the");
}

TEST(CaseFileErrors, HeaderLengthOverLimit) {
  std::vector<std::uint8_t> bytes(8 + kCaseFileMaxHeaderBytes + 8, ' ');
  bytes[8] = '{';
  const std::uint64_t len = kCaseFileMaxHeaderBytes + 1;
  for (int i = 0; i < 8; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(len >> (8 * i));
  EXPECT_CONTAINS(parse_error(bytes), "header length: 16777217 bytes is over the limit");
}

TEST(CaseFileErrors, OverlappingOffsets) {
  const auto bytes = testing::edit_header(sample_bytes(), [](json& h) { h["context_lens"]["data_offsets"] = {40, 48}; });
  const auto m = parse_error(bytes);
  EXPECT_CONTAINS(m, "bad.safetensors: tensor context_lens.data_offsets: [40, 48] overlap tensor weights's [0, 48]");
}

TEST(CaseFileErrors, GapInCoverage) {
  // kv_cache moved 4 bytes later, 4 stray bytes before it
  auto parts = testing::split_file(sample_bytes());
  parts.header["kv_cache"]["data_offsets"] = {916, 2576};
  parts.data.insert(parts.data.begin() + 912, 4, 0);
  auto m = parse_error(testing::join_file(parts.header.dump(), parts.data));
  EXPECT_CONTAINS(m, "bad.safetensors: tensor kv_cache.data_offsets: [916, 2576] leave a gap: bytes [912, 916)");
  // trailing bytes no tensor claims
  auto bytes = sample_bytes();
  bytes.insert(bytes.end(), {0, 0, 0});
  m = parse_error(bytes);
  EXPECT_CONTAINS(m, "bad.safetensors: data section: bytes [2572, 2575) belong to no tensor");
}

TEST(CaseFileErrors, WrongDtype) {
  auto m = parse_error(testing::edit_header(sample_bytes(), [](json& h) { h["weights"]["dtype"] = "I32"; }));
  EXPECT_CONTAINS(m, "bad.safetensors: tensor weights.dtype: dtype \"I32\" of tensor weights is not supported here; expected F32");
  m = parse_error(testing::edit_header(sample_bytes(), [](json& h) { h["q"]["dtype"] = "BF16"; }));
  EXPECT_CONTAINS(m, "tensor q.dtype: dtype \"BF16\" of tensor q is not supported here; expected U8, F8_E4M3 or F8_E4M3FNUZ");
  m = parse_error(testing::edit_header(sample_bytes(), [](json& h) { h["kv_cache"]["dtype"] = 8; }));
  EXPECT_CONTAINS(m, "tensor kv_cache.dtype: is a number, expected a string");
}

TEST(CaseFileErrors, ShapeDisagreesWithMetadata) {
  auto m = parse_error(testing::edit_header(sample_bytes(), [](json& h) { h["__metadata__"]["next_n"] = "1"; }));
  EXPECT_CONTAINS(m, "bad.safetensors: tensor q.shape: [2, 2, 3, 16] ([B, N, H, D]) disagrees with the metadata: next_n is 1");
  // q's H and D swapped: the same byte count, the wrong shape
  m = parse_error(testing::edit_header(sample_bytes(), [](json& h) { h["q"]["shape"] = {2, 2, 16, 3}; }));
  EXPECT_CONTAINS(m, "tensor q.shape: [2, 2, 16, 3] ([B, N, H, D]) disagrees with the metadata: heads is 3");
  m = parse_error(testing::edit_header(sample_bytes(), [](json& h) { h["weights"]["shape"] = {3, 4}; }));
  EXPECT_CONTAINS(m, "tensor weights.shape: [3, 4] disagrees with q's shape and the metadata: expected [B*N, H] = [4, 3]");
  m = parse_error(testing::edit_header(sample_bytes(), [](json& h) { h["block_table"]["shape"] = {3, 2}; }));
  EXPECT_CONTAINS(m, "tensor block_table.shape: [3, 2] disagrees with q's shape");
  m = parse_error(testing::edit_header(sample_bytes(), [](json& h) { h["logits"]["shape"] = {8, 20}; }));
  EXPECT_CONTAINS(m, "tensor logits.shape: [8, 20] disagrees with q's shape and max_model_len");
  // the KV stride cannot hold block_size tokens of head_dim + 4 bytes
  m = parse_error(testing::edit_header(sample_bytes(), [](json& h) { h["__metadata__"]["block_size"] = "32"; }));
  EXPECT_CONTAINS(m, "tensor kv_cache.shape: [5, 332]: block stride 332 is below block_size*(head_dim+4) = 640");
  // the byte count disagrees with dtype x shape
  m = parse_error(testing::edit_header(sample_bytes(), [](json& h) { h["q"]["shape"] = {2, 2, 3, 17}; }));
  EXPECT_CONTAINS(m, "tensor q.data_offsets: [720, 912] span 192 bytes but dtype U8 and shape [2, 2, 3, 17] need 204");
  m = parse_error(testing::edit_header(sample_bytes(), [](json& h) { h["q"]["shape"] = {2, 2, 3}; }));
  EXPECT_CONTAINS(m, "tensor q.shape: has rank 3, expected [B, N, H, D]");
}

TEST(CaseFileErrors, ShapeOverflow) {
  auto m = parse_error(testing::edit_header(
      sample_bytes(), [](json& h) { h["q"]["shape"] = {4611686018427387904ull, 4, 0, 0}; }));
  EXPECT_CONTAINS(m, "tensor q.shape: [4611686018427387904, 4, 0, 0] of U8 is too large: its non-zero dimensions need more than 2^63 - 1 bytes");
  m = parse_error(testing::edit_header(sample_bytes(), [](json& h) { h["q"]["shape"][0] = 18446744073709551615ull; }));
  EXPECT_CONTAINS(m, "tensor q.shape[0]: 18446744073709551615 is too large");
  m = parse_error(testing::edit_header(sample_bytes(), [](json& h) { h["q"]["shape"][0] = -2; }));
  EXPECT_CONTAINS(m, "tensor q.shape[0]: -2 is negative");
  m = parse_error(testing::edit_header(sample_bytes(), [](json& h) { h["q"]["data_offsets"][1] = 2.5; }));
  EXPECT_CONTAINS(m, "tensor q.data_offsets[1]: 2.5 is not an integer");
}

TEST(CaseFileErrors, BlockTableEntryOutOfRange) {
  CaseFile f = testing::sample_case_file();
  f.c.block_table[1] = 5;  // read by row 0 (E_r = 32): num_blocks is 5
  const auto m = parse_error(serialize_case_file(f));  // the writer does not validate
  EXPECT_CONTAINS(m, "bad.safetensors: case: block_table[0][1] = 5 is outside [0, 5)");
}

TEST(CaseFileErrors, ContextPastMaxModelLen) {
  CaseFile f = testing::sample_case_file();
  f.c.context_lens[1] = 41;
  f.c.block_table[4] = 0;
  f.c.block_table[5] = 0;
  const auto m = parse_error(serialize_case_file(f));
  EXPECT_CONTAINS(m, "bad.safetensors: case: row 3");
  EXPECT_CONTAINS(m, "above max_model_len = 40");
}

TEST(CaseFileErrors, MissingTensor) {
  auto m = parse_error(testing::edit_header(sample_bytes(), [](json& h) { h.erase("kv_cache"); }));
  EXPECT_CONTAINS(m, "bad.safetensors: tensor kv_cache: missing");
  m = parse_error(testing::edit_header(sample_bytes(), [](json& h) { h["q"].erase("shape"); }));
  EXPECT_CONTAINS(m, "bad.safetensors: tensor q.shape: missing");
  m = parse_error(testing::edit_header(sample_bytes(), [](json& h) { h.erase("__metadata__"); }));
  EXPECT_CONTAINS(m, "bad.safetensors: __metadata__: missing");
  m = parse_error(testing::edit_header(sample_bytes(), [](json& h) { h["__metadata__"].erase("block_size"); }));
  EXPECT_CONTAINS(m, "bad.safetensors: __metadata__.block_size: missing");
}

TEST(CaseFileErrors, LogitsAreOptional) {
  CaseFile f = testing::sample_case_file();
  f.logits.reset();
  const CaseFile back = parse_case_file(serialize_case_file(f), "no-logits");
  EXPECT_FALSE(back.logits.has_value());
}

TEST(CaseFileErrors, UnknownTensorAndField) {
  auto m = parse_error(testing::edit_header(sample_bytes(), [](json& h) { h["bias"] = h["weights"]; }));
  EXPECT_CONTAINS(m, "bad.safetensors: tensor bias: unknown tensor; expected weights, context_lens, block_table, logits, q, q_scales or kv_cache");
  m = parse_error(testing::edit_header(sample_bytes(), [](json& h) { h["q"]["strides"] = {1}; }));
  EXPECT_CONTAINS(m, "tensor q.strides: unknown field");
  m = parse_error(testing::edit_header(sample_bytes(), [](json& h) { h["q\n"] = 1; }));
  EXPECT_CONTAINS(m, "tensor \"q\\x0a\": unknown tensor");
}

TEST(CaseFileErrors, NonStringMetadata) {
  auto m = parse_error(testing::edit_header(sample_bytes(), [](json& h) { h["__metadata__"]["block_size"] = 16; }));
  EXPECT_CONTAINS(m, "bad.safetensors: __metadata__.block_size: value is a number, expected a string");
  m = parse_error(testing::edit_header(sample_bytes(), [](json& h) { h["__metadata__"]["bench_ms"] = {1.5}; }));
  EXPECT_CONTAINS(m, "__metadata__.bench_ms: value is a array, expected a string");
  m = parse_error(testing::edit_header(sample_bytes(), [](json& h) { h["__metadata__"] = json::array(); }));
  EXPECT_CONTAINS(m, "__metadata__: is a array, expected an object of string values");
}

TEST(CaseFileErrors, BadMetadataValues) {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"block_size", "-16", "__metadata__.block_size: \"-16\" is negative"},
      {"block_size", "16.0", "__metadata__.block_size: \"16.0\" is not a non-negative decimal integer"},
      {"block_size", "", "__metadata__.block_size: \"\" is not a non-negative decimal integer"},
      {"block_size", " 16", "__metadata__.block_size: \" 16\" is not a non-negative decimal integer"},
      {"block_size", "016", "__metadata__.block_size: \"016\" has a leading zero"},
      {"block_size", "0", "__metadata__.block_size: \"0\" is not allowed: must be at least 1"},
      {"max_model_len", "2147483648", "__metadata__.max_model_len: \"2147483648\" is too large (at most 2147483647)"},
      {"seed", "18446744073709551616", "__metadata__.seed: \"18446744073709551616\" is too large"},
      {"fp8_format", "fn", "__metadata__.fp8_format: \"fn\" is not one of e4m3fn or e4m3fnuz"},
      {"kv_layout", "SHUFFLE", "__metadata__.kv_layout: \"SHUFFLE\" is not one of normal or shuffle"},
      {"contract", "valid_only", "__metadata__.contract: \"valid_only\" is not one of clean or valid-only"},
      {"format_version", "3", "__metadata__.format_version: \"3\" is not supported"},
      // Version 2 names the value format (value_format, which e2m1 needs) instead of fp8_format.
      {"format_version", "2", "__metadata__.value_format: missing"},
  };
  for (const auto& [key, value, expected] : cases) {
    SCOPED_TRACE(key + " = " + value);
    const auto m = parse_error(testing::edit_header(sample_bytes(), [&](json& h) { h["__metadata__"][key] = value; }));
    EXPECT_CONTAINS(m, "bad.safetensors: " + expected);
  }
}

TEST(CaseFileErrors, JsonProblems) {
  const auto data = testing::split_file(sample_bytes()).data;
  auto with_text = [&](const std::string& text) { return parse_error(testing::join_file(text, data)); };
  EXPECT_CONTAINS(with_text(R"({"q":1,"q":2})"), "header: JSON has duplicate key \"q\"");
  EXPECT_CONTAINS(with_text(R"({"__metadata__":{"a":"1","a":"2"}})"), "header: JSON has duplicate key \"a\"");
  EXPECT_CONTAINS(with_text("[1,2]"), "header: does not start with '{'");
  EXPECT_CONTAINS(with_text(R"({"q":)"), "header: is not valid JSON");
  EXPECT_CONTAINS(with_text("{\"__metadata__\":{\"a\":\"\xC3\x28\"}}"), "header: byte 22 of the JSON header (0xc3) is not valid UTF-8");
  EXPECT_CONTAINS(with_text("{\"__metadata__\":{\"a\":\"\xED\xA0\x80\"}}"), "is not valid UTF-8");  // a surrogate
  std::string deep = R"({"__metadata__":{"x":)" + std::string(20, '[') + std::string(20, ']') + "}}";
  EXPECT_CONTAINS(with_text(deep), "header: JSON has nesting deeper than 8 levels");
  std::string wide = R"({"__metadata__":{"x":[)";
  for (int i = 0; i < 70000; ++i) wide += "0,";
  wide += "0]}}";
  EXPECT_CONTAINS(with_text(wide), "header: JSON has more than 65536 values");
  EXPECT_CONTAINS(with_text("{}"), "tensor weights: missing");
  // nlohmann stops at a NUL: without the reader's own check this header would read as the valid
  // one before it (python/tests/fuzz_logits_readers.py found it; Python's reader refuses it).
  const std::string valid = testing::split_file(sample_bytes()).header.dump();
  EXPECT_CONTAINS(with_text(valid + std::string(" \0", 2)), "header: byte " + std::to_string(valid.size() + 1) +
                                                                 " of the JSON header is NUL");
}

TEST(CaseFileErrors, NamesMustBePrintable) {
  for (const std::string& bad : {std::string("a\0b", 3), std::string("\x1b[31m"), std::string("tab\there"),
                                std::string("c1 \xC2\x9B")}) {
    auto header = testing::split_file(sample_bytes()).header;
    header["__metadata__"]["name"] = bad;
    EXPECT_CONTAINS(parse_error(testing::join_file(header.dump(), testing::split_file(sample_bytes()).data)),
                    "__metadata__.name: ");
    CaseFile f = testing::sample_case_file();
    f.c.suite = bad;
    EXPECT_CONTAINS(message_of([&] { (void)serialize_case_file(f); }), "suite: ");
  }
}

// ---------------------------------------------------------------- the writer

TEST(CaseFileWriter, RejectsInconsistentInput) {
  CaseFile f = testing::sample_case_file();
  f.c.q.pop_back();
  EXPECT_CONTAINS(message_of([&] { (void)serialize_case_file(f); }),
                  "<memory>: q: buffer holds 191 elements but shape [2, 2, 3, 16] [B, N, H, D] (e2m1: [B, N, H, D/2]) needs 192");
  f = testing::sample_case_file();
  f.logits->push_back(0);
  EXPECT_CONTAINS(message_of([&] { (void)serialize_case_file(f); }), "<memory>: logits: buffer holds 161 elements");
  f = testing::sample_case_file();
  f.extra["seed"] = "1";
  EXPECT_CONTAINS(message_of([&] { (void)serialize_case_file(f); }), "<memory>: extra key seed: is reserved");
  f = testing::sample_case_file();
  f.c.name = "bad\xFF";
  EXPECT_CONTAINS(message_of([&] { (void)serialize_case_file(f); }), "<memory>: name: is not valid UTF-8");
  f = testing::sample_case_file();
  f.c.heads = 0;
  EXPECT_CONTAINS(message_of([&] { (void)serialize_case_file(f); }), "<memory>: heads: 0 is outside [1, 2147483647]");
  f = testing::sample_case_file();
  f.c.block_stride = 100;
  EXPECT_CONTAINS(message_of([&] { (void)serialize_case_file(f); }), "<memory>: block_stride: 100 is below");
  EXPECT_CONTAINS(message_of([&] { write_case_file("/nonexistent-dir/x.safetensors", testing::sample_case_file()); }),
                  "/nonexistent-dir/x.safetensors: file: cannot write: No such file or directory");
}

TEST(CaseFileReader, FileErrors) {
  EXPECT_CONTAINS(message_of([] { (void)read_case_file("/nonexistent-dir/x.safetensors"); }),
                  "/nonexistent-dir/x.safetensors: file: does not exist");
  const auto dir = std::filesystem::temp_directory_path();
  EXPECT_CONTAINS(message_of([&] { (void)read_case_file(dir); }), ": file: is a directory");
  // A FIFO is refused without being opened (opening one blocks until a writer comes).
  const auto fifo = dir / ("pmqa_case_file_fifo_" + std::to_string(::getpid()) + ".safetensors");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_CONTAINS(message_of([&] { (void)read_case_file(fifo); }), ": file: is a FIFO, not a regular file");
  EXPECT_CONTAINS(message_of([&] { (void)read_logits_file(fifo); }), ": file: is a FIFO, not a regular file");
  EXPECT_FALSE(is_logits_file(fifo));
  std::filesystem::remove(fifo);
  // the file reader applies the same checks as the in-memory one
  const auto path = dir / ("pmqa_case_file_bad_" + std::to_string(::getpid()) + ".safetensors");
  auto bytes = testing::edit_header(sample_bytes(), [](json& h) { h["q"]["dtype"] = "BF16"; });
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  const auto m = message_of([&] { (void)read_case_file(path); });
  EXPECT_CONTAINS(m, path.string() + ": tensor q.dtype: dtype \"BF16\" of tensor q is not supported here");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace pmqa::cases
