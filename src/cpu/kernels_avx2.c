/*
 * kernels_avx2.c - the AVX2 + FMA + F16C kernel table (see kernels.h for the contract and
 * kernels_ref.c for the specification). The structure is that of kernels_avx512.c with 8-lane
 * vectors and 16 registers:
 *   - gemm register tile: 4 rows of W x NB = 3 rows of X (12 accumulators). Weights are widened
 *     exactly (bf16 by a 16-bit shift, int8 through int32), f32 accumulation, so results differ
 *     from the reference only by the order of additions.
 *   - K tails: X through vmaskmovps (no reads past the row), the W tail through a zero-padded
 *     8-element copy (AVX2 has no masked 8/16-bit loads). m tails use a 1-row tile, N tails
 *     tiles with NB = 1..2.
 *   - Loop order and X panels (about 256 KiB, kept in L2) as in kernels_avx512.c: every W row is
 *     streamed from memory once per call for N <= 15 at K <= 4096.
 * Elementwise kernels: the same exp / expm1 approximations (and GELU through exp) as
 * kernels_avx512.c, with the
 * power of two built in the exponent field in two halves (no vscalefps), so that subnormal
 * results of exp are rounded once and kept.
 */
#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
AI __m256 ldw_tail(int wt, const void *w, size_t off, int r) {
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

AI __m128 hsum4(__m256 a, __m256 b, __m256 c, __m256 d) {
    __m256 s = _mm256_hadd_ps(_mm256_hadd_ps(a, b), _mm256_hadd_ps(c, d));
    return _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
}

AI float hsum(__m256 a) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

AI float hmax(__m256 a) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

AI void tile4(int wt, int nb, int K, const float *X, int ldx, const void *W, int m,
              const float *scale, const float *b, float *Y, int ldy) {
    __m256 acc[4][NB];
    for (int r = 0; r < 4; r++)
        for (int n = 0; n < nb; n++)
            acc[r][n] = _mm256_setzero_ps();
    size_t row = (size_t)m * (size_t)K;
    int k = 0;
    for (; k + 8 <= K; k += 8) {
        __m256 xv[NB];
        for (int n = 0; n < nb; n++)
            xv[n] = _mm256_loadu_ps(X + (size_t)n * ldx + k);
        for (int r = 0; r < 4; r++) {
            __m256 w = ldw(wt, W, row + (size_t)r * K + k);
            for (int n = 0; n < nb; n++)
                acc[r][n] = _mm256_fmadd_ps(w, xv[n], acc[r][n]);
        }
    }
    if (k < K) {
        __m256i mk = tail_mask(K - k);
        __m256 xv[NB];
        for (int n = 0; n < nb; n++)
            xv[n] = _mm256_maskload_ps(X + (size_t)n * ldx + k, mk);
        for (int r = 0; r < 4; r++) {
            __m256 w = ldw_tail(wt, W, row + (size_t)r * K + k, K - k);
            for (int n = 0; n < nb; n++)
                acc[r][n] = _mm256_fmadd_ps(w, xv[n], acc[r][n]);
        }
    }
    for (int n = 0; n < nb; n++) {
        __m128 s = hsum4(acc[0][n], acc[1][n], acc[2][n], acc[3][n]);
        if (wt == WT_Q8) s = _mm_mul_ps(s, _mm_loadu_ps(scale + m));
        if (b) s = _mm_add_ps(s, _mm_loadu_ps(b + m));
        _mm_storeu_ps(Y + (size_t)n * ldy + m, s);
    }
}

AI void tile1(int wt, int nb, int K, const float *X, int ldx, const void *W, int m,
              const float *scale, const float *b, float *Y, int ldy) {
    __m256 acc[NB];
    for (int n = 0; n < nb; n++)
        acc[n] = _mm256_setzero_ps();
    size_t row = (size_t)m * (size_t)K;
    int k = 0;
    for (; k + 8 <= K; k += 8) {
        __m256 w = ldw(wt, W, row + k);
        for (int n = 0; n < nb; n++)
            acc[n] = _mm256_fmadd_ps(w, _mm256_loadu_ps(X + (size_t)n * ldx + k), acc[n]);
    }
    if (k < K) {
        __m256i mk = tail_mask(K - k);
        __m256 w = ldw_tail(wt, W, row + k, K - k);
        for (int n = 0; n < nb; n++)
            acc[n] = _mm256_fmadd_ps(w, _mm256_maskload_ps(X + (size_t)n * ldx + k, mk), acc[n]);
    }
    for (int n = 0; n < nb; n++) {
        float s = hsum(acc[n]);
        if (wt == WT_Q8) s *= scale[m];
        if (b) s += b[m];
        Y[(size_t)n * ldy + m] = s;
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
        int m = m0;
        for (; m + 4 <= m1; m += 4) {
            int n = n0;
            for (; n + NB <= n1; n += NB)
                tile4(wt, NB, K, X + (size_t)n * ldx, ldx, W, m, scale, b, Y + (size_t)n * ldy,
                      ldy);
            const float *x = X + (size_t)n * ldx;
            float *y = Y + (size_t)n * ldy;
            switch (n1 - n) {
            case 2: tile4(wt, 2, K, x, ldx, W, m, scale, b, y, ldy); break;
            case 1: tile4(wt, 1, K, x, ldx, W, m, scale, b, y, ldy); break;
            default: break;
            }
        }
        for (; m < m1; m++) {
            int n = n0;
            for (; n + NB <= n1; n += NB)
                tile1(wt, NB, K, X + (size_t)n * ldx, ldx, W, m, scale, b, Y + (size_t)n * ldy,
                      ldy);
            const float *x = X + (size_t)n * ldx;
            float *y = Y + (size_t)n * ldy;
            switch (n1 - n) {
            case 2: tile1(wt, 2, K, x, ldx, W, m, scale, b, y, ldy); break;
            case 1: tile1(wt, 1, K, x, ldx, W, m, scale, b, y, ldy); break;
            default: break;
            }
        }
    }
}

static void gemm_f32_avx2(int N, int K, const float *X, int ldx, const float *W, const float *b,
                          float *Y, int ldy, int m0, int m1) {
    gemm_any(WT_F32, N, K, X, ldx, W, NULL, b, Y, ldy, m0, m1);
}

static void gemm_bf16_avx2(int N, int K, const float *X, int ldx, const uint16_t *W, const float *b,
                           float *Y, int ldy, int m0, int m1) {
    gemm_any(WT_BF16, N, K, X, ldx, W, NULL, b, Y, ldy, m0, m1);
}

static void gemm_q8_avx2(int N, int K, const float *X, int ldx, const int8_t *W, const float *scale,
                         const float *b, float *Y, int ldy, int m0, int m1) {
    gemm_any(WT_Q8, N, K, X, ldx, W, scale, b, Y, ldy, m0, m1);
}

/* ---- elementwise ------------------------------------------------------------------------ */

#define ROUND_NEAREST (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* 2^n for integral n in [-126, 127] */
AI __m256 pow2i(__m256i n) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23));
}

