/*
 * overlap_check.h - runs that must give the same bits with the CPU engine's codec/backbone
 * overlap on and off (test_overlap.c, tiny; test_overlap_full.c, full size): one stream over
 * three chunks (max_tokens 6; the EOS rule or max_gen_len ends them), every frame's PCM, latent
 * and EOS logit; a batch of 3 slots where NUTT utterances of different lengths stop, join freed
 * slots and one (utterance 2) is cancelled by its callback, every frame's PCM.
 */
#ifndef PTTS_OVERLAP_CHECK_H
#define PTTS_OVERLAP_CHECK_H

#include "generate.h"
#include "model.h"
#include "test.h"

#define MAXF 400
#define NUTT 6

/* Everything one utterance produced, frame by frame. */
typedef struct {
    int frames, chunks_missed, ended;
    float *pcm; /* [MAXF][fs] */
    float *lat; /* [MAXF][ld] (streams only) */
    float eos[MAXF];
} run;

static void run_init(run *r, int ld) {
    memset(r, 0, sizeof *r);
    r->pcm = calloc((size_t)MAXF * PTTS_FRAME_SAMPLES, sizeof(float));
    r->lat = calloc((size_t)MAXF * ld, sizeof(float));
    REQUIRE(r->pcm && r->lat);
}

static void run_free(run *r) {
    free(r->pcm);
    free(r->lat);
}

static void same_runs(const run *a, const run *b, int ld, const char *what) {
    CHECKF(a->frames == b->frames, "%s: %d frames with overlap, %d without", what, a->frames,
           b->frames);
    CHECKF(a->chunks_missed == b->chunks_missed && a->ended == b->ended, "%s: end differs", what);
    int n = PTTS_MIN(PTTS_MIN(a->frames, b->frames), MAXF);
    CHECKF(n > 0, "%s: no frames", what);
    CHECKF(!memcmp(a->pcm, b->pcm, (size_t)n * PTTS_FRAME_SAMPLES * sizeof(float)),
           "%s: PCM differs", what);
    CHECKF(!memcmp(a->lat, b->lat, (size_t)n * ld * sizeof(float)), "%s: latents differ", what);
    CHECKF(!memcmp(a->eos, b->eos, (size_t)n * sizeof(float)), "%s: EOS logits differ", what);
}

/* One utterance through a stream: three chunks (max_tokens 6); with the EOS threshold of the
 * fixture's eos_case the chunks stop by the EOS rule, with 1e9 at max_gen_len. */
static void stream_run(ptts_model *m, const ptts_voice *v, float eos_threshold, run *r) {
    ptts_error e = {0};
    ptts_gen_options o = ptts_gen_options_default();
    o.seed = 7;
    o.seed_set = 1;
    o.max_tokens = 6;
    o.eos_threshold = eos_threshold;
    o.eos_threshold_set = 1;
    o.frames_after_eos = 3;
    o.frames_after_eos_set = 1;
    ptts_stream *s;
    REQUIRE(ptts_stream_create(&s, m, &e) == 0);
    CHECKF(ptts_stream_start(s, v, "Hello world. This is a test of the pocket engine; it speaks!",
                             &o, &e) == 0,
           "%s", e.msg);
    const int ld = m->w->arch.ld, fs = m->w->arch.frame_samples;
    float *pcm = malloc((size_t)fs * sizeof(float));
    for (;;) {
        int n = ptts_stream_next(s, pcm, &e);
        CHECKF(n >= 0, "%s", e.msg);
        if (n <= 0) break;
        if (r->frames < MAXF) {
            const ptts_step_record *rec = ptts_stream_last_step(s);
            memcpy(r->pcm + (size_t)r->frames * fs, pcm, (size_t)fs * sizeof(float));
            memcpy(r->lat + (size_t)r->frames * ld, rec->latent, (size_t)ld * sizeof(float));
            r->eos[r->frames] = rec->eos;
        }
        r->frames++;
    }
    ptts_stream_status st;
    ptts_stream_get_status(s, &st);
    r->chunks_missed = st.eos_missed;
    r->ended = st.n_chunks;
    free(pcm);
    ptts_stream_free(s);
}

/* Batch of 3 slots, NUTT utterances: slots are refilled as they free up; utterance 2 is
 * cancelled by its callback after 5 frames. */
typedef struct {
    run *r;
    int utt_of_slot[3];
} batch_ctx;

static int on_frame(void *user, int slot, const float *pcm, int n) {
    batch_ctx *c = user;
    run *r = &c->r[c->utt_of_slot[slot]];
    if (!pcm) {
        r->ended = 1 + (n < 0);
        return 0;
    }
    if (r->frames < MAXF) memcpy(r->pcm + (size_t)r->frames * n, pcm, (size_t)n * sizeof(float));
    r->frames++;
    return c->utt_of_slot[slot] == 2 && r->frames >= 5;
}

