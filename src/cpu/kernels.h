/*
 * kernels.h - the CPU kernel table.
 *
 * Every kernel has a plain C reference (kernels_ref.c) that is the specification; ISA variants
 * (AVX2+FMA, AVX-512, AMX, NEON) live in their own files built with their own flags and are
 * chosen at run time from CPUID. The environment variable PTTS_ISA (e.g. "ref", "avx2", "avx512",
 * "amx") caps the choice. tests/test_kernels.c and test_kernels_elem.c hold every variant
 * against the reference.
 *
 * Every table sets every entry, so a precision mode computes one arithmetic on every CPU: the
 * kernels whose specification fixes every rounding (gemm_q8q, gemm_bf16_panel) give the
 * reference's bits in every table (gemm_bf16_panel: every table but amx, whose tile instruction
 * fixes another order of sums, stated there with the bound); the row kernels (dot_rows,
 * axpy_rows and their _q forms) give exactly their own table's dot and axpy; the others
 * differ from the reference only by the order of f32 additions and by the stated error of the exp
 * approximations.
 * The ISA-independent loops of the SIMD tables are in gemm_loop.h, their exp constants in
 * approx.h.
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

/* query rows of one dot_rows_q / axpy_rows_q call, at most */
#define PTTS_ROWS_Q 4

/* Weight storage of a linear layer. */
typedef enum { PTTS_W_F32 = 0, PTTS_W_BF16 = 1, PTTS_W_Q8 = 2 } ptts_wtype;

typedef struct ptts_lin {
    int out, in; /* W is [out, in] */
    ptts_wtype type;
    const float *w;     /* F32: [out, in] */
    const uint16_t *wh; /* BF16: [out, in] */
    const int8_t *wq;   /* Q8: [out, in], row m scaled by scale[m] */
    const float *scale; /* Q8: [out] */
    const float *bias;  /* [out] or NULL */
    /* Read once a step and larger than the caches (the backbone's matrices, set at load): its
     * linears go through the *_stream entries. */
    int stream;
    /* Optional (set at load for the codec's matrices, which run over many rows): W^T as f32 in
     * panels of PTTS_PANEL outputs, [ceil(out / PTTS_PANEL)][in][PTTS_PANEL], zero-padded; for
     * a BF16 matrix the bf16 values widened (same results as wh). */
    const float *wp;
    /* Optional, instead of wp in the bf16 and int8 modes (gemm_bf16_panel): W^T as bf16 in panels
     * of PTTS_PANEL outputs with pairs of k interleaved (the operand order of vdpbf16ps), [ceil(out
     * / 32)][ceil(in / 2)][32][2]: wp16[p][k2][j][i] = bf16(W[32 p + j, 2 k2 + i]) (round to
     * nearest even; a subnormal bf16 stored as a signed 0, which is how gemm_bf16_panel reads it),
     * zero-padded in both m and k (ptts_bf16_panel_pack). */
    const uint16_t *wp16;
} ptts_lin;

#define PTTS_PANEL 32
/* Largest K gemm_bf16_panel takes (its X rows are rounded to bf16 into a 64 KiB stack buffer,
 * at least one row at a time). */
#define PTTS_BF16_PANEL_KMAX 32768
/* Largest K gemm_q8q takes: its int32 sums are exact below 2^16 terms, and its X rows are
 * quantised into a 64 KiB stack buffer (a row padded to a multiple of 64). Callers use gemm_q8
 * beyond. */
#define PTTS_Q8Q_KMAX (65536 - 64)

/* Elements of the bf16 panel layout of an [out, in] matrix, and the packing of a row-major f32
 * [out, in] matrix into it (the layout's definition; used at load and by the tests). */
size_t ptts_bf16_panel_elems(int out, int in);
void ptts_bf16_panel_pack(const float *w, int out, int in, uint16_t *wp16);
/* An X value rounded to bf16 as gemm_bf16_panel reads it (vcvtne2ps2bf16): nearest even, an
 * f32 subnormal input gives a signed 0. */
uint16_t ptts_bf16_round(float x);

