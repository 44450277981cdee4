// A plain-text table with aligned columns, and the number formats the commands share.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "pmqa/model/case.hpp"

namespace pmqa::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  void print(std::FILE* out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

std::string format_g(double v);                     // 3 significant digits
std::string format_fixed(double v, int decimals);
std::string shape_summary(const Case& c);           // "B8 N2 H4 D32 bs16 fn normal"
// Names for a help text or message: "a | b | c" (the model's name lists, so no help spells them).
std::string joined(const std::vector<std::string>& names, const std::string& separator = " | ");

}  // namespace pmqa::cli
