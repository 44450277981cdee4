#include "pmqa/cases/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <random>

namespace pmqa::cases {
namespace {

constexpr std::array<int, 6> kNoMoreWrites{ENOSPC, EDQUOT, EROFS, EACCES, EPERM, EFBIG};

std::system_error os_error(const std::string& what) { return {errno, std::generic_category(), what}; }

std::string random_hex(std::size_t digits) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < digits; ++i) out += kHex[rng() & 15];
  return out;
}

void sync_folder(const std::filesystem::path& folder) {
  const int fd = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);  // some file systems cannot sync a folder; the rename is done either way
  ::close(fd);
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, const std::vector<std::span<const std::uint8_t>>& parts) {
  std::filesystem::path tmp;
  int fd = -1;
  for (;;) {
    std::string suffix(".");
    suffix.append(std::to_string(::getpid())).append("-").append(random_hex(12)).append(".partial");
    tmp = path;
    tmp += suffix;
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) break;
    if (errno != EEXIST) throw os_error("cannot create a temporary file beside " + path.string());
  }
  auto give_up = [&](const std::string& what) {
    const std::system_error e = os_error(what);
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    throw e;
  };
  for (const auto& part : parts) {
    const std::uint8_t* p = part.data();
    std::size_t left = part.size();
    while (left > 0) {
      const ssize_t n = ::write(fd, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        give_up("cannot write " + tmp.string());
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  }
  if (::fsync(fd) != 0) give_up("cannot sync " + tmp.string());
  const int closed = ::close(fd);
  fd = -1;
  if (closed != 0) give_up("cannot close " + tmp.string());
  if (::rename(tmp.c_str(), path.c_str()) != 0) give_up("cannot rename " + tmp.string() + " to " + path.string());
  sync_folder(path.parent_path());
}

void write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  write_file_atomically(path, {{reinterpret_cast<const std::uint8_t*>(text.data()), text.size()}});
}

std::string describe_write_error(const std::error_code& code) {
  std::string words = code.message();
  if (code == std::errc::no_space_on_device || code.value() == EDQUOT) words += " (the disk or quota is full)";
  return words;
}

std::vector<int> no_more_writes_errnos() { return {kNoMoreWrites.begin(), kNoMoreWrites.end()}; }

bool takes_no_more_writes(int os_errno) noexcept {
  return std::find(kNoMoreWrites.begin(), kNoMoreWrites.end(), os_errno) != kNoMoreWrites.end();
}

}  // namespace pmqa::cases
