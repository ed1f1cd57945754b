/*
 * webdlpack: IEEE binary float width changes (float16 <-> float32 and the like) as the templates
 * tvmjs's runtime names: __extendXfYf2__ (narrow -> wide, exact) and __truncXfYf2__ (wide -> narrow,
 * round to nearest even), plus the __gnu_h2f_ieee / __gnu_f2h_ieee entry points. Each format is given
 * by its storage type and its significand bits; the exponent takes the remaining bits but the sign.
 */
#ifndef WEBDLPACK_TVM_SHIM_BUILTIN_FP16_H_
#define WEBDLPACK_TVM_SHIM_BUILTIN_FP16_H_
#include <cstdint>
#include <cstring>

namespace webdlpack_fp {

template <typename REP, int SIG>
struct Format {
  static constexpr int kBits = static_cast<int>(sizeof(REP) * 8);
  static constexpr int kExpBits = kBits - SIG - 1;
  static constexpr uint64_t kSigMask = (uint64_t{1} << SIG) - 1;
  static constexpr uint64_t kExpMax = (uint64_t{1} << kExpBits) - 1;
  static constexpr int kBias = static_cast<int>(kExpMax >> 1);
};

template <typename T, typename REP>
inline REP BitsOf(T value) {
  REP bits;
  std::memcpy(&bits, &value, sizeof(REP));
  return bits;
}

template <typename T, typename REP>
inline T FromBits(REP bits) {
  T value;
  std::memcpy(&value, &bits, sizeof(REP));
  return value;
}

}  // namespace webdlpack_fp

/*! \brief Widen a value of the narrow format (SRC_REP, SRC_SIG) to the wide one (DST_REP, DST_SIG); exact. */
template <typename SRC_T, typename SRC_REP_T, int SRC_SIG_BITS, typename DST_T, typename DST_REP_T, int DST_SIG_BITS>
inline DST_T __extendXfYf2__(SRC_T a) {
  using S = webdlpack_fp::Format<SRC_REP_T, SRC_SIG_BITS>;
  using D = webdlpack_fp::Format<DST_REP_T, DST_SIG_BITS>;
  const uint64_t bits = webdlpack_fp::BitsOf<SRC_T, SRC_REP_T>(a);
  const uint64_t sign = (bits >> (S::kBits - 1)) & 1;
  uint64_t exp = (bits >> SRC_SIG_BITS) & S::kExpMax;
  uint64_t sig = bits & S::kSigMask;
  uint64_t out_exp;
  if (exp == S::kExpMax) {  // infinity or NaN (payload kept, top-aligned)
    out_exp = D::kExpMax;
  } else if (exp == 0 && sig == 0) {  // zero
    out_exp = 0;
  } else {
    int e = static_cast<int>(exp) - S::kBias;
    if (exp == 0) {  // subnormal: normalise
      e = 1 - S::kBias;
      while ((sig & (uint64_t{1} << SRC_SIG_BITS)) == 0) {
        sig <<= 1;
        --e;
      }
      sig &= S::kSigMask;
    }
    out_exp = static_cast<uint64_t>(e + D::kBias);
  }
  const uint64_t out = (sign << (D::kBits - 1)) | (out_exp << DST_SIG_BITS) | (sig << (DST_SIG_BITS - SRC_SIG_BITS));
  return webdlpack_fp::FromBits<DST_T, DST_REP_T>(static_cast<DST_REP_T>(out));
}

/*! \brief Narrow a value of the wide format to the narrow one, rounding to nearest even (overflow gives infinity). */
template <typename SRC_T, typename SRC_REP_T, int SRC_SIG_BITS, typename DST_T, typename DST_REP_T, int DST_SIG_BITS>
inline DST_T __truncXfYf2__(SRC_T a) {
  using S = webdlpack_fp::Format<SRC_REP_T, SRC_SIG_BITS>;
  using D = webdlpack_fp::Format<DST_REP_T, DST_SIG_BITS>;
  constexpr int kDrop = SRC_SIG_BITS - DST_SIG_BITS;
  const uint64_t bits = webdlpack_fp::BitsOf<SRC_T, SRC_REP_T>(a);
  const uint64_t sign = (bits >> (S::kBits - 1)) & 1;
  const uint64_t exp = (bits >> SRC_SIG_BITS) & S::kExpMax;
  const uint64_t sig = bits & S::kSigMask;
  uint64_t out;
  if (exp == S::kExpMax) {  // infinity, or NaN kept quiet and non-zero
    out = (D::kExpMax << DST_SIG_BITS) | (sig == 0 ? 0 : ((sig >> kDrop) | (uint64_t{1} << (DST_SIG_BITS - 1))));
  } else {
    const int e = static_cast<int>(exp) - S::kBias + D::kBias;  // the narrow biased exponent
    uint64_t full = exp == 0 ? sig : (sig | (uint64_t{1} << SRC_SIG_BITS));
    int shift = kDrop;
    uint64_t out_exp = static_cast<uint64_t>(e);
    if (exp == 0 || e <= 0) {  // narrow subnormal (or zero)
      shift = kDrop + 1 - (exp == 0 ? 1 - S::kBias + D::kBias : e);
      out_exp = 0;
    }
    if (e >= static_cast<int>(D::kExpMax)) {
      out = D::kExpMax << DST_SIG_BITS;  // too large: infinity
    } else if (shift >= 64) {
      out = 0;
    } else {
      uint64_t kept = full >> shift;
      const uint64_t rest = full & ((uint64_t{1} << shift) - 1);
      const uint64_t half = uint64_t{1} << (shift - 1);
      if (rest > half || (rest == half && (kept & 1) != 0)) ++kept;  // a carry moves into the exponent, as it should
      out = out_exp == 0 ? kept : (((out_exp << DST_SIG_BITS) + (kept - (uint64_t{1} << DST_SIG_BITS))));
    }
  }
  out |= sign << (D::kBits - 1);
  return webdlpack_fp::FromBits<DST_T, DST_REP_T>(static_cast<DST_REP_T>(out));
}

/*! \brief float16 bits -> float32. */
inline float __gnu_h2f_ieee(uint16_t a) { return __extendXfYf2__<uint16_t, uint16_t, 10, float, uint32_t, 23>(a); }
/*! \brief float32 -> float16 bits (round to nearest even). */
inline uint16_t __gnu_f2h_ieee(float a) { return __truncXfYf2__<float, uint32_t, 23, uint16_t, uint16_t, 10>(a); }
#endif
