/*
 * server.h - the internals of `pocket-tts serve` (tools/cmd_serve.c).
 *
 * Threads:
 *  - libmicrohttpd runs a small pool of polling threads (epoll; one per core up to 8), every
 *    connection on one of them, and no handler ever waits for the generation thread. A
 *    request's handler parses and validates it, resolves or clones the voice, queues it and
 *    suspends its connection (MHD_suspend_connection) until the generation thread admits or
 *    refuses it; the response's reader then encodes what the request's ring of frames holds
 *    (WAV/PCM/FLAC/Opus/MP3/AAC, speed through Rubber Band, OpenAI's SSE framing) and, when
 *    the ring is empty, suspends the connection again and returns 0. The generation thread
 *    resumes it (srv_req.wake, MHD_resume_connection) at the next frame, the admission or the
 *    end. So an idle or waiting connection costs a socket and MHD's per-connection memory, no
 *    thread. What takes a while besides generation, a voice_wav clone or a voice's first
 *    download (a preset or URL), runs on a thread of its own (at most 64 at once) while its
 *    connection is suspended, and that thread resumes it.
 *  - One generation thread owns the ptts_batch: it admits queued requests into free slots and
 *    steps every active utterance together. It never touches a socket and never waits on a
 *    client: each frame goes into the request's bounded ring; a ring that is full (a client that
 *    reads slower than --client-buffer seconds of audio behind) cancels that request alone.
 *  - A disconnect is seen by the reader (a poll for a hang-up before it parks), by MHD when a
 *    write fails (the response is freed, which cancels), or, for a request still queued, when
 *    the generation thread's queue sweep wakes it to look; each marks the request cancelled,
 *    and the generation thread cancels its slot before the next step (ptts_batch_cancel), so
 *    it stops within a frame.
 *  - The Wyoming listener (--wyoming-port, server_wyoming.c) has an acceptor thread and one
 *    thread per connection, which queue requests like the HTTP handlers and pop their frames.
 *  - A WebSocket (GET /v1/tts/stream-input, server_ws.c) leaves MHD's connection handling once
 *    upgraded: its socket gets a reader thread (frames in, text fed to an incremental request,
 *    throttled by not reading) and, per utterance, a writer thread (frames popped and sent).
 * One mutex (srv.mu) guards the queue, the slots, every request's ring and the metrics.
 */
#ifndef PTTS_SERVER_H
#define PTTS_SERVER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "ptts.h"
#include "util.h"

typedef struct srv_config {
    const char *host;
    int port;
    int max_concurrent;     /* utterances in the batch */
    int queue_len;          /* requests waiting for a slot */
    int joins;              /* PTTS_JOIN_* (ptts_batch_set_joins) */
    int max_text_chars;     /* code points */
    size_t max_upload;      /* bytes of an uploaded voice */
    int max_connections;    /* soft limit (503 beyond; 0: from the open-file limit, set by
                             * srv_http_start); MHD's hard limit is twice that */
    int timeout_s;          /* idle connection timeout */
    double client_buffer_s; /* audio a slow client may fall behind before it is cancelled */
    const char *voices_dir;
    const char *default_voice;
    const char *voice_map; /* --voice-map FILE, or NULL */
    const char *language;
    int voice_urls;          /* VOICE_URLS_* */
    int64_t voice_url_max;   /* bytes of a voice a URL names */
    int voice_url_timeout_s; /* its whole download */
    double drain_timeout_s;  /* SIGTERM: how long in-flight requests may still run */
    ptts_gen_options go;
    int wyoming_port;    /* the Wyoming listener's port (0: a free one); -1: none */
    int wyoming_idle_ms; /* streaming: a sentence end with no text after it this long is flushed */
    int quiet;
    int log_level; /* PTTS_LOG_*: the most verbose level printed; requests log at INFO */
} srv_config;

/* Which voice URLs a request may name: none; hf:// and https:// to public addresses only (the
 * default: ptts_fetch_options.public_only); any hf://, http:// or https:// URL. */
