/*
 * kernels_neon.c - the AArch64 Advanced SIMD kernel table (see kernels.h for the contract and
 * kernels_ref.c for the specification). Built on aarch64 only, where Advanced SIMD is part of
 * the base architecture, so cpu.c lists it unconditionally there.
 *
 * gemm (f32 / bf16 / q8 weights, f32 accumulation): the register tile is 4 rows of W x NB = 4
 * rows of X (16 accumulators of 4 lanes, of the 32 vector registers), over K in steps of 8:
 * every W row contributes two 4-lane vectors per step, widened exactly (bf16 by vshll #16,
 * int8 through int16 and int32) and used for NB FMAs. The K tail (K % 8) is summed in scalar
 * code after the vector sums; the loops (m blocks, N tails, X panels) are gemm_loop.h's.
 * Results differ from the reference by the order of f32 additions. gemm_q8q and the panel
 * kernels: see their sections (q8q and bf16 panels give the reference's bits).
 * Elementwise kernels, dot and axpy: vec_loop.h's on 4 lanes (the same exp / expm1 and
 * activations as the x86 tables), tails through a 4-float copy.
 */
#include <arm_neon.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "approx.h"
#include "kernels.h"

#define AI static inline __attribute__((always_inline))

enum { WT_F32, WT_BF16, WT_Q8 };
#define NB 4

/* 8 weights at element offset `off` as two f32 vectors. */
AI void ldw8(int wt, const void *w, size_t off, float32x4_t *lo, float32x4_t *hi) {
    if (wt == WT_F32) {
        const float *p = (const float *)w + off;
        *lo = vld1q_f32(p);
        *hi = vld1q_f32(p + 4);
    } else if (wt == WT_BF16) {
        uint16x8_t h = vld1q_u16((const uint16_t *)w + off);
        *lo = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(h), 16));
        *hi = vreinterpretq_f32_u32(vshll_n_u16(vget_high_u16(h), 16));
    } else {
        int16x8_t q = vmovl_s8(vld1_s8((const int8_t *)w + off));
        *lo = vcvtq_f32_s32(vmovl_s16(vget_low_s16(q)));
        *hi = vcvtq_f32_s32(vmovl_s16(vget_high_s16(q)));
    }
}

AI float wscalar(int wt, const void *w, size_t i) {
    if (wt == WT_F32) return ((const float *)w)[i];
    if (wt == WT_BF16) {
        float32x4_t v =
            vreinterpretq_f32_u32(vshll_n_u16(vdup_n_u16(((const uint16_t *)w)[i]), 16));
        return vgetq_lane_f32(v, 0);
    }
    return (float)((const int8_t *)w)[i];
}

AI void tile(int wt, int mr, int nb, int K, const float *X, int ldx, const void *W, int m,
             const float *scale, const float *b, float *Y, int ldy) {
    float32x4_t acc[4][NB];
    for (int r = 0; r < mr; r++)
        for (int n = 0; n < nb; n++)
            acc[r][n] = vdupq_n_f32(0.f);
    size_t row = (size_t)m * (size_t)K;
    int k = 0;
    for (; k + 8 <= K; k += 8) {
        float32x4_t xl[NB], xh[NB];
        for (int n = 0; n < nb; n++) {
            xl[n] = vld1q_f32(X + (size_t)n * ldx + k);
            xh[n] = vld1q_f32(X + (size_t)n * ldx + k + 4);
        }
        for (int r = 0; r < mr; r++) {
            float32x4_t lo, hi;
            ldw8(wt, W, row + (size_t)r * K + k, &lo, &hi);
            for (int n = 0; n < nb; n++) {
                acc[r][n] = vfmaq_f32(acc[r][n], lo, xl[n]);
                acc[r][n] = vfmaq_f32(acc[r][n], hi, xh[n]);
            }
        }
    }
    for (int r = 0; r < mr; r++)
        for (int n = 0; n < nb; n++) {
            const float *x = X + (size_t)n * ldx;
            float s = vaddvq_f32(acc[r][n]);
            for (int kk = k; kk < K; kk++)
                s += x[kk] * wscalar(wt, W, row + (size_t)r * K + kk);
            if (wt == WT_Q8) s *= scale[m + r];
            if (b) s += b[m + r];
            Y[(size_t)n * ldy + m + r] = s;
        }
}

/* pf (a streamed matrix's prefetch, gemm_loop.h): not done here (not measured on an ARM core). */
AI void tile4(int wt, int pf, int nb, int K, const float *X, int ldx, const void *W, int m,
              const float *scale, const float *b, float *Y, int ldy) {
    (void)pf;
    tile(wt, 4, nb, K, X, ldx, W, m, scale, b, Y, ldy);
}

