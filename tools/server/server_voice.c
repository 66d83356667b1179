/*
 * server_voice.c - the voices of `pocket-tts serve`: every voice-state file (*.safetensors) and
 * audio file of --voices-dir, loaded at start and named after the file; preset names and (when
 * allowed) hf:// or http(s) URLs resolved through the download cache on first use and kept.
 * Names are never paths: a request can name a file only through this table.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server.h"
#include "util.h"

/* Voices resolved from presets and URLs are kept up to this many; beyond, 503-free reuse is
 * not promised and a new URL is refused (bounded memory). */
#define MAX_VOICES 256

int srv_voice_name_ok(const char *name) {
    size_t n = strlen(name);
    if (n == 0 || n > 128 || name[0] == '.') return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (!isalnum(c) && c != '_' && c != '-' && c != '.') return 0;
    }
    return 1;
}

static const char *const audio_exts[] = {".wav", ".flac", ".ogg", ".opus", ".mp3", ".aiff", ".aif"};

static int has_ext(const char *name, const char *ext) {
    size_t n = strlen(name), k = strlen(ext);
    return n > k && !strcasecmp(name + n - k, ext);
}

static int add_voice(srv *s, const char *name, ptts_voice *v, int source) {
    if (s->n_voices == s->cap_voices) {
        int nc = s->cap_voices ? s->cap_voices * 2 : 16;
        srv_voice *nv = realloc(s->voices, (size_t)nc * sizeof *nv);
        if (!nv) return -1;
        s->voices = nv;
        s->cap_voices = nc;
    }
    char *dup = tool_strdup(name);
    if (!dup) return -1;
    s->voices[s->n_voices++] = (srv_voice){dup, v, source};
    return 0;
}

