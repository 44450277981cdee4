#include "pmqa/reference/compare.hpp"

#include <algorithm>
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

double element_limit(const Case& c, const Reference& ref, const Tolerance& t, std::int64_t r, std::int64_t j) {
  const double ref_unit = ref.precision == Precision::fp32 ? 0x1p-24 : 0x1p-53;
  return element_limit(t, cell_sigma(t, ref.noise_at(r, j), std::fabs(ref.at(r, j, NanRule::relu_clamp)),
                                    static_cast<long>(c.head_dim), static_cast<long>(c.heads), ref_unit));
}

namespace {

// Sums over the compared cells of one region of z = (out - ref) / sigma: z^2 (the rms gates), z
// and z x sign(ref) (the bias gate's offset and scale means).
struct RegionSums {
  double z2 = 0, z = 0, zs = 0;
  std::int64_t cells = 0;
  void add(double signed_z, double ref) {
    z2 += signed_z * signed_z;
    z += signed_z;
    zs += ref > 0 ? signed_z : ref < 0 ? -signed_z : 0.0;
    ++cells;
  }
  double rms() const { return cells > 0 ? std::sqrt(z2 / static_cast<double>(cells)) : 0.0; }
  double mean(BiasKind kind) const {
    return cells > 0 ? (kind == BiasKind::offset ? z : zs) / static_cast<double>(cells) : 0.0;
  }
};

class Comparer {
 public:
  Comparer(const Case& c, const Reference& ref, const OutputBuffer& out, const CompareOptions& o)
      : c_(c), ref_(ref), out_(out), o_(o) {}

  Report run() {
    Report rep;
    rep.case_description = describe(c_);
    rep.judging = o_.judging;
    if (o_.with_map) start_map(rep);
    for (std::int64_t r = 0; r < c_.rows(); ++r) compare_row(r, rep);
    judge_region(rep, rep.global, all_, {.gate = Gate::global, .over = Gate::global});
    if (judge_bias(rep, all_, {.gate = Gate::bias, .over = Gate::global}) && map_) map_->global_bias = true;
    for (int level = 2; level >= 0; --level) {
      const BiasSummary& s = signs_[level];
      if (!(s.too_large || s.too_small || s.above || s.below)) continue;
      rep.means.too_large = s.too_large;
      rep.means.too_small = s.too_small;
      rep.means.above = s.above;
      rep.means.below = s.below;
      break;
    }
    if (all_.cells > 0) {
      rep.means.offset = all_.mean(BiasKind::offset);
      rep.means.scale = all_.mean(BiasKind::scale);
      rep.means.limit = bias_limit(o_.judging.tolerance, all_.cells);
      rep.means.cells = all_.cells;
    }
    rep.guard_violations = out_.count_guard_violations();
    if (map_) finish_map(rep);
    if (all_.cells > 0) rep.calc_diff = sum_sq_ == 0 ? 0.0 : 1.0 - 2.0 * sum_xy_ / sum_sq_;
    return rep;
  }

 private:
  void start_map(Report& rep) {
    ErrorMap& m = rep.map.emplace();
    m.rows = c_.rows();
    m.block_size = c_.block_size;
    m.blocks = (c_.max_model_len + c_.block_size - 1) / c_.block_size;
    const auto n = static_cast<std::size_t>(m.rows * m.blocks);
    m.worst.assign(n, 0.0f);
    m.flags.assign(n, 0);
    m.compared.assign(n, 0);
    m.row_flags.assign(static_cast<std::size_t>(m.rows), 0);
    map_ = &m;
  }

  void mark(std::int64_t r, std::int64_t j, std::uint8_t flag) {
    if (map_) map_->flags[static_cast<std::size_t>(map_->at(r, j / c_.block_size))] |= flag;
  }

