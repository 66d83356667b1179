/*
 * kernels_amx.c - the AMX kernel table: the AVX-512 table with gemm_bf16_panel on tdpbf16ps and
 * gemm_q8q on tdpbssd (see kernels.h for the contract, amx_pack.h for the operand layouts).
 * Built with the AVX-512 flags plus -mamx-tile -mamx-bf16 -mamx-int8; cpu.c lists this table
 * only when the CPU has AMX-TILE/BF16/INT8 and the kernel has granted this process tile state.
 *
 * Both kernels use one tile configuration (8 tiles of 16 rows x 64 bytes: C in tiles 0-3, A in
 * 4-5, B in 6-7), loaded at the start of every call and released at its end, since the
 * configuration belongs to the calling thread and a pool's threads come and go; a block is 2 A
 * x 2 B tiles (4 tile multiplies per A and B load pair) or fewer at the edges.
 *
 * gemm_bf16_panel: 32 rows of X x one panel of 32 outputs per block. X rows are rounded to
 *   bf16 (vcvtne2ps2bf16, the contract's rounding) into a 32 KiB stack buffer, 32 rows x up to
 *   512 k, zero-padded to whole tiles in k and to 16 or 32 rows, and reused by every panel; a
 *   K above 512 is taken in slices, each rounded once per group of PG panels, whose C tiles
 *   wait in memory (f32, exact) between slices, so the sums run in the same order as in one
 *   pass. B comes from the panel layout as stored; in a block of 16 rows (the codec's
 *   low-rate stages, which read ~19 MB of panels a frame for 16 rows) each k step prefetches
 *   the W lines 4 KiB ahead: in the CPU loop, where the backbone's stream on the other core
 *   has pushed those panels out of the caches, that cut the stages by ~15% and the int8 loop
 *   by ~14% (bench/RESULTS.md, "AMX: the codec's panels prefetched"); alone, with the panels
 *   in L3, it changes nothing measurable. The products are the reference's (exact
 *   bf16 products of the same rounded operands, DAZ); tdpbf16ps adds them in the order
 *   kernels.h states for this table (Intel's, which the hardware follows to the bit), within
 *   kernels.h's bound of the other tables' results.
 * gemm_q8q: Y^T = W Xq^T, 32 rows of W x 32 rows of X per block; A is W as stored (row stride
 *   K, the k tail of a block copied so that no load passes a row), B the quantised X rows in
 *   quads (32 rows per block, 16 for a K above 2048). Integer sums are exact and the
 *   quantisation and the three final roundings are the reference's operations, so the results
 *   are the reference's bits. Shapes the tiles do not fit (N < Q8_MIN_N, where one row of X
 *   would leave the tiles mostly idle; a K above Q8_KMAX; the last m1 - m0 mod 16 rows of W)
 *   go to the AVX-512 kernel, which gives the same bits.
 */
#include <immintrin.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "amx_pack.h"
#include "kernels.h"

const ptts_kernels *ptts_kernels_avx512(void); /* kernels_avx512.c */
const ptts_kernels *ptts_kernels_amx(void);

/* GCC's tileloadd and ldtilecfg intrinsics declare no (or too small a) memory read of their
 * buffer: a compiler barrier orders the buffer's stores before the tile loads that read them
 * and after the tile loads of its previous contents. */
#define MEMORY_BARRIER() __asm__ volatile("" ::: "memory")

static __mmask16 tail_mask(int r) { return (__mmask16)((1u << r) - 1u); }

static void tiles_on(void) {
    _Alignas(64) uint8_t cfg[64];
    ptts_amx_tilecfg(cfg);
    MEMORY_BARRIER();
    _tile_loadconfig(cfg);
}

/* ---- bf16 panels ---------------------------------------------------------------------------- */

#define SL_MAX 512    /* k per slice of the X buffer: 32 rows x 512 bf16 = 32 KiB */
#define PG 8          /* panels whose C tiles wait in memory between slices (32 KiB) */
#define PF_AHEAD 4096 /* bytes of W prefetched ahead in a block of 16 rows (see the top) */

