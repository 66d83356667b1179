/*
 * kernels_avx512.c - the AVX-512 kernel table (F, BW, VL, DQ; see kernels.h for the contract and
 * kernels_ref.c for the specification). Built with -mavx512{f,bw,vl,dq,bf16,vnni}; cpu.c only
 * offers this table when the CPU and the OS support all of those, since the compiler may use any
 * of them anywhere in this file. This file holds the register-level code; the loops are shared
 * with the other tables (vec_loop.h, gemm_loop.h).
 *
 * gemm (f32 / bf16 / q8 weights, f32 activations, f32 accumulation):
 *   Batch-1 generation is bound by memory bandwidth, so the design goal is to stream every W row
 *   exactly once per call at full bandwidth and to keep the arithmetic off the critical path.
 *   - Register tile: 4 rows of W x NB (<= 4) rows of X, 16 accumulators of 16 lanes each. A W
 *     vector is loaded (and, for bf16/q8, widened to f32) once and used for NB FMAs.
 *   - Weights are widened exactly: bf16 -> f32 by a 16-bit left shift (32 at a time, even and
 *     odd elements split by shift and mask with no shuffle, X permuted to match: tile4_head),
 *     int8 -> int32 -> f32. The results differ from the reference only by the order of the
 *     f32 additions (16 lane-partial sums, then a horizontal tree).
 *   - K tails use masked loads (no reads past the end of a row).
 * gemm_q8q (the int8 mode): X quantised per row, VNNI vpdpbusd (one per 64 weights and X row,
 * one more per 64 weights for the row sums), fewer uops per weight than widening, which matters
 * once two threads share the memory bandwidth with other work (bench/bench_kernels.c).
 * vdpbf16ps is used where the work is compute-bound, in the codec's panels (gemm_bf16_panel);
 * for the backbone's matrices it would round X to bf16 for no bandwidth gain.
 *
 * The elementwise kernels are vec_loop.h's on 16 lanes, with vscalefps for 2^n and masked
 * loads and stores for tails.
 */
#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "approx.h"
#include "kernels.h"

#define AI static inline __attribute__((always_inline))

enum { WT_F32, WT_BF16, WT_Q8 };
#define NB 4 /* X rows per register tile */

static __mmask16 tail_mask(int r) { return (__mmask16)((1u << r) - 1u); }

/* 16 weights at element offset `off`, widened to f32. */
AI __m512 ldw(int wt, const void *w, size_t off) {
    if (wt == WT_F32) return _mm512_loadu_ps((const float *)w + off);
    if (wt == WT_BF16) {
        __m256i h = _mm256_loadu_si256((const __m256i *)((const uint16_t *)w + off));
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    }
    __m128i q = _mm_loadu_si128((const __m128i *)((const int8_t *)w + off));
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q));
}

/* The first r (1..16) weights at `off`, zero padded (masked loads: no reads past r). */
AI __m512 ldw_n(int wt, const void *w, size_t off, int r) {
    const __mmask16 mk = tail_mask(r);
    if (wt == WT_F32) return _mm512_maskz_loadu_ps(mk, (const float *)w + off);
    if (wt == WT_BF16) {
        __m256i h = _mm256_maskz_loadu_epi16(mk, (const uint16_t *)w + off);
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    }
    __m128i q = _mm_maskz_loadu_epi8(mk, (const int8_t *)w + off);
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q));
}

/* Horizontal sums of four vectors: {sum a, sum b, sum c, sum d}. */
AI __m128 vhsum4(__m512 a, __m512 b, __m512 c, __m512 d) {
    __m256 a8 = _mm256_add_ps(_mm512_castps512_ps256(a), _mm512_extractf32x8_ps(a, 1));
    __m256 b8 = _mm256_add_ps(_mm512_castps512_ps256(b), _mm512_extractf32x8_ps(b, 1));
    __m256 c8 = _mm256_add_ps(_mm512_castps512_ps256(c), _mm512_extractf32x8_ps(c, 1));
    __m256 d8 = _mm256_add_ps(_mm512_castps512_ps256(d), _mm512_extractf32x8_ps(d, 1));
    __m256 ab = _mm256_hadd_ps(a8, b8);
    __m256 cd = _mm256_hadd_ps(c8, d8);
    __m256 s = _mm256_hadd_ps(ab, cd);
    return _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
}