typedef struct ptts_kernels {
    const char *isa; /* "ref", "avx2", "avx512", "amx", "neon" */

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
     * sum_k q[k] * W[m, k] is exact in int32 (K <= PTTS_Q8Q_KMAX), and
     * Y = ((float)dot * d) * scale[m] + b[m] (three roundings, in that order). Every table
     * gives the reference's bits (amx: tdpbssd's int32 sums are exact too). Relative error against
     * gemm_q8 ~4e-3 (bench/bench_precision.c). */
    void (*gemm_q8q)(int N, int K, const float *X, int ldx, const int8_t *W, const float *scale,
                     const float *b, float *Y, int ldy, int m0, int m1);
    /* gemm_f32, gemm_bf16 and gemm_q8q for a W that streams from memory (ptts_lin.stream):
     * the same results bit for bit; the SIMD tables fetch W ahead into L2 (on x86: Intel
     * and AMD) for any number of rows of X (gemm_loop.h, "streamed matrices"). */
    void (*gemm_f32_stream)(int N, int K, const float *X, int ldx, const float *W, const float *b,
                            float *Y, int ldy, int m0, int m1);
    void (*gemm_bf16_stream)(int N, int K, const float *X, int ldx, const uint16_t *W,
                             const float *b, float *Y, int ldy, int m0, int m1);
    void (*gemm_q8q_stream)(int N, int K, const float *X, int ldx, const int8_t *W,
                            const float *scale, const float *b, float *Y, int ldy, int m0, int m1);

    /* From the panel layout (ptts_lin.wp): Y[n*ldy + m] = X[n*ldx + :K] . W[m, :K] + b[m] for
     * rows n in [n0, n1) and the outputs of panels [p0, p1) (m < M). Broadcast-X outer
     * products: no horizontal sums, efficient for many rows and short K. */
    void (*gemm_f32_panel)(int K, const float *X, int ldx, const float *Wp, const float *b,
                           float *Y, int ldy, int M, int n0, int n1, int p0, int p1);
    /* Same operands from the bf16 panel layout (ptts_lin.wp16), in the arithmetic of the
     * AVX512-BF16 instructions (VCVTNE2PS2BF16, VDPBF16PS; verified on Zen 5 to the bit):
     *   x' = X[n, k] rounded to bf16, nearest even; |x| < 2^-126 gives a signed 0 (DAZ);
     *   w' = the bf16 weight, a subnormal bf16 read as 0; both zero-padded to an even K;
     *   acc = 0; for each pair k = 2i: acc = ftz(fma(x'[k+1], w'[k+1], acc)), then
     *   acc = ftz(fma(x'[k], w'[k], acc)) (the odd element first; the bf16 product is exact, so
     *   each step is one round to nearest even; ftz: a result below 2^-126 in magnitude
     *   becomes a signed 0);  Y = acc + b[m] (f32; + 0 without b).
     * On AVX512-BF16 twice the MACs per instruction of an f32 FMA; the other tables compute
     * the same steps with f32 FMAs, the same bits (AVX2 flushes only the tiles whose MXCSR
     * flags show that a flush matters, NEON every step). Each X and W value is off by at most
     * 2^-9 of itself (the codec's end-to-end error: bench/RESULTS.md).
     * The amx table (tdpbf16ps, one instruction per 16 pairs of k from k = 0, the operands
     * zero-padded to whole groups) adds the same products in Intel's documented order, which
     * the hardware follows to the bit (tests/test_amx.c): per group, e = o = 0; for each pair
     * e = ftz(fma(x'[k], w'[k], e)), o = ftz(fma(x'[k+1], w'[k+1], o)); then
     * acc = ftz(acc + ftz(e + o)); Y = acc + b[m]. Its bits therefore differ from the other
     * tables': |y - y_ref| <= 2 (K + 1) 2^-24 (|b[m]| + sum_k |x'[k] w'[k]|) + K 2^-125 (two f32
     * sums of the same terms, each step flushed at most once), checked by tests/test_kernels.c
     * (measured: bench/RESULTS.md). vdpbf16ps cannot form that order at its speed (it chains
     * a pair's two products), hence two arithmetics for this mode, one per instruction set.
     * K <= PTTS_BF16_PANEL_KMAX. */
    void (*gemm_bf16_panel)(int K, const float *X, int ldx, const uint16_t *Wp16, const float *b,
                            float *Y, int ldy, int M, int n0, int n1, int p0, int p1);

    /* y = (x - mean) / sqrt(var + eps) * w + b over n values (biased variance); w, b may be
     * NULL (no affine). y may alias x. */
    void (*layernorm)(float *y, const float *x, const float *w, const float *b, int n, float eps);
    /* In place, numerically stable (max subtracted). */
    void (*softmax)(float *x, int n);
    /* tanh GELU, in place: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
    void (*gelu)(float *x, int n);
    void (*silu)(float *y, const float *x, int n);
    void (*elu)(float *y, const float *x, int n); /* alpha 1 */
    float (*dot)(const float *a, const float *b, int n);
    /* out[r] = dot(q, K + r * ldk, n) * scale for r < rows: each value exactly what dot gives
     * (attention scores over consecutive cache rows without a call per key). */
    void (*dot_rows)(const float *q, const float *K, int ldk, int rows, int n, float scale,
                     float *out);
    /* y += p[r] * V[r * ldv ..] for r = 0 .. rows-1 in that order: exactly `rows` axpy calls
     * (y kept in registers between rows). */
    void (*axpy_rows)(float *y, const float *p, const float *V, int ldv, int rows, int n);
    /* dot_rows(q[i], K, .., out[i]) for i < nq <= PTTS_ROWS_Q: exactly those calls (several
     * query rows of an attention over shared keys, the keys read from memory once) */
    void (*dot_rows_q)(const float *const *q, int nq, const float *K, int ldk, int rows, int n,
                       float scale, float *const *out);
    /* axpy_rows(y[i], p[i], V, ..) for i < nq <= PTTS_ROWS_Q: exactly those calls (the values
     * read once, every y in registers) */
    void (*axpy_rows_q)(float *const *y, const float *const *p, int nq, const float *V, int ldv,
                        int rows, int n);
    /* dot_rows_q and axpy_rows_q over float16 rows (IEEE binary16, the KV caches of the
     * reduced-precision modes): exactly this table's dot_rows_q / axpy_rows_q over the rows
     * widened to float32, which is exact (the keys and values read in half the bytes) */
    void (*dot_rows_q_h)(const float *const *q, int nq, const uint16_t *K, int ldk, int rows, int n,
                         float scale, float *const *out);
    void (*axpy_rows_q_h)(float *const *y, const float *const *p, int nq, const uint16_t *V,
                          int ldv, int rows, int n);
    /* y += a * x */
    void (*axpy)(float *y, float a, const float *x, int n);
    /* y[i] = x[i] rounded to float16, the bits of half.h's st_f32_to_f16 (nearest even,
     * overflow to inf, NaNs quiet; F16C / FCVTN where the ISA has them): what a float16 KV
     * cache stores */
    void (*f16_from_f32)(uint16_t *y, const float *x, size_t n);
} ptts_kernels;

const ptts_kernels *ptts_kernels_ref(void);
/* The best variant for this CPU, capped by PTTS_ISA. Never NULL (falls back to ref). */
const ptts_kernels *ptts_kernels_best(void);
/* The software prefetches that pay on this CPU (gemm_loop.h), a set of flags: PTTS_PF_STREAM,
 * the *_stream entries' weights fetched into L2 ahead ("streamed matrices": x86, Intel and
 * AMD), PTTS_PF_PANEL, the panels of 16-row calls ("panels": Intel; neutral on a Zen 4). 0 on
 * other architectures (not measured). */
enum { PTTS_PF_STREAM = 1, PTTS_PF_PANEL = 2 };
int ptts_cpu_prefetch(void);
/* Every variant this build has and this CPU runs (ref first); returns the count. */
int ptts_kernels_all(const ptts_kernels **out, int max);

#endif
