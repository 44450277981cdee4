// Case files in the safetensors format: the writer and the strict reader (case_file.hpp).
#include "pmqa/cases/case_file.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>

#include <nlohmann/json.hpp>

#include "pmqa/cases/atomic_file.hpp"
#include "pmqa/cases/sha256.hpp"
#include "strict_header.hpp"

namespace pmqa::cases {

static_assert(std::endian::native == std::endian::little,
              "case files store tensors little-endian; this reader/writer copies bytes as they are");

CaseFileError::CaseFileError(std::string file, std::string field, std::string problem, int os_errno)
    : CaseError(file + ": " + field + ": " + problem),
      file_(std::move(file)),
      field_(std::move(field)),
      problem_(std::move(problem)),
      os_errno_(os_errno) {}

namespace {

using json = nlohmann::json;
using detail::cat;
using detail::first_invalid_utf8;
using detail::key_text;
using detail::quoted;
constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// ---- the tensors of a case file

enum class Tensor : int { weights, context_lens, block_table, logits, q, q_scales, kv_cache };
constexpr int kTensorCount = 7;

struct TensorSpec {
  std::string_view name;
  bool required;
  std::string_view dims;                  // for messages
  std::array<std::string_view, 3> dtypes;  // accepted dtypes (the first is what the writer emits)
  std::int64_t elem_size;
};

// The writer's order: 4-byte tensors first so they stay 4-byte aligned in the data section.
constexpr std::array<TensorSpec, kTensorCount> kTensors = {{
    {"weights", true, "[B*N, H]", {"F32", "", ""}, 4},
    {"context_lens", true, "[B] or [B, N]", {"I32", "", ""}, 4},
    {"block_table", true, "[B, max_blocks_per_seq]", {"I32", "", ""}, 4},
    {"logits", false, "[B*N, max_model_len]", {"F32", "", ""}, 4},
    {"q", true, "[B, N, H, D] (e2m1: [B, N, H, D/2])", {"U8", "F8_E4M3", "F8_E4M3FNUZ"}, 1},
    {"q_scales", false, "[B, N, H, 4]", {"U8", "", ""}, 1},
    {"kv_cache", true, "[num_blocks, block_stride]", {"U8", "", ""}, 1},
}};

const TensorSpec& spec(Tensor t) { return kTensors[static_cast<std::size_t>(t)]; }

int find_tensor(std::string_view name) {
  for (int i = 0; i < kTensorCount; ++i)
    if (kTensors[static_cast<std::size_t>(i)].name == name) return i;
  return -1;
}

std::string expected_dtypes(const TensorSpec& s) {
  std::vector<std::string_view> names;
  for (auto d : s.dtypes)
    if (!d.empty()) names.push_back(d);
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) out += (i + 1 == names.size()) ? " or " : ", ";
    out += names[i];
  }
  return out;
}

// ---- metadata keys

constexpr std::string_view kMetaKey = "__metadata__";
constexpr std::array<std::string_view, 15> kReservedKeys = {
    "format_version", "name",  "suite",   "seed",     "producer",   "fp8_format", "kv_layout",     "contract",
    "batch",          "next_n", "heads",  "head_dim", "block_size", "max_model_len", "value_format",
};
// Version 1 names an fp8 format (fp8_format); version 2, which e2m1 cases need (their q_scales
// tensor), names any value format (value_format). The writer keeps fp8 cases at version 1, so
// their bytes are what they always were.
constexpr std::string_view kFormatVersionAnyValueFormat = "2";

// Shapes of every tensor, derived from a case's scalar fields.
struct Shapes {
  std::array<std::vector<std::int64_t>, kTensorCount> dims;
};

