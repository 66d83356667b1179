/*
 * bench_startup.c - time to first audio, by stage, in one process: for each of --reps rounds
 * it loads the model, the voice, starts a stream and takes its first frame, then frees all of
 * it, and prints each stage's median (ms):
 *   weights    ptts_model_load's weights: a checkpoint is read, converted to the precision and
 *              packed (panels, int8 rows); a converted file (`pocket-tts convert`) is mapped
 *              and bound, nothing converted
 *   tokenizer  ptts_model_load's tokenizer
 *   engine     ptts_model_load's thread pool and backend
 *   voice      ptts_voice_load (a voice-state .safetensors, or an audio file encoded)
 *   stream     ptts_stream_create (the engine: KV caches, codec state)
 *   start      ptts_stream_start: text preparation
 *   frame1     the first ptts_stream_next: the chunk's prompt through the backbone, the first
 *              step, flow and codec
 *   first audio  the sum: from nothing loaded to the first frame's samples
 *   next       ms per frame of the --frames - 1 frames after the first (EOS off): whether the
 *              weights' memory (mapped file or allocated) changes the steady speed
 * The first round runs with whatever the page cache holds; later rounds find the files cached.
 * The whole process (`pocket-tts generate`) is timed from outside: bench/RESULTS.md, "Start-up".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

enum { STAGES = 7, MAXREPS = 64 };
static const char *const stage_names[STAGES] = {"weights", "tokenizer", "engine", "voice",
                                                "stream",  "start",     "frame1"};

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int usage(void) {
    fprintf(stderr,
            "usage: bench_startup --weights FILE --tokenizer FILE --voice FILE "
            "[--precision f32|bf16|int8] [--threads N] [--text TEXT] [--reps N] [--frames N]\n");
    return 2;
}

int main(int argc, char **argv) {
    ptts_model_options mo = ptts_model_options_default();
    const char *voice = NULL, *text = "Hello there, this is the first sentence.";
    int reps = 5, frames = 20;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) return usage();
        i++;
        if (!strcmp(a, "--weights"))
            mo.weights_path = v;
        else if (!strcmp(a, "--tokenizer"))
            mo.tokenizer_path = v;
        else if (!strcmp(a, "--voice"))
            voice = v;
        else if (!strcmp(a, "--text"))
            text = v;
        else if (!strcmp(a, "--threads"))
            mo.threads = atoi(v);
        else if (!strcmp(a, "--frames") && atoi(v) >= 2 && atoi(v) <= 10000)
            frames = atoi(v);
        else if (!strcmp(a, "--reps") && atoi(v) >= 1 && atoi(v) <= MAXREPS)
            reps = atoi(v);
        else if (!strcmp(a, "--precision") && !strcmp(v, "f32"))
            mo.precision = PTTS_PRECISION_F32;
        else if (!strcmp(a, "--precision") && !strcmp(v, "bf16"))
            mo.precision = PTTS_PRECISION_BF16;
        else if (!strcmp(a, "--precision") && !strcmp(v, "int8"))
            mo.precision = PTTS_PRECISION_INT8;
        else
            return usage();
    }
    if (!mo.weights_path || !mo.tokenizer_path || !voice) return usage();
    mo.backend = PTTS_BACKEND_CPU;
    static double t[STAGES][MAXREPS], total[MAXREPS], next[MAXREPS];
    float pcm[PTTS_FRAME_SAMPLES];
    ptts_error e = {0};
    for (int r = 0; r < reps; r++) {
        ptts_model *m = NULL;
        ptts_voice *vo = NULL;
        ptts_stream *s = NULL;
        ptts_gen_options go = ptts_gen_options_default();
        go.seed = 1;
        go.seed_set = 1;
        go.eos_threshold = 1e9f; /* every round as long: synthetic weights may stop early */
        go.eos_threshold_set = 1;
        double t0 = ptts_now();
        int rc = ptts_model_load(&m, &mo, &e);
        double t1 = ptts_now();
        if (!rc) rc = ptts_voice_load(&vo, m, voice, &e);
        double t2 = ptts_now();
        if (!rc) rc = ptts_stream_create(&s, m, &e);
        double t3 = ptts_now();
        if (!rc) rc = ptts_stream_start(s, vo, text, &go, &e);
        double t4 = ptts_now();
        if (!rc && (rc = ptts_stream_next(s, pcm, &e)) == 0)
            rc = ptts_fail(&e, PTTS_E_INTERNAL, "no audio");
        double t5 = ptts_now();
        for (int f = 1; rc > 0 && f < frames; f++)
            if ((rc = ptts_stream_next(s, pcm, &e)) == 0)
                rc = ptts_fail(&e, PTTS_E_INVALID, "the text ended early: a longer --text");
        next[r] = (ptts_now() - t5) * 1e3 / (frames - 1);
        if (rc < 0) {
            fprintf(stderr, "bench_startup: %s\n", e.msg);
            ptts_stream_free(s);
            ptts_voice_free(vo);
            ptts_model_free(m);
            return 1;
        }
        t[0][r] = m->load_ms_weights;
        t[1][r] = m->load_ms_tokenizer;
        t[2][r] = m->load_ms_finish;
        t[3][r] = (t2 - t1) * 1e3;
        t[4][r] = (t3 - t2) * 1e3;
        t[5][r] = (t4 - t3) * 1e3;
        t[6][r] = (t5 - t4) * 1e3;
        total[r] = (t5 - t0) * 1e3;
        printf("round %d: first audio %.1f ms after nothing loaded (weights %.1f)\n", r + 1,
               total[r], t[0][r]);
        ptts_stream_free(s);
        ptts_voice_free(vo);
        ptts_model_free(m);
    }
    printf("%s, %s, %d rounds, medians (ms):\n", mo.weights_path,
           mo.precision == PTTS_PRECISION_INT8   ? "int8"
           : mo.precision == PTTS_PRECISION_BF16 ? "bf16"
                                                 : "f32 (or the converted file's)",
           reps);
    for (int i = 0; i < STAGES; i++)
        printf("  %-10s %8.2f\n", stage_names[i], median(t[i], reps));
    printf("  %-10s %8.2f\n", "first audio", median(total, reps));
    printf("  %-10s %8.2f ms/frame\n", "next", median(next, reps));
    return 0;
}
