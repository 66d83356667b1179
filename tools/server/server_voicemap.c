/*
 * server_voicemap.c - OpenAI's voice names on /v1/audio/speech. A client written for OpenAI
 * sends "alloy" or "nova"; the default table maps every name the API lists to a preset of a
 * similar character (gender, register, accent as the presets' recordings have them: an
 * approximation, not a match), and `serve --voice-map FILE` replaces or adds entries with a JSON
 * object {"name": "voice", ...} whose voices are anything a request may name (a voices-dir
 * voice, a preset, a URL when --voice-urls allows it). A voices-dir voice named like an OpenAI
 * voice wins over the map: the operator put it there.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "util.h"

#define MAP_FILE_MAX (1u << 20) /* bytes of a --voice-map file */
#define MAP_ENTRIES_MAX 1024
#define MAP_VOICE_MAX 4096 /* bytes of a voice a map entry names (a URL at most) */

/* OpenAI's voices (the API reference, 2026) and the preset of closest character */
static const char *const g_default_map[][2] = {
    {"alloy", "alba"},            /* neutral, even */
    {"ash", "marius"},            /* warm male */
    {"ballad", "peter_yearsley"}, /* soft, British male */
    {"coral", "fantine"},         /* warm female */
    {"echo", "jean"},             /* calm male */
    {"fable", "george"},          /* expressive, British */
    {"onyx", "javert"},           /* deep male */
    {"nova", "cosette"},          /* bright, young female */
    {"sage", "eponine"},          /* calm female */
    {"shimmer", "azelma"},        /* clear female */
    {"verse", "charles"},         /* versatile male */
    {"marin", "mary"},            /* natural female */
    {"cedar", "michael"},         /* natural male */
};
#define N_DEFAULT ((int)(sizeof g_default_map / sizeof g_default_map[0]))

/* Set name -> voice (copies), replacing an entry of that name. 0, or -1 out of memory. */
static int map_set(srv *s, const char *name, const char *voice) {
    for (int i = 0; i < s->n_vmap; i++)
        if (!strcmp(s->vmap[2 * i], name)) {
            char *v = tool_strdup(voice);
            if (!v) return -1;
            free(s->vmap[2 * i + 1]);
            s->vmap[2 * i + 1] = v;
            return 0;
        }
    char **nm = realloc(s->vmap, (size_t)(s->n_vmap + 1) * 2 * sizeof *nm);
    if (!nm) return -1;
    s->vmap = nm;
    char *n = tool_strdup(name), *v = tool_strdup(voice);
    if (!n || !v) {
        free(n);
        free(v);
        return -1;
    }
    nm[2 * s->n_vmap] = n;
    nm[2 * s->n_vmap + 1] = v;
    s->n_vmap++;
    return 0;
}

static char *read_small_file(const char *path, size_t *len, char *msg, size_t cap) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(msg, cap, "--voice-map %s: cannot open it", path);
        return NULL;
    }
    char *b = malloc(MAP_FILE_MAX + 1);
    size_t n = b ? fread(b, 1, MAP_FILE_MAX + 1, f) : 0;
    int bad = ferror(f);
    fclose(f);
    if (!b || bad || n > MAP_FILE_MAX) {
        snprintf(msg, cap, "--voice-map %s: %s", path,
                 !b    ? "out of memory"
                 : bad ? "read error"
                       : "larger than 1 MiB");
        free(b);
        return NULL;
    }
    b[n] = 0;
    *len = n;
    return b;
}

int srv_voicemap_load(srv *s, const char *path, char *msg, size_t cap) {
    for (int i = 0; i < N_DEFAULT; i++)
        if (map_set(s, g_default_map[i][0], g_default_map[i][1])) {
            snprintf(msg, cap, "out of memory");
            return -1;
        }
    if (!path) return 0;
    size_t len = 0;
    char *text = read_small_file(path, &len, msg, cap);
    if (!text) return -1;
    cJSON *j = cJSON_ParseWithLength(text, len);
    free(text);
    int rc = 0;
    if (!cJSON_IsObject(j)) {
        snprintf(msg, cap, "--voice-map %s: not a JSON object {\"name\": \"voice\", ...}", path);
        rc = -1;
    } else if (cJSON_GetArraySize(j) > MAP_ENTRIES_MAX) {
        snprintf(msg, cap, "--voice-map %s: more than %d entries", path, MAP_ENTRIES_MAX);
        rc = -1;
    }
    const cJSON *it = NULL;
    if (!rc) cJSON_ArrayForEach(it, j) {
            if (!srv_voice_name_ok(it->string)) {
                snprintf(msg, cap,
                         "--voice-map %s: the name \"%.64s\" is not a voice name ([A-Za-z0-9_.-], "
                         "at most 128 bytes)",
                         path, it->string);
                rc = -1;
            } else if (!cJSON_IsString(it) || !it->valuestring[0] ||
                       strlen(it->valuestring) > MAP_VOICE_MAX) {
                snprintf(msg, cap,
                         "--voice-map %s: \"%.64s\" must map to a voice name or URL (a non-empty "
                         "string of at most %d bytes)",
                         path, it->string, MAP_VOICE_MAX);
                rc = -1;
            } else if (map_set(s, it->string, it->valuestring)) {
                snprintf(msg, cap, "out of memory");
                rc = -1;
            }
            if (rc) break;
        }
    cJSON_Delete(j);
    return rc;
}

const char *srv_voicemap_resolve(srv *s, const char *name) {
    pthread_mutex_lock(&s->voice_mu);
    int dir = 0;
    for (int i = 0; i < s->n_voices && !dir; i++)
        dir = s->voices[i].source == SRC_DIR && !strcmp(s->voices[i].name, name);
    pthread_mutex_unlock(&s->voice_mu);
    if (!dir)
        for (int i = 0; i < s->n_vmap; i++)
            if (!strcmp(s->vmap[2 * i], name)) return s->vmap[2 * i + 1];
    return name;
}

void srv_voicemap_list(const srv *s, struct cJSON *arr) {
    for (int i = 0; i < s->n_vmap; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", s->vmap[2 * i]);
        cJSON_AddStringToObject(o, "name", s->vmap[2 * i]);
        cJSON_AddStringToObject(o, "source", "openai");
        cJSON_AddStringToObject(o, "voice", s->vmap[2 * i + 1]);
        cJSON_AddItemToArray(arr, o);
    }
}

void srv_voicemap_free(srv *s) {
    for (int i = 0; i < 2 * s->n_vmap; i++)
        free(s->vmap[i]);
    free(s->vmap);
    s->vmap = NULL;
    s->n_vmap = 0;
}