AI void tile1(int wt, int pf, int nb, int K, const float *X, int ldx, const void *W, int m,
              const float *scale, const float *b, float *Y, int ldy) {
    (void)pf;
    tile(wt, 1, nb, K, X, ldx, W, m, scale, b, Y, ldy);
}

/* ---- q8q: X quantised to int8 per row, integer dot products -----------------------------
 * Base AArch64 has no 8-bit dot product (sdot is the optional dotprod extension), so products
 * are widened by smull / smull2 (s8 x s8 -> s16, exact) and summed pairwise into int32 lanes by
 * sadalp: exact, like the reference's int32 sum. The quantisation is the reference's float
 * arithmetic (fcvtns rounds to nearest even like nearbyintf): results equal the reference bit
 * for bit. Rows of X are padded with q = 0 to a multiple of 16; the W tail goes through a
 * zero-padded 16-byte copy. */
typedef int8_t qx_t;
#define QALIGN 16

AI float quant_row(int K, int Kp, const float *x, int8_t *xq) {
    float32x4_t mx = vdupq_n_f32(0.f);
    int k = 0;
    for (; k + 4 <= K; k += 4)
        mx = vmaxq_f32(mx, vabsq_f32(vld1q_f32(x + k)));
    float amax = vmaxvq_f32(mx);
    for (; k < K; k++)
        amax = fmaxf(amax, fabsf(x[k]));
    if (!(amax > 0.f)) {
        memset(xq, 0, (size_t)Kp);
        return 0.f;
    }
    const float id = 127.f / amax;
    const int32x4_t lo = vdupq_n_s32(-127), hi = vdupq_n_s32(127);
    for (k = 0; k < Kp; k += 4) {
        float t[4] = {0.f, 0.f, 0.f, 0.f};
        for (int i = 0; i < 4 && k + i < K; i++)
            t[i] = x[k + i];
        int32x4_t q = vcvtnq_s32_f32(vmulq_f32(vld1q_f32(t), vdupq_n_f32(id)));
        q = vminq_s32(vmaxq_s32(q, lo), hi);
        int8x8_t q8 = vmovn_s16(vcombine_s16(vmovn_s32(q), vdup_n_s16(0)));
        memcpy(xq + k, &q8, 4);
    }
    return amax / 127.f;
}

/* Rows m..m+nr-1 of W (nr 1 or 4) against nb rows of quantised X (stride Kp). */
AI void qtile(int nr, int pf, int nb, int K, int Kp, const int8_t *xq, const float *d,
              const int8_t *W, int m, const float *scale, const float *b, float *Y, int ldy) {
    (void)pf; /* as tile4 */
    int32x4_t a[4][NB];
    for (int r = 0; r < nr; r++)
        for (int n = 0; n < nb; n++)
            a[r][n] = vdupq_n_s32(0);
    const int8_t *w0 = W + (size_t)m * (size_t)K;
    for (int k = 0; k < K; k += 16) {
        int8x16_t x[NB];
        for (int n = 0; n < nb; n++)
            x[n] = vld1q_s8(xq + (size_t)n * Kp + k);
        for (int r = 0; r < nr; r++) {
            const int8_t *wr = w0 + (size_t)r * K + k;
            int8x16_t w;
            if (k + 16 <= K) {
                w = vld1q_s8(wr);
            } else {
                int8_t t[16] = {0};
                memcpy(t, wr, (size_t)(K - k));
                w = vld1q_s8(t);
            }
            for (int n = 0; n < nb; n++) {
                a[r][n] = vpadalq_s16(a[r][n], vmull_s8(vget_low_s8(w), vget_low_s8(x[n])));
                a[r][n] = vpadalq_s16(a[r][n], vmull_high_s8(w, x[n]));
            }
        }
    }
    for (int r = 0; r < nr; r++) {
        const float bm = b ? b[m + r] : 0.f;
        for (int n = 0; n < nb; n++) {
            float y = (float)vaddvq_s32(a[r][n]) * d[n];
            y = y * scale[m + r];
            Y[(size_t)n * ldy + m + r] = y + bm;
        }
    }
}

/* ---- panels (outer products) --------------------------------------------------------------
 * A tile is PR rows of X x one panel of 32 outputs (8 vectors): per k eight W vectors and PR
 * broadcasts of X[r][k] for 8 PR FMAs; each output is one f32 FMA chain in k order. */
#define PR 3 /* rows per tile: 24 accumulators of the 32 registers */

typedef struct {
    float32x4_t b[8]; /* bias of outputs 4j..4j+3 (0 without bias or past M) */
    int left;         /* outputs of the panel below M (32: all) */
} panel_out;

