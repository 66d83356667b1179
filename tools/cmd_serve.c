/*
 * cmd_serve.c - `pocket-tts serve`: the HTTP server (tools/server/, design in server.h), with
 * the Wyoming server beside it on --wyoming-port; `pocket-tts wyoming` is the Wyoming server
 * alone. Loads the model and the voices once, starts the generation thread, libmicrohttpd and
 * the Wyoming listener, and runs until SIGINT or SIGTERM.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "commands.h"
#include "server/server.h"
#include "util.h"

static void usage(FILE *f, int wyoming) {
    if (wyoming)
        fprintf(f, "usage: pocket-tts wyoming [options]\n\n"
                   "The Wyoming TTS server of `pocket-tts serve --wyoming-port` without HTTP: the\n"
                   "options below but --wyoming-port, --port being the Wyoming port (default\n"
                   "10201).\n\n");
    fprintf(f,
            "usage: pocket-tts serve [options]\n\n"
            "HTTP server: GET / (web page), GET /health (alive), GET /ready (serving: 503 while\n"
            "draining), GET /metrics, POST /tts (the reference's\n"
            "multipart form), POST /v1/audio/speech, GET /v1/audio/voices, GET /v1/models.\n"
            "With --wyoming-port, also a Wyoming TTS server (Home Assistant) on that port,\n"
            "sharing the model, voices and batch: describe, synthesize and streaming\n"
            "synthesis, 24 kHz 16-bit mono. In Home Assistant: Settings > Devices & services >\n"
            "Add integration > Wyoming Protocol, with this machine's host and that port.\n\n"
            "  --host HOST            address to listen on (default localhost; for Home\n"
            "                         Assistant on another machine, 0.0.0.0)\n"
            "  --port N               port (default 8000; 0 picks a free one, printed at start)\n"
            "  --wyoming-port N       also serve Wyoming on port N (HA's Pocket TTS convention:\n"
            "                         10201; 0 picks a free one, printed at start)\n"
            "  --wyoming-idle-flush MS  streaming synthesis: a sentence end followed by no text\n"
            "                         for MS milliseconds is spoken at once (default 300)\n"
            "  --voices-dir DIR       every *.safetensors voice state and audio file of DIR is a\n"
            "                         voice named after the file (loaded at start)\n"
            "  --default-voice VOICE  the voice of requests that name none: a voices-dir name, a\n"
            "                         preset, a local audio or .safetensors file, an https:// URL\n"
            "                         or hf:// path, loaded at start (default: the language's\n"
            "                         preset, else the first voices-dir voice); --voice is the\n"
            "                         same\n"
            "  --voice-map FILE       OpenAI's voice names to voices: a JSON object such as\n"
            "                         {\"alloy\": \"tiny\"} over the default table\n"
            "                         (GET /v1/audio/voices lists it)\n"
            "  --max-concurrent N     utterances generated together (default: from the device:\n"
            "                         2 per CPU thread up to 64 on the CPU, 2 per GiB of a\n"
            "                         GPU's memory from 8 up to 256 on a GPU)\n"
            "  --queue N              requests waiting for a slot before 503 (default: 4 per\n"
            "                         concurrent utterance)\n"
            "  --joins POLICY         first-audio (default): a request that joins running ones\n"
            "                         gets its first frames at once, decoded apart from the\n"
            "                         rest of the call (a few streams: short); throughput:\n"
            "                         decoded with the call beside the next step, no decode\n"
            "                         apart, first audio one call later; on an H100 no more\n"
            "                         audio a second than the default (docs/deploy.md)\n"
            "  --max-text-chars N     longest text in characters (default 10000)\n"
            "  --max-upload-mb N      largest voice upload (default 20)\n"
            "  --max-connections N    open connections before 503 (default 4096, fewer when\n"
            "                         ulimit -Hn is lower; idle ones cost memory, no thread)\n"
            "  --timeout S            idle connection timeout in seconds (default 30)\n"
            "  --client-buffer S      seconds of audio a slow client may fall behind before its\n"
            "                         request is cancelled (default 30)\n"
            "  --voice-urls MODE      voice URLs a request may name: public (default: hf:// and\n"
            "                         https:// whose every connection goes to a public address),\n"
            "                         any (also http://, loopback and private networks) or none;\n"
            "                         --no-voice-urls is none (docs/security.md)\n"
            "  --voice-url-max-mb N   largest voice file a URL may name (default 20)\n"
            "  --voice-url-timeout S  longest download of a voice URL in seconds (default 30)\n"
            "  --drain-timeout S      on SIGTERM: /ready and new syntheses answer 503 and the\n"
            "                         requests in flight may finish for S seconds (default 30)\n"
            "                         before the server exits 0 (SIGINT: at once)\n"
            "  --log-level LEVEL      error, warn, info (default: one line per request) or debug\n"
            "  --quiet                only errors on stderr (--log-level error)\n\n");
    fputs(cli_model_help, f);
    fputc('\n', f);
    fputs(cli_gen_help, f);
}

/* --max-concurrent and --queue when not given, from what the model runs on (cfg fields < 1 and
 * < 0). On a GPU a step of many streams costs little more than one of a few (the batch fills
 * the device) until its memory runs out: 2 streams per GiB of device memory, 8 to 256. On the
 * CPU a step's cost grows with the streams: 2 per thread, up to 64. The queue holds 4 waiting
 * requests per slot: a client that queues behind them waits about 4 utterances. Writes what it
 * was sized from into `from`. */