/* Rows [0, rows) of X, k in [k0, k0 + sl), rounded to bf16 into rows of sl (a multiple of 32)
 * of xb; k >= K and rows [rows, rows_pad) are zero. */
static void xrows(int rows, int rows_pad, int K, int k0, int sl, const float *X, int ldx,
                  uint16_t *xb) {
    for (int r = 0; r < rows_pad; r++) {
        uint16_t *d = xb + (size_t)r * sl;
        if (r >= rows) {
            memset(d, 0, (size_t)sl * sizeof *d);
            continue;
        }
        const float *x = X + (size_t)r * ldx;
        for (int k = 0; k < sl; k += 32) {
            const int g = k0 + k, left = K - g;
            __m512 lo, hi;
            if (left >= 32) {
                lo = _mm512_loadu_ps(x + g);
                hi = _mm512_loadu_ps(x + g + 16);
            } else {
                __mmask16 m0 = left >= 16 ? (__mmask16)0xffff : left > 0 ? tail_mask(left) : 0;
                __mmask16 m1 = left > 16 ? tail_mask(left - 16) : 0;
                lo = _mm512_maskz_loadu_ps(m0, x + g);
                hi = _mm512_maskz_loadu_ps(m1, x + g + 16);
            }
            __m512bh h = _mm512_cvtne2ps_pbh(hi, lo);
            _mm512_storeu_si512((void *)(d + k), (__m512i)h);
        }
    }
}

/* Rows [0, rows) of a panel's C ([32][32] f32) plus bias to Y (rows at ldy, outputs m ..
 * m + 31 below M). */
static void write_panel(const float *c, int rows, const float *b, int m, int M, float *Y, int ldy) {
    const int left = M - m;
    const __mmask16 mk0 = left >= 16 ? (__mmask16)0xffff : tail_mask(left);
    const __mmask16 mk1 = left >= 32 ? (__mmask16)0xffff : left > 16 ? tail_mask(left - 16) : 0;
    const __m512 b0 = b ? _mm512_maskz_loadu_ps(mk0, b + m) : _mm512_setzero_ps();
    const __m512 b1 = b ? _mm512_maskz_loadu_ps(mk1, b + m + 16) : _mm512_setzero_ps();
    for (int r = 0; r < rows; r++) {
        float *y = Y + (size_t)r * ldy + m;
        _mm512_mask_storeu_ps(y, mk0, _mm512_add_ps(_mm512_loadu_ps(c + r * 32), b0));
        _mm512_mask_storeu_ps(y + 16, mk1, _mm512_add_ps(_mm512_loadu_ps(c + r * 32 + 16), b1));
    }
}