Shapes shapes_of(const Case& c, bool with_logits) {
  Shapes s;
  const std::int64_t rows = c.batch * c.next_n;  // callers have bounded the factors
  s.dims[static_cast<std::size_t>(Tensor::weights)] = {rows, c.heads};
  s.dims[static_cast<std::size_t>(Tensor::context_lens)] =
      c.context_lens_2d ? std::vector<std::int64_t>{c.batch, c.next_n} : std::vector<std::int64_t>{c.batch};
  s.dims[static_cast<std::size_t>(Tensor::block_table)] = {c.batch, c.max_blocks_per_seq};
  if (with_logits) s.dims[static_cast<std::size_t>(Tensor::logits)] = {rows, c.max_model_len};
  s.dims[static_cast<std::size_t>(Tensor::q)] = {c.batch, c.next_n, c.heads, c.token_value_bytes()};
  if (is_fp4(c.format)) s.dims[static_cast<std::size_t>(Tensor::q_scales)] = {c.batch, c.next_n, c.heads, kScaleWordBytes};
  s.dims[static_cast<std::size_t>(Tensor::kv_cache)] = {c.num_blocks, c.block_stride};
  return s;
}

// elem_size * product(shape), or nullopt when elem_size times the product of the non-zero
// dimensions passes 2^63 - 1 (numpy's rule too, so both readers accept the same shapes).
std::optional<std::int64_t> byte_size(std::int64_t elem_size, const std::vector<std::int64_t>& shape) {
  std::int64_t acc = elem_size;
  bool empty = false;
  for (std::int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (d == 0) {
      empty = true;
      continue;
    }
    if (__builtin_mul_overflow(acc, d, &acc)) return std::nullopt;
  }
  return empty ? 0 : acc;
}

// ================================================================================ writer

struct Blob {
  Tensor tensor;
  const std::uint8_t* data;
  std::uint64_t size;
};

struct Serialized {
  std::string header;  // padded JSON
  std::vector<Blob> blobs;
};

