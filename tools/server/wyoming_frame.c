/*
 * wyoming_frame.c - the Wyoming event parser and writer (see wyoming_frame.h): a byte-at-a-time
 * state machine over the header line, the data block and the payload, each bounded.
 */
#include "wyoming_frame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

enum { ST_LINE = 0, ST_DATA, ST_PAYLOAD };

static const struct {
    const char *name;
    int kind;
} kinds[] = {
    {"describe", WY_EV_DESCRIBE},
    {"synthesize", WY_EV_SYNTHESIZE},
    {"synthesize-start", WY_EV_SYNTH_START},
    {"synthesize-chunk", WY_EV_SYNTH_CHUNK},
    {"synthesize-stop", WY_EV_SYNTH_STOP},
    {"ping", WY_EV_PING},
};

void wy_event_free(wy_event *ev) {
    cJSON_Delete(ev->data);
    free(ev->payload);
    memset(ev, 0, sizeof *ev);
}

void wy_parser_init(wy_parser *p) { memset(p, 0, sizeof *p); }

void wy_parser_free(wy_parser *p) {
    free(p->line);
    free(p->data);
    free(p->payload);
    wy_event_free(&p->ev);
    memset(p, 0, sizeof *p);
}

static int fail(char *err, size_t cap, int code, const char *msg) {
    snprintf(err, cap, "%s", msg);
    return code;
}

/* UTF-8 with no control character but tab, LF and CR (server_req.c's rule). */
static int text_ok(const char *t, size_t len) {
    uint32_t cp;
    return srv_utf8_check(t, len, &cp) == len;
}

/* A length member: absent or null is 0; else an integer in [0, max]. -1 when invalid. */
static int64_t length_member(const cJSON *o, const char *key, size_t max) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!j || cJSON_IsNull(j)) return 0;
    if (!cJSON_IsNumber(j)) return -1;
    double d = j->valuedouble;
    if (!(d >= 0 && d <= (double)max) || d != (double)(int64_t)d) return -1;
    return (int64_t)d;
}

/* A whole JSON value of t[0..len) (whitespace around it allowed); NULL when invalid. */
static cJSON *parse_json(const char *t, size_t len) {
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(t, len, &end, 0);
    if (!j) return NULL;
    for (; end && end < t + len; end++)
        if (!strchr(" \t\r\n", *end) || !*end) {
            cJSON_Delete(j);
            return NULL;
        }
    return j;
}

/* Move every member of src (deleted after) into dst as a Python dict's update does: a key
 * dst has keeps its place and takes the value, a new key goes last; so a key that appears
 * twice counts once, with its last value. */
static void put_all(cJSON *dst, cJSON *src) {
    while (src->child) {
        cJSON *it = cJSON_DetachItemViaPointer(src, src->child);
        cJSON *old = cJSON_GetObjectItemCaseSensitive(dst, it->string);
        if (old)
            cJSON_ReplaceItemViaPointer(dst, old, it);
        else
            cJSON_AddItemToArray(dst, it); /* keeps it->string: a member of an object */
    }
    cJSON_Delete(src);
}

/* The header line (without its "\n") into p->ev and the lengths to read next. */
static int header(wy_parser *p, char *err, size_t cap) {
    size_t n = p->line_len;
    if (n && p->line[n - 1] == '\r') n--;
    if (!text_ok(p->line, n))
        return fail(err, cap, WY_ERR_FRAME, "the event header is not valid UTF-8 text");
    cJSON *h = parse_json(p->line, n);
    if (!cJSON_IsObject(h)) {
        cJSON_Delete(h);
        return fail(err, cap, WY_ERR_FRAME, "the event header is not a JSON object");
    }
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(h, "type");
    const char *ts = cJSON_IsString(type) ? type->valuestring : NULL;
    size_t tl = ts ? strlen(ts) : 0;
    int ok = tl > 0 && tl <= WY_MAX_TYPE;
    for (size_t i = 0; ok && i < tl; i++)
        ok = (ts[i] >= 'a' && ts[i] <= 'z') || (ts[i] >= '0' && ts[i] <= '9') || ts[i] == '-' ||
             ts[i] == '_';
    if (!ok) {
        cJSON_Delete(h);
        return fail(err, cap, WY_ERR_FRAME,
                    "the event header has no valid \"type\" (a string of a-z, 0-9, - and _, at "
                    "most 64 bytes)");
    }
    int64_t dl = length_member(h, "data_length", WY_MAX_DATA);
    int64_t pl = length_member(h, "payload_length", WY_MAX_PAYLOAD);
    if (dl < 0 || pl < 0) {
        cJSON_Delete(h);
        snprintf(err, cap,
                 "the event header's data_length (at most %u) or payload_length (at most %u) is "
                 "not a valid length",
                 WY_MAX_DATA, WY_MAX_PAYLOAD);
        return WY_ERR_FRAME;
    }
    cJSON *data = cJSON_DetachItemFromObjectCaseSensitive(h, "data");
    if (data && cJSON_IsNull(data)) {
        cJSON_Delete(data);
        data = NULL;
    }
    if (data && !cJSON_IsObject(data)) {
        cJSON_Delete(data);
        cJSON_Delete(h);
        return fail(err, cap, WY_ERR_FRAME, "the event's \"data\" is not an object");
    }
    cJSON *merged = cJSON_CreateObject();
    if (!merged) {
        cJSON_Delete(data);
        cJSON_Delete(h);
        return fail(err, cap, WY_ERR_NOMEM, "out of memory");
    }
    if (data) put_all(merged, data);
    data = merged;
    memcpy(p->ev.type, ts, tl + 1);
    p->ev.kind = WY_EV_OTHER;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(ts, kinds[i].name)) p->ev.kind = kinds[i].kind;
    p->ev.data = data;
    cJSON_Delete(h);
    p->data_need = (size_t)dl;
    p->payload_need = (size_t)pl;
    p->data_len = p->payload_len = 0;
    return 0;
}

