// The case-file reader on a corpus of corrupted files: every input must give a CaseFileError (or a
// CaseError) or a valid case; never a crash, a hang, another exception type, or a read out of
// bounds (this test is the one the asan preset runs under AddressSanitizer and UBSan).
//
// The corpus is generated deterministically from a few small valid files and a fixed seed:
// truncation at every length, byte flips in the length field and the header, header length lies,
// random multi-byte damage anywhere, structural edits of the JSON (huge / negative / fractional
// shapes and offsets, overlapping and out-of-range offsets, every dtype, missing and extra keys,
// wrong metadata kinds), and deeply nested or giant JSON.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "case_file_test_support.hpp"

namespace pmqa::cases {
namespace {

using nlohmann::json;
using testing::TestShape;

constexpr std::uint64_t kCorpusSeed = 0x5eed'ca5e'f11e'0001ull;

struct Outcome {
  std::size_t inputs = 0;
  std::size_t rejected = 0;
  std::size_t accepted = 0;
};

// Parses one input; fails the test (naming the input) on anything but a CaseFileError/CaseError
// or a case that passes validate() and survives a second round trip.
void check_one(const std::vector<std::uint8_t>& bytes, const std::string& what, Outcome& out) {
  ++out.inputs;
  try {
    const CaseFile f = parse_case_file(bytes, "corpus");
    ++out.accepted;
    ASSERT_NO_THROW(validate(f.c)) << what;
    const auto again = serialize_case_file(f);
    const CaseFile g = parse_case_file(again, "corpus-again");
    ASSERT_TRUE(testing::same_case_file(f, g)) << what;
    ASSERT_EQ(serialize_case_file(g), again) << what;
  } catch (const CaseFileError& e) {
    ++out.rejected;
    ASSERT_EQ(std::string(e.what()).rfind("corpus: ", 0), 0u) << what << ": " << e.what();
    ASSERT_FALSE(e.field().empty()) << what;
  } catch (const CaseError& e) {
    ++out.rejected;
  } catch (const std::exception& e) {
    FAIL() << what << ": unexpected exception type: " << e.what();
  }
}

std::vector<std::vector<std::uint8_t>> base_files() {
  std::vector<std::vector<std::uint8_t>> files;
  TestShape s;
  s.heads = 2;
  s.num_blocks = 3;
  files.push_back(serialize_case_file(testing::make_case_file(s, 11)));  // 1-D, logits
  s = {};
  s.batch = 0;
  files.push_back(serialize_case_file(testing::make_case_file(s, 12)));  // B = 0
  s = {};
  s.ctx2d = true;
  s.next_n = 3;
  s.batch = 1;
  s.format = ValueFormat::e4m3fnuz;
  s.layout = KvLayout::shuffle;
  s.logits = false;
  s.stride_pad = 4;
  files.push_back(serialize_case_file(testing::make_case_file(s, 13)));  // 2-D, shuffle, fnuz
  return files;
}

std::vector<std::uint8_t> with_length(std::vector<std::uint8_t> bytes, std::uint64_t len) {
  for (int i = 0; i < 8; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(len >> (8 * i));
  return bytes;
}

class CaseFileCorpus : public ::testing::Test {
 protected:
  void SetUp() override { files_ = base_files(); }
  void TearDown() override {
    std::printf("[ corpus   ] %s: %zu inputs, %zu rejected, %zu accepted (seed 0x%llx)\n",
                ::testing::UnitTest::GetInstance()->current_test_info()->name(), out_.inputs, out_.rejected,
                out_.accepted, static_cast<unsigned long long>(kCorpusSeed));
  }
  std::vector<std::vector<std::uint8_t>> files_;
  Outcome out_;
};

TEST_F(CaseFileCorpus, BaseFilesAreValid) {
  for (const auto& f : files_) check_one(f, "base", out_);
  EXPECT_EQ(out_.accepted, files_.size());
}

TEST_F(CaseFileCorpus, TruncationAtEveryLength) {
  for (std::size_t k = 0; k < files_.size(); ++k) {
    const auto& f = files_[k];
    for (std::size_t n = 0; n < f.size(); ++n) {
      // a right-sized copy, so AddressSanitizer sees any read past the end
      check_one(std::vector<std::uint8_t>(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(n)),
                "file " + std::to_string(k) + " truncated to " + std::to_string(n), out_);
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_EQ(out_.accepted, 0u);
}

TEST_F(CaseFileCorpus, ByteFlipsInLengthAndHeader) {
  static constexpr std::uint8_t kValues[] = {0x00, 0x01, 0x7F, 0x80, 0xFF, '"', '0', '9', '-', '{', '}', '[', ']', ',', ':', 'e', '.', ' '};
  for (std::size_t k = 0; k < files_.size(); ++k) {
    const auto& f = files_[k];
    const std::size_t header_end = 8 + static_cast<std::size_t>(testing::header_length(f));
    for (std::size_t i = 0; i < header_end; ++i) {
      for (std::uint8_t v : kValues) {
        if (f[i] == v) continue;
        auto g = f;
        g[i] = v;
        check_one(g, "file " + std::to_string(k) + " byte " + std::to_string(i) + " = " + std::to_string(v), out_);
        if (HasFatalFailure()) return;
      }
      for (int bit = 0; bit < 8; bit += 3) {
        auto g = f;
        g[i] ^= static_cast<std::uint8_t>(1u << bit);
        check_one(g, "file " + std::to_string(k) + " byte " + std::to_string(i) + " bit " + std::to_string(bit), out_);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST_F(CaseFileCorpus, HeaderLengthLies) {
  for (std::size_t k = 0; k < files_.size(); ++k) {
    const auto& f = files_[k];
    const std::uint64_t len = testing::header_length(f);
    const std::uint64_t size = f.size();
    const std::uint64_t lies[] = {0, 1, 2, 7, 8, len - 8, len - 1, len + 1, len + 8, size - 8, size - 7, size, size + 1,
                                  0xFFFFFFFFull, 0x100000000ull, kCaseFileMaxHeaderBytes, kCaseFileMaxHeaderBytes + 1,
                                  0x7FFFFFFFFFFFFFFFull, 0x8000000000000000ull, 0xFFFFFFFFFFFFFFF8ull, ~0ull};
    for (std::uint64_t lie : lies) {
      check_one(with_length(f, lie), "file " + std::to_string(k) + " length " + std::to_string(lie), out_);
      if (HasFatalFailure()) return;
    }
    for (std::uint64_t l = 0; l < std::min<std::uint64_t>(size - 8, len + 64); ++l) {
      check_one(with_length(f, l), "file " + std::to_string(k) + " length " + std::to_string(l), out_);
      if (HasFatalFailure()) return;
    }
  }
}

TEST_F(CaseFileCorpus, RandomDamageAnywhere) {
  std::mt19937_64 rng(kCorpusSeed);
  for (std::size_t k = 0; k < files_.size(); ++k) {
    const auto& f = files_[k];
    const std::size_t header_end = 8 + static_cast<std::size_t>(testing::header_length(f));
    for (int round = 0; round < 3000; ++round) {
      auto g = f;
      const int hits = 1 + static_cast<int>(rng() % 4);
      for (int h = 0; h < hits; ++h) {
        // half the hits land in the header, where they do the most damage
        const std::size_t at = (rng() & 1) ? rng() % header_end : rng() % g.size();
        g[at] = static_cast<std::uint8_t>(rng());
      }
      if (rng() % 8 == 0) g.resize(rng() % g.size());
      check_one(g, "file " + std::to_string(k) + " random round " + std::to_string(round), out_);
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_GT(out_.accepted, 0u) << "damage in the data section often leaves a valid case";
  EXPECT_GT(out_.rejected, 0u);
}

// Edits of the parsed header, re-serialised around the unchanged data section.
TEST_F(CaseFileCorpus, StructuralEdits) {
  const json numbers[] = {json(0),
                          json(1),
                          json(3),
                          json(2147483647),
                          json(2147483648ull),
                          json(4294967296ull),
                          json(4611686018427387904ull),
                          json(9223372036854775807ull),
                          json(9223372036854775808ull),
                          json(18446744073709551615ull),
                          json(-1),
                          json(-9223372036854775807ll - 1),
                          json(1.5),
                          json(1e300),
                          json("3"),
                          json(nullptr),
                          json(true),
                          json::array(),
                          json::object()};
  const char* dtypes[] = {"U8", "I8", "F8_E4M3", "F8_E4M3FNUZ", "F8_E5M2", "BOOL", "I16", "U16", "F16", "BF16",
                          "I32", "U32", "F32", "F64", "I64", "U64", "", "u8", "F32 ", "\xC3\xA9"};
  const char* meta_values[] = {"", "0", "1", "-1", "01", "1e3", "16.0", " 1", "2147483647", "2147483648",
                               "99999999999999999999", "18446744073709551615", "e4m3fn", "e4m3fnuz", "normal",
                               "shuffle", "clean", "valid-only", "x\n"};
  std::mt19937_64 rng(kCorpusSeed + 1);
  for (std::size_t k = 0; k < files_.size(); ++k) {
    const auto parts = testing::split_file(files_[k]);
    auto run = [&](const std::string& what, const std::function<void(json&)>& edit) {
      json h = parts.header;
      edit(h);
      check_one(testing::join_file(h.dump(), parts.data), "file " + std::to_string(k) + ": " + what, out_);
    };
    std::vector<std::string> tensors;
    for (auto& [name, v] : parts.header.items())
      if (name != "__metadata__") tensors.push_back(name);

    for (const auto& t : tensors) {
      const std::size_t rank = parts.header[t]["shape"].size();
      for (std::size_t d = 0; d < rank; ++d)
        for (const auto& n : numbers) run(t + ".shape[" + std::to_string(d) + "] = " + n.dump(), [&](json& h) { h[t]["shape"][d] = n; });
      for (int o = 0; o < 2; ++o)
        for (const auto& n : numbers)
          run(t + ".data_offsets[" + std::to_string(o) + "] = " + n.dump(), [&](json& h) { h[t]["data_offsets"][o] = n; });
      for (const char* d : dtypes) run(t + ".dtype = " + d, [&](json& h) { h[t]["dtype"] = d; });
      for (const char* key : {"dtype", "shape", "data_offsets"}) {
        run(t + " without " + key, [&](json& h) { h[t].erase(key); });
        for (const auto& n : numbers) run(t + "." + key + " = " + n.dump(), [&](json& h) { h[t][key] = n; });
      }
      run(t + " removed", [&](json& h) { h.erase(t); });
      run(t + " extra field", [&](json& h) { h[t]["x"] = 1; });
      run(t + " not an object", [&](json& h) { h[t] = json::array({1, 2}); });
      run(t + " shape rank + 1", [&](json& h) { h[t]["shape"].push_back(1); });
      run(t + " shape rank - 1", [&](json& h) { h[t]["shape"].erase(h[t]["shape"].size() - 1); });
      run(t + " offsets swapped", [&](json& h) {
        auto o = h[t]["data_offsets"];
        h[t]["data_offsets"] = {o[1], o[0]};
      });
      run(t + " offsets of 3", [&](json& h) { h[t]["data_offsets"].push_back(0); });
      // overlap with / copy of every other tensor's range; shift by small amounts
      for (const auto& u : tensors) {
        if (u == t) continue;
        run(t + " offsets = " + u + "'s", [&](json& h) { h[t]["data_offsets"] = h[u]["data_offsets"]; });
        run(t + " shape = " + u + "'s", [&](json& h) { h[t]["shape"] = h[u]["shape"]; });
      }
      for (std::int64_t delta : {-8, -4, -1, 1, 4, 8}) {
        run(t + " offsets shifted " + std::to_string(delta), [&](json& h) {
          for (int o = 0; o < 2; ++o) {
            const auto v = h[t]["data_offsets"][o].get<std::int64_t>() + delta;
            h[t]["data_offsets"][o] = v;
          }
        });
      }
      run(t + " renamed", [&](json& h) {
        h[t + "_"] = h[t];
        h.erase(t);
      });
    }
    // metadata: each key removed, retyped, or given each value
    std::vector<std::string> keys;
    for (auto& [key, v] : parts.header["__metadata__"].items()) keys.push_back(key);
    for (const auto& key : keys) {
      run("meta " + key + " removed", [&](json& h) { h["__metadata__"].erase(key); });
      for (const auto& n : numbers)
        if (!n.is_string()) run("meta " + key + " = " + n.dump(), [&](json& h) { h["__metadata__"][key] = n; });
      for (const char* v : meta_values) run("meta " + key + " = " + v, [&](json& h) { h["__metadata__"][key] = v; });
    }
    for (const auto& n : numbers) run("meta = " + n.dump(), [&](json& h) { h["__metadata__"] = n; });
    run("no meta", [&](json& h) { h.erase("__metadata__"); });
    run("header is an array", [&](json& h) { h = json::array({h}); });
    run("empty header", [&](json& h) { h = json::object(); });
    // random combinations of the edits above
    for (int round = 0; round < 2000; ++round) {
      run("random structural round " + std::to_string(round), [&](json& h) {
        const int edits = 1 + static_cast<int>(rng() % 3);
        for (int e = 0; e < edits; ++e) {
          const auto& t = tensors[rng() % tensors.size()];
          const auto& n = numbers[rng() % std::size(numbers)];
          switch (rng() % 5) {
            case 0:
              if (h[t].is_object() && h[t]["shape"].is_array() && !h[t]["shape"].empty())
                h[t]["shape"][rng() % h[t]["shape"].size()] = n;
              break;
            case 1:
              if (h[t].is_object() && h[t]["data_offsets"].is_array() && h[t]["data_offsets"].size() == 2)
                h[t]["data_offsets"][rng() % 2] = rng() % (parts.data.size() + 2);
              break;
            case 2: h[t]["dtype"] = dtypes[rng() % std::size(dtypes)]; break;
            case 3: h["__metadata__"][keys[rng() % keys.size()]] = meta_values[rng() % std::size(meta_values)]; break;
            default:
              if (h[t].is_object() && h[t]["shape"].is_array() && !h[t]["shape"].empty())
                h[t]["shape"][rng() % h[t]["shape"].size()] = rng() % 8;
              break;
          }
        }
      });
    }
    if (HasFatalFailure()) return;
  }
}

TEST_F(CaseFileCorpus, NestedAndGiantJson) {
  const auto parts = testing::split_file(files_[0]);
  auto run_text = [&](const std::string& what, const std::string& text) {
    check_one(testing::join_file(text, parts.data), what, out_);
  };
  for (std::size_t depth : {7u, 8u, 9u, 10u, 100u, 10000u, 1000000u}) {
    run_text("arrays nested " + std::to_string(depth), "{\"x\":" + std::string(depth, '[') + std::string(depth, ']') + "}");
    run_text("unclosed arrays " + std::to_string(depth), "{\"x\":" + std::string(depth, '['));
    std::string objects;
    for (std::size_t i = 0; i < depth; ++i) objects += "{\"a\":";
    objects += "1" + std::string(depth, '}');
    run_text("objects nested " + std::to_string(depth), "{\"__metadata__\":" + objects + "}");
  }
  // deep nesting inside the metadata of an otherwise valid header
  {
    json h = parts.header;
    h["__metadata__"]["deep"] = json::array();
    json* at = &h["__metadata__"]["deep"];
    for (int i = 0; i < 12; ++i) {
      at->push_back(json::array());
      at = &(*at)[0];
    }
    run_text("metadata nested 12", h.dump());
  }
  // many values, many keys, long strings
  for (std::size_t n : {1000u, 65535u, 65536u, 70000u, 300000u}) {
    std::string wide = "{\"x\":[";
    for (std::size_t i = 0; i < n; ++i) wide += "0,";
    wide += "0]}";
    run_text("array of " + std::to_string(n), wide);
    json h = parts.header;
    for (std::size_t i = 0; i < n; ++i) h["__metadata__"][std::to_string(i) + "k"] = "v";
    run_text("metadata keys " + std::to_string(n), h.dump());
  }
  {
    json h = parts.header;
    h["__metadata__"]["long"] = std::string(4u << 20, 'x');  // a 4 MiB extra value: fine
    run_text("4 MiB metadata value", h.dump());
    EXPECT_GT(out_.accepted, 0u);
  }
  // a header just over the cap (the data section follows a 16 MiB + 1 header)
  {
    std::string big = parts.header.dump();
    big.append(kCaseFileMaxHeaderBytes + 1 - big.size(), ' ');
    run_text("header over the cap", big);
  }
  // long runs of digits, strings and escapes
  run_text("huge number", "{\"q\":{\"shape\":[" + std::string(100000, '9') + "]}}");
  run_text("huge exponent", "{\"q\":{\"shape\":[1e999999]}}");
  run_text("bad escape", "{\"__metadata__\":{\"a\":\"\\uD800\"}}");
  run_text("escaped NUL", "{\"__metadata__\":{\"a\":\"\\u0000\"}}");
  run_text("raw NUL", std::string("{\"__metadata__\":{\"a\":\"\0\"}}", 25));
  run_text("trailing garbage", parts.header.dump() + "x");
  run_text("two objects", parts.header.dump() + parts.header.dump());
  run_text("comment", "/**/" + parts.header.dump());
  run_text("BOM", "\xEF\xBB\xBF" + parts.header.dump());
}

}  // namespace
}  // namespace pmqa::cases
