/*
 * sd_pocket_tts.c - sd_pocket-tts, a speech-dispatcher output module for Pocket TTS.
 *
 * speech-dispatcher starts it as `sd_pocket-tts CONFIG_FILE` and speaks its module protocol on
 * stdin/stdout (LF-terminated lines; doc "Communication Protocol for Output Modules"):
 * - INIT: 299-info, 299 OK LOADED SUCCESSFULLY (the model is loaded here).
 * - AUDIO, a name=value block, ".": 207, then 203 OK AUDIO INITIALIZED for
 *   audio_output_method=server (the audio goes to the daemon, which plays it through its
 *   AudioOutputMethod); any other method is declined.
 * - SET, a name=value block, ".": 203 OK RECEIVING SETTINGS, then 203 OK SETTINGS RECEIVED.
 * - SPEAK, CHAR, KEY, SOUND_ICON: 202 OK RECEIVING MESSAGE, the text up to ".", 200 OK SPEAKING;
 *   then the events 701 BEGIN, 705 AUDIO..., 700 INDEX MARK..., and 702 END, 703 STOP or
 *   704 PAUSE.
 * - STOP, PAUSE: no reply. LIST VOICES: 200-NAME\tLANGUAGE\tVARIANT lines. LOGLEVEL, DEBUG,
 *   QUIT.
 *
 * Threads: the main thread reads commands; one worker thread (all signals blocked, as the
 * protocol asks) generates a message frame by frame and checks between frames whether STOP or
 * PAUSE came. STOP ends the message within a frame (80 ms of audio). PAUSE ends it at the next
 * `__spd_` index mark, after the audio before it, as the protocol asks: the daemon's queue
 * pauses at a mark it gets after the pause, and resumes the message from the last mark. Every
 * <mark/> of the SSML is reported once the audio before it is sent.
 */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "sd_module.h"

/* A longer line or message is refused (301) after being read to its end. */
#define SD_TEXT_MAX (4u << 20)

enum { MSG_TEXT, MSG_CHAR, MSG_KEY, MSG_ICON };
enum { RUN, STOP_REQ, PAUSE_REQ };

typedef struct job {
    char *text;
    int type;                /* MSG_* */
    int rate, pitch, volume; /* speech-dispatcher's -100..100 */
    sd_voice *voice;
} job;

static sd_config g_cfg;
static ptts_model *g_model;
static ptts_stream *g_stream;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_busy;    /* a message is being spoken (from 200 OK SPEAKING to its last event) */
static int g_has_job; /* g_job waits for the worker */
static int g_quit;
static job g_job;
static atomic_int g_stop; /* RUN, STOP_REQ or PAUSE_REQ for the message being spoken */

/* The settings of the next messages (main thread only). */
static int s_rate, s_pitch, s_volume = 100;
static char *s_language, *s_voice_type, *s_synthesis_voice;

/* The server is gone: nothing can be reported any more. _exit, not exit: the main thread may
 * hold stdin's lock. */
static void send_or_die(int rc) {
    if (rc) _exit(2);
}

/* ---- messages ------------------------------------------------------------------------------ */
typedef struct segment {
    const char *text; /* not NUL-terminated */
    size_t len;
    char *mark; /* the <mark name> that follows it, or NULL */
} segment;

/* Bytes of text outside <...> tags that are not blank: whether a segment has words. */
static int has_words(const char *s, size_t n) {
    int in_tag = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '<')
            in_tag = 1;
        else if (c == '>' && in_tag)
            in_tag = 0;
        else if (!in_tag && c != ' ' && c != '\t' && c != '\n' && c != '\r')
            return 1;
    }
    return 0;
}