  void finish_map(Report& rep) {
    ErrorMap& m = *map_;
    m.global_gate = rep.global.failing > 0;
    const std::int64_t stride = out_.row_stride(), cols = out_.cols();
    std::int64_t pad_written = 0;  // written guard cells that a row's padding holds
    for (std::int64_t r = 0; r < m.rows; ++r)
      for (std::int64_t k = cols; k < stride; ++k)
        if (!is_sentinel(out_.data()[r * stride + k])) {
          m.row_flags[static_cast<std::size_t>(r)] |= ErrorMap::guard;
          ++pad_written;
        }
    m.guard_outside_rows = rep.guard_violations > pad_written;
  }

  void compare_row(std::int64_t r, Report& rep) {
    const std::int64_t e = ref_.valid(r);
    const std::int64_t last = o_.judging.contract == Contract::clean ? c_.max_model_len : e;
    RegionSums row, block;
    for (std::int64_t j = 0; j < last; ++j) {
      const double got = out_.at(r, j);
      ++rep.cells_checked;
      if (j < e && j % c_.block_size == 0 && j > 0) close_block(rep, block, r, j / c_.block_size - 1);
      if (is_sentinel(out_.at(r, j))) {
        record(rep, MismatchKind::unwritten, r, j, got, ref_.at(r, j, o_.judging.nan), 0);
        ++rep.unwritten;
        mark(r, j, ErrorMap::unwritten);
        continue;
      }
      if (j >= e) {
        if (!(got == -INFINITY)) {
          record(rep, MismatchKind::inf_pattern, r, j, got, -INFINITY, 0);
          ++rep.inf_pattern_errors;
          mark(r, j, ErrorMap::inf_pattern);
        }
        continue;
      }
      compare_valid(r, j, got, rep, row, block);
    }
    if (e > 0) {
      close_block(rep, block, r, (e - 1) / c_.block_size);
      RegionMismatch where{.gate = Gate::row, .over = Gate::row, .row = r, .b = r / c_.next_n, .n = r % c_.next_n};
      if (judge_region(rep, rep.row, row, where) && map_) map_->row_flags[static_cast<std::size_t>(r)] |= ErrorMap::row_gate;
      where.gate = Gate::bias;
      if (judge_bias(rep, row, where) && map_) map_->row_flags[static_cast<std::size_t>(r)] |= ErrorMap::row_bias;
    }
  }

  void close_block(Report& rep, RegionSums& block, std::int64_t r, std::int64_t logical) {
    const std::int64_t b = r / c_.next_n;
    RegionMismatch where{.gate = Gate::block, .over = Gate::block, .row = r, .b = b, .n = r % c_.next_n,
                         .logical_block = logical, .physical_block = c_.physical_block(b, logical)};
    if (judge_region(rep, rep.block, block, where)) mark(r, logical * c_.block_size, ErrorMap::block_gate);
    where.gate = Gate::bias;
    if (judge_bias(rep, block, where)) mark(r, logical * c_.block_size, ErrorMap::bias_gate);
    block = {};
  }

  // True when the region broke its gate.
  bool judge_region(Report& rep, GateSummary& gate, const RegionSums& sums, RegionMismatch where) {
    if (sums.cells == 0) return false;
    where.cells = sums.cells;
    where.rms = sums.rms();
    where.limit = region_limit(o_.judging.tolerance, sums.cells);
    gate.worst = std::max(gate.worst, where.rms / where.limit);
    if (where.rms <= where.limit) return false;
    ++gate.failing;
    if (static_cast<int>(rep.regions.size()) < o_.max_listed || where.over == Gate::global) rep.regions.push_back(where);
    return true;
  }

