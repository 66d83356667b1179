/*
 * server_ws.c - GET /v1/tts/stream-input: input streaming over a WebSocket (docs/websocket.md
 * is the protocol). Text arrives in pieces, audio leaves as soon as each frame exists, through
 * the same generation thread and batch as POST /v1/audio/speech (an incremental srv_req).
 *
 * The handshake is libmicrohttpd's upgrade (status 101, MHD_create_response_for_upgrade; why
 * this library: ws_frame.c). Once upgraded, the socket has two threads of its own here, so
 * that MHD's connection handling (whatever its threading) is never blocked by a socket:
 *  - the reader (one per socket, detached): reads and parses frames, answers pings, feeds text
 *    (srv_req_feed), applies the idle flush and the timeouts. A feed answered SRV_FEED_FULL
 *    (more than PTTS_FEED_MAX_BYTES waiting) makes it stop reading the socket until the
 *    generation has taken text, so a client that writes faster than speech is throttled by TCP,
 *    never buffered without bound; a message is bounded by the parser's limit.
 *  - the writer (one per utterance, joined by the reader): takes frames from the request's ring
 *    (srv_req_pop) and sends them, then the final message.
 * Writes of both go through one mutex (whole frames). A disconnect (read end or a failed write)
 * cancels the utterance, which leaves the batch before the next step. Every socket is listed
 * in srv.ws_list (under srv.mu) so that srv_ws_stop can shut them down and wait for their
 * threads before libmicrohttpd, which owns the sockets, stops.
 */
#define _GNU_SOURCE /* MSG_NOSIGNAL */
#include <cjson/cJSON.h>
#include <errno.h>
#include <microhttpd.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include "server.h"
#include "util.h"
#include "wav.h"
#include "ws_frame.h"

#define MSG_SLACK (64u << 10) /* a message: the text's bytes plus this */
#define READ_BUF (16u << 10)
#define POP_FRAMES 8     /* frames per audio message at most */
#define POP_WAIT_MS 100  /* how often the writer looks up from an empty ring */
#define TICK_MS 100      /* how often the reader looks up from an idle socket */
#define CLOSE_WAIT_S 2.0 /* after our close frame, how long the client may take to answer */
#define FEED_RETRY_MS 10 /* a throttled feed's retry interval */
#define IDLE_FLUSH_MAX 60000

struct ws_sess {
    srv *s;
    struct MHD_UpgradeResponseHandle *urh;
    int fd;
    pthread_mutex_t wmu; /* writes; dead, close_sent and last_io */
    int dead;            /* a write failed or the peer left */
    int close_sent;
    double last_io;  /* tool_now() of the last client message or audio message */
    double close_at; /* when our close frame went out */
    ws_parser p;
    uint8_t *buf; /* READ_BUF bytes, or MHD's extra bytes when more */
    size_t buf_cap, have, off;
    /* the utterance (reader's; the writer reads r, f32 and binary, fixed while it runs) */
    srv_req *r;
    pthread_t writer;
    int writing; /* the writer thread runs (or has ended and is not yet joined) */
    int ended;   /* the end was given */
    int cancelled_by_client;
    int f32, binary, idle_ms;
    int sentence_end; /* the text fed since the last flush ends with an end mark */
    int unflushed;    /* text was fed since the last flush */
    double last_text;
    struct ws_sess *next;
};
typedef struct ws_sess ws_sess;

/* ---- writing ------------------------------------------------------------------------------ */

