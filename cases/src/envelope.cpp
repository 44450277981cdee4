#include "pmqa/cases/envelope.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

namespace pmqa::cases {
namespace detail {
struct EmbeddedFile {
  const char* name;
  const unsigned char* data;
  std::size_t size;
};
extern const EmbeddedFile kEnvelopeFiles[];
extern const std::size_t kEnvelopeFileCount;
}  // namespace detail

namespace {

using nlohmann::json;

enum class FieldType : std::uint8_t { integer, boolean, text };

struct FieldInfo {
  const char* name;
  FieldType type;
  std::vector<std::string> choices;  // text fields: the values a case can have
};

const std::vector<FieldInfo>& fields() {
  static const std::vector<FieldInfo> f = {
      {"batch", FieldType::integer, {}},
      {"next_n", FieldType::integer, {}},
      {"heads", FieldType::integer, {}},
      {"head_dim", FieldType::integer, {}},
      {"block_size", FieldType::integer, {}},
      {"max_model_len", FieldType::integer, {}},
      {"block_stride", FieldType::integer, {}},
      {"stride_pad", FieldType::integer, {}},
      {"value_format", FieldType::text, {"e4m3fn", "e4m3fnuz", "e2m1"}},
      {"kv_layout", FieldType::text, {"normal", "shuffle"}},
      {"context_lens", FieldType::text, {"1-d", "2-d"}},
      {"last_row_longest", FieldType::boolean, {}},
      {"blocks_past_max_model_len", FieldType::boolean, {}},
      {"chunk_q", FieldType::integer, {}},
      {"heads_mod_chunk_q", FieldType::integer, {}},
      {"arch", FieldType::text, {}},
  };
  return f;
}

const FieldInfo* find_field(std::string_view name) {
  for (const auto& f : fields())
    if (name == f.name) return &f;
  return nullptr;
}

std::string value_text(const TraitValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  return std::get<std::string>(v);
}

// E_r of row n of a sequence with context length L under 1-D lengths (spec §1.2; the same rule as
// fixtures' valid_keys_1d, which cases may not include).
std::int64_t valid_keys_1d(std::int64_t L, std::int64_t next_n, std::int64_t n) { return L - next_n + n + 1; }

// Lengths: E_r per row (spec §1.2), as the traits need them.
std::vector<std::int64_t> rows_valid(std::int64_t batch, std::int64_t next_n, bool two_d,
                                     const std::vector<std::int32_t>& lens) {
  std::vector<std::int64_t> e;
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t n = 0; n < next_n; ++n)
      e.push_back(two_d ? lens[static_cast<std::size_t>(b * next_n + n)]
                        : valid_keys_1d(lens[static_cast<std::size_t>(b)], next_n, n));
  return e;
}

CaseTraits traits_from(std::int64_t batch, std::int64_t next_n, std::int64_t heads, std::int64_t head_dim,
                       std::int64_t block_size, std::int64_t max_model_len, std::int64_t block_stride, ValueFormat format,
                       KvLayout layout, bool two_d, const std::vector<std::int32_t>& lens, const CallContext& call) {
  CaseTraits t;
  t.batch = batch;
  t.next_n = next_n;
  t.heads = heads;
  t.head_dim = head_dim;
  t.block_size = block_size;
  t.max_model_len = max_model_len;
  t.block_stride = block_stride;
  t.stride_pad = block_stride - block_size * (head_dim + 4);
  t.value_format = std::string(to_string(format));
  t.kv_layout = layout == KvLayout::shuffle ? "shuffle" : "normal";
  t.context_lens = two_d ? "2-d" : "1-d";
  const auto e = rows_valid(batch, next_n, two_d, lens);
  for (std::int64_t b = 0; b < batch; ++b) {
    std::int64_t longest = 0;
    const std::int64_t last = e[static_cast<std::size_t>(b * next_n + next_n - 1)];
    for (std::int64_t n = 0; n < next_n; ++n) {
      const std::int64_t er = e[static_cast<std::size_t>(b * next_n + n)];
      longest = std::max(longest, er);
      if (er > last) t.last_row_longest = false;
    }
    if (block_size > 0 && (longest + block_size - 1) / block_size * block_size > max_model_len)
      t.blocks_past_max_model_len = true;
  }
  t.chunk_q = call.chunk_q.value_or(0);
  t.heads_mod_chunk_q = t.chunk_q > 0 ? heads % t.chunk_q : 0;
  t.arch = call.arch;
  return t;
}

[[noreturn]] void fail(std::string_view origin, const std::string& where, const std::string& problem) {
  throw EnvelopeError(std::string(origin) + ": " + where + ": " + problem);
}

void only_keys(const json& j, std::initializer_list<const char*> keys, std::string_view origin,
               const std::string& where) {
  if (!j.is_object()) fail(origin, where, "expected an object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    const bool known = std::any_of(keys.begin(), keys.end(), [&](const char* k) { return it.key() == k; });
    if (!known) {
      std::string list;
      for (const char* k : keys) list += std::string(list.empty() ? "" : ", ") + k;
      fail(origin, where, "unknown key \"" + it.key() + "\" (known: " + list + ")");
    }
  }
}

std::string text(const json& j, const char* key, std::string_view origin, const std::string& where, bool required) {
  if (!j.contains(key)) {
    if (required) fail(origin, where + "." + key, "missing");
    return "";
  }
  const json& v = j.at(key);
  if (!v.is_string()) fail(origin, where + "." + key, "expected a string");
  const auto s = v.get<std::string>();
  if (required && s.find_first_not_of(" \t\n") == std::string::npos) fail(origin, where + "." + key, "is empty");
  return s;
}

TraitValue typed_value(const json& v, const FieldInfo& f, std::string_view origin, const std::string& where) {
  switch (f.type) {
    case FieldType::integer:
      if (!v.is_number_integer()) fail(origin, where, std::string("field ") + f.name + " takes integers");
      return v.get<std::int64_t>();
    case FieldType::boolean:
      if (!v.is_boolean()) fail(origin, where, std::string("field ") + f.name + " takes true or false");
      return v.get<bool>();
    case FieldType::text: {
      if (!v.is_string()) fail(origin, where, std::string("field ") + f.name + " takes strings");
      auto s = v.get<std::string>();
      if (!f.choices.empty() && std::find(f.choices.begin(), f.choices.end(), s) == f.choices.end()) {
        std::string list;
        for (const auto& c : f.choices) list += (list.empty() ? "" : ", ") + c;
        fail(origin, where, "\"" + s + "\" is not a value of " + f.name + " (" + list + ")");
      }
      return s;
    }
  }
  fail(origin, where, "unreachable");
}

// The one predicate of a limit or a "when" clause; `others` are the keys allowed beside it.
Predicate parse_predicate(const json& j, const FieldInfo& f, std::string_view origin, const std::string& where) {
  static const char* kinds[] = {"in", "not_in", "min", "max", "multiple_of", "power_of_two", "equals"};
  std::vector<std::string> present;
  for (const char* k : kinds)
    if (j.contains(k)) present.emplace_back(k);
  if (present.size() != 1)
    fail(origin, where,
         present.empty() ? "no predicate (one of in, not_in, min, max, multiple_of, power_of_two, equals)"
                         : "more than one predicate (" + present[0] + ", " + present[1] + "): one per limit");
  const std::string& k = present[0];
  const json& v = j.at(k);
  Predicate p;
  const std::string at = where + "." + k;
  if (k == "in" || k == "not_in") {
    p.kind = k == "in" ? Predicate::Kind::in : Predicate::Kind::not_in;
    if (!v.is_array() || v.empty()) fail(origin, at, "expected a non-empty array");
    for (const auto& x : v) p.values.push_back(typed_value(x, f, origin, at));
  } else if (k == "equals") {
    p.kind = Predicate::Kind::equals;
    p.values.push_back(typed_value(v, f, origin, at));
  } else if (k == "power_of_two") {
    p.kind = Predicate::Kind::power_of_two;
    if (f.type != FieldType::integer) fail(origin, at, std::string("field ") + f.name + " is not an integer");
    if (!v.is_boolean() || !v.get<bool>()) fail(origin, at, "expected true");
  } else {
    p.kind = k == "min" ? Predicate::Kind::min : k == "max" ? Predicate::Kind::max : Predicate::Kind::multiple_of;
    if (f.type != FieldType::integer) fail(origin, at, std::string("field ") + f.name + " is not an integer");
    if (!v.is_number_integer()) fail(origin, at, "expected an integer");
    p.number = v.get<std::int64_t>();
    if (p.kind == Predicate::Kind::multiple_of && p.number < 1) fail(origin, at, "must be at least 1");
  }
  return p;
}

// "fp8_format" is value_format's name from before e2m1 made it a value format of any kind: envelope
// files and overlays written with it keep loading, meaning what they meant.
std::string current_field_name(std::string name) { return name == "fp8_format" ? "value_format" : name; }

Limit parse_limit(const json& j, std::string_view origin, const std::string& where, const std::string& section,
                  bool overlay) {
  if (!j.is_object()) fail(origin, where, "expected an object");
  Limit l;
  l.section = section;
  l.origin = std::string(origin);
  l.id = text(j, "id", origin, where, true);
  if (l.id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
    fail(origin, where + ".id", "\"" + l.id + "\" must use a-z, 0-9 and '-' only");
  l.reason = text(j, "reason", origin, where + " (" + l.id + ")", true);
  if (overlay && j.contains("drop")) {
    only_keys(j, {"id", "drop", "reason"}, origin, where + " (" + l.id + ")");
    if (!j.at("drop").is_boolean() || !j.at("drop").get<bool>()) fail(origin, where + ".drop", "expected true");
    l.field.clear();  // a drop marker
    return l;
  }
  only_keys(j, {"id", "field", "in", "not_in", "min", "max", "multiple_of", "power_of_two", "equals", "when", "reason"},
            origin, where + " (" + l.id + ")");
  l.field = current_field_name(text(j, "field", origin, where + " (" + l.id + ")", true));
  const FieldInfo* f = find_field(l.field);
  if (!f) {
    std::string list;
    for (const auto& x : fields()) list += std::string(list.empty() ? "" : ", ") + x.name;
    fail(origin, where + " (" + l.id + ").field", "unknown field \"" + l.field + "\" (known: " + list + ")");
  }
  l.predicate = parse_predicate(j, *f, origin, where + " (" + l.id + ")");
  if (j.contains("when")) {
    const json& w = j.at("when");
    const std::string at = where + " (" + l.id + ").when";
    only_keys(w, {"field", "in", "not_in", "min", "max", "multiple_of", "power_of_two", "equals"}, origin, at);
    l.when_field = current_field_name(text(w, "field", origin, at, true));
    const FieldInfo* wf = find_field(*l.when_field);
    if (!wf) fail(origin, at + ".field", "unknown field \"" + *l.when_field + "\"");
    l.when = parse_predicate(w, *wf, origin, at);
  }
  return l;
}

EnvelopeSection parse_section(const json& limits, std::string_view origin, const std::string& where,
                              const std::string& section, bool overlay) {
  EnvelopeSection s;
  if (!limits.is_array()) fail(origin, where, "expected an array of limits");
  std::set<std::string> ids;
  for (std::size_t i = 0; i < limits.size(); ++i) {
    Limit l = parse_limit(limits[i], origin, where + "[" + std::to_string(i) + "]", section, overlay);
    if (!ids.insert(l.id).second) fail(origin, where, "limit id \"" + l.id + "\" appears twice");
    if (l.field.empty()) {
      s.dropped.push_back(l.id);
      s.dropped_reasons.push_back(l.reason);
    } else {
      s.limits.push_back(std::move(l));
    }
  }
  return s;
}

// nlohmann's parser keeps the last of duplicate keys; a reviewed file must not hide one.
json parse_strict(std::string_view text, std::string_view origin) {
  std::vector<std::set<std::string>> keys;
  std::string duplicate;
  auto cb = [&](int /*depth*/, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) keys.emplace_back();
    else if (event == json::parse_event_t::object_end) keys.pop_back();
    else if (event == json::parse_event_t::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second &&
             duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  json j;
  try {
    j = json::parse(text.begin(), text.end(), cb);
  } catch (const json::parse_error& e) {
    fail(origin, "JSON", e.what());
  }
  if (!duplicate.empty()) fail(origin, "JSON", "key \"" + duplicate + "\" appears twice in one object");
  return j;
}

bool is_power_of_two(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

const std::map<std::string, EnvelopeFile>& builtins() {
  static const std::map<std::string, EnvelopeFile> files = [] {
    std::map<std::string, EnvelopeFile> m;
    for (std::size_t i = 0; i < detail::kEnvelopeFileCount; ++i) {
      const auto& e = detail::kEnvelopeFiles[i];
      const std::string origin = std::string("cases/data/envelopes/") + e.name;
      EnvelopeFile f = parse_envelope(std::string_view(reinterpret_cast<const char*>(e.data), e.size), origin);
      if (f.overlay) throw EnvelopeError(origin + ": a builtin envelope cannot be an overlay");
      const std::string expected = f.convention + ".json";
      if (expected != e.name) throw EnvelopeError(origin + ": names convention " + f.convention + ", expected in " + expected);
      m.emplace(f.convention, std::move(f));
    }
    return m;
  }();
  return files;
}

void apply_section(std::vector<Limit>& limits, const EnvelopeSection& s, const std::string& section,
                   const std::string& origin) {
  for (std::size_t i = 0; i < s.dropped.size(); ++i) {
    const auto it = std::find_if(limits.begin(), limits.end(),
                                 [&](const Limit& l) { return l.id == s.dropped[i] && l.section == section; });
    if (it == limits.end())
      throw EnvelopeError(origin + ": drops limit \"" + s.dropped[i] + "\" of section " + section + ", which has none");
    limits.erase(it);
  }
  for (const auto& l : s.limits) {
    const auto it = std::find_if(limits.begin(), limits.end(),
                                 [&](const Limit& x) { return x.id == l.id && x.section == section; });
    if (it != limits.end()) *it = l;
    else limits.push_back(l);
  }
}

}  // namespace

TraitValue CaseTraits::get(std::string_view field) const {
  if (field == "batch") return batch;
  if (field == "next_n") return next_n;
  if (field == "heads") return heads;
  if (field == "head_dim") return head_dim;
  if (field == "block_size") return block_size;
  if (field == "max_model_len") return max_model_len;
  if (field == "block_stride") return block_stride;
  if (field == "stride_pad") return stride_pad;
  if (field == "value_format") return value_format;
  if (field == "kv_layout") return kv_layout;
  if (field == "context_lens") return context_lens;
  if (field == "last_row_longest") return last_row_longest;
  if (field == "blocks_past_max_model_len") return blocks_past_max_model_len;
  if (field == "chunk_q") return chunk_q;
  if (field == "heads_mod_chunk_q") return heads_mod_chunk_q;
  if (field == "arch") return arch;
  throw EnvelopeError("no case field \"" + std::string(field) + "\"");
}

const std::vector<std::string>& trait_fields() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& f : fields()) v.emplace_back(f.name);
    return v;
  }();
  return names;
}