enum { VOICE_URLS_NONE = 0, VOICE_URLS_PUBLIC, VOICE_URLS_ANY };

enum { SRC_DIR = 0, SRC_PRESET = 1, SRC_URL = 2 };

typedef struct srv_voice {
    char *name;
    ptts_voice *v;
    int source;
} srv_voice;

enum { RQ_QUEUED = 0, RQ_ACTIVE, RQ_DONE, RQ_FAILED };

/* Flushes an incremental request may queue between two steps of the generation thread. */
#define SRV_FLUSH_MAX 64

typedef struct srv_req {
    int refs; /* the connection and (while queued or active) the generation thread */
    int state;
    int cancel;   /* set by the connection side */
    int overflow; /* cancelled by the generation thread: the client fell too far behind */
    int slot;
    char *text;
    const ptts_voice *voice;
    ptts_voice *owned_voice; /* an upload, freed with the request */
    char err[PTTS_ERROR_MSG_MAX];
    int err_code;
    float *ring;   /* frames of frame_samples floats */
    int *ring_len; /* samples of each entry: frame_samples, fewer for a pause's last frame */
    int cap, max_cap, head, count;
    int frame_samples;
    pthread_cond_t cv;
    /* A parked connection's wake-up (set with s->mu held; NULL: none): the generation side
     * calls it once, s->mu held, at the next frame, the admission, the end, or a queue sweep
     * (every QUEUE_SWEEP_S while queued, for hang-ups). It must not block. */
    void (*wake)(void *arg);
    void *wake_arg;
    double t_start, t_first, t_admit; /* t_admit: taken into a slot (< 0 before) */
    int64_t samples;
    ptts_gen_options go; /* the server's defaults and the request's own options */
    /* incremental text (srv_req_new_incremental): what srv_req_feed queued and the generation
     * thread has not yet handed to the batch; a flush goes after byte flush_at[i] */
    int incremental;
    char *feed;
    size_t feed_len, feed_cap;
    size_t flush_at[SRV_FLUSH_MAX];
    int n_flush;
    int feed_end;    /* end after the queued text */
    int input_ended; /* srv_req_feed took the end */
    struct srv_req *next;
} srv_req;

#define N_STATUS 600

typedef struct srv {
    srv_config cfg;
    ptts_model *model;
    int frame_samples;
    ptts_batch *batch;
    pthread_t gen_thread;
    pthread_mutex_t mu;
    pthread_cond_t gen_cv;
    int stop;
    srv_req **slot_req; /* [max_concurrent] */
    srv_req *q_head, *q_tail;
    int q_count, active;
    int batch_steps;   /* the sampler steps of the requests in the batch */
    int feeds_pending; /* srv_req_feed queued text the generation thread has not handed over */
    /* voices: the directory's, then presets and URLs as they are first used */
    srv_voice *voices;
    int n_voices, cap_voices;
    pthread_mutex_t voice_mu;
    /* OpenAI voice names: n_vmap (name, voice) pairs, vmap[2i] and vmap[2i+1]; fixed after start */
    char **vmap;
    int n_vmap;
    /* metrics */
    uint64_t req_by_status[N_STATUS];
    uint64_t conns, frames_total, cancelled, overflows;
    uint64_t conns_refused; /* 503s past --max-connections */
    int draining;           /* SIGTERM: /ready fails, new syntheses get 503 */
    int inflight;           /* synthesis requests between their headers and their end */
    int voice_jobs;         /* clones and voice downloads running on their own threads */
    double audio_s, busy_s, ttfb_sum;
    uint64_t ttfb_count;
    double started;
    void *mhd;
    char *page;
    struct wy_server *wyoming; /* server_wyoming.c's listener and connections; NULL: none */
    struct ws_sess *ws_list;   /* open WebSockets (server_ws.c), under mu */
    int ws_stop;               /* srv_ws_stop: every WebSocket closes */
} srv;