static void size_from_device(srv_config *cfg, const cli_model_args *ma, const ptts_model_info *info,
                             char *from, size_t cap) {
    ptts_gpu_device d[16];
    ptts_error e = {0};
    int n = ma->mo.backend == PTTS_BACKEND_CPU || ma->mo.backend == PTTS_BACKEND_VULKAN_CODEC
                ? 0
                : ptts_gpu_devices(d, 16, &e);
    const ptts_gpu_device *gpu = NULL;
    for (int i = 0; i < n; i++)
        if (d[i].picked && (ma->mo.backend == PTTS_BACKEND_VULKAN ||
                            !strcmp(d[i].kind, "discrete GPU"))) /* auto's rule */
            gpu = &d[i];
    int slots;
    if (gpu) {
        double gib = (double)gpu->memory / (1u << 30);
        slots = gib * 2 < 8 ? 8 : gib * 2 > 256 ? 256 : (int)(gib * 2);
        snprintf(from, cap, "%s, %.0f GiB", gpu->name, gib);
    } else {
        slots = info->threads < 1 ? 2 : TOOL_MIN(64, 2 * info->threads);
        snprintf(from, cap, "%d CPU thread%s", info->threads, info->threads == 1 ? "" : "s");
    }
    if (cfg->max_concurrent < 1) cfg->max_concurrent = slots;
    if (cfg->queue_len < 0) cfg->queue_len = 4 * cfg->max_concurrent;
}

/* The library's messages, as far as --log-level lets them. */
static void log_to_stderr(void *user, int level, const char *msg) {
    if (level <= *(const int *)user) tool_log(0, level, "%s", msg);
}

/* SIGTERM: stop taking work, let what is in flight finish (up to --drain-timeout). The socket
 * stays open meanwhile so that a load balancer's health check gets /ready's 503 (and a new
 * synthesis a 503 with Retry-After and Connection: close) instead of a refused connection. */
static void drain(srv *s) {
    pthread_mutex_lock(&s->mu);
    s->draining = 1;
    int left = s->inflight;
    pthread_mutex_unlock(&s->mu);
    srv_log(s, PTTS_LOG_INFO, "draining: %d request%s in flight, up to %.0f s", left,
            left == 1 ? "" : "s", s->cfg.drain_timeout_s);
    double until = tool_now() + s->cfg.drain_timeout_s;
    while (left > 0 && tool_now() < until) {
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&s->mu);
        left = s->inflight;
        pthread_mutex_unlock(&s->mu);
    }
    if (left)
        srv_log(s, PTTS_LOG_WARN, "drain timeout: %d request%s cut short", left,
                left == 1 ? "" : "s");
}

