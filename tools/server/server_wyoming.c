/*
 * server_wyoming.c - the Wyoming TTS server (Home Assistant; docs/PROTOCOLS.md) of
 * `pocket-tts serve --wyoming-port N` and `pocket-tts wyoming`: a TCP listener beside the HTTP
 * server, sharing its model, voices and batch (requests go through the generation thread as the
 * HTTP ones do).
 *
 * Threads: one acceptor, and one thread per connection (a house has a few satellites;
 * --max-connections bounds them). A connection thread reads events (wyoming_frame.c), runs at
 * most one synthesis at a time and writes its frames as audio-chunk events as they come: it
 * waits on the request's ring for at most POLL_MS, then looks at the socket again. During a
 * plain `synthesize` no further event is read (they wait in the socket: one synthesis at a
 * time); during streaming synthesis the chunks are fed as they come, and text beyond the feed
 * bound (SRV_FEED_FULL) stops the reading until generation has taken some: the client's socket
 * is the buffer, so memory stays bounded.
 *
 * Disconnects: the end of the client's input (FIN) means no more events, not a disconnect,
 * since clients that half-close after their request (`nc -N`, some bridges) get their whole
 * answer from the reference servers too: what was asked is finished, then the connection
 * closes (a stream without its synthesize-stop is cancelled: it cannot finish). A client that
 * has really gone answers the next frame with a reset, which the poll after it sees (POLLERR
 * or POLLHUP): the utterance is cancelled then, one frame after the close, and the generation
 * thread drops it before its next step.
 *
 * Errors are `error` events (text, code). One that ends the synthesis asked for (FATAL) or
 * loses the framing closes the connection after it, as wyoming-piper does; a protocol slip
 * (an unknown event, a chunk outside a stream) leaves it open.
 *
 * Streaming: synthesize-start opens an incremental request; each synthesize-chunk is fed as
 * it is (the library makes a sentence a chunk once an end mark is followed by more text); a
 * text that ends in an end mark and gets nothing more for --wyoming-idle-flush ms is flushed
 * (its sentence is complete: speak it now); synthesize-stop ends the text. One audio-start ..
 * audio-stop covers the utterance, then synthesize-stopped. The `synthesize` that clients send
 * between the chunks and synthesize-stop (for servers without streaming) is ignored.
 */
#define _GNU_SOURCE /* POLLRDHUP, accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server.h"
#include "wav.h"
#include "wyoming_frame.h"

#define POLL_MS 5    /* the longest a connection waits on audio before it looks at the socket */
#define IDLE_MS 250  /* a connection with no synthesis: how often it checks for shutdown */
#define MAX_FRAMES 4 /* frames sent per audio-chunk at most (those ready at once) */
#define READ_BYTES 16384
#define TAIL_SAMPLES (PTTS_SAMPLE_RATE / 5)
#define LINGER_MS 1000 /* the longest a closing connection reads what the client still sends */

typedef struct wy_conn {
    srv *s;
    int fd;
    pthread_t th;
    int finished; /* the thread has returned: join it */
    struct wy_conn *next;
} wy_conn;

typedef struct wy_server {
    int fd;
    pthread_t th;
    pthread_mutex_t mu;
    int stop;
    int n_conns;
    wy_conn *conns;
} wy_server;

/* One connection's state (its thread's stack). */
typedef struct conn {
    srv *s;
    wy_server *w;
    int fd;
    wy_parser p;
    uint8_t rbuf[READ_BYTES];
    size_t rpos, rlen;
    srv_req *r;        /* the synthesis in progress */
    int streaming;     /* from synthesize-start to synthesize-stopped */
    int stop_seen;     /* synthesize-stop came */
    int audio_started; /* audio-start sent for r */
    char *pend;        /* text srv_req_feed could not take yet (SRV_FEED_FULL) */
    size_t pend_len;
    int pend_end;     /* synthesize-stop came after pend: end the text with it */
    size_t chars;     /* code points streamed so far */
    int tail_mark;    /* the text fed so far ends with an end mark */
    double last_feed; /* tool_now() of the last piece */
    float *pcm;       /* MAX_FRAMES frames */
    uint8_t *s16;     /* their s16le bytes */
    int dead;         /* the socket failed: stop */
    int eof;          /* the client's input ended (a close or half-close): no more events */
} conn;

