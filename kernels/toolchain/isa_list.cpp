// pmqa_isa_list: list the fp8-related instructions of every function in an AMDGPU assembly file
// (clang -x hip --cuda-device-only -S), and compare that listing with an expectation file.
//
//   pmqa_isa_list <file.s>                                   print the listing
//   pmqa_isa_list <file.s> --write <expect.txt> [--arch A]   write it as the expectation
//   pmqa_isa_list <file.s> --check <expect.txt> [--arch A] [--name N] [--build-dir D --target T]
//                                                            exit 0 when equal, else 1 with a diff
//                                                            and the command that regenerates it
//   [--pattern REGEX]                                        which mnemonics count (see below)
//
// The listing: one block per function defined in the file (`.type NAME,@function`), sorted by the
// demangled name; the block's first line is "kernel NAME" for kernels (those with an .amdhsa_kernel
// descriptor) or "function NAME" for other device functions that were not inlined; then, indented,
// the sorted set of the fp8-related mnemonics in its body, or "(no fp8 instructions)". A kernel whose
// fp8 path vanished (e.g. an #if that fell back to the portable code) therefore shows as a change.
//
// fp8-related: a VALU mnemonic containing fp8, bf8 or f8f6f4, i.e. the default pattern
//   ^v_[a-z0-9_]*(fp8|bf8|f8f6f4)[a-z0-9_]*$
// It covers v_cvt_f32_fp8 / v_cvt_f32_bf8, v_cvt_pk_f32_fp8, v_cvt_pk_fp8_f32, v_cvt_sr_fp8_f32,
// v_mfma_f32_*_fp8_fp8 / _bf8_fp8 ..., v_smfmac_*fp8*, v_dot4_f32_fp8_*, v_wmma_*fp8*, v_swmmac_*fp8*
// and gfx950's v_cvt_scalef32_*fp8* and v_mfma_*_f8f6f4. The encoding suffix (_e32, _e64, _sdwa,
// _dpp, _dpp8, _e64_dpp) is dropped: the listing says which operations a kernel uses, not how the
// compiler encoded them. The count of each is not listed either (it follows unrolling).
//
// Lines starting with '#' and blank lines are comments, in the expectation file as in the output.
#include <cxxabi.h>
#include <regex.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

const char* const kDefaultPattern = "^v_[a-z0-9_]*(fp8|bf8|f8f6f4)[a-z0-9_]*$";

struct Function {
  bool kernel = false;
  std::set<std::string> fp8;
};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) {
    return "";
  }
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::string demangle(const std::string& name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status),
                                            std::free);
  return status == 0 && out ? std::string(out.get()) : name;
}

std::string strip_encoding(std::string m) {
  for (const char* suffix : {"_e64_dpp", "_dpp8", "_dpp", "_sdwa", "_e32", "_e64"}) {
    const std::string s(suffix);
    if (m.size() > s.size() && m.compare(m.size() - s.size(), s.size(), s) == 0) {
      return m.substr(0, m.size() - s.size());
    }
  }
  return m;
}

std::string quote(const std::string& s) {
  if (s.find_first_of(" \t\"'$\\") == std::string::npos) {
    return s;
  }
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

// A POSIX extended regular expression (regex.h: much lighter to compile than <regex>).
class Pattern {
 public:
  explicit Pattern(const std::string& re) {
    if (regcomp(&re_, re.c_str(), REG_EXTENDED | REG_NOSUB) != 0) {
      throw std::runtime_error("invalid --pattern regular expression: " + re);
    }
  }
  ~Pattern() { regfree(&re_); }
  Pattern(const Pattern&) = delete;
  Pattern& operator=(const Pattern&) = delete;
  bool matches(const std::string& s) const { return regexec(&re_, s.c_str(), 0, nullptr, 0) == 0; }

 private:
  regex_t re_{};
};

// "<directive> NAME..." -> NAME (up to a comma or blank), or "" when the line is another directive.
std::string directive_operand(const std::string& line, const std::string& directive) {
  const std::string t = trim(line);
  if (t.rfind(directive, 0) != 0 || t.size() <= directive.size() ||
      (t[directive.size()] != ' ' && t[directive.size()] != '\t')) {
    return "";
  }
  const std::string rest = trim(t.substr(directive.size()));
  return rest.substr(0, rest.find_first_of(", \t"));
}

std::map<std::string, Function> parse(const std::string& path, const Pattern& pattern) {
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error("cannot read the assembly file " + path + " (build its target first)");
  }
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  // Pass 1: which symbols are functions, which are kernels.
  std::set<std::string> functions;
  std::set<std::string> kernels;
  for (const auto& line : lines) {
    const std::string type = directive_operand(line, ".type");
    if (!type.empty() && line.find("@function") != std::string::npos) {
      functions.insert(type);
    }
    const std::string kernel = directive_operand(line, ".amdhsa_kernel");
    if (!kernel.empty()) {
      kernels.insert(kernel);
    }
  }
  // Pass 2: bodies run from "NAME:" to ".size NAME," or "; -- End function".
  std::map<std::string, Function> out;
  std::string current;
  for (const auto& raw : lines) {
    const std::string line = trim(raw.substr(0, raw.find(';')));
    if (line.empty()) {
      if (!current.empty() && raw.find("-- End function") != std::string::npos) {
        current.clear();
      }
      continue;
    }
    if (line.back() == ':') {
      const std::string label = line.substr(0, line.size() - 1);
      if (functions.count(label) != 0) {
        current = label;
        out[label].kernel = kernels.count(label) != 0;
      }
      continue;
    }
    if (current.empty()) {
      continue;
    }
    if (line[0] == '.') {
      if (line.rfind(".size", 0) == 0) {
        current.clear();
      }
      continue;
    }
    const std::string mnemonic = line.substr(0, line.find_first_of(" \t"));
    if (pattern.matches(mnemonic)) {
      out[current].fp8.insert(strip_encoding(mnemonic));
    }
  }
  for (const auto& k : kernels) {
    if (out.count(k) == 0) {
      throw std::runtime_error("kernel descriptor for " + k + " without a function body in " + path);
    }
  }
  return out;
}