static int serve_main(int argc, char **argv, int wyoming_only) {
    cli_model_args ma = {ptts_model_options_default()};
    srv_config cfg = {.host = "localhost",
                      .port = 8000,
                      .max_concurrent = 0, /* sized_from_device unless given */
                      .queue_len = -1,
                      .max_text_chars = 10000,
                      .max_upload = 20u << 20,
                      .max_connections = 0, /* srv_http_start: 4096 or the open-file limit */
                      .timeout_s = 30,
                      .client_buffer_s = 30,
                      .voice_urls = VOICE_URLS_PUBLIC,
                      .voice_url_max = 20 << 20,
                      .voice_url_timeout_s = 30,
                      .drain_timeout_s = 30,
                      .log_level = PTTS_LOG_INFO,
                      .wyoming_port = wyoming_only ? 10201 : -1,
                      .wyoming_idle_ms = 300,
                      .go = ptts_gen_options_default()};
    for (int i = 1; i < argc; i++) {
        int r;
        if ((r = cli_model_option(&ma, argc, argv, &i)) ||
            (r = cli_gen_option(&cfg.go, argc, argv, &i))) {
            if (r < 0) return 2;
            continue;
        }
        const char *a = argv[i], *v;
        long n;
        double x;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout, wyoming_only);
            return 0;
        } else if (cli_is(a, "--host")) {
            if (!(cfg.host = cli_value(argc, argv, &i))) return 2;
        } else if (cli_is(a, "--port")) {
            if (!(v = cli_value(argc, argv, &i)) || cli_parse_int(a, v, 0, 65535, &n)) return 2;
            *(wyoming_only ? &cfg.wyoming_port : &cfg.port) = (int)n;
        } else if (cli_is(a, "--wyoming-port") && !wyoming_only) {
            if (!(v = cli_value(argc, argv, &i)) || cli_parse_int(a, v, 0, 65535, &n)) return 2;
            cfg.wyoming_port = (int)n;
        } else if (cli_is(a, "--wyoming-idle-flush")) {
            if (!(v = cli_value(argc, argv, &i)) || cli_parse_int(a, v, 1, 600000, &n)) return 2;
            cfg.wyoming_idle_ms = (int)n;
        } else if (cli_is(a, "--voices-dir")) {
            if (!(cfg.voices_dir = cli_value(argc, argv, &i))) return 2;
        } else if (cli_is(a, "--default-voice") || cli_is(a, "--voice")) {
            if (!(cfg.default_voice = cli_value(argc, argv, &i))) return 2;
        } else if (cli_is(a, "--voice-map")) {
            if (!(cfg.voice_map = cli_value(argc, argv, &i))) return 2;
        } else if (cli_is(a, "--max-concurrent")) {
            if (!(v = cli_value(argc, argv, &i)) || cli_parse_int(a, v, 1, 1024, &n)) return 2;
            cfg.max_concurrent = (int)n;
        } else if (cli_is(a, "--queue")) {
            if (!(v = cli_value(argc, argv, &i)) || cli_parse_int(a, v, 0, 100000, &n)) return 2;
            cfg.queue_len = (int)n;
        } else if (cli_is(a, "--max-text-chars")) {
            if (!(v = cli_value(argc, argv, &i)) || cli_parse_int(a, v, 1, 10000000, &n)) return 2;
            cfg.max_text_chars = (int)n;
        } else if (cli_is(a, "--max-upload-mb")) {
            if (!(v = cli_value(argc, argv, &i)) || cli_parse_int(a, v, 1, 4096, &n)) return 2;
            cfg.max_upload = (size_t)n << 20;
        } else if (cli_is(a, "--max-connections")) {
            if (!(v = cli_value(argc, argv, &i)) || cli_parse_int(a, v, 1, 100000, &n)) return 2;
            cfg.max_connections = (int)n;
        } else if (cli_is(a, "--timeout")) {
            if (!(v = cli_value(argc, argv, &i)) || cli_parse_int(a, v, 1, 86400, &n)) return 2;
            cfg.timeout_s = (int)n;
        } else if (cli_is(a, "--client-buffer")) {
            if (!(v = cli_value(argc, argv, &i)) || cli_parse_float(a, v, 0.2, 3600, &x)) return 2;
            cfg.client_buffer_s = x;
        } else if (!strcmp(a, "--no-voice-urls")) {
            cfg.voice_urls = VOICE_URLS_NONE;
        } else if (cli_is(a, "--joins")) {
            if (!(v = cli_value(argc, argv, &i))) return 2;
            if (!strcmp(v, "first-audio"))
                cfg.joins = PTTS_JOIN_FIRST_AUDIO;
            else if (!strcmp(v, "throughput"))
                cfg.joins = PTTS_JOIN_THROUGHPUT;
            else {
                fprintf(stderr, "pocket-tts serve: --joins is first-audio or throughput\n");
                return 2;
            }
        } else if (cli_is(a, "--voice-urls")) {
            if (!(v = cli_value(argc, argv, &i))) return 2;
            if (!strcmp(v, "none"))
                cfg.voice_urls = VOICE_URLS_NONE;
            else if (!strcmp(v, "public"))
                cfg.voice_urls = VOICE_URLS_PUBLIC;
            else if (!strcmp(v, "any"))
                cfg.voice_urls = VOICE_URLS_ANY;
            else {
                fprintf(stderr, "pocket-tts serve: --voice-urls is public, any or none\n");
                return 2;
            }
        } else if (cli_is(a, "--voice-url-max-mb")) {
            if (!(v = cli_value(argc, argv, &i)) || cli_parse_int(a, v, 1, 4096, &n)) return 2;
            cfg.voice_url_max = (int64_t)n << 20;
        } else if (cli_is(a, "--voice-url-timeout")) {
            if (!(v = cli_value(argc, argv, &i)) || cli_parse_int(a, v, 1, 3600, &n)) return 2;
            cfg.voice_url_timeout_s = (int)n;
        } else if (cli_is(a, "--drain-timeout")) {
            if (!(v = cli_value(argc, argv, &i)) || cli_parse_float(a, v, 0, 86400, &x)) return 2;
            cfg.drain_timeout_s = x;
        } else if (cli_is(a, "--log-level")) {
            static const char *const levels[] = {"error", "warn", "info", "debug"};
            if (!(v = cli_value(argc, argv, &i))) return 2;
            int l = -1;
            for (int k = 0; k < 4; k++)
                if (!strcmp(v, levels[k])) l = k;
            if (l < 0) {
                fprintf(stderr, "pocket-tts serve: --log-level is error, warn, info or debug\n");
                return 2;
            }
            cfg.log_level = l;
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            cfg.quiet = 1;
            cfg.log_level = PTTS_LOG_ERROR;
        } else {
            fprintf(stderr, "pocket-tts serve: unknown option '%s' (see --help)\n", a);
            return 2;
        }
    }
    cfg.quiet = cfg.log_level == PTTS_LOG_ERROR;
    ptts_set_log_callback(log_to_stderr, &cfg.log_level);
    cli_show_progress(cfg.quiet);
    const ptts_language *lang = ptts_language_find(ma.mo.language ? ma.mo.language : "english");
    cfg.language = lang->name;

    static srv s; /* large (metrics arrays); one per process */
    memset(&s, 0, sizeof s);
    s.cfg = cfg;
    s.started = tool_now();
    pthread_mutex_init(&s.mu, NULL);
    pthread_mutex_init(&s.voice_mu, NULL);
    pthread_cond_init(&s.gen_cv, NULL);
    if (!(s.page = srv_page_build())) return 1;

    ptts_error e = {0};
    if (!(s.model = cli_load_model(&ma, cfg.quiet))) {
        free(s.page);
        return 1;
    }
    int rc = 1;
    ptts_model_info info;
    ptts_model_get_info(s.model, &info);
    s.frame_samples = info.frame_samples;
    char sized[320] = "";
    if (cfg.max_concurrent < 1 || cfg.queue_len < 0) {
        size_from_device(&cfg, &ma, &info, sized, sizeof sized);
        s.cfg.max_concurrent = cfg.max_concurrent;
        s.cfg.queue_len = cfg.queue_len;
    }
    if (cfg.voices_dir && srv_voices_load_dir(&s, cfg.voices_dir, &e)) {
        fprintf(stderr, "pocket-tts: %s\n", e.msg);
        goto done;
    }
    char msg[1024];
    if (srv_voicemap_load(&s, cfg.voice_map, msg, sizeof msg)) {
        fprintf(stderr, "pocket-tts: %s\n", msg);
        goto done;
    }
    /* the default voice is resolved now: a wrong name fails at start, not per request */
    const ptts_voice *dv = NULL;
    const char *want = cfg.default_voice ? cfg.default_voice : lang->default_voice;
    if (cfg.default_voice ? srv_voice_default(&s, cfg.default_voice, &want, msg, sizeof msg)
                          : srv_voice_get(&s, want, &dv, msg, sizeof msg, msg, sizeof msg)) {
        if (cfg.default_voice || s.n_voices == 0) {
            fprintf(stderr, "pocket-tts: default voice: %s\n", msg);
            goto done;
        }
        want = s.voices[0].name;
        tool_log(cfg.quiet, PTTS_LOG_WARN,
                 "the preset voice %s is unavailable (%s); the default voice is %s",
                 lang->default_voice, msg, want);
    }
    s.cfg.default_voice = want;
    if (srv_gen_start(&s, &e)) {
        fprintf(stderr, "pocket-tts: %s\n", e.msg);
        goto done;
    }
    /* signals go to sigwait below, never to a worker thread */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    srv_conn_limits(&s); /* the Wyoming listener's connection limit too */
    if (cfg.wyoming_port >= 0 && srv_wyoming_start(&s, msg, sizeof msg)) {
        fprintf(stderr, "pocket-tts: %s\n", msg);
        srv_gen_stop(&s);
        goto done;
    }
    if (!wyoming_only && srv_http_start(&s, msg, sizeof msg)) {
        fprintf(stderr, "pocket-tts: %s\n", msg);
        srv_gen_stop(&s);
        srv_wyoming_stop(&s);
        goto done;
    }
    if (cfg.wyoming_port >= 0)
        fprintf(stderr, "pocket-tts: Wyoming on tcp://%s:%d\n", cfg.host, s.cfg.wyoming_port);
    fprintf(stderr,
            "pocket-tts: serving on %s://%s:%d (%d voice%s, default %s; %d concurrent, queue "
            "%d%s%s%s; %d threads, %s kernels)\n",
            wyoming_only ? "tcp" : "http", cfg.host, wyoming_only ? s.cfg.wyoming_port : s.cfg.port,
            s.n_voices, s.n_voices == 1 ? "" : "s", s.cfg.default_voice, cfg.max_concurrent,
            cfg.queue_len, sized[0] ? " (sized for " : "", sized, sized[0] ? ")" : "", info.threads,
            info.isa);
    fflush(stderr);
    int sig = 0;
    sigwait(&set, &sig);
    if (!cfg.quiet) fprintf(stderr, "pocket-tts: %s, shutting down\n", strsignal(sig));
    if (sig == SIGTERM) drain(&s);
    srv_gen_stop(&s); /* ends every request: their readers return at once */
    srv_wyoming_stop(&s);
    if (!wyoming_only) srv_http_stop(&s);
    rc = 0;
done:
    srv_voicemap_free(&s);
    srv_voices_free(&s);
    ptts_model_free(s.model);
    free(s.page);
    return rc;
}

int cmd_serve(int argc, char **argv) { return serve_main(argc, argv, 0); }

int cmd_wyoming(int argc, char **argv) { return serve_main(argc, argv, 1); }