Serialized build(const CaseFile& f, const std::string& src) {
  const Case& c = f.c;
  struct {
    const std::string& src;
    [[noreturn]] void operator()(const std::string& field, const std::string& problem) const {
      throw CaseFileError(src, field, problem);
    }
  } fail{src};

  // Scalars: the same bounds the reader enforces, so everything written can be read back
  // (semantic validity is not checked: invalid cases may be written on purpose).
  const std::pair<const char*, std::int64_t> positive[] = {
      {"next_n", c.next_n}, {"heads", c.heads}, {"head_dim", c.head_dim}, {"block_size", c.block_size}};
  for (auto [name, v] : positive)
    if (v < 1 || v > kInt32Max) fail(name, cat(v, " is outside [1, ", kInt32Max, "]"));
  const std::pair<const char*, std::int64_t> non_negative[] = {{"batch", c.batch},
                                                               {"max_model_len", c.max_model_len}};
  for (auto [name, v] : non_negative)
    if (v < 0 || v > kInt32Max) fail(name, cat(v, " is outside [0, ", kInt32Max, "]"));
  if (c.num_blocks < 0) fail("num_blocks", cat(c.num_blocks, " is negative"));
  if (c.max_blocks_per_seq < 0) fail("max_blocks_per_seq", cat(c.max_blocks_per_seq, " is negative"));
  const std::int64_t min_stride = c.block_size * (c.head_dim + 4);  // both <= 2^31 - 1: no overflow
  if (c.block_stride < min_stride)
    fail("block_stride", cat(c.block_stride, " is below block_size*(head_dim+4) = ", min_stride));

  for (const std::string* s : {&c.name, &c.suite, &f.producer}) {
    if (first_invalid_utf8(*s) != std::string_view::npos) {
      const char* which = s == &c.name ? "name" : s == &c.suite ? "suite" : "producer";
      fail(which, cat("is not valid UTF-8: ", quoted(*s)));
    }
  }
  detail::check_printable(src, "name", c.name);
  detail::check_printable(src, "suite", c.suite);
  for (const auto& [key, value] : f.extra) {
    if (first_invalid_utf8(key) != std::string_view::npos)
      fail(cat("extra key ", quoted(key)), "is not valid UTF-8");
    if (is_reserved_case_file_key(key))
      fail(cat("extra key ", key_text(key)), "is reserved for the format's own metadata");
    if (first_invalid_utf8(value) != std::string_view::npos)
      fail(cat("extra key ", key_text(key)), cat("value is not valid UTF-8: ", quoted(value)));
  }
  detail::check_judging_metadata(src, f.extra);  // a file the reader would refuse is never written

  const Shapes shapes = shapes_of(c, f.logits.has_value());
  const std::array<std::pair<const void*, std::size_t>, kTensorCount> buffers = {{
      {c.weights.data(), c.weights.size()},
      {c.context_lens.data(), c.context_lens.size()},
      {c.block_table.data(), c.block_table.size()},
      {f.logits ? f.logits->data() : nullptr, f.logits ? f.logits->size() : 0},
      {c.q.data(), c.q.size()},
      {c.q_scales.data(), c.q_scales.size()},
      {c.kv_cache.data(), c.kv_cache.size()},
  }};

  json header = json::object();
  json& meta = header[std::string(kMetaKey)] = json::object();
  for (const auto& [key, value] : f.extra) meta[key] = value;
  meta["format_version"] = std::string(is_fp4(c.format) ? kFormatVersionAnyValueFormat : kCaseFileFormatVersion);
  meta["name"] = c.name;
  meta["suite"] = c.suite;
  meta["seed"] = std::to_string(c.seed);
  meta["producer"] = f.producer;
  meta[is_fp4(c.format) ? "value_format" : "fp8_format"] = std::string(to_string(c.format));
  meta["kv_layout"] = std::string(to_string(c.layout));
  meta["contract"] = std::string(to_string(f.contract));
  meta["batch"] = std::to_string(c.batch);
  meta["next_n"] = std::to_string(c.next_n);
  meta["heads"] = std::to_string(c.heads);
  meta["head_dim"] = std::to_string(c.head_dim);
  meta["block_size"] = std::to_string(c.block_size);
  meta["max_model_len"] = std::to_string(c.max_model_len);

  Serialized out;
  std::uint64_t offset = 0;
  for (int i = 0; i < kTensorCount; ++i) {
    const auto t = static_cast<Tensor>(i);
    if ((t == Tensor::logits && !f.logits) || (t == Tensor::q_scales && !is_fp4(c.format))) continue;
    const TensorSpec& s = spec(t);
    const auto& dims = shapes.dims[static_cast<std::size_t>(i)];
    const auto bytes = byte_size(s.elem_size, dims);
    if (!bytes) fail(std::string(s.name), cat("shape ", shape_text(dims), " overflows 64 bits"));
    const auto [ptr, count] = buffers[static_cast<std::size_t>(i)];
    const auto expected_count = *bytes / s.elem_size;
    if (static_cast<std::int64_t>(count) != expected_count)
      fail(std::string(s.name), cat("buffer holds ", count, " elements but shape ", shape_text(dims), " ", s.dims,
                                    " needs ", expected_count));
    json entry = json::object();
    entry["dtype"] = std::string(s.dtypes[0]);
    entry["shape"] = dims;
    entry["data_offsets"] = {offset, offset + static_cast<std::uint64_t>(*bytes)};
    header[std::string(s.name)] = std::move(entry);
    out.blobs.push_back({t, static_cast<const std::uint8_t*>(ptr), static_cast<std::uint64_t>(*bytes)});
    offset += static_cast<std::uint64_t>(*bytes);
  }

  out.header = header.dump();
  // Pad with spaces (valid JSON whitespace) so the data section starts at a multiple of 8.
  out.header.append((8 - out.header.size() % 8) % 8, ' ');
  return out;
}

