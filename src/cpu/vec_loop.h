/*
 * vec_loop.h - the elementwise kernels written once on a vector of VL floats: exp / expm1
 * and the activations built on them, softmax, layernorm, dot and axpy (and their row loops).
 * Included by kernels_avx2.c (VL 8), kernels_avx512.c (VL 16) and kernels_neon.c (VL 4) after they
 * define the primitives below; each table gets its own copy compiled with its own flags, and the
 * arithmetic of a kernel is the same sequence of operations in all (only the vector width and
 * hence the order of the lane sums differ).
 *
 * The including file defines:
 *   vf, VL                 the vector type and its lanes
 *   vzero, vset1           (): 0; (float): broadcast
 *   vload, vstore          full vectors, unaligned
 *   vload_n, vstore_n      (p, r), r in 1..VL: the first r lanes, lanes >= r read as 0 / kept
 *   vload_h, vload_h_n     VL (the first r) float16 values widened to float32 (exact)
 *   vstore_h               VL values rounded to float16 as half.h's st_f32_to_f16 rounds
 *   vkeep_n, vfill_n       (v, r): lanes >= r set to 0; (v, r, f): lanes >= r set to f
 *   vadd vsub vmul vdiv vmax vmin   one instruction each; vmax(lo, x) / vmin(hi, x) give NaN
 *                          for a NaN x (x86: the second operand; NEON: any NaN operand)
 *   vfma, vfnma            (a, b, c): a b + c, c - a b (fused)
 *   vround                 nearest even
 *   vscale2n, vpow2n       (p, n): p 2^n for integral n in [-150, 128], subnormal results kept;
 *                          (n): 2^n for integral n in [-126, 127]
 *   vhsum, vhmax           horizontal sum / max to a float
 *   vsel_pos_nan           (x, neg): x where x > 0 or x is NaN, else neg
 *   AI                     static inline always_inline
 */
#ifndef PTTS_VEC_LOOP_H
#define PTTS_VEC_LOOP_H

#include "half.h"

/* ---- exp and the activations (constants and method: approx.h) ----------------------------- */

/* exp(x): NaN in -> NaN out, x > 88.73 -> inf, x < -103.98 -> 0, subnormal results kept. */
AI vf vexp(vf x) {
    x = vmax(vset1(EXP_LO), x);
    x = vmin(vset1(EXP_HI), x);
    vf n = vround(vmul(x, vset1(LOG2E)));
    vf r = vfnma(n, vset1(LN2_HI), x);
    r = vfnma(n, vset1(LN2_LO), r);
    vf p = vset1(EXP_P0);
    p = vfma(p, r, vset1(EXP_P1));
    p = vfma(p, r, vset1(EXP_P2));
    p = vfma(p, r, vset1(EXP_P3));
    p = vfma(p, r, vset1(EXP_P4));
    p = vfma(p, r, vset1(EXP_P5));
    p = vfma(p, vmul(r, r), r);
    p = vadd(p, vset1(1.f));
    return vscale2n(p, n);
}

/* expm1(x) for x <= 0 (elu's negative side): 2^n expm1(r) + (2^n - 1), |r| <= ln2/2. */
AI vf vexpm1_neg(vf x) {
    x = vmax(vset1(EXPM1_LO), x);
    vf n = vround(vmul(x, vset1(LOG2E)));
    vf r = vfnma(n, vset1(LN2_HI), x);
    r = vfnma(n, vset1(LN2_LO), r);
    vf p = vset1(EXPM1_Q0);
    p = vfma(p, r, vset1(EXPM1_Q1));
    p = vfma(p, r, vset1(EXPM1_Q2));
    p = vfma(p, r, vset1(EXPM1_Q3));
    p = vfma(p, r, vset1(EXPM1_Q4));
    p = vfma(p, r, vset1(EXPM1_Q5));
    p = vfma(p, r, vset1(EXPM1_Q6));
    p = vfma(p, vmul(r, r), r);
    vf s = vpow2n(n); /* n >= -126 */
    return vfma(s, p, vsub(s, vset1(1.f)));
}

/* tanh GELU as x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3): the same function as
 * 0.5 x (1 + tanh u) without the cancellation of 1 + tanh for negative x; |x| large gives x or
 * -0 (exp saturates), NaN propagates. */
AI vf vgelu(vf x) {
    vf x3 = vmul(vmul(x, x), x);
    vf u = vmul(vset1(GELU_C), vfma(x3, vset1(GELU_A), x));
    vf e = vexp(vmul(u, vset1(-2.f)));
    return vdiv(x, vadd(vset1(1.f), e));
}

AI vf vsilu(vf x) {
    vf e = vexp(vsub(vzero(), x));
    return vdiv(x, vadd(vset1(1.f), e));
}

AI vf velu(vf x) { return vsel_pos_nan(x, vexpm1_neg(vmin(vzero(), x))); }

