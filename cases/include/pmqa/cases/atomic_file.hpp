// Writing a file so that a reader sees the old file or the whole new one, never a part of either
// (Python's pmqa.cases.atomic_file is the same in Python).
//
// Each write goes to its own temporary file in the target's folder, NAME.<pid>-<random>.partial,
// created with O_EXCL so no other writer ever opens it; the bytes are synced (fsync), the file is
// renamed over the target (atomic within one file system), and the folder is synced so the rename
// survives a crash. Two writers of one path leave one writer's whole file, never a mix. A failed
// write removes its temporary file and throws std::system_error carrying errno (ENOSPC, EROFS, ...).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <system_error>
#include <vector>

namespace pmqa::cases {

void write_file_atomically(const std::filesystem::path& path, const std::vector<std::span<const std::uint8_t>>& parts);
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

// The system's words for a failed write, with "(the disk or quota is full)" where it is.
std::string describe_write_error(const std::error_code& code);

// The errno values that mean "this folder takes no more writes" (a full disk or quota, a read-only or
// forbidden folder, a file too large), as opposed to a fault of the data being written: a runner stops
// on them instead of failing one case after another.
std::vector<int> no_more_writes_errnos();
bool takes_no_more_writes(int os_errno) noexcept;

}  // namespace pmqa::cases