/* The value of name="..." in the tag s[0, n), malloc'd, or NULL. */
static char *tag_name_attr(const char *s, size_t n) {
    for (size_t i = 1; i + 5 < n; i++) {
        if (strncasecmp(s + i, "name", 4) || (s[i - 1] != ' ' && s[i - 1] != '\t')) continue;
        size_t j = i + 4;
        while (j < n && (s[j] == ' ' || s[j] == '\t'))
            j++;
        if (j >= n || s[j] != '=') continue;
        j++;
        while (j < n && (s[j] == ' ' || s[j] == '\t'))
            j++;
        if (j >= n || (s[j] != '"' && s[j] != '\'')) return NULL;
        char q = s[j++];
        size_t b = j;
        while (j < n && s[j] != q)
            j++;
        if (j >= n) return NULL;
        char *v = malloc(j - b + 1);
        if (v) {
            memcpy(v, s + b, j - b);
            v[j - b] = 0;
        }
        return v;
    }
    return NULL;
}

/* Split SSML at its <mark/> tags: segment k is the text before mark k (the last one has no
 * mark). The pieces keep their other tags; the library's parser accepts a </speak> without its
 * <speak>. Returns the count, or -1 when out of memory. */
static int split_marks(const char *t, segment **out) {
    int n = 0, cap = 8;
    segment *seg = malloc((size_t)cap * sizeof *seg);
    if (!seg) return -1;
    const char *start = t, *p = t;
    for (;;) {
        const char *m = strchr(p, '<');
        int last = !m;
        size_t tag_n = 0;
        if (m) {
            const char *gt = strchr(m, '>');
            if (!gt)
                last = 1;
            else
                tag_n = (size_t)(gt - m) + 1;
            if (!last && !(strncasecmp(m + 1, "mark", 4) == 0 &&
                           (m[5] == ' ' || m[5] == '\t' || m[5] == '/' || m[5] == '>'))) {
                p = m + 1;
                continue;
            }
        }
        if (n == cap) {
            segment *ns = realloc(seg, (size_t)(cap *= 2) * sizeof *seg);
            if (!ns) goto nomem;
            seg = ns;
        }
        if (last) {
            seg[n++] = (segment){start, strlen(start), NULL};
            break;
        }
        seg[n] = (segment){start, (size_t)(m - start), tag_name_attr(m, tag_n)};
        n++;
        start = p = m + tag_n;
    }
    *out = seg;
    return n;
nomem:
    for (int i = 0; i < n; i++)
        free(seg[i].mark);
    free(seg);
    return -1;
}

/* SSML when it opens with <speak> or an XML declaration (after blanks). */
static int is_ssml(const char *t) {
    while (*t == ' ' || *t == '\t' || *t == '\n' || *t == '\r')
        t++;
    return !strncasecmp(t, "<speak", 6) || !strncmp(t, "<?xml", 5);
}

/* Generate one piece of text into the audio stage. Returns 0 (done, stopped or skipped), -1
 * when the message cannot go on. */
static int speak_piece(const ptts_voice *v, const char *text, size_t len, int markup,
                       sd_audio *audio) {
    if (!has_words(text, len)) return 0;
    char *t = malloc(len + 1);
    if (!t) return -1;
    memcpy(t, text, len);
    t[len] = 0;
    ptts_gen_options o = ptts_gen_options_default();
    o.markup = markup;
    if (g_cfg.temperature_set) {
        o.temperature = g_cfg.temperature;
        o.temperature_set = 1;
    }
    ptts_error e = {0};
    int rc = ptts_stream_start(g_stream, v, t, &o, &e);
    free(t);
    if (rc == PTTS_E_TEXT) { /* invalid markup, nothing to say: the rest is still spoken */
        sd_log(PTTS_LOG_WARN, "text skipped: %s", e.msg);
        return 0;
    }
    if (rc) {
        sd_log(PTTS_LOG_ERROR, "cannot start: %s", e.msg);
        return -1;
    }
    static float pcm[PTTS_FRAME_SAMPLES];
    for (;;) {
        if (atomic_load(&g_stop) == STOP_REQ) { /* PAUSE goes on to the next mark */
            ptts_stream_cancel(g_stream);
            return 0;
        }
        int n = ptts_stream_next(g_stream, pcm, &e);
        if (n == 0) return 0;
        if (n < 0) {
            sd_log(PTTS_LOG_ERROR, "generation failed: %s", e.msg);
            ptts_stream_cancel(g_stream);
            return -1;
        }
        if (sd_audio_write(audio, pcm, n)) send_or_die(-1);
    }
}

