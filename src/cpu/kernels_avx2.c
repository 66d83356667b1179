/*
 * kernels_avx2.c - the AVX2 + FMA + F16C kernel table (see kernels.h for the contract and
 * kernels_ref.c for the specification): the register-level code; the loops are shared with the
 * other tables (vec_loop.h, gemm_loop.h). 8-lane vectors, 16 registers:
 *   - gemm register tile: 4 rows of W x NB = 3 rows of X (12 accumulators). Weights are widened
 *     exactly (bf16 by a 16-bit shift, int8 through int32), f32 accumulation, so results differ
 *     from the reference only by the order of additions.
 *   - K tails: X through vmaskmovps (no reads past the row), the W tail through a zero-padded
 *     8-element copy (AVX2 has no masked 8/16-bit loads).
 *   - gemm_q8q and gemm_bf16_panel compute the reference's bits with the instructions AVX2 has
 *     (see their sections).
 * Elementwise kernels: vec_loop.h's on 8 lanes, with the power of two of exp built in the
 * exponent field in two halves (no vscalefps), so that subnormal results are rounded once and
 * kept.
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
#define NB 3 /* X rows per register tile */

/* maskload/maskstore mask of the first r (0..8) lanes */
static const int32_t mask_tab[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
AI __m256i tail_mask(int r) { return _mm256_loadu_si256((const __m256i *)(mask_tab + 8 - r)); }

AI __m256 ldw(int wt, const void *w, size_t off) {
    if (wt == WT_F32) return _mm256_loadu_ps((const float *)w + off);
    if (wt == WT_BF16) {
        __m128i h = _mm_loadu_si128((const __m128i *)((const uint16_t *)w + off));
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
    __m128i q = _mm_loadl_epi64((const __m128i *)((const int8_t *)w + off));
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q));
}

/* The last r (1..7) weights of a row, zero padded. */
AI __m256 ldw_n(int wt, const void *w, size_t off, int r) {
    if (wt == WT_F32) return _mm256_maskload_ps((const float *)w + off, tail_mask(r));
    if (wt == WT_BF16) {
        uint16_t t[8] = {0};
        memcpy(t, (const uint16_t *)w + off, (size_t)r * sizeof t[0]);
        return ldw(wt, t, 0);
    }
    int8_t t[16] = {0};
    memcpy(t, (const int8_t *)w + off, (size_t)r);
    return ldw(wt, t, 0);
}

AI __m128 vhsum4(__m256 a, __m256 b, __m256 c, __m256 d) {
    __m256 s = _mm256_hadd_ps(_mm256_hadd_ps(a, b), _mm256_hadd_ps(c, d));
    return _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
}

AI float vhsum(__m256 a) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

AI float vhmax(__m256 a) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* ---- the vector primitives of vec_loop.h ------------------------------------------------- */
typedef __m256 vf;
#define VL 8

AI vf vzero(void) { return _mm256_setzero_ps(); }
AI vf vset1(float f) { return _mm256_set1_ps(f); }
AI vf vload(const float *p) { return _mm256_loadu_ps(p); }
AI void vstore(float *p, vf v) { _mm256_storeu_ps(p, v); }
AI vf vload_n(const float *p, int r) { return _mm256_maskload_ps(p, tail_mask(r)); }
AI void vstore_n(float *p, vf v, int r) { _mm256_maskstore_ps(p, tail_mask(r), v); }
AI vf vload_h(const uint16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }
AI void vstore_h(uint16_t *p, vf v) {
    _mm_storeu_si128((__m128i *)p,
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
/* no 16-bit masked load: the tail through an 8-half copy */
AI vf vload_h_n(const uint16_t *p, int r) {
    uint16_t t[8] = {0};
    memcpy(t, p, (size_t)r * sizeof(uint16_t));
    return vload_h(t);
}
AI vf vkeep_n(vf v, int r) { return _mm256_and_ps(v, _mm256_castsi256_ps(tail_mask(r))); }
AI vf vfill_n(vf v, int r, float f) {
    return _mm256_blendv_ps(_mm256_set1_ps(f), v, _mm256_castsi256_ps(tail_mask(r)));
}
AI vf vadd(vf a, vf b) { return _mm256_add_ps(a, b); }
AI vf vsub(vf a, vf b) { return _mm256_sub_ps(a, b); }
AI vf vmul(vf a, vf b) { return _mm256_mul_ps(a, b); }
AI vf vdiv(vf a, vf b) { return _mm256_div_ps(a, b); }
AI vf vmax(vf a, vf b) { return _mm256_max_ps(a, b); }
AI vf vmin(vf a, vf b) { return _mm256_min_ps(a, b); }
AI vf vfma(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
AI vf vfnma(vf a, vf b, vf c) { return _mm256_fnmadd_ps(a, b, c); }
AI vf vround(vf x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }

/* 2^n for integral n in [-126, 127], built in the exponent field */
AI __m256 pow2i(__m256i n) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23));
}