CaseTraits traits_of(const Case& c, const CallContext& call) {
  return traits_from(c.batch, c.next_n, c.heads, c.head_dim, c.block_size, c.max_model_len, c.block_stride, c.format,
                     c.layout, c.context_lens_2d, c.context_lens, call);
}

CaseTraits traits_of(const CaseShape& s, const CallContext& call) {
  return traits_from(s.batch, s.next_n, s.heads, s.head_dim, s.block_size, s.max_model_len, s.block_stride, s.format,
                     s.layout, s.context_lens_2d, s.context_lens, call);
}

bool Predicate::holds(const TraitValue& v) const {
  switch (kind) {
    case Kind::in: return std::find(values.begin(), values.end(), v) != values.end();
    case Kind::not_in: return std::find(values.begin(), values.end(), v) == values.end();
    case Kind::equals: return !values.empty() && values.front() == v;
    case Kind::min: return std::get<std::int64_t>(v) >= number;
    case Kind::max: return std::get<std::int64_t>(v) <= number;
    case Kind::multiple_of: return std::get<std::int64_t>(v) % number == 0;
    case Kind::power_of_two: return is_power_of_two(std::get<std::int64_t>(v));
  }
  return false;
}

std::string Predicate::describe() const {
  auto list = [&] {
    std::string s;
    for (const auto& v : values) s += (s.empty() ? "" : ", ") + value_text(v);
    return s;
  };
  switch (kind) {
    case Kind::in: return "one of " + list();
    case Kind::not_in: return "none of " + list();
    case Kind::equals: return value_text(values.front());
    case Kind::min: return "at least " + std::to_string(number);
    case Kind::max: return "at most " + std::to_string(number);
    case Kind::multiple_of: return "a multiple of " + std::to_string(number);
    case Kind::power_of_two: return "a power of two";
  }
  return "?";
}

