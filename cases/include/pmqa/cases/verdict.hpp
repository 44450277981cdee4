// Judging the logits a case file holds, with the defaults `pmqa verify` applies: the contract,
// tolerance profile and NaN rule come from the file's metadata ("contract", "tolerance", "nan";
// written by pmqa-run from its calling convention) unless the caller overrides them, and else
// from the spec's defaults (fp32, propagate).
#pragma once

#include <optional>
#include <string>

#include "pmqa/cases/case_file.hpp"
#include "pmqa/reference/compare.hpp"

namespace pmqa::cases {

struct JudgeOverrides {
  JudgingOverrides judging{};  // the parts the caller forces (already parsed); the rest from the file
  int threads = 0;  // the oracle's threads (ReferenceOptions::threads; 0: every core)
};

// The file's Judging (resolve_judging over the overrides and the file's contract and metadata: the
// one place a file's names are parsed on the way to a verdict). Bad "tolerance" or "nan" metadata
// is a CaseFileError naming the file (`source`) and the field.
Judging file_judging(const CaseFile& f, const std::string& source, const JudgingOverrides& overrides = {});

// The comparison options for the file's logits: file_judging's, with compare()'s defaults otherwise.
CompareOptions file_compare_options(const CaseFile& f, const std::string& source, const JudgeOverrides& overrides = {});

// The file's logits as an OutputBuffer with no guard cells (a write outside a row cannot be seen
// once a runner has copied the rows out). Cells are copied bit for bit, so a cell a runner left
// at pmqa's sentinel NaN counts as never written. A file without logits is a CaseFileError.
OutputBuffer file_output(const CaseFile& f, const std::string& source);

// The fp64 oracle (with its noise scales) and the comparison of the file's logits under
// file_compare_options (Report::judging records what was resolved); with_map also fills Report::map (pmqa verify --map, the JUnit text map).
Report judge_case_file(const CaseFile& f, const std::string& source, const JudgeOverrides& overrides = {},
                       bool with_map = false);

}  // namespace pmqa::cases
