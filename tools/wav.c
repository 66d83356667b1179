/*
 * wav.c - the WAV the reference writes (tools' side: `generate` and the server; contract in
 * wav.h): 16-bit mono PCM as Python's `wave`, samples converted as torch's
 * (x.clamp(-1, 1) * 32767).short(): the product in float32, truncated toward zero (NaN, which
 * has no defined conversion, becomes 0). For a stream the reference calls setnframes(1e9) and
 * never patches the header, so a pipe gets data size 2,000,000,000 bytes and RIFF size that
 * plus 36 - the same bytes a player sees from the reference. Files go to "<path>.tmp.<pid>.<k>",
 * get the true sizes patched in at close and are renamed over `path` after fsync, so readers
 * never see a partial file and an abort leaves any previous file untouched.
 */
#define _POSIX_C_SOURCE 200809L
#include "wav.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* The highest sample rate a header is written for (as the library reads). */
#define WAV_MAX_RATE 384000

/* Frames the reference announces for a stream (wave.setnframes(1_000_000_000)). */
#define WAV_STREAM_FRAMES INT64_C(1000000000)

struct wav_writer {
    FILE *f;
    int is_file; /* temp file: patch + rename at close */
    int own;     /* fclose at the end */
    int failed;  /* a write failed: close reports it */
    int rate;
    int64_t n; /* samples written */
    char *path, *tmp;
};

static void put_u32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static void put_u16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

void wav_header(uint8_t out[44], int sample_rate, int64_t n_samples) {
    const uint64_t max_data = (UINT32_MAX - 36u) & ~(uint64_t)1;
    uint64_t frames = n_samples < 0 ? (uint64_t)WAV_STREAM_FRAMES : (uint64_t)n_samples;
    uint64_t data = frames > max_data / 2 ? max_data : frames * 2;
    uint32_t rate = sample_rate > 0 ? (uint32_t)sample_rate : 0;
    memcpy(out, "RIFF", 4);
    put_u32(out + 4, (uint32_t)(36 + data));
    memcpy(out + 8, "WAVEfmt ", 8);
    put_u32(out + 16, 16); /* fmt chunk size */
    put_u16(out + 20, 1);  /* PCM */
    put_u16(out + 22, 1);  /* mono */
    put_u32(out + 24, rate);
    put_u32(out + 28, rate * 2u); /* byte rate */
    put_u16(out + 32, 2);         /* block align */
    put_u16(out + 34, 16);        /* bits per sample */
    memcpy(out + 36, "data", 4);
    put_u32(out + 40, (uint32_t)data);
}

int16_t wav_sample(float x) {
    if (isnan(x)) return 0;
    if (x > 1.0f) x = 1.0f;
    if (x < -1.0f) x = -1.0f;
    float y = x * 32767.0f;
    return (int16_t)y; /* truncation toward zero */
}

static void wav_free(wav_writer *w) {
    free(w->path);
    free(w->tmp);
    free(w);
}

static int wav_start(wav_writer *w, const char *what, ptts_error *e) {
    uint8_t hdr[44];
    wav_header(hdr, w->rate, w->is_file ? 0 : -1);
    if (fwrite(hdr, 1, sizeof hdr, w->f) != sizeof hdr || fflush(w->f) != 0)
        return tool_fail(e, PTTS_E_IO, "%s: cannot write WAV header: %s", what, strerror(errno));
    return PTTS_OK;
}

static int check_rate(int sample_rate, ptts_error *e) {
    if (sample_rate <= 0 || sample_rate > WAV_MAX_RATE)
        return tool_fail(e, PTTS_E_INVALID, "WAV writer: bad sample rate %d", sample_rate);
    return PTTS_OK;
}

int wav_open_stream(wav_writer **out, FILE *f, int sample_rate, ptts_error *e) {
    if (!out || !f) return tool_fail(e, PTTS_E_INVALID, "WAV writer: NULL argument");
    *out = NULL;
    int rc = check_rate(sample_rate, e);
    if (rc) return rc;
    wav_writer *w = calloc(1, sizeof *w);
    if (!w) return tool_fail(e, PTTS_E_NOMEM, "WAV writer: out of memory");
    w->f = f;
    w->rate = sample_rate;
    rc = wav_start(w, "WAV stream", e);
    if (rc) {
        wav_free(w);
        return rc;
    }
    *out = w;
    return PTTS_OK;
}