  // The bias gate over one region: both signed means against bias_limit. True when it broke; the
  // region is listed, and its sign noted, with the mean further over its limit (a scale error
  // shows most in the scale mean, an offset in the offset mean). A block whose logits share one
  // sign cannot tell the two apart (the means are equal in size), so the report's signs come from
  // the widest regions that broke the gate: the whole output, else rows, else blocks.
  bool judge_bias(Report& rep, const RegionSums& sums, RegionMismatch where) {
    if (sums.cells == 0) return false;
    where.cells = sums.cells;
    where.rms = sums.rms();
    where.limit = bias_limit(o_.judging.tolerance, sums.cells);
    const double offset = sums.mean(BiasKind::offset), scale = sums.mean(BiasKind::scale);
    // |mean| over its limit; NaN (infinite z of both signs) counts as broken.
    auto over = [&](double mean) { return std::isnan(mean) ? INFINITY : std::fabs(mean) / where.limit; };
    const double worst = std::max(over(offset), over(scale));
    rep.bias.worst = std::max(rep.bias.worst, worst);
    if (worst <= 1.0) return false;
    where.bias_kind = over(scale) >= over(offset) ? BiasKind::scale : BiasKind::offset;
    where.bias = where.bias_kind == BiasKind::scale ? scale : offset;
    BiasSummary& signs = signs_[where.over == Gate::global ? 2 : where.over == Gate::row ? 1 : 0];
    if (where.bias_kind == BiasKind::scale) (scale > 0 ? signs.too_large : signs.too_small) = true;
    else (offset > 0 ? signs.above : signs.below) = true;
    ++rep.bias.failing;
    if (static_cast<int>(rep.regions.size()) < o_.max_listed || where.over == Gate::global) rep.regions.push_back(where);
    return true;
  }

  void compare_valid(std::int64_t r, std::int64_t j, double got, Report& rep, RegionSums& row, RegionSums& block) {
    const double propagated = ref_.at(r, j, NanRule::propagate);
    const double want = ref_.at(r, j, o_.judging.nan);
    const double limit = element_limit(c_, ref_, o_.judging.tolerance, r, j);
    const double cell_sigma = limit / o_.judging.tolerance.z_element;
    if (std::isnan(propagated)) note_nan_behaviour(rep, got, ref_.at(r, j, NanRule::relu_clamp), limit);
    if (std::isnan(want) || std::isnan(got)) {
      if (std::isnan(want) != std::isnan(got)) {
        record(rep, MismatchKind::nan, r, j, got, want, 0);
        ++rep.nan_mismatches;
        mark(r, j, ErrorMap::nan);
      }
      return;
    }
    if (std::isinf(want) || std::isinf(got)) {
      if (got != want) {
        record(rep, MismatchKind::inf_pattern, r, j, got, want, 0);
        ++rep.inf_pattern_errors;
        mark(r, j, ErrorMap::inf_pattern);
      }
      return;
    }
    const double err = std::fabs(got - want);
    const double z = err == 0 ? 0.0 : cell_sigma > 0 ? (got - want) / cell_sigma : std::copysign(INFINITY, got - want);
    rep.max_abs_error = std::max(rep.max_abs_error, err);
    if (want != 0) rep.max_rel_error = std::max(rep.max_rel_error, err / std::fabs(want));
    if (err > 0) rep.worst_bound_ratio = std::max(rep.worst_bound_ratio, limit > 0 ? err / limit : INFINITY);
    row.add(z, want);
    block.add(z, want);
    all_.add(z, want);
    sum_xy_ += got * want;
    sum_sq_ += got * got + want * want;
    if (map_) {
      const auto at = static_cast<std::size_t>(map_->at(r, j / c_.block_size));
      map_->compared[at] = 1;
      const double ratio = err == 0 ? 0.0 : limit > 0 ? err / limit : INFINITY;
      map_->worst[at] = std::max(map_->worst[at], static_cast<float>(ratio));
    }
    if (!(err <= limit)) {
      record(rep, MismatchKind::value, r, j, got, want, limit);
      ++rep.value_mismatches;
      mark(r, j, ErrorMap::element);
    }
  }