/* y[i] = F(x[i]) over n values, the tail through masked loads and stores. */
#define MAP_LOOP(F, y, x, n)                                                                       \
    do {                                                                                           \
        int i_ = 0;                                                                                \
        for (; i_ + VL <= (n); i_ += VL)                                                           \
            vstore((y) + i_, F(vload((x) + i_)));                                                  \
        if (i_ < (n)) vstore_n((y) + i_, F(vload_n((x) + i_, (n)-i_)), (n)-i_);                    \
    } while (0)

static void gelu_isa(float *x, int n) { MAP_LOOP(vgelu, x, x, n); }
static void silu_isa(float *y, const float *x, int n) { MAP_LOOP(vsilu, y, x, n); }
static void elu_isa(float *y, const float *x, int n) { MAP_LOOP(velu, y, x, n); }

static void softmax_isa(float *x, int n) {
    if (n <= 0) return;
    vf mx = vset1(-INFINITY);
    int i = 0;
    for (; i + VL <= n; i += VL)
        mx = vmax(mx, vload(x + i));
    if (i < n) mx = vmax(mx, vfill_n(vload_n(x + i, n - i), n - i, -INFINITY));
    const vf mv = vset1(vhmax(mx));
    vf s = vzero();
    for (i = 0; i + VL <= n; i += VL) {
        vf e = vexp(vsub(vload(x + i), mv));
        vstore(x + i, e);
        s = vadd(s, e);
    }
    if (i < n) {
        vf e = vkeep_n(vexp(vsub(vload_n(x + i, n - i), mv)), n - i);
        vstore_n(x + i, e, n - i);
        s = vadd(s, e);
    }
    const vf inv = vset1(1.f / vhsum(s));
    for (i = 0; i + VL <= n; i += VL)
        vstore(x + i, vmul(vload(x + i), inv));
    if (i < n) vstore_n(x + i, vmul(vload_n(x + i, n - i), inv), n - i);
}

static void layernorm_isa(float *y, const float *x, const float *w, const float *b, int n,
                          float eps) {
    if (n <= 0) return;
    vf s0 = vzero(), s1 = vzero();
    int i = 0;
    for (; i + 2 * VL <= n; i += 2 * VL) {
        s0 = vadd(s0, vload(x + i));
        s1 = vadd(s1, vload(x + i + VL));
    }
    for (; i + VL <= n; i += VL)
        s0 = vadd(s0, vload(x + i));
    if (i < n) s1 = vadd(s1, vload_n(x + i, n - i));
    const float mean = vhsum(vadd(s0, s1)) / (float)n;
    const vf mv = vset1(mean);
    s0 = vzero();
    s1 = vzero();
    for (i = 0; i + VL <= n; i += VL) {
        vf d = vsub(vload(x + i), mv);
        s0 = vfma(d, d, s0);
    }
    if (i < n) {
        vf d = vkeep_n(vsub(vload_n(x + i, n - i), mv), n - i);
        s1 = vfma(d, d, s1);
    }
    const float var = vhsum(vadd(s0, s1)) / (float)n;
    const vf inv = vset1(1.f / sqrtf(var + eps));
    for (i = 0; i < n; i += VL) {
        const int r = n - i >= VL ? VL : n - i;
        vf v = vmul(vsub(vload_n(x + i, r), mv), inv);
        if (w) v = vmul(v, vload_n(w + i, r));
        if (b) v = vadd(v, vload_n(b + i, r));
        vstore_n(y + i, v, r);
    }
}

/* dot and axpy over a row b / x of float32 (h = 0) or float16 (h = 1): the same operations on
 * the same float32 values (a float16 value widened as it is read, exactly) */
AI vf vload_kv(const void *p, int h, int i) {
    return h ? vload_h((const uint16_t *)p + i) : vload((const float *)p + i);
}
AI vf vload_kv_n(const void *p, int h, int i, int r) {
    return h ? vload_h_n((const uint16_t *)p + i, r) : vload_n((const float *)p + i, r);
}

AI float dot_kv(const float *a, const void *b, int h, int n) {
    vf s0 = vzero(), s1 = vzero(), s2 = vzero(), s3 = vzero();
    int i = 0;
    for (; i + 4 * VL <= n; i += 4 * VL) {
        s0 = vfma(vload(a + i), vload_kv(b, h, i), s0);
        s1 = vfma(vload(a + i + VL), vload_kv(b, h, i + VL), s1);
        s2 = vfma(vload(a + i + 2 * VL), vload_kv(b, h, i + 2 * VL), s2);
        s3 = vfma(vload(a + i + 3 * VL), vload_kv(b, h, i + 3 * VL), s3);
    }
    for (; i + VL <= n; i += VL)
        s0 = vfma(vload(a + i), vload_kv(b, h, i), s0);
    if (i < n) s1 = vfma(vload_n(a + i, n - i), vload_kv_n(b, h, i, n - i), s1);
    return vhsum(vadd(vadd(s0, s1), vadd(s2, s3)));
}

