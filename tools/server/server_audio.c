/*
 * server_audio.c - response encoders of `pocket-tts serve`: WAV (the reference's 16-bit mono
 * 24 kHz; streamed with its oversized length, or exact when complete), raw PCM (16-bit LE, the
 * OpenAI API's "pcm"), Ogg/Opus page by page (server_opus.c), AAC in ADTS frames
 * (server_aac.c), and FLAC and MP3 through
 * libsndfile's virtual I/O into memory. A streamed encoder may not seek back (libsndfile's FLAC
 * and MP3 writers then leave their header's totals unset, which decoders accept), so every byte
 * is final when written and can go to the client at once. Speed (0.25-4) goes through Rubber
 * Band in real-time mode (R2 engine, pitch kept), start-padded and delay-compensated so the
 * output is aligned. OpenAI's SSE framing (base64 audio in JSON events) wraps any of them.
 */
#include <libavcodec/avcodec.h>
#include <math.h>
#include <rubberband/rubberband-c.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "util.h"
#include "wav.h"

static const char *const fmt_names[SRV_N_FMT] = {"wav", "pcm", "flac", "opus", "mp3", "aac"};
static const char *const fmt_mime[SRV_N_FMT] = {"audio/wav", "audio/pcm",  "audio/flac",
                                                "audio/ogg", "audio/mpeg", "audio/aac"};

int srv_format_parse(const char *name) {
    for (int i = 0; i < SRV_N_FMT; i++)
        if (!strcmp(name, fmt_names[i])) return i;
    return -1;
}

const char *srv_format_name(int fmt) { return fmt >= 0 && fmt < SRV_N_FMT ? fmt_names[fmt] : "?"; }

const char *srv_format_mime(int fmt) {
    return fmt >= 0 && fmt < SRV_N_FMT ? fmt_mime[fmt] : "application/octet-stream";
}

int srv_format_sse_ok(int fmt) { return fmt == FMT_PCM || fmt == FMT_WAV; }

void srv_format_list(char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = 0;
    for (int f = 0; f < SRV_N_FMT; f++) {
        if (!srv_format_available(f) || len >= cap) continue;
        int k = snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", fmt_names[f]);
        if (k > 0) len += (size_t)k;
    }
}

static int sf_format_of(int fmt) {
    switch (fmt) {
    case FMT_FLAC: return SF_FORMAT_FLAC | SF_FORMAT_PCM_16;
    case FMT_MP3: return SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III;
    default: return 0;
    }
}

int srv_format_available(int fmt) {
    if (fmt == FMT_WAV || fmt == FMT_PCM || fmt == FMT_OPUS) return 1;
    if (fmt == FMT_AAC) return avcodec_find_encoder(AV_CODEC_ID_AAC) != NULL;
    SF_INFO in = {.samplerate = PTTS_SAMPLE_RATE, .channels = 1, .format = sf_format_of(fmt)};
    return in.format && sf_format_check(&in);
}

struct srv_enc {
    int fmt, streaming;
    uint8_t *buf;
    size_t len, cap; /* bytes held (buf[0..len)) */
    int64_t base;    /* stream offset of buf[0] (bytes already sent and dropped) */
    int64_t pos;     /* the virtual file position (absolute) */
    size_t sent;     /* non-streaming: nothing is released before finish */
    int finished, failed;
    SNDFILE *sf;
    srv_opus *opus;
    srv_aac *aac;
    RubberBandState rb;
    int64_t rb_skip; /* output samples still to drop (the stretcher's start delay) */
    float *tmp;
    size_t tmp_cap;
    int64_t samples_out;
    /* SSE: the events built from the container's bytes (those are consumed as they are
     * framed), sent from sse[sse_sent..sse_len) */
    int sse, sse_tokens, sse_done;
    char *sse_buf;
    size_t sse_len, sse_cap, sse_sent;
    int64_t samples_in;
};

static int buf_reserve(srv_enc *e, size_t need) {
    if (need <= e->cap) return 0;
    size_t nc = e->cap ? e->cap : 16384;
    while (nc < need)
        nc *= 2;
    uint8_t *nb = realloc(e->buf, nc);
    if (!nb) return -1;
    e->buf = nb;
    e->cap = nc;
    return 0;
}