/* ---- generation (server_gen.c) */
int srv_gen_start(srv *s, ptts_error *e);
void srv_gen_stop(srv *s);
/* A request for `text` (taken) with voice v (owned: an upload, taken); r->go starts as
 * cfg.go: set the request's own options before srv_enqueue. */
srv_req *srv_req_new(srv *s, char *text, const ptts_voice *v, ptts_voice *owned);
/* An incremental request: no text yet; the generation thread starts it with
 * ptts_batch_start_incremental and hands it what srv_req_feed queued before each step. While it
 * waits for text it takes no step and costs the batch nothing; the generation thread sleeps
 * when every active request waits for text. */
srv_req *srv_req_new_incremental(srv *s, const ptts_voice *v, ptts_voice *owned);
/* Text pieces for an incremental request, from any thread (locks s->mu). flush and end as
 * ptts_batch_flush and ptts_batch_end, after the piece. 0; SRV_FEED_FULL when more than
 * PTTS_FEED_MAX_BYTES would wait, or SRV_FLUSH_MAX flushes (nothing taken: wait for frames and
 * retry: that is the throttle); SRV_FEED_ENDED when the request has ended (done, failed or
 * cancelled) or its end was already given. */
enum { SRV_FEED_FULL = -1, SRV_FEED_ENDED = -2 };
int srv_req_feed(srv *s, srv_req *r, const char *text, size_t len, int flush, int end);
/* Take up to max_frames frames of the request's ring into out (max_frames * s->frame_samples
 * floats), waiting at most wait_ms for the first (0: no wait). Returns the samples taken (> 0),
 * 0 when none came in time (the request still runs), SRV_POP_DONE when it is complete and the
 * ring is empty, SRV_POP_FAILED when it failed or was cancelled (r->err says why: read it with
 * s->mu held, or once popping has returned SRV_POP_FAILED). r->t_start and r->t_first (tool_now
 * seconds, t_first < 0 before the first frame) give the first-audio latency, t_admit its part
 * spent in the queue. */
enum { SRV_POP_DONE = -1, SRV_POP_FAILED = -2 };
int srv_req_pop(srv *s, srv_req *r, float *out, int max_frames, int wait_ms);
/* Queue (the queue takes a reference). 0, or -1 when the queue is full. Caller holds no lock. */
int srv_enqueue(srv *s, srv_req *r);
/* Drop a reference (locks). */
void srv_req_unref(srv *s, srv_req *r);
/* Ask for cancellation (locks). */
void srv_req_cancel(srv *s, srv_req *r);

/* ---- per-request options (server_req.c) */
struct cJSON;
typedef struct srv_bad srv_bad;
/* The generation options of a JSON object's members, validated (a 400 naming the member
 * otherwise), over what *go holds (the server's defaults): "temperature" (number in [0, 2]),
 * "seed" (integer in [0, 2^53]), "eos_threshold" (number in [-20, 20]), "frames_after_eos"
 * (integer in [0, 100]), "decode_steps" (integer in [1, 64]: a request whose steps differ from
 * the running batch's waits in the queue until the batch has none of those left). Absent or
 * null members keep the defaults; obj not an object: nothing read. 0 or the status with b. */
int srv_gen_opts_parse(const struct cJSON *obj, ptts_gen_options *go, srv_bad *b);

/* ---- voices (server_voice.c) */
int srv_voices_load_dir(srv *s, const char *dir, ptts_error *e);
/* A voice by name (voices dir, then presets, then hf:// and http(s) URLs as cfg.voice_urls
 * allows, under its size and time limits). Returns 0, or an HTTP status (400 unknown/invalid
 * name or refused URL, 502 download failed) with msg for the client (the request's fault, no
 * server path or library message) and detail for the log (may be the same buffer as msg, which
 * then gets the detail). */
int srv_voice_get(srv *s, const char *name, const ptts_voice **out, char *msg, size_t cap,
                  char *detail, size_t dcap);
