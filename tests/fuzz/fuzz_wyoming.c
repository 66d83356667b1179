/*
 * fuzz_wyoming.c - libFuzzer target for the Wyoming event parser (tools/server/wyoming_frame.c).
 * The first byte picks the size of the pieces (1..256 bytes) the rest is fed in, as reads from
 * a socket would split it. Every event parsed must have a valid type and a data object, and must
 * come back the same (type, data, payload) after wy_build and a second parse; an error must say
 * why and end the stream. The parser never holds more than its limits.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wyoming_frame.h"

/* wy_build then wy_parse in one piece: the same event (data compared as printed: duplicate keys
 * and numbers past the double range print the same both times). */
static void round_trip(const wy_event *ev) {
    size_t len = 0;
    uint8_t *b = wy_build(ev->type, ev->data, ev->payload, ev->payload_len, &len);
    if (!b) return; /* out of memory */
    wy_parser p;
    wy_parser_init(&p);
    wy_event back = {0};
    size_t used = 0;
    char err[256];
    int rc = wy_parse(&p, b, len, &used, &back, err, sizeof err);
    if (rc != 1 || used != len || strcmp(back.type, ev->type) || back.kind != ev->kind ||
        back.payload_len != ev->payload_len ||
        (ev->payload_len && memcmp(back.payload, ev->payload, ev->payload_len)))
        abort();
    char *x = cJSON_PrintUnformatted(ev->data), *y = cJSON_PrintUnformatted(back.data);
    if (x && y && strcmp(x, y)) abort();
    free(x);
    free(y);
    wy_event_free(&back);
    wy_parser_free(&p);
    free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    if (n < 1) return 0;
    size_t piece = (size_t)d[0] + 1;
    d++, n--;
    wy_parser p;
    wy_parser_init(&p);
    char err[256];
    for (size_t at = 0; at < n;) {
        size_t len = n - at < piece ? n - at : piece, off = 0;
        int failed = 0;
        while (off < len) {
            wy_event ev = {0};
            size_t used = 0;
            err[0] = 0;
            int rc = wy_parse(&p, d + at + off, len - off, &used, &ev, err, sizeof err);
            if (used > len - off) abort();
            off += used;
            if (rc < 0) {
                if (!err[0]) abort();
                failed = 1;
                break;
            }
            if (rc == 1) {
                if (!ev.type[0] || !cJSON_IsObject(ev.data) || ev.payload_len > WY_MAX_PAYLOAD)
                    abort();
                round_trip(&ev);
                wy_event_free(&ev);
            } else if (off != len) {
                abort(); /* 0 means every byte was taken */
            }
        }
        if (failed) break;
        at += len;
    }
    wy_parser_free(&p);
    return 0;
}