/* ---- writing */

static int send_all(conn *c, const uint8_t *b, size_t n) {
    while (n && !c->dead) {
        ssize_t k = send(c->fd, b, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            c->dead = 1;
            break;
        }
        b += k;
        n -= (size_t)k;
    }
    return c->dead ? -1 : 0;
}

/* Send an event; data is consumed (deleted). */
static int send_event(conn *c, const char *type, cJSON *data, const void *payload, size_t plen) {
    size_t len = 0;
    uint8_t *b = wy_build(type, data, payload, plen, &len);
    cJSON_Delete(data);
    if (!b) {
        c->dead = 1;
        return -1;
    }
    int rc = send_all(c, b, len);
    free(b);
    return rc;
}

static int send_error(conn *c, const char *code, const char *fmt, ...) TOOL_PRINTF(3, 4);
/* An error that ends the synthesis asked for: the error event, then the connection closes (as
 * wyoming-piper does: a client such as Home Assistant's waits for audio-stop or
 * synthesize-stopped and learns of the failure at the close). */
#define FATAL(c, ...) (send_error(c, __VA_ARGS__), (c)->dead = 1)
static int send_error(conn *c, const char *code, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    srv_log(c->s, PTTS_LOG_INFO, "wyoming: error %s: %s", code, msg);
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "text", msg);
    cJSON_AddStringToObject(d, "code", code);
    return send_event(c, "error", d, NULL, 0);
}

/* rate 24000, width 2 bytes, channels 1 */
static cJSON *audio_format(void) {
    cJSON *d = cJSON_CreateObject();
    cJSON_AddNumberToObject(d, "rate", PTTS_SAMPLE_RATE);
    cJSON_AddNumberToObject(d, "width", 2);
    cJSON_AddNumberToObject(d, "channels", 1);
    return d;
}

/* The ISO 639-1 code of a language config ("french_24l" -> "fr"). */
static const char *lang_code(const char *language) {
    static const char *const map[][2] = {{"english", "en"}, {"french", "fr"},  {"german", "de"},
                                         {"italian", "it"}, {"spanish", "es"}, {"portuguese", "pt"},
                                         {"dutch", "nl"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strncmp(language, map[i][0], strlen(map[i][0]))) return map[i][1];
    return language;
}

static cJSON *attribution(void) {
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "name", "Kyutai");
    cJSON_AddStringToObject(a, "url", "https://github.com/kyutai-labs/pocket-tts");
    return a;
}

static void add_voice(cJSON *arr, const char *name, const char *lang, const char *desc) {
    cJSON *v = cJSON_CreateObject();
    cJSON_AddStringToObject(v, "name", name);
    cJSON_AddItemToObject(v, "attribution", attribution());
    cJSON_AddBoolToObject(v, "installed", 1);
    cJSON_AddStringToObject(v, "description", desc);
    cJSON_AddStringToObject(v, "version", ptts_version());
    cJSON *l = cJSON_AddArrayToObject(v, "languages");
    cJSON_AddItemToArray(l, cJSON_CreateString(lang));
    cJSON_AddItemToArray(arr, v);
}

/* describe -> info: one tts program with the voices-dir voices, the loaded presets and the
 * language's other presets (loaded on first use). */
static int send_info(conn *c) {
    srv *s = c->s;
    const char *lang = lang_code(s->cfg.language);
    cJSON *d = cJSON_CreateObject(), *tts = cJSON_AddArrayToObject(d, "tts");
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "name", "pocket-tts");
    cJSON_AddItemToObject(p, "attribution", attribution());
    cJSON_AddBoolToObject(p, "installed", 1);
    cJSON_AddStringToObject(p, "description", "Pocket TTS (Kyutai), in C");
    cJSON_AddStringToObject(p, "version", ptts_version());
    cJSON_AddBoolToObject(p, "supports_synthesize_streaming", 1);
    cJSON *arr = cJSON_AddArrayToObject(p, "voices");
    pthread_mutex_lock(&s->voice_mu);
    for (int i = 0; i < s->n_voices; i++)
        if (s->voices[i].source != SRC_URL)
            add_voice(arr, s->voices[i].name, lang,
                      s->voices[i].source == SRC_DIR ? "voices directory" : "preset");
    int np = ptts_preset_voice_count(s->cfg.language);
    for (int i = 0; i < np; i++) {
        const char *name = ptts_preset_voice_name(s->cfg.language, i);
        const int seen = srv_voice_listed(s, name);
        if (!seen) add_voice(arr, name, lang, "preset");
    }
    pthread_mutex_unlock(&s->voice_mu);
    cJSON_AddItemToArray(tts, p);
    return send_event(c, "info", d, NULL, 0);
}