/* libsndfile virtual I/O over the byte buffer */
static sf_count_t vio_len(void *u) {
    srv_enc *e = u;
    return (sf_count_t)(e->base + (int64_t)e->len);
}
static sf_count_t vio_seek(sf_count_t off, int whence, void *u) {
    srv_enc *e = u;
    int64_t end = e->base + (int64_t)e->len;
    int64_t p = whence == SEEK_SET ? off : whence == SEEK_CUR ? e->pos + off : end + off;
    if (p == e->pos) return p;
    if (e->streaming || p < e->base || p > end) return -1; /* streamed bytes are final */
    e->pos = p;
    return p;
}
static sf_count_t vio_read(void *ptr, sf_count_t n, void *u) {
    srv_enc *e = u;
    int64_t end = e->base + (int64_t)e->len;
    if (n <= 0 || e->pos >= end || e->pos < e->base) return 0;
    int64_t k = TOOL_MIN((int64_t)n, end - e->pos);
    memcpy(ptr, e->buf + (e->pos - e->base), (size_t)k);
    e->pos += k;
    return k;
}
static sf_count_t vio_write(const void *ptr, sf_count_t n, void *u) {
    srv_enc *e = u;
    if (n <= 0) return 0;
    size_t at = (size_t)(e->pos - e->base);
    if (buf_reserve(e, at + (size_t)n)) return 0;
    memcpy(e->buf + at, ptr, (size_t)n);
    if (at + (size_t)n > e->len) e->len = at + (size_t)n;
    e->pos += n;
    return n;
}
static sf_count_t vio_tell(void *u) { return ((srv_enc *)u)->pos; }

static SF_VIRTUAL_IO vio = {vio_len, vio_seek, vio_read, vio_write, vio_tell};

/* the Opus and AAC writers' bytes, appended (they never seek) */
static int append_sink(void *u, const uint8_t *p, size_t n) {
    srv_enc *e = u;
    return vio_write(p, (sf_count_t)n, e) == (sf_count_t)n ? 0 : -1;
}

static int16_t to_s16(float x) { /* the reference's conversion (see audio.c) */
    if (isnan(x)) return 0;
    if (x > 1.0f) x = 1.0f;
    if (x < -1.0f) x = -1.0f;
    return (int16_t)(x * 32767.0f);
}

int srv_enc_open(srv_enc **out, int fmt, double speed, int streaming, char *err, size_t cap) {
    *out = NULL;
    srv_enc *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(err, cap, "out of memory");
        return -1;
    }
    e->fmt = fmt;
    e->streaming = streaming;
    if (fmt == FMT_WAV) {
        uint8_t h[44];
        wav_header(h, PTTS_SAMPLE_RATE, -1);
        if (vio_write(h, 44, e) != 44) goto nomem;
    } else if (fmt == FMT_OPUS) {
        if (srv_opus_open(&e->opus, append_sink, e, err, cap)) {
            srv_enc_free(e);
            return -1;
        }
    } else if (fmt == FMT_AAC) {
        if (srv_aac_open(&e->aac, append_sink, e, err, cap)) {
            srv_enc_free(e);
            return -1;
        }
    } else if (fmt != FMT_PCM) {
        SF_INFO in = {.samplerate = PTTS_SAMPLE_RATE, .channels = 1, .format = sf_format_of(fmt)};
        e->sf = sf_open_virtual(&vio, SFM_WRITE, &in, e);
        if (!e->sf) {
            snprintf(err, cap, "this server's libsndfile cannot write %s: %s", fmt_names[fmt],
                     sf_strerror(NULL));
            srv_enc_free(e);
            return -1;
        }
        /* samples past [-1, 1] saturate, as the WAV and PCM writers' do: without clipping,
         * libsndfile hands libFLAC values beyond 16 bits and the encoder fails for good */
        sf_command(e->sf, SFC_SET_CLIPPING, NULL, SF_TRUE);
        if (fmt == FMT_MP3) {
            double q = 0.5; /* libsndfile's default middle setting, stated explicitly */
            sf_command(e->sf, SFC_SET_COMPRESSION_LEVEL, &q, sizeof q);
        }
    }
    if (fabs(speed - 1.0) > 1e-9) {
        e->rb = rubberband_new(PTTS_SAMPLE_RATE, 1,
                               RubberBandOptionProcessRealTime | RubberBandOptionEngineFaster |
                                   RubberBandOptionThreadingNever,
                               1.0 / speed, 1.0);
        if (!e->rb) goto nomem;
        rubberband_set_max_process_size(e->rb, 4096);
        unsigned pad = rubberband_get_preferred_start_pad(e->rb);
        e->rb_skip = rubberband_get_start_delay(e->rb);
        float zeros[1024] = {0};
        while (pad > 0) {
            unsigned k = pad < 1024 ? pad : 1024;
            const float *in[1] = {zeros};
            rubberband_process(e->rb, in, k, 0);
            pad -= k;
        }
    }
    *out = e;
    return 0;
