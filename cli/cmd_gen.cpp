// pmqa gen: write a suite's cases as case files (inputs for a kernel runner in any language), or
// list the suites. The same suite gives byte-identical files on every machine: the generator is
// seeded and the writer is deterministic.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.hpp"
#include "gen_list.hpp"
#include "pmqa/cases/case_file.hpp"
#include "pmqa/cases/envelope.hpp"
#include "pmqa/fixtures/fit.hpp"
#include "pmqa/fixtures/suites.hpp"
#include "pmqa/reference/reference.hpp"
#include "progress.hpp"
#include "shard_option.hpp"
#include "table.hpp"

namespace pmqa::cli {
namespace {

struct GenArgs {
  std::string suite;
  std::string out;
  std::vector<std::string> cases;
  bool list = false;
  bool with_reference = false;
  bool include_large = false;
  std::string fit;                     // --fit CONVENTION: draw inside its envelope
  std::string platform;                // --platform cuda|rocm|none (default: the only one listed)
  std::vector<std::string> envelopes;  // --envelope FILE: overlays
  std::string arch;                    // --arch: the device's target, for limits that depend on it
  bool show_envelope = false;
  std::string shard;                   // --shard K/N: only shard K of N of the cases it would write
};

std::optional<cases::Envelope> envelope_for(const GenArgs& a) {
  if (a.fit.empty()) {
    if (!a.envelopes.empty()) {
      // An overlay names its convention: --envelope alone fits into it.
      const auto first = cases::read_envelope_file(a.envelopes.front());
      GenArgs b = a;
      b.fit = first.convention;
      return envelope_for(b);
    }
    if (!a.platform.empty() || !a.arch.empty()) throw UsageError("gen: --platform and --arch need --fit CONVENTION");
    return std::nullopt;
  }
  std::vector<cases::EnvelopeFile> overlays;
  for (const auto& path : a.envelopes) overlays.push_back(cases::read_envelope_file(path));
  cases::Envelope e = cases::make_envelope(a.fit, a.platform, overlays);
  e.arch = a.arch;
  return e;
}

std::vector<fixtures::SuiteCase> pick_cases(const GenArgs& a, const std::optional<cases::Envelope>& envelope) {
  auto all = envelope ? fixtures::fit_suite(a.suite, *envelope) : fixtures::suite(a.suite);
  if (a.cases.empty()) return all;
  std::vector<fixtures::SuiteCase> picked;
  for (const auto& name : a.cases) {
    const auto it = std::find_if(all.begin(), all.end(), [&](const auto& c) { return c.name == name; });
    if (it == all.end())
      throw UsageError("suite " + a.suite + (envelope ? " fitted into " + envelope->convention : std::string()) +
                       " has no case '" + name + "' (see pmqa gen --list --suite " + a.suite +
                       (envelope ? " --fit " + envelope->convention : std::string()) + ")");
    picked.push_back(*it);
  }
  return picked;
}

cases::CaseFile case_file_for(const fixtures::SuiteCase& sc, bool with_reference) {
  cases::CaseFile f;
  f.c = fixtures::make_case(sc.spec);  // carries suite and seed into the metadata
  f.contract = Contract::clean;
  f.producer = "pmqa gen";
  if (with_reference) {
    // The fp32 reference's own output: a file `pmqa verify` must pass, for trying a pipeline out.
    f.logits = dense_logits(compute_reference(f.c, {.precision = Precision::fp32, .with_noise = false}));
    f.extra["logits_from"] = "pmqa reference (fp32)";
  }
  return f;
}

void print_fitted_list(const GenArgs& a, const cases::Envelope& e, const std::optional<Shard>& shard) {
  const auto names = a.suite.empty() ? fixtures::suite_names() : std::vector<std::string>{a.suite};
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) std::printf("\n");
    print_case_table(stdout, "suite " + names[i] + " fitted into " + e.convention + " on " + e.platform,
                     fixtures::fit_suite(names[i], e), a.include_large, shard);
  }
}