/* ---- the vector primitives of vec_loop.h ------------------------------------------------- */
typedef __m512 vf;
#define VL 16

AI vf vzero(void) { return _mm512_setzero_ps(); }
AI vf vset1(float f) { return _mm512_set1_ps(f); }
AI vf vload(const float *p) { return _mm512_loadu_ps(p); }
AI void vstore(float *p, vf v) { _mm512_storeu_ps(p, v); }
AI vf vload_n(const float *p, int r) { return _mm512_maskz_loadu_ps(tail_mask(r), p); }
AI void vstore_n(float *p, vf v, int r) { _mm512_mask_storeu_ps(p, tail_mask(r), v); }
AI vf vload_h(const uint16_t *p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p)); }
AI void vstore_h(uint16_t *p, vf v) {
    _mm256_storeu_si256((__m256i *)p,
                        _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
AI vf vload_h_n(const uint16_t *p, int r) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(tail_mask(r), p));
}
AI vf vkeep_n(vf v, int r) { return _mm512_maskz_mov_ps(tail_mask(r), v); }
AI vf vfill_n(vf v, int r, float f) {
    return _mm512_mask_blend_ps(tail_mask(r), _mm512_set1_ps(f), v);
}
AI vf vadd(vf a, vf b) { return _mm512_add_ps(a, b); }
AI vf vsub(vf a, vf b) { return _mm512_sub_ps(a, b); }
AI vf vmul(vf a, vf b) { return _mm512_mul_ps(a, b); }
AI vf vdiv(vf a, vf b) { return _mm512_div_ps(a, b); }
AI vf vmax(vf a, vf b) { return _mm512_max_ps(a, b); }
AI vf vmin(vf a, vf b) { return _mm512_min_ps(a, b); }
AI vf vfma(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
AI vf vfnma(vf a, vf b, vf c) { return _mm512_fnmadd_ps(a, b, c); }
AI vf vround(vf x) {
    return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
AI float vhsum(vf v) { return _mm512_reduce_add_ps(v); }
AI float vhmax(vf v) { return _mm512_reduce_max_ps(v); }
AI vf vscale2n(vf p, vf n) { return _mm512_scalef_ps(p, n); }
AI vf vpow2n(vf n) { return _mm512_scalef_ps(_mm512_set1_ps(1.f), n); }
AI vf vsel_pos_nan(vf x, vf neg) {
    __mmask16 pos = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ);
    __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    return _mm512_mask_blend_ps((__mmask16)(pos | nan), neg, x);
}

/* The line pf bytes past p of a streamed matrix fetched ahead into L2 (gemm_loop.h, "streamed
 * matrices"). */
AI void pf_ahead(const void *p, int pf) { _mm_prefetch((const char *)p + pf, _MM_HINT_T1); }

/* The bf16 prefix of the 4-row tile: 32 bf16 weights per 512-bit load, widened without
 * shuffles: as 32-bit lanes, lane i holds element 2i in its low half and 2i+1 in its high
 * half, so (v << 16) is the even elements and (v & 0xffff0000) the odd ones, exactly; X is
 * split into even and odd elements once per k step (two permutes shared by the 4 rows) to
 * match. Returns the k reached. */
AI int tile4_head(int wt, int pf, int nb, int K, const float *X, int ldx, const void *W, size_t row,
                  vf acc[4][NB]) {
    int k = 0;
    if (wt != WT_BF16) return k;
    const __m512i ie = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i io = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    const __m512i hi = _mm512_set1_epi32((int)0xffff0000u);
    const uint16_t *Wh = (const uint16_t *)W;
    for (; k + 32 <= K; k += 32) {
        __m512 xe[NB], xo[NB];
        for (int n = 0; n < nb; n++) {
            __m512 x0 = _mm512_loadu_ps(X + (size_t)n * ldx + k);
            __m512 x1 = _mm512_loadu_ps(X + (size_t)n * ldx + k + 16);
            xe[n] = _mm512_permutex2var_ps(x0, ie, x1);
            xo[n] = _mm512_permutex2var_ps(x0, io, x1);
        }
        for (int r = 0; r < 4; r++) {
            if (pf) pf_ahead(Wh + row + (size_t)r * K + k, pf); /* a line a load */
            __m512i v = _mm512_loadu_si512((const void *)(Wh + row + (size_t)r * K + k));
            __m512 we = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
            __m512 wo = _mm512_castsi512_ps(_mm512_and_si512(v, hi));
            for (int n = 0; n < nb; n++) {
                acc[r][n] = _mm512_fmadd_ps(we, xe[n], acc[r][n]);
                acc[r][n] = _mm512_fmadd_ps(wo, xo[n], acc[r][n]);
            }
        }
    }
    return k;
}

#include "vec_loop.h"
#include "vec_tile.h"

/* ---- q8q: X quantised to int8 per row, integer dot products (VNNI) ------------------------
 * vpdpbusd multiplies u8 by s8, so X is stored as q + 128 (u8) and 128 * sum_k W[m, k] is
 * taken off; the row sums come from a second vpdpbusd of ones against the same W vector (one
 * per W vector, shared by the NB rows of X). Integer sums are exact, so the only roundings are
 * the reference's: the quantisation (same float ops, cvtps rounds to nearest even like
 * nearbyintf) and ((float)dot * d) * scale + b. Results equal the reference bit for bit.
 * X is quantised in chunks of rows into a stack buffer (rows padded to 64 bytes with 128, i.e.
 * q = 0), W loads past K are masked to zero. */

typedef uint8_t qx_t; /* q + 128 */
#define QALIGN 64

AI float quant_row(int K, int Kp, const float *x, uint8_t *xu) {
    __m512 mx = _mm512_setzero_ps();
    const __m512 absm = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
    int k = 0;
    for (; k + 16 <= K; k += 16)
        mx = _mm512_max_ps(mx, _mm512_and_ps(_mm512_loadu_ps(x + k), absm));
    if (k < K)
        mx = _mm512_max_ps(mx, _mm512_and_ps(_mm512_maskz_loadu_ps(tail_mask(K - k), x + k), absm));
    float amax = _mm512_reduce_max_ps(mx);
    if (!(amax > 0.f)) {
        for (int i = 0; i < Kp; i++)
            xu[i] = 128;
        return 0.f;
    }
    const __m512 id = _mm512_set1_ps(127.f / amax);
    const __m512i lo = _mm512_set1_epi32(-127), hi = _mm512_set1_epi32(127),
                  off = _mm512_set1_epi32(128);
    for (k = 0; k < Kp; k += 16) {
        __mmask16 mk = k + 16 <= K ? (__mmask16)0xffff : k < K ? tail_mask(K - k) : 0;
        __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(mk, x + k), id);
        __m512i q = _mm512_cvtps_epi32(v); /* MXCSR rounding: nearest even */
        q = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(q, lo), hi), off);
        _mm_storeu_si128((__m128i *)(xu + k), _mm512_cvtepi32_epi8(q));
    }
    return amax / 127.f;
}

