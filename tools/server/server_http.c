/*
 * server_http.c - the HTTP side of `pocket-tts serve` on libmicrohttpd's polling threads (see
 * server.h): routing, request parsing with limits, voices, streaming responses; a request that
 * waits for the generation thread is suspended, never blocks a thread.
 *
 * Endpoints: GET / (the web page), GET /health, GET /metrics (Prometheus), POST /tts (the
 * reference's multipart form: text, voice_url or voice_wav, answering a chunked WAV stream),
 * POST /v1/audio/speech (OpenAI: JSON model, input, voice, response_format, speed, stream,
 * stream_format "sse": the encoder frames the audio as events),
 * GET /v1/audio/voices, GET /v1/models, GET /v1/tts/stream-input (a WebSocket: text in
 * pieces, audio out as it is generated; server_ws.c, docs/websocket.md). Errors are OpenAI-style
 * JSON
 * {"error":{"message","type","param","code"}} with a 4xx/5xx status.
 */
#define _GNU_SOURCE /* POLLRDHUP */
#include <cjson/cJSON.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "server.h"
#include "util.h"

#define JSON_SLACK (64u << 10)                 /* a JSON or form body: the text's bytes plus this */
#define SILENCE_SAMPLES (PTTS_SAMPLE_RATE / 5) /* the reference's 200 ms tail */
#define DISCARD_MAX (64u << 20) /* body bytes read and dropped past a refusal before closing */
/* MHD's polling threads: one per core up to this; they parse, encode and write, never wait */
#define HTTP_THREADS_MAX 8
/* --max-connections when not given (fewer when the open-file limit is lower) */
#define DEFAULT_CONNECTIONS 4096
/* MHD's memory per connection (its read buffer, the request's headers, the answer's header):
 * what an idle keep-alive connection costs, so thousands fit; headers past it get a 431 */
#define CONN_MEMORY (16u << 10)

enum { ROUTE_NONE = 0, ROUTE_TTS, ROUTE_SPEECH };

typedef struct stream_ctx stream_ctx;

/* One request (MHD's con_cls): from its headers to MHD's completion callback, which writes its
 * log line and frees it. A response's reader runs only between the two. */
typedef struct conn_ctx {
    int route;
    struct MHD_PostProcessor *pp;
    size_t limit, total;
    int too_big;   /* the JSON body is over the limit */
    srv_form form; /* /tts */
    char *body;    /* JSON */
    size_t body_len;
    int inflight;      /* counted in srv.inflight (a synthesis route) */
    stream_ctx *sc;    /* a synthesis between its queueing and its response (synth_step) */
    int deferred;      /* a GET or HEAD whose answer waits for MHD's second call */
    srv_vjob *job;     /* resolve_voice's, while the connection is suspended for it */
    srv_speech speech; /* /v1/audio/speech, once parsed */
    int parsed;
    /* an answer decided from the headers while a body follows: queued once the body is read
     * and discarded (up to DISCARD_MAX), so that a client that writes its whole body before
     * reading still gets it instead of a reset */
    int has_body;
    struct MHD_Response *early;
    unsigned early_status;
    /* the log line */
    double t0;
    char method[8], path[96];
    unsigned status;
    uint64_t bytes;
    double audio_s, first_ms, queued_ms;   /* < 0: no audio / never admitted */
    char detail[PTTS_ERROR_MSG_MAX + 300]; /* a library message and what it was about */
} conn_ctx;

struct stream_ctx {
    srv *s;
    srv_req *r;
    srv_enc *enc;
    conn_ctx *x; /* its request: valid while the reader runs */
    struct MHD_Connection *conn;
    int fmt; /* FMT_* */
    int streaming;
    int fd;
    int done;
    float *frames;
};

#define PUMP_FRAMES 8

/* ---- responses ---------------------------------------------------------------------------- */

/* Queue `resp` (taken), or keep it for the end of the body (conn_ctx.early) when it is decided
 * from the headers of a request whose body is still to come. */
static enum MHD_Result send_resp(srv *s, struct MHD_Connection *c, conn_ctx *x, unsigned status,
                                 struct MHD_Response *resp, uint64_t len) {
    if (!resp) return MHD_NO;
    pthread_mutex_lock(&s->mu);
    if (status < N_STATUS) s->req_by_status[status]++;
    int draining = s->draining;
    pthread_mutex_unlock(&s->mu);
    x->status = status;
    x->bytes = len;
    if (draining) MHD_add_response_header(resp, "Connection", "close");
    if (x->has_body && x->total == 0 && !x->early) {
        x->early = resp;
        x->early_status = status;
        return MHD_YES;
    }
    enum MHD_Result r = MHD_queue_response(c, status, resp);
    MHD_destroy_response(resp);
    return r;
}

