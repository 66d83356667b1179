/*
 * fuzz_ws.c - libFuzzer target for the WebSocket frame parser (tools/server/ws_frame.c). The
 * first byte sets how the rest is cut into reads (1 to 256 bytes each, as a socket would hand
 * them out); the rest is client bytes. Every call must consume what it was given or stop at an
 * event; a text message must be valid UTF-8 and within the size limit, a control payload within
 * 125 bytes, a close code one a peer may send; after an error the parser stays failed. Then the
 * same bytes as one message's payload, masked and cut into fragments, must come back unchanged
 * (text when they are valid UTF-8, binary otherwise), and the handshake's accept must take the
 * first 24 bytes as a key without a crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "ws_frame.h"

#define MAX_MESSAGE 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_event(const ws_event *ev) {
    if (ev->type == WS_EV_TEXT || ev->type == WS_EV_BINARY) {
        if (ev->len > MAX_MESSAGE) abort();
        uint32_t cp;
        size_t at = ev->len ? srv_utf8_check((const char *)ev->data, ev->len, &cp) : 0;
        if (ev->type == WS_EV_TEXT && at < ev->len && cp == 0xFFFFFFFFu) abort();
    } else if (ev->type == WS_EV_PING || ev->type == WS_EV_PONG) {
        if (ev->len > WS_CONTROL_MAX) abort();
    } else if (ev->type == WS_EV_CLOSE) {
        if (ev->len > WS_CONTROL_MAX - 2) abort();
        if (ev->code != WS_CLOSE_NO_STATUS && (ev->code < 1000 || ev->code > 4999)) abort();
    } else if (ev->type == WS_EV_ERROR) {
        if (!ev->why || ev->code < 1000 || ev->code > 1011) abort();
    }
}

/* The input's bytes cut into reads. */
static void parse_stream(const uint8_t *d, size_t n, size_t step) {
    ws_parser p;
    ws_parser_init(&p, MAX_MESSAGE);
    int failed = 0;
    for (size_t i = 0; i < n;) {
        size_t len = n - i < step ? n - i : step;
        size_t off = 0;
        while (off < len) {
            ws_event ev;
            size_t used = ws_parse(&p, d + i + off, len - off, &ev);
            if (used > len - off) abort();
            check_event(&ev);
            if (failed && ev.type != WS_EV_ERROR) abort();
            if (ev.type == WS_EV_ERROR) failed = 1;
            if (ev.type == WS_EV_NONE && used != len - off) abort();
            off += used;
            if (failed) break;
        }
        if (failed) break;
        i += len;
    }
    ws_parser_free(&p);
}

/* The bytes as one masked message in fragments of `step` bytes. */
static void round_trip(const uint8_t *d, size_t n, size_t step) {
    /* valid UTF-8 (control characters are valid): a text message, else binary */
    uint32_t cp;
    int valid = 1;
    for (size_t at = 0; at < n;) {
        size_t k = srv_utf8_check((const char *)d + at, n - at, &cp);
        if (at + k == n) break;
        if (cp == 0xFFFFFFFFu) {
            valid = 0;
            break;
        }
        at += k + (cp < 0x80 ? 1 : 2);
    }
    const int op = valid ? WS_OP_TEXT : WS_OP_BINARY;
    size_t cap = n + (n / step + 1) * WS_HEADER_MAX;
    uint8_t *wire = malloc(cap ? cap : 1);
    if (!wire) return;
    size_t w = 0;
    const uint8_t mask[4] = {0x12, 0x34, 0x56, 0x78};
    for (size_t i = 0; i == 0 || i < n; i += step) {
        size_t len = n - i < step ? n - i : step;
        size_t hl = ws_frame_header(wire + w, i == 0 ? op : WS_OP_CONT, len);
        if (i + len < n) wire[w] &= 0x7F; /* not the final fragment */
        wire[w + 1] |= 0x80;              /* masked */
        w += hl;
        memcpy(wire + w, mask, 4);
        w += 4;
        for (size_t k = 0; k < len; k++)
            wire[w + k] = d[i + k] ^ mask[k & 3];
        w += len;
        if (n == 0) break;
    }
    ws_parser p;
    ws_parser_init(&p, n > MAX_MESSAGE ? n : MAX_MESSAGE);
    ws_event ev;
    size_t used = ws_parse(&p, wire, w, &ev);
    if (used != w || ev.type != (op == WS_OP_TEXT ? WS_EV_TEXT : WS_EV_BINARY) || ev.len != n ||
        (n && memcmp(ev.data, d, n)))
        abort();
    ws_parser_free(&p);
    free(wire);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const size_t step = (size_t)data[0] + 1;
    parse_stream(data + 1, size - 1, step);
    round_trip(data + 1, size - 1, step);
    if (size >= 25) {
        char key[25], acc[29];
        memcpy(key, data + 1, 24);
        key[24] = 0;
        if (ws_accept(key, acc) == 0 && strlen(acc) != 28) abort();
    }
    return 0;
}
