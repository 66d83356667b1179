// ctest-label: unit
/*
 * test_kernels.c - every kernel table this build has and this CPU runs (ptts_kernels_all) held
 * against the scalar reference (kernels_ref.c, the specification): the gemms, the panel kernels
 * and the tables' detection. Their elementwise kernels and the thread pool: test_kernels_elem.c.
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
 * CPU detection: the listed variants are checked against __builtin_cpu_supports, and PTTS_ISA
 * capping against the rank order ref < avx2 < avx512 < amx (amx's detection: test_amx.c); an
 * unknown PTTS_ISA is reported once through the log callback (the library never prints).
 */
#include "kernels_test.h"

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
    if (wt == T_BF16) return st_bf16_to_f32(((const uint16_t *)W)[i]);
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
    return (double)st_bf16_to_f32((uint16_t)(u >> 16));
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
    ptts_pool *pool = ptts_pool_create(3);
    REQUIRE(pool);
    for (int i = 0; i < n; i++) {
        test_complete(all[i]);
        test_gemm(all[i], i, pool);
        test_panel(all[i]);
        test_bf16_panel(all[i]);
    }
    ptts_pool_free(pool);
    return test_summary();
}
