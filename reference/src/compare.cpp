#include "pmqa/reference/compare.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "pmqa/reference/kv_cache.hpp"

namespace pmqa {

std::string_view to_string(MismatchKind kind) noexcept {
  switch (kind) {
    case MismatchKind::value: return "value";
    case MismatchKind::nan: return "nan";
    case MismatchKind::inf_pattern: return "-inf pattern";
    case MismatchKind::unwritten: return "unwritten";
  }
  return "?";
}

std::optional<double> calc_diff(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) throw std::invalid_argument("calc_diff: inputs differ in size");
  if (x.empty()) return std::nullopt;
  double xy = 0, sq = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    xy += x[i] * y[i];
    sq += x[i] * x[i] + y[i] * y[i];
  }
  if (sq == 0) return 0.0;
  return 1.0 - 2.0 * xy / sq;
}

namespace {

class Comparer {
 public:
  Comparer(const Case& c, const Reference& ref, const OutputBuffer& out, const CompareOptions& o)
      : c_(c), ref_(ref), out_(out), o_(o), ref_unit_(ref.precision == Precision::fp32 ? 0x1p-24 : 0x1p-53) {}

  Report run() {
    Report rep;
    rep.case_description = describe(c_);
    rep.contract = o_.contract;
    rep.tolerance = o_.tolerance.name;
    for (std::int64_t r = 0; r < c_.rows(); ++r) compare_row(r, rep);
    rep.guard_violations = out_.count_guard_violations();
    if (cells_ > 0) rep.calc_diff = sum_sq_ == 0 ? 0.0 : 1.0 - 2.0 * sum_xy_ / sum_sq_;
    return rep;
  }

 private:
  void compare_row(std::int64_t r, Report& rep) {
    const std::int64_t e = ref_.valid(r);
    const std::int64_t last = o_.contract == Contract::clean ? c_.max_model_len : e;
    for (std::int64_t j = 0; j < last; ++j) {
      const double got = out_.at(r, j);
      ++rep.cells_checked;
      if (is_sentinel(out_.at(r, j))) {
        record(rep, MismatchKind::unwritten, r, j, got, ref_.at(r, j), 0);
        ++rep.unwritten;
        continue;
      }
      if (j >= e) {
        if (!(got == -INFINITY)) {
          record(rep, MismatchKind::inf_pattern, r, j, got, -INFINITY, 0);
          ++rep.inf_pattern_errors;
        }
        continue;
      }
      compare_valid(r, j, got, rep);
    }
  }

  void compare_valid(std::int64_t r, std::int64_t j, double got, Report& rep) {
    const double want = ref_.at(r, j);
    if (std::isnan(want) || std::isnan(got)) {
      if (std::isnan(want) != std::isnan(got)) {
        record(rep, MismatchKind::nan, r, j, got, want, 0);
        ++rep.nan_mismatches;
      }
      return;
    }
    if (std::isinf(want) || std::isinf(got)) {
      if (got != want) {
        record(rep, MismatchKind::inf_pattern, r, j, got, want, 0);
        ++rep.inf_pattern_errors;
      }
      return;
    }
    const double err = std::fabs(got - want);
    const double bound = o_.tolerance.bound(ref_.magnitude_at(r, j), std::fabs(want), static_cast<long>(c_.head_dim),
                                            static_cast<long>(c_.heads), ref_unit_);
    rep.max_abs_error = std::max(rep.max_abs_error, err);
    if (want != 0) rep.max_rel_error = std::max(rep.max_rel_error, err / std::fabs(want));
    if (err > 0) rep.worst_bound_ratio = std::max(rep.worst_bound_ratio, bound > 0 ? err / bound : INFINITY);
    ++cells_;
    sum_xy_ += got * want;
    sum_sq_ += got * got + want * want;
    if (err > bound) {
      record(rep, MismatchKind::value, r, j, got, want, bound);
      ++rep.value_mismatches;
    }
  }

  void record(Report& rep, MismatchKind kind, std::int64_t r, std::int64_t j, double got, double want, double bound) {
    if (static_cast<int>(rep.first.size()) >= o_.max_listed) return;
    Mismatch m;
    m.kind = kind;
    m.row = r;
    m.col = j;
    m.b = r / c_.next_n;
    m.n = r % c_.next_n;
    m.valid_keys = ref_.valid(r);
    if (j < m.valid_keys) {
      m.logical_block = j / c_.block_size;
      m.physical_block = c_.physical_block(m.b, m.logical_block);
      m.token_in_block = j % c_.block_size;
      m.offset_in_block = kv_value_offset(c_.layout, m.token_in_block, 0, c_.head_dim);
    }
    m.got = got;
    m.expected = want;
    m.bound = bound;
    rep.first.push_back(m);
  }

