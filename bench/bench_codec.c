/*
 * bench_codec.c - speed of the full-size Mimi codec (english_2026-04 architecture, C 512,
 * nf 64; pocket-fill-v1 weights): the streaming decoder in ms per frame (latent [32] ->
 * pcm [1920], 80 ms of audio) single-threaded and with pools of 2.. threads, and the encoder
 * on 10 s of audio. Usage: bench_codec [frames (default 100)] [max threads (default 2)]
 * [weight mode f32|bf16|int8 (default f32)]: bf16 and int8 run the codec from bf16 panels
 * (gemm_bf16_panel) where the kernels have them, f32 from f32 panels. A 4th argument N > 1
 * adds the batched decoder (ptts_codec_dec_frames_low + _high) against N lone decoders, one
 * thread, calling-thread CPU ms per stream-frame (low-rate part, high-rate part), alternated.
 * Without it, first the decoder's attention with the _q row kernels (kernels.h) against one
 * query at a time, one thread, alternated; each thread count's line is followed by the wall ms
 * per frame of each decoder stage in the same run (codec.h, ptts_codec_taps.stage_s).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_args.h"
#include "codec.h"
#include "ops.h"
#include "pool.h"
#include "weights.h"

/* CPU time of the calling thread in seconds (not inflated by other processes on a busy
 * machine; meaningful for the single-threaded run). */
static double thread_cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Wall ms per frame; *cpu_ms receives the calling thread's CPU ms per frame, stage_ms
 * [PTTS_CODEC_STAGES] the wall ms per frame of each stage (ptts_codec_taps.stage_s, read in
 * the same run: 10 clock reads a frame). */
static double bench_decoder(ptts_codec_dec *d, const ptts_ctx *c, const float *lat, int ld,
                            int frames, float *pcm, double *cpu_ms, double *stage_ms) {
    double st[PTTS_CODEC_STAGES] = {0};
    const ptts_codec_taps taps = {.stage_s = st};
    ptts_codec_dec_reset(d);
    for (int t = 0; t < 5; t++)
        ptts_codec_dec_frame(d, c, lat + (size_t)(t % 16) * ld, pcm, NULL);
    ptts_codec_dec_reset(d);
    double t0 = ptts_now(), c0 = thread_cpu();
    for (int t = 0; t < frames; t++)
        ptts_codec_dec_frame(d, c, lat + (size_t)(t % 16) * ld, pcm, &taps);
    *cpu_ms = (thread_cpu() - c0) * 1e3 / frames;
    for (int i = 0; i < PTTS_CODEC_STAGES; i++)
        stage_ms[i] = st[i] * 1e3 / frames;
    return (ptts_now() - t0) * 1e3 / frames;
}

/* The stage names of ptts_codec_taps.stage_s, in its order. */
static const char *const stage_name[PTTS_CODEC_STAGES] = {
    "upsample", "transformer", "dec_in", "up0", "res0", "up1", "res1", "up2", "res2", "out"};

/* One thread: N streams decoded alone vs batched, rounds alternated; CPU ms per stream-frame. */
static int bench_batched(const ptts_weights *w, const float *lat, int frames, int N) {
    ptts_error e = {0};
    const int ld = w->arch.ld, fs = w->arch.frame_samples;
    ptts_codec_dec **d = calloc((size_t)N, sizeof *d);
    const float **lp = calloc((size_t)N, sizeof *lp);
    float *pcm = malloc((size_t)fs * sizeof(float));
    ptts_codec_batch *b = NULL;
    if (!d || !lp || !pcm || ptts_codec_batch_create(&b, w, N, &e)) return 1;
    for (int i = 0; i < N; i++)
        if (ptts_codec_dec_create(&d[i], w, &e)) return 1;
    ptts_ctx c = {ptts_kernels_best(), NULL};
    double alone = 0, low = 0, high = 0;
    for (int round = 0; round < 6; round++) {
        for (int i = 0; i < N; i++)
            ptts_codec_dec_reset(d[i]);
        double t0 = thread_cpu();
        for (int t = 0; t < frames; t++)
            for (int i = 0; i < N; i++)
                ptts_codec_dec_frame(d[i], &c, lat + (size_t)((t + i) % 16) * ld, pcm, NULL);
        if (round) alone += thread_cpu() - t0;
        for (int i = 0; i < N; i++)
            ptts_codec_dec_reset(d[i]);
        for (int t = 0; t < frames; t++) {
            for (int i = 0; i < N; i++)
                lp[i] = lat + (size_t)((t + i) % 16) * ld;
            double t1 = thread_cpu();
            ptts_codec_dec_frames_low(b, d, N, &c, lp);
            double t2 = thread_cpu();
            for (int i = 0; i < N; i++)
                ptts_codec_dec_frame_high(d[i], &c, pcm);
            if (round) {
                low += t2 - t1;
                high += thread_cpu() - t2;
            }
        }
    }
    const double per = 1e3 / (5.0 * frames * N);
    printf("%d streams, 1 thread, CPU ms per stream-frame: alone %.2f, batched %.2f (low-rate "
           "part %.2f, high-rate part %.2f)\n",
           N, alone * per, (low + high) * per, low * per, high * per);
    for (int i = 0; i < N; i++)
        ptts_codec_dec_free(d[i]);
    ptts_codec_batch_free(b);
    free(d);
    free(lp);
    free(pcm);
    return 0;
}