  static void note_nan_behaviour(Report& rep, double got, double clamped, double limit) {
    ++rep.nan_seen.cells;
    if (std::isnan(got)) ++rep.nan_seen.propagated;
    else if (std::isfinite(got) && std::fabs(got - clamped) <= limit) ++rep.nan_seen.clamped;
    else ++rep.nan_seen.other;
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
  ErrorMap* map_ = nullptr;
  RegionSums all_;
  BiasSummary signs_[3];  // the bias gate's failing signs over blocks, rows, the whole output
  double sum_xy_ = 0, sum_sq_ = 0;
};

std::string describe_cell(const Mismatch& m) {
  std::ostringstream s;
  s << "row " << m.row << " (b=" << m.b << ", n=" << m.n << ", E_r=" << m.valid_keys << ") col " << m.col << ": "
    << to_string(m.kind) << ", got " << m.got << ", expected " << m.expected;
  if (m.kind == MismatchKind::value) s << ", |diff| " << std::fabs(m.got - m.expected) << " > element limit " << m.bound;
  if (m.logical_block >= 0)
    s << " | logical block " << m.logical_block << " -> physical block " << m.physical_block << ", token "
      << m.token_in_block << ", value offset " << m.offset_in_block;
  return s.str();
}

std::string describe_region(const RegionMismatch& g) {
  std::ostringstream s;
  s << to_string(g.gate) << " gate: ";
  if (g.over == Gate::global) s << "all valid cells";
  else s << "row " << g.row << " (b=" << g.b << ", n=" << g.n << ")";
  if (g.over == Gate::block) s << " logical block " << g.logical_block << " -> physical block " << g.physical_block;
  s << ", " << g.cells << " cell(s): ";
  if (g.gate == Gate::bias)
    s << (g.bias_kind == BiasKind::scale ? "mean err/sigma x sign(ref) " : "mean err/sigma ") << std::showpos << g.bias
      << std::noshowpos << ", |mean| > limit " << g.limit << " (" << bias_sign(g.bias_kind, g.bias) << ")";
  else
    s << "rms err/sigma " << g.rms << " > limit " << g.limit;
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
  if (!ref.has_noise())
    throw std::invalid_argument("compare: the reference needs its noise scales (ReferenceOptions::with_noise)");
  return Comparer(c, ref, out, options).run();
}

std::string ErrorMap::text(int width, int height) const {
  if (rows == 0 || blocks == 0) return "(empty map)\n";
  const std::int64_t cols_out = std::min<std::int64_t>(blocks, std::max(1, width));
  const std::int64_t rows_out = std::min<std::int64_t>(rows, std::max(1, height));
  // Severity of one map cell: its character and rank (a pooled character keeps the worst).
  auto glyph = [&](std::int64_t i) -> std::pair<int, char> {
    const auto f = flags[static_cast<std::size_t>(i)];
    if (f & nan) return {9, 'N'};
    if (f & unwritten) return {8, 'U'};
    if (f & inf_pattern) return {7, 'I'};
    if (f & element) return {6, 'X'};
    if (f & block_gate) return {5, 'b'};
    if (f & bias_gate) return {4, 'B'};
    if (!compared[static_cast<std::size_t>(i)]) return {0, ' '};
    const float w = worst[static_cast<std::size_t>(i)];
    return w < 0.1f ? std::pair<int, char>{1, '.'} : std::pair<int, char>{2, 'o'};
  };
  std::ostringstream s;
  s << "rows " << rows << " x logical blocks " << blocks << " (block_size " << block_size << ")";
  if (cols_out < blocks || rows_out < rows) s << ", pooled to " << rows_out << " x " << cols_out;
  s << (global_gate ? "; global gate broken" : "") << (global_bias ? "; global bias gate broken" : "")
    << (guard_outside_rows ? "; guard cells outside the rows written" : "") << "\n";
  for (std::int64_t y = 0; y < rows_out; ++y) {
    const std::int64_t r0 = y * rows / rows_out, r1 = (y + 1) * rows / rows_out;
    std::string line;
    for (std::int64_t x = 0; x < cols_out; ++x) {
      const std::int64_t b0 = x * blocks / cols_out, b1 = (x + 1) * blocks / cols_out;
      std::pair<int, char> best{0, ' '};
      for (std::int64_t r = r0; r < r1; ++r)
        for (std::int64_t b = b0; b < b1; ++b) best = std::max(best, glyph(at(r, b)));
      line += best.second;
    }
    bool row_gate_broken = false, row_bias_broken = false, guard_written = false;
    for (std::int64_t r = r0; r < r1; ++r) {
      row_gate_broken |= (row_flags[static_cast<std::size_t>(r)] & row_gate) != 0;
      row_bias_broken |= (row_flags[static_cast<std::size_t>(r)] & row_bias) != 0;
      guard_written |= (row_flags[static_cast<std::size_t>(r)] & guard) != 0;
    }
    s << "  " << (r1 - r0 == 1 ? std::to_string(r0) : std::to_string(r0) + "-" + std::to_string(r1 - 1)) << "\t|" << line
      << "|" << (row_gate_broken ? " R" : "") << (row_bias_broken ? " B" : "") << (guard_written ? " G" : "") << "\n";
  }
  return s.str();
}

std::string NanBehaviour::describe() const {
  if (cells == 0) return "no NaN term";
  if (propagated == cells) return "propagate";
  if (clamped == cells) return "relu-clamp";
  return "mixed (" + std::to_string(propagated) + " propagated, " + std::to_string(clamped) + " clamped, " +
         std::to_string(other) + " neither, of " + std::to_string(cells) + ")";
}

std::string BiasSummary::signs() const {
  std::string out;
  auto add = [&](bool on, std::string_view text) {
    if (on) out += (out.empty() ? "" : ", ") + std::string(text);
  };
  add(too_large, bias_sign(BiasKind::scale, 1));
  add(too_small, bias_sign(BiasKind::scale, -1));
  add(above, bias_sign(BiasKind::offset, 1));
  add(below, bias_sign(BiasKind::offset, -1));
  return out;
}

std::string Report::broken() const {
  std::string out;
  auto add = [&](bool on, const std::string& name) {
    if (on) out += (out.empty() ? "" : ", ") + name;
  };
  add(value_mismatches > 0, "element");
  add(block.failing > 0, "block");
  add(row.failing > 0, "row");
  add(global.failing > 0, "global");
  add(bias.failing > 0, "bias (" + means.signs() + ")");
  add(nan_mismatches > 0, "NaN");
  add(inf_pattern_errors > 0, "-inf pattern");
  add(unwritten > 0, "unwritten");
  add(guard_violations > 0, "guard");
  return out;
}

std::string Report::to_text() const {
  std::ostringstream s;
  s << (passed() ? "PASS " : "FAIL ") << case_description << "\n";
  s << "  " << judging.describe() << ": " << failing_cells() << " failing cell(s), " << failing_regions()
    << " region(s) over their limit, in "
    << cells_checked << " checked cells" << (passed() ? "" : " (broke: " + broken() + ")") << "\n";
  s << "  gates, worst error over limit: element " << worst_bound_ratio << " (" << value_mismatches
    << " over), block " << block.worst << " (" << block.failing << " over), row " << row.worst << " (" << row.failing
    << " over), global " << global.worst << (global.failing ? " (over)" : "") << ", bias " << bias.worst << " ("
    << bias.failing << " over)\n";
  if (means.cells > 0)
    s << "  bias over all valid cells: mean err/sigma " << std::showpos << means.offset << ", x sign(ref) " << means.scale
      << std::noshowpos << " (limit " << means.limit << ")" << (bias.failing ? "; failing regions: " + means.signs() : "")
      << "\n";
  s << "  value mismatches " << value_mismatches << ", NaN mismatches " << nan_mismatches << ", -inf pattern errors "
    << inf_pattern_errors << ", unwritten " << unwritten << ", guard violations " << guard_violations << "\n";
  if (nan_seen.cells > 0)
    s << "  NaN terms in " << nan_seen.cells << " cell(s): the output showed " << nan_seen.describe() << "\n";
  s << "  max |out-ref| " << max_abs_error << " (rel " << max_rel_error << "), calc_diff ";
  if (calc_diff) s << *calc_diff; else s << "n/a (no valid cell)";
  s << "\n";
  if (!first.empty()) {
    s << "  first mismatches:\n";
    for (const auto& m : first) s << "    " << describe_cell(m) << "\n";
  }
  if (!regions.empty()) {
    s << "  first regions over their limit:\n";
    for (const auto& g : regions) s << "    " << describe_region(g) << "\n";
  }
  if (!reproduce.empty()) s << "  reproduce: " << reproduce << "\n";
  return s.str();
}

nlohmann::json Report::to_json() const {
  auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(std::to_string(v)); };
  nlohmann::json j;
  j["passed"] = passed();
  j["case"] = case_description;
  j["contract"] = to_string(judging.contract);
  j["tolerance"] = judging.tolerance.name;
  j["nan_rule"] = to_string(judging.nan);
  j["nan_seen"] = nan_seen.describe();
  j["broken"] = broken();
  j["cells_checked"] = cells_checked;
  j["value_mismatches"] = value_mismatches;
  j["nan_mismatches"] = nan_mismatches;
  j["inf_pattern_errors"] = inf_pattern_errors;
  j["unwritten"] = unwritten;
  j["guard_violations"] = guard_violations;
  j["max_abs_error"] = max_abs_error;
  j["max_rel_error"] = max_rel_error;
  j["worst_bound_ratio"] = std::isfinite(worst_bound_ratio) ? nlohmann::json(worst_bound_ratio) : nlohmann::json("inf");
  j["gates"] = {{"element", {{"worst", num(worst_bound_ratio)}, {"failing", value_mismatches}}},
                {"block", {{"worst", num(block.worst)}, {"failing", block.failing}}},
                {"row", {{"worst", num(row.worst)}, {"failing", row.failing}}},
                {"global", {{"worst", num(global.worst)}, {"failing", global.failing}}},
                {"bias", {{"worst", num(bias.worst)}, {"failing", bias.failing}}}};
  j["bias"] = {{"offset", num(means.offset)}, {"scale", num(means.scale)}, {"limit", num(means.limit)},
               {"cells", means.cells}, {"signs", means.signs()}};
  j["calc_diff"] = calc_diff ? nlohmann::json(*calc_diff) : nlohmann::json(nullptr);
  auto& list = j["first_mismatches"] = nlohmann::json::array();
  for (const auto& m : first) {
    list.push_back({{"kind", to_string(m.kind)}, {"row", m.row}, {"col", m.col}, {"b", m.b}, {"n", m.n},
                    {"valid_keys", m.valid_keys}, {"logical_block", m.logical_block},
                    {"physical_block", m.physical_block}, {"token_in_block", m.token_in_block},
                    {"offset_in_block", m.offset_in_block}, {"got", num(m.got)}, {"expected", num(m.expected)},
                    {"bound", m.bound}});
  }
  auto& regions_json = j["regions_over_limit"] = nlohmann::json::array();
  for (const auto& g : regions) {
    nlohmann::json x = {{"gate", to_string(g.gate)}, {"over", to_string(g.over)}, {"row", g.row}, {"b", g.b},
                        {"n", g.n}, {"logical_block", g.logical_block}, {"physical_block", g.physical_block},
                        {"cells", g.cells}, {"rms", num(g.rms)}, {"limit", g.limit}};
    if (g.gate == Gate::bias) {
      x["bias_kind"] = to_string(g.bias_kind);
      x["bias"] = num(g.bias);
      x["sign"] = bias_sign(g.bias_kind, g.bias);
    }
    regions_json.push_back(std::move(x));
  }
  j["reproduce"] = reproduce;
  return j;
}

}  // namespace pmqa
