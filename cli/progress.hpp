// Progress for long runs, on stderr. On a terminal: one self-overwriting line. Elsewhere (a CI
// log, a pipe, `| tee`): a plain line every 10 s at most, so a long run shows it is alive
// without flooding the log (PMQA_PROGRESS_SECONDS sets the interval; 0 prints every step, a
// negative value none). No progress-bar library is packaged in Debian; this is the minimum that
// does the job.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

namespace pmqa::cli {

class Progress {
 public:
  explicit Progress(std::size_t total)
      : total_(total), tty_(isatty(fileno(stderr)) != 0), interval_s_(interval_from_env()), start_(Clock::now()),
        last_(start_) {}
  ~Progress() { clear(); }
  void step(const std::string& what) {
    ++done_;
    if (tty_) {
      std::fprintf(stderr, "\r\033[K[%zu/%zu] %s", done_, total_, what.c_str());
      std::fflush(stderr);
      return;
    }
    if (interval_s_ < 0) return;
    const auto now = Clock::now();
    if (std::chrono::duration<double>(now - last_).count() < interval_s_) return;
    last_ = now;
    std::fprintf(stderr, "[%zu/%zu] %s (%.0f s)\n", done_, total_, what.c_str(),
                 std::chrono::duration<double>(now - start_).count());
    std::fflush(stderr);
  }
  // Call before printing a line of normal output, so it does not land after the progress text.
  void clear() {
    if (tty_) std::fprintf(stderr, "\r\033[K");
  }

 private:
  using Clock = std::chrono::steady_clock;
  static double interval_from_env() {
    const char* v = std::getenv("PMQA_PROGRESS_SECONDS");
    if (v == nullptr || *v == '\0') return 10.0;
    char* end = nullptr;
    const double s = std::strtod(v, &end);
    return end != nullptr && *end == '\0' ? s : 10.0;
  }

  std::size_t total_, done_ = 0;
  bool tty_;
  double interval_s_;
  Clock::time_point start_, last_;
};

}  // namespace pmqa::cli
