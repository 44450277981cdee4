// Exhaustive tests of the oracle's fp8 codec against the spec §3 table, computed here from the
// table's own numbers (anchors and the FN/FNUZ relation), not from the codec's formula.
#include <cmath>
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

#include "pmqa/reference/fp8.hpp"

namespace pmqa {
namespace {

// Spec §3 written as integer arithmetic: |value| = (8 + m) * 2^(e - bias - 3) for e > 0 and
// m * 2^(1 - bias - 3) for e = 0. Multiplying by powers of two by repeated doubling avoids
// sharing ldexp with the codec.
double table_value(int bias, std::uint8_t code) {
  const int e = (code >> 3) & 15, m = code & 7;
  double v = e == 0 ? m : 8 + m;
  int p = (e == 0 ? 1 : e) - bias - 3;
  for (; p > 0; --p) v *= 2;
  for (; p < 0; ++p) v /= 2;
  return (code & 0x80) ? -v : v;
}

bool table_nan(Fp8Format f, std::uint8_t code) {
  return f == Fp8Format::e4m3fn ? (code == 0x7F || code == 0xFF) : code == 0x80;
}

TEST(Fp8Decode, AllCodesMatchTheSpecTable) {
  for (auto [f, bias] : {std::pair{Fp8Format::e4m3fn, 7}, std::pair{Fp8Format::e4m3fnuz, 8}}) {
    for (int i = 0; i < 256; ++i) {
      const auto code = static_cast<std::uint8_t>(i);
      const float got = decode_fp8(f, code);
      if (table_nan(f, code)) {
        EXPECT_TRUE(std::isnan(got)) << to_string(f) << " code " << i;
        EXPECT_TRUE(is_fp8_nan(f, code));
        continue;
      }
      EXPECT_FALSE(is_fp8_nan(f, code)) << i;
      EXPECT_EQ(static_cast<double>(got), table_value(bias, code)) << to_string(f) << " code " << i;
      EXPECT_EQ(std::signbit(got), (code & 0x80) != 0) << to_string(f) << " code " << i;
    }
  }
}

TEST(Fp8Decode, AnchorsFromTheSpec) {
  EXPECT_EQ(decode_fp8(Fp8Format::e4m3fn, 0x7E), 448.0f);
  EXPECT_EQ(decode_fp8(Fp8Format::e4m3fnuz, 0x7F), 240.0f);
  EXPECT_EQ(decode_fp8(Fp8Format::e4m3fn, 0x01), 0x1p-9f);
  EXPECT_EQ(decode_fp8(Fp8Format::e4m3fnuz, 0x01), 0x1p-10f);
  EXPECT_EQ(decode_fp8(Fp8Format::e4m3fn, 0x08), 0x1p-6f);  // smallest normal
  EXPECT_EQ(decode_fp8(Fp8Format::e4m3fn, 0x38), 1.0f);
  EXPECT_EQ(decode_fp8(Fp8Format::e4m3fnuz, 0x40), 1.0f);
  EXPECT_TRUE(std::signbit(decode_fp8(Fp8Format::e4m3fn, 0x80)));  // -0 in FN
  EXPECT_EQ(decode_fp8(Fp8Format::e4m3fn, 0x80), 0.0f);
  EXPECT_EQ(fp8_max_finite(Fp8Format::e4m3fn), 448.0f);
  EXPECT_EQ(fp8_max_finite(Fp8Format::e4m3fnuz), 240.0f);
}

// Spec: for every byte except 0x7F, 0xFF and 0x80, FNUZ(b) == FN(b) / 2 exactly.
TEST(Fp8Decode, FnuzIsHalfOfFnExceptThreeCodes) {
  for (int i = 0; i < 256; ++i) {
    if (i == 0x7F || i == 0xFF || i == 0x80) continue;
    const auto code = static_cast<std::uint8_t>(i);
    EXPECT_EQ(decode_fp8(Fp8Format::e4m3fnuz, code), decode_fp8(Fp8Format::e4m3fn, code) / 2) << i;
  }
  EXPECT_EQ(decode_fp8(Fp8Format::e4m3fnuz, 0x7F), 240.0f);  // NaN in FN
  EXPECT_EQ(decode_fp8(Fp8Format::e4m3fnuz, 0xFF), -240.0f);
  EXPECT_TRUE(std::isnan(decode_fp8(Fp8Format::e4m3fnuz, 0x80)));  // -0 in FN
}

TEST(Fp8Encode, RoundTripsEveryFiniteCode) {
  for (auto f : {Fp8Format::e4m3fn, Fp8Format::e4m3fnuz})
    for (auto mode : {Fp8Overflow::saturate, Fp8Overflow::nan})
      for (int i = 0; i < 256; ++i) {
        const auto code = static_cast<std::uint8_t>(i);
        if (is_fp8_nan(f, code)) continue;
        EXPECT_EQ(encode_fp8(f, decode_fp8(f, code), mode), code) << to_string(f) << " code " << i;
      }
}

// Between two adjacent codes: below the midpoint rounds down, above rounds up, the midpoint
// itself goes to the even code (mantissa LSB 0).
TEST(Fp8Encode, RoundsToNearestTiesToEven) {
  for (auto f : {Fp8Format::e4m3fn, Fp8Format::e4m3fnuz}) {
    const int top = f == Fp8Format::e4m3fn ? 0x7E : 0x7F;
    for (int lo = 0; lo < top; ++lo) {
      const float a = decode_fp8(f, static_cast<std::uint8_t>(lo));
      const float b = decode_fp8(f, static_cast<std::uint8_t>(lo + 1));
      const float mid = (a + b) / 2;  // exact: fp8 neighbours differ in few bits
      const auto even = static_cast<std::uint8_t>(lo % 2 == 0 ? lo : lo + 1);
      for (float sign : {1.0f, -1.0f}) {
        auto enc = [&](float v) { return encode_fp8(f, sign * v, Fp8Overflow::saturate); };
        auto with_sign = [&](int code) {
          if (sign > 0) return static_cast<std::uint8_t>(code);
          if (code == 0) return static_cast<std::uint8_t>(f == Fp8Format::e4m3fn ? 0x80 : 0x00);
          return static_cast<std::uint8_t>(code | 0x80);
        };
        EXPECT_EQ(enc(mid), with_sign(even)) << to_string(f) << " tie between " << lo << " and " << lo + 1;
        EXPECT_EQ(enc(std::nextafter(mid, a)), with_sign(lo)) << to_string(f) << " below midpoint " << lo;
        EXPECT_EQ(enc(std::nextafter(mid, b)), with_sign(lo + 1)) << to_string(f) << " above midpoint " << lo;
      }
    }
  }
}

TEST(Fp8Encode, OverflowModes) {
  constexpr auto fn = Fp8Format::e4m3fn;
  constexpr auto uz = Fp8Format::e4m3fnuz;
  // FN: 448 is 0x7E (even); the next step would be 480, so 464 ties to 448 in both modes.
  EXPECT_EQ(encode_fp8(fn, 464.0f, Fp8Overflow::nan), 0x7E);
  EXPECT_EQ(encode_fp8(fn, 464.5f, Fp8Overflow::nan), 0x7F);
  EXPECT_EQ(encode_fp8(fn, 464.5f, Fp8Overflow::saturate), 0x7E);
  EXPECT_EQ(encode_fp8(fn, -1e9f, Fp8Overflow::saturate), 0xFE);
  EXPECT_EQ(encode_fp8(fn, -1e9f, Fp8Overflow::nan), 0x7F);
  EXPECT_EQ(encode_fp8(fn, INFINITY, Fp8Overflow::saturate), 0x7E);
  EXPECT_EQ(encode_fp8(fn, INFINITY, Fp8Overflow::nan), 0x7F);
  // FNUZ: 240 is 0x7F (odd); the next step would be 256, so the tie 248 leaves the range.
  EXPECT_EQ(encode_fp8(uz, 247.9f, Fp8Overflow::nan), 0x7F);
  EXPECT_EQ(encode_fp8(uz, 248.0f, Fp8Overflow::nan), 0x80);
  EXPECT_EQ(encode_fp8(uz, 248.0f, Fp8Overflow::saturate), 0x7F);
  EXPECT_EQ(encode_fp8(uz, -300.0f, Fp8Overflow::saturate), 0xFF);
  EXPECT_EQ(encode_fp8(uz, std::numeric_limits<float>::quiet_NaN(), Fp8Overflow::saturate), 0x80);
  EXPECT_EQ(encode_fp8(fn, std::numeric_limits<float>::quiet_NaN(), Fp8Overflow::saturate), 0x7F);
}

TEST(Fp8Encode, FnuzNegativeZeroIsPositiveZero) {
  for (auto mode : {Fp8Overflow::saturate, Fp8Overflow::nan}) {
    EXPECT_EQ(encode_fp8(Fp8Format::e4m3fnuz, -0.0f, mode), 0x00);
    EXPECT_EQ(encode_fp8(Fp8Format::e4m3fnuz, -1e-9f, mode), 0x00);
    EXPECT_EQ(encode_fp8(Fp8Format::e4m3fnuz, -0x1p-11f, mode), 0x00);  // exactly half the smallest subnormal: tie to 0
    EXPECT_EQ(encode_fp8(Fp8Format::e4m3fn, -1e-9f, mode), 0x80);      // FN keeps -0
  }
}

TEST(Fp8Encode, MonotonicOverASweep) {
  for (auto f : {Fp8Format::e4m3fn, Fp8Format::e4m3fnuz}) {
    float prev = -INFINITY;
    for (float x = -500.0f; x <= 500.0f; x += 0.0625f) {
      const float v = decode_fp8(f, encode_fp8(f, x, Fp8Overflow::saturate));
      EXPECT_GE(v, prev) << to_string(f) << " at " << x;
      prev = v;
    }
  }
}

TEST(Fp8Names, ParseAndPrint) {
  EXPECT_EQ(parse_fp8_format("e4m3fnuz"), Fp8Format::e4m3fnuz);
  EXPECT_EQ(parse_fp8_format(to_string(Fp8Format::e4m3fn)), Fp8Format::e4m3fn);
  EXPECT_THROW(parse_fp8_format("e5m2"), std::invalid_argument);
}

}  // namespace
}  // namespace pmqa