nomem:
    snprintf(err, cap, "out of memory");
    srv_enc_free(e);
    return -1;
}

/* Samples after the speed stage into the container. */
static int put(srv_enc *e, const float *x, size_t n) {
    if (n == 0) return 0;
    e->samples_out += (int64_t)n;
    if (e->opus) return srv_opus_write(e->opus, x, n);
    if (e->aac) return srv_aac_write(e->aac, x, n);
    if (e->sf) return sf_write_float(e->sf, x, (sf_count_t)n) == (sf_count_t)n ? 0 : -1;
    if (buf_reserve(e, e->len + 2 * n)) return -1;
    uint8_t *p = e->buf + e->len;
    for (size_t i = 0; i < n; i++) {
        uint16_t v = (uint16_t)to_s16(x[i]);
        p[2 * i] = (uint8_t)(v & 0xff);
        p[2 * i + 1] = (uint8_t)(v >> 8);
    }
    e->len += 2 * n;
    e->pos += (int64_t)(2 * n);
    return 0;
}

static int rb_drain(srv_enc *e) {
    int avail;
    while ((avail = rubberband_available(e->rb)) > 0) {
        if ((size_t)avail > e->tmp_cap) {
            float *nt = realloc(e->tmp, (size_t)avail * sizeof(float));
            if (!nt) return -1;
            e->tmp = nt;
            e->tmp_cap = (size_t)avail;
        }
        float *o[1] = {e->tmp};
        unsigned got = rubberband_retrieve(e->rb, o, (unsigned)avail);
        size_t off = 0;
        if (e->rb_skip > 0) {
            off = (size_t)TOOL_MIN((int64_t)got, e->rb_skip);
            e->rb_skip -= (int64_t)off;
        }
        if (put(e, e->tmp + off, got - off)) return -1;
    }
    return 0;
}

int srv_enc_write(srv_enc *e, const float *x, int n) {
    if (e->failed || e->finished) return -1;
    e->samples_in += n;
    int rc = 0;
    if (!e->rb) {
        rc = put(e, x, (size_t)n);
    } else {
        for (int i = 0; !rc && i < n; i += 4096) {
            const float *in[1] = {x + i};
            rubberband_process(e->rb, in, (unsigned)TOOL_MIN(4096, n - i), 0);
            rc = rb_drain(e);
        }
    }
    if (rc) e->failed = 1;
    return rc;
}

int srv_enc_finish(srv_enc *e) {
    if (e->failed) return -1;
    if (e->finished) return 0;
    int rc = 0;
    if (e->rb) {
        const float *in[1] = {NULL};
        float z = 0;
        in[0] = &z;
        rubberband_process(e->rb, in, 0, 1);
        rc = rb_drain(e);
    }
    if (!rc && e->sf) {
        rc = sf_close(e->sf) ? -1 : 0;
        e->sf = NULL;
    }
    if (!rc && e->opus) rc = srv_opus_finish(e->opus);
    if (!rc && e->aac) rc = srv_aac_finish(e->aac);
    if (!rc && e->fmt == FMT_WAV && !e->streaming && e->base == 0 && e->len >= 44)
        wav_header(e->buf, PTTS_SAMPLE_RATE, e->samples_out);
    e->finished = 1;
    if (rc) e->failed = 1;
    return rc;
}

static const uint8_t *sse_data(srv_enc *e, size_t *n);

const uint8_t *srv_enc_data(srv_enc *e, size_t *n) {
    if (e->sse) return sse_data(e, n);
    if (!e->streaming && !e->finished) {
        *n = 0;
        return e->buf;
    }
    /* a sndfile writer may still be positioned inside the buffer only when seeks are allowed
     * (non-streaming), and then everything is released only at finish */
    *n = e->len - e->sent;
    return e->buf + e->sent;
}

