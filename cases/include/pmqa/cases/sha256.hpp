// SHA-256 of files and buffers: the input hashes a logits-only result file records
// (logits_file.hpp), so a result is joined only with the very case file it was computed from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace pmqa::cases {

// Lowercase hex SHA-256 of a file's bytes (FIPS 180-4), and of a buffer.
std::string sha256_file(const std::filesystem::path& path);
std::string sha256_hex(const std::uint8_t* data, std::size_t size);
std::string sha256_hex(const std::vector<std::span<const std::uint8_t>>& parts);  // of the parts joined

}  // namespace pmqa::cases