static int send_all(ws_sess *w, const uint8_t *d, size_t n) {
    while (n > 0) {
        ssize_t k = send(w->fd, d, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        d += k;
        n -= (size_t)k;
    }
    return 0;
}

/* One frame (wmu taken here). -1 when the socket is dead or closing. */
static int ws_send(ws_sess *w, int op, const void *data, size_t len) {
    uint8_t h[WS_HEADER_MAX];
    size_t hl = ws_frame_header(h, op, len);
    pthread_mutex_lock(&w->wmu);
    int rc = -1;
    if (!w->dead && !w->close_sent) {
        rc = send_all(w, h, hl) || (len && send_all(w, data, len)) ? -1 : 0;
        if (rc) w->dead = 1;
        if (op == WS_OP_CLOSE) {
            w->close_sent = 1;
            w->close_at = tool_now();
        }
    }
    pthread_mutex_unlock(&w->wmu);
    return rc;
}

static int send_json(ws_sess *w, cJSON *j) {
    char *t = j ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    if (!t) return -1;
    int rc = ws_send(w, WS_OP_TEXT, t, strlen(t));
    cJSON_free(t);
    return rc;
}

/* {"type":"error","message","code"} and a close frame with close_code. */
static void send_error(ws_sess *w, int close_code, const char *code, const char *fmt, ...)
    TOOL_PRINTF(4, 5);
static void send_error(ws_sess *w, int close_code, const char *code, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "type", "error");
    cJSON_AddStringToObject(j, "message", msg);
    cJSON_AddStringToObject(j, "code", code);
    send_json(w, j);
    uint8_t cp[WS_CONTROL_MAX];
    ws_send(w, WS_OP_CLOSE, cp, ws_close_payload(cp, close_code, code));
    srv_log(w->s, PTTS_LOG_INFO, "websocket: closed with %d (%s): %s", close_code, code, msg);
}

static void touch(ws_sess *w) {
    pthread_mutex_lock(&w->wmu);
    w->last_io = tool_now();
    pthread_mutex_unlock(&w->wmu);
}

/* ---- the writer: audio out ---------------------------------------------------------------- */

/* n samples as the session's format: binary frame, or {"type":"audio","audio":base64}. */
static int send_audio(ws_sess *w, const float *x, int n, uint8_t *pcm, char *b64) {
    size_t bytes;
    if (w->f32) {
        for (int i = 0; i < n; i++) { /* IEEE 754 binary32, little-endian on any host */
            uint32_t u;
            memcpy(&u, x + i, 4);
            for (int b = 0; b < 4; b++)
                pcm[4 * i + b] = (uint8_t)(u >> (8 * b));
        }
        bytes = (size_t)n * 4;
    } else {
        for (int i = 0; i < n; i++) {
            int16_t v = wav_sample(x[i]);
            pcm[2 * i] = (uint8_t)((uint16_t)v & 0xFF);
            pcm[2 * i + 1] = (uint8_t)((uint16_t)v >> 8);
        }
        bytes = (size_t)n * 2;
    }
    touch(w);
    if (w->binary) return ws_send(w, WS_OP_BINARY, pcm, bytes);
    static const char head[] = "{\"type\":\"audio\",\"audio\":\"";
    memcpy(b64, head, sizeof head - 1);
    ws_base64(pcm, bytes, b64 + sizeof head - 1);
    size_t len = strlen(b64);
    memcpy(b64 + len, "\"}", 3);
    return ws_send(w, WS_OP_TEXT, b64, len + 2);
}

