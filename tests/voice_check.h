/*
 * voice_check.h - comparing cloned voices with the reference's voice-state files, shared by
 * test_voice_clone.c (tiny) and test_voice_clone_full.c: per position, the relative L2 error of
 * each layer's key row and value row [d]; the saved file's header against the fixture's (names,
 * dtypes, shapes, offsets); generating from a voice with the reference's recorded noise.
 */
#ifndef PTTS_VOICE_CHECK_H
#define PTTS_VOICE_CHECK_H

#include <stdint.h>

#include "model.h"
#include "safetensors.h"
#include "test.h"
#include "voice.h"

/* A F32 tensor of a fixture file (malloc'd), or NULL. */
static float *fixture_f32(const char *rel, const char *name, int64_t *numel) {
    ptts_error e = {0};
    st_file *f = NULL;
    if (st_open(&f, fixture_path(rel), &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return NULL;
    }
    const st_tensor *t = st_find(f, name);
    float *out = t ? malloc((size_t)t->numel * sizeof(float)) : NULL;
    if (out && st_to_f32(f, t, out, &e)) {
        free(out);
        out = NULL;
    }
    if (numel) *numel = out ? t->numel : 0;
    st_close(f);
    return out;
}

/* Worst per-position rel L2 of keys and values of `got` against `ref`; INFINITY when the shapes
 * differ. */
static double voice_state_err(const ptts_voice_state *got, const ptts_voice_state *ref) {
    if (!got || !ref || got->layers != ref->layers || got->heads != ref->heads ||
        got->dh != ref->dh || got->positions != ref->positions) {
        if (got && ref)
            fprintf(stderr,
                    "  voice shape: got %d layers %d positions %dx%d, expected %d %d %dx%d\n",
                    got->layers, got->positions, got->heads, got->dh, ref->layers, ref->positions,
                    ref->heads, ref->dh);
        return INFINITY;
    }
    const size_t d = (size_t)got->heads * got->dh, P = (size_t)got->positions;
    double worst = 0;
    for (int l = 0; l < got->layers; l++)
        for (size_t p = 0; p < P; p++) {
            size_t o = ((size_t)l * P + p) * d;
            worst = fmax(worst, rel_l2(got->k + o, ref->k + o, d));
            worst = fmax(worst, rel_l2(got->v + o, ref->v + o, d));
        }
    return worst;
}

/* Load a fixture voice state (relative to the fixtures folder) for model m. */
static ptts_voice_state *load_ref_voice(const ptts_model *m, const char *rel) {
    ptts_error e = {0};
    ptts_voice_state *st = NULL;
    const ptts_arch *a = &m->w->arch;
    if (ptts_voice_state_load(&st, fixture_path(rel), a->layers, a->heads, a->d / a->heads, &e))
        fprintf(stderr, "%s\n", e.msg);
    return st;
}

/* Clone from an audio fixture (30 s truncation, as the reference's export) and compare. */
static double clone_err(const ptts_model *m, const char *audio_rel, const ptts_voice_state *ref,
                        ptts_voice **keep) {
    ptts_error e = {0};
    ptts_voice *v = NULL;
    int rc = ptts_voice_from_audio_file(&v, m, fixture_path(audio_rel), 30.0, &e);
    if (rc) {
        fprintf(stderr, "%s: %s\n", audio_rel, e.msg);
        return INFINITY;
    }
    double err = voice_state_err(v->st, ref);
    if (keep)
        *keep = v;
    else
        ptts_voice_free(v);
    return err;
}

/* Same tensor names, dtypes and shapes, same offset values (the data may differ by rounding).
 * Prints what differs. */
static int same_voice_header(const char *got_path, const char *ref_path) {
    ptts_error e = {0};
    st_file *g = NULL, *r = NULL;
    int ok = st_open(&g, got_path, &e) == 0;
    if (ok) ok = st_open(&r, ref_path, &e) == 0;
    if (!ok) fprintf(stderr, "%s\n", e.msg);
    if (ok && st_count(g) != st_count(r)) {
        fprintf(stderr, "  %d tensors, the reference has %d\n", st_count(g), st_count(r));
        ok = 0;
    }
    for (int i = 0; ok && i < st_count(r); i++) {
        const st_tensor *a = st_at(r, i), *b = st_find(g, a->name);
        if (!b) {
            fprintf(stderr, "  %s missing\n", a->name);
            ok = 0;
            break;
        }
        if (b->dtype != a->dtype || b->ndim != a->ndim ||
            memcmp(b->shape, a->shape, (size_t)a->ndim * sizeof a->shape[0]) != 0) {
            fprintf(stderr, "  %s: %s/%d dims, the reference has %s/%d dims\n", a->name,
                    st_dtype_name(b->dtype), b->ndim, st_dtype_name(a->dtype), a->ndim);
            ok = 0;
        }
        if (ok && a->dtype == ST_I64 && memcmp(a->data, b->data, a->nbytes) != 0) {
            fprintf(stderr, "  %s: different value\n", a->name);
            ok = 0;
        }
    }
    st_close(g);
    st_close(r);
    return ok;
}

/* Generate `text` from voice v replaying the noise rows; returns malloc'd PCM of *frames frames
 * (EOS disabled: every chunk runs max_gen_len). */
static float *gen_replay(const ptts_model *m, const ptts_voice *v, const char *text, int max_tokens,
                         const float *noise, int noise_rows, int *frames) {
    ptts_error e = {0};
    ptts_gen_options o = ptts_gen_options_default();
    o.eos_threshold = 1e9f;
    o.eos_threshold_set = 1;
    o.max_tokens = max_tokens;
    o.noise = noise;
    o.noise_rows = noise_rows;
    const int fs = m->w->arch.frame_samples;
    ptts_stream *s = NULL;
    *frames = 0;
    if (ptts_stream_create(&s, m, &e) || ptts_stream_start(s, v, text, &o, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        ptts_stream_free(s);
        return NULL;
    }
    float *pcm = NULL;
    int cap = 0;
    for (;;) {
        if (*frames == cap) {
            cap = cap ? 2 * cap : 64;
            float *t = realloc(pcm, (size_t)cap * fs * sizeof *pcm);
            REQUIRE(t != NULL);
            pcm = t;
        }
        int n = ptts_stream_next(s, pcm + (size_t)*frames * fs, &e);
        if (n < 0) fprintf(stderr, "%s\n", e.msg);
        if (n <= 0) break;
        ++*frames;
    }
    ptts_stream_free(s);
    return pcm;
}

/* Worst per-frame rel L2 of two PCM runs (INFINITY when the frame counts differ). */
static double pcm_err(const float *a, int na, const float *b, int nb, int fs) {
    if (!a || !b || na != nb || na == 0) return INFINITY;
    double worst = 0;
    for (int f = 0; f < na; f++)
        worst = fmax(worst, rel_l2(a + (size_t)f * fs, b + (size_t)f * fs, (size_t)fs));
    return worst;
}

#endif
