/*
 * voice_api.c - the public voice handles of ptts.h: a voice-state file (loaded), audio (cloned:
 * resampled to 24 kHz, encoded by the codec, prompted through the backbone), or "whichever the
 * file is" (ptts_voice_open, the one decision the CLI and the server share). Once per voice,
 * never per frame.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio.h"
#include "backbone.h"
#include "codec.h"
#include "model.h"

static int wrap_voice(ptts_voice **out, ptts_voice_state *st, ptts_error *e) {
    *out = calloc(1, sizeof **out);
    if (!*out) {
        ptts_voice_state_free(st);
        return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    }
    (*out)->st = st;
    return 0;
}

static int need(const void *p, const char *what, ptts_error *e) {
    return p ? 0 : ptts_fail(e, PTTS_E_INVALID, "%s is NULL", what);
}

int ptts_voice_load(ptts_voice **out, const ptts_model *m, const char *path, ptts_error *e) {
    if (!out) return ptts_fail(e, PTTS_E_INVALID, "out is NULL");
    *out = NULL;
    int rc = need(m, "the model", e);
    if (!rc) rc = need(path, "the voice path", e);
    if (rc) return rc;
    const ptts_arch *a = &m->w->arch;
    ptts_voice_state *st;
    rc = ptts_voice_state_load(&st, path, a->layers, a->heads, a->d / a->heads, e);
    return rc ? rc : wrap_voice(out, st, e);
}

int ptts_voice_load_memory(ptts_voice **out, const ptts_model *m, const void *buf, size_t size,
                           ptts_error *e) {
    if (!out) return ptts_fail(e, PTTS_E_INVALID, "out is NULL");
    *out = NULL;
    int rc = need(m, "the model", e);
    if (!rc) rc = need(buf, "the voice buffer", e);
    if (rc) return rc;
    const ptts_arch *a = &m->w->arch;
    ptts_voice_state *st;
    rc = ptts_voice_state_load_memory(&st, buf, size, "voice", a->layers, a->heads, a->d / a->heads,
                                      e);
    return rc ? rc : wrap_voice(out, st, e);
}

/* Below this peak amplitude (about -80 dBFS, 3 LSB of 16-bit audio) a clip holds no voice. */
#define PTTS_SILENCE_PEAK 1e-4f

static int no_cloning(ptts_error *e) {
    return ptts_fail(e, PTTS_E_UNSUPPORTED,
                     "this checkpoint has no voice-cloning weights: use a preset voice or the "
                     "model with voice cloning");
}

int ptts_voice_clone_positions(int frame_samples, double seconds) {
    if (frame_samples < 1 || !(seconds > 0) || seconds > 3600) return 0;
    const int64_t n =
        (int64_t)ceil(seconds * PTTS_SAMPLE_RATE) + (int64_t)(0.08 * PTTS_SAMPLE_RATE);
    return (int)((n + frame_samples - 1) / frame_samples) + 1;
}

int ptts_voice_from_samples(ptts_voice **out, const ptts_model *m, const float *samples, int64_t n,
                            int sample_rate, double max_seconds, ptts_error *e) {
    if (!out) return ptts_fail(e, PTTS_E_INVALID, "out is NULL");
    *out = NULL;
    int rc = need(m, "the model", e);
    if (rc) return rc;
    const ptts_arch *a = &m->w->arch;
    if (!a->has_encoder) return no_cloning(e);
    if (sample_rate <= 0 || n <= 0 || !samples)
        return ptts_fail(e, PTTS_E_AUDIO, "empty audio (%lld samples at %d Hz)", (long long)n,
                         sample_rate);
    /* The reference truncates at the input rate (int(30 * rate) samples), then resamples. */
    if (max_seconds > 0) {
        double lim = floor(max_seconds * sample_rate);
        if (lim < 1) lim = 1;
        if ((double)n > lim) n = (int64_t)lim;
    }
    float peak = 0.0f;
    for (int64_t i = 0; i < n; i++) {
        float x = fabsf(samples[i]);
        if (!(x <= 3.0e38f))
            return ptts_fail(e, PTTS_E_AUDIO, "non-finite audio sample at index %lld",
                             (long long)i);
        if (x > peak) peak = x;
    }
    float *pcm = NULL;
    int64_t np = 0;
    rc = ptts_resample(samples, n, sample_rate, PTTS_SAMPLE_RATE, &pcm, &np, e);
    if (rc) return rc;
    if (np < a->frame_samples) {
        free(pcm);
        return ptts_fail(e, PTTS_E_AUDIO,
                         "the audio is too short to clone a voice: %lld samples at 24 kHz "
                         "(%.2f ms), at least %d (one %.0f ms frame) needed",
                         (long long)np, 1e3 * (double)np / PTTS_SAMPLE_RATE, a->frame_samples,
                         1e3 * a->frame_samples / PTTS_SAMPLE_RATE);
    }
    if (peak < PTTS_SILENCE_PEAK) {
        free(pcm);
        return ptts_fail(e, PTTS_E_AUDIO,
                         "the audio is silent (peak amplitude %.2g): give a recording of the "
                         "voice to clone",
                         (double)peak);
    }
    float *cut = NULL; /* 3.3: every cloning prompt goes through end_on_pause (MODEL.md 7.3) */
    rc = ptts_end_on_pause(pcm, np, PTTS_SAMPLE_RATE, &cut, &np, e);
    free(pcm);
    if (rc) return rc;
    float *lat = NULL;
    int T = 0;
    rc = ptts_codec_encode(m->w, &m->ctx, cut, np, &lat, &T, NULL, NULL, e);
    free(cut);
    if (rc) return rc;
    ptts_backbone bb;
    rc = ptts_backbone_init(&bb, m->w, T + 1, 0, e); /* the voice state exact, in float32 */
    if (!rc) rc = ptts_backbone_prompt_voice_latents(&bb, &m->ctx, lat, T, e);
    ptts_voice_state *st = NULL;
    if (!rc) rc = ptts_backbone_to_voice(&bb, &st, e);
    ptts_backbone_free(&bb);
    free(lat);
    return rc ? rc : wrap_voice(out, st, e);
}

