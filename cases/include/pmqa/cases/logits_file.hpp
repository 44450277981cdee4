// Logits-only result files: a kernel's output without a copy of its inputs (`pmqa-run
// --logits-only`, which writes them through this writer from Python).
//
// A safetensors file holding exactly one tensor, logits F32 [B*N, max_model_len], and string
// metadata: format_version "1", content "logits-only", name, producer, contract ("clean" |
// "valid-only"), input_file (the input case file's name, no folder), input_sha256 (64 lowercase
// hex digits of the input file's bytes), batch, next_n, max_model_len; any other key is the
// runner's (tolerance, nan, bench_ms, ...) and kept.
//
// join_logits_file() finds the input in a folder by name, checks its SHA-256 and its shape, and
// gives the CaseFile `pmqa verify` judges: the input case with the logits, the result file's
// producer and contract, and the input's metadata overlaid with the result file's.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pmqa/cases/case_file.hpp"
#include "pmqa/cases/sha256.hpp"  // the input hash a result records; callers use it beside the file

namespace pmqa::cases {

struct LogitsFile {
  std::string name, producer, input_file, input_sha256;
  Contract contract = Contract::clean;
  std::int64_t batch = 0, next_n = 1, max_model_len = 0;
  std::vector<float> logits;  // [batch*next_n, max_model_len]
  std::map<std::string, std::string> extra;
};

// The metadata keys the logits-only format owns (LogitsFile::extra may use none of them).
std::vector<std::string> logits_file_reserved_keys();

// The string values of a safetensors file's __metadata__, read from the header alone; empty for
// anything that is not a readable safetensors file (a FIFO or other special file is never opened).
// For sorting and weighing files before they are read strictly, never for judging them.
std::map<std::string, std::string> read_header_metadata(const std::filesystem::path& path);

// True when the file's metadata says content "logits-only" (reads the header only; false for
// anything unreadable, which the case-file reader then reports).
bool is_logits_file(const std::filesystem::path& path);

// Strict, as the case-file reader is (the same JSON rules, canonical decimals, integer shapes, a
// printable name, a plain input file name; a FIFO or other special file is refused unread): every
// problem is a CaseFileError naming the file and the field (python/tests/fuzz_logits_readers.py
// fuzzes it from C++ and from Python).
LogitsFile read_logits_file(const std::filesystem::path& path);
LogitsFile parse_logits_file(std::span<const std::uint8_t> bytes, std::string_view source_name = "<memory>");
std::vector<std::uint8_t> serialize_logits_file(const LogitsFile& file);
std::string write_logits_file(const std::filesystem::path& path, const LogitsFile& file);  // its SHA-256

// The input found as cases_dir / input_file. A missing input, a SHA-256 that does not match, or
// an input whose shape disagrees is a CaseFileError (invalid input: `pmqa verify` exits 2).
CaseFile join_logits_file(const LogitsFile& result, const std::filesystem::path& result_path,
                          const std::filesystem::path& cases_dir);

}  // namespace pmqa::cases