int wav_open(wav_writer **out, const char *path, int sample_rate, ptts_error *e) {
    if (!out || !path) return tool_fail(e, PTTS_E_INVALID, "WAV writer: NULL argument");
    *out = NULL;
    if (!strcmp(path, "-")) return wav_open_stream(out, stdout, sample_rate, e);
    int rc = check_rate(sample_rate, e);
    if (rc) return rc;
    static atomic_uint counter;
    wav_writer *w = calloc(1, sizeof *w);
    size_t len = strlen(path) + 64;
    if (!w || !(w->path = tool_strdup(path)) || !(w->tmp = malloc(len))) {
        if (w) wav_free(w);
        return tool_fail(e, PTTS_E_NOMEM, "WAV writer: out of memory");
    }
    int fd = -1;
    for (int tries = 0; tries < 100 && fd < 0; tries++) {
        snprintf(w->tmp, len, "%s.tmp.%ld.%u", path, (long)getpid(),
                 atomic_fetch_add(&counter, 1u));
        fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        rc = tool_fail(e, PTTS_E_IO, "%s: cannot create: %s", w->tmp, strerror(errno));
        wav_free(w);
        return rc;
    }
    w->f = fdopen(fd, "wb");
    if (!w->f) {
        rc = tool_fail(e, PTTS_E_IO, "%s: cannot open: %s", w->tmp, strerror(errno));
        close(fd);
        unlink(w->tmp);
        wav_free(w);
        return rc;
    }
    w->is_file = 1;
    w->own = 1;
    w->rate = sample_rate;
    rc = wav_start(w, path, e);
    if (rc) {
        wav_abort(w);
        return rc;
    }
    *out = w;
    return PTTS_OK;
}

int wav_write(wav_writer *w, const float *samples, int64_t n, ptts_error *e) {
    if (!w || n < 0 || (n > 0 && !samples))
        return tool_fail(e, PTTS_E_INVALID, "WAV writer: bad arguments");
    if (w->failed) return tool_fail(e, PTTS_E_IO, "WAV writer: an earlier write failed");
    uint8_t buf[8192];
    const int64_t per = (int64_t)(sizeof buf / 2);
    for (int64_t i = 0; i < n; i += per) {
        int64_t k = TOOL_MIN(per, n - i);
        for (int64_t j = 0; j < k; j++)
            put_u16(buf + 2 * j, (uint16_t)wav_sample(samples[i + j]));
        if (fwrite(buf, 2, (size_t)k, w->f) != (size_t)k) {
            w->failed = 1;
            return tool_fail(e, PTTS_E_IO, "%s: write failed: %s",
                             w->is_file ? w->path : "WAV stream", strerror(errno));
        }
    }
    w->n += n;
    if (!w->is_file && fflush(w->f) != 0) {
        w->failed = 1;
        return tool_fail(e, PTTS_E_IO, "WAV stream: write failed: %s", strerror(errno));
    }
    return PTTS_OK;
}

int wav_close(wav_writer *w, ptts_error *e) {
    if (!w) return tool_fail(e, PTTS_E_INVALID, "WAV writer: NULL");
    if (!w->is_file) {
        int rc = PTTS_OK;
        if (w->failed)
            rc = tool_fail(e, PTTS_E_IO, "WAV stream: an earlier write failed");
        else if (fflush(w->f) != 0)
            rc = tool_fail(e, PTTS_E_IO, "WAV stream: write failed: %s", strerror(errno));
        if (w->own) fclose(w->f);
        wav_free(w);
        return rc;
    }
    if (w->failed) {
        int rc = tool_fail(e, PTTS_E_IO, "%s: an earlier write failed", w->path);
        wav_abort(w);
        return rc;
    }
    uint8_t hdr[44];
    wav_header(hdr, w->rate, w->n);
    if (fflush(w->f) != 0 || fseeko(w->f, 0, SEEK_SET) != 0 ||
        fwrite(hdr, 1, sizeof hdr, w->f) != sizeof hdr || fflush(w->f) != 0 ||
        fsync(fileno(w->f)) != 0) {
        int rc = tool_fail(e, PTTS_E_IO, "%s: cannot finish the file: %s", w->tmp, strerror(errno));
        wav_abort(w);
        return rc;
    }
    FILE *f = w->f;
    w->f = NULL;
    if (fclose(f) != 0) {
        int rc = tool_fail(e, PTTS_E_IO, "%s: cannot finish the file: %s", w->tmp, strerror(errno));
        wav_abort(w);
        return rc;
    }
    if (rename(w->tmp, w->path) != 0) {
        int rc =
            tool_fail(e, PTTS_E_IO, "%s: cannot rename into place: %s", w->path, strerror(errno));
        wav_abort(w);
        return rc;
    }
    wav_free(w);
    return PTTS_OK;
}

void wav_abort(wav_writer *w) {
    if (!w) return;
    if (w->f && w->own)
        fclose(w->f);
    else if (w->f)
        fflush(w->f);
    if (w->is_file && w->tmp) unlink(w->tmp);
    wav_free(w);
}