static void run_job(job *j) {
    send_or_die(sd_send("701 BEGIN\n"));
    int failed = 0, paused = 0;
    if (j->type == MSG_ICON) {
        /* No icons of its own: the server plays the sound icon it has under that name. */
        send_or_die(sd_send("706-%s\n706 ICON\n", j->text));
    } else {
        sd_voice *sv = j->voice;
        ptts_error e = {0};
        if (!sv->v &&
            ptts_voice_open(&sv->v, g_model, g_cfg.language, sv->path ? sv->path : sv->name,
                            PTTS_VOICE_CLONE_SECONDS, NULL, &e)) {
            sd_log(PTTS_LOG_ERROR, "voice '%s': %s", sv->name, e.msg);
            sv->v = NULL;
            failed = 1;
        }
        /* speech-dispatcher's -100..100 as scales: rate doubles or halves the speed at the ends
         * (the piper module's length_scale 2^(rate/-100), inverted), pitch moves half an octave
         * up or down, volume 100 (the server's DefaultVolume) is the model's own level and -100
         * silence. */
        sd_audio *audio = NULL;
        if (!failed && sd_audio_open(&audio, exp2(j->rate / 100.0), exp2(j->pitch / 200.0),
                                     (float)(j->volume + 100) / 200.0f)) {
            sd_log(PTTS_LOG_ERROR, "out of memory");
            failed = 1;
        }
        if (!failed && j->type == MSG_TEXT) {
            int markup = is_ssml(j->text) ? PTTS_MARKUP_SSML | PTTS_MARKUP_SSML_DOCUMENT : 0;
            segment *seg = NULL;
            int n = split_marks(j->text, &seg);
            if (n < 0) failed = 1;
            for (int i = 0; i < n; i++) {
                if (!failed && !paused && atomic_load(&g_stop) != STOP_REQ)
                    failed = speak_piece(sv->v, seg[i].text, seg[i].len, markup, audio) != 0;
                int stop = atomic_load(&g_stop);
                if (!failed && !paused && stop != STOP_REQ && seg[i].mark) {
                    if (stop == PAUSE_REQ && !strncmp(seg[i].mark, "__spd_", 6)) {
                        paused = 1; /* the audio up to the mark, then the mark, then 704 */
                        if (sd_audio_finish(audio)) send_or_die(-1);
                    }
                    send_or_die(sd_send("700-%s\n700 INDEX MARK\n", seg[i].mark));
                }
                free(seg[i].mark);
            }
            free(seg);
        } else if (!failed) {
            /* CHAR and KEY: one line of plain text; a key name's '_' are spaces */
            for (char *p = j->text; j->type == MSG_KEY && *p; p++)
                if (*p == '_') *p = ' ';
            failed = speak_piece(sv->v, j->text, strlen(j->text), PTTS_MARKUP_OFF, audio) != 0;
        }
        if (!failed && !paused && atomic_load(&g_stop) != STOP_REQ && sd_audio_finish(audio))
            send_or_die(-1);
        sd_audio_free(audio);
    }
    int stop = atomic_load(&g_stop);
    pthread_mutex_lock(&g_mu);
    g_busy = 0; /* before the event: the server sends the next SPEAK once it has read it */
    /* A PAUSE with no __spd_ mark after it lets the message end: 702 */
    send_or_die(sd_send(paused                       ? "704 PAUSE\n"
                        : stop == STOP_REQ || failed ? "703 STOP\n"
                                                     : "702 END\n"));
    pthread_mutex_unlock(&g_mu);
}