/* Rows m..m+nr-1 of W (nr 1 or 4) against nb rows of quantised X (stride Kp). */
AI void qtile(int nr, int pf, int nb, int K, int Kp, const uint8_t *xu, const float *d,
              const int8_t *W, int m, const float *scale, const float *b, float *Y, int ldy) {
    const __m512i ones = _mm512_set1_epi8(1);
    __m512i a[4][NB], s[4];
    for (int r = 0; r < nr; r++) {
        s[r] = _mm512_setzero_si512();
        for (int n = 0; n < nb; n++)
            a[r][n] = _mm512_setzero_si512();
    }
    const int8_t *w0 = W + (size_t)m * (size_t)K;
    int k = 0;
    for (; k + 64 <= K; k += 64) { /* unmasked loads: masked byte loads are slow on Zen */
        __m512i x[NB];
        for (int n = 0; n < nb; n++)
            x[n] = _mm512_loadu_si512(xu + (size_t)n * Kp + k);
        for (int r = 0; r < nr; r++) {
            if (pf) pf_ahead(w0 + (size_t)r * K + k, pf); /* a line a load */
            __m512i w = _mm512_loadu_si512(w0 + (size_t)r * K + k);
            s[r] = _mm512_dpbusd_epi32(s[r], ones, w);
            for (int n = 0; n < nb; n++)
                a[r][n] = _mm512_dpbusd_epi32(a[r][n], x[n], w);
        }
    }
    if (k < K) {
        __mmask64 mk = ((__mmask64)1 << (K - k)) - 1;
        __m512i x[NB];
        for (int n = 0; n < nb; n++)
            x[n] = _mm512_loadu_si512(xu + (size_t)n * Kp + k);
        for (int r = 0; r < nr; r++) {
            __m512i w = _mm512_maskz_loadu_epi8(mk, w0 + (size_t)r * K + k);
            s[r] = _mm512_dpbusd_epi32(s[r], ones, w);
            for (int n = 0; n < nb; n++)
                a[r][n] = _mm512_dpbusd_epi32(a[r][n], x[n], w);
        }
    }
    for (int r = 0; r < nr; r++) {
        __m512i c = _mm512_slli_epi32(s[r], 7);
        const float bm = b ? b[m + r] : 0.f;
        for (int n = 0; n < nb; n++) {
            int32_t v = _mm512_reduce_add_epi32(_mm512_sub_epi32(a[r][n], c));
            float y = (float)v * d[n];
            y = y * scale[m + r];
            Y[(size_t)n * ldy + m + r] = y + bm;
        }
    }
}