AI __m256 exp8(__m256 x) {
    x = _mm256_max_ps(_mm256_set1_ps(-104.f), x); /* NaN propagates (second operand) */
    x = _mm256_min_ps(_mm256_set1_ps(89.f), x);
    __m256 n =
        _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)), ROUND_NEAREST);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r);
    p = _mm256_add_ps(p, _mm256_set1_ps(1.f));
    /* n in [-150, 128]: scale by 2^(n/2) twice so both factors are normal. */
    __m256i ni = _mm256_cvtps_epi32(n);
    __m256i n1 = _mm256_srai_epi32(ni, 1);
    __m256i n2 = _mm256_sub_epi32(ni, n1);
    return _mm256_mul_ps(_mm256_mul_ps(p, pow2i(n1)), pow2i(n2));
}

AI __m256 expm1_neg8(__m256 x) {
    x = _mm256_max_ps(_mm256_set1_ps(-87.f), x);
    __m256 n =
        _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)), ROUND_NEAREST);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(2.48015873e-5f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.98412698e-4f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.38888889e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.33333333e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.16666667e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.66666667e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r);
    __m256 s = pow2i(_mm256_cvtps_epi32(n)); /* n >= -126 */
    return _mm256_fmadd_ps(s, p, _mm256_sub_ps(s, _mm256_set1_ps(1.f)));
}