/* ---- synthesis */

/* The request ends (done or failed): the rest of the protocol. */
static void end_request(conn *c, int failed) {
    srv *s = c->s;
    if (failed) {
        char err[PTTS_ERROR_MSG_MAX];
        pthread_mutex_lock(&s->mu);
        snprintf(err, sizeof err, "%s", c->r->err[0] ? c->r->err : "synthesis failed");
        pthread_mutex_unlock(&s->mu);
        FATAL(c, "synthesis_failed", "%s", err);
    } else {
        if (!c->audio_started) send_event(c, "audio-start", audio_format(), NULL, 0);
        /* the reference's 200 ms of silence after the utterance, as generate and HTTP */
        memset(c->s16, 0, TAIL_SAMPLES * 2);
        send_event(c, "audio-chunk", audio_format(), c->s16, TAIL_SAMPLES * 2);
        send_event(c, "audio-stop", cJSON_CreateObject(), NULL, 0);
    }
    srv_req_unref(s, c->r);
    c->r = NULL;
    pthread_mutex_lock(&s->mu);
    s->inflight--;
    pthread_mutex_unlock(&s->mu);
    free(c->pend);
    c->pend = NULL;
    c->pend_len = 0;
    c->pend_end = 0;
    if (c->streaming && c->stop_seen) {
        send_event(c, "synthesize-stopped", cJSON_CreateObject(), NULL, 0);
        c->streaming = 0;
    }
}

/* Frames that are ready, as audio-chunk events; waits up to wait_ms for the first one. */
static void pump(conn *c, int wait_ms) {
    srv *s = c->s;
    int n = srv_req_pop(s, c->r, c->pcm, MAX_FRAMES, wait_ms);
    if (n == SRV_POP_DONE || n == SRV_POP_FAILED) {
        end_request(c, n == SRV_POP_FAILED);
        return;
    }
    if (n <= 0) return;
    if (!c->audio_started) {
        c->audio_started = 1;
        if (send_event(c, "audio-start", audio_format(), NULL, 0)) return;
    }
    for (int i = 0; i < n; i++) {
        uint16_t v = (uint16_t)wav_sample(c->pcm[i]);
        c->s16[2 * i] = (uint8_t)(v & 0xFF);
        c->s16[2 * i + 1] = (uint8_t)(v >> 8);
    }
    send_event(c, "audio-chunk", audio_format(), c->s16, (size_t)n * 2);
}

/* The voice of an event's data ({"voice": {"name": ...}}; absent: the default). 0, or -1 after
 * an error event. */
static int event_voice(conn *c, const cJSON *data, const ptts_voice **v) {
    srv *s = c->s;
    const cJSON *vo = cJSON_GetObjectItemCaseSensitive(data, "voice");
    const char *name = NULL;
    if (vo && !cJSON_IsNull(vo)) {
        if (!cJSON_IsObject(vo)) {
            FATAL(c, "invalid_voice", "\"voice\" is not an object");
            return -1;
        }
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(vo, "name");
        if (nm && !cJSON_IsNull(nm) && !cJSON_IsString(nm)) {
            FATAL(c, "invalid_voice", "\"voice\".\"name\" is not a string");
            return -1;
        }
        name = cJSON_IsString(nm) ? nm->valuestring : NULL;
    }
    char msg[512], detail[1024] = "";
    if (srv_voice_get(s, name ? name : s->cfg.default_voice, v, msg, sizeof msg, detail,
                      sizeof detail)) {
        if (detail[0] && strcmp(detail, msg)) srv_log(s, PTTS_LOG_INFO, "wyoming: %s", detail);
        FATAL(c, "unknown_voice", "%s", msg);
        return -1;
    }
    return 0;
}