static void inner_consume(srv_enc *e, size_t n) {
    e->sent += n;
    if (e->streaming && e->sent == e->len) { /* drop what was sent */
        e->base += (int64_t)e->len;
        e->len = e->sent = 0;
    }
}

void srv_enc_consume(srv_enc *e, size_t n) {
    if (!e->sse) {
        inner_consume(e, n);
        return;
    }
    e->sse_sent += n;
    if (e->sse_sent == e->sse_len) e->sse_len = e->sse_sent = 0;
}

int64_t srv_enc_samples_out(const srv_enc *e) { return e->samples_out; }

/* ---- SSE framing -------------------------------------------------------------------------- */

#define SSE_FRAME (PTTS_SAMPLE_RATE * 2 / 25) /* 80 ms: one frame of the model (12.5 Hz) */

void srv_enc_set_sse(srv_enc *e, int input_tokens) {
    e->sse = 1;
    e->streaming = 1; /* events go out as they are made: the pieces may not change later */
    e->sse_tokens = input_tokens;
}

const char *srv_enc_mime(const srv_enc *e) {
    return e->sse ? "text/event-stream" : srv_format_mime(e->fmt);
}

static int sse_reserve(srv_enc *e, size_t more) {
    size_t need = e->sse_len + more;
    if (need <= e->sse_cap) return 0;
    size_t nc = e->sse_cap ? e->sse_cap : 16384;
    while (nc < need)
        nc *= 2;
    char *nb = realloc(e->sse_buf, nc);
    if (!nb) return -1;
    e->sse_buf = nb;
    e->sse_cap = nc;
    return 0;
}

static int sse_put(srv_enc *e, const char *s) {
    size_t k = strlen(s);
    if (sse_reserve(e, k)) return -1;
    memcpy(e->sse_buf + e->sse_len, s, k);
    e->sse_len += k;
    return 0;
}

/* One delta event carrying p[0..n) in base64 (RFC 4648, padded). */
static int sse_delta(srv_enc *e, const uint8_t *p, size_t n) {
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    static const char head[] = "data: {\"type\":\"speech.audio.delta\",\"audio\":\"";
    if (sse_put(e, head) || sse_reserve(e, (n + 2) / 3 * 4 + 8)) return -1;
    char *o = e->sse_buf + e->sse_len;
    size_t i = 0;
    for (; i + 3 <= n; i += 3, o += 4) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        o[0] = b64[v >> 18], o[1] = b64[(v >> 12) & 63], o[2] = b64[(v >> 6) & 63];
        o[3] = b64[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
        o[0] = b64[v >> 18], o[1] = b64[(v >> 12) & 63];
        o[2] = i + 1 < n ? b64[(v >> 6) & 63] : '=';
        o[3] = '=';
        o += 4;
    }
    e->sse_len = (size_t)(o - e->sse_buf);
    return sse_put(e, "\"}\n\n");
}

static const uint8_t *sse_data(srv_enc *e, size_t *n) {
    size_t k;
    const uint8_t *d = e->buf + e->sent;
    k = e->len - e->sent;
    if (k && !e->failed) {
        if (sse_delta(e, d, k))
            e->failed = 1;
        else
            inner_consume(e, k);
    }
    if (e->finished && !e->sse_done && !e->failed) {
        /* output_tokens: the audio's 80 ms frames (the model's audio tokens), rounded up */
        long long out = (long long)((e->samples_in + SSE_FRAME - 1) / SSE_FRAME);
        char done[200];
        snprintf(done, sizeof done,
                 "data: {\"type\":\"speech.audio.done\",\"usage\":{\"input_tokens\":%d,"
                 "\"output_tokens\":%lld,\"total_tokens\":%lld}}\n\n",
                 e->sse_tokens, out, e->sse_tokens + out);
        if (sse_put(e, done))
            e->failed = 1;
        else
            e->sse_done = 1;
    }
    *n = e->sse_len - e->sse_sent;
    return (const uint8_t *)e->sse_buf + e->sse_sent;
}

void srv_enc_free(srv_enc *e) {
    if (!e) return;
    if (e->sf) sf_close(e->sf);
    srv_opus_free(e->opus);
    srv_aac_free(e->aac);
    if (e->rb) rubberband_delete(e->rb);
    free(e->tmp);
    free(e->buf);
    free(e->sse_buf);
    free(e);
}