static void *writer_main(void *arg) {
    ws_sess *w = arg;
    srv *s = w->s;
    srv_req *r = w->r;
    const size_t max_samples = (size_t)POP_FRAMES * s->frame_samples;
    float *x = malloc(max_samples * sizeof(float));
    uint8_t *pcm = malloc(max_samples * sizeof(float));
    char *b64 = malloc(max_samples * sizeof(float) / 3 * 4 + 64);
    int64_t sent = 0;
    int rc = x && pcm && b64 ? 0 : SRV_POP_FAILED;
    while (!rc) {
        int n = srv_req_pop(s, r, x, POP_FRAMES, POP_WAIT_MS);
        if (n > 0) {
            if (send_audio(w, x, n, pcm, b64)) {
                srv_req_cancel(s, r); /* the client is gone */
                rc = SRV_POP_FAILED;
            }
            sent += n;
        } else if (n < 0) {
            rc = n;
        }
    }
    pthread_mutex_lock(&s->mu);
    char err[PTTS_ERROR_MSG_MAX];
    snprintf(err, sizeof err, "%s", r->err);
    const int err_code = r->err_code, overflow = r->overflow, stopping = s->stop,
              cancelled = r->cancel;
    const double first_ms = r->t_first >= 0 ? 1000.0 * (r->t_first - r->t_start) : -1;
    s->inflight--;
    pthread_mutex_unlock(&s->mu);
    const double audio_s = (double)sent / PTTS_SAMPLE_RATE;
    if (rc == SRV_POP_DONE || (cancelled && w->cancelled_by_client)) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "type", "done");
        cJSON_AddNumberToObject(j, "audio_seconds", audio_s);
        if (first_ms >= 0)
            cJSON_AddNumberToObject(j, "first_audio_ms", first_ms);
        else
            cJSON_AddNullToObject(j, "first_audio_ms");
        if (rc != SRV_POP_DONE) cJSON_AddBoolToObject(j, "cancelled", 1);
        send_json(w, j);
    } else if (!x || !pcm || !b64) {
        send_error(w, WS_CLOSE_INTERNAL, "out_of_memory", "out of memory");
    } else if (overflow) {
        send_error(w, WS_CLOSE_POLICY, "client_too_slow",
                   "the client fell more than %.0f s of audio behind", s->cfg.client_buffer_s);
    } else if (stopping) {
        send_error(w, WS_CLOSE_GOING_AWAY, "shutting_down", "the server is shutting down");
    } else if (err_code == PTTS_E_TEXT || err_code == PTTS_E_INVALID) {
        srv_log(s, PTTS_LOG_INFO, "websocket: generation: %s", err);
        send_error(w, WS_CLOSE_INVALID_DATA, "invalid_text",
                   "the text cannot be spoken (invalid markup, or nothing to say)");
    } else if (!cancelled) {
        srv_log(s, PTTS_LOG_WARN, "websocket: generation: %s", err);
        send_error(w, WS_CLOSE_INTERNAL, "generation_failed", "the generation failed");
    }
    char first[32] = "-";
    if (first_ms >= 0) snprintf(first, sizeof first, "%.0f", first_ms);
    srv_log(s, PTTS_LOG_INFO, "websocket utterance: audio_s=%.2f first_audio_ms=%s%s", audio_s,
            first, rc == SRV_POP_DONE ? "" : " (cut short)");
    free(x);
    free(pcm);
    free(b64);
    return NULL;
}

/* ---- the reader: messages in -------------------------------------------------------------- */

/* Wait for the utterance's writer and drop the request. */
static void utterance_join(ws_sess *w) {
    if (!w->writing) return;
    pthread_join(w->writer, NULL);
    w->writing = 0;
    srv_req_unref(w->s, w->r);
    w->r = NULL;
}

/* A string member's check: valid UTF-8 without control characters other than tab and line
 * ends. 0, or -1 with the error sent. */
static int text_ok(ws_sess *w, const char *t, size_t n) {
    uint32_t cp = 0;
    size_t at = srv_utf8_check(t, n, &cp);
    if (at == n) return 0;
    if (cp == 0xFFFFFFFFu)
        send_error(w, WS_CLOSE_INVALID_DATA, "invalid_utf8", "the text is not valid UTF-8");
    else
        send_error(w, WS_CLOSE_INVALID_DATA, "control_character",
                   "the text contains the control character U+%04X", (unsigned)cp);
    return -1;
}

static int is_end_mark(const char *t, size_t i) {
    return t[i] == '.' || t[i] == '!' || t[i] == '?' ||
           (i >= 2 && !memcmp(t + i - 2, "\xe2\x80\xa6", 3)); /* U+2026 */
}

/* Feed a piece (flush/end after it), throttled while the request's text buffer is full. 0, or
 * -1 when the socket is to close. */