/* A text's check: UTF-8 with no control character but tab/LF/CR (the frame parser already
 * refused invalid UTF-8 in the raw JSON; an escape can still make a control character). */
static int text_bad(conn *c, const char *t, size_t len) {
    uint32_t cp;
    size_t at = srv_utf8_check(t, len, &cp);
    if (at == len) return 0;
    if (cp == 0xFFFFFFFFu)
        FATAL(c, "invalid_utf8", "the text is not valid UTF-8 (byte offset %zu)", at);
    else
        FATAL(c, "control_character",
              "the text contains the control character U+%04X at byte offset %zu", (unsigned)cp,
              at);
    return 1;
}

static size_t count_chars(const char *t, size_t len) {
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)t[i] & 0xC0) != 0x80;
    return n;
}

/* Queue r for the connection (counted in s->inflight for the drain); 0, or -1 after an error
 * event (r is dropped). */
static int start_request(conn *c, srv_req *r) {
    srv *s = c->s;
    pthread_mutex_lock(&s->mu);
    int draining = s->draining;
    if (!draining) s->inflight++;
    pthread_mutex_unlock(&s->mu);
    if (draining) {
        srv_req_unref(s, r);
        return FATAL(c, "draining", "the server is shutting down"), -1;
    }
    if (srv_enqueue(s, r)) {
        srv_req_unref(s, r);
        pthread_mutex_lock(&s->mu);
        s->inflight--;
        pthread_mutex_unlock(&s->mu);
        return FATAL(c, "busy", "the server is busy (its queue is full); retry later"), -1;
    }
    c->r = r;
    c->audio_started = 0;
    return 0;
}

static void synthesize(conn *c, const cJSON *data) {
    srv *s = c->s;
    const char *text = wy_data_string(data, "text");
    if (!text) {
        FATAL(c, "missing_text", "synthesize needs a \"text\" string");
        return;
    }
    size_t len = strlen(text), n = count_chars(text, len);
    if (text_bad(c, text, len)) return;
    if (n > (size_t)s->cfg.max_text_chars) {
        FATAL(c, "text_too_long", "the text has %zu characters; this server accepts at most %d", n,
              s->cfg.max_text_chars);
        return;
    }
    const ptts_voice *v;
    if (event_voice(c, data, &v)) return;
    char *copy = strdup(text);
    srv_req *r = copy ? srv_req_new(s, copy, v, NULL) : NULL;
    if (!r) {
        free(copy);
        FATAL(c, "out_of_memory", "out of memory");
        return;
    }
    if (!start_request(c, r)) srv_log(s, PTTS_LOG_INFO, "wyoming: synthesize, %zu characters", n);
}

static void stream_start(conn *c, const cJSON *data) {
    srv *s = c->s;
    if (c->streaming) {
        send_error(c, "already_streaming", "synthesize-start during streaming synthesis");
        return;
    }
    const ptts_voice *v;
    if (event_voice(c, data, &v)) return;
    srv_req *r = srv_req_new_incremental(s, v, NULL);
    if (!r) {
        FATAL(c, "out_of_memory", "out of memory");
        return;
    }
    if (start_request(c, r)) return;
    c->streaming = 1;
    c->stop_seen = 0;
    c->chars = 0;
    c->tail_mark = 0;
    srv_log(s, PTTS_LOG_INFO, "wyoming: synthesize-start");
}

/* Does t end with an end mark (. ! ? U+2026)? */
static int ends_with_mark(const char *t, size_t len) {
    if (!len) return 0;
    char last = t[len - 1];
    return last == '.' || last == '!' || last == '?' ||
           (len >= 3 && !memcmp(t + len - 3, "\xe2\x80\xa6", 3));
}

/* Hand text to the request (end as srv_req_feed); what it cannot take yet waits in c->pend.
 * A request that has ended takes nothing: its end comes through pump. */