/* The attention's _q kernels (several query rows over the keys at once) against one query at a
 * time (the table's dot_rows / axpy_rows per query, as before they existed), one thread, rounds
 * alternated: CPU ms per frame of each and whether the samples are the same. */
static const ptts_kernels *one_q_base;
static void dot_rows_one(const float *const *q, int nq, const float *K, int ldk, int rows, int n,
                         float scale, float *const *out) {
    for (int i = 0; i < nq; i++)
        one_q_base->dot_rows(q[i], K, ldk, rows, n, scale, out[i]);
}
static void axpy_rows_one(float *const *y, const float *const *p, int nq, const float *V, int ldv,
                          int rows, int n) {
    for (int i = 0; i < nq; i++)
        one_q_base->axpy_rows(y[i], p[i], V, ldv, rows, n);
}
static void bench_rows_q(ptts_codec_dec *d, const ptts_kernels *k, const float *lat, int ld,
                         int frames, int fs) {
    ptts_kernels one = *k;
    one_q_base = k;
    one.dot_rows_q = dot_rows_one;
    one.axpy_rows_q = axpy_rows_one;
    const ptts_ctx cq = {k, NULL}, c1 = {&one, NULL};
    float *pq = malloc((size_t)fs * frames * sizeof(float));
    float *p1 = malloc((size_t)fs * frames * sizeof(float));
    if (!pq || !p1) {
        free(pq), free(p1);
        return;
    }
    double tq = 0, t1 = 0;
    for (int round = 0; round < 7; round++) /* round 0: warm-up */
        for (int v = 0; v < 2; v++) {
            ptts_codec_dec_reset(d);
            double t0 = thread_cpu();
            for (int t = 0; t < frames; t++)
                ptts_codec_dec_frame(d, v ? &c1 : &cq, lat + (size_t)(t % 16) * ld,
                                     (v ? p1 : pq) + (size_t)t * fs, NULL);
            if (round) *(v ? &t1 : &tq) += thread_cpu() - t0;
        }
    printf("attention rows, 1 thread, CPU ms a frame (6 rounds alternated): %d queries a pass "
           "%.3f, one at a time %.3f; samples %s\n",
           PTTS_ROWS_Q, tq * 1e3 / (6.0 * frames), t1 * 1e3 / (6.0 * frames),
           memcmp(pq, p1, (size_t)fs * frames * sizeof(float)) ? "DIFFER" : "identical");
    free(pq), free(p1);
}