AI void axpy_kv(float *y, float a, const void *x, int h, int n) {
    const vf av = vset1(a);
    int i = 0;
    for (; i + VL <= n; i += VL)
        vstore(y + i, vfma(av, vload_kv(x, h, i), vload(y + i)));
    if (i < n) vstore_n(y + i, vfma(av, vload_kv_n(x, h, i, n - i), vload_n(y + i, n - i)), n - i);
}

static float dot_isa(const float *a, const float *b, int n) { return dot_kv(a, b, 0, n); }

static void axpy_isa(float *y, float a, const float *x, int n) { axpy_kv(y, a, x, 0, n); }

/* float32 to float16 (kernels.h): whole vectors, then the tail one value at a time */
static void f16_from_f32_isa(uint16_t *y, const float *x, size_t n) {
    size_t i = 0;
    for (; i + VL <= n; i += VL)
        vstore_h(y + i, vload(x + i));
    for (; i < n; i++)
        y[i] = st_f32_to_f16(x[i]);
}

/* the row versions (kernels.h): exactly dot_isa / axpy_isa in a loop */
static void dot_rows_isa(const float *q, const float *K, int ldk, int rows, int n, float scale,
                         float *out) {
    for (int r = 0; r < rows; r++)
        out[r] = dot_isa(q, K + (size_t)r * ldk, n) * scale;
}

static void axpy_rows_isa(float *y, const float *p, const float *V, int ldv, int rows, int n) {
    for (int r = 0; r < rows; r++)
        axpy_isa(y, p[r], V + (size_t)r * ldv, n);
}

/* the _q forms (kernels.h) as calls of the row kernels dot_rows_fn / axpy_rows_fn */
#define PTTS_ROWS_Q_LOOPS(dot_rows_fn, axpy_rows_fn)                                               \
    static void dot_rows_q_isa(const float *const *q, int nq, const float *K, int ldk, int rows,   \
                               int n, float scale, float *const *out) {                            \
        for (int i = 0; i < nq; i++)                                                               \
            dot_rows_fn(q[i], K, ldk, rows, n, scale, out[i]);                                     \
    }                                                                                              \
    static void axpy_rows_q_isa(float *const *y, const float *const *p, int nq, const float *V,    \
                                int ldv, int rows, int n) {                                        \
        for (int i = 0; i < nq; i++)                                                               \
            axpy_rows_fn(y[i], p[i], V, ldv, rows, n);                                             \
    }

/* the float16 _q forms (kernels.h): dot_rows_isa / axpy_rows_isa's loops on float16 rows, for
 * the tables whose row kernels are those (AVX-512 has its own) */
static void dot_rows_q_h_isa(const float *const *q, int nq, const uint16_t *K, int ldk, int rows,
                             int n, float scale, float *const *out) {
    for (int i = 0; i < nq; i++)
        for (int r = 0; r < rows; r++)
            out[i][r] = dot_kv(q[i], K + (size_t)r * ldk, 1, n) * scale;
}

static void axpy_rows_q_h_isa(float *const *y, const float *const *p, int nq, const uint16_t *V,
                              int ldv, int rows, int n) {
    for (int i = 0; i < nq; i++)
        for (int r = 0; r < rows; r++)
            axpy_kv(y[i], p[i][r], V + (size_t)r * ldv, 1, n);
}

/* The kernel table of an ISA file built on this header and gemm_loop.h (both define the _isa
 * kernels); the row kernels and their _q forms are the file's (AVX-512 has its own). */
#define PTTS_ISA_TABLE(name, dot_rows_fn, axpy_rows_fn, dot_rows_q_fn, axpy_rows_q_fn,             \
                       dot_rows_q_h_fn, axpy_rows_q_h_fn)                                          \
    {                                                                                              \
        .isa = name, .gemm_f32 = gemm_f32_isa, .gemm_f32_panel = gemm_f32_panel_isa,               \
        .gemm_bf16_panel = gemm_bf16_panel_isa, .gemm_bf16 = gemm_bf16_isa,                        \
        .gemm_q8 = gemm_q8_isa, .gemm_q8q = gemm_q8q_isa, .gemm_f32_stream = gemm_f32_stream_isa,  \
        .gemm_bf16_stream = gemm_bf16_stream_isa, .gemm_q8q_stream = gemm_q8q_stream_isa,          \
        .layernorm = layernorm_isa, .softmax = softmax_isa, .gelu = gelu_isa, .silu = silu_isa,    \
        .elu = elu_isa, .dot = dot_isa, .dot_rows = dot_rows_fn, .axpy = axpy_isa,                 \
        .axpy_rows = axpy_rows_fn, .dot_rows_q = dot_rows_q_fn, .axpy_rows_q = axpy_rows_q_fn,     \
        .dot_rows_q_h = dot_rows_q_h_fn, .axpy_rows_q_h = axpy_rows_q_h_fn,                        \
        .f16_from_f32 = f16_from_f32_isa,                                                          \
    }

#endif
