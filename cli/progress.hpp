// Progress for long runs: one self-overwriting line on a terminal, nothing when stderr is not a
// terminal (CI logs stay clean). No progress-bar library is packaged in Debian; this is the
// minimum that does the job.
#pragma once

#include <cstdio>
#include <string>

#include <unistd.h>

namespace pmqa::cli {

class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total), on_(isatty(fileno(stderr)) != 0) {}
  ~Progress() { clear(); }
  void step(const std::string& what) {
    ++done_;
    if (!on_) return;
    std::fprintf(stderr, "\r\033[K[%zu/%zu] %s", done_, total_, what.c_str());
    std::fflush(stderr);
  }
  // Call before printing a line of normal output, so it does not land after the progress text.
  void clear() {
    if (on_) std::fprintf(stderr, "\r\033[K");
  }

 private:
  std::size_t total_, done_ = 0;
  bool on_;
};

}  // namespace pmqa::cli
