#include "pmqa/cases/run_lock.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <ctime>
#include <system_error>

#include <nlohmann/json.hpp>

#include "pmqa/cases/run_record.hpp"

namespace pmqa::cases {
namespace {

struct flock whole_file(short type) {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;  // l_start = l_len = 0: the whole file, however long it grows
  return lock;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  std::array<char, 32> buf{};
  return std::string(buf.data(), std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm));
}

// Who holds the lock, as the holder wrote it; a holder that has not written yet is said so.
std::string holder_of(int fd) {
  std::array<char, 4096> buf{};
  const ssize_t n = ::pread(fd, buf.data(), buf.size(), 0);
  try {
    const auto doc = nlohmann::json::parse(std::string(buf.data(), n > 0 ? size_t(n) : 0));
    return "pid " + std::to_string(doc.at("pid").get<long long>()) + " on " + doc.at("host").get<std::string>() +
           ", run " + doc.at("run_id").get<std::string>() + " of " + doc.at("producer").get<std::string>() +
           ", since " + doc.at("since").get<std::string>();
  } catch (const nlohmann::json::exception&) {
    return "a process that has not said who it is yet";
  }
}

}  // namespace

void lock_run_folder(int fd, const std::string& run_id, const std::string& producer) {
  struct flock lock = whole_file(F_WRLCK);
  if (::fcntl(fd, F_OFD_SETLK, &lock) != 0) {
    const int err = errno;
    if (err == EAGAIN || err == EACCES) throw RunLockBusy(holder_of(fd));
    throw std::system_error(err, std::generic_category(), "pmqa-run.lock");
  }
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
  // ASCII only (ensure_ascii): the producer is a command line's text, the holder's message other runs print.
  const std::string info = nlohmann::ordered_json{{"pid", ::getpid()}, {"host", host.data()}, {"run_id", run_id},
                                                  {"producer", producer}, {"since", utc_now()}}
                               .dump(-1, ' ', true, nlohmann::json::error_handler_t::replace) + "\n";
  // Who holds it is only for the message a second run prints; the lock itself is held, so a failed
  // write is not the run's failure.
  if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, info.data(), info.size(), 0);
}

bool run_lock_held(const std::filesystem::path& folder) {
  // F_GETLK takes no lock, so a pmqa-run starting at this moment is never refused because of us; it
  // sees OFD locks too (they conflict with POSIX ones), and closing this descriptor drops none.
  const int fd = ::open((folder / kRunLockName).c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct flock query = whole_file(F_WRLCK);
  const bool held = ::fcntl(fd, F_GETLK, &query) == 0 && query.l_type != F_UNLCK;
  ::close(fd);
  return held;
}

}  // namespace pmqa::cases
