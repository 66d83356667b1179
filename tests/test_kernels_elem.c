// ctest-label: unit
/*
 * test_kernels_elem.c - the elementwise kernels of every kernel table this build has and this
 * CPU runs (ptts_kernels_all) against the scalar reference (kernels_ref.c), and the thread
 * pool. The gemms, the panels and the tables' detection: test_kernels.c.
 *
 * Elementwise kernels: random data and special values (+-0, tiny, large +-, +-inf, NaN) with
 * per-kernel tolerances stated at each check; guard margins around every output. GELU's erf is
 * also measured against double-precision erf on a dense grid and the max errors are printed.
 *
 * The pool: many regions of varying n (0 .. 300) for pools of 1, 2, 4, 8 threads and NULL;
 * every task runs exactly once per region, tids are in range and no tid runs two tasks at once.
 */
#include "kernels_test.h"

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

int main(void) {
    const ptts_kernels *all[8];
    int n = ptts_kernels_all(all, 8);
#ifdef PTTS_AMX_EMU /* tests/amx_emu.sh: amx on a scalar model of the instructions */
    const ptts_kernels *ptts_kernels_amx(void);
    if (strcmp(all[n - 1]->isa, "amx") != 0) all[n++] = ptts_kernels_amx();
#endif
    test_pool();
    for (int i = 0; i < n; i++) {
        test_elementwise(all[i]);
        test_softmax_rows(all[i]);
        test_layernorm(all[i]);
        test_dot(all[i]);
        test_rows(all[i]);
        test_f16_from_f32(all[i]);
        report_gelu_accuracy(all[i]);
    }
    return test_summary();
}