static int feed(ws_sess *w, const char *t, size_t n, int flush, int end) {
    srv *s = w->s;
    const double t0 = tool_now();
    for (;;) {
        int rc = srv_req_feed(s, w->r, t, n, flush, end);
        if (rc != SRV_FEED_FULL) break; /* ENDED: the writer reports why */
        pthread_mutex_lock(&w->wmu);
        int dead = w->dead;
        pthread_mutex_unlock(&w->wmu);
        if (dead) return -1;
        if (tool_now() - t0 > s->cfg.timeout_s) {
            /* the waiting text never becomes a chunk (no sentence end in a megabyte) */
            srv_req_cancel(s, w->r);
            send_error(w, WS_CLOSE_POLICY, "too_much_text",
                       "more than %u bytes of text wait for a sentence end, and none came in %d s",
                       (unsigned)PTTS_FEED_MAX_BYTES, s->cfg.timeout_s);
            return -1;
        }
        struct timespec ts = {0, FEED_RETRY_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    size_t k = n;
    while (k > 0 && strchr(" \t\r\n", t[k - 1]))
        k--;
    if (k > 0) {
        w->sentence_end = is_end_mark(t, k - 1);
        w->unflushed = 1;
        w->last_text = tool_now();
    }
    if (flush || end) w->unflushed = 0;
    if (end) w->ended = 1;
    return 0;
}

static int member_ok(const char *name, int first) {
    static const char *const piece[] = {"text", "flush", "end", "cancel"};
    static const char *const start[] = {"voice",         "output_format",    "binary",
                                        "idle_flush_ms", "temperature",      "seed",
                                        "eos_threshold", "frames_after_eos", "decode_steps"};
    for (size_t i = 0; i < sizeof piece / sizeof *piece; i++)
        if (!strcmp(name, piece[i])) return 1;
    if (first)
        for (size_t i = 0; i < sizeof start / sizeof *start; i++)
            if (!strcmp(name, start[i])) return 1;
    return 0;
}

/* An optional boolean member: 0/1 into *out, or -1 with the error sent. */
static int get_bool(ws_sess *w, const cJSON *j, const char *name, int *out) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, name);
    if (!m || cJSON_IsNull(m)) return 0;
    if (!cJSON_IsBool(m)) {
        send_error(w, WS_CLOSE_POLICY, "invalid_value", "'%s' must be true or false", name);
        return -1;
    }
    *out = cJSON_IsTrue(m);
    return 0;
}

/* The first message of an utterance: its options, then a piece. 0, or -1 (error sent). */
static int start_utterance(ws_sess *w, const cJSON *j) {
    srv *s = w->s;
    const cJSON *voice = cJSON_GetObjectItemCaseSensitive(j, "voice"),
                *fmt = cJSON_GetObjectItemCaseSensitive(j, "output_format"),
                *idle = cJSON_GetObjectItemCaseSensitive(j, "idle_flush_ms");
    int binary = 1, f32 = 0, idle_ms = 300;
    if (get_bool(w, j, "binary", &binary)) return -1;
    if (fmt && !cJSON_IsNull(fmt)) {
        if (!cJSON_IsString(fmt) ||
            (strcmp(fmt->valuestring, "pcm_s16le") && strcmp(fmt->valuestring, "pcm_f32le"))) {
            send_error(w, WS_CLOSE_POLICY, "invalid_value",
                       "output_format is pcm_s16le or pcm_f32le");
            return -1;
        }
        f32 = !strcmp(fmt->valuestring, "pcm_f32le");
    }
    if (idle && !cJSON_IsNull(idle)) {
        if (!cJSON_IsNumber(idle) || idle->valuedouble != (double)(int)idle->valuedouble ||
            idle->valueint < 0 || idle->valueint > IDLE_FLUSH_MAX) {
            send_error(w, WS_CLOSE_POLICY, "invalid_value",
                       "idle_flush_ms is an integer in [0, %d]", IDLE_FLUSH_MAX);
            return -1;
        }
        idle_ms = idle->valueint;
    }
    if (voice && !cJSON_IsNull(voice) && !cJSON_IsString(voice)) {
        send_error(w, WS_CLOSE_POLICY, "invalid_value", "'voice' must be a string");
        return -1;
    }
    ptts_gen_options go = s->cfg.go;
    srv_bad b;
    if (srv_gen_opts_parse(j, &go, &b)) {
        send_error(w, WS_CLOSE_POLICY, "invalid_value", "%s", b.msg);
        return -1;
    }
    pthread_mutex_lock(&s->mu);
    int draining = s->draining;
    pthread_mutex_unlock(&s->mu);
    if (draining) {
        send_error(w, WS_CLOSE_GOING_AWAY, "draining", "the server is shutting down");
        return -1;
    }
    const ptts_voice *v = NULL;
    char msg[512], detail[PTTS_ERROR_MSG_MAX + 300];
    const char *name = cJSON_IsString(voice) ? voice->valuestring : s->cfg.default_voice;
    int st = srv_voice_get(s, name, &v, msg, sizeof msg, detail, sizeof detail);
    if (st) {
        srv_log(s, PTTS_LOG_INFO, "websocket: voice: %s", detail);
        send_error(w, WS_CLOSE_POLICY, "invalid_voice", "%s", msg);
        return -1;
    }
    srv_req *r = srv_req_new_incremental(s, v, NULL);
    if (!r) {
        send_error(w, WS_CLOSE_INTERNAL, "out_of_memory", "out of memory");
        return -1;
    }
    r->go = go;
    if (srv_enqueue(s, r)) {
        srv_req_unref(s, r);
        send_error(w, WS_CLOSE_TRY_LATER, "busy",
                   "the server is busy: every generation slot and the queue are full; retry "
                   "later");
        return -1;
    }
    w->r = r;
    w->f32 = f32;
    w->binary = binary;
    w->idle_ms = idle_ms;
    w->ended = w->cancelled_by_client = w->sentence_end = w->unflushed = 0;
    /* before the writer exists: nothing of this utterance can come before it */
    cJSON *ready = cJSON_CreateObject();
    cJSON_AddStringToObject(ready, "type", "ready");
    cJSON_AddNumberToObject(ready, "sample_rate", PTTS_SAMPLE_RATE);
    cJSON_AddStringToObject(ready, "output_format", f32 ? "pcm_f32le" : "pcm_s16le");
    cJSON_AddBoolToObject(ready, "binary", binary);
    cJSON_AddStringToObject(ready, "voice", name);
    cJSON_AddNumberToObject(ready, "idle_flush_ms", idle_ms);
    send_json(w, ready);
    pthread_mutex_lock(&s->mu);
    s->inflight++;
    pthread_mutex_unlock(&s->mu);
    if (pthread_create(&w->writer, NULL, writer_main, w)) {
        srv_req_cancel(s, r);
        pthread_mutex_lock(&s->mu);
        s->inflight--;
        pthread_mutex_unlock(&s->mu);
        srv_req_unref(s, r);
        w->r = NULL;
        send_error(w, WS_CLOSE_INTERNAL, "out_of_memory", "cannot start a thread");
        return -1;
    }
    w->writing = 1;
    return 0;
}