int ptts_voice_from_audio_file(ptts_voice **out, const ptts_model *m, const char *path,
                               double max_seconds, ptts_error *e) {
    if (!out) return ptts_fail(e, PTTS_E_INVALID, "out is NULL");
    *out = NULL;
    int rc = need(m, "the model", e);
    if (!rc) rc = need(path, "the audio path", e);
    if (rc) return rc;
    if (!m->w->arch.has_encoder) return no_cloning(e); /* before reading anything */
    float *x = NULL;
    int64_t n = 0;
    int rate = 0;
    /* Exactly the samples the reference keeps (floor(max_seconds * rate)): the rest of a long
     * file is never decoded. */
    rc = ptts_audio_read(path, max_seconds, &x, &n, &rate, e);
    if (rc) return rc;
    rc = ptts_voice_from_samples(out, m, x, n, rate, max_seconds, e);
    free(x);
    if (rc) return ptts_fail_prefix(e, rc, path);
    return 0;
}

int ptts_voice_from_audio_memory(ptts_voice **out, const ptts_model *m, const void *buf,
                                 size_t size, double max_seconds, ptts_error *e) {
    if (!out) return ptts_fail(e, PTTS_E_INVALID, "out is NULL");
    *out = NULL;
    int rc = need(m, "the model", e);
    if (!rc) rc = need(buf, "the audio buffer", e);
    if (rc) return rc;
    if (!m->w->arch.has_encoder) return no_cloning(e);
    float *x = NULL;
    int64_t n = 0;
    int rate = 0;
    rc = ptts_audio_read_memory(buf, size, max_seconds, &x, &n, &rate, e);
    if (rc) return rc;
    rc = ptts_voice_from_samples(out, m, x, n, rate, max_seconds, e);
    free(x);
    return rc;
}

/* Whether the local file `path` is a safetensors: its header's length (8 bytes, little-endian)
 * that fits in the file, then '{'. Anything else is taken for audio. */
static int file_is_safetensors(const char *path, ptts_error *e) {
    FILE *f = fopen(path, "rb");
    if (!f) return ptts_fail(e, PTTS_E_IO, "%s: cannot open the voice file", path);
    unsigned char b[9];
    size_t n = fread(b, 1, sizeof b, f);
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    fclose(f);
    if (n < sizeof b || size < 9) return 0;
    uint64_t len = 0;
    for (int i = 7; i >= 0; i--)
        len = (len << 8) | b[i];
    return len > 1 && len <= (uint64_t)size - 8 && b[8] == '{';
}

int ptts_voice_open(ptts_voice **out, const ptts_model *m, const char *language, const char *voice,
                    double max_seconds, int *cloned, ptts_error *e) {
    if (!out) return ptts_fail(e, PTTS_E_INVALID, "out is NULL");
    *out = NULL;
    if (cloned) *cloned = 0;
    int rc = need(m, "the model", e);
    if (!rc) rc = need(voice, "the voice", e);
    if (rc) return rc;
    char *path = NULL;
    if ((rc = ptts_voice_resolve(&path, language, voice, e))) return rc;
    rc = file_is_safetensors(path, e);
    if (rc > 0) {
        rc = ptts_voice_load(out, m, path, e);
    } else if (rc == 0) {
        rc = ptts_voice_from_audio_file(out, m, path, max_seconds, e);
        if (!rc && cloned) *cloned = 1;
    }
    free(path);
    return rc;
}

int ptts_voice_save(const ptts_voice *v, const char *path, ptts_error *e) {
    if (!v || !path) return ptts_fail(e, PTTS_E_INVALID, "the voice or the path is NULL");
    return ptts_voice_state_save(v->st, path, e);
}

int ptts_voice_positions(const ptts_voice *v) { return v ? v->st->positions : 0; }

void ptts_voice_free(ptts_voice *v) {
    if (!v) return;
    ptts_voice_state_free(v->st);
    free(v);
}
