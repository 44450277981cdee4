// Case files: one case (and optionally a kernel's output) per file, in the safetensors format.
//
// Layout of a file:
//   bytes [0, 8)          header length L, unsigned 64-bit little-endian
//   bytes [8, 8 + L)      a JSON object (UTF-8): one entry per tensor,
//                           "name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}
//                         with offsets relative to the data section, and "__metadata__": an object
//                         whose values are all strings. The writer pads L with spaces so the data
//                         section starts at a multiple of 8.
//   bytes [8 + L, end)    the data section: the tensors' bytes, little-endian, row-major.
//
// Tensors (the writer emits them in this order; the reader accepts any order that covers the data
// section exactly):
//   weights       F32  [B*N, H]
//   context_lens  I32  [B] or [B, N]
//   block_table   I32  [B, max_blocks_per_seq]
//   logits        F32  [B*N, max_model_len]   optional: a kernel's output to verify
//   q             U8   [B, N, H, D]  (the reader also accepts F8_E4M3 for e4m3fn and F8_E4M3FNUZ for
//                                     e4m3fnuz; the writer always emits U8); e2m1: [B, N, H, D/2],
//                                     two values a byte
//   q_scales      U8   [B, N, H, 4]  e2m1 only: q's UE8M0 scales, one per 32 values (the int32
//                                     [B, N, H] the libraries take is the same bytes)
//   kv_cache      U8   [num_blocks, block_stride]
//
// Metadata (all values are strings; numbers are canonical non-negative decimals):
//   format_version "1", name, suite, seed, producer, fp8_format ("e4m3fn" | "e4m3fnuz"),
//   kv_layout ("normal" | "shuffle" | "interleaved"), contract ("clean" | "valid-only"), batch,
//   next_n, heads, head_dim, block_size, max_model_len. Version "2" names value_format ("e4m3fn" |
//   "e4m3fnuz" | "e2m1") in place of fp8_format; the writer uses it for e2m1 cases only, so an fp8
//   case's file is byte for byte what version 1 always wrote. Any other key is a free-form string kept in
//   CaseFile::extra and written back unchanged (e.g. a runner's "bench_ms"), except that "tolerance"
//   and "nan", where present, must name a tolerance profile and a NaN rule: the judging a file
//   asks for is part of what makes it valid (check_judging_metadata).
//
// Writing is deterministic: the same CaseFile gives byte-identical files (sorted JSON keys, fixed
// tensor order, no timestamps). Reading is strict and safe on hostile input; every problem is a
// CaseFileError naming the file, the field and the problem. After the structural checks the reader
// runs validate(), so a semantically invalid case (a block_table entry out of range, a context
// length past max_model_len) is a CaseFileError too.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pmqa/model/case.hpp"

namespace pmqa::cases {

// A case file's content: the case, an optional kernel output, and the metadata that is not part of
// the case model.
struct CaseFile {
  Case c;
  std::optional<std::vector<float>> logits;  // [B*N, max_model_len] when present
  Contract contract = Contract::clean;       // the output contract the logits are checked under
  std::string producer;                      // who wrote the file (e.g. "pmqa gen", "pmqa-run aiter")
  std::map<std::string, std::string> extra;  // free-form metadata, preserved on a round trip
};

// An unreadable, inconsistent or invalid case file (or a CaseFile that cannot be written).
// Derives from CaseError so callers that handle bad input generically can catch either.
class CaseFileError : public CaseError {
 public:
  CaseFileError(std::string file, std::string field, std::string problem, int os_errno = 0);
  const std::string& file() const noexcept { return file_; }
  const std::string& field() const noexcept { return field_; }    // e.g. "tensor q", "__metadata__.seed"
  const std::string& problem() const noexcept { return problem_; }
  // A write the system refused: its errno (ENOSPC, EDQUOT, EROFS, ...), so a runner can tell a full
  // disk from a bad case; 0 for every other problem.
  int os_errno() const noexcept { return os_errno_; }

 private:
  std::string file_;
  std::string field_;
  std::string problem_;
  int os_errno_ = 0;
};

inline constexpr std::string_view kCaseFileFormatVersion = "1";
// Largest JSON header the reader accepts (the header of a real case is well under 4 KiB).
inline constexpr std::uint64_t kCaseFileMaxHeaderBytes = 16u << 20;
// Deepest JSON nesting the reader accepts (a valid header needs 3).
inline constexpr int kCaseFileMaxJsonDepth = 8;
// Metadata keys the format owns; CaseFile::extra may not use them.
bool is_reserved_case_file_key(std::string_view key) noexcept;
std::vector<std::string> case_file_reserved_keys();  // every one, __metadata__ too

// The whole file in memory. Throws CaseFileError (source name "<memory>") when the CaseFile is
// structurally inconsistent (a buffer's size disagrees with the shape, logits of the wrong size,
// an extra key that is reserved). The case is not validate()d: invalid cases can be written on
// purpose, e.g. to test a verifier.
std::vector<std::uint8_t> serialize_case_file(const CaseFile& file);

// Writes serialize_case_file(file) to `path` (through a temporary file in the same directory that
// is renamed into place) and returns the SHA-256 of the bytes written (what a run record keeps to
// know its files). Throws CaseFileError on inconsistency or an I/O error (os_errno() set).
std::string write_case_file(const std::filesystem::path& path, const CaseFile& file);

// Parses a file's bytes; `source_name` names it in error messages. Throws CaseFileError.
CaseFile parse_case_file(std::span<const std::uint8_t> bytes, std::string_view source_name);

// Reads and parses a file (tensors are read straight into the case's buffers). Throws CaseFileError.
CaseFile read_case_file(const std::filesystem::path& path);

}  // namespace pmqa::cases