/* ---- panel gemm (outer products) ---------------------------------------------------------
 * W^T packed in panels of 32 outputs ([K][32] contiguous per panel). A tile is R rows of X x
 * one panel: 2R accumulators, per k two W vectors and R broadcasts of X[r][k] for 2R FMAs. Each
 * output is one f32 FMA chain in k order (no horizontal sums), so short K (the codec's
 * 32..768) costs nothing extra; the panel (K*128 bytes) stays in L1/L2 across the row tiles. */
#define PR 8 /* rows per tile */

typedef struct {
    __m512 b0, b1;      /* bias of outputs 0..15, 16..31 (0 without bias or past M) */
    __mmask16 mk0, mk1; /* outputs of the panel below M */
} panel_out;

AI panel_out panel_setup(const float *b, int m, int left) {
    panel_out o;
    o.mk0 = left >= 16 ? (__mmask16)0xffff : tail_mask(left);
    o.mk1 = left >= 32 ? (__mmask16)0xffff : left > 16 ? tail_mask(left - 16) : 0;
    o.b0 = b ? _mm512_maskz_loadu_ps(o.mk0, b + m) : _mm512_setzero_ps();
    o.b1 = b ? _mm512_maskz_loadu_ps(o.mk1, b + m + 16) : _mm512_setzero_ps();
    return o;
}

/* The panel's two lines of step k, pf bytes on (gemm_loop.h, "panels"); pf 0: none. */
AI void panel_pf(const void *w, int pf) {
    if (pf) {
        _mm_prefetch((const char *)((uintptr_t)w + (uintptr_t)pf), _MM_HINT_T0);
        _mm_prefetch((const char *)((uintptr_t)w + (uintptr_t)pf + 64), _MM_HINT_T0);
    }
}