std::vector<std::string> listing(const std::map<std::string, Function>& fns) {
  std::vector<std::pair<std::string, const Function*>> sorted;
  for (const auto& [name, fn] : fns) {
    sorted.emplace_back(demangle(name), &fn);
  }
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (const auto& [name, fn] : sorted) {
    out.push_back(std::string(fn->kernel ? "kernel " : "function ") + name);
    if (fn->fp8.empty()) {
      out.emplace_back("  (no fp8 instructions)");
    }
    for (const auto& i : fn->fp8) {
      out.push_back("  " + i);
    }
  }
  return out;
}

std::vector<std::string> read_expectation(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error("cannot read the expectation file " + path);
  }
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
    }
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') {
      continue;
    }
    out.push_back(line.find_last_not_of(" \t") == std::string::npos ? "" : line.substr(0, line.find_last_not_of(" \t") + 1));
  }
  return out;
}

// Line diff through the longest common subsequence (the files are small).
std::vector<std::string> diff(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  const size_t n = a.size();
  const size_t m = b.size();
  std::vector<std::vector<size_t>> lcs(n + 1, std::vector<size_t>(m + 1, 0));
  for (size_t i = n; i-- > 0;) {
    for (size_t j = m; j-- > 0;) {
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  std::vector<std::string> out;
  size_t i = 0;
  size_t j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      out.push_back("  " + a[i]);
      ++i;
      ++j;
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      out.push_back("- " + a[i]);
      ++i;
    } else {
      out.push_back("+ " + b[j]);
      ++j;
    }
  }
  return out;
}

int usage() {
  std::cerr << "usage: pmqa_isa_list <file.s> [--check <expect.txt> | --write <expect.txt>] [--arch A]\n"
               "                      [--name N] [--build-dir D --target T] [--pattern REGEX]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string asm_path, check, write, arch, name, build_dir, target;
    std::string pattern = kDefaultPattern;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&](std::string& dst) {
        if (i + 1 >= argc) {
          throw std::runtime_error("option " + a + " needs a value");
        }
        dst = argv[++i];
      };
      if (a == "--check") {
        value(check);
      } else if (a == "--write") {
        value(write);
      } else if (a == "--arch") {
        value(arch);
      } else if (a == "--name") {
        value(name);
      } else if (a == "--build-dir") {
        value(build_dir);
      } else if (a == "--target") {
        value(target);
      } else if (a == "--pattern") {
        value(pattern);
      } else if (a.rfind("--", 0) == 0 || !asm_path.empty()) {
        std::cerr << "pmqa_isa_list: unexpected argument " << a << "\n";
        return usage();
      } else {
        asm_path = a;
      }
    }
    if (asm_path.empty() || (!check.empty() && !write.empty())) {
      return usage();
    }
    const Pattern re(pattern);
    const auto actual = listing(parse(asm_path, re));

    if (check.empty()) {
      std::ostringstream text;
      // Rewriting an expectation keeps its leading comment block; a new one gets a default header.
      std::string header;
      if (std::ifstream old{write.empty() ? std::string() : write}) {
        for (std::string line; std::getline(old, line) && !line.empty() && line[0] == '#';) {
          header += line + '\n';
        }
      }
      if (!header.empty()) {
        text << header;
      } else {
        text << "# fp8-related instructions per function" << (arch.empty() ? "" : " for " + arch)
             << ", listed by pmqa_isa_list (kernels/toolchain/isa_list.cpp).\n"
             << "# Compared with the compiler's output by a CTest test; see cmake/PmqaAmd.cmake.\n";
      }
      for (const auto& l : actual) {
        text << l << '\n';
      }
      if (write.empty()) {
        std::cout << text.str();
      } else {
        std::ofstream out(write);
        if (!(out << text.str())) {
          throw std::runtime_error("cannot write " + write);
        }
        std::cout << "wrote " << write << "\n";
      }
      return 0;
    }

    const bool have_expectation = static_cast<bool>(std::ifstream(check));
    const auto expected = have_expectation ? read_expectation(check) : std::vector<std::string>{};
    if (have_expectation && expected == actual) {
      std::cout << "ISA check " << name << " passed: " << actual.size() << " lines match " << check << "\n";
      for (const auto& l : actual) {
        std::cout << "  " << l << '\n';
      }
      return 0;
    }
    std::cout << "ISA check " << name << " FAILED" << (arch.empty() ? "" : " (" + arch + ")")
              << ": the fp8 instructions in\n  " << asm_path << "\ndiffer from the expectation\n  " << check
              << (have_expectation ? "" : " (which does not exist)")
              << "\n--- expected\n+++ actual (compiler output)\n";
    for (const auto& l : diff(expected, actual)) {
      std::cout << l << '\n';
    }
    std::cout << "If the change is intended, regenerate the expectation with:\n  ";
    if (!build_dir.empty() && !target.empty()) {
      std::cout << "cmake --build " << quote(build_dir) << " --target " << quote(target) << " && ";
    }
    std::cout << quote(argv[0]) << ' ' << quote(asm_path) << " --write " << quote(check)
              << (arch.empty() ? "" : " --arch " + quote(arch))
              << (pattern == kDefaultPattern ? "" : " --pattern " + quote(pattern)) << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "pmqa_isa_list: " << e.what() << "\n";
    return 2;
  }
}