/* A text message. 0, or -1 when the socket is to close (error sent). */
static int on_message(ws_sess *w, const char *data, size_t len) {
    /* cJSON decodes \u0000 into a NUL that would end the string early: refused */
    for (size_t i = 0; i + 5 < len; i++) {
        if (data[i] != '\\') continue;
        if (data[i + 1] == 'u' && !memcmp(data + i + 2, "0000", 4)) {
            send_error(w, WS_CLOSE_INVALID_DATA, "control_character",
                       "the message contains \\u0000 (NUL)");
            return -1;
        }
        i++;
    }
    cJSON *j = cJSON_ParseWithLength(data, len);
    if (!j || !cJSON_IsObject(j)) {
        cJSON_Delete(j);
        send_error(w, WS_CLOSE_POLICY, "invalid_json", "a message is a JSON object");
        return -1;
    }
    int rc = 0, cancel = 0, flush = 0, end = 0;
    int first = !w->writing || w->ended;
    for (const cJSON *m = j->child; m && !rc; m = m->next)
        if (!m->string || !member_ok(m->string, first)) {
            send_error(w, WS_CLOSE_POLICY, "unknown_message", "unknown member '%.64s'",
                       m->string ? m->string : "");
            rc = -1;
        }
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(j, "text");
    if (!rc && text && !cJSON_IsNull(text) && !cJSON_IsString(text)) {
        send_error(w, WS_CLOSE_POLICY, "invalid_value", "'text' must be a string");
        rc = -1;
    }
    if (!rc && (get_bool(w, j, "cancel", &cancel) || get_bool(w, j, "flush", &flush) ||
                get_bool(w, j, "end", &end)))
        rc = -1;
    const char *t = cJSON_IsString(text) ? text->valuestring : NULL;
    size_t tn = t ? strlen(t) : 0;
    if (!rc && t && text_ok(w, t, tn)) rc = -1;
    if (!rc && cancel) {
        if (w->writing && !w->cancelled_by_client) {
            w->cancelled_by_client = 1;
            srv_req_cancel(w->s, w->r);
        }
        w->ended = 1;
    } else if (!rc && first) {
        if (!t && !flush && !end && !j->child) {
            send_error(w, WS_CLOSE_POLICY, "unknown_message", "an empty message");
            rc = -1;
        } else {
            utterance_join(w); /* the last utterance's final message goes first */
            rc = start_utterance(w, j);
            /* in the first message an empty text is no text, not the end */
            if (!rc && (tn || flush || end)) rc = feed(w, t ? t : "", tn, flush, end);
        }
    } else if (!rc) {
        if (!t && !flush && !end) {
            send_error(w, WS_CLOSE_POLICY, "unknown_message",
                       "a message has text, flush, end or cancel");
            rc = -1;
        } else {
            /* ElevenLabs' convention: an empty text (without flush) ends the utterance */
            rc = feed(w, t ? t : "", tn, flush, end || (t && tn == 0 && !flush));
        }
    }
    cJSON_Delete(j);
    return rc;
}