/* The voice of `serve --default-voice`, loaded once at start (before any request thread): a
 * voices-dir name, a preset, an hf:// or http(s) URL (even with --no-voice-urls: the operator
 * chose it) or a local voice-state or audio file (not truncated, as the reference). *name: its
 * table name. 0, or an HTTP-like status with msg. */
int srv_voice_default(srv *s, const char *arg, const char **name, char *msg, size_t cap);
void srv_voices_free(srv *s);
/* Is `name` in the voices table (the directory's, and presets or URLs once loaded)? The caller
 * holds voice_mu. */
int srv_voice_listed(const srv *s, const char *name);
/* A name made of [A-Za-z0-9_.-], not starting with '.', at most 128 bytes. */
int srv_voice_name_ok(const char *name);

/* ---- voices that take a while (server_vjob.c) */
/* A clone of an uploaded clip, or a voice that is not loaded yet (a preset or URL download),
 * runs on a thread of its own while its connection is suspended; the thread resumes the
 * connection when done. At most SRV_VJOBS_MAX at once (each may hold its thread for
 * --voice-url-timeout). */
#define SRV_VJOBS_MAX 64
struct MHD_Connection;
typedef struct srv_vjob {
    const uint8_t *wav; /* a clone of wav (wav_len bytes); NULL: srv_voice_get(name) */
    size_t wav_len;
    const char *name;
    char *detail; /* the request's log detail, dcap bytes */
    size_t dcap;
    /* results, read once the connection is resumed */
    int done;
    unsigned status; /* 0: v is the voice (owned: a clone, for the caller) */
    const ptts_voice *v;
    ptts_voice *owned;
    char msg[1024];
    srv *s;
    struct MHD_Connection *c;
} srv_vjob;
/* Suspend c and run j (the caller's; wav, name and detail outlive it). c is always resumed:
 * with status 503 at once when too many run or no thread starts. */
void srv_vjob_start(srv *s, struct MHD_Connection *c, srv_vjob *j);

/* ---- OpenAI voice names (server_voicemap.c) */
/* The default table (OpenAI's voice names to presets), then the JSON object of path (name ->
 * voice, replacing or adding entries) when path is not NULL. 0, or -1 with msg. At start. */
int srv_voicemap_load(srv *s, const char *path, char *msg, size_t cap);
/* The voice a /v1/audio/speech name stands for: a voices-dir voice of that name, else the map's
 * entry, else the name itself. Valid as long as s. */
const char *srv_voicemap_resolve(srv *s, const char *name);
/* The entries as GET /v1/audio/voices lists them, appended to arr (a cJSON array). */
void srv_voicemap_list(const srv *s, struct cJSON *arr);
void srv_voicemap_free(srv *s);

/* ---- request bodies (server_req.c; no HTTP library: the fuzzer calls them) */
/* The model ids /v1/audio/speech accepts and GET /v1/models lists. */
#define SRV_N_MODELS 5
extern const char *const srv_model_ids[SRV_N_MODELS];
/* A refusal: the HTTP status, the OpenAI error's param and code (NULL: none) and message. */
struct srv_bad {
    unsigned status;
    const char *param, *code;
    char msg[256];
};
/* POST /v1/audio/speech: the JSON body checked (model, input, response_format, speed, stream,
 * stream_format, voice as a string or {"id"}, instructions: accepted and ignored). 0 with r
 * filled (text and voice malloc'd, voice NULL: the default; srv_speech_free), or the status
 * with b filled. */
typedef struct srv_speech {
    char *text, *voice;
    int fmt; /* FMT_* */
    double speed;
    int streaming;
    int sse;             /* stream_format "sse" (streaming set too) */
    int input_chars;     /* code points of the input: the SSE usage's input_tokens */
    ptts_gen_options go; /* the defaults given, with the body's own (srv_gen_opts_parse) */
} srv_speech;
#define SRV_INSTRUCTIONS_MAX 4096 /* characters, as OpenAI's input */
int srv_speech_parse(const char *body, size_t len, int max_text_chars,
                     const ptts_gen_options *defaults, srv_speech *r, srv_bad *b);
