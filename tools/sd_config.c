/*
 * sd_config.c - the config file of sd_pocket-tts (speech-dispatcher's dotconf syntax: one
 * `Directive "value" ...` a line, # comments), its voices, and its log.
 */
#include <ctype.h>
#include <dirent.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sd_module.h"

/* ---- log ----------------------------------------------------------------------------------- */
/* The worker, the library's threads and the main thread (DEBUG ON/OFF) all log. */
static pthread_mutex_t g_log_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_level = PTTS_LOG_WARN;
static FILE *g_debug;

void sd_log(int level, const char *fmt, ...) {
    static const char *const names[] = {"error", "warning", "info", "debug"};
    const char *name = names[level < 0 ? 0 : level > 3 ? 3 : level];
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&g_log_mu);
    if (level <= g_level) fprintf(stderr, "sd_pocket-tts: %s: %s\n", name, line);
    if (g_debug) {
        fprintf(g_debug, "sd_pocket-tts: %s: %s\n", name, line);
        fflush(g_debug);
    }
    pthread_mutex_unlock(&g_log_mu);
}

void sd_log_set_level(int spd_level) {
    /* speech-dispatcher: 0 nothing ... 5 everything; 1-2 errors and warnings */
    pthread_mutex_lock(&g_log_mu);
    g_level = spd_level <= 0   ? -1
              : spd_level <= 2 ? PTTS_LOG_WARN
              : spd_level <= 4 ? PTTS_LOG_INFO
                               : PTTS_LOG_DEBUG;
    pthread_mutex_unlock(&g_log_mu);
}

int sd_log_debug(const char *file) {
    pthread_mutex_lock(&g_log_mu);
    if (g_debug) fclose(g_debug);
    g_debug = file ? fopen(file, "a") : NULL;
    int rc = file && !g_debug ? -1 : 0;
    pthread_mutex_unlock(&g_log_mu);
    return rc;
}