void put_u64_le(std::uint8_t* dst, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) dst[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// ================================================================================ reader

struct Entry {
  bool present = false;
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

// What the header says: the case's scalar fields filled in, buffers sized, and where each
// tensor's bytes lie in the data section.
struct Plan {
  CaseFile file;
  std::array<Entry, kTensorCount> entries;
};

class HeaderParser {
 public:
  HeaderParser(std::string src, std::uint64_t data_size) : src_(std::move(src)), data_size_(data_size) {}

  Plan parse(std::string_view text) {
    const json root = detail::parse_strict_header(src_, text);

    const json* meta = nullptr;
    for (const auto& [key, value] : root.items()) {
      if (key == kMetaKey) {
        meta = &value;
        continue;
      }
      const int id = find_tensor(key);
      if (id < 0)
        fail(cat("tensor ", key_text(key)),
             "unknown tensor; expected weights, context_lens, block_table, logits, q, q_scales or kv_cache");
      parse_entry(static_cast<Tensor>(id), value);
    }
    for (int i = 0; i < kTensorCount; ++i)
      if (kTensors[static_cast<std::size_t>(i)].required && !plan_.entries[static_cast<std::size_t>(i)].present)
        fail(cat("tensor ", kTensors[static_cast<std::size_t>(i)].name), "missing");
    check_coverage();
    parse_metadata(meta);
    check_consistency();
    return std::move(plan_);
  }

 private:
  [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
    throw CaseFileError(src_, field, problem);
  }

  void parse_entry(Tensor t, const json& v) {
    const TensorSpec& s = spec(t);
    const std::string field = cat("tensor ", s.name);
    if (!v.is_object())
      fail(field, cat("entry is a ", v.type_name(), ", expected an object with dtype, shape and data_offsets"));
    for (const auto& [key, value] : v.items()) {
      (void)value;
      if (key != "dtype" && key != "shape" && key != "data_offsets")
        fail(cat(field, ".", key_text(key)), "unknown field; expected dtype, shape or data_offsets");
    }
    for (const char* key : {"dtype", "shape", "data_offsets"})
      if (!v.contains(key)) fail(cat(field, ".", key), "missing");

    Entry& e = plan_.entries[static_cast<std::size_t>(t)];
    e.present = true;

    const json& dtype = v.at("dtype");
    if (!dtype.is_string()) fail(field + ".dtype", cat("is a ", dtype.type_name(), ", expected a string"));
    e.dtype = dtype.get<std::string>();
    if (std::find(s.dtypes.begin(), s.dtypes.end(), e.dtype) == s.dtypes.end() || e.dtype.empty())
      fail(field + ".dtype", cat("dtype ", quoted(e.dtype), " of tensor ", s.name, " is not supported here; expected ",
                                 expected_dtypes(s)));

    const json& shape = v.at("shape");
    if (!shape.is_array()) fail(field + ".shape", cat("is a ", shape.type_name(), ", expected an array"));
    const std::size_t rank = shape.size();
    const bool rank_ok = t == Tensor::context_lens             ? (rank == 1 || rank == 2)
                         : t == Tensor::q || t == Tensor::q_scales ? rank == 4
                                                                 : rank == 2;
    if (!rank_ok) fail(field + ".shape", cat("has rank ", rank, ", expected ", s.dims));
    for (std::size_t i = 0; i < rank; ++i) e.shape.push_back(detail::json_non_negative(src_, cat(field, ".shape[", i, "]"), shape[i]));

    const json& offsets = v.at("data_offsets");
    if (!offsets.is_array() || offsets.size() != 2)
      fail(field + ".data_offsets",
           cat("is ", offsets.is_array() ? cat("an array of ", offsets.size()) : cat("a ", offsets.type_name()),
               ", expected [begin, end]"));
    e.begin = static_cast<std::uint64_t>(detail::json_non_negative(src_, field + ".data_offsets[0]", offsets[0]));
    e.end = static_cast<std::uint64_t>(detail::json_non_negative(src_, field + ".data_offsets[1]", offsets[1]));
    const std::string range = cat("[", e.begin, ", ", e.end, "]");
    if (e.begin > e.end) fail(field + ".data_offsets", cat(range, " ends before it begins"));
    if (e.end > data_size_)
      fail(field + ".data_offsets", cat(range, " run past the end of the data section (", data_size_, " bytes)"));

    const auto bytes = byte_size(s.elem_size, e.shape);
    if (!bytes)
      fail(field + ".shape", cat(shape_text(e.shape), " of ", e.dtype, " is too large: its non-zero dimensions need more than 2^63 - 1 bytes"));
    if (static_cast<std::uint64_t>(*bytes) != e.end - e.begin)
      fail(field + ".data_offsets", cat(range, " span ", e.end - e.begin, " bytes but dtype ", e.dtype, " and shape ",
                                        shape_text(e.shape), " need ", *bytes));
  }

  // The tensors' byte ranges must tile the data section: no overlap, no gap, nothing left over.
  void check_coverage() const {
    std::vector<int> order;
    for (int i = 0; i < kTensorCount; ++i)
      if (plan_.entries[static_cast<std::size_t>(i)].present) order.push_back(i);
    auto at = [&](int i) -> const Entry& { return plan_.entries[static_cast<std::size_t>(i)]; };
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      return std::tie(at(a).begin, at(a).end, a) < std::tie(at(b).begin, at(b).end, b);
    });
    std::uint64_t cursor = 0;
    int previous = -1;
    for (int i : order) {
      const Entry& e = at(i);
      const std::string field = cat("tensor ", kTensors[static_cast<std::size_t>(i)].name, ".data_offsets");
      const std::string range = cat("[", e.begin, ", ", e.end, "]");
      if (e.begin < cursor)
        fail(field, cat(range, " overlap tensor ", kTensors[static_cast<std::size_t>(previous)].name, "'s [",
                        at(previous).begin, ", ", at(previous).end, "]"));
      if (e.begin > cursor)
        fail(field, cat(range, " leave a gap: bytes [", cursor, ", ", e.begin, ") of the data section belong to no tensor"));
      if (e.end > cursor) previous = i;
      cursor = e.end;
    }
    if (cursor != data_size_)
      fail("data section", cat("bytes [", cursor, ", ", data_size_, ") belong to no tensor"));
  }

  std::string take(std::map<std::string, std::string>& md, const std::string& key) const {
    return detail::take_metadata(src_, md, key);
  }

  std::uint64_t number(std::map<std::string, std::string>& md, const std::string& key, std::uint64_t max) const {
    return detail::take_decimal(src_, md, key, max);
  }

  template <class E>
  E enum_value(std::map<std::string, std::string>& md, const std::string& key, std::initializer_list<E> options) const {
    const std::string text = take(md, key);
    std::string names;
    for (E o : options) {
      if (to_string(o) == text) return o;
      names += (names.empty() ? "" : " or ") + std::string(to_string(o));
    }
    fail(cat(kMetaKey, ".", key), cat(quoted(text), " is not one of ", names));
  }

  void parse_metadata(const json* meta) {
    if (meta == nullptr) fail(std::string(kMetaKey), "missing");
    if (!meta->is_object())
      fail(std::string(kMetaKey), cat("is a ", meta->type_name(), ", expected an object of string values"));
    std::map<std::string, std::string> md;
    for (const auto& [key, value] : meta->items()) {
      if (!value.is_string())
        fail(cat(kMetaKey, ".", key_text(key)), cat("value is a ", value.type_name(), ", expected a string"));
      md.emplace(key, value.get<std::string>());
    }

    const std::string version = take(md, "format_version");
    if (version != kCaseFileFormatVersion && version != kFormatVersionAnyValueFormat)
      fail(cat(kMetaKey, ".format_version"),
           cat(quoted(version), " is not supported; this reader reads versions ", quoted(kCaseFileFormatVersion), " and ",
               quoted(kFormatVersionAnyValueFormat)));
    const bool any_format = version == kFormatVersionAnyValueFormat;
    CaseFile& f = plan_.file;
    Case& c = f.c;
    c.name = take(md, "name");
    detail::check_printable(src_, cat(kMetaKey, ".name"), c.name);
    c.suite = take(md, "suite");
    detail::check_printable(src_, cat(kMetaKey, ".suite"), c.suite);
    f.producer = take(md, "producer");
    c.seed = number(md, "seed", std::numeric_limits<std::uint64_t>::max());
    c.format = any_format ? enum_value(md, "value_format", {ValueFormat::e4m3fn, ValueFormat::e4m3fnuz, ValueFormat::e2m1})
                          : enum_value(md, "fp8_format", {ValueFormat::e4m3fn, ValueFormat::e4m3fnuz});
    c.layout = enum_value(md, "kv_layout", {KvLayout::normal, KvLayout::shuffle});
    f.contract = enum_value(md, "contract", {Contract::clean, Contract::valid_only});
    meta_batch_ = static_cast<std::int64_t>(number(md, "batch", kInt32Max));
    c.next_n = static_cast<std::int64_t>(number(md, "next_n", kInt32Max));
    c.heads = static_cast<std::int64_t>(number(md, "heads", kInt32Max));
    c.head_dim = static_cast<std::int64_t>(number(md, "head_dim", kInt32Max));
    c.block_size = static_cast<std::int64_t>(number(md, "block_size", kInt32Max));
    c.max_model_len = static_cast<std::int64_t>(number(md, "max_model_len", kInt32Max));
    const std::pair<const char*, std::int64_t> positive[] = {
        {"next_n", c.next_n}, {"heads", c.heads}, {"head_dim", c.head_dim}, {"block_size", c.block_size}};
    for (auto [key, v] : positive)
      if (v < 1) fail(cat(kMetaKey, ".", key), "\"0\" is not allowed: must be at least 1");
    detail::check_judging_metadata(src_, md);
    f.extra = std::move(md);  // whatever is left is free-form, but for the judging names checked above
  }

  const Entry& entry(Tensor t) const { return plan_.entries[static_cast<std::size_t>(t)]; }

  void check_consistency() {
    CaseFile& f = plan_.file;
    Case& c = f.c;
    const Entry& q = entry(Tensor::q);
    auto meta_mismatch = [&](std::size_t dim, const char* key, std::int64_t meta_value) {
      if (q.shape[dim] != meta_value)
        fail("tensor q.shape",
             cat(shape_text(q.shape), " ([B, N, H, D]) disagrees with the metadata: ", key, " is ", meta_value));
    };
    meta_mismatch(0, "batch", meta_batch_);
    meta_mismatch(1, "next_n", c.next_n);
    meta_mismatch(2, "heads", c.heads);
    if (q.shape[3] != c.token_value_bytes())
      fail("tensor q.shape", cat(shape_text(q.shape), " disagrees with the metadata: head_dim ", c.head_dim, " of ",
                                 to_string(c.format), " values takes ", c.token_value_bytes(), " bytes a head"));
    if ((q.dtype == "F8_E4M3" && c.format != ValueFormat::e4m3fn) || (q.dtype == "F8_E4M3FNUZ" && c.format != ValueFormat::e4m3fnuz))
      fail("tensor q.dtype", cat("dtype ", q.dtype, " disagrees with the metadata: the value format is ", to_string(c.format)));
    const Entry& qs = entry(Tensor::q_scales);
    if (is_fp4(c.format) != qs.present)
      fail("tensor q_scales", is_fp4(c.format) ? "missing: e2m1 values need their UE8M0 scales" : "present, but fp8 cases have no q scales");
    c.batch = q.shape[0];
    const std::int64_t rows = c.batch * c.next_n;  // fits: q's byte size was computed without overflow

    auto expect = [&](Tensor t, const std::vector<std::int64_t>& want, const char* why) {
      const Entry& e = entry(t);
      if (e.shape != want)
        fail(cat("tensor ", spec(t).name, ".shape"),
             cat(shape_text(e.shape), " disagrees with ", why, ": expected ", spec(t).dims, " = ", shape_text(want)));
    };
    expect(Tensor::weights, {rows, c.heads}, "q's shape and the metadata");
    const Entry& lens = entry(Tensor::context_lens);
    c.context_lens_2d = lens.shape.size() == 2;
    expect(Tensor::context_lens,
           c.context_lens_2d ? std::vector<std::int64_t>{c.batch, c.next_n} : std::vector<std::int64_t>{c.batch},
           "q's shape");
    const Entry& table = entry(Tensor::block_table);
    if (table.shape[0] != c.batch)
      fail("tensor block_table.shape", cat(shape_text(table.shape), " disagrees with q's shape ", shape_text(q.shape),
                                          ": expected [B, max_blocks_per_seq] with B = ", c.batch));
    c.max_blocks_per_seq = table.shape[1];
    const Entry& kv = entry(Tensor::kv_cache);
    c.num_blocks = kv.shape[0];
    c.block_stride = kv.shape[1];
    const std::int64_t min_stride = c.min_block_stride();  // both factors <= 2^31 - 1
    if (c.block_stride < min_stride)
      fail("tensor kv_cache.shape", cat(shape_text(kv.shape), ": block stride ", c.block_stride, " is below block_size*(",
                                       is_fp4(c.format) ? "head_dim/2" : "head_dim", "+4) = ", min_stride, " from the metadata"));
    if (qs.present) expect(Tensor::q_scales, {c.batch, c.next_n, c.heads, kScaleWordBytes}, "q's shape");
    if (entry(Tensor::logits).present) expect(Tensor::logits, {rows, c.max_model_len}, "q's shape and max_model_len");

    // Size the buffers; the data section bounds them (each tensor's bytes lie inside it).
    c.q.resize(static_cast<std::size_t>(q.end - q.begin));
    if (qs.present) c.q_scales.resize(static_cast<std::size_t>(qs.end - qs.begin));
    c.kv_cache.resize(static_cast<std::size_t>(kv.end - kv.begin));
    c.weights.resize(static_cast<std::size_t>((entry(Tensor::weights).end - entry(Tensor::weights).begin) / 4));
    c.context_lens.resize(static_cast<std::size_t>((lens.end - lens.begin) / 4));
    c.block_table.resize(static_cast<std::size_t>((table.end - table.begin) / 4));
    if (entry(Tensor::logits).present)
      f.logits.emplace(static_cast<std::size_t>((entry(Tensor::logits).end - entry(Tensor::logits).begin) / 4));
  }

  std::string src_;
  std::uint64_t data_size_;
  std::int64_t meta_batch_ = 0;
  Plan plan_;
};