static enum MHD_Result send_text(srv *s, struct MHD_Connection *c, conn_ctx *x, unsigned status,
                                 const char *mime, const char *body, size_t len) {
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!resp) return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", mime);
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    return send_resp(s, c, x, status, resp, len);
}

static enum MHD_Result send_json(srv *s, struct MHD_Connection *c, conn_ctx *x, unsigned status,
                                 cJSON *j) {
    char *txt = j ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    if (!txt) return MHD_NO;
    enum MHD_Result r = send_text(s, c, x, status, "application/json", txt, strlen(txt));
    cJSON_free(txt);
    return r;
}

static enum MHD_Result send_error_h(srv *s, struct MHD_Connection *c, conn_ctx *x, unsigned status,
                                    const char *type, const char *param, const char *code,
                                    const char *msg, const char *hname, const char *hval) {
    cJSON *root = cJSON_CreateObject(), *err = cJSON_AddObjectToObject(root, "error");
    cJSON_AddStringToObject(err, "message", msg);
    cJSON_AddStringToObject(err, "type", type);
    if (param)
        cJSON_AddStringToObject(err, "param", param);
    else
        cJSON_AddNullToObject(err, "param");
    if (code)
        cJSON_AddStringToObject(err, "code", code);
    else
        cJSON_AddNullToObject(err, "code");
    char *txt = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!txt) return MHD_NO;
    size_t len = strlen(txt);
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, txt, MHD_RESPMEM_MUST_COPY);
    cJSON_free(txt);
    if (!resp) return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", "application/json");
    if (hname) MHD_add_response_header(resp, hname, hval);
    return send_resp(s, c, x, status, resp, len);
}

static enum MHD_Result send_error(srv *s, struct MHD_Connection *c, conn_ctx *x, unsigned status,
                                  const char *param, const char *code, const char *fmt, ...)
    TOOL_PRINTF(7, 8);
static enum MHD_Result send_error(srv *s, struct MHD_Connection *c, conn_ctx *x, unsigned status,
                                  const char *param, const char *code, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *type = status >= 500 ? "server_error" : "invalid_request_error";
    return send_error_h(s, c, x, status, type, param, code, msg, NULL, NULL);
}

/* ---- parking a connection until its request moves ------------------------------------ */

