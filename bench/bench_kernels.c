/*
 * bench_kernels.c - gemm throughput on the backbone's shapes, against the memory floor.
 *
 * One "pass" is what a generated frame costs the backbone: 6 layers x {1024x3072 (qkv),
 * 1024x1024 (out), 4096x1024 (ffn up), 1024x4096 (ffn down)} = 75.5 M weights, 302 MB as f32,
 * 151 MB as bf16, 75 MB as q8. All 24 matrices are distinct allocations, so nothing of a pass is
 * left in the caches by the previous one (the q8 pass, 75 MB, is over twice the L3 of a Zen 5
 * CCD). For each weight type, kernel table (ref and the best, PTTS_ISA caps it; when the best is
 * amx, also avx512 beside it, since amx is avx512 with tile kernels), thread count
 * (1: direct calls; 2: the m range cut into 4-row-aligned chunks run through ptts_pool) and N
 * (1 = matvec, 4, 8, 16: batched steps) it prints the median ms per pass, the weight bytes streamed
 * per second and that as a share of the machine's memory bandwidth (PTTS_MEMBW_GBS, default 29
 * GB/s).
 *
 * q8q is the int8 mode's gemm (gemm_q8q: X quantised to int8 per row, integer dot products)
 * on the same int8 weights, with its error against gemm_q8 (X in f32). Last, the codec's panel
 * kernels (f32 and bf16 panels) on a codec layer's matrices, one thread, and the tanh GELU of
 * one frame (backbone 6 x 4096 + codec transformer 2 x 16 x 2048 = 90112 values) per table.
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

#include "bench_args.h"
#include "cpu/kernels.h"
#include "pool.h"

enum { NMAT = 24, MAXN = 128 };
enum { WT_Q8Q = 3 }; /* after the ptts_wtype values: int8 weights through gemm_q8q */
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

/* CPU time of the calling thread: the 1-thread figures on a shared, loaded machine */
static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
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
    else if (j->wt == PTTS_W_Q8)
        j->k->gemm_q8(j->N, m->K, j->X, m->K, m->w, m->scale, NULL, j->Y, m->M, m0, m1);
    else
        j->k->gemm_q8q(j->N, m->K, j->X, m->K, m->w, m->scale, NULL, j->Y, m->M, m0, m1);
}

static void task(void *ctx, int t, int tid) {
    (void)tid;
    const job *j = ctx;
    int m0 = t * j->chunk, m1 = m0 + j->chunk < j->m->M ? m0 + j->chunk : j->m->M;
    run_rows(j, m0, m1);
}

