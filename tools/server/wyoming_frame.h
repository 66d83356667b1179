/*
 * wyoming_frame.h - the Wyoming protocol's event framing (docs/PROTOCOLS.md), with no I/O: the
 * server feeds it the bytes it reads and writes the bytes it builds; the fuzzer calls it alone.
 *
 * One event is a header line (UTF-8 JSON object ending in "\n": "type", optional "data",
 * "data_length", "payload_length", "version"), then data_length bytes of JSON (an object whose
 * keys are merged over the header's "data"), then payload_length bytes of binary payload.
 * Every size is bounded: a longer header line or a larger length is an error, so a parser never
 * holds more than WY_MAX_LINE + WY_MAX_DATA + WY_MAX_PAYLOAD bytes.
 */
#ifndef PTTS_WYOMING_FRAME_H
#define PTTS_WYOMING_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define WY_VERSION "1.9.0"
#define WY_MAX_LINE (64u << 10)   /* bytes of a header line, "\n" included */
#define WY_MAX_DATA (1u << 20)    /* bytes of the extra-data block */
#define WY_MAX_PAYLOAD (4u << 20) /* bytes of a payload (a TTS server receives none) */
#define WY_MAX_TYPE 64            /* bytes of an event type */

/* The events a TTS server understands; WY_EV_OTHER is any other (valid) type. */
enum {
    WY_EV_OTHER = 0,
    WY_EV_DESCRIBE,
    WY_EV_SYNTHESIZE,
    WY_EV_SYNTH_START,
    WY_EV_SYNTH_CHUNK,
    WY_EV_SYNTH_STOP,
    WY_EV_PING,
};

typedef struct wy_event {
    char type[WY_MAX_TYPE + 1];
    int kind;         /* WY_EV_* */
    cJSON *data;      /* the merged data: an object, never NULL */
    uint8_t *payload; /* payload_len bytes, NULL when none */
    size_t payload_len;
} wy_event;
void wy_event_free(wy_event *ev);

typedef struct wy_parser {
    int state; /* reading the header line, the data, the payload */
    char *line;
    size_t line_len;
    char *data;
    size_t data_len, data_need;
    uint8_t *payload;
    size_t payload_len, payload_need;
    wy_event ev; /* being built */
} wy_parser;

void wy_parser_init(wy_parser *p);
void wy_parser_free(wy_parser *p);

/* Errors of wy_parse: the stream cannot be read further (its framing is lost). */
enum { WY_ERR_FRAME = -1, WY_ERR_NOMEM = -2 };
/* Consume bytes of in[0..n): stops after a complete event. Returns 1 with *ev filled (the caller
 * owns it: wy_event_free) when one is complete, 0 when every byte was used and the event is not
 * complete yet, or WY_ERR_* with err filled. *used: the bytes consumed (also on 1). Strict: the
 * header line and the data block must be valid UTF-8 with no control characters (JSON allows
 * none unescaped), the header an object with a non-empty string "type" of [a-z0-9-] (at most
 * WY_MAX_TYPE bytes), "data" an object or null, the lengths integers in [0, limit]; the data
 * block a JSON object with nothing after it but whitespace. */
int wy_parse(wy_parser *p, const uint8_t *in, size_t n, size_t *used, wy_event *ev, char *err,
             size_t cap);

/* An event's bytes: the header line with "version", "data_length" and "payload_length", then the
 * data (NULL: none) as the extra-data block, then the payload. Returns a malloc'd buffer of *len
 * bytes, NULL when memory runs out. */
uint8_t *wy_build(const char *type, const cJSON *data, const void *payload, size_t payload_len,
                  size_t *len);

/* A string member of ev->data (or of the object `obj` when not NULL); NULL when absent or no
 * string. */
const char *wy_data_string(const cJSON *obj, const char *key);

#endif
