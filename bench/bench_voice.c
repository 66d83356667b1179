/*
 * bench_voice.c - time to clone a voice at full size (english_2026-04 architecture,
 * pocket-fill-v1 weights): ptts_voice_from_samples on a clip of S seconds (default 10) at 24 kHz
 * and at 44.1 kHz (adds the resampling), with 1 and 2.. threads; and the parts: resampling
 * 44.1 -> 24 kHz, the Mimi encoder, the backbone prompt. Wall time is the best of R
 * runs (the machine may be shared); process CPU time is given beside it.
 * Usage: bench_voice [seconds (10)] [runs (3)] [max threads (2)].
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audio.h"
#include "backbone.h"
#include "bench_args.h"
#include "codec.h"
#include "model.h"

static double proc_cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Speech-like test signal: a gliding harmonic tone with syllable-rate amplitude modulation. */
static float *make_clip(int64_t n, int rate) {
    float *x = malloc((size_t)n * sizeof *x);
    if (!x) return NULL;
    double ph = 0;
    for (int64_t i = 0; i < n; i++) {
        double t = (double)i / rate;
        double f0 = 120 + 30 * sin(2 * M_PI * 0.4 * t);
        ph += 2 * M_PI * f0 / rate;
        double y = 0;
        for (int h = 1; h <= 8; h++)
            y += sin(h * ph) / h;
        x[i] = (float)(0.2 * y * (0.55 + 0.45 * sin(2 * M_PI * 4.0 * t)));
    }
    return x;
}

/* The fixture tokenizer ($PTTS_FIXTURES, else next to this source: __FILE__ is absolute in
 * CMake builds). The model needs one; cloning does not use it. */
static const char *tokenizer_path(void) {
    static char path[1200];
    const char *env = getenv("PTTS_FIXTURES");
    if (env && *env) {
        snprintf(path, sizeof path, "%s/tokenizer/sp_unigram.model", env);
        return path;
    }
    snprintf(path, sizeof path, "%s", __FILE__);
    char *cut = strstr(path, "bench/bench_voice.c");
    if (!cut) return "tests/fixtures/tokenizer/sp_unigram.model";
    strcpy(cut, "tests/fixtures/tokenizer/sp_unigram.model");
    return path;
}

typedef struct {
    double wall, cpu; /* best wall, CPU of that run (seconds) */
} timing;

static int time_clone(const ptts_model *m, const float *x, int64_t n, int rate, int runs,
                      timing *out) {
    out->wall = INFINITY;
    for (int r = 0; r < runs; r++) {
        ptts_error e = {0};
        ptts_voice *v = NULL;
        double c0 = proc_cpu(), t0 = ptts_now();
        int rc = ptts_voice_from_samples(&v, m, x, n, rate, 0, &e);
        double wall = ptts_now() - t0, cpu = proc_cpu() - c0;
        ptts_voice_free(v);
        if (rc) {
            fprintf(stderr, "bench_voice: %s\n", e.msg);
            return rc;
        }
        if (wall < out->wall) *out = (timing){wall, cpu};
    }
    return 0;
}

int main(int argc, char **argv) {
    double seconds;
    int runs, max_threads;
    int rc = bench_args(argc, argv, 3,
                        "usage: bench_voice [seconds (10)] [runs (3)] [max threads (2)]\n");
    if (rc >= 0) return rc;
    if (bench_arg_float(argc, argv, 1, "seconds", 10, 0.08, 600, &seconds) ||
        bench_arg_int(argc, argv, 2, "runs", 3, 1, 1000, &runs) ||
        bench_arg_int(argc, argv, 3, "max threads", 2, 1, 1024, &max_threads))
        return 2;
    const char *tok = tokenizer_path();

    const int64_t n24 = (int64_t)(seconds * 24000), n44 = (int64_t)(seconds * 44100);
    float *x24 = make_clip(n24, 24000), *x44 = make_clip(n44, 44100);
    if (!x24 || !x44) return 1;
    ptts_arch a;
    ptts_arch_preset(&a, "full");
    printf("voice cloning, full size (d %d, %d layers, codec C %d), a %.1f s clip, best of %d\n",
           a.d, a.layers, a.C, seconds, runs);
    for (int nt = 1; nt <= max_threads; nt++) {
        ptts_error e = {0};
        ptts_model *m = NULL;
        if (ptts_model_create_filled(&m, &a, tok, nt, PTTS_PRECISION_F32, &e)) {
            fprintf(stderr, "bench_voice: %s\n", e.msg);
            return 1;
        }
        timing t24, t44, tres = {INFINITY, 0}, tenc = {INFINITY, 0}, tpr = {INFINITY, 0};
        if (time_clone(m, x24, n24, 24000, runs, &t24) ||
            time_clone(m, x44, n44, 44100, runs, &t44))
            return 1;
        for (int r = 0; r < runs; r++) {
            float *y = NULL, *lat = NULL;
            int64_t ny = 0;
            int T = 0;
            double c0 = proc_cpu(), t0 = ptts_now();
            if (ptts_resample(x44, n44, 44100, 24000, &y, &ny, &e)) return 1;
            double w = ptts_now() - t0, c = proc_cpu() - c0;
            if (w < tres.wall) tres = (timing){w, c};
            c0 = proc_cpu();
            t0 = ptts_now();
            if (ptts_codec_encode(m->w, &m->ctx, x24, n24, &lat, &T, NULL, NULL, &e)) return 1;
            w = ptts_now() - t0;
            c = proc_cpu() - c0;
            if (w < tenc.wall) tenc = (timing){w, c};
            ptts_backbone bb;
            ptts_voice_state *st = NULL;
            c0 = proc_cpu();
            t0 = ptts_now();
            if (ptts_backbone_init(&bb, m->w, T + 1, 0, &e) ||
                ptts_backbone_prompt_voice_latents(&bb, &m->ctx, lat, T, &e) ||
                ptts_backbone_to_voice(&bb, &st, &e))
                return 1;
            w = ptts_now() - t0;
            c = proc_cpu() - c0;
            if (w < tpr.wall) tpr = (timing){w, c};
            ptts_backbone_free(&bb);
            ptts_voice_state_free(st);
            free(y);
            free(lat);
        }
        printf("%d thread%s (%s kernels):\n", nt, nt == 1 ? "" : "s", m->ctx.k->isa);
        printf("  from 24 kHz     %7.1f ms wall (%7.1f ms CPU)  = %.3f x real time\n",
               1e3 * t24.wall, 1e3 * t24.cpu, t24.wall / seconds);
        printf("  from 44.1 kHz   %7.1f ms wall (%7.1f ms CPU)\n", 1e3 * t44.wall, 1e3 * t44.cpu);
        printf("    resample      %7.1f ms wall (%7.1f ms CPU)\n", 1e3 * tres.wall, 1e3 * tres.cpu);
        printf("    Mimi encoder  %7.1f ms wall (%7.1f ms CPU)\n", 1e3 * tenc.wall, 1e3 * tenc.cpu);
        printf("    prompt        %7.1f ms wall (%7.1f ms CPU)  (BOS + %d frames, backbone)\n",
               1e3 * tpr.wall, 1e3 * tpr.cpu, (int)((n24 + a.frame_samples - 1) / a.frame_samples));
        ptts_model_free(m);
    }
    free(x24);
    free(x44);
    return 0;
}