void* destination(CaseFile& f, Tensor t) {
  switch (t) {
    case Tensor::weights: return f.c.weights.data();
    case Tensor::context_lens: return f.c.context_lens.data();
    case Tensor::block_table: return f.c.block_table.data();
    case Tensor::logits: return f.logits ? f.logits->data() : nullptr;
    case Tensor::q: return f.c.q.data();
    case Tensor::q_scales: return f.c.q_scales.data();
    case Tensor::kv_cache: return f.c.kv_cache.data();
  }
  return nullptr;
}

// Length field and header checks shared by both readers. Returns the header length.
std::uint64_t check_length(const std::string& src, const std::uint8_t* first8, std::uint64_t file_size) {
  std::uint64_t len = 0;
  for (int i = 7; i >= 0; --i) len = (len << 8) | first8[i];
  const std::uint64_t after = file_size - 8;
  if (len > after)
    throw CaseFileError(src, "header length",
                        cat(len, " bytes is larger than the ", after, " bytes that follow the length field (file is ",
                            file_size, " bytes)"));
  if (len > kCaseFileMaxHeaderBytes)
    throw CaseFileError(src, "header length", cat(len, " bytes is over the limit of ", kCaseFileMaxHeaderBytes, " bytes"));
  if (len < 2) throw CaseFileError(src, "header length", cat(len, " bytes cannot hold a JSON object"));
  return len;
}

