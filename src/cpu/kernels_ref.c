/* kernels_ref.c - the scalar reference kernels: the specification every ISA variant is held to
 * (tests/test_kernels.c, test_kernels_elem.c). Plain loops, float32 accumulation in index
 * order. */
#include <math.h>
#include <string.h>

#include "half.h"
#include "kernels.h"

static void gemm_f32_ref(int N, int K, const float *X, int ldx, const float *W, const float *b,
                         float *Y, int ldy, int m0, int m1) {
    for (int n = 0; n < N; n++) {
        const float *x = X + (size_t)n * ldx;
        for (int m = m0; m < m1; m++) {
            const float *w = W + (size_t)m * K;
            float acc = 0.f;
            for (int k = 0; k < K; k++)
                acc += x[k] * w[k];
            Y[(size_t)n * ldy + m] = acc + (b ? b[m] : 0.f);
        }
    }
}

static void gemm_f32_panel_ref(int K, const float *X, int ldx, const float *Wp, const float *b,
                               float *Y, int ldy, int M, int n0, int n1, int p0, int p1) {
    for (int n = n0; n < n1; n++) {
        const float *x = X + (size_t)n * ldx;
        for (int m = p0 * PTTS_PANEL; m < M && m < p1 * PTTS_PANEL; m++) {
            const float *w = Wp + (size_t)(m / PTTS_PANEL) * K * PTTS_PANEL + m % PTTS_PANEL;
            float acc = 0.f;
            for (int k = 0; k < K; k++)
                acc += x[k] * w[(size_t)k * PTTS_PANEL];
            Y[(size_t)n * ldy + m] = acc + (b ? b[m] : 0.f);
        }
    }
}

/* ---- bf16 panels (vdpbf16ps arithmetic, kernels.h) ---- */

/* bf16 <-> f32 as the weight files define them (safetensors.c): widening is exact; narrowing
 * rounds to nearest even, NaN stays a quiet NaN, overflow carries into inf. Defined here too so
 * that the kernels depend on nothing above them. */
static float bf16_f32(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint16_t f32_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1)) >> 16);
}

size_t ptts_bf16_panel_elems(int out, int in) {
    return (size_t)((out + PTTS_PANEL - 1) / PTTS_PANEL) * (size_t)((in + 1) / 2) * PTTS_PANEL * 2;
}

void ptts_bf16_panel_pack(const float *w, int out, int in, uint16_t *wp16) {
    const int np = (out + PTTS_PANEL - 1) / PTTS_PANEL, k2n = (in + 1) / 2;
    for (int p = 0; p < np; p++)
        for (int k2 = 0; k2 < k2n; k2++)
            for (int j = 0; j < PTTS_PANEL; j++)
                for (int i = 0; i < 2; i++) {
                    int m = p * PTTS_PANEL + j, k = 2 * k2 + i;
                    float v = m < out && k < in ? w[(size_t)m * in + k] : 0.f;
                    uint16_t h = f32_bf16(v);
                    if (!(h & 0x7f80)) h &= 0x8000; /* subnormal: read as a signed 0 */
                    wp16[(((size_t)p * k2n + k2) * PTTS_PANEL + j) * 2 + i] = h;
                }
}

/* A bf16 operand as vdpbf16ps reads it: subnormals are 0 (sign kept). */
static float bf16_daz(uint16_t h) {
    return (h & 0x7f80) ? bf16_f32(h) : bf16_f32((uint16_t)(h & 0x8000));
}

uint16_t ptts_bf16_round(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) == 0) return (uint16_t)((u >> 16) & 0x8000);
    return f32_bf16(x);
}

static float ftz(float v) { return fabsf(v) < 0x1p-126f ? copysignf(0.f, v) : v; }

static void gemm_bf16_panel_ref(int K, const float *X, int ldx, const uint16_t *Wp16,
                                const float *b, float *Y, int ldy, int M, int n0, int n1, int p0,
                                int p1) {
    const int k2n = (K + 1) / 2;
    for (int n = n0; n < n1; n++) {
        const float *x = X + (size_t)n * ldx;
        for (int m = p0 * PTTS_PANEL; m < M && m < p1 * PTTS_PANEL; m++) {
            const uint16_t *w = Wp16 + (size_t)(m / PTTS_PANEL) * k2n * PTTS_PANEL * 2 +
                                (size_t)(m % PTTS_PANEL) * 2;
            float acc = 0.f;
            for (int k2 = 0; k2 < k2n; k2++) {
                const uint16_t *wk = w + (size_t)k2 * PTTS_PANEL * 2;
                float xe = bf16_daz(ptts_bf16_round(x[2 * k2]));
                float xo = 2 * k2 + 1 < K ? bf16_daz(ptts_bf16_round(x[2 * k2 + 1])) : 0.f;
                acc = ftz(fmaf(xo, bf16_daz(wk[1]), acc));
                acc = ftz(fmaf(xe, bf16_daz(wk[0]), acc));
            }
            Y[(size_t)n * ldy + m] = acc + (b ? b[m] : 0.f);
        }
    }
}