static void gemm_bf16_panel_amx(int K, const float *X, int ldx, const uint16_t *Wp16,
                                const float *b, float *Y, int ldy, int M, int n0, int n1, int p0,
                                int p1) {
    if (n1 <= n0 || K < 0 || K > PTTS_BF16_PANEL_KMAX) return;
    if (K == 0) { /* no products: Y = 0 + b, as the AVX-512 kernel computes it */
        ptts_kernels_avx512()->gemm_bf16_panel(K, X, ldx, Wp16, b, Y, ldy, M, n0, n1, p0, p1);
        return;
    }
    const int K2 = (K + 1) / 2;    /* pair rows of a panel */
    const int Kq = (K + 31) & ~31; /* k padded to whole tiles (16 pairs) */
    const int sl = Kq < SL_MAX ? Kq : SL_MAX, nsl = (Kq + sl - 1) / sl;
    const int t = K2 % AMX_ROWS; /* pair rows of the last, partial B tile (0: none) */
    const int pm = (M + PTTS_PANEL - 1) / PTTS_PANEL, pend = p1 < pm ? p1 : pm;
    _Alignas(64) uint16_t xb[32 * SL_MAX];
    _Alignas(64) uint16_t bt[AMX_ROWS * 64];
    _Alignas(64) float cs[PG][32 * 32]; /* C of a group's panels between slices, [32][32] */
    tiles_on();
    for (int r0 = n0; r0 < n1; r0 += 32) {
        const int rows = n1 - r0 < 32 ? n1 - r0 : 32, two = rows > 16, pad = two ? 32 : 16;
        const float *Xr = X + (size_t)r0 * ldx;
        if (nsl == 1) xrows(rows, pad, K, 0, sl, Xr, ldx, xb);
        for (int pg = p0; pg < pend; pg += PG) {
            const int pe = pend - pg < PG ? pend : pg + PG;
            for (int s = 0; s < nsl; s++) {
                const int k0 = s * sl, kn = Kq - k0 < sl ? Kq - k0 : sl, last = s == nsl - 1;
                if (nsl > 1) { /* after the previous slice's tile loads, before this one's */
                    MEMORY_BARRIER();
                    xrows(rows, pad, K, k0, sl, Xr, ldx, xb);
                }
                for (int p = pg; p < pe; p++) {
                    const uint16_t *Wp = Wp16 + (size_t)p * K2 * 2 * PTTS_PANEL;
                    float *c = cs[p - pg];
                    if (last && t) ptts_amx_bf16_btail(Wp + (size_t)(K2 - t) * 64, t, bt);
                    MEMORY_BARRIER();
                    if (s == 0) {
                        _tile_zero(0);
                        _tile_zero(1);
                        if (two) {
                            _tile_zero(2);
                            _tile_zero(3);
                        }
                    } else { /* the f32 partial sums back, exactly */
                        _tile_loadd(0, c, 128);
                        _tile_loadd(1, c + 16, 128);
                        if (two) {
                            _tile_loadd(2, c + 16 * 32, 128);
                            _tile_loadd(3, c + 16 * 32 + 16, 128);
                        }
                    }
                    for (int k = 0; k < kn; k += 32) {
                        const int k2 = (k0 + k) / 2;
                        const uint16_t *B = k2 + AMX_ROWS <= K2 ? Wp + (size_t)k2 * 64 : bt;
                        if (!two) /* W's 2 KiB two k steps ahead (past a panel: the next's) */
                            for (int l = 0; l < 2048; l += 64)
                                _mm_prefetch((const char *)((uintptr_t)(Wp + (size_t)k2 * 64) +
                                                            PF_AHEAD + (uintptr_t)l),
                                             _MM_HINT_T0);
                        _tile_loadd(6, B, 128);
                        _tile_loadd(7, B + 32, 128);
                        _tile_loadd(4, xb + k, sl * 2);
                        _tile_dpbf16ps(0, 4, 6);
                        _tile_dpbf16ps(1, 4, 7);
                        if (two) {
                            _tile_loadd(5, xb + (size_t)16 * sl + k, sl * 2);
                            _tile_dpbf16ps(2, 5, 6);
                            _tile_dpbf16ps(3, 5, 7);
                        }
                    }
                    _tile_stored(0, c, 128);
                    _tile_stored(1, c + 16, 128);
                    if (two) {
                        _tile_stored(2, c + 16 * 32, 128);
                        _tile_stored(3, c + 16 * 32 + 16, 128);
                    }
                    if (last) write_panel(c, rows, b, p * PTTS_PANEL, M, Y + (size_t)r0 * ldy, ldy);
                }
            }
        }
    }
    _tile_release();
}

/* ---- q8q ------------------------------------------------------------------------------------ */

#define Q8_BUF (64 * 1024) /* quantised X rows in quads: 32 rows x 2048 k, or 16 x 4096 */
#define Q8_KMAX 4096       /* K (padded to 64) of the tile path */
#define Q8_MIN_N 2         /* rows of X below which the AVX-512 kernel is used */

/* Row x quantised as kernels.h specifies (the AVX-512 table's operations, signed here) into
 * q[0 .. Kq), zero past K; returns the step d. */