/* tanh GELU as x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3): the same function as
 * 0.5 x (1 + tanh u) without the cancellation of 1 + tanh for negative x; |x| large gives x or
 * -0 (exp saturates), NaN propagates. */
AI __m256 gelu8(__m256 x) {
    __m256 x3 = _mm256_mul_ps(_mm256_mul_ps(x, x), x);
    __m256 u = _mm256_mul_ps(_mm256_set1_ps(0.7978845608028654f),
                          _mm256_fmadd_ps(x3, _mm256_set1_ps(0.044715f), x));
    __m256 e = exp8(_mm256_mul_ps(u, _mm256_set1_ps(-2.f)));
    return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.f), e));
}

AI __m256 silu8(__m256 x) {
    __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), x));
    return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.f), e));
}

AI __m256 elu8(__m256 x) {
    __m256 neg = expm1_neg8(_mm256_min_ps(_mm256_setzero_ps(), x));
    __m256 keep = _mm256_or_ps(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GT_OQ),
                               _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    return _mm256_blendv_ps(neg, x, keep);
}

static void gelu_avx2(float *x, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(x + i, gelu8(_mm256_loadu_ps(x + i)));
    if (i < n) {
        __m256i mk = tail_mask(n - i);
        _mm256_maskstore_ps(x + i, mk, gelu8(_mm256_maskload_ps(x + i, mk)));
    }
}

static void silu_avx2(float *y, const float *x, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, silu8(_mm256_loadu_ps(x + i)));
    if (i < n) {
        __m256i mk = tail_mask(n - i);
        _mm256_maskstore_ps(y + i, mk, silu8(_mm256_maskload_ps(x + i, mk)));
    }
}

static void elu_avx2(float *y, const float *x, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, elu8(_mm256_loadu_ps(x + i)));
    if (i < n) {
        __m256i mk = tail_mask(n - i);
        _mm256_maskstore_ps(y + i, mk, elu8(_mm256_maskload_ps(x + i, mk)));
    }
}

static void softmax_avx2(float *x, int n) {
    if (n <= 0) return;
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
    __m256 mx = ninf;
    int i = 0;
    for (; i + 8 <= n; i += 8)
        mx = _mm256_max_ps(mx, _mm256_loadu_ps(x + i));
    if (i < n) {
        __m256i mk = tail_mask(n - i);
        __m256 v = _mm256_blendv_ps(ninf, _mm256_maskload_ps(x + i, mk), _mm256_castsi256_ps(mk));
        mx = _mm256_max_ps(mx, v);
    }
    __m256 mv = _mm256_set1_ps(hmax(mx));
    __m256 s = _mm256_setzero_ps();
    for (i = 0; i + 8 <= n; i += 8) {
        __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv));
        _mm256_storeu_ps(x + i, e);
        s = _mm256_add_ps(s, e);
    }
    if (i < n) {
        __m256i mk = tail_mask(n - i);
        __m256 e = exp8(_mm256_sub_ps(_mm256_maskload_ps(x + i, mk), mv));
        e = _mm256_and_ps(e, _mm256_castsi256_ps(mk));
        _mm256_maskstore_ps(x + i, mk, e);
        s = _mm256_add_ps(s, e);
    }
    __m256 inv = _mm256_set1_ps(1.f / hsum(s));
    for (i = 0; i + 8 <= n; i += 8)
        _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), inv));
    if (i < n) {
        __m256i mk = tail_mask(n - i);
        _mm256_maskstore_ps(x + i, mk, _mm256_mul_ps(_mm256_maskload_ps(x + i, mk), inv));
    }
}

