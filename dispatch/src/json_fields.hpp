// Strict reading of one JSON object: every field is looked up by name, typed, and any field the
// reader did not ask for is an error (a typo in a reviewed data file must not pass silently).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace pmqa::dispatch::detail {

// Calls fail(message) (which must throw) with `where` prefixed: "<where>: field \"x\" ...".
class Fields {
 public:
  using Fail = void (*)(const std::string&);
  Fields(const nlohmann::json& object, std::string where, Fail fail)
      : object_(object), where_(std::move(where)), fail_(fail) {
    if (!object_.is_object()) fail_(where_ + ": must be a JSON object, got " + kind(object_));
  }

  const std::string& where() const noexcept { return where_; }
  [[noreturn]] void error(const std::string& what) const {
    fail_(where_ + ": " + what);
    throw std::logic_error("Fields: fail did not throw");
  }
  [[noreturn]] void field_error(std::string_view name, const std::string& what) const {
    error("field \"" + std::string(name) + "\" " + what);
  }

  bool has(std::string_view name) {
    used_.insert(std::string(name));
    return object_.contains(std::string(name));
  }

  const nlohmann::json& required(std::string_view name) {
    if (!has(name)) error("field \"" + std::string(name) + "\" is missing");
    return object_.at(std::string(name));
  }

  std::string string(std::string_view name) {
    const auto& v = required(name);
    if (!v.is_string()) field_error(name, "must be a string, got " + kind(v));
    return v.get<std::string>();
  }
  std::optional<std::string> optional_string(std::string_view name) {
    if (!has(name)) return std::nullopt;
    const auto& v = object_.at(std::string(name));
    if (v.is_null()) return std::nullopt;
    if (!v.is_string()) field_error(name, "must be a string or null, got " + kind(v));
    return v.get<std::string>();
  }
  std::int64_t integer(std::string_view name) {
    const auto& v = required(name);
    if (!v.is_number_integer()) field_error(name, "must be an integer, got " + kind(v));
    return v.get<std::int64_t>();
  }
  std::optional<std::int64_t> optional_integer(std::string_view name) {
    if (!has(name)) return std::nullopt;
    return integer(name);
  }
  bool boolean(std::string_view name) {
    const auto& v = required(name);
    if (!v.is_boolean()) field_error(name, "must be true or false, got " + kind(v));
    return v.get<bool>();
  }
  std::vector<std::string> strings(std::string_view name) {
    const auto& v = required(name);
    if (!v.is_array()) field_error(name, "must be an array of strings, got " + kind(v));
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string())
        field_error(name, "item " + std::to_string(i) + " must be a string, got " + kind(v[i]));
      out.push_back(v[i].get<std::string>());
    }
    return out;
  }

  // Fails on the first field nobody asked for.
  void no_other_fields() const {
    for (auto it = object_.begin(); it != object_.end(); ++it)
      if (!used_.contains(it.key())) error("unknown field \"" + it.key() + "\"");
  }

  static std::string kind(const nlohmann::json& v) {
    std::string dump = v.dump();
    if (dump.size() > 40) dump = dump.substr(0, 37) + "...";
    return std::string(v.type_name()) + " " + dump;
  }

 private:
  const nlohmann::json& object_;
  std::string where_;
  Fail fail_;
  std::set<std::string> used_;
};

}  // namespace pmqa::dispatch::detail
