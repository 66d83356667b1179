/*
 * bench_kernels.c - gemm throughput on the backbone's shapes, against the memory floor.
 *
 * One "pass" is what a generated frame costs the backbone: 6 layers x {1024x3072 (qkv),
 * 1024x1024 (out), 4096x1024 (ffn up), 1024x4096 (ffn down)} = 75.5 M weights, 302 MB as f32,
 * 151 MB as bf16, 75 MB as q8. All 24 matrices are distinct allocations, so nothing of a pass is
 * left in the caches by the previous one (the q8 pass, 75 MB, is over twice the L3 of a Zen 5
 * CCD). For each weight type, kernel table (ref and the best, PTTS_ISA caps it), thread count
 * (1: direct calls; 2: the m range cut into 4-row-aligned chunks run through ptts_pool) and N
 * (1 = matvec, 8, 16) it prints the median ms per pass, the weight bytes streamed per second
 * and that as a share of the machine's memory bandwidth (PTTS_MEMBW_GBS, default 29 GB/s).
 *
 * It also measures the alternative q8 matvec that quantises X to 8 bits and multiplies with
 * AVX-512 VNNI (vpdpbusd), with its error against the reference, which is the evidence for
 * kernels_avx512.c widening int8 weights to f32 instead.
 *
 * Usage: bench_kernels [reps]   (default 5; the reference runs once, N = 1 only: its bf16
 * matvec calls st_bf16_to_f32 per weight and takes about a second a pass).
 * Figures move with other load on the machine: run it on a quiet one.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/kernels.h"
#include "pool.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_VNNI_PROBE 1
#endif

enum { NMAT = 24, MAXN = 16 };
static const int shapes[4][2] = {{3072, 1024}, {1024, 1024}, {4096, 1024}, {1024, 4096}};

typedef struct {
    int M, K;
    void *w;
    float *scale;
} mat;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint32_t rng = 12345;
static uint32_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

typedef struct {
    const ptts_kernels *k;
    int wt, N;
    const mat *m;
    const float *X;
    float *Y;
    int chunk;
} job;

static void run_rows(const job *j, int m0, int m1) {
    const mat *m = j->m;
    if (j->wt == PTTS_W_F32)
        j->k->gemm_f32(j->N, m->K, j->X, m->K, m->w, NULL, j->Y, m->M, m0, m1);
    else if (j->wt == PTTS_W_BF16)
        j->k->gemm_bf16(j->N, m->K, j->X, m->K, m->w, NULL, j->Y, m->M, m0, m1);
    else
        j->k->gemm_q8(j->N, m->K, j->X, m->K, m->w, m->scale, NULL, j->Y, m->M, m0, m1);
}

static void task(void *ctx, int t, int tid) {
    (void)tid;
    const job *j = ctx;
    int m0 = t * j->chunk, m1 = m0 + j->chunk < j->m->M ? m0 + j->chunk : j->m->M;
    run_rows(j, m0, m1);
}

/* One backbone pass; returns seconds. */
static double pass(const ptts_kernels *k, int wt, int N, const mat *mats, const float *X, float *Y,
                   ptts_pool *pool) {
    double t0 = now();
    for (int i = 0; i < NMAT; i++) {
        job j = {k, wt, N, &mats[i], X, Y, 0};
        if (!pool) {
            run_rows(&j, 0, mats[i].M);
        } else {
            int tasks = 4 * ptts_pool_threads(pool);
            j.chunk = (mats[i].M / tasks + 3) / 4 * 4;
            ptts_pool_run(pool, (mats[i].M + j.chunk - 1) / j.chunk, task, &j);
        }
    }
    return now() - t0;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#ifdef HAVE_VNNI_PROBE
/* The rejected alternative: X quantised to int8 with one scale per row (max |x| / 127), stored
 * as u8 (+128) for vpdpbusd (u8 x s8); the +128 is removed with a second vpdpbusd of ones
 * against W (the row sums). 4 rows at a time, K a multiple of 64. */
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void
q8_vnni_matvec(int K, const uint8_t *xu, float xs, const int8_t *W, const float *scale, float *y,
               int m0, int m1) {
    const __m512i ones = _mm512_set1_epi8(1);
    for (int m = m0; m < m1; m += 4) {
        __m512i a[4], s[4];
        for (int r = 0; r < 4; r++)
            a[r] = s[r] = _mm512_setzero_si512();
        for (int k = 0; k < K; k += 64) {
            __m512i x = _mm512_loadu_si512(xu + k);
            for (int r = 0; r < 4; r++) {
                __m512i w = _mm512_loadu_si512(W + (size_t)(m + r) * K + k);
                a[r] = _mm512_dpbusd_epi32(a[r], x, w);
                s[r] = _mm512_dpbusd_epi32(s[r], ones, w);
            }
        }
        for (int r = 0; r < 4; r++) {
            int32_t v = _mm512_reduce_add_epi32(a[r]) - 128 * _mm512_reduce_add_epi32(s[r]);
            y[m + r] = (float)v * xs * scale[m + r];
        }
    }
}

typedef struct {
    const mat *m;
    const uint8_t *xu;
    float xs;
    float *y;
    int chunk;
} vjob;

static void vtask(void *ctx, int t, int tid) {
    (void)tid;
    const vjob *j = ctx;
    int m0 = t * j->chunk, m1 = m0 + j->chunk < j->m->M ? m0 + j->chunk : j->m->M;
    q8_vnni_matvec(j->m->K, j->xu, j->xs, j->m->w, j->m->scale, j->y, m0, m1);
}

static void vnni_probe(const mat *mats, const float *X, float *Y, ptts_pool *pool, int reps,
                       double bytes, double bw) {
    if (!__builtin_cpu_supports("avx512vnni") || !__builtin_cpu_supports("avx512bw")) {
        printf("q8 VNNI alternative: not run (no AVX-512 VNNI)\n");
        return;
    }
    int maxk = 4096;
    uint8_t *xu = malloc((size_t)maxk);
    float *yref = malloc(4096 * sizeof(float));
    if (!xu || !yref) return;
    /* X is quantised once per call (it is the same 1024 / 4096 values for every matrix) */
    double err_num = 0, err_den = 0;
    for (int th = 1; th <= 2; th++) {
        double t[64];
        for (int r = 0; r < reps; r++) {
            double t0 = now();
            for (int i = 0; i < NMAT; i++) {
                const mat *m = &mats[i];
                float mx = 0;
                for (int k = 0; k < m->K; k++)
                    mx = fmaxf(mx, fabsf(X[k]));
                float xs = mx > 0 ? mx / 127.f : 1.f, inv = 1.f / xs;
                for (int k = 0; k < m->K; k++)
                    xu[k] = (uint8_t)(lrintf(X[k] * inv) + 128);
                vjob j = {m, xu, xs, Y, (m->M / 8 + 3) / 4 * 4};
                if (th == 1)
                    q8_vnni_matvec(m->K, xu, xs, m->w, m->scale, Y, 0, m->M);
                else
                    ptts_pool_run(pool, (m->M + j.chunk - 1) / j.chunk, vtask, &j);
                if (r == 0 && th == 1) {
                    ptts_kernels_best()->gemm_q8(1, m->K, X, m->K, m->w, m->scale, NULL, yref, m->M,
                                                 0, m->M);
                    for (int q = 0; q < m->M; q++) {
                        err_num += ((double)Y[q] - yref[q]) * ((double)Y[q] - yref[q]);
                        err_den += (double)yref[q] * yref[q];
                    }
                }
            }
            t[r] = now() - t0;
        }
        qsort(t, (size_t)reps, sizeof t[0], cmp_d);
        double med = t[reps / 2];
        printf("q8    vnni    %d   1  %9.2f  %7.2f  %5.1f%%   (X quantised to int8)\n", th,
               med * 1e3, bytes / med / 1e9, 100.0 * bytes / med / 1e9 / bw);
    }
    printf("q8 VNNI alternative: relative L2 error vs the f32-accumulating kernel %.2e "
           "(the widening kernels differ from the reference by ~1e-7)\n",
           sqrt(err_num / err_den));
    free(xu);
    free(yref);
}
#endif

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 5;
    if (reps < 1) reps = 1;
    if (reps > 64) reps = 64;
    const char *bws = getenv("PTTS_MEMBW_GBS");
    double bw = bws && atof(bws) > 0 ? atof(bws) : 29.0;
    const ptts_kernels *ref = ptts_kernels_ref(), *best = ptts_kernels_best();
    ptts_pool *pool = ptts_pool_create(2);
    float *X = malloc((size_t)MAXN * 4096 * sizeof(float));
    float *Y = malloc((size_t)MAXN * 4096 * sizeof(float));
    if (!pool || !X || !Y) return 1;
    for (int i = 0; i < MAXN * 4096; i++)
        X[i] = (float)((int)(rnd() % 2001) - 1000) * 1e-3f;

    printf("backbone pass: 6 layers x (1024x3072, 1024x1024, 4096x1024, 1024x4096); "
           "best kernels: %s; memory floor %.0f GB/s (PTTS_MEMBW_GBS)\n",
           best->isa, bw);
    printf("wtype isa     thr N   ms/pass    GB/s   of floor\n");
    static const char *tn[] = {"f32", "bf16", "q8"};
    static const size_t esz[] = {4, 2, 1};
    for (int wt = 0; wt < 3; wt++) {
        mat mats[NMAT];
        double bytes = 0;
        for (int i = 0; i < NMAT; i++) {
            mats[i].M = shapes[i % 4][0];
            mats[i].K = shapes[i % 4][1];
            size_t n = (size_t)mats[i].M * mats[i].K;
            mats[i].w = malloc(n * esz[wt]);
            mats[i].scale = malloc((size_t)mats[i].M * sizeof(float));
            if (!mats[i].w || !mats[i].scale) return 1;
            if (wt == 0)
                for (size_t q = 0; q < n; q++)
                    ((float *)mats[i].w)[q] = (float)((int)(rnd() & 1023) - 512) * 1e-4f;
            else if (wt == 1)
                for (size_t q = 0; q < n; q++)
                    ((uint16_t *)mats[i].w)[q] =
                        (uint16_t)(((rnd() & 1u) << 15) | (0x3c00u + (rnd() & 0xffu)));
            else
                for (size_t q = 0; q < n; q++)
                    ((int8_t *)mats[i].w)[q] = (int8_t)(rnd() & 0xff);
            for (int m = 0; m < mats[i].M; m++)
                mats[i].scale[m] = 0.01f;
            bytes += (double)n * esz[wt];
        }
        const ptts_kernels *ks[2] = {ref, best};
        for (int ki = 0; ki < 2; ki++) {
            if (ki == 1 && best == ref) break;
            static const int Ns[] = {1, 8, 16};
            for (int ni = 0; ni < 3; ni++)
                for (int th = 1; th <= 2; th++) {
                    int r_here = ki == 0 ? 1 : reps;
                    if (ki == 0 && Ns[ni] > 1) continue; /* the reference: seconds a pass */
                    double t[64];
                    pass(ks[ki], wt, Ns[ni], mats, X, Y, th == 2 ? pool : NULL); /* warm */
                    for (int r = 0; r < r_here; r++)
                        t[r] = pass(ks[ki], wt, Ns[ni], mats, X, Y, th == 2 ? pool : NULL);
                    qsort(t, (size_t)r_here, sizeof t[0], cmp_d);
                    double med = t[r_here / 2];
                    printf("%-5s %-7s %d  %2d  %9.2f  %7.2f  %5.1f%%\n", tn[wt], ks[ki]->isa, th,
                           Ns[ni], med * 1e3, bytes / med / 1e9, 100.0 * bytes / med / 1e9 / bw);
                    fflush(stdout);
                }
        }
#ifdef HAVE_VNNI_PROBE
        if (wt == 2) vnni_probe(mats, X, Y, pool, reps, bytes, bw);
#endif
        for (int i = 0; i < NMAT; i++)
            free(mats[i].w), free(mats[i].scale);
    }
    printf("(GB/s counts weight bytes only; X and Y are under 0.5 MB a pass)\n");
    ptts_pool_free(pool);
    free(X);
    free(Y);
    return 0;
}
