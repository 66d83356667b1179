/*
 * server_info.c - the answers of `pocket-tts serve`'s informational GET endpoints, built without
 * the HTTP library: GET /v1/audio/voices, GET /v1/models and GET /metrics (Prometheus text).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "util.h"

struct cJSON *srv_voices_json(srv *s) {
    cJSON *root = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(root, "voices");
    pthread_mutex_lock(&s->voice_mu);
    for (int i = 0; i < s->n_voices; i++) {
        if (s->voices[i].source == SRC_URL) continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", s->voices[i].name);
        cJSON_AddStringToObject(o, "name", s->voices[i].name);
        cJSON_AddStringToObject(o, "source",
                                s->voices[i].source == SRC_DIR ? "voices_dir" : "preset");
        cJSON_AddBoolToObject(o, "loaded", 1);
        cJSON_AddItemToArray(arr, o);
    }
    int np = ptts_preset_voice_count(s->cfg.language);
    for (int i = 0; i < np; i++) {
        const char *name = ptts_preset_voice_name(s->cfg.language, i);
        const int seen = srv_voice_listed(s, name);
        if (seen) continue;
        char url[512], *path = NULL;
        int cached = !ptts_preset_voice_url(s->cfg.language, name, url, sizeof url) &&
                     ptts_fetch_cached(&path, url);
        free(path);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", name);
        cJSON_AddStringToObject(o, "name", name);
        cJSON_AddStringToObject(o, "source", "preset");
        cJSON_AddBoolToObject(o, "loaded", 0);
        cJSON_AddBoolToObject(o, "cached", cached);
        cJSON_AddItemToArray(arr, o);
    }
    pthread_mutex_unlock(&s->voice_mu);
    srv_voicemap_list(s, arr);
    cJSON_AddStringToObject(root, "default", s->cfg.default_voice);
    /* the model's language (whose presets are listed) and the others a server could be started
     * with (--language): the web page's language choice */
    cJSON_AddStringToObject(root, "language", s->cfg.language);
    cJSON *langs = cJSON_AddArrayToObject(root, "languages");
    for (int i = 0; i < ptts_language_count(); i++)
        if (ptts_language_at(i)->listed)
            cJSON_AddItemToArray(langs, cJSON_CreateString(ptts_language_at(i)->name));
    cJSON_AddBoolToObject(root, "voice_cloning", 1);
    ptts_model_info info;
    ptts_model_get_info(s->model, &info);
    cJSON_ReplaceItemInObject(root, "voice_cloning", cJSON_CreateBool(info.has_voice_cloning));
    cJSON *fm = cJSON_AddArrayToObject(root, "formats");
    for (int f = 0; f < SRV_N_FMT; f++)
        if (srv_format_available(f))
            cJSON_AddItemToArray(fm, cJSON_CreateString(srv_format_name(f)));
    return root;
}

struct cJSON *srv_models_json(void) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "object", "list");
    cJSON *arr = cJSON_AddArrayToObject(root, "data");
    for (int i = 0; i < SRV_N_MODELS; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", srv_model_ids[i]);
        cJSON_AddStringToObject(o, "object", "model");
        cJSON_AddNumberToObject(o, "created", 0);
        cJSON_AddStringToObject(o, "owned_by", i == 0 ? "kyutai" : "pocket-tts (alias)");
        cJSON_AddStringToObject(o, "instructions",
                                "accepted and ignored: the model takes no style prompt");
        cJSON_AddItemToArray(arr, o);
    }
    return root;
}

char *srv_metrics_text(srv *s, size_t *out_len) {
    size_t cap = 8192, len = 0;
    char *b = malloc(cap);
    if (!b) return NULL;
#define OUT(...)                                                                                   \
    do {                                                                                           \
        int k_ = snprintf(b + len, cap - len, __VA_ARGS__);                                        \
        if (k_ > 0) len += (size_t)k_ < cap - len ? (size_t)k_ : cap - len - 1;                    \
    } while (0)
    pthread_mutex_lock(&s->mu);
    OUT("# HELP ptts_requests_total HTTP requests answered, by status code.\n"
        "# TYPE ptts_requests_total counter\n");
    for (int i = 100; i < N_STATUS; i++)
        if (s->req_by_status[i])
            OUT("ptts_requests_total{code=\"%d\"} %llu\n", i,
                (unsigned long long)s->req_by_status[i]);
    OUT("# HELP ptts_active_streams Utterances being generated.\n"
        "# TYPE ptts_active_streams gauge\nptts_active_streams %d\n",
        s->active);
    OUT("# HELP ptts_queue_depth Requests waiting for a generation slot.\n"
        "# TYPE ptts_queue_depth gauge\nptts_queue_depth %d\n",
        s->q_count);
    OUT("# HELP ptts_open_connections HTTP connections open.\n"
        "# TYPE ptts_open_connections gauge\nptts_open_connections %llu\n",
        (unsigned long long)s->conns);
    OUT("# HELP ptts_connections_refused_total Requests answered 503 because more than "
        "--max-connections connections were open.\n"
        "# TYPE ptts_connections_refused_total counter\nptts_connections_refused_total %llu\n",
        (unsigned long long)s->conns_refused);
    OUT("# HELP ptts_draining 1 while SIGTERM drains the server.\n"
        "# TYPE ptts_draining gauge\nptts_draining %d\n",
        s->draining);
    OUT("# HELP ptts_audio_seconds_total Seconds of audio generated.\n"
        "# TYPE ptts_audio_seconds_total counter\nptts_audio_seconds_total %.3f\n",
        s->audio_s);
    OUT("# HELP ptts_generation_seconds_total Wall time the generation thread spent stepping.\n"
        "# TYPE ptts_generation_seconds_total counter\nptts_generation_seconds_total %.3f\n",
        s->busy_s);
    OUT("# HELP ptts_realtime_factor Audio seconds generated per second of generation time "
        "(all streams together).\n# TYPE ptts_realtime_factor gauge\nptts_realtime_factor %.3f\n",
        s->busy_s > 0 ? s->audio_s / s->busy_s : 0.0);
    OUT("# HELP ptts_first_audio_seconds Time from queueing to the first frame.\n"
        "# TYPE ptts_first_audio_seconds summary\nptts_first_audio_seconds_sum %.4f\n"
        "ptts_first_audio_seconds_count %llu\n",
        s->ttfb_sum, (unsigned long long)s->ttfb_count);
    OUT("# HELP ptts_frames_total Frames generated.\n# TYPE ptts_frames_total counter\n"
        "ptts_frames_total %llu\n",
        (unsigned long long)s->frames_total);
    OUT("# HELP ptts_cancelled_total Requests cancelled (client gone).\n"
        "# TYPE ptts_cancelled_total counter\nptts_cancelled_total %llu\n",
        (unsigned long long)s->cancelled);
    OUT("# HELP ptts_client_overflow_total Requests cancelled because the client fell too far "
        "behind.\n# TYPE ptts_client_overflow_total counter\nptts_client_overflow_total %llu\n",
        (unsigned long long)s->overflows);
    OUT("# HELP ptts_uptime_seconds Seconds since start.\n# TYPE ptts_uptime_seconds gauge\n"
        "ptts_uptime_seconds %.1f\n",
        tool_now() - s->started);
    pthread_mutex_unlock(&s->mu);
#undef OUT
    *out_len = len;
    return b;
}