static void feed(conn *c, const char *t, size_t len, int end) {
    if (srv_req_feed(c->s, c->r, t, len, 0, end) != SRV_FEED_FULL) return;
    char *nb = realloc(c->pend, c->pend_len + len + 1);
    if (!nb) {
        FATAL(c, "out_of_memory", "out of memory");
        return;
    }
    memcpy(nb + c->pend_len, t, len);
    c->pend = nb;
    c->pend_len += len;
    c->pend_end |= end;
}

static void stream_chunk(conn *c, const cJSON *data) {
    srv *s = c->s;
    if (!c->streaming || c->stop_seen) {
        send_error(c, "not_streaming", "synthesize-chunk outside synthesize-start .. -stop");
        return;
    }
    const char *text = wy_data_string(data, "text");
    if (!text) {
        FATAL(c, "missing_text", "synthesize-chunk needs a \"text\" string");
        return;
    }
    size_t len = strlen(text);
    if (text_bad(c, text, len)) return;
    c->chars += count_chars(text, len);
    if (c->chars > (size_t)s->cfg.max_text_chars) {
        FATAL(c, "text_too_long", "the streamed text passes %d characters", s->cfg.max_text_chars);
        return;
    }
    if (!len) return;
    c->tail_mark = ends_with_mark(text, len);
    c->last_feed = tool_now();
    feed(c, text, len, 0);
}

static void stream_stop(conn *c) {
    if (!c->streaming || c->stop_seen) {
        send_error(c, "not_streaming", "synthesize-stop without synthesize-start");
        return;
    }
    c->stop_seen = 1;
    c->tail_mark = 0;
    if (c->pend_len || c->pend_end)
        c->pend_end = 1;
    else
        feed(c, "", 0, 1);
}

static void handle(conn *c, wy_event *ev) {
    switch (ev->kind) {
    case WY_EV_DESCRIBE: send_info(c); break;
    case WY_EV_PING: {
        cJSON *d = cJSON_CreateObject();
        const char *t = wy_data_string(ev->data, "text");
        if (t) cJSON_AddStringToObject(d, "text", t);
        send_event(c, "pong", d, NULL, 0);
        break;
    }
    case WY_EV_SYNTHESIZE:
        /* streaming clients repeat the whole text for servers without streaming: ignored */
        if (!c->streaming) synthesize(c, ev->data);
        break;
    case WY_EV_SYNTH_START: stream_start(c, ev->data); break;
    case WY_EV_SYNTH_CHUNK: stream_chunk(c, ev->data); break;
    case WY_EV_SYNTH_STOP: stream_stop(c); break;
    default: send_error(c, "unknown_event", "unknown event type \"%s\"", ev->type);
    }
}

/* ---- the connection's loop */