void too_short(const std::string& src, std::uint64_t file_size) {
  if (file_size < 8)
    throw CaseFileError(src, "header length",
                        cat("the file is ", file_size, " bytes, too short for the 8-byte header length"));
}

void finish(const std::string& src, const CaseFile& f) {
  try {
    validate(f.c);
  } catch (const CaseError& e) {
    throw CaseFileError(src, "case", e.what());
  }
}

std::vector<int> read_order(const Plan& plan) {
  std::vector<int> order;
  for (int i = 0; i < kTensorCount; ++i)
    if (plan.entries[static_cast<std::size_t>(i)].present) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return plan.entries[static_cast<std::size_t>(a)].begin < plan.entries[static_cast<std::size_t>(b)].begin;
  });
  return order;
}

}  // namespace

bool is_reserved_case_file_key(std::string_view key) noexcept {
  return std::find(kReservedKeys.begin(), kReservedKeys.end(), key) != kReservedKeys.end() || key == kMetaKey;
}

std::vector<std::string> case_file_reserved_keys() {
  std::vector<std::string> keys(kReservedKeys.begin(), kReservedKeys.end());
  keys.emplace_back(kMetaKey);
  return keys;
}

std::vector<std::uint8_t> serialize_case_file(const CaseFile& file) {
  const Serialized s = build(file, "<memory>");
  std::uint64_t total = 8 + s.header.size();
  for (const Blob& b : s.blobs) total += b.size;
  std::vector<std::uint8_t> out(static_cast<std::size_t>(total));
  put_u64_le(out.data(), s.header.size());
  std::memcpy(out.data() + 8, s.header.data(), s.header.size());
  std::size_t at = 8 + s.header.size();
  for (const Blob& b : s.blobs) {
    if (b.size) std::memcpy(out.data() + at, b.data, static_cast<std::size_t>(b.size));
    at += static_cast<std::size_t>(b.size);
  }
  return out;
}