int main(int argc, char **argv) {
    int frames, max_threads, streams;
    int rc = bench_args(argc, argv, 4,
                        "usage: bench_codec [frames (100)] [max threads (2)] [f32|bf16|int8 (f32)]"
                        " [batched streams (0: none)]\n");
    if (rc >= 0) return rc;
    if (bench_arg_int(argc, argv, 1, "frames", 100, 1, 100000, &frames) ||
        bench_arg_int(argc, argv, 2, "max threads", 2, 1, 1024, &max_threads) ||
        bench_arg_int(argc, argv, 4, "batched streams", 0, 0, 4096, &streams))
        return 2;
    const char *mode = argc > 3 ? argv[3] : "f32";
    ptts_weights_options wo = {0};
    if (!strcmp(mode, "bf16"))
        wo.mode = PTTS_WMODE_BF16;
    else if (!strcmp(mode, "int8"))
        wo.mode = PTTS_WMODE_INT8;
    else if (strcmp(mode, "f32")) {
        fprintf(stderr, "bench_codec: weight mode %s is not f32, bf16 or int8\n", mode);
        return 2;
    }
    ptts_arch a;
    ptts_arch_preset(&a, "full");
    ptts_weights *w = NULL;
    ptts_error e = {0};
    if (ptts_weights_fill(&w, &a, &wo, &e)) {
        fprintf(stderr, "bench_codec: %s\n", e.msg);
        return 1;
    }
    ptts_codec_dec *d = NULL;
    if (ptts_codec_dec_create(&d, w, &e)) {
        fprintf(stderr, "bench_codec: %s\n", e.msg);
        return 1;
    }
    const int ld = w->arch.ld, fs = w->arch.frame_samples;
    float *lat = malloc((size_t)16 * ld * sizeof(float));
    float *pcm = malloc((size_t)fs * sizeof(float));
    const int audio_n = 10 * 24000;
    float *audio = malloc((size_t)audio_n * sizeof(float));
    if (!lat || !pcm || !audio) return 1;
    for (int i = 0; i < 16 * ld; i++)
        lat[i] = (float)sin(0.37 * i);
    for (int i = 0; i < audio_n; i++)
        audio[i] = 0.3f * (float)sin(0.05 * i + 0.001 * i * (i % 7));

    const ptts_kernels *k = ptts_kernels_best();
    printf("codec (full size, kernels %s, %s weights: %s panels), %d frames of %d samples "
           "(%.0f ms of audio each)\n",
           k->isa, mode, w->codec.dec_tr.layer[0].linear1.wp16 ? "bf16" : "f32", frames, fs,
           1e3 * fs / 24000.0);
    if (streams > 1) return bench_batched(w, lat, frames, streams);
    bench_rows_q(d, k, lat, ld, frames, fs);
    for (int nt = 1; nt <= max_threads; nt++) {
        ptts_pool *pool = nt > 1 ? ptts_pool_create(nt) : NULL;
        if (nt > 1 && !pool) return 1;
        ptts_ctx c = {k, pool};
        double cpu_ms, stage_ms[PTTS_CODEC_STAGES];
        long reg0, sl0, reg1, sl1;
        ptts_pool_counts(pool, &reg0, &sl0);
        double ms = bench_decoder(d, &c, lat, ld, frames, pcm, &cpu_ms, stage_ms);
        ptts_pool_counts(pool, &reg1, &sl1);
        double t0 = ptts_now();
        float *latents = NULL;
        int T = 0;
        if (ptts_codec_encode(w, &c, audio, audio_n, &latents, &T, NULL, NULL, &e)) {
            fprintf(stderr, "bench_codec: %s\n", e.msg);
            return 1;
        }
        double enc_s = ptts_now() - t0;
        free(latents);
        printf("threads %d: decoder %.2f ms/frame wall (%.1fx real time), calling thread CPU "
               "%.2f ms/frame; encoder %.2f s for 10 s of audio (%.1fx real time)\n",
               nt, ms, 80.0 / ms, cpu_ms, enc_s, 10.0 / enc_s);
        printf("  stages, wall ms/frame:");
        for (int i = 0; i < PTTS_CODEC_STAGES; i++)
            printf(" %s %.3f", stage_name[i], stage_ms[i]);
        printf("\n");
        if (pool) /* the warm-up frames included: (frames + 5) decoded between the counts */
            printf("  pool: %.1f regions, %.2f worker sleeps a frame\n",
                   (double)(reg1 - reg0) / (frames + 5), (double)(sl1 - sl0) / (frames + 5));
        ptts_pool_free(pool);
    }
    ptts_codec_dec_free(d);
    ptts_weights_free(w);
    free(lat);
    free(pcm);
    free(audio);
    return 0;
}