std::string Breach::message() const {
  return "limit " + limit->id + ": " + limit->field + " is " + value_text(value) + ", not " +
         limit->predicate.describe() + (limit->when ? " (when " + *limit->when_field + " is " + limit->when->describe() + ")" : "") +
         ": " + limit->reason;
}

bool Envelope::applies(const Limit& l, const CaseTraits& t) const {
  return !l.when || l.when->holds(t.get(*l.when_field));
}

std::vector<Breach> Envelope::breaches(const CaseTraits& t) const {
  std::vector<Breach> out;
  for (const auto& l : limits) {
    if (!applies(l, t)) continue;
    TraitValue v = t.get(l.field);
    if (!l.predicate.holds(v)) out.push_back({&l, std::move(v)});
  }
  return out;
}

std::string Envelope::refusal(const CaseTraits& t) const {
  if (!platform_listed)
    return "platform " + platform + ": " + convention + "'s library does not run there (its envelope lists no " + platform +
           " section)";
  const auto b = breaches(t);
  if (b.empty()) return "";
  std::string also;
  for (std::size_t i = 1; i < b.size(); ++i) also += (i == 1 ? " (also outside: " : ", ") + b[i].limit->id;
  return b.front().message() + (also.empty() ? "" : also + ")");
}

std::string Envelope::describe() const {
  std::ostringstream os;
  os << convention << " on " << platform << (platform_listed ? "" : " (not a platform the library runs on)") << ": "
     << calls << "\n";
  for (const auto& l : limits) {
    os << "  " << l.id << " [" << l.section << "]  " << l.field << " " << l.predicate.describe();
    if (l.when) os << " when " << *l.when_field << " " << l.when->describe();
    os << "\n      " << l.reason << "\n";
  }
  for (const auto& o : origins) os << "  from " << o << "\n";
  return os.str();
}