static void batch_run(ptts_model *m, const ptts_voice *const *voices, float eos_case, run *r) {
    static const char *texts[NUTT] = {"Hello world. This is a test.",
                                      "ok go",
                                      "A third voice speaks here, and it goes on.",
                                      "Short one.",
                                      "Five.",
                                      "The last utterance joins late."};
    ptts_error e = {0};
    ptts_gen_options o[NUTT];
    for (int i = 0; i < NUTT; i++) {
        o[i] = ptts_gen_options_default();
        o[i].seed = 300 + (uint64_t)i;
        o[i].seed_set = 1;
        o[i].max_tokens = 8;
        o[i].eos_threshold = i % 2 ? eos_case : 1e9f; /* EOS stops and max_gen_len stops */
        o[i].eos_threshold_set = 1;
        o[i].frames_after_eos = i;
        o[i].frames_after_eos_set = 1;
    }
    ptts_batch *b;
    REQUIRE(ptts_batch_create(&b, m, 3, &e) == 0);
    batch_ctx c = {.r = r};
    int next = 0, guard = 0;
    for (; next < 3; next++) {
        int slot = ptts_batch_start(b, voices[next % 2], texts[next], &o[next], &e);
        REQUIRE(slot == next);
        c.utt_of_slot[slot] = next;
    }
    while ((ptts_batch_active(b) > 0 || next < NUTT) && guard++ < 4000) {
        int left = ptts_batch_step(b, on_frame, &c, &e);
        CHECKF(left >= 0, "%s", e.msg);
        /* join: one new utterance per step at most, into the first free slot */
        if (next < NUTT && ptts_batch_active(b) < 3) {
            int slot = ptts_batch_start(b, voices[next % 2], texts[next], &o[next], &e);
            CHECK(slot >= 0 && slot < 3);
            if (slot >= 0 && slot < 3) c.utt_of_slot[slot] = next++;
        }
    }
    CHECK(next == NUTT);
    ptts_batch_free(b);
}

/* Frames the model's idle CPU engines decoded beside the next step (the engines of the runs
 * since the last ptts_model_set_overlap, which drops the idle ones); with `paired`, beside the
 * whole next step (the loop's step_decode), else beside it or its backbone alone. */
static long idle_overlapped_as(const ptts_model *m, int paired) {
    long n = 0;
    for (int i = 0; i < 2; i++)
        if (m->be.cache.idle[i].eng && m->be.cache.idle[i].ops == &ptts_engine_cpu)
            n += ptts_engine_cpu_overlapped(m->be.cache.idle[i].eng, paired);
    return n;
}
static long idle_overlapped(const ptts_model *m) { return idle_overlapped_as(m, 0); }

/* Stream runs (eos thresholds thr[0..nthr)) and the batch with overlap ON, then OFF (the
 * engines read it when a stream or batch creates them): identical bits required, and the ON
 * runs must have taken the overlap path (the OFF runs never). */
static void overlap_compare(ptts_model *m, const ptts_voice *const *voices, const float *thr,
                            int nthr, float batch_eos, const char *name) {
    const int ld = m->w->arch.ld;
    char what[160];
    for (int t = 0; t < nthr; t++) {
        run a, b;
        run_init(&a, ld);
        run_init(&b, ld);
        snprintf(what, sizeof what, "%s stream (eos threshold %g)", name, (double)thr[t]);
        ptts_model_set_overlap(m, PTTS_OVERLAP_ON);
        stream_run(m, voices[0], thr[t], &a);
        long on = idle_overlapped(m), on_paired = idle_overlapped_as(m, 1);
        ptts_model_set_overlap(m, PTTS_OVERLAP_OFF);
        stream_run(m, voices[0], thr[t], &b);
        long off = idle_overlapped(m);
        CHECKF(on > 0 && off == 0, "%s: %ld frames overlapped with ON, %ld with OFF", what, on,
               off);
        /* a stream pairs every call but a chunk's first and last (and those after its EOS) */
        CHECKF(on_paired > 0, "%s: %ld of %ld overlapped frames beside the whole next step", what,
               on_paired, on);
        printf("%s: %d frames, %ld overlapped (%ld beside the whole next step)\n", what, a.frames,
               on, on_paired);
        same_runs(&a, &b, ld, what);
        run_free(&a);
        run_free(&b);
    }
    run ra[NUTT], rb[NUTT];
    for (int i = 0; i < NUTT; i++) {
        run_init(&ra[i], ld);
        run_init(&rb[i], ld);
    }
    ptts_model_set_overlap(m, PTTS_OVERLAP_ON);
    batch_run(m, voices, batch_eos, ra);
    long on = idle_overlapped(m), on_paired = idle_overlapped_as(m, 1);
    ptts_model_set_overlap(m, PTTS_OVERLAP_OFF);
    batch_run(m, voices, batch_eos, rb);
    long off = idle_overlapped(m);
    ptts_model_set_overlap(m, PTTS_OVERLAP_AUTO);
    CHECKF(on > 0 && off == 0, "%s batch: %ld frames overlapped with ON, %ld with OFF", name, on,
           off);
    /* joins break the pairing (the backbone alone runs ahead), steady calls keep it */
    CHECKF(on_paired > 0 && on_paired < on,
           "%s batch: %ld of %ld overlapped frames beside the whole next step", name, on_paired,
           on);
    printf("%s batch: %ld frames overlapped, %ld beside the whole next step\n", name, on,
           on_paired);
    for (int i = 0; i < NUTT; i++) {
        snprintf(what, sizeof what, "%s batch utterance %d", name, i);
        printf("%s: %d frames\n", what, ra[i].frames);
        /* the cancelled utterance gets no end call */
        CHECKF(ra[i].ended == (i != 2), "%s: end call %d", what, ra[i].ended);
        same_runs(&ra[i], &rb[i], ld, what);
        run_free(&ra[i]);
        run_free(&rb[i]);
    }
}

#endif
