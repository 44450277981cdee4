// The run lock and the run report: the lock is an open-file-description lock, so reading the folder's
// lock state (or its record) in the holding process never drops it, and a second process is refused
// with the holder's words; the summary lines and the JUnit of a record that stopped early.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "pmqa/cases/run_lock.hpp"
#include "pmqa/cases/run_report.hpp"

namespace pmqa::cases {
namespace {
namespace fs = std::filesystem;

struct Tmp {
  fs::path dir = fs::temp_directory_path() / ("pmqa_run_lock_report_test." + std::to_string(::getpid()));
  Tmp() { fs::create_directories(dir); }
  ~Tmp() { fs::remove_all(dir); }
};

// Whether another process can take a POSIX write lock on the file (as a second pmqa-run's lockf would).
bool another_process_can_lock(const fs::path& file) {
  const pid_t child = ::fork();
  if (child == 0) {
    const int fd = ::open(file.c_str(), O_RDWR);
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    ::_exit(fd >= 0 && ::fcntl(fd, F_SETLK, &lock) == 0 ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST(RunLock, HeldThroughReadsOfTheFolderInTheHoldingProcess) {
  Tmp tmp;
  const fs::path file = tmp.dir / kRunLockName;
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  ASSERT_GE(fd, 0);
  lock_run_folder(fd, "run-1", "my-op");
  // run_lock_held opens and closes the lock file: a POSIX lock would be dropped by that close.
  EXPECT_TRUE(run_lock_held(tmp.dir));
  EXPECT_TRUE(run_lock_held(tmp.dir));
  EXPECT_FALSE(another_process_can_lock(file));
  // A second open file description of the same process is refused too, naming the holder.
  const int second = ::open(file.c_str(), O_RDWR | O_CLOEXEC);
  try {
    lock_run_folder(second, "run-2", "other-op");
    ADD_FAILURE() << "a second lock was taken";
  } catch (const RunLockBusy& e) {
    EXPECT_NE(std::string(e.what()).find("run run-1 of my-op"), std::string::npos) << e.what();
  }
  ::close(second);
  ::close(fd);  // the descriptor the lock was taken on: only this releases it
  EXPECT_FALSE(run_lock_held(tmp.dir));
  EXPECT_TRUE(another_process_can_lock(file));
}

RunRecord stopped_record(const fs::path& folder) {
  RunRecord rec;
  rec.folder = folder;
  rec.run_id = "r1";
  rec.producer = "my-op";
  rec.op = "mod:op";
  rec.convention = "eager";
  rec.stopped = "pmqa-run was interrupted (SIGINT)";
  for (const char* status : {"ok", "unsupported", "unsupported", "pending"}) {
    RecordedCase c;
    c.name = c.result = std::string("case-") + std::to_string(rec.cases.size());
    c.status = status;
    c.limit = c.status == "unsupported" ? "layout" : "";
    c.written = c.status == "ok";
    rec.cases.push_back(c);
  }
  return rec;
}

TEST(RunReport, SummaryOfARunThatStoppedEarly) {
  Tmp tmp;
  const RunRecord rec = stopped_record(tmp.dir);
  const auto lines = run_summary_lines(rec, RunSummaryFacts{{}, false, 130, 3, 0});
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "pmqa-run: 4 case(s): 1 written, 0 failed, 2 unsupported (refused), 0 invalid, 1 not run (exit 130)");
  EXPECT_EQ(lines[1], "pmqa-run: unsupported by limit: layout 2");
  EXPECT_EQ(lines[2], "pmqa-run: 3 worker processes (a fresh one after each fault)");
  // The written case's file is not in the folder: none is kept.
  EXPECT_EQ(lines[3], "pmqa-run: the run stopped early (pmqa-run was interrupted (SIGINT)): 0 result file(s) kept in " +
                          tmp.dir.string() + ", 1 case(s) not run; `pmqa-run --resume --out " + tmp.dir.string() +
                          "` finishes it");
}

TEST(RunReport, JUnitCallsACaseNotRunAnError) {
  Tmp tmp;
  const std::string text = run_record_junit_text(stopped_record(tmp.dir), {"an answer out of turn"});
  EXPECT_NE(text.find("errors=\"2\""), std::string::npos) << text;
  EXPECT_NE(text.find("not run: the run stopped before this case: pmqa-run was interrupted (SIGINT)"), std::string::npos);
  EXPECT_NE(text.find("name=\"pmqa-run worker answers\""), std::string::npos);
  EXPECT_NE(text.find("<property name=\"stopped\""), std::string::npos);
}

TEST(RunReport, CaseLinesIndentAMessagesLaterLines) {
  CaseOutcome c;
  c.status = "failed";
  c.name = "plain";
  c.path = "/c/plain.safetensors";
  c.message = "bad\npmqa-run: 1 case(s) (exit 0)";
  EXPECT_EQ(case_line(c), "FAIL     case plain (/c/plain.safetensors): bad\n    pmqa-run: 1 case(s) (exit 0)");
  c.status = "ok";
  c.shape = "B1";
  c.bench_ms = "1.5";
  c.out_path = "/o/plain.safetensors";
  EXPECT_EQ(case_line(c), "ok       plain" + std::string(21, ' ') + " B1" + std::string(32, ' ') +
                              "       1.5 ms  /o/plain.safetensors");
}

}  // namespace
}  // namespace pmqa::cases