void srv_speech_free(srv_speech *r);
/* POST /tts: the form's fields (text, voice_url, voice_wav, and the generation options of
 * srv_gen_opts_parse as decimal numbers) as the HTTP library hands them out, in pieces,
 * collected up to the limits (set text_limit and wav_limit, the rest zero). */
#define SRV_FORM_OPTS 5 /* temperature, seed, eos_threshold, frames_after_eos, decode_steps */
typedef struct srv_form {
    size_t text_limit, wav_limit; /* bytes */
    int too_big, bad, text_too_long;
    char *text, *voice_url; /* NUL-terminated; NULL: the field was not sent */
    size_t text_len, voice_url_len;
    uint8_t *wav;
    size_t wav_len;
    int wav_field;            /* a voice_wav part was sent */
    char *opt[SRV_FORM_OPTS]; /* NULL: not sent */
    size_t opt_len[SRV_FORM_OPTS];
} srv_form;
void srv_form_field(srv_form *f, const char *key, const char *filename, const char *data,
                    size_t size);
/* 0 when the form makes a request, else the status with b filled. */
int srv_form_check(const srv_form *f, int max_text_chars, srv_bad *b);
/* The form's generation options over *go (the server's defaults): 0, or the 400 naming the
 * field (not a number, or as srv_gen_opts_parse refuses it). */
int srv_form_gen_opts(const srv_form *f, ptts_gen_options *go, srv_bad *b);
void srv_form_free(srv_form *f);
/* The first byte offset of `text` (len bytes) that is not valid UTF-8 (overlong forms,
 * surrogates and code points past U+10FFFF included; *cp = 0xFFFFFFFF) or starts a control
 * character other than tab, LF and CR (C0, DEL, C1; *cp = the code point); len when none. */
size_t srv_utf8_check(const char *text, size_t len, uint32_t *cp);
/* Append n bytes to the NUL-terminated heap buffer *dst (*len bytes, at most limit); -1 when
 * that would pass the limit or memory runs out. */
int srv_append(char **dst, size_t *len, const char *data, size_t n, size_t limit);

/* ---- audio encoding (server_audio.c) */
/* OpenAI's response_format names */
enum { FMT_WAV = 0, FMT_PCM, FMT_FLAC, FMT_OPUS, FMT_MP3, FMT_AAC, SRV_N_FMT };
int srv_format_parse(const char *name); /* -1 when unknown */
const char *srv_format_name(int fmt);
const char *srv_format_mime(int fmt);
/* Can this server write the format (Opus and AAC: server_opus.c, server_aac.c; FLAC and MP3:
 * this libsndfile)? 1/0. */
int srv_format_available(int fmt);
/* The formats this server writes, comma-separated ("wav, pcm, ..."), into buf. */
void srv_format_list(char *buf, size_t cap);
/* Can SSE carry it? Only formats whose pieces concatenate into the file: pcm and wav
 * (PROTOCOLS.md, OpenAI). 1/0. */
int srv_format_sse_ok(int fmt);

typedef struct srv_enc srv_enc;
/* streaming: bytes may be taken as soon as they exist (the encoder is never allowed to seek
 * back); otherwise the whole file is kept and finished with exact lengths. speed in
 * [0.25, 4]: 1 is a plain copy, else Rubber Band (pitch kept). */
int srv_enc_open(srv_enc **out, int fmt, double speed, int streaming, char *err, size_t cap);
int srv_enc_write(srv_enc *e, const float *x, int n);
int srv_enc_finish(srv_enc *e);
/* Bytes ready to send, and consume n of them. */
const uint8_t *srv_enc_data(srv_enc *e, size_t *n);
void srv_enc_consume(srv_enc *e, size_t n);
int64_t srv_enc_samples_out(const srv_enc *e);
void srv_enc_free(srv_enc *e);
/* OpenAI's stream_format "sse" (streaming encoders, before the first write): the encoded bytes
 * go out as `data: {"type":"speech.audio.delta","audio":"<base64>"}` events, and finishing adds
 * `data: {"type":"speech.audio.done","usage":{...}}` whose input_tokens is input_tokens and
 * whose output_tokens counts the audio's 80 ms frames. */