AI vf vpow2n(vf n) { return pow2i(_mm256_cvtps_epi32(n)); }

/* p 2^n for n in [-150, 128] (no vscalefps): by 2^(n/2) twice, so both factors are normal and
 * a subnormal result is rounded once. */
AI vf vscale2n(vf p, vf n) {
    __m256i ni = _mm256_cvtps_epi32(n);
    __m256i n1 = _mm256_srai_epi32(ni, 1);
    __m256i n2 = _mm256_sub_epi32(ni, n1);
    return _mm256_mul_ps(_mm256_mul_ps(p, pow2i(n1)), pow2i(n2));
}

AI vf vsel_pos_nan(vf x, vf neg) {
    __m256 keep = _mm256_or_ps(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GT_OQ),
                               _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    return _mm256_blendv_ps(neg, x, keep);
}

/* no ISA-specific prefix of the 4-row tile */
AI int tile4_head(int wt, int pf, int nb, int K, const float *X, int ldx, const void *W, size_t row,
                  vf acc[4][NB]) {
    (void)wt, (void)pf, (void)nb, (void)K, (void)X, (void)ldx, (void)W, (void)row, (void)acc;
    return 0;
}

/* The line pf bytes past p of a streamed matrix fetched ahead into L2 (gemm_loop.h, "streamed
 * matrices"). */
AI void pf_ahead(const void *p, int pf) { _mm_prefetch((const char *)p + pf, _MM_HINT_T1); }

#include "vec_loop.h"
#include "vec_tile.h"

/* ---- q8q: X quantised to int8 per row, integer dot products -----------------------------
 * AVX2 has no 8-bit dot product that is exact for s8 x s8 (vpmaddubsw is u8 x s8 and
 * saturates), so both operands are widened to int16 and vpmaddwd sums pairs of products into
 * int32 lanes (|q w| <= 127 * 128, exact): per 16 weights one widening of W shared by the NB
 * rows of X, then one widening, vpmaddwd and vpaddd per row. Integer sums are exact and the
 * quantisation is the reference's float arithmetic (vcvtps2dq rounds to nearest even like
 * nearbyintf), so results equal the reference bit for bit. Rows of X are padded with q = 0 to
 * a multiple of 16; the W tail goes through a zero-padded 16-byte copy. */
typedef int8_t qx_t;
#define QALIGN 16