AI void ptile(int nr, int K, const float *X, int ldx, const float *Wp, const panel_out *o, float *Y,
              int ldy, int pf) {
    __m512 a0[PR], a1[PR];
    for (int r = 0; r < nr; r++)
        a0[r] = a1[r] = _mm512_setzero_ps();
    for (int k = 0; k < K; k++) {
        panel_pf(Wp + (size_t)k * 32, pf);
        __m512 w0 = _mm512_loadu_ps(Wp + (size_t)k * 32);
        __m512 w1 = _mm512_loadu_ps(Wp + (size_t)k * 32 + 16);
        for (int r = 0; r < nr; r++) {
            __m512 x = _mm512_set1_ps(X[(size_t)r * ldx + k]);
            a0[r] = _mm512_fmadd_ps(w0, x, a0[r]);
            a1[r] = _mm512_fmadd_ps(w1, x, a1[r]);
        }
    }
    for (int r = 0; r < nr; r++) {
        _mm512_mask_storeu_ps(Y + (size_t)r * ldy, o->mk0, _mm512_add_ps(a0[r], o->b0));
        _mm512_mask_storeu_ps(Y + (size_t)r * ldy + 16, o->mk1, _mm512_add_ps(a1[r], o->b1));
    }
}

/* ---- bf16 panel gemm (vdpbf16ps) ---------------------------------------------------------
 * The same outer-product tile as above on bf16 operands: the panel row of a k pair is 64 bf16
 * (32 outputs x (k, k+1)), two 512-bit loads; X[r][k], X[r][k+1] as one 32-bit broadcast;
 * vdpbf16ps does 2 MACs per f32 lane, so a k pair costs 2R instructions where the f32 tile
 * spends 4R FMAs. The rows of X are first rounded to bf16 (vcvtne2ps2bf16, 32 values per
 * instruction) into a stack buffer, a chunk of rows at a time, and reused by every panel; the
 * panel (K*64 bytes) is then re-read from L1/L2 by the chunk's row tiles. Each output is one
 * vdpbf16ps chain in pair order, which is the reference's arithmetic (identical bits). */

/* rows x K floats (stride ldx) -> bf16 rows of Kp = K rounded up to even (zero-padded). */
static void xrows_bf16(int rows, int K, int Kp, const float *X, int ldx, uint16_t *xb) {
    for (int r = 0; r < rows; r++) {
        const float *x = X + (size_t)r * ldx;
        uint16_t *d = xb + (size_t)r * Kp;
        int k = 0;
        for (; k + 32 <= K; k += 32) {
            __m512bh h = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + k + 16), _mm512_loadu_ps(x + k));
            _mm512_storeu_si512((void *)(d + k), (__m512i)h);
        }
        if (k < Kp) {
            int left = K - k;
            __mmask16 m0 = left >= 16 ? (__mmask16)0xffff : tail_mask(left);
            __mmask16 m1 = left > 16 ? tail_mask(left - 16) : 0;
            __m512bh h = _mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(m1, x + k + 16),
                                             _mm512_maskz_loadu_ps(m0, x + k));
            __mmask32 ms = (__mmask32)((1ull << (Kp - k)) - 1u);
            _mm512_mask_storeu_epi16(d + k, ms, (__m512i)h);
        }
    }
}

#define BPR 8 /* rows per bf16 tile */

AI void btile(int nr, int K2, const uint16_t *xb, int Kp, const uint16_t *Wp, const panel_out *o,
              float *Y, int ldy, int pf) {
    __m512 a0[BPR], a1[BPR];
    for (int r = 0; r < nr; r++)
        a0[r] = a1[r] = _mm512_setzero_ps();
    for (int k2 = 0; k2 < K2; k2++) {
        panel_pf(Wp + (size_t)k2 * 64, pf);
        __m512bh w0 = (__m512bh)_mm512_loadu_si512((const void *)(Wp + (size_t)k2 * 64));
        __m512bh w1 = (__m512bh)_mm512_loadu_si512((const void *)(Wp + (size_t)k2 * 64 + 32));
        for (int r = 0; r < nr; r++) {
            int32_t pair;
            memcpy(&pair, xb + (size_t)r * Kp + 2 * (size_t)k2, sizeof pair);
            __m512bh x = (__m512bh)_mm512_set1_epi32(pair);
            a0[r] = _mm512_dpbf16_ps(a0[r], w0, x);
            a1[r] = _mm512_dpbf16_ps(a1[r], w1, x);
        }
    }
    for (int r = 0; r < nr; r++) {
        _mm512_mask_storeu_ps(Y + (size_t)r * ldy, o->mk0, _mm512_add_ps(a0[r], o->b0));
        _mm512_mask_storeu_ps(Y + (size_t)r * ldy + 16, o->mk1, _mm512_add_ps(a1[r], o->b1));
    }
}