static void conn_loop(conn *c) {
    srv *s = c->s;
    char err[256];
    for (;;) {
        pthread_mutex_lock(&c->w->mu);
        int stop = c->w->stop;
        pthread_mutex_unlock(&c->w->mu);
        if (stop || c->dead) break;
        /* a plain synthesis reads no event; text that waits for the feed stops the reading */
        int parsing = !(c->r && !c->streaming) && !c->pend_len && !c->pend_end;
        if (parsing && c->rpos < c->rlen) {
            wy_event ev = {0};
            size_t used = 0;
            int rc =
                wy_parse(&c->p, c->rbuf + c->rpos, c->rlen - c->rpos, &used, &ev, err, sizeof err);
            c->rpos += used;
            if (rc < 0) {
                send_error(c, rc == WY_ERR_NOMEM ? "out_of_memory" : "malformed_event", "%s", err);
                break;
            }
            if (rc == 1) {
                handle(c, &ev);
                wy_event_free(&ev);
            }
            continue;
        }
        /* After the client's end of input (a half-close, as `nc -N` does): what it asked for
         * is finished, then the connection closes; a stream without its synthesize-stop can
         * never finish and is cancelled. */
        if (c->eof && c->rpos >= c->rlen && (!c->r || (c->streaming && !c->stop_seen))) break;
        if (c->r && (c->pend_len || c->pend_end)) {
            int rc = srv_req_feed(s, c->r, c->pend ? c->pend : "", c->pend_len, 0, c->pend_end);
            if (rc != SRV_FEED_FULL) {
                free(c->pend);
                c->pend = NULL;
                c->pend_len = 0;
                c->pend_end = 0;
            }
        }
        if (c->r && c->streaming && c->tail_mark &&
            (tool_now() - c->last_feed) * 1000 >= s->cfg.wyoming_idle_ms) {
            /* the sentence is complete: nothing followed it in time (a full feed: retry) */
            if (srv_req_feed(s, c->r, "", 0, 1, 0) != SRV_FEED_FULL) c->tail_mark = 0;
        }
        int reading = parsing && !c->eof;
        struct pollfd pf = {c->fd, (short)((reading ? POLLIN : 0) | (c->eof ? 0 : POLLRDHUP)), 0};
        int pr = poll(&pf, 1, c->r ? 0 : IDLE_MS);
        if (pr < 0 && errno != EINTR) break;
        /* gone: a reset (the peer closed and our next frame met it) or a hang-up both ways */
        if (pr > 0 && (pf.revents & (POLLERR | POLLHUP | POLLNVAL))) break;
        if (pr > 0 && (pf.revents & POLLRDHUP) && !reading) c->eof = 1;
        /* audio first: a client that sends without pause still gets its frames */
        if (c->r) pump(c, pr > 0 ? 0 : POLL_MS);
        if (pr > 0 && (pf.revents & (POLLIN | POLLRDHUP)) && reading) {
            ssize_t k = recv(c->fd, c->rbuf, sizeof c->rbuf, 0);
            if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            if (k < 0) break; /* the connection failed */
            if (k == 0) c->eof = 1;
            c->rpos = 0;
            c->rlen = (size_t)k;
        }
    }
    if (c->r) { /* a disconnect mid-utterance: the generation thread drops it before its next
                 * step */
        srv_req_cancel(s, c->r);
        srv_req_unref(s, c->r);
        c->r = NULL;
        pthread_mutex_lock(&s->mu);
        s->inflight--;
        pthread_mutex_unlock(&s->mu);
    }
}

/* A graceful close: our end of output first, then what the client still sends is read and
 * dropped until it closes (at most LINGER_MS): closing with unread input would reset the
 * connection, and the client could lose the last events (an error's) before reading them. */
static void linger(conn *c) {
    if (shutdown(c->fd, SHUT_WR)) return;
    double until = tool_now() + LINGER_MS / 1000.0;
    for (double now = tool_now(); now < until; now = tool_now()) {
        struct pollfd pf = {c->fd, POLLIN, 0};
        if (poll(&pf, 1, (int)((until - now) * 1000) + 1) <= 0) break;
        if (recv(c->fd, c->rbuf, sizeof c->rbuf, 0) <= 0) break;
    }
}

static void *conn_main(void *arg) {
    wy_conn *wc = arg;
    srv *s = wc->s;
    conn *c = calloc(1, sizeof *c);
    if (c) {
        c->s = s;
        c->w = s->wyoming;
        c->fd = wc->fd;
        wy_parser_init(&c->p);
        c->pcm = malloc((size_t)MAX_FRAMES * s->frame_samples * sizeof(float));
        int most = MAX_FRAMES * s->frame_samples;
        c->s16 = malloc((size_t)(most > TAIL_SAMPLES ? most : TAIL_SAMPLES) * 2);
        if (c->pcm && c->s16) conn_loop(c);
        linger(c);
        wy_parser_free(&c->p);
        free(c->pcm);
        free(c->s16);
        free(c->pend);
        free(c);
    }
    /* closed under w->mu: srv_wyoming_stop shuts down the sockets of unfinished connections */
    wy_server *w = s->wyoming;
    pthread_mutex_lock(&w->mu);
    shutdown(wc->fd, SHUT_RDWR);
    close(wc->fd);
    wc->finished = 1;
    w->n_conns--;
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* Join the threads of closed connections (w->mu held). */
static void reap_locked(wy_server *w) {
    for (wy_conn **pp = &w->conns; *pp;) {
        wy_conn *wc = *pp;
        if (wc->finished) {
            pthread_join(wc->th, NULL);
            *pp = wc->next;
            free(wc);
        } else {
            pp = &wc->next;
        }
    }
}

static void *accept_main(void *arg) {
    srv *s = arg;
    wy_server *w = s->wyoming;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        int stop = w->stop;
        reap_locked(w);
        pthread_mutex_unlock(&w->mu);
        if (stop) break;
        struct pollfd pf = {w->fd, POLLIN, 0};
        if (poll(&pf, 1, IDLE_MS) <= 0) continue;
        int fd = accept4(w->fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            /* out of descriptors or memory: the listener stays readable, so wait a little
             * instead of spinning */
            if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED) poll(NULL, 0, IDLE_MS);
            continue;
        }
        /* a client that stops reading blocks its own thread at most this long */
        struct timeval tv = {s->cfg.timeout_s, 0};
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        pthread_mutex_lock(&w->mu);
        int full = w->n_conns >= s->cfg.max_connections;
        wy_conn *wc = full ? NULL : calloc(1, sizeof *wc);
        if (wc) {
            wc->s = s;
            wc->fd = fd;
            if (pthread_create(&wc->th, NULL, conn_main, wc)) {
                free(wc);
                wc = NULL;
            } else {
                wc->next = w->conns;
                w->conns = wc;
                w->n_conns++;
            }
        }
        pthread_mutex_unlock(&w->mu);
        if (!wc) {
            conn c0 = {.s = s, .fd = fd};
            send_error(&c0, "too_many_connections", "too many connections; retry later");
            pthread_mutex_lock(&s->mu);
            s->conns_refused++;
            pthread_mutex_unlock(&s->mu);
            close(fd);
        }
    }
    return NULL;
}