static void layernorm_avx2(float *y, const float *x, const float *w, const float *b, int n,
                           float eps) {
    if (n <= 0) return;
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = _mm256_add_ps(s0, _mm256_loadu_ps(x + i));
        s1 = _mm256_add_ps(s1, _mm256_loadu_ps(x + i + 8));
    }
    for (; i + 8 <= n; i += 8)
        s0 = _mm256_add_ps(s0, _mm256_loadu_ps(x + i));
    if (i < n) s1 = _mm256_add_ps(s1, _mm256_maskload_ps(x + i, tail_mask(n - i)));
    float mean = hsum(_mm256_add_ps(s0, s1)) / (float)n;
    __m256 mv = _mm256_set1_ps(mean);
    s0 = _mm256_setzero_ps();
    s1 = _mm256_setzero_ps();
    for (i = 0; i + 8 <= n; i += 8) {
        __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + i), mv);
        s0 = _mm256_fmadd_ps(d, d, s0);
    }
    if (i < n) {
        __m256i mk = tail_mask(n - i);
        __m256 d = _mm256_and_ps(_mm256_sub_ps(_mm256_maskload_ps(x + i, mk), mv),
                                 _mm256_castsi256_ps(mk));
        s1 = _mm256_fmadd_ps(d, d, s1);
    }
    float var = hsum(_mm256_add_ps(s0, s1)) / (float)n;
    __m256 inv = _mm256_set1_ps(1.f / sqrtf(var + eps));
    for (i = 0; i < n; i += 8) {
        __m256i mk = tail_mask(n - i >= 8 ? 8 : n - i);
        __m256 v = _mm256_mul_ps(_mm256_sub_ps(_mm256_maskload_ps(x + i, mk), mv), inv);
        if (w) v = _mm256_mul_ps(v, _mm256_maskload_ps(w + i, mk));
        if (b) v = _mm256_add_ps(v, _mm256_maskload_ps(b + i, mk));
        _mm256_maskstore_ps(y + i, mk, v);
    }
}

static float dot_avx2(const float *a, const float *b, int n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(),
           s3 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
    }
    for (; i + 8 <= n; i += 8)
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    if (i < n) {
        __m256i mk = tail_mask(n - i);
        s1 = _mm256_fmadd_ps(_mm256_maskload_ps(a + i, mk), _mm256_maskload_ps(b + i, mk), s1);
    }
    return hsum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
}

static void axpy_avx2(float *y, float a, const float *x, int n) {
    __m256 av = _mm256_set1_ps(a);
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i,
                         _mm256_fmadd_ps(av, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    if (i < n) {
        __m256i mk = tail_mask(n - i);
        __m256 v =
            _mm256_fmadd_ps(av, _mm256_maskload_ps(x + i, mk), _mm256_maskload_ps(y + i, mk));
        _mm256_maskstore_ps(y + i, mk, v);
    }
}

static const ptts_kernels k_avx2 = {
    .isa = "avx2",
    .gemm_f32 = gemm_f32_avx2,
    .gemm_bf16 = gemm_bf16_avx2,
    .gemm_q8 = gemm_q8_avx2,
    .layernorm = layernorm_avx2,
    .softmax = softmax_avx2,
    .gelu = gelu_avx2,
    .silu = silu_avx2,
    .elu = elu_avx2,
    .dot = dot_avx2,
    .axpy = axpy_avx2,
};

const ptts_kernels *ptts_kernels_avx2(void);
const ptts_kernels *ptts_kernels_avx2(void) { return &k_avx2; }