static srv_voice *find_voice(srv *s, const char *name) {
    for (int i = 0; i < s->n_voices; i++)
        if (!strcmp(s->voices[i].name, name)) return &s->voices[i];
    return NULL;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int srv_voices_load_dir(srv *s, const char *dir, ptts_error *e) {
    DIR *d = opendir(dir);
    if (!d) return tool_fail(e, PTTS_E_IO, "cannot open the voices directory %s", dir);
    char **names = NULL;
    int n = 0, cap = 0, rc = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *f = de->d_name;
        if (f[0] == '.') continue;
        int ok = has_ext(f, ".safetensors");
        for (size_t k = 0; !ok && k < sizeof audio_exts / sizeof *audio_exts; k++)
            ok = has_ext(f, audio_exts[k]);
        if (!ok) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **nn = realloc(names, (size_t)cap * sizeof *nn);
            if (!nn) {
                rc = tool_fail(e, PTTS_E_NOMEM, "out of memory");
                break;
            }
            names = nn;
        }
        if (!(names[n] = tool_strdup(f))) {
            rc = tool_fail(e, PTTS_E_NOMEM, "out of memory");
            break;
        }
        n++;
    }
    closedir(d);
    if (n > 1) qsort(names, (size_t)n, sizeof *names, cmp_str);
    for (int i = 0; !rc && i < n; i++) {
        char path[4096], stem[256];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        snprintf(stem, sizeof stem, "%s", names[i]);
        char *dot = strrchr(stem, '.');
        if (dot) *dot = 0;
        if (!srv_voice_name_ok(stem)) {
            tool_log(s->cfg.quiet, PTTS_LOG_WARN,
                     "voices: skipping %s (a voice name is letters, digits, '_', "
                     "'-' and '.')",
                     path);
            continue;
        }
        if (find_voice(s, stem)) {
            tool_log(s->cfg.quiet, PTTS_LOG_WARN, "voices: skipping %s (voice '%s' already loaded)",
                     path, stem);
            continue;
        }
        ptts_voice *v = NULL;
        ptts_error ve = {0};
        int r = ptts_voice_open(&v, s->model, s->cfg.language, path, PTTS_VOICE_CLONE_SECONDS, NULL,
                                &ve);
        if (r) {
            rc = tool_fail(e, r, "voice %s: %s", path, ve.msg);
            break;
        }
        if (add_voice(s, stem, v, SRC_DIR)) {
            ptts_voice_free(v);
            rc = tool_fail(e, PTTS_E_NOMEM, "out of memory");
        }
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

static int is_url(const char *s) {
    return !strncmp(s, "hf://", 5) || !strncmp(s, "http://", 7) || !strncmp(s, "https://", 8);
}

int srv_voice_get(srv *s, const char *name, const ptts_voice **out, char *msg, size_t cap,
                  char *detail, size_t dcap) {
    *out = NULL;
    detail[0] = 0;
    pthread_mutex_lock(&s->voice_mu);
    srv_voice *sv = find_voice(s, name);
    const ptts_voice *found = sv ? sv->v : NULL;
    pthread_mutex_unlock(&s->voice_mu);
    if (found) {
        *out = found;
        return 0;
    }
    int url = is_url(name);
    char buf[512];
    if (url) {
        int mode = s->cfg.voice_urls;
        if (mode == VOICE_URLS_NONE) {
            snprintf(msg, cap, "voice URLs are disabled on this server");
            return 400;
        }
        if (mode == VOICE_URLS_PUBLIC && strncmp(name, "hf://", 5) &&
            strncmp(name, "https://", 8)) {
            snprintf(msg, cap, "this server takes hf:// and https:// voice URLs only");
            return 400;
        }
        if (strlen(name) > 2048) {
            snprintf(msg, cap, "the voice URL is too long");
            return 400;
        }
    } else if (!srv_voice_name_ok(name) ||
               ptts_preset_voice_url(s->cfg.language, name, buf, sizeof buf)) {
        snprintf(msg, cap, "unknown voice '%.128s': use a name from GET /v1/audio/voices%s",
                 srv_voice_name_ok(name) ? name : "(invalid name)",
                 s->cfg.voice_urls == VOICE_URLS_NONE  ? ""
                 : s->cfg.voice_urls == VOICE_URLS_ANY ? ", an hf:// or http(s) URL"
                                                       : ", an hf:// or https:// URL");
        return 400;
    }
    /* downloads and loads happen outside the lock: one slow URL stalls only its own request.
     * A client's URL is fetched under the server's limits; a preset's URL is the operator's
     * (its endpoint, HF_ENDPOINT, too). The client learns what was wrong with its request, the
     * log (detail) the rest: paths and library messages stay on the server. */
    char *path = NULL;
    ptts_error e = {0};
    ptts_fetch_options fo = {.public_only = s->cfg.voice_urls == VOICE_URLS_PUBLIC,
                             .max_bytes = s->cfg.voice_url_max,
                             .timeout_s = s->cfg.voice_url_timeout_s};
    int rc = url ? ptts_fetch_url(&path, name, &fo, &e)
                 : ptts_voice_resolve(&path, s->cfg.language, name, &e);
    if (rc) {
        int status = 400;
        if (rc == PTTS_E_INVALID && url)
            snprintf(msg, cap, "voice URL refused: malformed, or its host is not a public address");
        else if (rc == PTTS_E_NOMEM && url)
            snprintf(msg, cap, "the voice file is over this server's limit of %lld bytes",
                     (long long)s->cfg.voice_url_max);
        else if (rc == PTTS_E_NOT_FOUND)
            snprintf(msg, cap, "voice '%.256s' was not found", name);
        else {
            snprintf(msg, cap, "the voice could not be downloaded");
            status = 502;
        }
        snprintf(detail, dcap, "voice %.256s: %s", name, e.msg); /* last: detail may be msg */
        return status;
    }
    ptts_voice *v = NULL;
    rc = ptts_voice_open(&v, s->model, s->cfg.language, path, 0, NULL, &e);
    free(path);
    if (rc) {
        snprintf(msg, cap, "voice '%.256s' is not a voice state or audio file this server reads",
                 name);
        snprintf(detail, dcap, "voice %.256s: %s", name, e.msg);
        return 400;
    }
    pthread_mutex_lock(&s->voice_mu);
    int status = 0;
    if ((sv = find_voice(s, name))) { /* another request loaded it meanwhile */
        ptts_voice_free(v);
        *out = sv->v;
    } else if (s->n_voices >= MAX_VOICES || add_voice(s, name, v, url ? SRC_URL : SRC_PRESET)) {
        ptts_voice_free(v);
        snprintf(msg, cap, "the server holds too many voices to load '%.256s'", name);
        status = 503;
    } else {
        *out = v;
    }
    pthread_mutex_unlock(&s->voice_mu);
    return status;
}

int srv_voice_default(srv *s, const char *arg, const char **name, char *msg, size_t cap) {
    char buf[512];
    const ptts_voice *found = NULL;
    int preset = !is_url(arg) && srv_voice_name_ok(arg) &&
                 !ptts_preset_voice_url(s->cfg.language, arg, buf, sizeof buf);
    if (find_voice(s, arg) || preset) { /* a voices-dir name or a preset: as a request's */
        int st = srv_voice_get(s, arg, &found, msg, cap, msg, cap);
        if (!st) *name = find_voice(s, arg)->name;
        return st;
    }
    ptts_voice *v = NULL;
    ptts_error e = {0};
    if (ptts_voice_open(&v, s->model, s->cfg.language, arg, 0, NULL, &e)) {
        snprintf(msg, cap, "voice '%.256s' is unusable: %s", arg, e.msg);
        return 400;
    }
    if (add_voice(s, arg, v, is_url(arg) ? SRC_URL : SRC_DIR)) {
        ptts_voice_free(v);
        snprintf(msg, cap, "out of memory");
        return 503;
    }
    *name = s->voices[s->n_voices - 1].name;
    return 0;
}

void srv_voices_free(srv *s) {
    for (int i = 0; i < s->n_voices; i++) {
        free(s->voices[i].name);
        ptts_voice_free(s->voices[i].v);
    }
    free(s->voices);
    s->voices = NULL;
    s->n_voices = s->cap_voices = 0;
}

int srv_voice_listed(const srv *s, const char *name) {
    for (int k = 0; k < s->n_voices; k++)
        if (!strcmp(s->voices[k].name, name)) return 1;
    return 0;
}
