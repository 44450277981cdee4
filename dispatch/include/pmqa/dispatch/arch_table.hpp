// The arch table: what each known GPU target offers FP8 paged MQA logits. The data lives in
// dispatch/data/arch_table.json, compiled into the library; it is parsed and validated once, on
// first use, and a malformed table is a hard error naming the entry.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pmqa/dispatch/arch.hpp"
#include "pmqa/model/fp8_format.hpp"
#include "pmqa/model/matrix_kind.hpp"

namespace pmqa::dispatch {

struct ArchInfo {
  std::string target;                 // "gfx942", "sm_90"
  Vendor vendor = Vendor::amd;
  std::string family;                 // "CDNA3", "Hopper", ...
  std::optional<Fp8Format> fp8;       // nullopt: no fp8 instructions at all
  int wave_size = 64;                 // 32 or 64
  MatrixKind fp8_matrix = MatrixKind::none;  // which fp8 matrix instruction it has (model/matrix_kind.hpp)
  std::string fp8_matrix_example;     // one instruction, for readers ("" when none)
  std::optional<std::string> fused_kernel_library;  // "AITER" / "DeepGEMM": the library ships a fused kernel here
  // pmqa's own kernel serving the fused path here: "fused-mma" (NVIDIA fp8 mma.sync), "fused-mfma"
  // (AMD fp8 MFMA in the arch's format), "fused-scalar" (portable); none without fp8.
  std::optional<std::string> pmqa_fused_kernel;
  std::vector<std::string> products;  // "MI300X", "H200", ...
  std::string note;

  bool has_fp8() const noexcept { return fp8.has_value(); }
  bool has_fp8_matrix() const noexcept { return fp8_matrix != MatrixKind::none; }
  std::string products_text() const;  // "MI350X/MI355X"
  std::string label() const;          // "gfx950 (MI350X/MI355X)"
};

// A table that does not hold together: what() names the source, the entry and the field, e.g.
//   dispatch/data/arch_table.json: entry 3 (gfx942): field "wave_size" must be 32 or 64, got 48
class ArchTableError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An arch the table does not know: never a fallback. what() names it and lists the known targets.
class UnknownArchError : public std::runtime_error {
 public:
  UnknownArchError(std::string arch, std::vector<std::string> known);
  const std::string& arch() const noexcept { return arch_; }
  const std::vector<std::string>& known() const noexcept { return known_; }

 private:
  std::string arch_;
  std::vector<std::string> known_;
};

class ArchTable {
 public:
  // The table compiled into the library (parsed on first call; throws ArchTableError if malformed).
  static const ArchTable& builtin();
  // The JSON text compiled into the library, and the repository path it came from.
  static std::string_view builtin_json() noexcept;
  static std::string_view builtin_source() noexcept;

  // Parses and validates a table. `source` names it in error messages. Throws ArchTableError.
  static ArchTable parse(std::string_view json_text, std::string_view source);

  const std::vector<ArchInfo>& entries() const noexcept { return entries_; }
  std::vector<std::string> targets() const;  // in table order

  const ArchInfo* find(std::string_view target) const noexcept;
  // The entry of arch.target. Throws UnknownArchError (naming arch.text) when there is none.
  const ArchInfo& at(const Arch& arch) const;
  const ArchInfo& at(std::string_view target) const;

 private:
  std::vector<ArchInfo> entries_;
};

}  // namespace pmqa::dispatch