#include "gemm_loop.h"

/* The steps of _mm512_reduce_add_ps's tree (lane i + lane i+8, then i + i+4, i + i+2, i + i+1)
 * applied to several rows' vectors at once: the same additions per row, fewer shuffles a row.
 * fold8(a, b): lanes 0-7 a's i + i+8, lanes 8-15 b's. */
AI __m512 fold8(__m512 a, __m512 b) {
    return _mm512_add_ps(_mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(3, 2, 3, 2)));
}
/* a, b: two rows' 8 sums in each 256-bit half -> quad k: row k's 4 (i + i+4) */
AI __m512 fold4(__m512 a, __m512 b) {
    return _mm512_add_ps(_mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
}
/* within each quad: a's row (i + i+2) in elements 0-1, b's in 2-3 */
AI __m512 fold2(__m512 a, __m512 b) {
    return _mm512_add_ps(_mm512_shuffle_ps(a, b, _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm512_shuffle_ps(a, b, _MM_SHUFFLE(3, 2, 3, 2)));
}
/* within each quad: a's pairs summed in elements 0-1, b's in 2-3 */
AI __m512 fold1(__m512 a, __m512 b) {
    return _mm512_add_ps(_mm512_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
}

/* A row of a float32 (h = 0) or float16 (h = 1) matrix with rows ldk elements apart. */
AI const void *kv_row(const void *p, int h, size_t off) {
    return h ? (const void *)((const uint16_t *)p + off) : (const void *)((const float *)p + off);
}

/* dot_isa's four partial sums of one 64-wide row, added as dot_isa adds them */
AI __m512 dot64_partial(__m512 q0, __m512 q1, __m512 q2, __m512 q3, const void *b, int h) {
    const __m512 z = _mm512_setzero_ps();
    __m512 s0 = _mm512_fmadd_ps(q0, vload_kv(b, h, 0), z);
    __m512 s1 = _mm512_fmadd_ps(q1, vload_kv(b, h, 16), z);
    __m512 s2 = _mm512_fmadd_ps(q2, vload_kv(b, h, 32), z);
    __m512 s3 = _mm512_fmadd_ps(q3, vload_kv(b, h, 48), z);
    return _mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3));
}

/* 16 consecutive rows' dots with q (q0..q3: its four 16-float parts), times the scale, to out:
 * fold8 .. fold1 leave row 4m + k in element 4k + m, put back in order by one permute (the
 * scale is the same float product as dot * scale) */
AI void dot16(__m512 q0, __m512 q1, __m512 q2, __m512 q3, const void *b, int h, int ldk, __m512 sc,
              float *out) {
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    __m512 w[8];
    for (int j = 0; j < 8; j++)
        w[j] = fold8(dot64_partial(q0, q1, q2, q3, kv_row(b, h, (size_t)(2 * j) * ldk), h),
                     dot64_partial(q0, q1, q2, q3, kv_row(b, h, (size_t)(2 * j + 1) * ldk), h));
    const __m512 x0 = fold4(w[0], w[1]), x1 = fold4(w[2], w[3]), x2 = fold4(w[4], w[5]),
                 x3 = fold4(w[6], w[7]);
    const __m512 z = fold1(fold2(x0, x1), fold2(x2, x3));
    _mm512_storeu_ps(out, _mm512_mul_ps(_mm512_permutexvar_ps(order, z), sc));
}

/* dot_isa over consecutive 64-wide rows with q loaded once: the same loads, FMAs and final sums
 * in the same order per row as dot_isa (identical results), without a call per row; sixteen
 * rows at a time share the horizontal sums (dot16). */
AI void dot_rows64(const float *q, const void *K, int h, int ldk, int rows, float scale,
                   float *out) {
    const __m512 q0 = _mm512_loadu_ps(q), q1 = _mm512_loadu_ps(q + 16),
                 q2 = _mm512_loadu_ps(q + 32), q3 = _mm512_loadu_ps(q + 48);
    const __m512 sc = _mm512_set1_ps(scale);
    int r = 0;
    for (; r + 16 <= rows; r += 16)
        dot16(q0, q1, q2, q3, kv_row(K, h, (size_t)r * ldk), h, ldk, sc, out + r);
    for (; r < rows; r++)
        out[r] =
            _mm512_reduce_add_ps(dot64_partial(q0, q1, q2, q3, kv_row(K, h, (size_t)r * ldk), h)) *
            scale;
}

static void dot_rows_avx512(const float *q, const float *K, int ldk, int rows, int n, float scale,
                            float *out) {
    if (n != 64) /* the head width of every shipped model; others take the plain loop */
        dot_rows_isa(q, K, ldk, rows, n, scale, out);
    else
        dot_rows64(q, K, 0, ldk, rows, scale, out);
}

/* dot_rows64 for nq queries over the same rows: each block of 16 rows for every query while it
 * is in L1 (a 64-wide head's 16 keys are 4 KiB, 2 KiB in float16), so the keys come from
 * further away once, not nq times. */
AI void dot_rows_q64(const float *const *q, int nq, const void *K, int h, int ldk, int rows,
                     float scale, float *const *out) {
    const __m512 sc = _mm512_set1_ps(scale);
    const int blocks = rows / 16;
    for (int bk = 0; bk < blocks; bk++)
        for (int i = 0; i < nq; i++)
            dot16(_mm512_loadu_ps(q[i]), _mm512_loadu_ps(q[i] + 16), _mm512_loadu_ps(q[i] + 32),
                  _mm512_loadu_ps(q[i] + 48), kv_row(K, h, (size_t)bk * 16 * ldk), h, ldk, sc,
                  out[i] + bk * 16);
    for (int i = 0; i < nq; i++)
        dot_rows64(q[i], kv_row(K, h, (size_t)blocks * 16 * ldk), h, ldk, rows - blocks * 16, scale,
                   out[i] + blocks * 16);
}

static void dot_rows_q_avx512(const float *const *q, int nq, const float *K, int ldk, int rows,
                              int n, float scale, float *const *out) {
    if (n != 64)
        for (int i = 0; i < nq; i++)
            dot_rows_isa(q[i], K, ldk, rows, n, scale, out[i]);
    else
        dot_rows_q64(q, nq, K, 0, ldk, rows, scale, out);
}

static void dot_rows_q_h_avx512(const float *const *q, int nq, const uint16_t *K, int ldk, int rows,
                                int n, float scale, float *const *out) {
    if (n != 64)
        dot_rows_q_h_isa(q, nq, K, ldk, rows, n, scale, out);
    else
        dot_rows_q64(q, nq, K, 1, ldk, rows, scale, out);
}

/* axpy_isa over rows with y held in registers: per element y = fma(p[r], x, y) for r in
 * order, exactly as `rows` axpy_isa calls. */
static void axpy_rows_avx512(float *y, const float *p, const float *V, int ldv, int rows, int n) {
    if (n != 64) {
        axpy_rows_isa(y, p, V, ldv, rows, n);
        return;
    }
    __m512 y0 = _mm512_loadu_ps(y), y1 = _mm512_loadu_ps(y + 16), y2 = _mm512_loadu_ps(y + 32),
           y3 = _mm512_loadu_ps(y + 48);
    for (int r = 0; r < rows; r++) {
        const float *x = V + (size_t)r * ldv;
        const __m512 a = _mm512_set1_ps(p[r]);
        y0 = _mm512_fmadd_ps(a, _mm512_loadu_ps(x), y0);
        y1 = _mm512_fmadd_ps(a, _mm512_loadu_ps(x + 16), y1);
        y2 = _mm512_fmadd_ps(a, _mm512_loadu_ps(x + 32), y2);
        y3 = _mm512_fmadd_ps(a, _mm512_loadu_ps(x + 48), y3);
    }
    _mm512_storeu_ps(y, y0);
    _mm512_storeu_ps(y + 16, y1);
    _mm512_storeu_ps(y + 32, y2);
    _mm512_storeu_ps(y + 48, y3);
}

/* axpy_rows_avx512 for nq (y, p) over the same 64-wide rows of float32 (h = 0) or float16 (h =
 * 1): each y exactly as its own call, the values loaded once for all (4 nq independent FMA
 * chains: one y's four wait on the FMA latency) */
AI void axpy_q64(float *const *y, const float *const *p, const int nq, const void *V, int h,
                 int ldv, int rows) {
    __m512 a[PTTS_ROWS_Q][4];
    for (int i = 0; i < nq; i++)
        for (int c = 0; c < 4; c++)
            a[i][c] = _mm512_loadu_ps(y[i] + 16 * c);
    for (int r = 0; r < rows; r++) {
        const void *x = kv_row(V, h, (size_t)r * ldv);
        const __m512 x0 = vload_kv(x, h, 0), x1 = vload_kv(x, h, 16), x2 = vload_kv(x, h, 32),
                     x3 = vload_kv(x, h, 48);
        for (int i = 0; i < nq; i++) {
            const __m512 pi = _mm512_set1_ps(p[i][r]);
            a[i][0] = _mm512_fmadd_ps(pi, x0, a[i][0]);
            a[i][1] = _mm512_fmadd_ps(pi, x1, a[i][1]);
            a[i][2] = _mm512_fmadd_ps(pi, x2, a[i][2]);
            a[i][3] = _mm512_fmadd_ps(pi, x3, a[i][3]);
        }
    }
    for (int i = 0; i < nq; i++)
        for (int c = 0; c < 4; c++)
            _mm512_storeu_ps(y[i] + 16 * c, a[i][c]);
}

/* a constant nq each: the accumulators stay in registers */
AI void axpy_q64_n(float *const *y, const float *const *p, int nq, const void *V, int h, int ldv,
                   int rows) {
    switch (nq) {
    case 1: axpy_q64(y, p, 1, V, h, ldv, rows); break;
    case 2: axpy_q64(y, p, 2, V, h, ldv, rows); break;
    case 3: axpy_q64(y, p, 3, V, h, ldv, rows); break;
    default: axpy_q64(y, p, 4, V, h, ldv, rows); break;
    }
}

static void axpy_rows_q_avx512(float *const *y, const float *const *p, int nq, const float *V,
                               int ldv, int rows, int n) {
    if (n != 64)
        for (int i = 0; i < nq; i++)
            axpy_rows_isa(y[i], p[i], V, ldv, rows, n);
    else
        axpy_q64_n(y, p, nq, V, 0, ldv, rows);
}

static void axpy_rows_q_h_avx512(float *const *y, const float *const *p, int nq, const uint16_t *V,
                                 int ldv, int rows, int n) {
    if (n != 64)
        axpy_rows_q_h_isa(y, p, nq, V, ldv, rows, n);
    else
        axpy_q64_n(y, p, nq, V, 1, ldv, rows);
}

static const ptts_kernels k_avx512 =
    PTTS_ISA_TABLE("avx512", dot_rows_avx512, axpy_rows_avx512, dot_rows_q_avx512,
                   axpy_rows_q_avx512, dot_rows_q_h_avx512, axpy_rows_q_h_avx512);

const ptts_kernels *ptts_kernels_avx512(void);
const ptts_kernels *ptts_kernels_avx512(void) { return &k_avx512; }