AI float quant_row(int K, int Kp, const float *x, int8_t *xq) {
    const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256 mx = _mm256_setzero_ps();
    int k = 0;
    for (; k + 8 <= K; k += 8)
        mx = _mm256_max_ps(mx, _mm256_and_ps(_mm256_loadu_ps(x + k), absm));
    if (k < K)
        mx = _mm256_max_ps(mx, _mm256_and_ps(_mm256_maskload_ps(x + k, tail_mask(K - k)), absm));
    const float amax = vhmax(mx);
    if (!(amax > 0.f)) {
        memset(xq, 0, (size_t)Kp);
        return 0.f;
    }
    const __m256 id = _mm256_set1_ps(127.f / amax);
    const __m256i lo = _mm256_set1_epi32(-127), hi = _mm256_set1_epi32(127);
    for (k = 0; k < Kp; k += 8) {
        __m256i mk = tail_mask(k + 8 <= K ? 8 : k < K ? K - k : 0);
        __m256 v = _mm256_mul_ps(_mm256_maskload_ps(x + k, mk), id);
        __m256i q = _mm256_cvtps_epi32(v); /* MXCSR rounding: nearest even */
        q = _mm256_min_epi32(_mm256_max_epi32(q, lo), hi);
        __m128i h = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
        _mm_storel_epi64((__m128i *)(xq + k), _mm_packs_epi16(h, h));
    }
    return amax / 127.f;
}

AI int32_t hsum_epi32(__m256i a) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
}

/* Rows m..m+nr-1 of W (nr 1 or 4) against nb rows of quantised X (stride Kp). */
AI void qtile(int nr, int pf, int nb, int K, int Kp, const int8_t *xq, const float *d,
              const int8_t *W, int m, const float *scale, const float *b, float *Y, int ldy) {
    __m256i a[4][NB];
    for (int r = 0; r < nr; r++)
        for (int n = 0; n < nb; n++)
            a[r][n] = _mm256_setzero_si256();
    const int8_t *w0 = W + (size_t)m * (size_t)K;
    for (int k = 0; k < K; k += 16) {
        __m256i x[NB];
        for (int n = 0; n < nb; n++)
            x[n] =
                _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(xq + (size_t)n * Kp + k)));
        for (int r = 0; r < nr; r++) {
            const int8_t *wr = w0 + (size_t)r * K + k;
            if (pf && (k & 63) == 0) pf_ahead(wr, pf); /* one prefetch a line */
            __m128i w8;
            if (k + 16 <= K) {
                w8 = _mm_loadu_si128((const __m128i *)wr);
            } else {
                int8_t t[16] = {0};
                memcpy(t, wr, (size_t)(K - k));
                w8 = _mm_loadu_si128((const __m128i *)t);
            }
            __m256i w = _mm256_cvtepi8_epi16(w8);
            for (int n = 0; n < nb; n++)
                a[r][n] = _mm256_add_epi32(a[r][n], _mm256_madd_epi16(w, x[n]));
        }
    }
    for (int r = 0; r < nr; r++) {
        const float bm = b ? b[m + r] : 0.f;
        for (int n = 0; n < nb; n++) {
            float y = (float)hsum_epi32(a[r][n]) * d[n];
            y = y * scale[m + r];
            Y[(size_t)n * ldy + m + r] = y + bm;
        }
    }
}

/* ---- panels (outer products) --------------------------------------------------------------
 * A tile is PR rows of X x one panel of 32 outputs (4 vectors): per k four W vectors and PR
 * broadcasts of X[r][k] for 4 PR FMAs; each output is one f32 FMA chain in k order. */
#define PR 3 /* rows per tile: 12 accumulators */

typedef struct {
    __m256 b[4];   /* bias of outputs 8j..8j+7 (0 without bias or past M) */
    __m256i mk[4]; /* store masks of the outputs below M */
    int full;      /* all 32 outputs below M: plain stores */
} panel_out;

AI panel_out panel_setup(const float *b, int m, int left) {
    panel_out o;
    o.full = left >= 32;
    for (int j = 0; j < 4; j++) {
        int l = left - 8 * j;
        o.mk[j] = tail_mask(l >= 8 ? 8 : l > 0 ? l : 0);
        o.b[j] = b ? _mm256_maskload_ps(b + m + 8 * j, o.mk[j]) : _mm256_setzero_ps();
    }
    return o;
}

AI void panel_store(const panel_out *o, __m256 a[4], float *y) {
    for (int j = 0; j < 4; j++) {
        __m256 v = _mm256_add_ps(a[j], o->b[j]);
        if (o->full)
            _mm256_storeu_ps(y + 8 * j, v);
        else
            _mm256_maskstore_ps(y + 8 * j, o->mk[j], v);
    }
}

