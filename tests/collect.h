/*
 * collect.h - a stream's whole output for the pause and incremental-text tests: the samples
 * and the length of every frame ptts_stream_next returned.
 */
#ifndef PTTS_TEST_COLLECT_H
#define PTTS_TEST_COLLECT_H

#include "ptts.h"
#include "test.h"

typedef struct {
    float *pcm; /* [n] */
    int64_t n, cap;
    int *frame_n; /* [frames]: samples of each frame */
    int frames, frames_cap;
} audio;

static inline void audio_free(audio *a) {
    free(a->pcm);
    free(a->frame_n);
    memset(a, 0, sizeof *a);
}

static inline void audio_add(audio *a, const float *pcm, int n) {
    if (a->n + n > a->cap) {
        a->cap = (a->n + n) * 2;
        a->pcm = realloc(a->pcm, (size_t)a->cap * sizeof *a->pcm);
        REQUIRE(a->pcm);
    }
    if (a->frames == a->frames_cap) {
        a->frames_cap = a->frames_cap ? a->frames_cap * 2 : 64;
        a->frame_n = realloc(a->frame_n, (size_t)a->frames_cap * sizeof *a->frame_n);
        REQUIRE(a->frame_n);
    }
    memcpy(a->pcm + a->n, pcm, (size_t)n * sizeof *pcm);
    a->n += n;
    a->frame_n[a->frames++] = n;
}

/* Pull frames until ptts_stream_next returns 0 (complete or waiting) or an error: returns that. */
static inline int drain(ptts_stream *s, audio *a) {
    float pcm[PTTS_FRAME_SAMPLES];
    for (;;) {
        ptts_error e = {0};
        int n = ptts_stream_next(s, pcm, &e);
        if (n <= 0) {
            if (n < 0) printf("stream error %d: %s\n", n, e.msg);
            return n;
        }
        CHECK(n <= PTTS_FRAME_SAMPLES);
        audio_add(a, pcm, n);
    }
}

/* `text` through ptts_stream_start, appended to a. */
static inline int speak(ptts_stream *s, const ptts_voice *v, const char *text,
                        const ptts_gen_options *o, audio *a) {
    ptts_error e = {0};
    int rc = ptts_stream_start(s, v, text, o, &e);
    if (rc) {
        printf("start \"%s\": %s\n", text, e.msg);
        return rc;
    }
    return drain(s, a);
}

/* a[from..from+n) is exactly b[0..n) (the same computation gives the same floats). */
static inline int same(const audio *a, int64_t from, const audio *b) {
    if (from + b->n > a->n) return 0;
    return memcmp(a->pcm + from, b->pcm, (size_t)b->n * sizeof *b->pcm) == 0;
}

static inline int zeros(const audio *a, int64_t from, int64_t n) {
    if (from + n > a->n) return 0;
    for (int64_t i = 0; i < n; i++)
        if (a->pcm[from + i] != 0.f) return 0;
    return 1;
}

/* The tiny model (tests/fixtures/tiny), two threads. */
static inline ptts_model *tiny_model(void) {
    ptts_error e = {0};
    ptts_model_options mo = ptts_model_options_default();
    mo.config_path = fixture_path("tiny/manifest.json");
    mo.weights_path = fixture_path("tiny/model.safetensors");
    mo.threads = 2;
    ptts_model *m;
    REQUIRE(ptts_model_load(&m, &mo, &e) == 0 || (fprintf(stderr, "%s\n", e.msg), 0));
    return m;
}

/* Short deterministic chunks: no noise, EOS at step 6, two frames after it. */
static inline ptts_gen_options quick_options(void) {
    ptts_gen_options o = ptts_gen_options_default();
    o.temperature = 0.f;
    o.temperature_set = 1;
    o.eos_threshold = -1e9f;
    o.eos_threshold_set = 1;
    o.frames_after_eos = 2;
    o.frames_after_eos_set = 1;
    return o;
}

#endif