static void *worker(void *arg) {
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&g_mu);
        while (!g_has_job && !g_quit)
            pthread_cond_wait(&g_cv, &g_mu);
        if (g_quit) {
            pthread_mutex_unlock(&g_mu);
            return NULL;
        }
        job j = g_job;
        g_job.text = NULL;
        g_has_job = 0;
        pthread_mutex_unlock(&g_mu);
        run_job(&j);
        free(j.text);
    }
}

/* ---- protocol ------------------------------------------------------------------------------ */
/* One line of stdin without its '\n' (malloc'd; *too_long set, and the rest of a line beyond
 * SD_TEXT_MAX discarded, when it is longer). NULL at the end of input. */
static char *read_line(size_t *len, int *too_long) {
    size_t n = 0, cap = 256;
    char *b = malloc(cap);
    if (!b) return NULL;
    *too_long = 0;
    int c;
    while ((c = getchar()) != EOF && c != '\n') {
        if (n >= SD_TEXT_MAX) {
            *too_long = 1;
            continue;
        }
        if (n + 1 >= cap) {
            char *nb = realloc(b, cap *= 2);
            if (!nb) {
                free(b);
                return NULL;
            }
            b = nb;
        }
        b[n++] = (char)c;
    }
    if (c == EOF && n == 0) {
        free(b);
        return NULL;
    }
    b[n] = 0;
    *len = n;
    return b;
}

/* Valid UTF-8, no overlongs, surrogates or code points above U+10FFFF. */
static int utf8_valid(const unsigned char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t k = c < 0x80             ? 1
                   : (c & 0xe0) == 0xc0 ? 2
                   : (c & 0xf0) == 0xe0 ? 3
                   : (c & 0xf8) == 0xf0 ? 4
                                        : 0;
        if (!k || i + k > n || (k == 2 && c < 0xc2) || (k == 4 && c > 0xf4)) return 0;
        for (size_t j = 1; j < k; j++)
            if ((s[i + j] & 0xc0) != 0x80) return 0;
        if (k == 3 && c == 0xe0 && s[i + 1] < 0xa0) return 0;
        if (k == 3 && c == 0xed && s[i + 1] >= 0xa0) return 0;
        if (k == 4 && c == 0xf0 && s[i + 1] < 0x90) return 0;
        if (k == 4 && c == 0xf4 && s[i + 1] >= 0x90) return 0;
        i += k;
    }
    return 1;
}

/* SPEAK and the like: the text up to a line holding a lone ".", a leading "." of a line
 * removed (the server doubles it). Returns -1 at the end of input. */
static int cmd_speak(int type) {
    send_or_die(sd_send("202 OK RECEIVING MESSAGE\n"));
    size_t n = 0, cap = 256;
    char *text = malloc(cap);
    int lines = 0, too_long = 0, nomem = !text;
    for (;;) {
        size_t len;
        int tl;
        char *line = read_line(&len, &tl);
        if (!line) {
            free(text);
            return -1;
        }
        if (!tl && !strcmp(line, ".")) {
            free(line);
            break;
        }
        const char *p = line[0] == '.' ? line + 1 : line;
        len -= (size_t)(p - line);
        too_long |= tl || n + len + 1 > SD_TEXT_MAX;
        if (!too_long && !nomem) {
            while (n + len + 2 > cap)
                cap *= 2;
            char *nt = realloc(text, cap);
            if (!nt)
                nomem = 1;
            else {
                text = nt;
                if (lines) text[n++] = '\n';
                memcpy(text + n, p, len);
                n += len;
            }
        }
        lines++;
        free(line);
    }
    const char *why = nomem ? "out of memory" : too_long ? "message too long" : NULL;
    if (!why && (n == 0 || !text)) why = "empty message";
    if (!why && !utf8_valid((const unsigned char *)text, n)) why = "message is not valid UTF-8";
    if (!why && type != MSG_TEXT && lines > 1) {
        free(text);
        send_or_die(sd_send("305 DATA MORE THAN ONE LINE\n"));
        return 0;
    }
    if (why) {
        sd_log(PTTS_LOG_WARN, "cannot speak: %s", why);
        free(text);
        send_or_die(sd_send("301 ERROR CANT SPEAK\n"));
        return 0;
    }
    text[n] = 0;
    pthread_mutex_lock(&g_mu);
    if (g_busy) {
        pthread_mutex_unlock(&g_mu);
        sd_log(PTTS_LOG_WARN, "SPEAK while speaking");
        free(text);
        send_or_die(sd_send("301 ERROR CANT SPEAK\n"));
        return 0;
    }
    g_job = (job){text,     type,
                  s_rate,   s_pitch,
                  s_volume, sd_voice_pick(&g_cfg, s_synthesis_voice, s_voice_type, s_language)};
    sd_log(PTTS_LOG_DEBUG, "speak with %s: rate %d pitch %d volume %d", g_job.voice->name, s_rate,
           s_pitch, s_volume);
    g_busy = 1;
    g_has_job = 1;
    atomic_store(&g_stop, RUN);
    send_or_die(sd_send("200 OK SPEAKING\n")); /* before the worker can send an event */
    pthread_cond_signal(&g_cv);
    pthread_mutex_unlock(&g_mu);
    return 0;
}