/* ---- config file --------------------------------------------------------------------------- */
static char *dup_str(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static int set_str(char **dst, const char *v) {
    char *d = dup_str(v);
    if (!d) return -1;
    free(*dst);
    *dst = d;
    return 0;
}

/* Split a line into words: bare words or "quoted strings" (\" and \\ inside). Writes at most
 * max words into w (pointers into line, which is modified); returns the count or -1 for an
 * unclosed quote. */
static int split_words(char *line, char **w, int max) {
    int n = 0;
    char *p = line;
    for (;;) {
        while (*p && isspace((unsigned char)*p))
            p++;
        if (!*p || *p == '#') return n;
        if (n == max) return max + 1;
        if (*p == '"') {
            char *o = ++p;
            w[n++] = o;
            while (*p && *p != '"') {
                if (*p == '\\' && (p[1] == '"' || p[1] == '\\')) p++;
                *o++ = *p++;
            }
            if (*p != '"') return -1;
            p++;
            *o = 0;
        } else {
            w[n++] = p;
            while (*p && !isspace((unsigned char)*p))
                p++;
            if (*p) *p++ = 0;
        }
    }
}

static int parse_int(const char *s, int lo, int hi, int *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

/* "en" for english..., "fr" for french... : the speech-dispatcher language of a model. */
static const char *iso_code(const char *language) {
    static const char *const map[][2] = {{"english", "en"}, {"french", "fr"},     {"german", "de"},
                                         {"italian", "it"}, {"portuguese", "pt"}, {"spanish", "es"},
                                         {"dutch", "nl"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strncmp(language, map[i][0], strlen(map[i][0]))) return map[i][1];
    return "none";
}

static int directive(sd_config *c, char **w, int n, char *err, size_t cap) {
    const char *d = w[0];
    if (!strcasecmp(d, "AddVoice")) {
        if (n != 4) return snprintf(err, cap, "AddVoice takes \"LANGUAGE\" \"TYPE\" \"VOICE\""), -1;
        sd_type_map *t = realloc(c->types, (size_t)(c->n_types + 1) * sizeof *t);
        if (!t) return snprintf(err, cap, "out of memory"), -1;
        c->types = t;
        t += c->n_types;
        *t = (sd_type_map){dup_str(w[1]), dup_str(w[2]), dup_str(w[3])};
        c->n_types++;
        if (!t->lang || !t->type || !t->voice) return snprintf(err, cap, "out of memory"), -1;
        return 0;
    }
    if (n != 2) return snprintf(err, cap, "%s takes one value", d), -1;
    const char *v = w[1];
    char **str = !strcasecmp(d, "PocketTTSLanguage")       ? &c->language
                 : !strcasecmp(d, "PocketTTSLanguageCode") ? &c->lang_code
                 : !strcasecmp(d, "PocketTTSConfig")       ? &c->config_path
                 : !strcasecmp(d, "PocketTTSWeights")      ? &c->weights_path
                 : !strcasecmp(d, "PocketTTSTokenizer")    ? &c->tokenizer_path
                 : !strcasecmp(d, "PocketTTSVoicesDir")    ? &c->voices_dir
                 : !strcasecmp(d, "PocketTTSDefaultVoice") ? &c->default_voice
                                                           : NULL;
    if (str) {
        if (!strcasecmp(d, "PocketTTSLanguage") && !ptts_language_find(v))
            return snprintf(err, cap, "unknown language '%s'", v), -1;
        return set_str(str, v) ? (snprintf(err, cap, "out of memory"), -1) : 0;
    }
    if (!strcasecmp(d, "PocketTTSThreads")) {
        if (parse_int(v, 0, 1024, &c->threads))
            return snprintf(err, cap, "PocketTTSThreads must be 0 to 1024, not '%s'", v), -1;
        return 0;
    }
    if (!strcasecmp(d, "PocketTTSPrecision")) {
        c->precision = !strcasecmp(v, "f32")    ? PTTS_PRECISION_F32
                       : !strcasecmp(v, "bf16") ? PTTS_PRECISION_BF16
                       : !strcasecmp(v, "int8") ? PTTS_PRECISION_INT8
                                                : -1;
        if (c->precision < 0)
            return snprintf(err, cap, "PocketTTSPrecision is f32, bf16 or int8, not '%s'", v), -1;
        return 0;
    }
    if (!strcasecmp(d, "PocketTTSTemperature")) {
        char *end;
        double t = strtod(v, &end);
        if (end == v || *end || !(t >= 0 && t <= 10))
            return snprintf(err, cap, "PocketTTSTemperature must be 0 to 10, not '%s'", v), -1;
        c->temperature = (float)t;
        c->temperature_set = 1;
        return 0;
    }
    return snprintf(err, cap, "unknown directive '%s'", d), -1;
}

int sd_config_read(sd_config *c, const char *path, char *err, size_t cap) {
    memset(c, 0, sizeof *c);
    if (set_str(&c->language, "english")) return snprintf(err, cap, "out of memory"), -1;
    if (!path) return 0;
    FILE *f = fopen(path, "r");
    if (!f) return snprintf(err, cap, "cannot open the config file %s", path), -1;
    char line[4096];
    int lineno = 0, rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            snprintf(err, cap, "%s:%d: line too long", path, lineno);
            rc = -1;
            break;
        }
        char *w[5];
        int n = split_words(line, w, 4);
        if (n == 0) continue;
        char why[400];
        if (n < 0 || n > 4) {
            snprintf(why, sizeof why, n < 0 ? "unclosed quote" : "too many values");
            rc = -1;
        } else {
            rc = directive(c, w, n, why, sizeof why);
        }
        if (rc) snprintf(err, cap, "%s:%d: %s", path, lineno, why);
    }
    fclose(f);
    return rc;
}

/* ---- voices -------------------------------------------------------------------------------- */
static int add_voice(sd_config *c, const char *name, size_t name_n, const char *path) {
    sd_voice *v = realloc(c->voices, (size_t)(c->n_voices + 1) * sizeof *v);
    if (!v) return -1;
    c->voices = v;
    v += c->n_voices;
    memset(v, 0, sizeof *v);
    v->name = malloc(name_n + 1);
    if (!v->name) return -1;
    memcpy(v->name, name, name_n);
    v->name[name_n] = 0;
    c->n_voices++;
    return path && !(v->path = dup_str(path)) ? -1 : 0;
}

static int by_name(const void *a, const void *b) {
    return strcmp(((const sd_voice *)a)->name, ((const sd_voice *)b)->name);
}

/* A file that can be a voice: a voice state or audio the library clones. */
static int voice_file(const char *name) {
    static const char *const ext[] = {".safetensors", ".wav", ".flac", ".ogg", ".opus", ".mp3"};
    const char *dot = strrchr(name, '.');
    if (!dot || dot == name) return 0;
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++)
        if (!strcasecmp(dot, ext[i])) return 1;
    return 0;
}