AI void ptile(int nr, int K, const float *X, int ldx, const float *Wp, const panel_out *o, float *Y,
              int ldy, int pf) {
    (void)pf; /* no prefetch: it lost with these tiles (bench/RESULTS.md, "Panels prefetched") */
    __m256 a[PR][4];
    for (int r = 0; r < nr; r++)
        for (int j = 0; j < 4; j++)
            a[r][j] = _mm256_setzero_ps();
    for (int k = 0; k < K; k++) {
        const float *w = Wp + (size_t)k * 32;
        for (int r = 0; r < nr; r++) {
            __m256 x = _mm256_broadcast_ss(X + (size_t)r * ldx + k);
            for (int j = 0; j < 4; j++)
                a[r][j] = _mm256_fmadd_ps(_mm256_loadu_ps(w + 8 * j), x, a[r][j]);
        }
    }
    for (int r = 0; r < nr; r++)
        panel_store(o, a[r], Y + (size_t)r * ldy);
}

/* ---- bf16 panels: the vdpbf16ps arithmetic with f32 FMAs ---------------------------------
 * A 256-bit load of the panel holds 8 outputs x one k pair (32-bit lane j: the even-k weight
 * in its low half, the odd-k weight in its high half), so (v << 16) and (v & 0xffff0000) are
 * the even and odd weights as f32, exactly; X is rounded to bf16 (ptts_bf16_round) into a
 * stack buffer and a pair broadcast the same way. The bf16 product is exact in f32, so an FMA
 * is the one rounding of each step; the packing and the rounding of X already read subnormal
 * operands as 0, which leaves the flush of step results below 2^-126.
 * That flush costs four operations per FMA, so a tile first runs without it, with the MXCSR
 * exception flags cleared: a step result below 2^-126 either was inexact (underflow flag) or
 * is an exact subnormal that the next FMA or the bias add reads (denormal-operand flag). If
 * neither flag is raised no flush would have changed anything and the bits are the
 * reference's; otherwise (in practice never: it needs a sum within 2^-126 of 0) the tile is
 * computed again with the explicit flush. The flags are read and written by asm with a memory
 * clobber, and the tile's loads and stores lie between them, so no arithmetic of the tile can
 * move outside. The caller's flags are kept (or-ed back). */
#define BPR                                                                                        \
    2 /* rows per bf16 tile: 8 accumulators, the 4 X and 2 W vectors of a pair, no spills          \
       */

AI __m256 ftz8(__m256 v) {
    const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256 tiny = _mm256_cmp_ps(_mm256_and_ps(v, absm), _mm256_set1_ps(0x1p-126f), _CMP_LT_OQ);
    return _mm256_andnot_ps(_mm256_and_ps(tiny, absm), v); /* tiny: the sign only */
}

static inline unsigned csr_read(void) {
    unsigned c;
    __asm__ volatile("vstmxcsr %0" : "=m"(c) : : "memory");
    return c;
}

static inline void csr_write(unsigned c) { __asm__ volatile("vldmxcsr %0" : : "m"(c) : "memory"); }

#define CSR_FLAGS 0x3fu /* IE DE ZE OE UE PE */
#define CSR_DE 0x02u
#define CSR_UE 0x10u

/* ptts_bf16_round of 8 values: nearest even, NaN quiet, an exponent field of 0 (0 or
 * subnormal) the sign only. */
AI __m128i bf16_round8(__m256 x) {
    const __m256i u = _mm256_castps_si256(x), top = _mm256_srli_epi32(u, 16);
    const __m256i one = _mm256_set1_epi32(1);
    __m256i r = _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)),
                                 _mm256_and_si256(top, one));
    r = _mm256_srli_epi32(r, 16);
    __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)),
                                     _mm256_set1_epi32(0x7f800000));
    r = _mm256_blendv_epi8(r, _mm256_or_si256(top, _mm256_set1_epi32(0x40)), nan);
    __m256i tiny = _mm256_cmpeq_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7f800000)),
                                      _mm256_setzero_si256());
    r = _mm256_blendv_epi8(r, _mm256_and_si256(top, _mm256_set1_epi32(0x8000)), tiny);
    /* 32 -> 16 bits: packus interleaves the 128-bit halves, the permute puts them in order */
    __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
    return _mm256_castsi256_si128(p);
}

