// Logits-only result files: SHA-256 against FIPS 180-4's vectors, a strict round trip, and the join
// with the input case (a changed input, a missing one, another shape are errors naming the field).
#include <fstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

#include "pmqa/cases/logits_file.hpp"
#include "pmqa/fixtures/suites.hpp"

namespace pmqa::cases {
namespace {
namespace fs = std::filesystem;

struct Tmp {
  fs::path dir = fs::temp_directory_path() / ("pmqa_logits_file_test." + std::to_string(::getpid()));
  Tmp() { fs::create_directories(dir); }
  ~Tmp() { fs::remove_all(dir); }
};

std::string sha(const std::string& s) { return sha256_hex(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()); }

TEST(Sha256, StandardVectors) {
  EXPECT_EQ(sha(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  Tmp t;
  std::ofstream(t.dir / "f") << "abc";
  EXPECT_EQ(sha256_file(t.dir / "f"), sha("abc"));
}

CaseFile quick_case(const std::string& name) {
  for (const auto& sc : fixtures::suite("quick"))
    if (sc.name == name) {
      CaseFile f;
      f.c = fixtures::make_case(sc.spec);
      f.producer = "pmqa gen";
      return f;
    }
  throw std::runtime_error(name);
}

LogitsFile result_for(const CaseFile& input, const fs::path& input_path) {
  LogitsFile r;
  r.name = input.c.name;
  r.producer = "test";
  r.input_file = input_path.filename().string();
  r.input_sha256 = sha256_file(input_path);
  r.contract = Contract::valid_only;
  r.batch = input.c.batch;
  r.next_n = input.c.next_n;
  r.max_model_len = input.c.max_model_len;
  r.logits.assign(static_cast<std::size_t>(input.c.rows() * input.c.max_model_len), 1.5f);
  r.extra["tolerance"] = "matrix-unit";
  return r;
}

TEST(LogitsFile, RoundTripAndJoin) {
  Tmp t;
  const CaseFile input = quick_case("padded-stride");
  write_case_file(t.dir / "padded-stride.safetensors", input);
  const LogitsFile r = result_for(input, t.dir / "padded-stride.safetensors");
  fs::create_directories(t.dir / "out");
  write_logits_file(t.dir / "out" / "padded-stride.safetensors", r);
  EXPECT_TRUE(is_logits_file(t.dir / "out" / "padded-stride.safetensors"));
  EXPECT_FALSE(is_logits_file(t.dir / "padded-stride.safetensors"));
  const LogitsFile back = read_logits_file(t.dir / "out" / "padded-stride.safetensors");
  EXPECT_EQ(back.logits, r.logits);
  EXPECT_EQ(back.input_sha256, r.input_sha256);
  EXPECT_EQ(back.extra, r.extra);
  EXPECT_EQ(back.contract, Contract::valid_only);
  const CaseFile joined = join_logits_file(back, t.dir / "out" / "padded-stride.safetensors", t.dir);
  EXPECT_EQ(joined.c.kv_cache, input.c.kv_cache);
  EXPECT_EQ(*joined.logits, r.logits);
  EXPECT_EQ(joined.contract, Contract::valid_only);
  EXPECT_EQ(joined.producer, "test");
  EXPECT_EQ(joined.extra.at("tolerance"), "matrix-unit");
  // The result is a fraction of the input's size: the point of the format.
  EXPECT_LT(fs::file_size(t.dir / "out" / "padded-stride.safetensors"), fs::file_size(t.dir / "padded-stride.safetensors"));
}

std::string join_error(const LogitsFile& r, const fs::path& dir) {
  try {
    join_logits_file(r, dir / "result.safetensors", dir);
  } catch (const CaseFileError& e) {
    return e.field() + ": " + e.problem();
  }
  return "";
}

TEST(LogitsFile, AnInputThatIsNotTheOneTheRunReadIsInvalid) {
  Tmp t;
  const CaseFile input = quick_case("one-head");
  const fs::path path = t.dir / "one-head.safetensors";
  write_case_file(path, input);
  LogitsFile r = result_for(input, path);
  EXPECT_EQ(join_error(r, t.dir), "");
  // One byte of the input changed after the run.
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-1, std::ios::end);
    f.put('\x5a');
  }
  EXPECT_NE(join_error(r, t.dir).find("__metadata__.input_sha256: the run read an input with sha256"), std::string::npos);
  r.input_file = "nothing.safetensors";
  EXPECT_NE(join_error(r, t.dir).find("does not exist"), std::string::npos);
  // The right bytes under another case's shape.
  write_case_file(path, input);
  r = result_for(input, path);
  r.max_model_len += 1;
  r.logits.resize(static_cast<std::size_t>(r.batch * r.next_n * r.max_model_len));
  EXPECT_NE(join_error(r, t.dir).find("disagrees with its input"), std::string::npos);
}

TEST(LogitsFile, ReaderIsStrict) {
  Tmp t;
  const CaseFile input = quick_case("one-head");
  write_case_file(t.dir / "in.safetensors", input);
  LogitsFile r = result_for(input, t.dir / "in.safetensors");
  r.input_sha256 = "ABC";
  EXPECT_THROW(serialize_logits_file(r), CaseFileError);
  r = result_for(input, t.dir / "in.safetensors");
  r.input_file = "../in.safetensors";
  EXPECT_THROW(serialize_logits_file(r), CaseFileError);
  r = result_for(input, t.dir / "in.safetensors");
  r.extra["content"] = "x";
  EXPECT_THROW(serialize_logits_file(r), CaseFileError);
  r = result_for(input, t.dir / "in.safetensors");
  auto bytes = serialize_logits_file(r);
  bytes.pop_back();  // truncated data section
  std::ofstream(t.dir / "cut.safetensors", std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                                   static_cast<std::streamsize>(bytes.size()));
  try {
    read_logits_file(t.dir / "cut.safetensors");
    FAIL() << "a truncated file was read";
  } catch (const CaseFileError& e) {
    EXPECT_EQ(e.field(), "data section");
  }
}

}  // namespace
}  // namespace pmqa::cases