EnvelopeFile parse_envelope(std::string_view json_text, std::string_view origin) {
  const json j = parse_strict(json_text, origin);
  if (!j.is_object()) fail(origin, "top level", "expected an object");
  const std::string schema = j.contains("schema") && j.at("schema").is_string() ? j.at("schema").get<std::string>() : "";
  EnvelopeFile f;
  f.origin = std::string(origin);
  if (schema == "pmqa-envelope-overlay/1") f.overlay = true;
  else if (schema != "pmqa-envelope/1")
    fail(origin, "schema", "expected \"pmqa-envelope/1\" or \"pmqa-envelope-overlay/1\", got " + (schema.empty() ? "none" : "\"" + schema + "\""));
  only_keys(j, {"schema", "convention", "calls", "sources", "limits", "platforms"}, origin, "top level");
  f.convention = text(j, "convention", origin, "top level", true);
  f.calls = text(j, "calls", origin, "top level", true);
  f.sources = text(j, "sources", origin, "top level", true);
  if (!f.overlay && !j.contains("limits")) fail(origin, "limits", "missing (an empty array when the convention has none)");
  if (!f.overlay && !j.contains("platforms")) fail(origin, "platforms", "missing");
  if (j.contains("limits")) f.common = parse_section(j.at("limits"), origin, "limits", "common", f.overlay);
  if (j.contains("platforms")) {
    const json& p = j.at("platforms");
    if (!p.is_object() || (!f.overlay && p.empty())) fail(origin, "platforms", "expected an object of platforms");
    for (auto it = p.begin(); it != p.end(); ++it) {
      if (it.key() != "cuda" && it.key() != "rocm")
        fail(origin, "platforms", "unknown platform \"" + it.key() + "\" (known: cuda, rocm)");
      const std::string where = "platforms." + it.key();
      only_keys(it.value(), {"note", "limits"}, origin, where);
      EnvelopeSection s;
      if (it.value().contains("limits")) s = parse_section(it.value().at("limits"), origin, where + ".limits", it.key(), f.overlay);
      else if (!f.overlay) fail(origin, where + ".limits", "missing (an empty array when the platform adds none)");
      s.note = text(it.value(), "note", origin, where, !f.overlay);
      // One id, one limit: a platform limit of a common limit's id would make overlays ambiguous.
      for (const auto& l : s.limits)
        if (std::any_of(f.common.limits.begin(), f.common.limits.end(), [&](const Limit& c) { return c.id == l.id; }))
          fail(origin, where, "limit id \"" + l.id + "\" is also a common limit");
      f.platforms.emplace_back(it.key(), std::move(s));
    }
  }
  return f;
}