/* One parsed event. 0: go on; 1: the session ends now; -1: closing (our close frame sent). */
static int on_event(ws_sess *w, const ws_event *ev) {
    if (ev->type == WS_EV_CLOSE) {
        uint8_t cp[WS_CONTROL_MAX];
        int code = ev->code == WS_CLOSE_NO_STATUS ? WS_CLOSE_NORMAL : ev->code;
        ws_send(w, WS_OP_CLOSE, cp, ws_close_payload(cp, code, NULL)); /* the answer */
        return 1;
    }
    pthread_mutex_lock(&w->wmu);
    const int closing = w->close_sent;
    pthread_mutex_unlock(&w->wmu);
    if (closing) return 0; /* past our close frame only the client's close matters */
    if (ev->type == WS_EV_ERROR) {
        static const struct {
            int close;
            const char *code;
        } names[] = {{WS_CLOSE_PROTOCOL, "protocol_error"},
                     {WS_CLOSE_TOO_BIG, "message_too_large"},
                     {WS_CLOSE_INVALID_DATA, "invalid_utf8"},
                     {WS_CLOSE_INTERNAL, "out_of_memory"}};
        const char *code = "protocol_error";
        for (size_t i = 0; i < sizeof names / sizeof *names; i++)
            if (names[i].close == ev->code) code = names[i].code;
        send_error(w, ev->code, code, "%s", ev->why);
        return -1;
    }
    if (ev->type == WS_EV_PING) return ws_send(w, WS_OP_PONG, ev->data, ev->len) ? 1 : 0;
    if (ev->type == WS_EV_PONG) return 0;
    touch(w);
    if (ev->type == WS_EV_BINARY) {
        send_error(w, WS_CLOSE_UNSUPPORTED, "binary_message",
                   "this endpoint takes JSON text messages, not binary ones");
        return -1;
    }
    return on_message(w, (const char *)ev->data, ev->len) ? -1 : 0;
}

/* The poll timeout: the idle flush's deadline, else a tick. */
static int next_timeout_ms(const ws_sess *w, double now) {
    if (w->writing && !w->ended && w->unflushed && w->sentence_end && w->idle_ms > 0) {
        double left = w->last_text + w->idle_ms / 1000.0 - now;
        int ms = left <= 0 ? 0 : (int)(left * 1000.0) + 1;
        return ms < TICK_MS ? ms : TICK_MS;
    }
    return TICK_MS;
}

/* Time-driven work between reads: the idle flush, the idle timeout, shutdown, the close
 * handshake's deadline. 0: go on; 1: end the session. */
