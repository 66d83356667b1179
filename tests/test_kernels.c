// ctest-label: unit
/*
 * test_kernels.c - every kernel table this build has and this CPU runs (ptts_kernels_all) held
 * against the scalar reference (kernels_ref.c, the specification), plus the thread pool.
 *
 * gemm (f32 / bf16 / q8): every K in an awkward list (1 .. 1025), N in {1,2,3,4,5,8,16,17},
 * m ranges with odd start and end, strides ldx > K and ldy > M, unaligned X / W / Y pointers,
 * with and without bias, and large N (several X panels). W and X are allocated tight (offset
 * by one element for misalignment) so that a sanitizer build catches reads past their ends.
 * Y is poisoned with a NaN bit pattern before the call; every element outside the written set
 * (margins before and after, the ldy gaps, the m outside [m0, m1)) must keep it bit for bit.
 * Tolerance: |y - y_ref| <= 1e-5 * (scale * sum_k |x_k w_k| + |b|) - the reference sums in
 * index order, the variants in 16 / 8 lane partial sums, so only rounding order differs; the
 * reference itself is checked the same way against a double-precision sum.
 * A gemm split over the m range in multiples of 4 through the pool must equal the unsplit call
 * bit for bit (the tiles are the same). gemm_q8q (X quantised) is held to the reference bit for
 * bit in every table (integer sums), the same cases. The *_stream entries (W prefetched ahead)
 * must give the plain entries' bits in every case.
 * The panel kernels: gemm_f32_panel against the row-major reference; gemm_bf16_panel (vdpbf16ps
 * arithmetic) bit for bit against its reference, which is checked against a double sum (the
 * amx table within kernels.h's bound; its own order of sums: tests/test_amx.c, to the bit).
 * Every table sets every entry (one arithmetic per precision mode: no caller fallbacks).
 *
 * Elementwise kernels: random data and special values (+-0, tiny, large +-, +-inf, NaN) with
 * per-kernel tolerances stated at each check; guard margins around every output. GELU's erf is
 * also measured against double-precision erf on a dense grid and the max errors are printed.
 *
 * The pool: many regions of varying n (0 .. 300) for pools of 1, 2, 4, 8 threads and NULL;
 * every task runs exactly once per region, tids are in range and no tid runs two tasks at once.
 *
 * CPU detection: the listed variants are checked against __builtin_cpu_supports, and PTTS_ISA
 * capping against the rank order ref < avx2 < avx512 < amx (amx's detection: test_amx.c); an
 * unknown PTTS_ISA is reported once through the log callback (the library never prints).
 */
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/kernels.h"
#include "half.h"
#include "pool.h"
#include "ptts.h"
#include "test.h"

/* ---- helpers ---------------------------------------------------------------------------- */