/* A hang-up seen without reading (the socket is MHD's): 1 when the peer has closed. */
static int client_gone(int fd) {
    if (fd < 0) return 0;
    struct pollfd p = {.fd = fd, .events = POLLRDHUP};
    if (poll(&p, 1, 0) <= 0) return 0;
    return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

static int conn_fd(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    return ci ? ci->connect_fd : -1;
}

/* srv_req.wake: the generation side has news for a parked connection (s->mu held). */
static void wake_conn(void *arg) { MHD_resume_connection(arg); }

/* Suspend `c` until r's next frame, admission or end (s->mu held: the generation side takes the
 * lock before it wakes, so the resume cannot come before the suspend). */
static void park_locked(srv_req *r, struct MHD_Connection *c) {
    r->wake = wake_conn;
    r->wake_arg = c;
    MHD_suspend_connection(c);
}

/* Move what the ring holds into the encoder, or finish it. 1: progress (frames encoded or the
 * end written); 0: nothing yet, `conn` is parked until there is; -1: the request failed or was
 * cancelled (c->x->detail says why when it is worth a log line). */
static int pump(stream_ctx *c, struct MHD_Connection *conn) {
    srv *s = c->s;
    srv_req *r = c->r;
    pthread_mutex_lock(&s->mu);
    if (r->count == 0 && (r->state == RQ_QUEUED || r->state == RQ_ACTIVE) && !r->cancel) {
        park_locked(r, conn);
        pthread_mutex_unlock(&s->mu);
        return 0;
    }
    int got = 0, got_samples = 0; /* frames, and their samples packed in c->frames */
    while (r->count > 0 && got < PUMP_FRAMES) {
        const int len = r->ring_len[r->head];
        memcpy(c->frames + got_samples, r->ring + (size_t)r->head * r->frame_samples,
               (size_t)len * sizeof(float));
        got_samples += len;
        r->head = (r->head + 1) % r->cap;
        r->count--;
        got++;
    }
    int state = r->state, cancel = r->cancel;
    c->x->audio_s = (double)r->samples / PTTS_SAMPLE_RATE;
    if (r->t_first >= 0) c->x->first_ms = 1000.0 * (r->t_first - r->t_start);
    if (r->t_admit >= 0) c->x->queued_ms = 1000.0 * (r->t_admit - r->t_start);
    if (state == RQ_FAILED && !got) /* cut short after the 200: the log says why */
        snprintf(c->x->detail, sizeof c->x->detail, "generation: %s", r->err);
    pthread_mutex_unlock(&s->mu);
    if (got) {
        if (srv_enc_write(c->enc, c->frames, got_samples)) {
            snprintf(c->x->detail, sizeof c->x->detail, "the %s encoder failed",
                     srv_format_mime(c->fmt));
            srv_req_cancel(s, r);
            return -1;
        }
        return 1;
    }
    if (state != RQ_DONE || cancel) return -1;
    float zeros[1920] = {0};
    for (int left = SILENCE_SAMPLES; left > 0; left -= 1920)
        if (srv_enc_write(c->enc, zeros, TOOL_MIN(left, 1920))) return -1;
    if (srv_enc_finish(c->enc)) return -1;
    c->done = 1;
    return 1;
}

/* The streamed body: what the encoder holds, else what the ring gives; 0 (with the connection
 * parked) when nothing is ready, which MHD allows only together with a suspend. */
static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max) {
    (void)pos;
    stream_ctx *c = cls;
    for (;;) {
        size_t n;
        const uint8_t *d = srv_enc_data(c->enc, &n);
        if (n) {
            size_t k = n < max ? n : max;
            memcpy(buf, d, k);
            srv_enc_consume(c->enc, k);
            c->x->bytes += k;
            return (ssize_t)k;
        }
        if (c->done) return MHD_CONTENT_READER_END_OF_STREAM;
        if (client_gone(c->fd)) {
            srv_req_cancel(c->s, c->r);
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
        int rc = pump(c, c->conn);
        if (rc < 0) return MHD_CONTENT_READER_END_WITH_ERROR;
        if (rc == 0) return 0;
    }
}

static void stream_free(void *cls) {
    stream_ctx *c = cls;
    srv_req_cancel(c->s, c->r); /* a no-op once the utterance is complete */
    srv_req_unref(c->s, c->r);
    srv_enc_free(c->enc);
    free(c->frames);
    free(c);
}

/* ---- synthesis ---------------------------------------------------------------------------- */

/* The request x->sc, each time MHD calls the handler for it (after the body, then after every
 * resume): parked while it is queued, then refused, answered whole (non-streaming: parked until
 * the encoder has finished) or handed to a streaming response. */
static enum MHD_Result synth_step(srv *s, struct MHD_Connection *c, conn_ctx *x) {
    stream_ctx *sc = x->sc;
    srv_req *r = sc->r;
    pthread_mutex_lock(&s->mu);
    if (r->state == RQ_QUEUED && !r->cancel) {
        if (client_gone(sc->fd)) { /* the queue sweep woke it to look */
            pthread_mutex_unlock(&s->mu);
            x->sc = NULL;
            stream_free(sc);
            return MHD_NO;
        }
        park_locked(r, c);
        pthread_mutex_unlock(&s->mu);
        return MHD_YES;
    }
    int state = r->state, cancel = r->cancel;
    char rerr[PTTS_ERROR_MSG_MAX];
    snprintf(rerr, sizeof rerr, "%s", r->err);
    int rcode = r->err_code;
    int64_t samples = r->samples;
    pthread_mutex_unlock(&s->mu);
    /* nothing sent yet: a failure before the first frame, or before a whole file's end */
    if (state == RQ_FAILED && !cancel && (samples == 0 || !sc->streaming)) {
        x->sc = NULL;
        stream_free(sc);
        snprintf(x->detail, sizeof x->detail, "generation: %s", rerr);
        if (rcode == PTTS_E_TEXT || rcode == PTTS_E_INVALID)
            return send_error(s, c, x, 400, "input", NULL,
                              "the input cannot be spoken (nothing to say after text preparation, "
                              "or too long)");
        return send_error(s, c, x, 500, NULL, NULL, "the generation failed");
    }
    if (!sc->streaming) {
        while (!sc->done) {
            int rc = pump(sc, c);
            if (rc == 0) return MHD_YES; /* parked */
            if (rc < 0) {
                pthread_mutex_lock(&s->mu);
                int failed = r->state == RQ_FAILED && !r->cancel;
                pthread_mutex_unlock(&s->mu);
                if (failed) return synth_step(s, c, x); /* answered with the error */
                x->sc = NULL;
                stream_free(sc);
                return MHD_NO; /* the client left, or the encoder failed */
            }
        }
        size_t n;
        const uint8_t *d = srv_enc_data(sc->enc, &n);
        struct MHD_Response *resp =
            MHD_create_response_from_buffer(n, (void *)d, MHD_RESPMEM_MUST_COPY);
        const int fmt = sc->fmt;
        x->sc = NULL;
        stream_free(sc);
        if (!resp) return MHD_NO;
        MHD_add_response_header(resp, "Content-Type", srv_format_mime(fmt));
        return send_resp(s, c, x, 200, resp, n);
    }
    x->sc = NULL; /* the response owns it from here */
    struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024,
                                                                  stream_reader, sc, stream_free);
    if (!resp) {
        stream_free(sc);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", srv_enc_mime(sc->enc));
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    MHD_add_response_header(resp, "X-Accel-Buffering", "no");
    return send_resp(s, c, x, 200, resp, 0); /* the reader counts the bytes */
}

/* Queue `text` (taken) with voice v (owned taken) and the generation options go, and answer
 * with the audio (synth_step); sse >= 0: as OpenAI's SSE events, with sse the usage's input tokens.
 */
static enum MHD_Result synthesize(srv *s, struct MHD_Connection *c, conn_ctx *x, char *text,
                                  const ptts_voice *v, ptts_voice *owned,
                                  const ptts_gen_options *go, int fmt, double speed, int streaming,
                                  int sse) {
    char err[256];
    srv_enc *enc = NULL;
    if (srv_enc_open(&enc, fmt, speed, streaming, err, sizeof err)) {
        free(text);
        ptts_voice_free(owned);
        snprintf(x->detail, sizeof x->detail, "encoder: %s", err);
        return send_error(s, c, x, 500, "response_format", NULL, "the audio encoder failed");
    }
    if (sse >= 0) srv_enc_set_sse(enc, sse);
    srv_req *r = srv_req_new(s, text, v, owned);
    if (r) r->go = *go;
    float *frames = malloc((size_t)PUMP_FRAMES * s->frame_samples * sizeof(float));
    stream_ctx *sc = calloc(1, sizeof *sc);
    if (!r || !frames || !sc) {
        if (r)
            srv_req_unref(s, r);
        else {
            free(text);
            ptts_voice_free(owned);
        }
        free(frames);
        free(sc);
        srv_enc_free(enc);
        return send_error(s, c, x, 500, NULL, NULL, "out of memory");
    }
    *sc = (stream_ctx){.s = s,
                       .r = r,
                       .enc = enc,
                       .x = x,
                       .conn = c,
                       .fmt = fmt,
                       .streaming = streaming,
                       .fd = conn_fd(c),
                       .frames = frames};
    /* a compressed stream's pieces are small (Opus: a page per pump): sent at once, not held
     * by Nagle's algorithm for the client's delayed ACK */
    int one = 1;
    if (sc->fd >= 0) setsockopt(sc->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (srv_enqueue(s, r)) {
        stream_free(sc);
        return send_error_h(s, c, x, 503, "server_error", NULL, "queue_full",
                            "the server is busy: every generation slot and the queue are full; "
                            "retry later",
                            "Retry-After", "1");
    }
    x->sc = sc;
    return synth_step(s, c, x);
}

/* ---- POST /tts ---------------------------------------------------------------------------- */

static enum MHD_Result form_field(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *filename, const char *content_type,
                                  const char *transfer_encoding, const char *data, uint64_t off,
                                  size_t size) {
    (void)kind, (void)content_type, (void)transfer_encoding, (void)off;
    srv_form_field(&((conn_ctx *)cls)->form, key, filename, data, size);
    return MHD_YES;
}

static enum MHD_Result refuse(srv *s, struct MHD_Connection *c, conn_ctx *x, const srv_bad *b) {
    return send_error(s, c, x, b->status, b->param, b->code, "%s", b->msg);
}

/* ---- voices that take a while: off the polling threads (server_vjob.c) ------------------ */

/* The voice of x's request: 0 with *v (and *owned, a clone, taken), an HTTP status with msg, or
 * -1 when a job was started and the connection suspended (MHD calls the handler again when it
 * is done, and this returns its result). */
static int resolve_voice(srv *s, struct MHD_Connection *c, conn_ctx *x, int clone, const char *name,
                         const ptts_voice **v, ptts_voice **owned, char *msg, size_t cap) {
    *v = NULL;
    *owned = NULL;
    srv_vjob *j = x->job;
    if (j) { /* resumed by the job */
        x->job = NULL;
        int st = (int)j->status;
        *v = j->v;
        *owned = j->owned;
        snprintf(msg, cap, "%s", j->msg);
        free(j);
        return st;
    }
    if (!clone) {
        pthread_mutex_lock(&s->voice_mu);
        int loaded = 0;
        for (int i = 0; i < s->n_voices && !loaded; i++)
            loaded = !strcmp(s->voices[i].name, name);
        pthread_mutex_unlock(&s->voice_mu);
        if (loaded) return srv_voice_get(s, name, v, msg, cap, x->detail, sizeof x->detail);
    }
    if (!(j = calloc(1, sizeof *j))) {
        snprintf(msg, cap, "out of memory");
        return 500;
    }
    j->name = name;
    if (clone) {
        j->wav = x->form.wav;
        j->wav_len = x->form.wav_len;
    }
    j->detail = x->detail; /* x outlives the job: its connection stays suspended meanwhile */
    j->dcap = sizeof x->detail;
    x->job = j;
    srv_vjob_start(s, c, j);
    return -1;
}

static enum MHD_Result finish_tts(srv *s, struct MHD_Connection *c, conn_ctx *x) {
    srv_bad b;
    ptts_gen_options go = s->cfg.go;
    if (srv_form_check(&x->form, s->cfg.max_text_chars, &b) || srv_form_gen_opts(&x->form, &go, &b))
        return refuse(s, c, x, &b);
    int has_url = x->form.voice_url && *x->form.voice_url;
    const ptts_voice *v;
    ptts_voice *owned;
    char msg[1024];
    int st = resolve_voice(s, c, x, x->form.wav_field,
                           has_url ? x->form.voice_url : s->cfg.default_voice, &v, &owned, msg,
                           sizeof msg);
    if (st < 0) return MHD_YES; /* suspended */
    if (st)
        return send_error(s, c, x, (unsigned)st, x->form.wav_field ? "voice_wav" : "voice_url",
                          NULL, "%s", msg);
    char *text = x->form.text;
    x->form.text = NULL;
    return synthesize(s, c, x, text, v, owned, &go, FMT_WAV, 1.0, 1, -1);
}

/* ---- POST /v1/audio/speech ---------------------------------------------------------------- */

static enum MHD_Result finish_speech(srv *s, struct MHD_Connection *c, conn_ctx *x) {
    if (x->too_big)
        return send_error(s, c, x, 413, NULL, "payload_too_large", "the request body is too large");
    srv_speech *r = &x->speech;
    srv_bad b;
    if (!x->parsed) {
        if (srv_speech_parse(x->body, x->body_len, s->cfg.max_text_chars, &s->cfg.go, r, &b))
            return refuse(s, c, x, &b);
        x->parsed = 1;
    }
    const ptts_voice *v;
    ptts_voice *owned;
    char msg[1024];
    int st = resolve_voice(s, c, x, 0,
                           r->voice ? srv_voicemap_resolve(s, r->voice) : s->cfg.default_voice, &v,
                           &owned, msg, sizeof msg);
    if (st < 0) return MHD_YES; /* suspended */
    if (st) return send_error(s, c, x, (unsigned)st, "voice", NULL, "%s", msg);
    char *text = r->text;
    r->text = NULL;
    return synthesize(s, c, x, text, v, NULL, &r->go, r->fmt, r->speed, r->streaming,
                      r->sse ? r->input_chars : -1);
}

/* ---- GET endpoints (their bodies: server_info.c) ----------------------------------------- */

static enum MHD_Result get_metrics(srv *s, struct MHD_Connection *c, conn_ctx *x) {
    size_t len;
    char *b = srv_metrics_text(s, &len);
    if (!b) return MHD_NO;
    enum MHD_Result r = send_text(s, c, x, 200, "text/plain; version=0.0.4", b, len);
    free(b);
    return r;
}

/* ---- dispatch ----------------------------------------------------------------------------- */

/* The first call of a request: its headers. Route, check the limits, answer what needs no body. */
static enum MHD_Result on_headers(srv *s, struct MHD_Connection *c, conn_ctx *x, const char *url,
                                  const char *method) {
    int post = !strcmp(method, "POST");
    int get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
    int is_tts = !strcmp(url, "/tts"), is_speech = !strcmp(url, "/v1/audio/speech");
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Transfer-Encoding");
    const char *expect = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Expect");
    /* a client that waits for 100 Continue sends no body after an early answer */
    x->has_body =
        (te || (cl && strcmp(cl, "0"))) && !(expect && !strcasecmp(expect, "100-continue"));
    pthread_mutex_lock(&s->mu);
    int crowded = s->conns > (uint64_t)s->cfg.max_connections, draining = s->draining;
    if (crowded) s->conns_refused++;
    pthread_mutex_unlock(&s->mu);
    if (crowded)
        return send_error_h(s, c, x, 503, "server_error", NULL, "too_many_connections",
                            "too many connections; retry later", "Retry-After", "1");
    if (get && !strcmp(url, "/health"))
        return send_text(s, c, x, 200, "application/json", "{\"status\":\"healthy\"}", 20);
    if (get && !strcmp(url, "/ready"))
        return draining ? send_error_h(s, c, x, 503, "server_error", NULL, "draining",
                                       "the server is shutting down", "Retry-After", "1")
                        : send_text(s, c, x, 200, "application/json", "{\"status\":\"ready\"}", 18);
    if (is_tts || is_speech) {
        if (!post)
            return send_error(s, c, x, 405, NULL, "method_not_allowed", "%s takes POST", url);
        if (draining)
            return send_error_h(s, c, x, 503, "server_error", NULL, "draining",
                                "the server is shutting down; retry on another replica",
                                "Retry-After", "1");
        x->route = is_tts ? ROUTE_TTS : ROUTE_SPEECH;
        size_t text_bytes = (size_t)s->cfg.max_text_chars * 4;
        size_t body_limit = (is_tts ? s->cfg.max_upload : 0) + text_bytes + JSON_SLACK;
        x->limit = is_tts ? s->cfg.max_upload : body_limit;
        if (cl) {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(cl, &end, 10);
            if (errno || end == cl || *end || v > body_limit) {
                /* a body too large to read and drop is answered now (the connection closes) */
                if (errno || end == cl || *end || v > body_limit + DISCARD_MAX) x->has_body = 0;
                return send_error(s, c, x, 413, NULL, "payload_too_large",
                                  "the request body is larger than this server accepts "
                                  "(%zu bytes)",
                                  body_limit);
            }
        }
        x->form.text_limit = text_bytes;
        x->form.wav_limit = s->cfg.max_upload;
        if (is_tts) {
            x->pp = MHD_create_post_processor(c, 64 * 1024, form_field, x);
            if (!x->pp)
                return send_error(s, c, x, 415, NULL, "unsupported_media_type",
                                  "/tts takes multipart/form-data or "
                                  "application/x-www-form-urlencoded");
        }
        pthread_mutex_lock(&s->mu);
        s->inflight++;
        pthread_mutex_unlock(&s->mu);
        x->inflight = 1;
        return MHD_YES;
    }
    if (!get)
        return send_error(s, c, x,
                          strcmp(url, "/") && strcmp(url, "/health") && strcmp(url, "/ready") &&
                                  strcmp(url, "/metrics") && strncmp(url, "/v1/", 4)
                              ? 404
                              : 405,
                          NULL, NULL, "%.16s %.96s is not an endpoint of this server", method, url);
    if (!strcmp(url, "/") || !strcmp(url, "/index.html"))
        return send_text(s, c, x, 200, "text/html; charset=utf-8", s->page, strlen(s->page));
    if (!strcmp(url, "/metrics")) return get_metrics(s, c, x);
    if (!strcmp(url, "/v1/tts/stream-input")) {
        unsigned st;
        char msg[256];
        struct MHD_Response *resp = srv_ws_upgrade(s, c, &st, msg, sizeof msg);
        if (!resp) return send_error(s, c, x, st, NULL, NULL, "%s", msg);
        return send_resp(s, c, x, st, resp, 0);
    }
    if (!strcmp(url, "/v1/models")) return send_json(s, c, x, 200, srv_models_json());
    if (!strcmp(url, "/v1/audio/voices")) return send_json(s, c, x, 200, srv_voices_json(s));
    return send_error(s, c, x, 404, NULL, "not_found", "no endpoint %.96s", url);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls) {
    (void)version;
    srv *s = cls;
    conn_ctx *x = *con_cls;
    if (!x) {
        x = calloc(1, sizeof *x);
        if (!x) return MHD_NO;
        *con_cls = x;
        x->t0 = tool_now();
        x->first_ms = -1;
        x->queued_ms = -1;
        snprintf(x->method, sizeof x->method, "%s", method);
        snprintf(x->path, sizeof x->path, "%s", url);
        /* a request without a body is answered at its second call: MHD 0.9.75 closes the
         * connection after an answer queued at the first (no keep-alive) */
        if (strcmp(method, "GET") && strcmp(method, "HEAD"))
            return on_headers(s, c, x, url, method);
        x->deferred = 1;
        return MHD_YES;
    }
    if (x->deferred) {
        if (*upload_size) { /* a GET with a body: dropped, up to a bound */
            x->total += *upload_size;
            *upload_size = 0;
            return x->total > DISCARD_MAX ? MHD_NO : MHD_YES;
        }
        x->deferred = 0;
        return on_headers(s, c, x, url, method);
    }
    if (*upload_size) { /* body data */
        size_t n = *upload_size;
        *upload_size = 0;
        x->total += n;
        if (x->early || x->too_big || x->form.too_big || x->form.bad)
            /* drain; the answer comes at the end, or the connection closes past the bound */
            return x->total > x->limit + DISCARD_MAX ? MHD_NO : MHD_YES;
        if (x->route == ROUTE_TTS) {
            size_t text_bytes = (size_t)s->cfg.max_text_chars * 4;
            if (x->total > s->cfg.max_upload + text_bytes + JSON_SLACK) {
                x->form.too_big = 1;
                return MHD_YES;
            }
            if (MHD_post_process(x->pp, upload, n) != MHD_YES) x->form.bad = 1;
        } else if (x->route == ROUTE_SPEECH) {
            char *b = x->body;
            if (srv_append(&b, &x->body_len, upload, n, x->limit)) x->too_big = 1;
            x->body = b;
        }
        return MHD_YES;
    }
    /* the whole request is in; a synthesis comes back here after each resume */
    if (x->sc) return synth_step(s, c, x);
    x->has_body = 0;
    if (x->early) {
        struct MHD_Response *resp = x->early;
        x->early = NULL;
        enum MHD_Result r = MHD_queue_response(c, x->early_status, resp);
        MHD_destroy_response(resp);
        return r;
    }
    if (x->route == ROUTE_TTS) {
        if (!x->form.bad && !x->form.too_big && MHD_destroy_post_processor(x->pp) != MHD_YES)
            x->form.bad = 1;
        else if (x->form.bad || x->form.too_big)
            MHD_destroy_post_processor(x->pp);
        x->pp = NULL;
        return finish_tts(s, c, x);
    }
    if (x->route == ROUTE_SPEECH) return finish_speech(s, c, x);
    return MHD_NO;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe) {
    (void)c;
    srv *s = cls;
    conn_ctx *x = *con_cls;
    if (!x) return;
    /* one line per request; the detail (paths, library messages) is for the operator only */
    int level = x->status >= 500 || toe != MHD_REQUEST_TERMINATED_COMPLETED_OK ? PTTS_LOG_WARN
                                                                               : PTTS_LOG_INFO;
    char first[32] = "-", queued[32] = "-";
    if (x->first_ms >= 0) snprintf(first, sizeof first, "%.0f", x->first_ms);
    if (x->queued_ms >= 0) snprintf(queued, sizeof queued, "%.0f", x->queued_ms);
    srv_log(s, level,
            "%s %s %u bytes=%llu audio_s=%.2f queued_ms=%s first_audio_ms=%s ms=%.0f%s%s%s",
            x->method, x->path, x->status, (unsigned long long)x->bytes, x->audio_s, queued, first,
            1000.0 * (tool_now() - x->t0),
            toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (connection ended early)",
            x->detail[0] ? ": " : "", x->detail);
    if (x->inflight) {
        pthread_mutex_lock(&s->mu);
        s->inflight--;
        pthread_mutex_unlock(&s->mu);
    }
    if (x->sc) stream_free(x->sc);
    if (x->parsed) srv_speech_free(&x->speech);
    if (x->job) { /* done (its thread resumed the connection), the handler not called since */
        ptts_voice_free(x->job->owned);
        free(x->job);
    }
    if (x->early) MHD_destroy_response(x->early);
    if (x->pp) MHD_destroy_post_processor(x->pp);
    srv_form_free(&x->form);
    free(x->body);
    free(x);
    *con_cls = NULL;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe) {
    (void)c, (void)socket_context;
    srv *s = cls;
    pthread_mutex_lock(&s->mu);
    if (toe == MHD_CONNECTION_NOTIFY_STARTED)
        s->conns++;
    else if (s->conns > 0)
        s->conns--;
    pthread_mutex_unlock(&s->mu);
}

int srv_conn_limits(srv *s) {
    /* past --max-connections a request is answered 503; MHD itself refuses (closes) only past
     * a hard limit twice that (at least 64 more), where no answer can be sent. Each connection
     * is a descriptor: the soft open-file limit is raised to the hard one, and both limits kept
     * under it (64 left for the model, voices and the listening socket). Not given, the soft
     * limit is DEFAULT_CONNECTIONS or what the open files allow. */
    int want = s->cfg.max_connections ? s->cfg.max_connections : DEFAULT_CONNECTIONS;
    int hard_limit = want + (want > 64 ? want : 64);
    struct rlimit nofile;
    if (!getrlimit(RLIMIT_NOFILE, &nofile)) {
        if (nofile.rlim_cur < nofile.rlim_max) {
            nofile.rlim_cur = nofile.rlim_max;
            setrlimit(RLIMIT_NOFILE, &nofile);
            getrlimit(RLIMIT_NOFILE, &nofile);
        }
        if (nofile.rlim_cur != RLIM_INFINITY && (rlim_t)hard_limit + 64 > nofile.rlim_cur) {
            hard_limit = nofile.rlim_cur > 192 ? (int)nofile.rlim_cur - 64 : 128;
            int fits = hard_limit - (hard_limit / 2 > 64 ? hard_limit / 2 : 64);
            if (want > fits) {
                if (s->cfg.max_connections)
                    srv_log(s, PTTS_LOG_WARN,
                            "open files are limited to %llu (ulimit -n): --max-connections %d "
                            "lowered to %d",
                            (unsigned long long)nofile.rlim_cur, want, fits);
                want = fits;
            }
        }
    }
    s->cfg.max_connections = want;
    return hard_limit;
}

int srv_http_start(srv *s, char *msg, size_t cap) {
    char port[16];
    snprintf(port, sizeof port, "%d", s->cfg.port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE},
                    *res = NULL;
    int g = getaddrinfo(s->cfg.host, port, &hints, &res);
    if (g || !res) {
        snprintf(msg, cap, "cannot resolve --host %s: %s", s->cfg.host, gai_strerror(g));
        return -1;
    }
    /* prefer IPv4 (localhost resolves to both; browsers and curl try both) */
    struct addrinfo *ai = res;
    for (struct addrinfo *p = res; p; p = p->ai_next)
        if (p->ai_family == AF_INET) {
            ai = p;
            break;
        }
    int hard_limit = srv_conn_limits(s);
    /* MHD's own polling threads (epoll where there is one), every connection on one of them:
     * no handler blocks on generation, a request that waits for its slot or its frames is
     * suspended and resumed by the generation thread (srv_req.wake) */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_ALLOW_UPGRADE |
                     (MHD_is_feature_supported(MHD_FEATURE_EPOLL) ? MHD_USE_EPOLL : MHD_USE_POLL);
    if (ai->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned pool = cpus < 2 ? 2 : cpus > HTTP_THREADS_MAX ? HTTP_THREADS_MAX : (unsigned)cpus;
    s->mhd = MHD_start_daemon(
        flags, (uint16_t)s->cfg.port, NULL, NULL, handler, s, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
        MHD_OPTION_THREAD_POOL_SIZE, pool, MHD_OPTION_CONNECTION_LIMIT, (unsigned)hard_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)s->cfg.timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY, MHD_OPTION_THREAD_STACK_SIZE,
        (size_t)(1u << 20), MHD_OPTION_NOTIFY_COMPLETED, completed, s, MHD_OPTION_NOTIFY_CONNECTION,
        on_connection, s, MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned)1, MHD_OPTION_END);
    freeaddrinfo(res);
    if (!s->mhd) {
        snprintf(msg, cap, "cannot listen on %s:%d (%s)", s->cfg.host, s->cfg.port,
                 errno ? strerror(errno) : "libmicrohttpd refused the options");
        return -1;
    }
    if (s->cfg.port == 0) {
        const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
        if (di) s->cfg.port = di->port;
    }
    return 0;
}

void srv_http_stop(srv *s) {
    /* a voice job's connection is suspended: MHD must not stop before the job resumes it
     * (bounded by --voice-url-timeout, or a clone) */
    for (;;) {
        pthread_mutex_lock(&s->mu);
        int jobs = s->voice_jobs;
        pthread_mutex_unlock(&s->mu);
        if (!jobs) break;
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    srv_ws_stop(s); /* the upgraded sockets are MHD's: closed before it stops */
    if (s->mhd) MHD_stop_daemon(s->mhd);
    s->mhd = NULL;
}