static int on_tick(ws_sess *w) {
    srv *s = w->s;
    const double now = tool_now();
    pthread_mutex_lock(&s->mu);
    const int stopping = s->ws_stop, draining = s->draining;
    pthread_mutex_unlock(&s->mu);
    pthread_mutex_lock(&w->wmu);
    const int closing = w->close_sent, dead = w->dead;
    const double close_at = w->close_at, last_io = w->last_io;
    pthread_mutex_unlock(&w->wmu);
    if (dead) return 1;
    if (closing) return now - close_at > CLOSE_WAIT_S || stopping;
    if (stopping) {
        if (w->writing) srv_req_cancel(s, w->r);
        send_error(w, WS_CLOSE_GOING_AWAY, "shutting_down", "the server is shutting down");
        return 1;
    }
    if (w->writing && !w->ended && w->unflushed && w->sentence_end && w->idle_ms > 0 &&
        now - w->last_text >= w->idle_ms / 1000.0) {
        /* a sentence end, then an input pause: the sentence is complete */
        srv_req_feed(s, w->r, "", 0, 1, 0);
        w->unflushed = 0;
    }
    int busy = w->writing && !w->ended;
    if (!busy && w->writing) {
        /* the end was given: the utterance runs to its final message without input */
        pthread_mutex_lock(&s->mu);
        busy = w->r->state == RQ_QUEUED || w->r->state == RQ_ACTIVE;
        pthread_mutex_unlock(&s->mu);
    }
    if (draining && busy && !w->ended) {
        /* SIGTERM: the text so far is spoken to its end (up to --drain-timeout) */
        if (feed(w, "", 0, 0, 1)) return 1;
    }
    if (draining && !busy) {
        send_error(w, WS_CLOSE_GOING_AWAY, "shutting_down", "the server is shutting down");
        return 0;
    }
    if (!busy && now - last_io > s->cfg.timeout_s) {
        send_error(w, WS_CLOSE_POLICY, "timeout", "no message for %d s", s->cfg.timeout_s);
        return 0;
    }
    if (busy && now - last_io > s->cfg.timeout_s && !w->ended) {
        /* an utterance that waits for text holds a batch slot: not forever (one waiting in the
         * queue for a slot is not idle) */
        pthread_mutex_lock(&s->mu);
        const int queued = w->r->state == RQ_QUEUED;
        pthread_mutex_unlock(&s->mu);
        if (queued) {
            touch(w); /* the wait for a slot does not count once admitted */
            return 0;
        }
        srv_req_cancel(s, w->r);
        send_error(w, WS_CLOSE_POLICY, "timeout", "no text and no audio for %d s",
                   s->cfg.timeout_s);
    }
    return 0;
}

static void *reader_main(void *arg) {
    ws_sess *w = arg;
    srv *s = w->s;
    for (;;) {
        int stop = 0;
        while (w->off < w->have && !stop) {
            ws_event ev;
            w->off += ws_parse(&w->p, w->buf + w->off, w->have - w->off, &ev);
            if (ev.type != WS_EV_NONE) stop = on_event(w, &ev) > 0;
            if (ev.type == WS_EV_ERROR) w->off = w->have; /* nothing after it is read */
        }
        if (stop) break;
        w->off = w->have = 0;
        if (on_tick(w)) break;
        struct pollfd pf = {.fd = w->fd, .events = POLLIN};
        int pr = poll(&pf, 1, next_timeout_ms(w, tool_now()));
        if (pr < 0 && errno != EINTR) break;
        if (pr <= 0) continue;
        ssize_t n = recv(w->fd, w->buf, w->buf_cap, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) break; /* the client left */
        w->have = (size_t)n;
    }
    /* the client left, closed or was closed: an utterance still running stops */
    pthread_mutex_lock(&w->wmu);
    w->dead = 1;
    pthread_mutex_unlock(&w->wmu);
    if (w->writing) srv_req_cancel(s, w->r);
    utterance_join(w);
    ws_parser_free(&w->p);
    MHD_upgrade_action(w->urh, MHD_UPGRADE_ACTION_CLOSE);
    pthread_mutex_lock(&s->mu);
    for (ws_sess **pp = &s->ws_list; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    pthread_mutex_unlock(&s->mu);
    pthread_mutex_destroy(&w->wmu);
    free(w->buf);
    free(w);
    return NULL;
}

static void on_upgrade(void *cls, struct MHD_Connection *c, void *con_cls, const char *extra_in,
                       size_t extra_in_size, MHD_socket sock,
                       struct MHD_UpgradeResponseHandle *urh) {
    (void)c, (void)con_cls;
    srv *s = cls;
    ws_sess *w = calloc(1, sizeof *w);
    size_t cap = extra_in_size > READ_BUF ? extra_in_size : READ_BUF;
    uint8_t *buf = w ? malloc(cap) : NULL;
    if (!buf) {
        free(w);
        MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
        return;
    }
    w->s = s;
    w->urh = urh;
    w->fd = sock;
    w->buf = buf;
    w->buf_cap = cap;
    if (extra_in_size) memcpy(buf, extra_in, extra_in_size);
    w->have = extra_in_size;
    w->last_io = tool_now();
    pthread_mutex_init(&w->wmu, NULL);
    ws_parser_init(&w->p, (size_t)s->cfg.max_text_chars * 4 + MSG_SLACK);
    /* a client that stops reading blocks a write at most this long, then counts as gone */
    struct timeval tv = {.tv_sec = s->cfg.timeout_s > 0 ? s->cfg.timeout_s : 1};
    setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&at, (size_t)1 << 20);
    pthread_mutex_lock(&s->mu);
    int stopping = s->ws_stop;
    if (!stopping) {
        w->next = s->ws_list;
        s->ws_list = w;
    }
    pthread_mutex_unlock(&s->mu);
    pthread_t t;
    if (!stopping && pthread_create(&t, &at, reader_main, w) == 0) {
        pthread_attr_destroy(&at);
        return;
    }
    pthread_attr_destroy(&at);
    if (!stopping) {
        pthread_mutex_lock(&s->mu);
        for (ws_sess **pp = &s->ws_list; *pp; pp = &(*pp)->next)
            if (*pp == w) {
                *pp = w->next;
                break;
            }
        pthread_mutex_unlock(&s->mu);
    }
    ws_parser_free(&w->p);
    pthread_mutex_destroy(&w->wmu);
    free(buf);
    free(w);
    MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
}

