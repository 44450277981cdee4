// The kernel-name table: which library and path a GPU kernel's name means (reviewed data,
// cases/data/kernel_names.json, compiled in; its "about" says the rules). pmqa-run's path gate
// classifies a call's launches with it: `--kernel-names FILE` files (same schema) are matched
// before the table, for a new library's kernels after review.
//
//   path = two-stage  if any kernel means two-stage
//          fused      else, if any kernel means fused
//          eager      else, if any kernel means eager
//          none       else (the op launched nothing that computes logits)
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pmqa::cases {

// A kernel-name file that cannot be read or does not hold together; the message names the file
// and the place.
class KernelNamesError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct KernelEntry {
  std::string pattern;  // fnmatch(3), case-sensitive: the first matching entry wins
  std::string library;
  std::string means;    // fused, two-stage, eager or any (a helper every path may launch)
  std::string role, source;
  std::string origin;   // the file it came from
};

// Strict: the schema, no unknown key, no duplicate key, every field a non-empty string, means one
// of fused, two-stage, eager, any.
std::vector<KernelEntry> parse_kernel_names(std::string_view json_text, std::string_view origin);
// The entries of `extra_files` (in order), then the reviewed table's.
std::vector<KernelEntry> load_kernel_names(const std::vector<std::string>& extra_files = {});

struct PathReport {
  std::string path;                                         // fused, two-stage, eager or none
  std::vector<std::pair<std::string, std::int64_t>> kernels;  // (name, launches), in first-launch order
  std::map<std::string, KernelEntry> known;                 // name -> the entry it matched
  std::vector<std::string> unknown;                         // names no entry matches

  // "_deepgemm_fp8_paged_mqa_logits_stage1 (aiter two-stage) x1, ..." (the first `limit`, then "and N more")
  std::string describe(std::size_t limit = 6) const;
  std::string metadata() const;  // "name x count; ...", full names: what a result file records
};

PathReport classify(const std::vector<std::string>& launched, const std::vector<KernelEntry>& entries);

}  // namespace pmqa::cases