static const uint32_t POISON = 0x7fc0dead; /* a NaN no kernel produces */
static float poison_f(void) {
    float f;
    memcpy(&f, &POISON, 4);
    return f;
}
static int is_poison(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u == POISON;
}
static float bf16_to_f32(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint16_t f32_to_bf16_trunc(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

/* ---- gemm ------------------------------------------------------------------------------- */

enum { T_F32, T_BF16, T_Q8, T_Q8Q };
static const char *tname[] = {"f32", "bf16", "q8", "q8q"};

typedef struct {
    int N, K, M, ldx, ldy, m0, m1, wt, bias;
} gcase;

static void call_gemm(const ptts_kernels *k, const gcase *c, const float *X, const void *W,
                      const float *scale, const float *b, float *Y, int m0, int m1) {
    if (c->wt == T_F32)
        k->gemm_f32(c->N, c->K, X, c->ldx, W, b, Y, c->ldy, m0, m1);
    else if (c->wt == T_BF16)
        k->gemm_bf16(c->N, c->K, X, c->ldx, W, b, Y, c->ldy, m0, m1);
    else if (c->wt == T_Q8)
        k->gemm_q8(c->N, c->K, X, c->ldx, W, scale, b, Y, c->ldy, m0, m1);
    else
        k->gemm_q8q(c->N, c->K, X, c->ldx, W, scale, b, Y, c->ldy, m0, m1);
}

/* The *_stream entry of the case's type (gemm_q8 has none: the plain entry). */
static void call_gemm_stream(const ptts_kernels *k, const gcase *c, const float *X, const void *W,
                             const float *scale, const float *b, float *Y, int m0, int m1) {
    if (c->wt == T_F32)
        k->gemm_f32_stream(c->N, c->K, X, c->ldx, W, b, Y, c->ldy, m0, m1);
    else if (c->wt == T_BF16)
        k->gemm_bf16_stream(c->N, c->K, X, c->ldx, W, b, Y, c->ldy, m0, m1);
    else if (c->wt == T_Q8)
        k->gemm_q8(c->N, c->K, X, c->ldx, W, scale, b, Y, c->ldy, m0, m1);
    else
        k->gemm_q8q_stream(c->N, c->K, X, c->ldx, W, scale, b, Y, c->ldy, m0, m1);
}

static double wval(int wt, const void *W, size_t i) {
    if (wt == T_F32) return ((const float *)W)[i];
    if (wt == T_BF16) return bf16_to_f32(((const uint16_t *)W)[i]);
    return ((const int8_t *)W)[i];
}

typedef struct {
    const ptts_kernels *k;
    const gcase *c;
    const float *X;
    const void *W;
    const float *scale, *b;
    float *Y;
    int chunk;
} split_ctx;

static void split_task(void *ctx, int task, int tid) {
    (void)tid;
    split_ctx *s = ctx;
    int m0 = s->c->m0 + task * s->chunk;
    int m1 = m0 + s->chunk < s->c->m1 ? m0 + s->chunk : s->c->m1;
    call_gemm(s->k, s->c, s->X, s->W, s->scale, s->b, s->Y, m0, m1);
}

static double worst_gemm_err[8][4]; /* [variant][wtype], in units of the magnitude */

/* Returns 0 on success; reports the first failure of a case. */
static void run_gemm_case(const ptts_kernels *k, int vi, const gcase *c, ptts_pool *pool) {
    const int N = c->N, K = c->K, M = c->M;
    size_t wsize = c->wt == T_F32 ? 4 : c->wt == T_BF16 ? 2 : 1;
    size_t nw = (size_t)M * K;
    size_t nx = (size_t)(N - 1) * c->ldx + K;
    const int margin = 7;
    size_t ny = (size_t)(N - 1) * c->ldy + M + 2 * margin;

    /* tight buffers, misaligned by one element */
    char *wbuf = malloc(nw * wsize + wsize);
    float *xbuf = malloc((nx + 1) * sizeof(float));
    float *ybuf = malloc((ny + 1) * sizeof(float));
    float *yref = malloc((ny + 1) * sizeof(float));
    float *ysplit = malloc((ny + 1) * sizeof(float));
    float *scale = malloc((size_t)M * sizeof(float));
    float *bias = malloc((size_t)M * sizeof(float));
    REQUIRE(wbuf && xbuf && ybuf && yref && ysplit && scale && bias);
    void *W = wbuf + wsize;
    float *X = xbuf + 1;
    for (size_t i = 0; i < nx; i++)
        X[i] = test_frand(-1.f, 1.f);
    if (c->wt == T_Q8Q && N > 1) /* an all-zero row (step 0) */
        for (int kk = 0; kk < K; kk++)
            X[(size_t)c->ldx + kk] = 0.f;
    for (size_t i = 0; i < nw; i++) {
        if (c->wt == T_F32)
            ((float *)W)[i] = test_frand(-1.f, 1.f);
        else if (c->wt == T_BF16)
            ((uint16_t *)W)[i] = f32_to_bf16_trunc(test_frand(-1.f, 1.f));
        else
            ((int8_t *)W)[i] = (int8_t)(int)(test_rnd() % 256 - 128);
    }
    for (int m = 0; m < M; m++) {
        scale[m] = c->wt >= T_Q8 ? test_frand(0.001f, 0.02f) : 1.f;
        bias[m] = test_frand(-2.f, 2.f);
    }
    const float *b = c->bias ? bias : NULL;
    for (size_t i = 0; i < ny + 1; i++)
        ybuf[i] = yref[i] = ysplit[i] = poison_f();
    float *Y = ybuf + 1 + margin, *YR = yref + 1 + margin, *YS = ysplit + 1 + margin;

    call_gemm(ptts_kernels_ref(), c, X, W, scale, b, YR, c->m0, c->m1);
    call_gemm(k, c, X, W, scale, b, Y, c->m0, c->m1);

    int bad_guard = 0, bad_val = 0, bad_ref = 0;
    double worst = 0;
    for (size_t i = 0; i < ny + 1; i++) {
        long off = (long)i - 1 - margin;
        int n = off >= 0 ? (int)(off / c->ldy) : -1;
        int m = off >= 0 ? (int)(off % c->ldy) : -1;
        int written = off >= 0 && n < N && m >= c->m0 && m < c->m1;
        if (!written) {
            if (!is_poison(ybuf[i]) && !bad_guard++)
                fprintf(stderr, "  guard overwritten at offset %ld (n %d, m %d)\n", off, n, m);
            continue;
        }
        const float *x = X + (size_t)n * c->ldx;
        double exact = 0, mag = 0, qbound = 0, amax = 0;
        for (int kk = 0; kk < K; kk++) {
            double wv = wval(c->wt, W, (size_t)m * K + kk);
            double p = (double)x[kk] * wv;
            exact += p;
            mag += fabs(p);
            qbound += fabs(wv);
            amax = fabs(x[kk]) > amax ? fabs(x[kk]) : amax;
        }
        /* q8q: X rounded to steps of amax / 127, so up to half a step per element */
        qbound = c->wt == T_Q8Q ? 0.5 * amax / 127. * qbound * scale[m] * (1 + 1e-6) : 0.;
        exact = exact * scale[m] + (b ? b[m] : 0.);
        mag = mag * scale[m] + (b ? fabs(b[m]) : 0.) + 1e-30;
        double e = fabs((double)ybuf[i] - (double)yref[i]) / mag;
        /* q8q: integer sums, the reference's roundings: identical bits */
        if (!(c->wt == T_Q8Q ? e == 0 : e <= 1e-5) && !bad_val++)
            fprintf(stderr, "  n %d m %d: got %.9g ref %.9g (err %.3g of magnitude %.3g)\n", n, m,
                    ybuf[i], yref[i], e, mag);
        if (e > worst) worst = e;
        if (!(fabs((double)yref[i] - exact) <= 1e-5 * mag + qbound) && !bad_ref++)
            fprintf(stderr, "  reference n %d m %d: %.9g vs double %.9g\n", n, m, yref[i], exact);
    }
    if (worst > worst_gemm_err[vi][c->wt]) worst_gemm_err[vi][c->wt] = worst;

    /* split through the pool in chunks of a multiple of 4 rows: identical bits */
    int bad_split = 0;
    if (pool && c->m1 > c->m0 && c->m0 % 4 == 0) {
        split_ctx s = {k, c, X, W, scale, b, YS, 8};
        ptts_pool_run(pool, (c->m1 - c->m0 + 7) / 8, split_task, &s);
        bad_split = memcmp(ybuf, ysplit, (ny + 1) * sizeof(float)) != 0;
    }
    /* the streamed entry (W prefetched ahead): the plain entry's bits, guards included */
    for (size_t i = 0; i < ny + 1; i++)
        ysplit[i] = poison_f();
    call_gemm_stream(k, c, X, W, scale, b, YS, c->m0, c->m1);
    const int bad_stream = memcmp(ybuf, ysplit, (ny + 1) * sizeof(float)) != 0;
    CHECKF(!bad_guard && !bad_val && !bad_ref && !bad_split && !bad_stream,
           "%s gemm_%s N=%d K=%d M=%d m=[%d,%d) ldx=%d ldy=%d bias=%d: %d guard, %d value, "
           "%d reference, split %s, stream %s",
           k->isa, tname[c->wt], N, K, M, c->m0, c->m1, c->ldx, c->ldy, c->bias, bad_guard, bad_val,
           bad_ref, bad_split ? "differs" : "ok", bad_stream ? "differs" : "ok");
    free(wbuf), free(xbuf), free(ybuf), free(yref), free(ysplit), free(scale), free(bias);
}

static void test_gemm(const ptts_kernels *k, int vi, ptts_pool *pool) {
    static const int Ks[] = {1,  2,  3,  7,   15,  16,   17,   31,  33,
                             63, 64, 65, 127, 255, 1023, 1024, 1025};
    static const int Ns[] = {1, 2, 3, 4, 5, 8, 16, 17};
    int cases = 0;
    for (int wt = 0; wt < 4; wt++)
        for (size_t ki = 0; ki < sizeof Ks / sizeof Ks[0]; ki++)
            for (size_t ni = 0; ni < sizeof Ns / sizeof Ns[0]; ni++) {
                int K = Ks[ki], N = Ns[ni];
                int M = 13 + (int)(test_rnd() % 8); /* 13 .. 20 */
                gcase c = {N, K, M,  K + (int)(ni % 3) * 3, M + 1 + (int)(ki % 4),
                           0, M, wt, (int)((ki + ni) & 1)};
                /* m ranges: all; odd start and end; a single row; 4-aligned start, odd end;
                 * empty */
                int ranges[5][2] = {{0, M}, {1, M - 2}, {M / 2, M / 2 + 1}, {4, M - 1}, {3, 3}};
                for (int r = 0; r < 5; r++) {
                    c.m0 = ranges[r][0];
                    c.m1 = ranges[r][1];
                    run_gemm_case(k, vi, &c, pool);
                    cases++;
                }
            }
    /* large N: several X panels, N tails, 4-row blocks with an odd m range */
    static const int big[][3] = {{130, 1025, 11}, {67, 4096, 9}, {301, 64, 6}, {40, 3, 5}};
    for (int wt = 0; wt < 4; wt++)
        for (int i = 0; i < 4; i++) {
            gcase c = {big[i][0], big[i][1], big[i][2], big[i][1] + 5, big[i][2] + 3, 1,
                       big[i][2], wt,        1};
            run_gemm_case(k, vi, &c, NULL);
            c.m0 = 0;
            run_gemm_case(k, vi, &c, pool);
            cases += 2;
        }
    printf("%-7s gemm: %d cases; worst |y - ref| / magnitude: f32 %.2g, bf16 %.2g, q8 %.2g "
           "(limit 1e-5), q8q %s\n",
           k->isa, cases, worst_gemm_err[vi][0], worst_gemm_err[vi][1], worst_gemm_err[vi][2],
           worst_gemm_err[vi][3] == 0 ? "0 (identical bits)" : "differs");
}

/* ---- elementwise ------------------------------------------------------------------------ */

static const int NSIZES[] = {0,  1,  2,  3,  5,  7,  8,   9,    15,  16,
                             17, 31, 33, 63, 64, 65, 127, 1000, 1025};

static float specials[] = {
    0.f,   -0.f,   1e-30f, -1e-30f, 1e-8f, -1e-8f, 0.5f,    -0.5f,    1.f,      -1.f,      3.f,
    -3.f,  9.f,    -9.f,   20.f,    -20.f, 50.f,   -50.f,   87.f,     -87.f,    88.7f,     -88.7f,
    100.f, -100.f, 104.f,  -104.f,  1e4f,  -1e4f,  FLT_MAX, -FLT_MAX, INFINITY, -INFINITY, NAN};
#define NSPECIAL ((int)(sizeof specials / sizeof specials[0]))

/* Fill n values: random in [-r, r] with some specials mixed in when `spec`. */
static void fill(float *x, int n, float r, int spec) {
    for (int i = 0; i < n; i++)
        x[i] = test_frand(-r, r);
    if (spec)
        for (int i = 0; i < n; i += 3)
            x[i] = specials[test_rnd() % NSPECIAL];
}

/* Same class: both NaN, or equal infinities, or both finite. */
static int same_class(float a, float b) {
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    if (isinf(a) || isinf(b)) return a == b;
    return 1;
}

typedef enum { E_GELU, E_SILU, E_ELU, E_SOFTMAX, E_AXPY } ekind;
static const char *ename[] = {"gelu", "silu", "elu", "softmax", "axpy"};

static void test_elementwise(const ptts_kernels *k) {
    const ptts_kernels *R = ptts_kernels_ref();
    const int margin = 5;
    for (int e = 0; e < 5; e++)
        for (size_t si = 0; si < sizeof NSIZES / sizeof NSIZES[0]; si++)
            for (int spec = 0; spec < 2; spec++) {
                int n = NSIZES[si];
                float *in = malloc(((size_t)n + 1) * sizeof(float));
                float *y0 = malloc(((size_t)n + 1) * sizeof(float));
                float *out = malloc(((size_t)n + 2 * margin + 1) * sizeof(float));
                float *ref = malloc(((size_t)n + 1) * sizeof(float));
                REQUIRE(in && y0 && out && ref);
                float range = e == E_SOFTMAX ? 30.f : 10.f;
                if (e == E_SOFTMAX && spec) range = 1000.f; /* softmax with inf / NaN: skip */
                fill(in, n, range, spec && e != E_SOFTMAX);
                fill(y0, n, 3.f, 0);
                float a = test_frand(-2.f, 2.f);
                for (int i = 0; i < n + 2 * margin + 1; i++)
                    out[i] = poison_f();
                float *y = out + 1 + margin; /* misaligned */
                memcpy(ref, e == E_AXPY ? y0 : in, (size_t)n * sizeof(float));
                memcpy(y, e == E_AXPY ? y0 : in, (size_t)n * sizeof(float));
                switch (e) {
                case E_GELU: R->gelu(ref, n), k->gelu(y, n); break;
                case E_SILU: R->silu(ref, in, n), k->silu(y, in, n); break;
                case E_ELU: R->elu(ref, in, n), k->elu(y, in, n); break;
                case E_SOFTMAX: R->softmax(ref, n), k->softmax(y, n); break;
                default: R->axpy(ref, a, in, n), k->axpy(y, a, in, n); break;
                }
                int bad = 0, badg = 0;
                for (int i = 0; i < margin; i++)
                    badg += !is_poison(out[1 + i]) + !is_poison(out[1 + margin + n + i]);
                badg += !is_poison(out[0]);
                for (int i = 0; i < n && !bad; i++) {
                    float g = y[i], r = ref[i], x = in[i];
                    double tol;
                    switch (e) {
                    case E_GELU: /* exp-based tanh: ~2.5e-7 abs on (1 + tanh), times x/2; rounding
                                  */
                        tol = 1.5e-7 * fabs(x) + 2.4e-7 * fabs(r) + 1e-37;
                        break;
                    case E_SILU: /* exp ~1 ulp, division, ref's expf: 4 ulp */
                    case E_ELU: tol = 5e-7 * fabs(r) + 1e-37; break;
                    case E_SOFTMAX: /* exp and a reordered sum */
                        tol = 2e-6 * fabs(r) + 1e-37;
                        break;
                    default: /* fma vs multiply-add */
                        tol = 1.2e-7 * (fabs(a * x) + fabs(y0[i])) + 1e-37;
                        break;
                    }
                    int ok = same_class(g, r) && (!isfinite(r) || fabs((double)g - r) <= tol);
                    if (e == E_ELU && x > 0) ok = g == r;
                    if (!ok) {
                        bad = 1;
                        fprintf(stderr, "  %s[%d] x=%.9g: got %.9g ref %.9g\n", ename[e], i, x, g,
                                r);
                    }
                }
                CHECKF(!bad && !badg, "%s %s n=%d specials=%d (%d guard values changed)", k->isa,
                       ename[e], n, spec, badg);
                free(in), free(y0), free(out), free(ref);
            }

    /* silu / elu may be called in place (y == x) */
    {
        float v[37], r[37];
        fill(v, 37, 10.f, 1);
        memcpy(r, v, sizeof v);
        R->silu(r, r, 37);
        k->silu(v, v, 37);
        int bad = 0;
        for (int i = 0; i < 37; i++)
            bad += !same_class(v[i], r[i]) ||
                   (isfinite(r[i]) && fabsf(v[i] - r[i]) > 5e-7f * fabsf(r[i]) + 1e-37f);
        CHECKF(!bad, "%s silu in place", k->isa);
    }
}

static void test_softmax_rows(const ptts_kernels *k) {
    /* constant row, single element, huge spread, -inf entries (masked attention) */
    float v[70], r[70];
    for (int i = 0; i < 70; i++)
        v[i] = 3.f;
    k->softmax(v, 70);
    int bad = 0;
    for (int i = 0; i < 70; i++)
        bad += fabsf(v[i] - 1.f / 70.f) > 1e-7f;
    CHECKF(!bad, "%s softmax constant row", k->isa);
    v[0] = -5.f;
    k->softmax(v, 1);
    CHECKF(v[0] == 1.f, "%s softmax single element: %g", k->isa, v[0]);
    for (int i = 0; i < 70; i++)
        v[i] = r[i] = (i % 5 == 0) ? -INFINITY : test_frand(-500.f, 500.f);
    ptts_kernels_ref()->softmax(r, 70);
    k->softmax(v, 70);
    bad = 0;
    double sum = 0;
    for (int i = 0; i < 70; i++) {
        bad += !(fabsf(v[i] - r[i]) <= 2e-6f * r[i] + 1e-37f);
        sum += v[i];
    }
    CHECKF(!bad && fabs(sum - 1.0) < 1e-5, "%s softmax with -inf and spread 1000 (sum %.8f)",
           k->isa, sum);
}

static void test_layernorm(const ptts_kernels *k) {
    const ptts_kernels *R = ptts_kernels_ref();
    for (size_t si = 0; si < sizeof NSIZES / sizeof NSIZES[0]; si++) {
        int n = NSIZES[si];
        if (n == 0) continue;
        for (int affine = 0; affine < 3; affine++) {
            float *x = malloc(((size_t)n + 1) * sizeof(float));
            float *w = malloc(((size_t)n + 1) * sizeof(float));
            float *b = malloc(((size_t)n + 1) * sizeof(float));
            float *out = malloc(((size_t)n + 11) * sizeof(float));
            float *ref = malloc(((size_t)n + 1) * sizeof(float));
            REQUIRE(x && w && b && out && ref);
            float offset = test_frand(-5.f, 5.f);
            for (int i = 0; i < n; i++) {
                x[i + 1] = offset + test_frand(-3.f, 3.f);
                w[i + 1] = test_frand(0.5f, 2.f);
                b[i + 1] = test_frand(-1.f, 1.f);
            }
            const float *wp = affine >= 1 ? w + 1 : NULL, *bp = affine == 2 ? b + 1 : NULL;
            for (int i = 0; i < n + 11; i++)
                out[i] = poison_f();
            float *y = out + 6;
            R->layernorm(ref, x + 1, wp, bp, n, 1e-5f);
            if (affine == 1) { /* in place (y == x) */
                memcpy(y, x + 1, (size_t)n * sizeof(float));
                k->layernorm(y, y, wp, bp, n, 1e-5f);
            } else {
                k->layernorm(y, x + 1, wp, bp, n, 1e-5f);
            }
            /* the mean and variance are summed in another order: ~1e-6 of the normalised
             * value, scaled by |w| <= 2 */
            int bad = 0, badg = 0;
            for (int i = 0; i < n; i++)
                bad += !(fabsf(y[i] - ref[i]) <= 2e-5f + 2e-6f * fabsf(ref[i]));
            for (int i = 0; i < 6; i++)
                badg += !is_poison(out[i]);
            for (int i = 0; i < 5; i++)
                badg += !is_poison(out[6 + n + i]);
            CHECKF(!bad && !badg, "%s layernorm n=%d affine=%d: %d values, %d guards", k->isa, n,
                   affine, bad, badg);
            free(x), free(w), free(b), free(out), free(ref);
        }
    }
    /* a constant row: variance 0, output b (or 0) */
    float c[33], yb[33];
    for (int i = 0; i < 33; i++)
        c[i] = 7.25f, yb[i] = (float)i;
    k->layernorm(c, c, NULL, yb, 33, 1e-5f);
    int bad = 0;
    for (int i = 0; i < 33; i++)
        bad += c[i] != (float)i;
    CHECKF(!bad, "%s layernorm constant row", k->isa);
}

static void test_dot(const ptts_kernels *k) {
    for (size_t si = 0; si < sizeof NSIZES / sizeof NSIZES[0]; si++) {
        int n = NSIZES[si];
        float *a = malloc(((size_t)n + 1) * sizeof(float));
        float *b = malloc(((size_t)n + 1) * sizeof(float));
        REQUIRE(a && b);
        double mag = 1e-30;
        for (int i = 0; i < n; i++) {
            a[i + 1] = test_frand(-1.f, 1.f);
            b[i + 1] = test_frand(-1.f, 1.f);
            mag += fabs((double)a[i + 1] * b[i + 1]);
        }
        float d = k->dot(a + 1, b + 1, n), r = ptts_kernels_ref()->dot(a + 1, b + 1, n);
        CHECKF(fabs((double)d - r) <= 1e-5 * mag, "%s dot n=%d: %.9g vs %.9g", k->isa, n, d, r);
        free(a), free(b);
    }
}

/* dot_rows / axpy_rows: bit for bit the table's own dot / axpy in a loop (the attention's
 * results must not depend on which is used), strided rows, head widths 64 and others; their
 * float16 forms bit for bit the float32 forms over the rows widened. */
static void test_rows(const ptts_kernels *k) {
    static const int NS[] = {64, 16, 63, 100};
    static const int ROWS[] = {0, 1, 7, 16, 17, 48, 300};
    for (size_t ni = 0; ni < sizeof NS / sizeof NS[0]; ni++)
        for (size_t ri = 0; ri < sizeof ROWS / sizeof ROWS[0]; ri++) {
            const int n = NS[ni], rows = ROWS[ri], ld = n + 37;
            float *q = malloc((size_t)n * sizeof(float));
            float *K = malloc(((size_t)rows * ld + 1) * sizeof(float));
            float *p = malloc(((size_t)rows + 1) * sizeof(float));
            float *o1 = malloc(((size_t)rows + 1) * sizeof(float));
            float *o2 = malloc(((size_t)rows + 1) * sizeof(float));
            float *y1 = malloc((size_t)n * sizeof(float)), *y2 = malloc((size_t)n * sizeof(float));
            REQUIRE(q && K && p && o1 && o2 && y1 && y2);
            for (int i = 0; i < n; i++)
                q[i] = test_frand(-1.f, 1.f);
            for (int i = 0; i < rows * ld; i++)
                K[i] = test_frand(-1.f, 1.f) * (i % 13 ? 1.f : 1e-6f); /* some float16 subnormals */
            /* the float16 forms' rows, and the same values widened for the float32 forms */
            uint16_t *Kh = malloc(((size_t)rows * ld + 1) * sizeof(uint16_t));
            float *Kw = malloc(((size_t)rows * ld + 1) * sizeof(float));
            REQUIRE(Kh && Kw);
            for (int i = 0; i < rows * ld; i++)
                Kw[i] = st_f16_to_f32(Kh[i] = st_f32_to_f16(K[i]));
            for (int r = 0; r < rows; r++)
                p[r] = test_frand(0.f, 1.f);
            for (int i = 0; i < n; i++)
                y1[i] = y2[i] = test_frand(-1.f, 1.f);
            k->dot_rows(q, K, ld, rows, n, 0.125f, o1);
            for (int r = 0; r < rows; r++)
                o2[r] = k->dot(q, K + (size_t)r * ld, n) * 0.125f;
            CHECKF(!memcmp(o1, o2, (size_t)rows * sizeof(float)),
                   "%s dot_rows n=%d rows=%d differs from dot", k->isa, n, rows);
            k->axpy_rows(y1, p, K, ld, rows, n);
            for (int r = 0; r < rows; r++)
                k->axpy(y2, p[r], K + (size_t)r * ld, n);
            CHECKF(!memcmp(y1, y2, (size_t)n * sizeof(float)),
                   "%s axpy_rows n=%d rows=%d differs from axpy", k->isa, n, rows);
            /* the _q forms: nq random queries (and vectors, weights) over the same rows, each
             * exactly its own dot_rows / axpy_rows */
            for (int nq = 1; nq <= PTTS_ROWS_Q; nq++) {
                float *qs[PTTS_ROWS_Q], *outs[PTTS_ROWS_Q], *ys[PTTS_ROWS_Q], *ps[PTTS_ROWS_Q];
                float *want = malloc(((size_t)rows + 1) * sizeof(float));
                REQUIRE(want);
                for (int i = 0; i < nq; i++) {
                    qs[i] = malloc((size_t)n * sizeof(float));
                    outs[i] = malloc(((size_t)rows + 1) * sizeof(float));
                    ys[i] = malloc((size_t)n * sizeof(float));
                    ps[i] = malloc(((size_t)rows + 1) * sizeof(float));
                    REQUIRE(qs[i] && outs[i] && ys[i] && ps[i]);
                    for (int e = 0; e < n; e++) {
                        qs[i][e] = test_frand(-1.f, 1.f);
                        ys[i][e] = test_frand(-1.f, 1.f);
                    }
                    for (int e = 0; e < rows; e++)
                        ps[i][e] = test_frand(0.f, 1.f);
                }
                k->dot_rows_q((const float *const *)qs, nq, K, ld, rows, n, 0.125f, outs);
                for (int i = 0; i < nq; i++) {
                    k->dot_rows(qs[i], K, ld, rows, n, 0.125f, want);
                    CHECKF(!memcmp(outs[i], want, (size_t)rows * sizeof(float)),
                           "%s dot_rows_q nq=%d n=%d rows=%d: query %d differs from dot_rows",
                           k->isa, nq, n, rows, i);
                }
                /* the float16 forms: exactly the float32 forms over the widened rows */
                k->dot_rows_q_h((const float *const *)qs, nq, Kh, ld, rows, n, 0.125f, outs);
                for (int i = 0; i < nq; i++) {
                    k->dot_rows(qs[i], Kw, ld, rows, n, 0.125f, want);
                    CHECKF(!memcmp(outs[i], want, (size_t)rows * sizeof(float)),
                           "%s dot_rows_q_h nq=%d n=%d rows=%d: query %d differs from dot_rows "
                           "on the widened rows",
                           k->isa, nq, n, rows, i);
                }
                float *yh[PTTS_ROWS_Q], *yw[PTTS_ROWS_Q];
                for (int i = 0; i < nq; i++) {
                    yh[i] = malloc((size_t)n * sizeof(float));
                    yw[i] = malloc((size_t)n * sizeof(float));
                    REQUIRE(yh[i] && yw[i]);
                    memcpy(yh[i], ys[i], (size_t)n * sizeof(float));
                    memcpy(yw[i], ys[i], (size_t)n * sizeof(float));
                }
                k->axpy_rows_q_h(yh, (const float *const *)ps, nq, Kh, ld, rows, n);
                k->axpy_rows_q(yw, (const float *const *)ps, nq, Kw, ld, rows, n);
                for (int i = 0; i < nq; i++) {
                    CHECKF(!memcmp(yh[i], yw[i], (size_t)n * sizeof(float)),
                           "%s axpy_rows_q_h nq=%d n=%d rows=%d: vector %d differs from "
                           "axpy_rows_q on the widened rows",
                           k->isa, nq, n, rows, i);
                    free(yh[i]), free(yw[i]);
                }
                float *y0[PTTS_ROWS_Q];
                for (int i = 0; i < nq; i++) {
                    y0[i] = malloc((size_t)n * sizeof(float));
                    REQUIRE(y0[i]);
                    memcpy(y0[i], ys[i], (size_t)n * sizeof(float));
                }
                k->axpy_rows_q(ys, (const float *const *)ps, nq, K, ld, rows, n);
                for (int i = 0; i < nq; i++) {
                    k->axpy_rows(y0[i], ps[i], K, ld, rows, n);
                    CHECKF(!memcmp(ys[i], y0[i], (size_t)n * sizeof(float)),
                           "%s axpy_rows_q nq=%d n=%d rows=%d: vector %d differs from axpy_rows",
                           k->isa, nq, n, rows, i);
                    free(qs[i]), free(outs[i]), free(ys[i]), free(ps[i]), free(y0[i]);
                }
                free(want);
            }
            free(q), free(K), free(Kh), free(Kw), free(p), free(o1), free(o2), free(y1), free(y2);
        }
}

/* f16_from_f32: half.h's bits for every table, over values of every float16 class (normal,
 * subnormal, the halfway cases between two halves, overflow to inf, inf, NaN, signed zeros) at
 * lengths that leave every tail. */
static void test_f16_from_f32(const ptts_kernels *k) {
    enum { N = 4099 };
    float *x = malloc(N * sizeof(float));
    uint16_t *y = malloc(N * sizeof(uint16_t));
    REQUIRE(x && y);
    static const float special[] = {0.f,      -0.f,           65504.f,        65519.f,   65520.f,
                                    -70000.f, 1e-8f,          -3e-8f,         6.1e-5f,   5.96e-8f,
                                    2.98e-8f, 1e-45f,         INFINITY,       -INFINITY, NAN,
                                    -NAN,     1.00048828125f, 1.00146484375f, 2049.f,    2051.f};
    const int ns = (int)(sizeof special / sizeof special[0]);
    for (int i = 0; i < N; i++) {
        if (i < ns)
            x[i] = special[i];
        else if (i % 3 == 0) /* exactly halfway between two halves: the tie rounds to even */
            x[i] = st_f16_to_f32((uint16_t)(i * 7919 % 0x7bff)) *
                   (1.f + 0x1p-11f * (float)(i % 2 ? 1 : -1));
        else
            x[i] = test_frand(-1.f, 1.f) * ldexpf(1.f, i % 40 - 28);
    }
    static const int LEN[] = {N, 1, 7, 15, 16, 17, 33};
    for (size_t li = 0; li < sizeof LEN / sizeof LEN[0]; li++) {
        const int n = LEN[li];
        memset(y, 0xab, N * sizeof(uint16_t));
        k->f16_from_f32(y, x, (size_t)n);
        int bad = -1;
        for (int i = 0; i < n && bad < 0; i++)
            if (y[i] != st_f32_to_f16(x[i])) bad = i;
        CHECKF(bad < 0, "%s f16_from_f32 n=%d: x[%d] = %a gives %04x, half.h %04x", k->isa, n, bad,
               bad < 0 ? 0. : (double)x[bad], bad < 0 ? 0 : y[bad],
               bad < 0 ? 0 : st_f32_to_f16(x[bad]));
        CHECKF(n == N || y[n] == 0xabab, "%s f16_from_f32 n=%d wrote past the end", k->isa, n);
    }
    free(x), free(y);
}

/* tanh GELU against the same formula in double (the inner u from the float x): errors in units of
 * 2^-24 on (1 + tanh u), i.e. relative to 0.5|x|. */
static void report_gelu_accuracy(const ptts_kernels *k) {
    enum { G = 200001 };
    float *x = malloc(G * sizeof(float)), *y = malloc(G * sizeof(float));
    float *r = malloc(G * sizeof(float));
    REQUIRE(x && y && r);
    for (int i = 0; i < G; i++)
        x[i] = -10.f + 20.f * (float)i / (float)(G - 1);
    memcpy(y, x, G * sizeof(float));
    memcpy(r, x, G * sizeof(float));
    k->gelu(y, G);
    ptts_kernels_ref()->gelu(r, G);
    double worst = 0, worst_ref = 0, worst_vs_ref = 0, wx = 0;
    for (int i = 0; i < G; i++) {
        if (x[i] == 0.f) continue;
        double xd = x[i];
        double ud = 0.7978845608028654 * (xd + 0.044715 * xd * xd * xd);
        double exact = 0.5 * xd * (1.0 + tanh(ud));
        double u = 0.5 * fabs(xd) * 0x1p-24;
        double e = fabs(y[i] - exact) / u, er = fabs(r[i] - exact) / u;
        double ev = fabs((double)y[i] - r[i]) / u;
        if (e > worst) worst = e, wx = xd;
        if (er > worst_ref) worst_ref = er;
        if (ev > worst_vs_ref) worst_vs_ref = ev;
    }
    printf("%-7s gelu on [-10, 10]: max error of (1 + tanh) in units of 2^-24: %.2f (at x=%.4f); "
           "reference tanhf: %.2f; vs reference: %.2f\n",
           k->isa, worst, wx, worst_ref, worst_vs_ref);
    CHECKF(worst < 8.0, "%s gelu tanh error %.2f units of 2^-24", k->isa, worst);
    free(x), free(y), free(r);
}

/* ---- pool ------------------------------------------------------------------------------- */

typedef struct {
    atomic_int *count;
    atomic_int busy[16];
    atomic_int bad_tid, overlap;
    int nthreads;
} pool_ctx;

static void pool_task(void *vctx, int task, int tid) {
    pool_ctx *c = vctx;
    if (tid < 0 || tid >= c->nthreads) {
        atomic_fetch_add(&c->bad_tid, 1);
        return;
    }
    if (atomic_exchange(&c->busy[tid], 1)) atomic_fetch_add(&c->overlap, 1);
    atomic_fetch_add(&c->count[task], 1);
    if (task % 7 == 0) { /* uneven task lengths */
        volatile int s = 0;
        for (int i = 0; i < 2000; i++)
            s += i;
    }
    atomic_store(&c->busy[tid], 0);
}

static void test_pool(void) {
    static const int sizes[] = {1, 2, 4, 8, 0 /* NULL pool */};
    enum { MAXN = 300 };
    atomic_int *count = malloc(MAXN * sizeof *count);
    REQUIRE(count);
    for (int si = 0; si < 5; si++) {
        ptts_pool *p = sizes[si] ? ptts_pool_create(sizes[si]) : NULL;
        if (sizes[si]) REQUIRE(p != NULL);
        int nth = ptts_pool_threads(p);
        CHECK(nth == (sizes[si] ? sizes[si] : 1));
        pool_ctx c;
        memset(&c, 0, sizeof c);
        c.count = count;
        c.nthreads = nth;
        int regions = 3000, wrong = 0;
        for (int r = 0; r < regions; r++) {
            int n = r % 50 == 0 ? 0 : (int)(test_rnd() % (r % 10 == 0 ? MAXN : 17)) + 1;
            for (int i = 0; i < MAXN; i++)
                atomic_store(&count[i], 0);
            ptts_pool_run(p, n, pool_task, &c);
            for (int i = 0; i < MAXN; i++)
                wrong += atomic_load(&count[i]) != (i < n ? 1 : 0);
        }
        CHECKF(wrong == 0 && c.bad_tid == 0 && c.overlap == 0,
               "pool of %d: %d wrong execution counts, %d bad tids, %d tid overlaps", sizes[si],
               wrong, (int)c.bad_tid, (int)c.overlap);
        ptts_pool_free(p);
    }
    free(count);
}

/* ---- detection -------------------------------------------------------------------------- */

static int warnings;
static char last_warning[256];
static void on_log(void *user, int level, const char *msg) {
    (void)user;
    if (level != PTTS_LOG_WARN) return;
    warnings++;
    snprintf(last_warning, sizeof last_warning, "%s", msg);
}

/* Every entry is set in every table (one arithmetic per precision mode, no caller fallbacks). */
static void test_complete(const ptts_kernels *k) {
    const int missing = !k->gemm_f32 + !k->gemm_bf16 + !k->gemm_q8 + !k->gemm_q8q +
                        !k->gemm_f32_stream + !k->gemm_bf16_stream + !k->gemm_q8q_stream +
                        !k->gemm_f32_panel + !k->gemm_bf16_panel + !k->layernorm + !k->softmax +
                        !k->gelu + !k->silu + !k->elu + !k->dot + !k->dot_rows + !k->axpy_rows +
                        !k->dot_rows_q + !k->axpy_rows_q + !k->dot_rows_q_h + !k->axpy_rows_q_h +
                        !k->axpy + !k->f16_from_f32;
    CHECKF(missing == 0, "%s: %d table entries unset", k->isa, missing);
}

static void test_detection(const ptts_kernels **all, int n) {
    CHECK(n >= 1 && strcmp(all[0]->isa, "ref") == 0);
    const char *order[] = {"ref", "avx2", "avx512", "amx", "neon"};
    int last = -1, ok = 1;
    for (int i = 0; i < n; i++) {
        int r = -1;
        for (int j = 0; j < 5; j++)
            if (strcmp(all[i]->isa, order[j]) == 0) r = j;
        ok &= r > last;
        last = r;
    }
    CHECKF(ok, "variants listed in the order ref < avx2 < avx512 < amx < neon");
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    int want2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    int want512 = want2 && __builtin_cpu_supports("avx512f") &&
                  __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                  __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bf16") &&
                  __builtin_cpu_supports("avx512vnni");
    int has2 = 0, has512 = 0;
    for (int i = 0; i < n; i++) {
        has2 |= strcmp(all[i]->isa, "avx2") == 0;
        has512 |= strcmp(all[i]->isa, "avx512") == 0;
    }
    CHECKF(has2 == want2 && has512 == want512, "detection: avx2 %d/%d avx512 %d/%d (listed/cpu)",
           has2, want2, has512, want512);
#endif
    const char *best_uncapped = all[n - 1]->isa;
    unsetenv("PTTS_ISA");
    CHECK(strcmp(ptts_kernels_best()->isa, best_uncapped) == 0);
    setenv("PTTS_ISA", "ref", 1);
    CHECK(strcmp(ptts_kernels_best()->isa, "ref") == 0);
    /* a cap picks the fastest listed variant not above it in the rank order */
    for (int c = 0; c < 5; c++) {
        const char *want = "ref";
        for (int i = 0; i < n; i++)
            for (int j = 0; j <= c; j++)
                if (strcmp(all[i]->isa, order[j]) == 0) want = all[i]->isa;
        setenv("PTTS_ISA", order[c], 1);
        const char *got = ptts_kernels_best()->isa;
        CHECKF(strcmp(got, want) == 0, "PTTS_ISA=%s: got %s, want %s", order[c], got, want);
    }
    /* an unknown value: no cap, and one warning through the log callback (never stderr) */
    ptts_set_log_callback(on_log, NULL);
    setenv("PTTS_ISA", "no-such-isa", 1);
    CHECK(strcmp(ptts_kernels_best()->isa, best_uncapped) == 0);
    CHECK(strcmp(ptts_kernels_best()->isa, best_uncapped) == 0);
    CHECKF(warnings == 1 && strstr(last_warning, "no-such-isa"),
           "PTTS_ISA warning: %d through the log callback (want 1): %s", warnings, last_warning);
    ptts_set_log_callback(NULL, NULL);
    unsetenv("PTTS_ISA");
}

/* The panel layout (ptts_lin.wp) against the row-major reference gemm: awkward K, M (panel
 * tails), row ranges and panel ranges, strided X and Y, bias or none; nothing outside the
 * requested rows and outputs is written. */
static void test_panel(const ptts_kernels *k) {
    static const int Ks[] = {1, 3, 16, 32, 63, 192, 513};
    static const int Ms[] = {1, 17, 32, 33, 64, 100};
    static const int Ns[] = {1, 5, 8, 9, 16, 23};
    int cases = 0;
    double worst = 0;
    for (size_t ki = 0; ki < sizeof Ks / sizeof *Ks; ki++)
        for (size_t mi = 0; mi < sizeof Ms / sizeof *Ms; mi++)
            for (size_t ni = 0; ni < sizeof Ns / sizeof *Ns; ni++) {
                int K = Ks[ki], M = Ms[mi], N = Ns[ni], ldx = K + 3, ldy = M + 5;
                int np = (M + PTTS_PANEL - 1) / PTTS_PANEL;
                float *X = malloc((size_t)N * ldx * sizeof(float));
                float *W = malloc((size_t)M * K * sizeof(float));
                float *Wp = calloc((size_t)np * K * PTTS_PANEL, sizeof(float));
                float *b = malloc((size_t)M * sizeof(float));
                float *Y = malloc((size_t)N * ldy * sizeof(float));
                float *R = malloc((size_t)N * ldy * sizeof(float));
                REQUIRE(X && W && Wp && b && Y && R);
                for (int i = 0; i < N * ldx; i++)
                    X[i] = test_frand(-1.f, 1.f);
                for (int i = 0; i < M * K; i++)
                    W[i] = test_frand(-1.f, 1.f);
                for (int i = 0; i < M; i++)
                    b[i] = test_frand(-1.f, 1.f);
                for (int m = 0; m < M; m++)
                    for (int kk = 0; kk < K; kk++)
                        Wp[((size_t)(m / PTTS_PANEL) * K + kk) * PTTS_PANEL + m % PTTS_PANEL] =
                            W[(size_t)m * K + kk];
                const float *bias = (ki + mi + ni) % 2 ? b : NULL;
                /* rows [n0, N), panels [p0, np) */
                int n0 = N > 2 ? 1 : 0, p0 = np > 1 ? 1 : 0;
                for (int i = 0; i < N * ldy; i++)
                    Y[i] = R[i] = 12345.f;
                k->gemm_f32_panel(K, X, ldx, Wp, bias, Y, ldy, M, n0, N, p0, np);
                ptts_kernels_ref()->gemm_f32(N - n0, K, X + (size_t)n0 * ldx, ldx, W, bias,
                                             R + (size_t)n0 * ldy, ldy, p0 * PTTS_PANEL, M);
                int bad = 0;
                for (int n = 0; n < N; n++)
                    for (int j = 0; j < ldy; j++) {
                        float y = Y[(size_t)n * ldy + j], r = R[(size_t)n * ldy + j];
                        int inside = n >= n0 && j >= p0 * PTTS_PANEL && j < M;
                        if (!inside) {
                            bad += y != 12345.f;
                            continue;
                        }
                        double mag = 1.0;
                        for (int kk = 0; kk < K; kk++)
                            mag += fabs((double)X[(size_t)n * ldx + kk] * W[(size_t)j * K + kk]);
                        double err = fabs((double)y - r) / mag;
                        if (err > worst) worst = err;
                        bad += !(err <= 1e-6);
                    }
                CHECKF(!bad, "%s gemm_f32_panel K=%d M=%d N=%d: %d bad values", k->isa, K, M, N,
                       bad);
                cases++;
                free(X);
                free(W);
                free(Wp);
                free(b);
                free(Y);
                free(R);
            }
    printf("%-7s gemm_f32_panel: %d cases; worst |y - ref| / magnitude %.2g\n", k->isa, cases,
           worst);
}

/* bf16 rounding as the packer and vcvtne2ps2bf16 do it (nearest even), as the value
 * vdpbf16ps then reads (subnormals 0) - written out again here, independently of kernels_ref.c. */
static double bf16_operand(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7f800000u) == 0) return 0.0;
    u += 0x7fffu + ((u >> 16) & 1u);
    return (double)bf16_to_f32((uint16_t)(u >> 16));
}