void srv_enc_set_sse(srv_enc *e, int input_tokens);
/* The response's Content-Type: the format's, or text/event-stream under SSE. */
const char *srv_enc_mime(const srv_enc *e);

/* Where the Opus and AAC writers put their bytes: 0, or -1 to fail. */
typedef int (*srv_sink)(void *user, const uint8_t *p, size_t n);
/* ---- Ogg/Opus writer (server_opus.c): a page flushed after every write that completes a
 * packet. */
typedef struct srv_opus srv_opus;
int srv_opus_open(srv_opus **out, srv_sink sink, void *user, char *err, size_t cap);
int srv_opus_write(srv_opus *o, const float *x, size_t n); /* 24 kHz mono */
int srv_opus_finish(srv_opus *o);
void srv_opus_free(srv_opus *o);
/* ---- AAC writer (server_aac.c): libavcodec's AAC-LC in ADTS frames, each to the sink as the
 * encoder releases it. */
typedef struct srv_aac srv_aac;
int srv_aac_open(srv_aac **out, srv_sink sink, void *user, char *err, size_t cap);
int srv_aac_write(srv_aac *a, const float *x, size_t n); /* 24 kHz mono */
int srv_aac_finish(srv_aac *a);
void srv_aac_free(srv_aac *a);

/* ---- HTTP (server_http.c) */
/* Resolve cfg.max_connections (0: DEFAULT_CONNECTIONS or what the open-file limit allows; a
 * given one that does not fit is lowered with a warning) after raising the soft open-file
 * limit to the hard one; returns the hard limit past which connections are closed unanswered.
 * srv_http_start calls it; call it first when another listener uses cfg.max_connections. */
int srv_conn_limits(srv *s);
int srv_http_start(srv *s, char *msg, size_t cap);
void srv_http_stop(srv *s);
/* A line on stderr when `level` (PTTS_LOG_*) is within cfg.log_level. */
void srv_log(const srv *s, int level, const char *fmt, ...) TOOL_PRINTF(3, 4);

/* ---- GET endpoints' bodies (server_info.c) */
/* GET /v1/audio/voices and GET /v1/models as JSON (NULL: out of memory). */
struct cJSON *srv_voices_json(srv *s);
struct cJSON *srv_models_json(void);
/* GET /metrics in Prometheus' text format, malloc'd, *len bytes (NULL: out of memory). */
char *srv_metrics_text(srv *s, size_t *len);

/* ---- Wyoming (server_wyoming.c) */
/* Listen on cfg.host:cfg.wyoming_port (cfg.wyoming_port becomes the bound port) and serve
 * there from its own threads. 0, or -1 with msg. */
int srv_wyoming_start(srv *s, char *msg, size_t cap);
/* Close the listener and every connection (after srv_gen_stop: their requests have ended). */
void srv_wyoming_stop(srv *s);

/* ---- the web page (server_page.c) */
/* The page as one malloc'd string. */
char *srv_page_build(void);

/* ---- WebSocket input streaming (server_ws.c; frames in ws_frame.h) */
struct MHD_Connection;
struct MHD_Response;
/* GET /v1/tts/stream-input: the handshake checked; the 101 response that hands the socket to
 * its own threads, or NULL with *status (400, 426, 500) and msg for the client. */
struct MHD_Response *srv_ws_upgrade(srv *s, struct MHD_Connection *c, unsigned *status, char *msg,
                                    size_t cap);
/* Close every WebSocket (1001) and wait for their threads; before MHD stops. */
void srv_ws_stop(srv *s);

#endif