/* One backbone pass; returns wall seconds, *cpu the calling thread's CPU seconds. */
static double pass(const ptts_kernels *k, int wt, int N, const mat *mats, const float *X, float *Y,
                   ptts_pool *pool, double *cpu) {
    double t0 = now(), c0 = cpu_now();
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
    *cpu = cpu_now() - c0;
    return now() - t0;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* rel L2 of gemm_q8q (X quantised, the int8 mode) against gemm_q8 (f32 X) over a pass, N = 1 */
static double q8q_error(const ptts_kernels *k, const mat *mats, const float *X, float *Y,
                        float *Y2) {
    double num = 0, den = 0;
    for (int i = 0; i < NMAT; i++) {
        const mat *m = &mats[i];
        k->gemm_q8(1, m->K, X, m->K, m->w, m->scale, NULL, Y, m->M, 0, m->M);
        k->gemm_q8q(1, m->K, X, m->K, m->w, m->scale, NULL, Y2, m->M, 0, m->M);
        for (int q = 0; q < m->M; q++) {
            num += ((double)Y2[q] - Y[q]) * ((double)Y2[q] - Y[q]);
            den += (double)Y[q] * Y[q];
        }
    }
    return sqrt(num / den);
}

/* The codec's panel kernels (f32 mode: gemm_f32_panel; bf16 and int8: gemm_bf16_panel) on the
 * shapes of a codec transformer layer (512 -> 1536, 512 -> 512, 512 -> 2048, 2048 -> 512) over
 * N rows (16: one frame of one stream), one thread: median CPU ms for the four matrices. */
static void panels(const ptts_kernels *k, int reps, const float *X, float *Y) {
    static const int ps[4][2] = {{1536, 512}, {512, 512}, {2048, 512}, {512, 2048}};
    float *wp[4];
    uint16_t *wp16[4];
    for (int i = 0; i < 4; i++) {
        const int M = ps[i][0], K = ps[i][1];
        float *w = malloc((size_t)M * K * sizeof(float));
        wp[i] = calloc((size_t)(M / PTTS_PANEL) * K * PTTS_PANEL, sizeof(float));
        wp16[i] = malloc(ptts_bf16_panel_elems(M, K) * sizeof(uint16_t));
        if (!w || !wp[i] || !wp16[i]) exit(1);
        for (size_t q = 0; q < (size_t)M * K; q++)
            w[q] = (float)((int)(rnd() & 1023) - 512) * 1e-4f;
        for (int m = 0; m < M; m++)
            for (int kk = 0; kk < K; kk++)
                wp[i][((size_t)(m / PTTS_PANEL) * K + kk) * PTTS_PANEL + m % PTTS_PANEL] =
                    w[(size_t)m * K + kk];
        ptts_bf16_panel_pack(w, M, K, wp16[i]);
        free(w);
    }
    static const int Ns[] = {16, 128};
    for (int bf = 0; bf < 2; bf++)
        for (int ni = 0; ni < 2; ni++) {
            const int N = Ns[ni];
            double t[64];
            for (int r = 0; r <= reps; r++) { /* r = 0: warm-up */
                double t0 = cpu_now();
                for (int i = 0; i < 4; i++) {
                    const int M = ps[i][0], K = ps[i][1], np = M / PTTS_PANEL;
                    if (bf)
                        k->gemm_bf16_panel(K, X, K, wp16[i], NULL, Y, M, M, 0, N, 0, np);
                    else
                        k->gemm_f32_panel(K, X, K, wp[i], NULL, Y, M, M, 0, N, 0, np);
                }
                if (r) t[r - 1] = cpu_now() - t0;
            }
            qsort(t, (size_t)reps, sizeof t[0], cmp_d);
            printf("panel %-4s %-7s 1  %3d  %9.3f cpu ms (codec layer matrices)\n",
                   bf ? "bf16" : "f32", k->isa, N, t[reps / 2] * 1e3);
        }
    for (int i = 0; i < 4; i++)
        free(wp[i]), free(wp16[i]);
}

/* The GELUs one generated frame computes (MODEL.md 3: every transformer's feed-forward): CPU
 * microseconds per frame, one thread, for the reference and the best table. */
static void gelu_frame(const ptts_kernels *const *ks, int nk, int reps) {
    enum { G = 6 * 4096 + 2 * 16 * 2048 };
    float *x = malloc(G * sizeof *x), *y = malloc(G * sizeof *y);
    if (!x || !y) {
        free(x), free(y);
        return;
    }
    for (int i = 0; i < G; i++)
        x[i] = (float)((int)(rnd() % 20001) - 10000) / 2500.f;
    for (int ki = 0; ki < nk; ki++) {
        double best = 1e30;
        for (int r = 0; r < 5 * reps; r++) {
            memcpy(y, x, G * sizeof *y);
            double t0 = cpu_now();
            ks[ki]->gelu(y, G);
            double t = cpu_now() - t0;
            if (t < best) best = t;
        }
        printf("gelu (tanh) of one frame, %d values, %-7s: %.1f us\n", G, ks[ki]->isa, best * 1e6);
    }
    free(x), free(y);
}

int main(int argc, char **argv) {
    int reps;
    int rc = bench_args(argc, argv, 1, "usage: bench_kernels [reps (5, 1 to 64)]\n");
    if (rc >= 0) return rc;
    if (bench_arg_int(argc, argv, 1, "reps", 5, 1, 64, &reps)) return 2;
    const char *bws = getenv("PTTS_MEMBW_GBS");
    double bw = bws && atof(bws) > 0 ? atof(bws) : 29.0;
    const ptts_kernels *ref = ptts_kernels_ref(), *best = ptts_kernels_best(), *all[8];
    const int nall = ptts_kernels_all(all, 8);
    /* amx: the table below it (avx512) too, for the tile kernels' gain */
    const ptts_kernels *below = strcmp(best->isa, "amx") == 0 && nall >= 2 ? all[nall - 2] : NULL;
    ptts_pool *pool = ptts_pool_create(2);
    float *X = malloc((size_t)MAXN * 4096 * sizeof(float));
    float *Y = malloc((size_t)MAXN * 4096 * sizeof(float));
    float *Y2 = malloc(4096 * sizeof(float));
    if (!pool || !X || !Y || !Y2) return 1;
    for (int i = 0; i < MAXN * 4096; i++)
        X[i] = (float)((int)(rnd() % 2001) - 1000) * 1e-3f;

    printf("backbone pass: 6 layers x (1024x3072, 1024x1024, 4096x1024, 1024x4096); "
           "best kernels: %s; memory floor %.0f GB/s (PTTS_MEMBW_GBS)\n",
           best->isa, bw);
    printf("wtype isa     thr N   ms/pass    GB/s   of floor  cpu ms (1 thread)\n");
    static const char *tn[] = {"f32", "bf16", "q8", "q8q"};
    static const size_t esz[] = {4, 2, 1, 1};
    for (int wt = 0; wt < 4; wt++) {
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
        const ptts_kernels *ks[3] = {ref, below, best};
        for (int ki = 0; ki < 3; ki++) {
            if (!ks[ki] || (ki == 2 && best == ref)) continue;
            static const int Ns[] = {1, 4, 8, 16};
            for (int ni = 0; ni < 4; ni++)
                for (int th = 1; th <= 2; th++) {
                    int r_here = ki == 0 ? 1 : reps;
                    if (ki == 0 && Ns[ni] > 1) continue; /* the reference: seconds a pass */
                    double t[64], c[64];
                    pass(ks[ki], wt, Ns[ni], mats, X, Y, th == 2 ? pool : NULL, c); /* warm */
                    for (int r = 0; r < r_here; r++)
                        t[r] = pass(ks[ki], wt, Ns[ni], mats, X, Y, th == 2 ? pool : NULL, c + r);
                    qsort(t, (size_t)r_here, sizeof t[0], cmp_d);
                    qsort(c, (size_t)r_here, sizeof c[0], cmp_d);
                    double med = t[r_here / 2];
                    printf("%-5s %-7s %d  %2d  %9.2f  %7.2f  %5.1f%%", tn[wt], ks[ki]->isa, th,
                           Ns[ni], med * 1e3, bytes / med / 1e9, 100.0 * bytes / med / 1e9 / bw);
                    if (th == 1) printf("  %9.2f", c[r_here / 2] * 1e3);
                    printf("\n");
                    fflush(stdout);
                }
        }
        if (wt == WT_Q8Q)
            printf("q8q (X quantised per row): relative L2 vs gemm_q8 %.2e (%s)\n",
                   q8q_error(best, mats, X, Y, Y2), best->isa);
        for (int i = 0; i < NMAT; i++)
            free(mats[i].w), free(mats[i].scale);
    }
    printf("(GB/s counts weight bytes only; X and Y are under 0.5 MB a pass)\n");
    if (below) panels(below, reps, X, Y);
    panels(best, reps, X, Y);
    const ptts_kernels *gk[2] = {ptts_kernels_ref(), best};
    gelu_frame(gk, best == ptts_kernels_ref() ? 1 : 2, reps);
    ptts_pool_free(pool);
    free(X);
    free(Y);
    free(Y2);
    return 0;
}