  const Case& c_;
  const Reference& ref_;
  const OutputBuffer& out_;
  const CompareOptions& o_;
  double ref_unit_;
  std::int64_t cells_ = 0;
  double sum_xy_ = 0, sum_sq_ = 0;
};

std::string describe_cell(const Mismatch& m) {
  std::ostringstream s;
  s << "row " << m.row << " (b=" << m.b << ", n=" << m.n << ", E_r=" << m.valid_keys << ") col " << m.col << ": "
    << to_string(m.kind) << ", got " << m.got << ", expected " << m.expected;
  if (m.kind == MismatchKind::value) s << ", |diff| " << std::fabs(m.got - m.expected) << " > bound " << m.bound;
  if (m.logical_block >= 0)
    s << " | logical block " << m.logical_block << " -> physical block " << m.physical_block << ", token "
      << m.token_in_block << ", value offset " << m.offset_in_block;
  return s.str();
}

}  // namespace

Report compare(const Case& c, const Reference& ref, const OutputBuffer& out, const CompareOptions& options) {
  if (out.rows() != c.rows() || out.cols() != c.max_model_len)
    throw std::invalid_argument("compare: output is [" + std::to_string(out.rows()) + ", " + std::to_string(out.cols()) +
                                "], the case needs [" + std::to_string(c.rows()) + ", " +
                                std::to_string(c.max_model_len) + "]");
  if (ref.rows != c.rows() || ref.cols != c.max_model_len)
    throw std::invalid_argument("compare: the reference was computed for another shape");
  if (ref.magnitude.size() != ref.values.size())
    throw std::invalid_argument("compare: the reference needs its magnitude (ReferenceOptions::with_magnitude)");
  return Comparer(c, ref, out, options).run();
}

std::string Report::to_text() const {
  std::ostringstream s;
  s << (passed() ? "PASS " : "FAIL ") << case_description << "\n";
  s << "  contract " << to_string(contract) << ", tolerance " << tolerance << ": " << failures() << " failure(s) in "
    << cells_checked << " checked cells\n";
  s << "  value mismatches " << value_mismatches << ", NaN mismatches " << nan_mismatches << ", -inf pattern errors "
    << inf_pattern_errors << ", unwritten " << unwritten << ", guard violations " << guard_violations << "\n";
  s << "  max |out-ref| " << max_abs_error << " (rel " << max_rel_error << "), worst error/bound " << worst_bound_ratio
    << ", calc_diff ";
  if (calc_diff) s << *calc_diff; else s << "n/a (no valid cell)";
  s << "\n";
  if (!first.empty()) {
    s << "  first mismatches:\n";
    for (const auto& m : first) s << "    " << describe_cell(m) << "\n";
  }
  if (!reproduce.empty()) s << "  reproduce: " << reproduce << "\n";
  return s.str();
}

nlohmann::json Report::to_json() const {
  nlohmann::json j;
  j["passed"] = passed();
  j["case"] = case_description;
  j["contract"] = to_string(contract);
  j["tolerance"] = tolerance;
  j["cells_checked"] = cells_checked;
  j["value_mismatches"] = value_mismatches;
  j["nan_mismatches"] = nan_mismatches;
  j["inf_pattern_errors"] = inf_pattern_errors;
  j["unwritten"] = unwritten;
  j["guard_violations"] = guard_violations;
  j["max_abs_error"] = max_abs_error;
  j["max_rel_error"] = max_rel_error;
  j["worst_bound_ratio"] = std::isfinite(worst_bound_ratio) ? nlohmann::json(worst_bound_ratio) : nlohmann::json("inf");
  j["calc_diff"] = calc_diff ? nlohmann::json(*calc_diff) : nlohmann::json(nullptr);
  auto& list = j["first_mismatches"] = nlohmann::json::array();
  for (const auto& m : first) {
    auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(std::to_string(v)); };
    list.push_back({{"kind", to_string(m.kind)}, {"row", m.row}, {"col", m.col}, {"b", m.b}, {"n", m.n},
                    {"valid_keys", m.valid_keys}, {"logical_block", m.logical_block},
                    {"physical_block", m.physical_block}, {"token_in_block", m.token_in_block},
                    {"offset_in_block", m.offset_in_block}, {"got", num(m.got)}, {"expected", num(m.expected)},
                    {"bound", m.bound}});
  }
  j["reproduce"] = reproduce;
  return j;
}

}  // namespace pmqa