EnvelopeFile read_envelope_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw EnvelopeError(path + ": cannot open the envelope file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_envelope(ss.str(), path);
}

std::vector<std::string> envelope_conventions() {
  std::vector<std::string> out;
  for (const auto& [name, f] : builtins()) out.push_back(name);
  return out;
}

const EnvelopeFile& builtin_envelope_file(std::string_view convention) {
  const auto& b = builtins();
  const auto it = b.find(std::string(convention));
  if (it == b.end()) {
    std::string list;
    for (const auto& [name, f] : b) list += (list.empty() ? "" : ", ") + name;
    throw EnvelopeError("no envelope for convention \"" + std::string(convention) + "\" (known: " + list + ")");
  }
  return it->second;
}

std::vector<std::string> envelope_platforms(std::string_view convention) {
  std::vector<std::string> out;
  for (const auto& [name, s] : builtin_envelope_file(convention).platforms) out.push_back(name);
  return out;
}

Envelope make_envelope(std::string_view convention, std::string_view platform, const std::vector<EnvelopeFile>& overlays) {
  const EnvelopeFile& base = builtin_envelope_file(convention);
  for (const auto& o : overlays) {
    if (!o.overlay) throw EnvelopeError(o.origin + ": is a full envelope (schema pmqa-envelope/1); --envelope takes an overlay (pmqa-envelope-overlay/1)");
    if (o.convention != base.convention)
      throw EnvelopeError(o.origin + ": is an overlay for " + o.convention + ", not " + base.convention);
  }
  std::set<std::string> listed;
  for (const auto& [name, s] : base.platforms) listed.insert(name);
  for (const auto& o : overlays)
    for (const auto& [name, s] : o.platforms) listed.insert(name);
  std::string chosen(platform);
  if (chosen.empty()) {
    if (listed.size() != 1) {
      std::string list;
      for (const auto& p : listed) list += (list.empty() ? "" : ", ") + p;
      throw EnvelopeError(base.convention + " runs on " + list + ": choose one (--platform cuda|rocm|none)");
    }
    chosen = *listed.begin();
  }
  if (chosen != "cuda" && chosen != "rocm" && chosen != "none")
    throw EnvelopeError("unknown platform \"" + chosen + "\" (cuda, rocm or none)");
  Envelope e;
  e.convention = base.convention;
  e.platform = chosen;
  e.calls = base.calls;
  e.platform_listed = chosen == "none" || listed.count(chosen) > 0;
  e.origins.push_back(base.origin);
  apply_section(e.limits, base.common, "common", base.origin);
  for (const auto& [name, s] : base.platforms)
    if (name == chosen) apply_section(e.limits, s, name, base.origin);
  for (const auto& o : overlays) {
    e.origins.push_back(o.origin);
    apply_section(e.limits, o.common, "common", o.origin);
    for (const auto& [name, s] : o.platforms)
      if (name == chosen) apply_section(e.limits, s, name, o.origin);
  }
  return e;
}

}  // namespace pmqa::cases
