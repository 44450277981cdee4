// Exact FNUZ -> OCP for matrix units that take only OCP e4m3 (NVIDIA tensor cores).
//
// For every byte except 0x7F, 0xFF and 0x80, FNUZ(b) == FN(b) / 2 (spec §3): the byte is kept and
// the factor 1/2 per operand is applied to the fp32 result (a product of two FNUZ operands is
// FN(a)*FN(b)/4, exact). The three exceptions: 0x80 is FNUZ's NaN, which is -0 in OCP, so it
// becomes OCP NaN 0x7F; 0x7F and 0xFF are +-240, i.e. +-480 in the doubled domain, which OCP
// cannot hold (max 448): they become +-448 plus a correction operand holding +-32 (0x60 / 0xE0)
// at that position, zero elsewhere. A*B is then main*main + main*corr + corr*main + corr*corr,
// every term exact, so every FNUZ code comes out exact.
#pragma once

#include "pmqa_kernels/hip_compat.hpp"

PMQA_KDEV_BEGIN

struct OcpPair {
  std::uint32_t main;
  std::uint32_t corr;
};

// Converts four FNUZ bytes packed in a word.
PMQA_DEV OcpPair fnuz_to_ocp4(std::uint32_t w) {
  OcpPair out{0, 0};
  for (int i = 0; i < 4; ++i) {
    const std::uint32_t b = (w >> (8 * i)) & 0xFFu;
    std::uint32_t m = b, c = 0;
    if (b == 0x80u) m = 0x7Fu;                // NaN stays NaN
    else if ((b & 0x7Fu) == 0x7Fu) {          // +-240 -> +-(448 + 32) in the doubled domain
      m = (b & 0x80u) | 0x7Eu;
      c = (b & 0x80u) | 0x60u;
    }
    out.main |= m << (8 * i);
    out.corr |= c << (8 * i);
  }
  return out;
}

PMQA_KDEV_END
