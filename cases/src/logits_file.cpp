#include "pmqa/cases/logits_file.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "pmqa/cases/atomic_file.hpp"
#include "strict_header.hpp"

namespace pmqa::cases {
namespace {

using nlohmann::json;
using detail::cat;
using detail::quoted;

constexpr const char* kContent = "logits-only";
constexpr std::uint64_t kInt32Max = 2147483647;

const std::set<std::string>& reserved() {
  static const std::set<std::string> keys = {"format_version", "content", "name", "producer", "contract", "input_file",
                                             "input_sha256", "batch", "next_n", "max_model_len"};
  return keys;
}

std::uint64_t length_of(const std::uint8_t* p) {
  std::uint64_t len = 0;
  for (int i = 7; i >= 0; --i) len = (len << 8) | p[i];
  return len;
}

// The fields' rules, shared by the writer and the reader.
void check_fields(const LogitsFile& f, const std::string& src) {
  for (const auto* text : {&f.name, &f.producer, &f.input_file, &f.input_sha256})
    if (detail::first_invalid_utf8(*text) != std::string::npos)
      throw CaseFileError(src, "__metadata__", "a value is not valid UTF-8: " + detail::quoted(*text));
  detail::check_printable(src, "__metadata__.name", f.name);
  if (f.input_sha256.size() != 64 || f.input_sha256.find_first_not_of("0123456789abcdef") != std::string::npos)
    throw CaseFileError(src, "__metadata__.input_sha256", "expected 64 lowercase hex digits");
  if (f.input_file.empty() || f.input_file.find('/') != std::string::npos || f.input_file.find('\\') != std::string::npos ||
      f.input_file == "." || f.input_file == ".." || detail::first_control_character(f.input_file) != std::string::npos)
    throw CaseFileError(src, "__metadata__.input_file",
                        detail::quoted(f.input_file) + " must be a file name (no folder, no control character)");
  const std::pair<const char*, std::int64_t> bounded[] = {{"batch", f.batch}, {"next_n", f.next_n}, {"max_model_len", f.max_model_len}};
  for (auto [key, v] : bounded)
    if (v < (std::string_view(key) == "next_n" ? 1 : 0) || v > static_cast<std::int64_t>(kInt32Max))
      throw CaseFileError(src, cat("__metadata__.", key), cat(v, " is outside [", std::string_view(key) == "next_n" ? 1 : 0, ", ", kInt32Max, "]"));
}

}  // namespace

std::vector<std::string> logits_file_reserved_keys() { return {reserved().begin(), reserved().end()}; }

std::map<std::string, std::string> read_header_metadata(const std::filesystem::path& path) {
  std::map<std::string, std::string> out;
  if (!detail::not_a_regular_file(path.string()).empty()) return out;  // never open a FIFO: it would block
  std::ifstream in(path, std::ios::binary);
  std::uint8_t first8[8];
  if (!in.read(reinterpret_cast<char*>(first8), 8)) return out;
  const std::uint64_t len = length_of(first8);
  if (len < 2 || len > kCaseFileMaxHeaderBytes) return out;
  std::string header(static_cast<std::size_t>(len), '\0');
  if (!in.read(header.data(), static_cast<std::streamsize>(len))) return out;
  const json j = json::parse(header, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("__metadata__") || !j["__metadata__"].is_object()) return out;
  for (const auto& [key, value] : j["__metadata__"].items())
    if (value.is_string()) out[key] = value.get<std::string>();
  return out;
}

bool is_logits_file(const std::filesystem::path& path) {
  const auto md = read_header_metadata(path);
  const auto it = md.find("content");
  return it != md.end() && it->second == kContent;
}

LogitsFile read_logits_file(const std::filesystem::path& path) {
  const std::string src = path.string();
  return parse_logits_file(detail::read_regular_file(src, src), src);
}

LogitsFile parse_logits_file(std::span<const std::uint8_t> bytes, std::string_view source_name) {
  const std::string src(source_name);
  if (bytes.size() < 8)
    throw CaseFileError(src, "header length", cat("the file is ", bytes.size(), " bytes, too short for the 8-byte header length"));
  const std::uint64_t len = length_of(bytes.data());
  const std::uint64_t after = bytes.size() - 8;
  if (len > after)
    throw CaseFileError(src, "header length", cat(len, " bytes is larger than the ", after, " bytes that follow the length field"));
  if (len > kCaseFileMaxHeaderBytes)
    throw CaseFileError(src, "header length", cat(len, " bytes is over the limit of ", kCaseFileMaxHeaderBytes, " bytes"));
  if (len < 2) throw CaseFileError(src, "header length", cat(len, " bytes cannot hold a JSON object"));
  const json root = detail::parse_strict_header(
      src, std::string_view(reinterpret_cast<const char*>(bytes.data() + 8), static_cast<std::size_t>(len)));
  for (const auto& [key, value] : root.items()) {
    (void)value;
    if (key != "__metadata__" && key != "logits")
      throw CaseFileError(src, "tensor " + detail::quoted(key), "a logits-only file holds exactly the tensor logits and __metadata__");
  }
  if (!root.contains("__metadata__") || !root.contains("logits"))
    throw CaseFileError(src, "header", "a logits-only file holds exactly the tensor logits and __metadata__");
  const json& meta = root["__metadata__"];
  if (!meta.is_object())
    throw CaseFileError(src, "__metadata__", cat("is a ", meta.type_name(), ", expected an object of string values"));
  std::map<std::string, std::string> md;
  for (const auto& [key, value] : meta.items()) {
    if (!value.is_string())
      throw CaseFileError(src, "__metadata__." + detail::key_text(key), cat("value is a ", value.type_name(), ", expected a string"));
    md[key] = value.get<std::string>();
  }
  for (const auto& key : reserved())
    if (!md.count(key)) throw CaseFileError(src, "__metadata__." + key, "missing");
  if (detail::take_metadata(src, md, "content") != kContent)
    throw CaseFileError(src, "__metadata__.content", "is not \"logits-only\"");
  if (const std::string version = detail::take_metadata(src, md, "format_version"); version != kCaseFileFormatVersion)
    throw CaseFileError(src, "__metadata__.format_version", detail::quoted(version) + " is not supported");
  LogitsFile f;
  f.batch = static_cast<std::int64_t>(detail::take_decimal(src, md, "batch", kInt32Max));
  f.next_n = static_cast<std::int64_t>(detail::take_decimal(src, md, "next_n", kInt32Max));
  f.max_model_len = static_cast<std::int64_t>(detail::take_decimal(src, md, "max_model_len", kInt32Max));
  if (f.next_n < 1) throw CaseFileError(src, "__metadata__.next_n", "\"0\" is not allowed: must be at least 1");
  // Each factor is below 2^31: rows * cols * 4 stays below 2^95 only in theory, so check it fits.
  const std::uint64_t rows = static_cast<std::uint64_t>(f.batch) * static_cast<std::uint64_t>(f.next_n);
  std::uint64_t cells = 0, data_bytes = 0;
  const bool overflow = __builtin_mul_overflow(rows, static_cast<std::uint64_t>(f.max_model_len), &cells) ||
                        __builtin_mul_overflow(cells, std::uint64_t{4}, &data_bytes);
  const std::string want = cat("expected {dtype F32, shape [", rows, ", ", f.max_model_len, "], data_offsets [0, ",
                               overflow ? std::string("too large") : std::to_string(data_bytes), "]}");
  const json& t = root["logits"];
  if (!t.is_object() || t.size() != 3 || !t.contains("dtype") || !t.contains("shape") || !t.contains("data_offsets") ||
      t["dtype"] != "F32")
    throw CaseFileError(src, "tensor logits", want);
  for (const char* key : {"shape", "data_offsets"})
    if (!t[key].is_array() || t[key].size() != 2) throw CaseFileError(src, cat("tensor logits.", key), want);
  const std::int64_t shape0 = detail::json_non_negative(src, "tensor logits.shape[0]", t["shape"][0]);
  const std::int64_t shape1 = detail::json_non_negative(src, "tensor logits.shape[1]", t["shape"][1]);
  const std::int64_t begin = detail::json_non_negative(src, "tensor logits.data_offsets[0]", t["data_offsets"][0]);
  const std::int64_t end = detail::json_non_negative(src, "tensor logits.data_offsets[1]", t["data_offsets"][1]);
  if (overflow || static_cast<std::uint64_t>(shape0) != rows || shape1 != f.max_model_len || begin != 0 ||
      static_cast<std::uint64_t>(end) != data_bytes)
    throw CaseFileError(src, "tensor logits", want);
  if (after - len != data_bytes)
    throw CaseFileError(src, "data section", cat("is ", after - len, " bytes, the logits need ", data_bytes));
  f.name = detail::take_metadata(src, md, "name");
  f.producer = detail::take_metadata(src, md, "producer");
  f.input_file = detail::take_metadata(src, md, "input_file");
  f.input_sha256 = detail::take_metadata(src, md, "input_sha256");
  const std::string contract = detail::take_metadata(src, md, "contract");
  try {
    f.contract = parse_contract(contract);
  } catch (const std::invalid_argument&) {
    throw CaseFileError(src, "__metadata__.contract", detail::quoted(contract) + " is not one of clean or valid-only");
  }
  check_fields(f, src);
  detail::check_judging_metadata(src, md);
  f.extra = std::move(md);
  f.logits.resize(static_cast<std::size_t>(cells));
  if (cells) std::memcpy(f.logits.data(), bytes.data() + 8 + len, static_cast<std::size_t>(data_bytes));
  return f;
}

std::vector<std::uint8_t> serialize_logits_file(const LogitsFile& f) {
  check_fields(f, "<memory>");
  const std::uint64_t cells = static_cast<std::uint64_t>(f.batch * f.next_n * f.max_model_len);
  if (f.logits.size() != cells) throw CaseFileError("<memory>", "logits", "size disagrees with B*N*max_model_len");
  json meta = json::object();
  for (const auto& [k, v] : f.extra) {
    if (detail::first_invalid_utf8(k) != std::string_view::npos)
      throw CaseFileError("<memory>", "extra key " + detail::quoted(k), "is not valid UTF-8");
    if (reserved().count(k)) throw CaseFileError("<memory>", "extra key " + k, "is reserved for the format's own metadata");
    if (detail::first_invalid_utf8(v) != std::string_view::npos)
      throw CaseFileError("<memory>", "extra key " + detail::key_text(k), "value is not valid UTF-8: " + detail::quoted(v));
    meta[k] = v;
  }
  detail::check_judging_metadata("<memory>", f.extra);
  meta["format_version"] = std::string(kCaseFileFormatVersion);
  meta["content"] = kContent;
  meta["name"] = f.name;
  meta["producer"] = f.producer;
  meta["contract"] = std::string(to_string(f.contract));
  meta["input_file"] = f.input_file;
  meta["input_sha256"] = f.input_sha256;
  meta["batch"] = std::to_string(f.batch);
  meta["next_n"] = std::to_string(f.next_n);
  meta["max_model_len"] = std::to_string(f.max_model_len);
  json header = {{"__metadata__", meta},
                 {"logits",
                  {{"dtype", "F32"},
                   {"shape", {f.batch * f.next_n, f.max_model_len}},
                   {"data_offsets", {0, cells * 4}}}}};
  std::string text = header.dump();  // nlohmann sorts object keys: the same bytes as the Python writer
  text.append((8 - text.size() % 8) % 8, ' ');
  std::vector<std::uint8_t> out(8 + text.size() + cells * 4);
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(text.size() >> (8 * i));
  std::memcpy(out.data() + 8, text.data(), text.size());
  if (cells) std::memcpy(out.data() + 8 + text.size(), f.logits.data(), static_cast<std::size_t>(cells * 4));
  return out;
}

std::string write_logits_file(const std::filesystem::path& path, const LogitsFile& file) {
  const auto bytes = serialize_logits_file(file);
  try {
    write_file_atomically(path, {{bytes.data(), bytes.size()}});
  } catch (const std::system_error& e) {
    throw CaseFileError(path.string(), "file", "cannot write: " + describe_write_error(e.code()), e.code().value());
  }
  return sha256_hex(bytes.data(), bytes.size());
}

CaseFile join_logits_file(const LogitsFile& r, const std::filesystem::path& result_path,
                          const std::filesystem::path& cases_dir) {
  const std::string src = result_path.string();
  const std::filesystem::path input = cases_dir / r.input_file;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(input, ec))
    throw CaseFileError(src, "__metadata__.input_file",
                        "its input " + input.string() + " does not exist (--cases names the folder of the case files the run read)");
  const std::string actual = sha256_file(input);
  if (actual != r.input_sha256)
    throw CaseFileError(src, "__metadata__.input_sha256",
                        "the run read an input with sha256 " + r.input_sha256 + ", but " + input.string() + " has " + actual +
                            " (the case file changed since the run, or --cases is another folder)");
  CaseFile f = read_case_file(input);
  if (f.c.batch != r.batch || f.c.next_n != r.next_n || f.c.max_model_len != r.max_model_len)
    throw CaseFileError(src, "logits", "[" + std::to_string(r.batch * r.next_n) + ", " + std::to_string(r.max_model_len) +
                                           "] disagrees with its input " + input.string());
  f.logits = r.logits;
  f.producer = r.producer;
  f.contract = r.contract;
  for (const auto& [k, v] : r.extra) f.extra[k] = v;
  f.extra["logits_file"] = result_path.filename().string();
  return f;
}

}  // namespace pmqa::cases
