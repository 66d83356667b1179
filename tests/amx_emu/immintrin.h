/*
 * immintrin.h (tests/amx_emu) - a scalar model of the AVX-512 and AMX intrinsics that
 * src/cpu/kernels_amx.c uses, found first on the include path by tests/amx_emu.sh, so that the
 * amx table's tile program (its blocking, padding, tails, slices and layouts) runs on any CPU.
 * Written from Intel's definitions of the instructions; it is not the hardware (which
 * bench/amx_run.sh checks): tdpbf16ps sums in the reference's order (odd element of a pair
 * first, one chain), or with AMX_EMU_SPLIT in the order of Intel's current pseudo-code (per
 * instruction an even and an odd chain from 0, their sum added to C: the hardware's, measured);
 * both flush as kernels.h states (DAZ inputs, FTZ steps, nearest even).
 */
#ifndef PTTS_AMX_EMU_IMMINTRIN_H
#define PTTS_AMX_EMU_IMMINTRIN_H

#include <math.h>
#include <stdint.h>
#include <string.h>

typedef float __m512 __attribute__((vector_size(64)));
typedef long long __m512i __attribute__((vector_size(64)));
typedef short __m512bh __attribute__((vector_size(64)));
typedef long long __m128i __attribute__((vector_size(16)));
typedef uint16_t __mmask16;

typedef union {
    float f[16];
    int32_t i[16];
    uint32_t u[16];
    uint16_t h[32];
} emu_v;

static inline emu_v emu_of(const void *v) {
    emu_v u;
    memcpy(&u, v, 64);
    return u;
}
static inline __m512 emu_ps(emu_v u) {
    __m512 v;
    memcpy(&v, &u, 64);
    return v;
}
static inline __m512i emu_si(emu_v u) {
    __m512i v;
    memcpy(&v, &u, 64);
    return v;
}

static inline __m512 _mm512_setzero_ps(void) {
    emu_v u = {{0}};
    return emu_ps(u);
}
static inline __m512 _mm512_set1_ps(float f) {
    emu_v u;
    for (int i = 0; i < 16; i++)
        u.f[i] = f;
    return emu_ps(u);
}
static inline __m512i _mm512_set1_epi32(int v) {
    emu_v u;
    for (int i = 0; i < 16; i++)
        u.i[i] = v;
    return emu_si(u);
}
/* lane 0 is the last argument */
static inline __m512i _mm512_set_epi32(int e15, int e14, int e13, int e12, int e11, int e10, int e9,
                                       int e8, int e7, int e6, int e5, int e4, int e3, int e2,
                                       int e1, int e0) {
    const int a[16] = {e0, e1, e2, e3, e4, e5, e6, e7, e8, e9, e10, e11, e12, e13, e14, e15};
    emu_v u;
    memcpy(u.i, a, 64);
    return emu_si(u);
}
static inline __m512 _mm512_loadu_ps(const void *p) {
    emu_v u;
    memcpy(&u, p, 64);
    return emu_ps(u);
}
/* masked-off lanes are 0 and their memory is not read */
static inline __m512 _mm512_maskz_loadu_ps(__mmask16 m, const void *p) {
    emu_v u = {{0}};
    for (int i = 0; i < 16; i++)
        if (m >> i & 1) memcpy(&u.f[i], (const float *)p + i, 4);
    return emu_ps(u);
}
/* a hint with no effect on the program's values: nothing to model */
#define _MM_HINT_T0 3
static inline void _mm_prefetch(const char *p, int hint) { (void)p, (void)hint; }
static inline void _mm512_storeu_ps(void *p, __m512 v) { memcpy(p, &v, 64); }
static inline void _mm512_storeu_si512(void *p, __m512i v) { memcpy(p, &v, 64); }
static inline void _mm_storeu_si128(void *p, __m128i v) { memcpy(p, &v, 16); }
static inline void _mm512_mask_storeu_ps(void *p, __mmask16 m, __m512 v) {
    emu_v u = emu_of(&v);
    for (int i = 0; i < 16; i++)
        if (m >> i & 1) memcpy((float *)p + i, &u.f[i], 4);
}
static inline __m512 _mm512_castsi512_ps(__m512i v) { return emu_ps(emu_of(&v)); }

#define EMU_MAP2(name, T, field, expr)                                                             \
    static inline T name(T a, T b) {                                                               \
        emu_v x = emu_of(&a), y = emu_of(&b);                                                      \
        for (int i = 0; i < 16; i++)                                                               \
            x.field[i] = (expr);                                                                   \
        T r;                                                                                       \
        memcpy(&r, &x, 64);                                                                        \
        return r;                                                                                  \
    }
EMU_MAP2(_mm512_add_ps, __m512, f, x.f[i] + y.f[i])
EMU_MAP2(_mm512_mul_ps, __m512, f, x.f[i] * y.f[i])
EMU_MAP2(_mm512_max_ps, __m512, f, x.f[i] > y.f[i] ? x.f[i] : y.f[i]) /* else the second */
EMU_MAP2(_mm512_and_ps, __m512, u, x.u[i] & y.u[i])
EMU_MAP2(_mm512_max_epi32, __m512i, i, x.i[i] > y.i[i] ? x.i[i] : y.i[i])
EMU_MAP2(_mm512_min_epi32, __m512i, i, x.i[i] < y.i[i] ? x.i[i] : y.i[i])
EMU_MAP2(_mm512_mullo_epi32, __m512i, i, (int32_t)((uint32_t)x.i[i] * (uint32_t)y.i[i]))