int sd_voices_scan(sd_config *c, char *err, size_t cap) {
    if (!c->lang_code && set_str(&c->lang_code, iso_code(c->language)))
        return snprintf(err, cap, "out of memory"), -1;
    if (c->voices_dir) {
        DIR *d = opendir(c->voices_dir);
        if (!d) return snprintf(err, cap, "cannot open PocketTTSVoicesDir %s", c->voices_dir), -1;
        struct dirent *de;
        int rc = 0;
        while (!rc && (de = readdir(d))) {
            if (de->d_name[0] == '.' || !voice_file(de->d_name)) continue;
            size_t n = strlen(c->voices_dir) + strlen(de->d_name) + 2;
            char *p = malloc(n);
            if (!p) {
                rc = -1;
                break;
            }
            snprintf(p, n, "%s/%s", c->voices_dir, de->d_name);
            rc = add_voice(c, de->d_name, (size_t)(strrchr(de->d_name, '.') - de->d_name), p);
            free(p);
        }
        closedir(d);
        if (rc) return snprintf(err, cap, "out of memory"), -1;
        qsort(c->voices, (size_t)c->n_voices, sizeof *c->voices, by_name);
    }
    /* Presets are voice states computed with the published weights of the language. */
    if (!c->config_path && !c->weights_path) {
        for (int k = 0; k < ptts_preset_voice_count(c->language); k++) {
            const char *p = ptts_preset_voice_name(c->language, k);
            if (!sd_voice_find(c, p) && add_voice(c, p, strlen(p), NULL))
                return snprintf(err, cap, "out of memory"), -1;
        }
    }
    if (!c->default_voice) {
        const ptts_language *l = ptts_language_find(c->language);
        int presets = !c->config_path && !c->weights_path;
        const char *dv = !presets && c->n_voices ? c->voices[0].name : l->default_voice;
        if (set_str(&c->default_voice, dv)) return snprintf(err, cap, "out of memory"), -1;
    }
    if (!c->n_voices)
        return snprintf(err, cap,
                        "no voices: set PocketTTSVoicesDir (a model of one's own has no "
                        "presets)"),
               -1;
    if (!sd_voice_find(c, c->default_voice))
        return snprintf(err, cap, "the default voice '%s' is not among the voices",
                        c->default_voice),
               -1;
    for (int i = 0; i < c->n_types; i++)
        if (!sd_voice_find(c, c->types[i].voice))
            sd_log(PTTS_LOG_WARN, "AddVoice %s %s: '%s' is not among the voices (ignored)",
                   c->types[i].lang, c->types[i].type, c->types[i].voice);
    return 0;
}

sd_voice *sd_voice_find(sd_config *c, const char *name) {
    if (!name) return NULL;
    for (int i = 0; i < c->n_voices; i++)
        if (!strcasecmp(c->voices[i].name, name)) return &c->voices[i];
    return NULL;
}

/* "en" matches "en", "en-US", "en_GB" and the other way round. */
static int same_language(const char *a, const char *b) {
    size_t i = 0;
    while (a[i] && b[i] && a[i] != '-' && a[i] != '_' && b[i] != '-' && b[i] != '_') {
        if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i])) return 0;
        i++;
    }
    return (!a[i] || a[i] == '-' || a[i] == '_') && (!b[i] || b[i] == '-' || b[i] == '_');
}

sd_voice *sd_voice_pick(sd_config *c, const char *synthesis_voice, const char *voice_type,
                        const char *language) {
    sd_voice *v = sd_voice_find(c, synthesis_voice);
    if (v) return v;
    if (voice_type) {
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < c->n_types; i++)
                if (!strcasecmp(c->types[i].type, voice_type) &&
                    (pass || (language && same_language(c->types[i].lang, language))) &&
                    (v = sd_voice_find(c, c->types[i].voice)))
                    return v;
    }
    return sd_voice_find(c, c->default_voice);
}

void sd_config_free(sd_config *c) {
    free(c->language);
    free(c->lang_code);
    free(c->config_path);
    free(c->weights_path);
    free(c->tokenizer_path);
    free(c->voices_dir);
    free(c->default_voice);
    for (int i = 0; i < c->n_types; i++) {
        free(c->types[i].lang);
        free(c->types[i].type);
        free(c->types[i].voice);
    }
    free(c->types);
    for (int i = 0; i < c->n_voices; i++) {
        free(c->voices[i].name);
        free(c->voices[i].path);
        ptts_voice_free(c->voices[i].v);
    }
    free(c->voices);
    memset(c, 0, sizeof *c);
}
