/*
 * kernels.h - the CPU kernel table.
 *
 * Every kernel has a plain C reference (kernels_ref.c) that is the specification; ISA variants
 * (AVX2+FMA, AVX-512, NEON) live in their own files built with their own flags and are chosen at
 * run time from CPUID. The environment variable PTTS_ISA (e.g. "ref", "avx2", "avx512") caps
 * the choice. tests/test_kernels.c holds every variant against the reference.
 *
 * Activation layout everywhere is row-major [rows, features] ("time-major" in the codec).
 * A linear layer computes Y[n, m] = sum_k X[n, k] * W[m, k] + b[m]; the kernels compute the
 * output columns m in [m0, m1) only, so that a thread pool can split the rows of W (each
 * thread streams its own slice of the weights once for all n).
 */
#ifndef PTTS_KERNELS_H
#define PTTS_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* Weight storage of a linear layer. */
typedef enum { PTTS_W_F32 = 0, PTTS_W_BF16 = 1, PTTS_W_Q8 = 2 } ptts_wtype;

typedef struct ptts_lin {
    int out, in;           /* W is [out, in] */
    ptts_wtype type;
    const float *w;        /* F32: [out, in] */
    const uint16_t *wh;    /* BF16: [out, in] */
    const int8_t *wq;      /* Q8: [out, in], row m scaled by scale[m] */
    const float *scale;    /* Q8: [out] */
    const float *bias;     /* [out] or NULL */
    /* Optional (set at load for the codec's matrices, which run over many rows): W^T as f32 in
     * panels of PTTS_PANEL outputs, [ceil(out / PTTS_PANEL)][in][PTTS_PANEL], zero-padded; for
     * a BF16 matrix the bf16 values widened (same results as wh). */
    const float *wp;
} ptts_lin;

#define PTTS_PANEL 32

typedef struct ptts_kernels {
    const char *isa; /* "ref", "avx2", "avx512", "neon" */

    /* Y[n*ldy + m] = X[n*ldx + :K] . W[m, :K] + b[m], n < N, m in [m0, m1). b may be NULL.
     * X, Y rows may be strided (ldx, ldy in floats). Y must not alias X. */
    void (*gemm_f32)(int N, int K, const float *X, int ldx, const float *W, const float *b,
                     float *Y, int ldy, int m0, int m1);
    void (*gemm_bf16)(int N, int K, const float *X, int ldx, const uint16_t *W, const float *b,
                      float *Y, int ldy, int m0, int m1);
    /* W int8 with per-row scale: Y = scale[m] * (X . Wq[m]) + b[m]. */
    void (*gemm_q8)(int N, int K, const float *X, int ldx, const int8_t *W, const float *scale,
                    const float *b, float *Y, int ldy, int m0, int m1);
    /* Same operands as gemm_q8, with X quantised too (integer dot products, VNNI): each row n of
     * X is rounded to int8 with its own step d = max_k |x[k]| / 127 (q = nearest-even of
     * x * (127 / max), clamped to +-127; d = 0 and q = 0 for an all-zero row), the dot product
     * sum_k q[k] * W[m, k] is exact in int32 (K < 2^16), and
     * Y = ((float)dot * d) * scale[m] + b[m] (three roundings, in that order). Relative error
     * against gemm_q8 ~4e-3 (bench/bench_precision.c). NULL in a table without it; the ref
     * table has it as the specification. */
    void (*gemm_q8q)(int N, int K, const float *X, int ldx, const int8_t *W, const float *scale,
                     const float *b, float *Y, int ldy, int m0, int m1);

    /* From the panel layout (ptts_lin.wp): Y[n*ldy + m] = X[n*ldx + :K] . W[m, :K] + b[m] for
     * rows n in [n0, n1) and the outputs of panels [p0, p1) (m < M). Broadcast-X outer
     * products: no horizontal sums, efficient for many rows and short K. NULL in a table
     * without it (callers then use gemm_f32 on L->w). */
    void (*gemm_f32_panel)(int K, const float *X, int ldx, const float *Wp, const float *b,
                           float *Y, int ldy, int M, int n0, int n1, int p0, int p1);

    /* y = (x - mean) / sqrt(var + eps) * w + b over n values (biased variance); w, b may be
     * NULL (no affine). y may alias x. */
    void (*layernorm)(float *y, const float *x, const float *w, const float *b, int n, float eps);
    /* In place, numerically stable (max subtracted). */
    void (*softmax)(float *x, int n);
    void (*gelu)(float *x, int n); /* exact erf GELU, in place */
    void (*silu)(float *y, const float *x, int n);
    void (*elu)(float *y, const float *x, int n); /* alpha 1 */
    float (*dot)(const float *a, const float *b, int n);
    /* y += a * x */
    void (*axpy)(float *y, float a, const float *x, int n);
} ptts_kernels;

const ptts_kernels *ptts_kernels_ref(void);
/* The best variant for this CPU, capped by PTTS_ISA. Never NULL (falls back to ref). */
const ptts_kernels *ptts_kernels_best(void);
/* Every variant this build has and this CPU runs (ref first); returns the count. */
int ptts_kernels_all(const ptts_kernels **out, int max);

#endif