/* The data block merged over the header's data. */
static int merge_data(wy_parser *p, char *err, size_t cap) {
    if (!text_ok(p->data, p->data_len))
        return fail(err, cap, WY_ERR_FRAME, "the event's data is not valid UTF-8 text");
    cJSON *d = parse_json(p->data, p->data_len);
    if (!cJSON_IsObject(d)) {
        cJSON_Delete(d);
        return fail(err, cap, WY_ERR_FRAME, "the event's data is not a JSON object");
    }
    put_all(p->ev.data, d);
    return 0;
}

/* Grow *buf to hold want bytes (want is bounded by the limits above). */
static int reserve(char **buf, size_t want) {
    char *nb = realloc(*buf, want ? want : 1);
    if (!nb) return -1;
    *buf = nb;
    return 0;
}

int wy_parse(wy_parser *p, const uint8_t *in, size_t n, size_t *used, wy_event *ev, char *err,
             size_t cap) {
    size_t i = 0;
    int rc = 0;
    while (i < n || (p->state != ST_LINE && p->data_len == p->data_need &&
                     p->payload_len == p->payload_need)) {
        if (p->state == ST_LINE) {
            const uint8_t *nl = memchr(in + i, '\n', n - i);
            size_t take = nl ? (size_t)(nl - (in + i)) : n - i;
            if (p->line_len + take + 1 > WY_MAX_LINE) {
                rc = fail(err, cap, WY_ERR_FRAME, "the event header line is too long");
                break;
            }
            if (!p->line && !(p->line = malloc(WY_MAX_LINE))) {
                rc = fail(err, cap, WY_ERR_NOMEM, "out of memory");
                break;
            }
            memcpy(p->line + p->line_len, in + i, take);
            p->line_len += take;
            i += take;
            if (!nl) break;
            i++; /* the "\n" */
            rc = header(p, err, cap);
            p->line_len = 0;
            if (rc) break;
            p->state = ST_DATA;
            if (p->data_need && reserve(&p->data, p->data_need)) {
                rc = fail(err, cap, WY_ERR_NOMEM, "out of memory");
                break;
            }
        } else if (p->state == ST_DATA) {
            size_t take = TOOL_MIN(p->data_need - p->data_len, n - i);
            if (take) memcpy(p->data + p->data_len, in + i, take);
            p->data_len += take;
            i += take;
            if (p->data_len < p->data_need) break;
            if (p->data_need && (rc = merge_data(p, err, cap))) break;
            p->state = ST_PAYLOAD;
            if (p->payload_need && !(p->payload = malloc(p->payload_need))) {
                rc = fail(err, cap, WY_ERR_NOMEM, "out of memory");
                break;
            }
        } else {
            size_t take = TOOL_MIN(p->payload_need - p->payload_len, n - i);
            if (take) memcpy(p->payload + p->payload_len, in + i, take);
            p->payload_len += take;
            i += take;
            if (p->payload_len < p->payload_need) break;
            *ev = p->ev;
            ev->payload = p->payload;
            ev->payload_len = p->payload_len;
            memset(&p->ev, 0, sizeof p->ev);
            p->payload = NULL;
            p->payload_len = p->payload_need = 0;
            free(p->data);
            p->data = NULL;
            p->data_len = p->data_need = 0;
            p->state = ST_LINE;
            rc = 1;
            break;
        }
    }
    *used = i;
    return rc;
}

uint8_t *wy_build(const char *type, const cJSON *data, const void *payload, size_t payload_len,
                  size_t *len) {
    char *d = data ? cJSON_PrintUnformatted(data) : NULL;
    if (data && !d) return NULL;
    size_t dl = d ? strlen(d) : 0;
    cJSON *h = cJSON_CreateObject();
    char *hs = NULL;
    if (h && cJSON_AddStringToObject(h, "type", type) &&
        cJSON_AddStringToObject(h, "version", WY_VERSION) &&
        cJSON_AddNumberToObject(h, "data_length", (double)dl) &&
        cJSON_AddNumberToObject(h, "payload_length", (double)payload_len))
        hs = cJSON_PrintUnformatted(h);
    cJSON_Delete(h);
    size_t hl = hs ? strlen(hs) : 0;
    uint8_t *out = hs ? malloc(hl + 1 + dl + payload_len) : NULL;
    if (out) {
        memcpy(out, hs, hl);
        out[hl] = '\n';
        if (dl) memcpy(out + hl + 1, d, dl);
        if (payload_len) memcpy(out + hl + 1 + dl, payload, payload_len);
        *len = hl + 1 + dl + payload_len;
    }
    free(hs);
    free(d);
    return out;
}

const char *wy_data_string(const cJSON *obj, const char *key) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(j) ? j->valuestring : NULL;
}