int run_gen(const GenArgs& a) {
  std::optional<cases::Envelope> envelope;
  try {
    envelope = envelope_for(a);
  } catch (const cases::EnvelopeError& e) {
    throw UsageError(std::string("gen: ") + e.what());
  }
  if (envelope && !envelope->platform_listed)
    throw UsageError("gen: " + envelope->refusal({}) + "; nothing can be drawn inside it");
  if (a.show_envelope) {
    if (!envelope) throw UsageError("gen: --show-envelope needs --fit CONVENTION");
    std::printf("%s", envelope->describe().c_str());
    return kExitPass;
  }
  const auto shard = shard_option(a.shard, "gen");
  if (a.list) {
    if (envelope) print_fitted_list(a, *envelope, shard);
    else print_suite_list(stdout, a.suite, a.include_large, shard);
    return kExitPass;
  }
  if (a.suite.empty()) throw UsageError("gen: --suite is required (one of quick, standard, nightly; see pmqa gen --list)");
  if (a.out.empty()) throw UsageError("gen: --out DIR is required");
  auto cases = pick_cases(a, envelope);
  // --shard: the split is over the cases gen writes (the large ones only with --include-large), so
  // a folder holding every shard's files splits the same way again (pmqa verify --shard, pmqa-run
  // --shard). The large cases left out are in no shard; each shard's run says it skipped them.
  std::size_t total = 0;
  if (shard) {
    const SuiteShard split = suite_shard(cases, a.include_large, shard);
    total = split.total;
    std::vector<fixtures::SuiteCase> kept;
    for (std::size_t i = 0; i < cases.size(); ++i)
      if (split.taken[i] || (cases[i].large && !a.include_large)) kept.push_back(cases[i]);
    cases = std::move(kept);
  }
  const std::filesystem::path dir(a.out);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw UsageError("gen: --out " + a.out + ": cannot create the directory: " + ec.message());

  int written = 0, skipped = 0;
  Progress progress(cases.size());
  for (const auto& sc : cases) {
    progress.step(sc.name);
    if (sc.large && !a.include_large) {
      progress.clear();
      std::printf("skipped %s: a large case (gigabytes of buffers); --include-large writes it\n", sc.name.c_str());
      ++skipped;
      continue;
    }
    const cases::CaseFile f = case_file_for(sc, a.with_reference);
    const auto path = dir / (sc.name + ".safetensors");
    cases::write_case_file(path, f);
    progress.clear();
    std::printf("wrote %s  %s%s\n", path.string().c_str(), shape_summary(f.c).c_str(),
                a.with_reference ? "  (with reference logits)" : "");
    std::fflush(stdout);
    ++written;
  }
  progress.clear();
  const std::string sharded =
      shard ? " (" + shard_words(shard, static_cast<std::size_t>(written), total, "case(s)") + ")" : std::string();
  std::printf("pmqa gen --suite %s%s%s: %d file(s) written to %s, %d large case(s) skipped\n", a.suite.c_str(),
              envelope ? (" --fit " + envelope->convention + " (" + envelope->platform + ")").c_str() : "",
              sharded.c_str(), written, dir.string().c_str(), skipped);
  return kExitPass;
}

}  // namespace

Command add_gen_command(CLI::App& parent) {
  auto args = std::make_shared<GenArgs>();
  Command cmd;
  cmd.app = parent.add_subcommand("gen", "Write a suite's cases as case files (safetensors), or list the suites");
  cmd.app->add_option("--suite", args->suite, "quick | standard | nightly");
  cmd.app->add_option("--out", args->out, "directory to write <case>.safetensors files into (created if missing)");
  cmd.app->add_option("--case", args->cases, "only these cases of the suite (repeatable)");
  cmd.app->add_flag("--list", args->list,
                    "list the suites and their cases (only --suite's with --suite; only shard K's with --shard K/N)");
  cmd.app->add_flag("--with-reference", args->with_reference,
                    "also store the fp32 reference's logits (a file pmqa verify passes)");
  cmd.app->add_flag("--include-large", args->include_large, "also write the large (gigabyte) cases");
  std::string conventions;  // from the builtin envelopes, so a new one is listed here by itself
  for (const auto& c : cases::envelope_conventions()) conventions += (conventions.empty() ? "" : ", ") + c;
  cmd.app->add_option("--fit", args->fit,
                      "draw the suite inside CONVENTION's envelope (" + conventions +
                          "): its cases that fit as they are, then fitted edge cases and random draws up to the "
                          "suite's size");
  cmd.app->add_option("--platform", args->platform,
                      "cuda | rocm | none (the convention's own limits only); default: the one platform the "
                      "envelope lists");
  cmd.app->add_option("--envelope", args->envelopes,
                      "an overlay file (pmqa-envelope-overlay/1) adding, replacing or dropping limits (repeatable; "
                      "alone it fits into the convention it names)");
  cmd.app->add_option("--arch", args->arch,
                      "the device's target (gfx942, gfx950, sm_90) for limits that depend on it (vllm-rocm's fp8 "
                      "format); default: none apply");
  cmd.app->add_flag("--show-envelope", args->show_envelope, "print the envelope's limits and reasons and exit");
  cmd.app->add_option("--shard", args->shard,
                      "K/N: write only shard K of N (1-based) of the cases, a stable split by case name balanced by "
                      "work: N jobs with K = 1..N together write every case once (the split pmqa check, verify and "
                      "pmqa-run --shard make)");
  cmd.run = [args] { return run_gen(*args); };
  return cmd;
}

}  // namespace pmqa::cli