/* Does a comma-separated header value hold `token` (case-insensitive)? */
static int has_token(const char *v, const char *token) {
    size_t n = strlen(token);
    while (v && *v) {
        while (*v == ' ' || *v == '\t' || *v == ',')
            v++;
        const char *e = v;
        while (*e && *e != ',')
            e++;
        const char *t = e;
        while (t > v && (t[-1] == ' ' || t[-1] == '\t'))
            t--;
        if ((size_t)(t - v) == n && !strncasecmp(v, token, n)) return 1;
        v = e;
    }
    return 0;
}

struct MHD_Response *srv_ws_upgrade(srv *s, struct MHD_Connection *c, unsigned *status, char *msg,
                                    size_t cap) {
    const char *up = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Upgrade"),
               *conn = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Connection"),
               *ver = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-WebSocket-Version"),
               *key = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-WebSocket-Key");
    char accept[29];
    pthread_mutex_lock(&s->mu);
    const int draining = s->draining;
    pthread_mutex_unlock(&s->mu);
    if (draining) {
        *status = 503;
        snprintf(msg, cap, "the server is shutting down; retry on another replica");
        return NULL;
    }
    *status = 400;
    if (!up || !has_token(up, "websocket") || !conn || !has_token(conn, "upgrade")) {
        *status = 426;
        snprintf(msg, cap, "this endpoint is a WebSocket (Upgrade: websocket)");
        return NULL;
    }
    if (!ver || strcmp(ver, "13")) {
        *status = 426;
        snprintf(msg, cap, "this server speaks WebSocket version 13");
        return NULL;
    }
    if (ws_accept(key, accept)) {
        snprintf(msg, cap, "Sec-WebSocket-Key is not the base64 of 16 bytes");
        return NULL;
    }
    struct MHD_Response *resp = MHD_create_response_for_upgrade(on_upgrade, s);
    if (!resp) {
        *status = 500;
        snprintf(msg, cap, "out of memory");
        return NULL;
    }
    MHD_add_response_header(resp, "Upgrade", "websocket");
    MHD_add_response_header(resp, "Connection", "Upgrade");
    MHD_add_response_header(resp, "Sec-WebSocket-Accept", accept);
    *status = 101;
    return resp;
}

void srv_ws_stop(srv *s) {
    pthread_mutex_lock(&s->mu);
    s->ws_stop = 1; /* each reader sees it within a tick, sends 1001 and ends */
    pthread_mutex_unlock(&s->mu);
    for (int i = 0;; i++) {
        pthread_mutex_lock(&s->mu);
        int left = s->ws_list != NULL;
        if (i == 100) /* a reader stuck in a read or a write: wake it */
            for (ws_sess *w = s->ws_list; w; w = w->next)
                shutdown(w->fd, SHUT_RDWR);
        pthread_mutex_unlock(&s->mu);
        if (!left) break;
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
}