static inline __m512i _mm512_cvtps_epi32(__m512 v) { /* MXCSR default: nearest even */
    emu_v u = emu_of(&v), r;
    for (int i = 0; i < 16; i++)
        r.i[i] = (int32_t)lrintf(u.f[i]);
    return emu_si(r);
}
static inline __m512 _mm512_cvtepi32_ps(__m512i v) {
    emu_v u = emu_of(&v), r;
    for (int i = 0; i < 16; i++)
        r.f[i] = (float)u.i[i];
    return emu_ps(r);
}
static inline __m128i _mm512_cvtepi32_epi8(__m512i v) { /* vpmovdb: the low byte */
    emu_v u = emu_of(&v);
    int8_t b[16];
    for (int i = 0; i < 16; i++)
        b[i] = (int8_t)(u.i[i] & 0xff);
    __m128i r;
    memcpy(&r, b, 16);
    return r;
}
static inline float _mm512_reduce_max_ps(__m512 v) {
    emu_v u = emu_of(&v);
    float m = u.f[0];
    for (int i = 1; i < 16; i++)
        m = u.f[i] > m ? u.f[i] : m;
    return m;
}
static inline __m512i _mm512_i32gather_epi32(__m512i idx, const void *base, int scale) {
    emu_v x = emu_of(&idx), r;
    for (int i = 0; i < 16; i++)
        memcpy(&r.i[i], (const char *)base + (long)x.i[i] * scale, 4);
    return emu_si(r);
}
/* vcvtne2ps2bf16: nearest even, an f32 subnormal gives a signed 0; lanes 0-15 from b */
static inline uint16_t emu_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7f800000u) == 0) return (uint16_t)((u >> 16) & 0x8000u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static inline __m512bh _mm512_cvtne2ps_pbh(__m512 a, __m512 b) {
    emu_v x = emu_of(&a), y = emu_of(&b), r;
    for (int i = 0; i < 16; i++) {
        r.h[i] = emu_bf16(y.f[i]);
        r.h[16 + i] = emu_bf16(x.f[i]);
    }
    __m512bh v;
    memcpy(&v, &r, 64);
    return v;
}

/* ---- AMX: 8 tiles of up to 16 rows x 64 bytes, shaped by the loaded configuration ---- */
static _Thread_local unsigned char emu_tile[8][16 * 64];
static _Thread_local int emu_rows[8], emu_colsb[8];

static inline void _tile_loadconfig(const void *cfg) {
    const unsigned char *p = cfg;
    for (int t = 0; t < 8; t++) {
        emu_colsb[t] = p[16 + 2 * t] | p[17 + 2 * t] << 8;
        emu_rows[t] = p[48 + t];
    }
}
static inline void _tile_release(void) { memset(emu_rows, 0, sizeof emu_rows); }
static inline void _tile_zero(int t) { memset(emu_tile[t], 0, sizeof emu_tile[t]); }
static inline void _tile_loadd(int t, const void *base, long stride) {
    for (int r = 0; r < emu_rows[t]; r++)
        memcpy(emu_tile[t] + r * 64, (const char *)base + r * stride, (size_t)emu_colsb[t]);
}
static inline void _tile_stored(int t, void *base, long stride) {
    for (int r = 0; r < emu_rows[t]; r++)
        memcpy((char *)base + r * stride, emu_tile[t] + r * 64, (size_t)emu_colsb[t]);
}
static inline float emu_bf16_daz(const unsigned char *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    if (!(h & 0x7f80)) h &= 0x8000;
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline float emu_ftz(float v) { return fabsf(v) < 0x1p-126f ? copysignf(0.f, v) : v; }
static inline void _tile_dpbf16ps(int c, int a, int b) {
    for (int m = 0; m < emu_rows[c]; m++)
        for (int n = 0; n < emu_colsb[c] / 4; n++) {
            float acc, e = 0.f, o = 0.f;
            memcpy(&acc, emu_tile[c] + m * 64 + n * 4, 4);
            for (int k = 0; k < emu_colsb[a] / 4; k++) {
                const unsigned char *pa = emu_tile[a] + m * 64 + k * 4;
                const unsigned char *pb = emu_tile[b] + k * 64 + n * 4;
#ifdef AMX_EMU_SPLIT
                e = emu_ftz(fmaf(emu_bf16_daz(pa), emu_bf16_daz(pb), e));
                o = emu_ftz(fmaf(emu_bf16_daz(pa + 2), emu_bf16_daz(pb + 2), o));
#else
                acc = emu_ftz(fmaf(emu_bf16_daz(pa + 2), emu_bf16_daz(pb + 2), acc));
                acc = emu_ftz(fmaf(emu_bf16_daz(pa), emu_bf16_daz(pb), acc));
#endif
            }
#ifdef AMX_EMU_SPLIT
            acc = emu_ftz(acc + emu_ftz(e + o));
#endif
            (void)e, (void)o;
            memcpy(emu_tile[c] + m * 64 + n * 4, &acc, 4);
        }
}
static inline void _tile_dpbssd(int c, int a, int b) {
    for (int m = 0; m < emu_rows[c]; m++)
        for (int n = 0; n < emu_colsb[c] / 4; n++) {
            int32_t acc;
            memcpy(&acc, emu_tile[c] + m * 64 + n * 4, 4);
            for (int k = 0; k < emu_colsb[a] / 4; k++)
                for (int i = 0; i < 4; i++)
                    acc += (int32_t)(int8_t)emu_tile[a][m * 64 + k * 4 + i] *
                           (int8_t)emu_tile[b][k * 64 + n * 4 + i];
            memcpy(emu_tile[c] + m * 64 + n * 4, &acc, 4);
        }
}

#endif