std::string write_case_file(const std::filesystem::path& path, const CaseFile& file) {
  const std::string src = path.string();
  const Serialized s = build(file, src);
  std::uint8_t len[8];
  put_u64_le(len, s.header.size());
  std::vector<std::span<const std::uint8_t>> parts = {
      {len, 8}, {reinterpret_cast<const std::uint8_t*>(s.header.data()), s.header.size()}};
  for (const Blob& b : s.blobs) parts.emplace_back(b.data, static_cast<std::size_t>(b.size));
  try {
    write_file_atomically(path, parts);
  } catch (const std::system_error& e) {
    throw CaseFileError(src, "file", "cannot write: " + describe_write_error(e.code()), e.code().value());
  }
  return sha256_hex(parts);
}

CaseFile parse_case_file(std::span<const std::uint8_t> bytes, std::string_view source_name) {
  const std::string src(source_name);
  too_short(src, bytes.size());
  const std::uint64_t len = check_length(src, bytes.data(), bytes.size());
  const std::uint64_t data_begin = 8 + len;
  HeaderParser parser(src, bytes.size() - data_begin);
  Plan plan = parser.parse(
      std::string_view(reinterpret_cast<const char*>(bytes.data() + 8), static_cast<std::size_t>(len)));
  for (int i : read_order(plan)) {
    const Entry& e = plan.entries[static_cast<std::size_t>(i)];
    if (e.end > e.begin)
      std::memcpy(destination(plan.file, static_cast<Tensor>(i)), bytes.data() + data_begin + e.begin,
                  static_cast<std::size_t>(e.end - e.begin));
  }
  finish(src, plan.file);
  return std::move(plan.file);
}

