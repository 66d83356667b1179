/*
 * kernels_neon.c - the AArch64 Advanced SIMD kernel table (see kernels.h for the contract and
 * kernels_ref.c for the specification). Built on aarch64 only, where Advanced SIMD is part of
 * the base architecture, so cpu.c lists it unconditionally there.
 *
 * gemm (f32 / bf16 / q8 weights, f32 accumulation): the register tile is 4 rows of W x NB = 4
 * rows of X (16 accumulators of 4 lanes, of the 32 vector registers), over K in steps of 8:
 * every W row contributes two 4-lane vectors per step, widened exactly (bf16 by vshll #16,
 * int8 through int16 and int32) and used for NB FMAs. The K tail (K % 8) is summed in scalar
 * code after the vector sums; m tails use a 1-row tile, N tails NB = 1..3. Loop order and X
 * panels (about 256 KiB) as in kernels_avx512.c, so each W row is streamed once per call for
 * N <= 16 at K <= 4096. Results differ from the reference by the order of f32 additions.
 * dot and axpy are vectorised; layernorm, softmax, gelu, silu and elu delegate to the reference
 * (they are a small share of the frame time next to the weight streaming).
 */
#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

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

AI void gemm_any(int wt, int N, int K, const float *X, int ldx, const void *W, const float *scale,
                 const float *b, float *Y, int ldy, int m0, int m1) {
    if (N <= 0 || m1 <= m0) return;
    int panel = K > 0 ? (int)((256u * 1024u) / ((unsigned)K * 4u)) : N;
    panel = panel / NB * NB;
    if (panel < NB) panel = NB;
    for (int n0 = 0; n0 < N; n0 += panel) {
        int n1 = N - n0 < panel ? N : n0 + panel;
        for (int m = m0; m < m1;) {
            int four = m + 4 <= m1;
            int n = n0;
            for (; n + NB <= n1; n += NB) {
                const float *x = X + (size_t)n * ldx;
                float *y = Y + (size_t)n * ldy;
                if (four)
                    tile(wt, 4, NB, K, x, ldx, W, m, scale, b, y, ldy);
                else
                    tile(wt, 1, NB, K, x, ldx, W, m, scale, b, y, ldy);
            }
            const float *x = X + (size_t)n * ldx;
            float *y = Y + (size_t)n * ldy;
            switch ((n1 - n) * 2 + four) {
            case 7: tile(wt, 4, 3, K, x, ldx, W, m, scale, b, y, ldy); break;
            case 5: tile(wt, 4, 2, K, x, ldx, W, m, scale, b, y, ldy); break;
            case 3: tile(wt, 4, 1, K, x, ldx, W, m, scale, b, y, ldy); break;
            case 6: tile(wt, 1, 3, K, x, ldx, W, m, scale, b, y, ldy); break;
            case 4: tile(wt, 1, 2, K, x, ldx, W, m, scale, b, y, ldy); break;
            case 2: tile(wt, 1, 1, K, x, ldx, W, m, scale, b, y, ldy); break;
            default: break;
            }
            m += four ? 4 : 1;
        }
    }
}

static void gemm_f32_neon(int N, int K, const float *X, int ldx, const float *W, const float *b,
                          float *Y, int ldy, int m0, int m1) {
    gemm_any(WT_F32, N, K, X, ldx, W, NULL, b, Y, ldy, m0, m1);
}

static void gemm_bf16_neon(int N, int K, const float *X, int ldx, const uint16_t *W, const float *b,
                           float *Y, int ldy, int m0, int m1) {
    gemm_any(WT_BF16, N, K, X, ldx, W, NULL, b, Y, ldy, m0, m1);
}

static void gemm_q8_neon(int N, int K, const float *X, int ldx, const int8_t *W, const float *scale,
                         const float *b, float *Y, int ldy, int m0, int m1) {
    gemm_any(WT_Q8, N, K, X, ldx, W, scale, b, Y, ldy, m0, m1);
}

static float dot_neon(const float *a, const float *b, int n) {
    float32x4_t s0 = vdupq_n_f32(0.f), s1 = s0, s2 = s0, s3 = s0;
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = vfmaq_f32(s0, vld1q_f32(a + i), vld1q_f32(b + i));
        s1 = vfmaq_f32(s1, vld1q_f32(a + i + 4), vld1q_f32(b + i + 4));
        s2 = vfmaq_f32(s2, vld1q_f32(a + i + 8), vld1q_f32(b + i + 8));
        s3 = vfmaq_f32(s3, vld1q_f32(a + i + 12), vld1q_f32(b + i + 12));
    }
    for (; i + 4 <= n; i += 4)
        s0 = vfmaq_f32(s0, vld1q_f32(a + i), vld1q_f32(b + i));
    float s = vaddvq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3)));
    for (; i < n; i++)
        s += a[i] * b[i];
    return s;
}

static void axpy_neon(float *y, float a, const float *x, int n) {
    float32x4_t av = vdupq_n_f32(a);
    int i = 0;
    for (; i + 4 <= n; i += 4)
        vst1q_f32(y + i, vfmaq_f32(vld1q_f32(y + i), av, vld1q_f32(x + i)));
    for (; i < n; i++)
        y[i] += a * x[i];
}

static void layernorm_neon(float *y, const float *x, const float *w, const float *b, int n,
                           float eps) {
    ptts_kernels_ref()->layernorm(y, x, w, b, n, eps);
}
static void softmax_neon(float *x, int n) { ptts_kernels_ref()->softmax(x, n); }
static void gelu_neon(float *x, int n) { ptts_kernels_ref()->gelu(x, n); }
static void silu_neon(float *y, const float *x, int n) { ptts_kernels_ref()->silu(y, x, n); }
static void elu_neon(float *y, const float *x, int n) { ptts_kernels_ref()->elu(y, x, n); }

static const ptts_kernels k_neon = {
    .isa = "neon",
    .gemm_f32 = gemm_f32_neon,
    .gemm_bf16 = gemm_bf16_neon,
    .gemm_q8 = gemm_q8_neon,
    .layernorm = layernorm_neon,
    .softmax = softmax_neon,
    .gelu = gelu_neon,
    .silu = silu_neon,
    .elu = elu_neon,
    .dot = dot_neon,
    .axpy = axpy_neon,
};

const ptts_kernels *ptts_kernels_neon(void);
const ptts_kernels *ptts_kernels_neon(void) { return &k_neon; }