int srv_wyoming_start(srv *s, char *msg, size_t cap) {
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    char port[16];
    snprintf(port, sizeof port, "%d", s->cfg.wyoming_port);
    int rc = getaddrinfo(s->cfg.host, port, &hints, &ai);
    if (rc) {
        snprintf(msg, cap, "wyoming: %s: %s", s->cfg.host, gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    snprintf(msg, cap, "wyoming: no stream socket for %s", s->cfg.host);
    /* IPv4 first, as the HTTP listener (localhost resolves to both; clients try both) */
    for (int pass = 0; pass < 2; pass++)
        for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
            if ((a->ai_family == AF_INET) != (pass == 0)) continue;
            fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
            if (fd < 0) continue;
            int one = 1;
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
            if (bind(fd, a->ai_addr, a->ai_addrlen) || listen(fd, 64)) {
                snprintf(msg, cap, "wyoming: cannot listen on %s:%d: %s", s->cfg.host,
                         s->cfg.wyoming_port, strerror(errno));
                close(fd);
                fd = -1;
            }
        }
    freeaddrinfo(ai);
    if (fd < 0) return -1;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (!getsockname(fd, (struct sockaddr *)&ss, &sl))
        s->cfg.wyoming_port =
            ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                           : ((struct sockaddr_in *)&ss)->sin_port);
    wy_server *w = calloc(1, sizeof *w);
    if (!w) {
        close(fd);
        snprintf(msg, cap, "out of memory");
        return -1;
    }
    w->fd = fd;
    pthread_mutex_init(&w->mu, NULL);
    s->wyoming = w;
    if (pthread_create(&w->th, NULL, accept_main, s)) {
        close(fd);
        pthread_mutex_destroy(&w->mu);
        free(w);
        s->wyoming = NULL;
        snprintf(msg, cap, "cannot start the Wyoming thread");
        return -1;
    }
    return 0;
}

void srv_wyoming_stop(srv *s) {
    wy_server *w = s->wyoming;
    if (!w) return;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->th, NULL);
    close(w->fd);
    /* every connection sees stop within IDLE_MS (its requests have ended with the generation
     * thread); a blocked send is woken by the shutdown */
    pthread_mutex_lock(&w->mu);
    for (wy_conn *wc = w->conns; wc; wc = wc->next)
        if (!wc->finished) shutdown(wc->fd, SHUT_RDWR);
    pthread_mutex_unlock(&w->mu);
    for (wy_conn *wc = w->conns, *next; wc; wc = next) {
        next = wc->next;
        pthread_join(wc->th, NULL);
        free(wc);
    }
    pthread_mutex_destroy(&w->mu);
    free(w);
    s->wyoming = NULL;
}