static void gemm_bf16_ref(int N, int K, const float *X, int ldx, const uint16_t *W, const float *b,
                          float *Y, int ldy, int m0, int m1) {
    for (int n = 0; n < N; n++) {
        const float *x = X + (size_t)n * ldx;
        for (int m = m0; m < m1; m++) {
            const uint16_t *w = W + (size_t)m * K;
            float acc = 0.f;
            for (int k = 0; k < K; k++)
                acc += x[k] * bf16_f32(w[k]);
            Y[(size_t)n * ldy + m] = acc + (b ? b[m] : 0.f);
        }
    }
}

static void gemm_q8_ref(int N, int K, const float *X, int ldx, const int8_t *W, const float *scale,
                        const float *b, float *Y, int ldy, int m0, int m1) {
    for (int n = 0; n < N; n++) {
        const float *x = X + (size_t)n * ldx;
        for (int m = m0; m < m1; m++) {
            const int8_t *w = W + (size_t)m * K;
            float acc = 0.f;
            for (int k = 0; k < K; k++)
                acc += x[k] * (float)w[k];
            Y[(size_t)n * ldy + m] = acc * scale[m] + (b ? b[m] : 0.f);
        }
    }
}

/* The quantisation of one row of X for gemm_q8q (kernels.h): q[k] in [-127, 127], returns d. */
static float quant_row_ref(int K, const float *x, int8_t *q) {
    float amax = 0.f;
    for (int k = 0; k < K; k++)
        amax = fmaxf(amax, fabsf(x[k]));
    if (!(amax > 0.f)) {
        for (int k = 0; k < K; k++)
            q[k] = 0;
        return 0.f;
    }
    float id = 127.f / amax;
    for (int k = 0; k < K; k++) {
        float v = nearbyintf(x[k] * id); /* round to nearest even (default rounding mode) */
        q[k] = (int8_t)(v > 127.f ? 127 : v < -127.f ? -127 : (int)v);
    }
    return amax / 127.f;
}

static void gemm_q8q_ref(int N, int K, const float *X, int ldx, const int8_t *W, const float *scale,
                         const float *b, float *Y, int ldy, int m0, int m1) {
    if (K > PTTS_Q8Q_KMAX) return; /* outside the contract (kernels.h) */
    int8_t q[PTTS_Q8Q_KMAX];
    for (int n = 0; n < N; n++) {
        float d = quant_row_ref(K, X + (size_t)n * ldx, q);
        for (int m = m0; m < m1; m++) {
            const int8_t *w = W + (size_t)m * K;
            int32_t acc = 0;
            for (int k = 0; k < K; k++)
                acc += q[k] * (int32_t)w[k];
            float y = (float)acc * d;
            y = y * scale[m];
            Y[(size_t)n * ldy + m] = y + (b ? b[m] : 0.f);
        }
    }
}

static void layernorm_ref(float *y, const float *x, const float *w, const float *b, int n,
                          float eps) {
    float mean = 0.f;
    for (int i = 0; i < n; i++)
        mean += x[i];
    mean /= (float)n;
    float var = 0.f;
    for (int i = 0; i < n; i++) {
        float d = x[i] - mean;
        var += d * d;
    }
    var /= (float)n;
    float inv = 1.f / sqrtf(var + eps);
    for (int i = 0; i < n; i++) {
        float v = (x[i] - mean) * inv;
        if (w) v *= w[i];
        if (b) v += b[i];
        y[i] = v;
    }
}

static void softmax_ref(float *x, int n) {
    float mx = -INFINITY;
    for (int i = 0; i < n; i++)
        mx = x[i] > mx ? x[i] : mx;
    float s = 0.f;
    for (int i = 0; i < n; i++) {
        x[i] = expf(x[i] - mx);
        s += x[i];
    }
    float inv = 1.f / s;
    for (int i = 0; i < n; i++)
        x[i] *= inv;
}