static void cmd_stop(int how) {
    pthread_mutex_lock(&g_mu);
    if (g_busy) atomic_store(&g_stop, how);
    pthread_mutex_unlock(&g_mu);
}

static int set_number(const char *v, int *out) {
    char *end;
    long x = strtol(v, &end, 10);
    if (end == v || *end || x < -100 || x > 100) return -1;
    *out = (int)x;
    return 0;
}

static int set_string(const char *v, char **out) {
    char *d = NULL;
    if (strcmp(v, "NULL") && !(d = strdup(v))) return -1;
    free(*out);
    *out = d;
    return 0;
}

/* One name=value of SET. rate, pitch, volume, voice (speech-dispatcher's voice type),
 * synthesis_voice and language are used; pitch_range, punctuation, spelling and capital-letter
 * settings are accepted and have no effect (the model has no such controls), and so are names
 * this module does not know, which later servers may send. */
static int set_param(const char *name, const char *v) {
    if (!strcmp(name, "rate")) return set_number(v, &s_rate);
    if (!strcmp(name, "pitch")) return set_number(v, &s_pitch);
    if (!strcmp(name, "volume")) return set_number(v, &s_volume);
    if (!strcmp(name, "voice")) return set_string(v, &s_voice_type);
    if (!strcmp(name, "synthesis_voice")) return set_string(v, &s_synthesis_voice);
    if (!strcmp(name, "language")) return set_string(v, &s_language);
    if (!strcmp(name, "pitch_range")) {
        int ignored;
        return set_number(v, &ignored);
    }
    sd_log(PTTS_LOG_DEBUG, "SET %s=%s: no effect", name, v);
    return 0;
}

/* A name=value block up to ".": 0, or -1 at the end of input. *bad: 302 (a line without '=')
 * or 303 (a value refused by fn). */
static int read_block(int (*fn)(const char *, const char *), int *bad) {
    *bad = 0;
    for (;;) {
        size_t len;
        int tl;
        char *line = read_line(&len, &tl);
        if (!line) return -1;
        if (!strcmp(line, ".")) {
            free(line);
            return 0;
        }
        char *eq = strchr(line, '=');
        if (tl || !eq || eq == line) {
            if (!*bad) *bad = 302;
        } else {
            *eq = 0;
            if (fn(line, eq + 1) && !*bad) *bad = 303;
        }
        free(line);
    }
}

static const char *bad_reply(int bad) {
    return bad == 302 ? "302 ERROR BAD SYNTAX\n" : "303 ERROR INVALID PARAMETER OR VALUE\n";
}