static float quant_row_s8(int K, int Kq, const float *x, int8_t *q) {
    __m512 mx = _mm512_setzero_ps();
    const __m512 absm = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
    int k = 0;
    for (; k + 16 <= K; k += 16)
        mx = _mm512_max_ps(mx, _mm512_and_ps(_mm512_loadu_ps(x + k), absm));
    if (k < K)
        mx = _mm512_max_ps(mx, _mm512_and_ps(_mm512_maskz_loadu_ps(tail_mask(K - k), x + k), absm));
    const float amax = _mm512_reduce_max_ps(mx);
    if (!(amax > 0.f)) {
        memset(q, 0, (size_t)Kq);
        return 0.f;
    }
    const __m512 id = _mm512_set1_ps(127.f / amax);
    const __m512i lo = _mm512_set1_epi32(-127), hi = _mm512_set1_epi32(127);
    for (k = 0; k < Kq; k += 16) {
        __mmask16 mk = k + 16 <= K ? (__mmask16)0xffff : k < K ? tail_mask(K - k) : 0;
        __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(mk, x + k), id);
        __m512i qi = _mm512_cvtps_epi32(v); /* MXCSR rounding: nearest even */
        qi = _mm512_min_epi32(_mm512_max_epi32(qi, lo), hi);
        _mm_storeu_si128((__m128i *)(q + k), _mm512_cvtepi32_epi8(qi));
    }
    return amax / 127.f;
}

