/*
 * half.h - the 16-bit float formats and float32, as static inline functions for the weight
 * loader, the kernels, the safetensors reader and writer and the tests.
 *
 * bf16: the top 16 bits of a float32 (8-bit exponent, 7-bit mantissa). f16: IEEE binary16 (5-bit
 * exponent bias 15, 10-bit mantissa, subnormals below 2^-14). Widening is exact (subnormals, inf
 * and NaN payloads included); narrowing rounds to nearest even, overflows to inf and keeps NaNs
 * quiet. The st_ prefix is historical (they were safetensors.c's); they touch no file.
 */
#ifndef PTTS_HALF_H
#define PTTS_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t half_f2u(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float half_u2f(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline float st_bf16_to_f32(uint16_t h) { return half_u2f((uint32_t)h << 16); }

static inline float st_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    if (exp == 0) {
        /* zero or subnormal: mant * 2^-24, exact in float */
        float v = (float)mant * 0x1p-24f;
        return half_u2f(half_f2u(v) | sign);
    }
    if (exp == 31) return half_u2f(sign | 0x7f800000u | (mant << 13)); /* inf, NaN (payload kept) */
    return half_u2f(sign | ((exp + 112) << 23) | (mant << 13));
}

static inline uint16_t st_f32_to_bf16(float f) {
    uint32_t x = half_f2u(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40); /* quiet NaN */
    x += 0x7fffu + ((x >> 16) & 1); /* round to nearest even; overflow carries into inf */
    return (uint16_t)(x >> 16);
}

static inline uint16_t st_f32_to_f16(float f) {
    uint32_t x = half_f2u(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00 | ((ax >> 13) & 0x3ff)); /* NaN */
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00); /* >= 65520 rounds to inf */
    if (ax >= 0x38800000u) {                                 /* normal half (>= 2^-14) */
        ax -= 112u << 23;                                    /* rebias 127 -> 15 */
        ax += 0xfffu + ((ax >> 13) & 1);
        return (uint16_t)(sign | (ax >> 13));
    }
    int e = (int)(ax >> 23);
    if (e < 102) return sign; /* below 2^-25: rounds to zero (2^-25 itself ties to 0) */
    /* subnormal half: the value is m * 2^(e-150), the unit 2^-24, so the result is m >> (126-e) */
    uint32_t m = (ax & 0x7fffffu) | 0x800000u;
    int shift = 126 - e; /* 14..24 */
    uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) r++; /* may carry into the smallest normal */
    return (uint16_t)(sign | r);
}

#endif
