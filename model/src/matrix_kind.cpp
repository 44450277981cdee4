#include "pmqa/model/matrix_kind.hpp"

namespace pmqa {

std::string_view to_string(MatrixKind kind) noexcept {
  switch (kind) {
    case MatrixKind::none: return "none";
    case MatrixKind::mfma: return "MFMA";
    case MatrixKind::wmma: return "WMMA";
    case MatrixKind::mma_sync: return "mma.sync";
    case MatrixKind::wgmma: return "wgmma";
    case MatrixKind::tcgen05: return "tcgen05";
  }
  return "?";
}

std::optional<MatrixKind> parse_matrix_kind(std::string_view text) noexcept {
  if (text == "none") return MatrixKind::none;
  if (text == "mfma") return MatrixKind::mfma;
  if (text == "wmma") return MatrixKind::wmma;
  if (text == "mma.sync") return MatrixKind::mma_sync;
  if (text == "wgmma") return MatrixKind::wgmma;
  if (text == "tcgen05") return MatrixKind::tcgen05;
  return std::nullopt;
}

std::string_view matrix_kind_names() noexcept { return "none, mfma, wmma, mma.sync, wgmma, tcgen05"; }

int wave_size_of(MatrixKind kind) noexcept {
  switch (kind) {
    case MatrixKind::none: return 0;
    case MatrixKind::mfma: return 64;
    case MatrixKind::wmma:
    case MatrixKind::mma_sync:
    case MatrixKind::wgmma:
    case MatrixKind::tcgen05: return 32;
  }
  return 0;
}

}  // namespace pmqa