static void gemm_q8q_amx(int N, int K, const float *X, int ldx, const int8_t *W, const float *scale,
                         const float *b, float *Y, int ldy, int m0, int m1) {
    const ptts_kernels *v = ptts_kernels_avx512();
    if (N <= 0 || m1 <= m0 || K > PTTS_Q8Q_KMAX) return;
    const int Kq = (K + 63) & ~63, mt = m0 + (m1 - m0) / AMX_ROWS * AMX_ROWS;
    if (N < Q8_MIN_N || K <= 0 || Kq > Q8_KMAX || mt == m0) {
        v->gemm_q8q(N, K, X, ldx, W, scale, b, Y, ldy, m0, m1);
        return;
    }
    if (mt < m1) v->gemm_q8q(N, K, X, ldx, W, scale, b, Y, ldy, mt, m1);
    const int kt = K % 64; /* k of the last, partial tile (0: none) */
    _Alignas(64) int8_t bq[Q8_BUF];
    _Alignas(64) int8_t q[Q8_KMAX];
    _Alignas(64) int8_t at[2][AMX_ROWS * 64];
    _Alignas(64) int32_t c[4][AMX_ROWS * AMX_ROWS];
    float d[32];
    const int rmax = Q8_BUF / Kq >= 32 ? 32 : 16; /* rows of X per block: 2 or 1 B tiles */
    const __m512i col =
        _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                           _mm512_set1_epi32(AMX_ROWS)); /* lane r: element [r][0] of a C tile */
    tiles_on();
    for (int r0 = 0; r0 < N; r0 += rmax) {
        const int rows = N - r0 < rmax ? N - r0 : rmax, two = rows > 16;
        for (int j = 0; j < (two ? 32 : 16); j++) {
            if (j < rows)
                d[j] = quant_row_s8(K, Kq, X + (size_t)(r0 + j) * ldx, q);
            else
                memset(q, 0, (size_t)Kq);
            ptts_amx_q8_pack_row(q, Kq, j % AMX_ROWS, bq + (size_t)(j / AMX_ROWS) * AMX_ROWS * Kq);
        }
        const int8_t *B1 = bq + (size_t)AMX_ROWS * Kq;
        for (int m = m0; m < mt;) {
            const int wa = mt - m >= 32; /* two A tiles (32 rows of W) */
            const int8_t *Wm = W + (size_t)m * K;
            if (kt)
                for (int r = 0; r < (wa ? 32 : 16); r++) {
                    int8_t *a = at[r / AMX_ROWS] + (size_t)(r % AMX_ROWS) * 64;
                    memcpy(a, Wm + (size_t)r * K + (Kq - 64), (size_t)kt);
                    memset(a + kt, 0, (size_t)(64 - kt));
                }
            MEMORY_BARRIER();
            _tile_zero(0);
            _tile_zero(1);
            _tile_zero(2);
            _tile_zero(3);
            for (int k = 0; k < Kq; k += 64) {
                const int tail = k + 64 > K;
                _tile_loadd(6, bq + (size_t)k * 16, 64);
                if (tail)
                    _tile_loadd(4, at[0], 64);
                else
                    _tile_loadd(4, Wm + k, K);
                _tile_dpbssd(0, 4, 6);
                if (two) {
                    _tile_loadd(7, B1 + (size_t)k * 16, 64);
                    _tile_dpbssd(1, 4, 7);
                }
                if (wa) {
                    if (tail)
                        _tile_loadd(5, at[1], 64);
                    else
                        _tile_loadd(5, Wm + (size_t)16 * K + k, K);
                    _tile_dpbssd(2, 5, 6);
                    if (two) _tile_dpbssd(3, 5, 7);
                }
            }
            _tile_stored(0, c[0], 64);
            _tile_stored(1, c[1], 64);
            _tile_stored(2, c[2], 64);
            _tile_stored(3, c[3], 64);
            /* c[2a + g][r][j]: W row m + 16a + r against X row r0 + 16g + j; a column j (16
             * consecutive outputs of one X row) is gathered, then the reference's three
             * roundings are applied lane by lane. */
            for (int a = 0; a <= wa; a++) {
                const int ma = m + 16 * a;
                const __m512 sv = _mm512_loadu_ps(scale + ma);
                const __m512 bv = b ? _mm512_loadu_ps(b + ma) : _mm512_setzero_ps();
                for (int g = 0; g <= two; g++) {
                    const int nj = rows - 16 * g < 16 ? rows - 16 * g : 16;
                    for (int j = 0; j < nj; j++) {
                        __m512i v = _mm512_i32gather_epi32(col, c[2 * a + g] + j, 4);
                        __m512 y =
                            _mm512_mul_ps(_mm512_cvtepi32_ps(v), _mm512_set1_ps(d[16 * g + j]));
                        y = _mm512_mul_ps(y, sv);
                        _mm512_storeu_ps(Y + (size_t)(r0 + 16 * g + j) * ldy + ma,
                                         _mm512_add_ps(y, bv));
                    }
                }
            }
            m += wa ? 32 : 16;
        }
    }
    _tile_release();
}

/* A streamed matrix (kernels.h): the AVX-512 table's prefetching rows below 2 rows of X, as
 * gemm_q8q_amx's. */
static void gemm_q8q_stream_amx(int N, int K, const float *X, int ldx, const int8_t *W,
                                const float *scale, const float *b, float *Y, int ldy, int m0,
                                int m1) {
    if (N < 2)
        ptts_kernels_avx512()->gemm_q8q_stream(N, K, X, ldx, W, scale, b, Y, ldy, m0, m1);
    else
        gemm_q8q_amx(N, K, X, ldx, W, scale, b, Y, ldy, m0, m1);
}

/* ---- the table ------------------------------------------------------------------------------ */

static ptts_kernels k_amx;
static pthread_once_t k_once = PTHREAD_ONCE_INIT;

static void k_init(void) {
    k_amx = *ptts_kernels_avx512();
    k_amx.isa = "amx";
    k_amx.gemm_q8q = gemm_q8q_amx;
    k_amx.gemm_q8q_stream = gemm_q8q_stream_amx;
    k_amx.gemm_bf16_panel = gemm_bf16_panel_amx;
}

const ptts_kernels *ptts_kernels_amx(void) {
    pthread_once(&k_once, k_init);
    return &k_amx;
}