static int g_server_audio; /* AUDIO offered audio_output_method=server */
static int audio_param(const char *name, const char *v) {
    if (!strcmp(name, "audio_output_method")) g_server_audio = !strcmp(v, "server");
    return 0;
}

static int g_spd_level = -1;
static int loglevel_param(const char *name, const char *v) {
    if (strcmp(name, "log_level")) return 0;
    return set_number(v, &g_spd_level) || g_spd_level < 0 ? -1 : 0;
}

static void cmd_list_voices(void) {
    size_t cap = 64, n = 0;
    char *out = malloc(cap);
    for (int i = 0; out && i < g_cfg.n_voices; i++) {
        size_t need = strlen(g_cfg.voices[i].name) + strlen(g_cfg.lang_code) + 16;
        while (n + need + 32 > cap)
            cap *= 2;
        char *no = realloc(out, cap);
        if (!no) {
            free(out);
            out = NULL;
            break;
        }
        out = no;
        n += (size_t)snprintf(out + n, cap - n, "200-%s\t%s\tnone\n", g_cfg.voices[i].name,
                              g_cfg.lang_code);
    }
    if (!out) {
        send_or_die(sd_send("304 CANT LIST VOICES\n"));
        return;
    }
    snprintf(out + n, cap - n, "200 OK VOICE LIST SENT\n");
    send_or_die(sd_send("%s", out));
    free(out);
}

static void cmd_debug(char *line) {
    char *save = NULL;
    strtok_r(line, " ", &save);
    const char *on = strtok_r(NULL, " ", &save), *file = strtok_r(NULL, " ", &save);
    if (on && !strcmp(on, "OFF")) {
        sd_log_debug(NULL);
        send_or_die(sd_send("200 OK DEBUGGING OFF\n"));
    } else if (on && !strcmp(on, "ON") && file) {
        send_or_die(sd_send(sd_log_debug(file) ? "303 CANT OPEN CUSTOM DEBUG FILE\n"
                                               : "200 OK DEBUGGING ON\n"));
    } else {
        send_or_die(sd_send("302 ERROR BAD SYNTAX\n"));
    }
}

/* INIT: the config read at start, the model and the default voice. 0 or -1 with err. */
static int module_init(const char *config, char *err, size_t cap) {
    if (sd_config_read(&g_cfg, config, err, cap) || sd_voices_scan(&g_cfg, err, cap)) return -1;
    ptts_model_options mo = ptts_model_options_default();
    mo.language = g_cfg.language;
    mo.config_path = g_cfg.config_path;
    mo.weights_path = g_cfg.weights_path;
    mo.tokenizer_path = g_cfg.tokenizer_path;
    mo.precision = g_cfg.precision;
    mo.threads = g_cfg.threads;
    ptts_error e = {0};
    if (ptts_model_load(&g_model, &mo, &e) || ptts_stream_create(&g_stream, g_model, &e))
        return snprintf(err, cap, "cannot load the model: %s", e.msg), -1;
    sd_voice *dv = sd_voice_find(&g_cfg, g_cfg.default_voice);
    if (ptts_voice_open(&dv->v, g_model, g_cfg.language, dv->path ? dv->path : dv->name,
                        PTTS_VOICE_CLONE_SECONDS, NULL, &e)) {
        dv->v = NULL;
        return snprintf(err, cap, "default voice '%s': %s", dv->name, e.msg), -1;
    }
    return 0;
}