/* The tanh form the released weights were trained with (MODEL.md section 3), in float32. */
static void gelu_ref(float *x, int n) {
    for (int i = 0; i < n; i++) {
        float v = x[i], u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
        x[i] = 0.5f * v * (1.f + tanhf(u));
    }
}

static void silu_ref(float *y, const float *x, int n) {
    for (int i = 0; i < n; i++)
        y[i] = x[i] / (1.f + expf(-x[i]));
}

static void elu_ref(float *y, const float *x, int n) {
    for (int i = 0; i < n; i++)
        y[i] = x[i] > 0.f ? x[i] : expm1f(x[i]);
}

static float dot_ref(const float *a, const float *b, int n) {
    float s = 0.f;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

static void axpy_ref(float *y, float a, const float *x, int n) {
    for (int i = 0; i < n; i++)
        y[i] += a * x[i];
}

/* the specification of the row versions: the single-row kernels in a loop */
static void dot_rows_ref(const float *q, const float *K, int ldk, int rows, int n, float scale,
                         float *out) {
    for (int r = 0; r < rows; r++)
        out[r] = dot_ref(q, K + (size_t)r * ldk, n) * scale;
}

static void axpy_rows_ref(float *y, const float *p, const float *V, int ldv, int rows, int n) {
    for (int r = 0; r < rows; r++)
        axpy_ref(y, p[r], V + (size_t)r * ldv, n);
}

static void dot_rows_q_ref(const float *const *q, int nq, const float *K, int ldk, int rows, int n,
                           float scale, float *const *out) {
    for (int i = 0; i < nq; i++)
        dot_rows_ref(q[i], K, ldk, rows, n, scale, out[i]);
}

static void axpy_rows_q_ref(float *const *y, const float *const *p, int nq, const float *V, int ldv,
                            int rows, int n) {
    for (int i = 0; i < nq; i++)
        axpy_rows_ref(y[i], p[i], V, ldv, rows, n);
}

/* the float16 forms: dot_ref and axpy_ref with each value widened (exact) as it is read */
static float dot_h_ref(const float *a, const uint16_t *b, int n) {
    float s = 0.f;
    for (int i = 0; i < n; i++)
        s += a[i] * st_f16_to_f32(b[i]);
    return s;
}

static void dot_rows_q_h_ref(const float *const *q, int nq, const uint16_t *K, int ldk, int rows,
                             int n, float scale, float *const *out) {
    for (int i = 0; i < nq; i++)
        for (int r = 0; r < rows; r++)
            out[i][r] = dot_h_ref(q[i], K + (size_t)r * ldk, n) * scale;
}

static void axpy_rows_q_h_ref(float *const *y, const float *const *p, int nq, const uint16_t *V,
                              int ldv, int rows, int n) {
    for (int i = 0; i < nq; i++)
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < n; c++)
                y[i][c] += p[i][r] * st_f16_to_f32(V[(size_t)r * ldv + c]);
}

static void f16_from_f32_ref(uint16_t *y, const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        y[i] = st_f32_to_f16(x[i]);
}

static const ptts_kernels k_ref = {
    .isa = "ref",
    .gemm_f32 = gemm_f32_ref,
    .gemm_f32_panel = gemm_f32_panel_ref,
    .gemm_bf16_panel = gemm_bf16_panel_ref,
    .gemm_bf16 = gemm_bf16_ref,
    .gemm_q8 = gemm_q8_ref,
    .gemm_q8q = gemm_q8q_ref,
    .gemm_f32_stream = gemm_f32_ref, /* the specification: no prefetch */
    .gemm_bf16_stream = gemm_bf16_ref,
    .gemm_q8q_stream = gemm_q8q_ref,
    .layernorm = layernorm_ref,
    .softmax = softmax_ref,
    .gelu = gelu_ref,
    .silu = silu_ref,
    .elu = elu_ref,
    .dot = dot_ref,
    .dot_rows = dot_rows_ref,
    .axpy = axpy_ref,
    .axpy_rows = axpy_rows_ref,
    .dot_rows_q = dot_rows_q_ref,
    .axpy_rows_q = axpy_rows_q_ref,
    .dot_rows_q_h = dot_rows_q_h_ref,
    .axpy_rows_q_h = axpy_rows_q_h_ref,
    .f16_from_f32 = f16_from_f32_ref,
};

const ptts_kernels *ptts_kernels_ref(void) { return &k_ref; }