CaseFile read_case_file(const std::filesystem::path& path) {
  const std::string src = path.string();
  if (const std::string kind = detail::not_a_regular_file(src); !kind.empty())
    throw CaseFileError(src, "file", kind == "no such file" ? "does not exist" : "is " + kind + ", not a regular file");
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw CaseFileError(src, "file", cat("cannot read: ", ec.message()));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CaseFileError(src, "file", "cannot open for reading");
  auto read_at = [&](std::uint64_t offset, void* dst, std::uint64_t n, const std::string& what) {
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(static_cast<char*>(dst), static_cast<std::streamsize>(n));
    if (!in || static_cast<std::uint64_t>(in.gcount()) != n)
      throw CaseFileError(src, what, cat("could not read ", n, " bytes at offset ", offset, " (file changed or I/O error)"));
  };
  too_short(src, size);
  std::uint8_t first8[8];
  read_at(0, first8, 8, "header length");
  const std::uint64_t len = check_length(src, first8, size);
  std::string header(static_cast<std::size_t>(len), '\0');
  read_at(8, header.data(), len, "header");
  const std::uint64_t data_begin = 8 + len;
  HeaderParser parser(src, size - data_begin);
  Plan plan = parser.parse(header);
  for (int i : read_order(plan)) {
    const Entry& e = plan.entries[static_cast<std::size_t>(i)];
    if (e.end > e.begin)
      read_at(data_begin + e.begin, destination(plan.file, static_cast<Tensor>(i)), e.end - e.begin,
              cat("tensor ", kTensors[static_cast<std::size_t>(i)].name));
  }
  finish(src, plan.file);
  return std::move(plan.file);
}

}  // namespace pmqa::cases