static void log_from_library(void *user, int level, const char *msg) {
    (void)user;
    sd_log(level, "%s", msg);
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN); /* a write to a closed stdout fails instead */
    ptts_set_log_callback(log_from_library, NULL);
    size_t len;
    int tl;
    char *line = read_line(&len, &tl);
    if (!line || strcmp(line, "INIT")) {
        free(line);
        sd_log(PTTS_LOG_ERROR, "the first command must be INIT");
        return 3;
    }
    free(line);
    char err[1024];
    if (module_init(argc > 1 ? argv[1] : NULL, err, sizeof err)) {
        sd_log(PTTS_LOG_ERROR, "%s", err);
        sd_send("399-%s\n399 ERR CANT INIT MODULE\n", err);
        return 1;
    }
    /* The worker blocks every signal: they go to the main thread. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_t th;
    int th_rc = pthread_create(&th, NULL, worker, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (th_rc) {
        sd_send("399-cannot start a thread\n399 ERR CANT INIT MODULE\n");
        return 1;
    }
    ptts_model_info info;
    ptts_model_get_info(g_model, &info);
    send_or_die(sd_send("299-pocket-tts %s: %s, %d voices, %d threads, %s kernels\n"
                        "299 OK LOADED SUCCESSFULLY\n",
                        ptts_version(), g_cfg.language, g_cfg.n_voices, info.threads, info.isa));
    int rc = 0, quit = 0;
    while ((line = read_line(&len, &tl))) {
        int bad;
        if (!strcmp(line, "SPEAK"))
            rc = cmd_speak(MSG_TEXT);
        else if (!strcmp(line, "CHAR"))
            rc = cmd_speak(MSG_CHAR);
        else if (!strcmp(line, "KEY"))
            rc = cmd_speak(MSG_KEY);
        else if (!strcmp(line, "SOUND_ICON"))
            rc = cmd_speak(MSG_ICON);
        else if (!strcmp(line, "STOP"))
            cmd_stop(STOP_REQ);
        else if (!strcmp(line, "PAUSE"))
            cmd_stop(PAUSE_REQ);
        else if (!strcmp(line, "LIST VOICES"))
            cmd_list_voices();
        else if (!strcmp(line, "SET")) {
            send_or_die(sd_send("203 OK RECEIVING SETTINGS\n"));
            if (!(rc = read_block(set_param, &bad)))
                send_or_die(sd_send("%s", bad ? bad_reply(bad) : "203 OK SETTINGS RECEIVED\n"));
        } else if (!strcmp(line, "AUDIO")) {
            send_or_die(sd_send("207 OK RECEIVING AUDIO SETTINGS\n"));
            g_server_audio = 0;
            if (!(rc = read_block(audio_param, &bad)))
                send_or_die(sd_send(g_server_audio
                                        ? "203 OK AUDIO INITIALIZED\n"
                                        : "300-sd_pocket-tts sends its audio to the server "
                                          "(audio_output_method=server, speech-dispatcher 0.8 or "
                                          "later)\n300 MODULE ERROR\n"));
        } else if (!strcmp(line, "LOGLEVEL")) {
            send_or_die(sd_send("207 OK RECEIVING LOGLEVEL SETTINGS\n"));
            if (!(rc = read_block(loglevel_param, &bad))) {
                if (!bad && g_spd_level >= 0) sd_log_set_level(g_spd_level);
                send_or_die(sd_send("%s", bad ? bad_reply(bad) : "203 OK LOGLEVEL SET\n"));
            }
        } else if (!strncmp(line, "DEBUG", 5) && (line[5] == ' ' || !line[5]))
            cmd_debug(line);
        else if (!strcmp(line, "QUIT")) {
            free(line);
            quit = 1;
            break;
        } else
            send_or_die(sd_send("300 ERR UNKNOWN COMMAND\n"));
        free(line);
        line = NULL;
        if (rc) break;
    }
    /* QUIT or the end of input: stop the message, end the worker, free everything. */
    cmd_stop(STOP_REQ);
    pthread_mutex_lock(&g_mu);
    g_quit = 1;
    pthread_cond_signal(&g_cv);
    pthread_mutex_unlock(&g_mu);
    pthread_join(th, NULL);
    free(g_job.text);
    ptts_stream_free(g_stream);
    sd_config_free(&g_cfg);
    ptts_model_free(g_model);
    free(s_language);
    free(s_voice_type);
    free(s_synthesis_voice);
    sd_log_debug(NULL);
    if (quit) sd_send("210 OK QUIT\n");
    return 0;
}