static void xrows_bf16(int rows, int K, int Kp, const float *X, int ldx, uint16_t *xb) {
    for (int r = 0; r < rows; r++) {
        const float *x = X + (size_t)r * ldx;
        uint16_t *d = xb + (size_t)r * Kp;
        int k = 0;
        for (; k + 8 <= K; k += 8)
            _mm_storeu_si128((__m128i *)(d + k), bf16_round8(_mm256_loadu_ps(x + k)));
        for (; k < K; k++)
            d[k] = ptts_bf16_round(x[k]);
        if (K < Kp) d[K] = 0;
    }
}

/* flush: a constant after inlining (0: plain FMAs, 1: every step flushed) */
AI void btile_run(int flush, int nr, int K2, const uint16_t *xb, int Kp, const uint16_t *Wp,
                  const panel_out *o, float *Y, int ldy) {
    const __m256i hi = _mm256_set1_epi32((int)0xffff0000u);
    __m256 a[BPR][4];
    for (int r = 0; r < nr; r++)
        for (int j = 0; j < 4; j++)
            a[r][j] = _mm256_setzero_ps();
    for (int k2 = 0; k2 < K2; k2++) {
        __m256 xe[BPR], xo[BPR];
        for (int r = 0; r < nr; r++) {
            int32_t pair;
            memcpy(&pair, xb + (size_t)r * Kp + 2 * (size_t)k2, sizeof pair);
            __m256i v = _mm256_set1_epi32(pair);
            xe[r] = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
            xo[r] = _mm256_castsi256_ps(_mm256_and_si256(v, hi));
        }
        for (int j = 0; j < 4; j++) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(Wp + (size_t)k2 * 64 + 16 * j));
            __m256 we = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
            __m256 wo = _mm256_castsi256_ps(_mm256_and_si256(v, hi));
            for (int r = 0; r < nr; r++) {
                a[r][j] = _mm256_fmadd_ps(xo[r], wo, a[r][j]);
                if (flush) a[r][j] = ftz8(a[r][j]);
                a[r][j] = _mm256_fmadd_ps(xe[r], we, a[r][j]);
                if (flush) a[r][j] = ftz8(a[r][j]);
            }
        }
    }
    for (int r = 0; r < nr; r++)
        panel_store(o, a[r], Y + (size_t)r * ldy);
}

AI void btile(int nr, int K2, const uint16_t *xb, int Kp, const uint16_t *Wp, const panel_out *o,
              float *Y, int ldy, int pf) {
    (void)pf; /* as ptile */
    const unsigned csr = csr_read();
    csr_write(csr & ~CSR_FLAGS);
    btile_run(0, nr, K2, xb, Kp, Wp, o, Y, ldy);
    const unsigned raised = csr_read() & CSR_FLAGS;
    csr_write(csr | raised);
    if (raised & (CSR_DE | CSR_UE)) btile_run(1, nr, K2, xb, Kp, Wp, o, Y, ldy);
}

#include "gemm_loop.h"

PTTS_ROWS_Q_LOOPS(dot_rows_isa, axpy_rows_isa)

static const ptts_kernels k_avx2 =
    PTTS_ISA_TABLE("avx2", dot_rows_isa, axpy_rows_isa, dot_rows_q_isa, axpy_rows_q_isa,
                   dot_rows_q_h_isa, axpy_rows_q_h_isa);

const ptts_kernels *ptts_kernels_avx2(void);
const ptts_kernels *ptts_kernels_avx2(void) { return &k_avx2; }
