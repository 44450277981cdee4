// pmqa_case_file_tool: the C++ end of the cross-language case-file tests (python/CMakeLists.txt).
//
//   pmqa_case_file_tool write CASE OUT       write case CASE (see below) to OUT
//   pmqa_case_file_tool expect CASE FILE     read FILE; its fields must equal CASE's and re-writing it
//                                            must give FILE's bytes exactly
//   pmqa_case_file_tool same-bytes A B       A and B must be byte-identical
//   pmqa_case_file_tool header FILE          print FILE's JSON header
//   pmqa_case_file_tool read-logits          for each path on stdin (one a line), read it as a logits-only
//                                            file and print one line: "valid", "invalid <message>", or
//                                            "escape <what>" for anything but a CaseFileError (a reader
//                                            bug: python/tests/fuzz_logits_readers.py counts them)
//
// CASE: "sample" (built from formulas, as python/tests/case_file_sample.py builds it) or
// "seeded:SEED:VARIANT" with VARIANT one of default, b0, ctx2d, shuffle, empty.
// Exit status: 0 ok, 1 a difference, 2 bad input or usage.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <typeinfo>

#include "case_file_test_support.hpp"
#include "pmqa/cases/logits_file.hpp"

namespace {

using namespace pmqa;
using namespace pmqa::cases;

CaseFile make(const std::string& spec) {
  if (spec == "sample") return testing::sample_case_file();
  const auto a = spec.find(':');
  const auto b = spec.find(':', a == std::string::npos ? a : a + 1);
  if (spec.rfind("seeded:", 0) != 0 || b == std::string::npos) throw std::invalid_argument("unknown CASE " + spec);
  const std::uint64_t seed = std::stoull(spec.substr(a + 1, b - a - 1));
  const std::string variant = spec.substr(b + 1);
  testing::TestShape s;
  if (variant == "b0") {
    s.batch = 0;
  } else if (variant == "ctx2d") {
    s.ctx2d = true;
    s.next_n = 3;
    s.logits = false;
  } else if (variant == "shuffle") {
    s.format = ValueFormat::e4m3fnuz;
    s.layout = KvLayout::shuffle;
    s.stride_pad = 12;
    s.heads = 4;
    s.head_dim = 32;
  } else if (variant == "empty") {
    s.batch = 0;
    s.num_blocks = 0;
    s.max_blocks = 0;
    s.max_model_len = 0;
  } else if (variant != "default") {
    throw std::invalid_argument("unknown variant " + variant);
  }
  return testing::make_case_file(s, seed);
}

std::vector<std::uint8_t> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int same_bytes(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b, const std::string& what) {
  if (a == b) return 0;
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  std::cerr << what << ": files differ (sizes " << a.size() << " and " << b.size() << ", first difference at byte "
            << i << ")\n";
  return 1;
}

int run(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "write" && argc == 4) {
    write_case_file(argv[3], make(argv[2]));
    return 0;
  }
  if (cmd == "expect" && argc == 4) {
    const CaseFile expected = make(argv[2]);
    const CaseFile got = read_case_file(argv[3]);
    std::string why;
    if (!testing::same_case_file(expected, got, &why)) {
      std::cerr << argv[3] << ": field " << why << " differs from " << argv[2] << "\n";
      return 1;
    }
    if (int rc = same_bytes(slurp(argv[3]), serialize_case_file(got), std::string(argv[3]) + " vs C++ rewrite")) return rc;
    std::cout << argv[3] << ": equals " << argv[2] << " field by field and byte for byte\n";
    return 0;
  }
  if (cmd == "same-bytes" && argc == 4) {
    const int rc = same_bytes(slurp(argv[2]), slurp(argv[3]), std::string(argv[2]) + " vs " + argv[3]);
    if (rc == 0) std::cout << argv[2] << " and " << argv[3] << " are byte-identical\n";
    return rc;
  }
  if (cmd == "header" && argc == 3) {
    const auto bytes = slurp(argv[2]);
    std::cout << testing::split_file(bytes).header.dump(2) << "\n";
    return 0;
  }
  if (cmd == "read-logits" && argc == 2) {
    std::string path;
    while (std::getline(std::cin, path)) {
      try {
        (void)read_logits_file(path);
        std::cout << "valid\n";
      } catch (const CaseFileError& e) {
        std::string message = e.what();
        for (char& ch : message)
          if (ch == '\n' || ch == '\r') ch = ' ';
        std::cout << "invalid " << message << "\n";
      } catch (const std::exception& e) {
        std::cout << "escape " << typeid(e).name() << ": " << e.what() << "\n";
      }
      std::cout.flush();
    }
    return 0;
  }
  std::cerr << "usage: pmqa_case_file_tool write CASE OUT | expect CASE FILE | same-bytes A B | header FILE | "
               "read-logits\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}