AI panel_out panel_setup(const float *b, int m, int left) {
    panel_out o;
    o.left = left < 32 ? left : 32;
    float t[32] = {0};
    if (b) memcpy(t, b + m, (size_t)o.left * sizeof(float));
    for (int j = 0; j < 8; j++)
        o.b[j] = vld1q_f32(t + 4 * j);
    return o;
}

AI void panel_store(const panel_out *o, float32x4_t a[8], float *y) {
    if (o->left == 32) {
        for (int j = 0; j < 8; j++)
            vst1q_f32(y + 4 * j, vaddq_f32(a[j], o->b[j]));
        return;
    }
    float t[32];
    for (int j = 0; j < 8; j++)
        vst1q_f32(t + 4 * j, vaddq_f32(a[j], o->b[j]));
    memcpy(y, t, (size_t)o->left * sizeof(float));
}

AI void ptile(int nr, int K, const float *X, int ldx, const float *Wp, const panel_out *o, float *Y,
              int ldy, int pf) {
    (void)pf; /* no prefetch: not measured with this table (gemm_loop.h, "panels") */
    float32x4_t a[PR][8];
    for (int r = 0; r < nr; r++)
        for (int j = 0; j < 8; j++)
            a[r][j] = vdupq_n_f32(0.f);
    for (int k = 0; k < K; k++) {
        const float *w = Wp + (size_t)k * 32;
        for (int r = 0; r < nr; r++) {
            float32x4_t x = vdupq_n_f32(X[(size_t)r * ldx + k]);
            for (int j = 0; j < 8; j++)
                a[r][j] = vfmaq_f32(a[r][j], vld1q_f32(w + 4 * j), x);
        }
    }
    for (int r = 0; r < nr; r++)
        panel_store(o, a[r], Y + (size_t)r * ldy);
}

/* ---- bf16 panels: the vdpbf16ps arithmetic with f32 FMAs ---------------------------------
 * A 128-bit load of the panel holds 4 outputs x one k pair (32-bit lane j: the even-k weight
 * in its low half, the odd-k weight in its high half), so (v << 16) and (v & 0xffff0000) are
 * the even and odd weights as f32, exactly; X is rounded to bf16 (ptts_bf16_round) into a
 * stack buffer. The bf16 product is exact in f32, so an FMA is the one rounding of each step,
 * and the flush of results below 2^-126 is explicit (the packing and the rounding of X already
 * read subnormal operands as 0): the reference's bits. (BFMMLA / BFDOT of Armv8.6 would be the
 * instructions, but they are optional and round differently.) */
#define BPR 3 /* rows per bf16 tile: 24 accumulators */

AI float32x4_t ftz4(float32x4_t v) {
    uint32x4_t tiny = vcaltq_f32(v, vdupq_n_f32(0x1p-126f)); /* |v| < 2^-126 */
    uint32x4_t keep = vorrq_u32(vmvnq_u32(tiny), vdupq_n_u32(0x80000000u));
    return vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(v), keep));
}

static void xrows_bf16(int rows, int K, int Kp, const float *X, int ldx, uint16_t *xb) {
    for (int r = 0; r < rows; r++) {
        const float *x = X + (size_t)r * ldx;
        uint16_t *d = xb + (size_t)r * Kp;
        for (int k = 0; k < K; k++)
            d[k] = ptts_bf16_round(x[k]);
        if (K < Kp) d[K] = 0;
    }
}

AI void btile(int nr, int K2, const uint16_t *xb, int Kp, const uint16_t *Wp, const panel_out *o,
              float *Y, int ldy, int pf) {
    (void)pf; /* as ptile */
    const uint32x4_t hi = vdupq_n_u32(0xffff0000u);
    float32x4_t a[BPR][8];
    for (int r = 0; r < nr; r++)
        for (int j = 0; j < 8; j++)
            a[r][j] = vdupq_n_f32(0.f);
    for (int k2 = 0; k2 < K2; k2++) {
        float32x4_t xe[BPR], xo[BPR];
        for (int r = 0; r < nr; r++) {
            uint32_t pair;
            memcpy(&pair, xb + (size_t)r * Kp + 2 * (size_t)k2, sizeof pair);
            uint32x4_t v = vdupq_n_u32(pair);
            xe[r] = vreinterpretq_f32_u32(vshlq_n_u32(v, 16));
            xo[r] = vreinterpretq_f32_u32(vandq_u32(v, hi));
        }
        for (int j = 0; j < 8; j++) {
            uint32x4_t v =
                vld1q_u32((const uint32_t *)(const void *)(Wp + (size_t)k2 * 64 + 8 * j));
            float32x4_t we = vreinterpretq_f32_u32(vshlq_n_u32(v, 16));
            float32x4_t wo = vreinterpretq_f32_u32(vandq_u32(v, hi));
            for (int r = 0; r < nr; r++) {
                a[r][j] = ftz4(vfmaq_f32(a[r][j], xo[r], wo));
                a[r][j] = ftz4(vfmaq_f32(a[r][j], xe[r], we));
            }
        }
    }
    for (int r = 0; r < nr; r++)
        panel_store(o, a[r], Y + (size_t)r * ldy);
}