/* gemm_bf16_panel (ptts_lin.wp16): the reference against a double-precision sum of the
 * bf16-rounded operands (checks the packing and the pair order), every other variant against
 * the reference bit for bit (kernels.h specifies the vdpbf16ps arithmetic exactly). K odd and
 * not a multiple of 32, M not a multiple of 32, row and panel ranges, strided X and Y, tight
 * allocations, Y poisoned outside the written set; X holds rounding ties, subnormals and -0,
 * W subnormals; large N (several X chunks) and K > 4096 (chunks of fewer than 8 rows).
 * Two cases of operands near 2^-64 make sums cross 2^-126 and flush (the reference's outputs
 * include exact zeros there, checked); the variants must flush the same steps. */
static void test_bf16_panel(const ptts_kernels *k) {
    const ptts_kernels *R = ptts_kernels_ref();
    static const int Ks[] = {1, 2, 3, 15, 16, 17, 31, 32, 33, 63, 64, 65, 192, 513};
    static const int Ms[] = {1, 17, 32, 33, 64, 100};
    static const int Ns[] = {1, 5, 8, 9, 16, 23};
    /* K, M, N: 3 large, then 2 with tiny operands */
    static const int big[][3] = {
        {192, 70, 300}, {5000, 33, 23}, {3584, 64, 17}, {3, 40, 9}, {64, 33, 9}};
    const int nsmall =
        (int)(sizeof Ks / sizeof *Ks * sizeof Ms / sizeof *Ms * sizeof Ns / sizeof *Ns);
    int cases = 0, bad_bits = 0, amx = strcmp(k->isa, "amx") == 0;
    double worst_ref = 0, worst_f32 = 0, worst_amx = 0;
    for (int ci = 0; ci < nsmall + 5; ci++) {
        const int tiny = ci >= nsmall + 3;
        int K, M, N;
        if (ci < nsmall) {
            K = Ks[ci / (6 * 6)];
            M = Ms[ci / 6 % 6];
            N = Ns[ci % 6];
        } else {
            K = big[ci - nsmall][0];
            M = big[ci - nsmall][1];
            N = big[ci - nsmall][2];
        }
        int ldx = K + 3, ldy = M + 5, np = (M + PTTS_PANEL - 1) / PTTS_PANEL;
        size_t nx = (size_t)(N - 1) * ldx + K, ny = (size_t)(N - 1) * ldy + M;
        float *X = malloc(nx * sizeof(float));
        float *W = malloc((size_t)M * K * sizeof(float));
        uint16_t *Wp = malloc(ptts_bf16_panel_elems(M, K) * sizeof(uint16_t));
        float *b = malloc((size_t)M * sizeof(float));
        float *Y = malloc(ny * sizeof(float));
        float *YR = malloc(ny * sizeof(float));
        REQUIRE(X && W && Wp && b && Y && YR);
        for (size_t i = 0; i < nx; i++) {
            uint32_t r = test_rnd() % 64;
            X[i] = r == 0   ? 1.f + 0x1p-8f * (float)(1 + 2 * (int)(test_rnd() % 4)) /* ties */
                   : r == 1 ? 1e-40f                                                 /* subnormal */
                   : r == 2 ? -0.f
                            : test_frand(-2.f, 2.f);
            if (tiny) X[i] *= 0x1p-64f;
        }
        for (int i = 0; i < M * K; i++)
            W[i] = test_rnd() % 97 == 0 ? -1e-39f : test_frand(-1.f, 1.f) * (tiny ? 0x1p-64f : 1.f);
        for (int i = 0; i < M; i++)
            b[i] = test_frand(-1.f, 1.f);
        ptts_bf16_panel_pack(W, M, K, Wp);
        const float *bias = ci % 2 && !tiny ? b : NULL;
        int n0 = N > 2 ? 1 : 0, p0 = np > 1 ? 1 : 0;
        for (size_t i = 0; i < ny; i++)
            Y[i] = YR[i] = poison_f();
        k->gemm_bf16_panel(K, X, ldx, Wp, bias, Y, ldy, M, n0, N, p0, np);
        R->gemm_bf16_panel(K, X, ldx, Wp, bias, YR, ldy, M, n0, N, p0, np);
        int bad = 0, zeros = 0;
        for (int n = 0; n < N; n++)
            for (int j = 0; j < ldy && (size_t)n * ldy + j < ny; j++) {
                size_t at = (size_t)n * ldy + j;
                int inside = n >= n0 && j >= p0 * PTTS_PANEL && j < M;
                if (!inside) {
                    bad += !is_poison(Y[at]);
                    continue;
                }
                zeros += YR[at] == 0.f;
                if (k == R && tiny) continue; /* flushed sums: no double to compare with */
                if (k == R) {
                    double sum = bias ? bias[j] : 0.0, mag = bias ? fabs(bias[j]) : 0.0;
                    double s32 = sum, mag32 = mag;
                    for (int kk = 0; kk < K; kk++) {
                        float xv = X[(size_t)n * ldx + kk], wv = W[(size_t)j * K + kk];
                        double p = bf16_operand(xv) * bf16_operand(wv);
                        sum += p;
                        mag += fabs(p);
                        s32 += (double)xv * wv;
                        mag32 += fabs((double)xv * wv);
                    }
                    double e = fabs(Y[at] - sum) / (mag + 1e-30);
                    double e32 = fabs(Y[at] - s32) / (mag32 + 1e-30);
                    if (e > worst_ref) worst_ref = e;
                    if (e32 > worst_f32) worst_f32 = e32;
                    bad += !(e <= 1e-5);
                } else {
                    uint32_t a, r;
                    memcpy(&a, &Y[at], 4);
                    memcpy(&r, &YR[at], 4);
                    bad_bits += a != r;
                    double mag = bias ? fabs(bias[j]) : 0.0, e = fabs((double)Y[at] - YR[at]);
                    for (int kk = 0; amx && kk < K; kk++) /* kernels.h: amx's bound */
                        mag += fabs(bf16_operand(X[(size_t)n * ldx + kk]) *
                                    bf16_operand(W[(size_t)j * K + kk]));
                    if (amx && mag > 0) worst_amx = fmax(worst_amx, e / (mag * 0x1p-24));
                    bad += amx ? !(e <= (K + 1) * 0x1p-23 * mag + K * 0x1p-125) : a != r;
                }
            }
        CHECKF(!bad, "%s gemm_bf16_panel K=%d M=%d N=%d: %d bad values", k->isa, K, M, N, bad);
        if (tiny) CHECKF(zeros > 0, "gemm_bf16_panel tiny K=%d: no flushed output", K);
        cases++;
        free(X);
        free(W);
        free(Wp);
        free(b);
        free(Y);
        free(YR);
    }
    if (k == R)
        printf("%-7s gemm_bf16_panel: %d cases; worst |y - exact bf16 sum| / magnitude %.2g, "
               "against the unrounded f32 operands %.2g\n",
               k->isa, cases, worst_ref, worst_f32);
    else
        printf("%-7s gemm_bf16_panel: %d cases; %s (%d values; worst %.3g x 2^-24 sum|x'w'|)\n",
               k->isa, cases, bad_bits ? "differs from ref" : "identical bits to ref", bad_bits,
               worst_amx);
}

int main(void) {
    const ptts_kernels *all[8];
    int n = ptts_kernels_all(all, 8);
    printf("variants:");
    for (int i = 0; i < n; i++)
        printf(" %s", all[i]->isa);
    printf("\n");
    test_detection(all, n);
#ifdef PTTS_AMX_EMU /* tests/amx_emu.sh: amx on a scalar model of the instructions */
    const ptts_kernels *ptts_kernels_amx(void);
    if (strcmp(all[n - 1]->isa, "amx") != 0) all[n++] = ptts_kernels_amx();
#endif
    test_pool();
    ptts_pool *pool = ptts_pool_create(3);
    REQUIRE(pool);
    for (int i = 0; i < n; i++) {
        test_complete(all[i]);
        test_gemm(all[i], i, pool);
        test_panel(all[i]);
        test_bf16_panel(all[i]);
        test_elementwise(all[i]);
        test_softmax_rows(all[i]);
        test_layernorm(all[i]);
        test_dot(all[i]);
        test_rows(all[i]);
        test_f16_from_f32(all[i]);
        report_gelu_accuracy(all[i]);
    }
    ptts_pool_free(pool);
    return test_summary();
}