#include "gemm_loop.h"

/* ---- the vector primitives of vec_loop.h ------------------------------------------------- */
typedef float32x4_t vf;
#define VL 4

/* lanes below r (0..4) set */
static const uint32_t lane_tab[8] = {~0u, ~0u, ~0u, ~0u, 0, 0, 0, 0};
AI uint32x4_t lanes(int r) { return vld1q_u32(lane_tab + 4 - r); }

AI vf vzero(void) { return vdupq_n_f32(0.f); }
AI vf vset1(float f) { return vdupq_n_f32(f); }
AI vf vload(const float *p) { return vld1q_f32(p); }
AI void vstore(float *p, vf v) { vst1q_f32(p, v); }
/* no masked loads and stores in Advanced SIMD: the tails go through a 4-float copy */
AI vf vload_n(const float *p, int r) {
    float t[4] = {0.f, 0.f, 0.f, 0.f};
    memcpy(t, p, (size_t)r * sizeof(float));
    return vld1q_f32(t);
}
AI void vstore_n(float *p, vf v, int r) {
    float t[4];
    vst1q_f32(t, v);
    memcpy(p, t, (size_t)r * sizeof(float));
}
AI vf vload_h(const uint16_t *p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
/* FCVTN in the FPCR's rounding (nearest even unless a program changes it) */
AI void vstore_h(uint16_t *p, vf v) { vst1_u16(p, vreinterpret_u16_f16(vcvt_f16_f32(v))); }
AI vf vload_h_n(const uint16_t *p, int r) {
    uint16_t t[4] = {0, 0, 0, 0};
    memcpy(t, p, (size_t)r * sizeof(uint16_t));
    return vload_h(t);
}
AI vf vkeep_n(vf v, int r) {
    return vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(v), lanes(r)));
}
AI vf vfill_n(vf v, int r, float f) { return vbslq_f32(lanes(r), v, vdupq_n_f32(f)); }
AI vf vadd(vf a, vf b) { return vaddq_f32(a, b); }
AI vf vsub(vf a, vf b) { return vsubq_f32(a, b); }
AI vf vmul(vf a, vf b) { return vmulq_f32(a, b); }
AI vf vdiv(vf a, vf b) { return vdivq_f32(a, b); }
AI vf vmax(vf a, vf b) { return vmaxq_f32(a, b); } /* NaN in either operand gives NaN */
AI vf vmin(vf a, vf b) { return vminq_f32(a, b); }
AI vf vfma(vf a, vf b, vf c) { return vfmaq_f32(c, a, b); }
AI vf vfnma(vf a, vf b, vf c) { return vfmsq_f32(c, a, b); }
AI vf vround(vf x) { return vrndnq_f32(x); }
AI float vhsum(vf v) { return vaddvq_f32(v); }
AI float vhmax(vf v) { return vmaxvq_f32(v); }

/* 2^n for integral n in [-126, 127], built in the exponent field */
AI vf pow2i(int32x4_t n) {
    return vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n, vdupq_n_s32(127)), 23));
}

AI vf vpow2n(vf n) { return pow2i(vcvtnq_s32_f32(n)); }

/* p 2^n for n in [-150, 128]: by 2^(n/2) twice, so both factors are normal and a subnormal
 * result is rounded once (FPCR.FZ is off by default on Linux). */
AI vf vscale2n(vf p, vf n) {
    int32x4_t ni = vcvtnq_s32_f32(n);
    int32x4_t n1 = vshrq_n_s32(ni, 1);
    int32x4_t n2 = vsubq_s32(ni, n1);
    return vmulq_f32(vmulq_f32(p, pow2i(n1)), pow2i(n2));
}

AI vf vsel_pos_nan(vf x, vf neg) {
    uint32x4_t keep = vorrq_u32(vcgtq_f32(x, vdupq_n_f32(0.f)), vmvnq_u32(vceqq_f32(x, x)));
    return vbslq_f32(keep, x, neg);
}

#include "vec_loop.h"

PTTS_ROWS_Q_LOOPS(dot_rows_isa, axpy_rows_isa)

static const ptts_kernels k_neon =
    PTTS_ISA_TABLE("neon", dot_rows_isa, axpy_rows_isa, dot_rows_q_isa, axpy_rows_q_isa,
                   dot_rows_q_h_isa, axpy_rows_q_h_isa);

const ptts_kernels *ptts_kernels_neon(void);
const ptts_kernels *ptts_kernels_neon(void) { return &k_neon; }
