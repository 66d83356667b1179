/*
 * ws_frame.h - RFC 6455 (WebSocket) frames for `pocket-tts serve`, without I/O: a parser of
 * the client's frames (masked, fragmented messages reassembled up to a size limit, strict
 * UTF-8 in text messages, control frames checked) and the writer of the server's frames
 * (unmasked), plus the handshake's Sec-WebSocket-Accept (SHA-1 + base64). The HTTP upgrade
 * itself is libmicrohttpd's (server_ws.c); the fuzzer (tests/fuzz/fuzz_ws.c) calls this alone.
 */
#ifndef PTTS_WS_FRAME_H
#define PTTS_WS_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define WS_CONTROL_MAX 125 /* bytes of a control frame's payload (RFC 6455 5.5) */
#define WS_HEADER_MAX 14   /* bytes of a frame header: 2 + 8 (length) + 4 (mask) */

enum {
    WS_OP_CONT = 0,
    WS_OP_TEXT = 1,
    WS_OP_BINARY = 2,
    WS_OP_CLOSE = 8,
    WS_OP_PING = 9,
    WS_OP_PONG = 10
};

/* Close codes (RFC 6455 7.4.1). */
enum {
    WS_CLOSE_NORMAL = 1000,
    WS_CLOSE_GOING_AWAY = 1001,
    WS_CLOSE_PROTOCOL = 1002,
    WS_CLOSE_UNSUPPORTED = 1003,
    WS_CLOSE_NO_STATUS = 1005, /* never sent: a close frame without a code */
    WS_CLOSE_INVALID_DATA = 1007,
    WS_CLOSE_POLICY = 1008,
    WS_CLOSE_TOO_BIG = 1009,
    WS_CLOSE_INTERNAL = 1011,
    WS_CLOSE_TRY_LATER = 1013
};

enum { WS_EV_NONE = 0, WS_EV_TEXT, WS_EV_BINARY, WS_EV_PING, WS_EV_PONG, WS_EV_CLOSE, WS_EV_ERROR };

typedef struct ws_event {
    int type; /* WS_EV_* */
    /* TEXT, BINARY: the whole message; PING, PONG: the payload; CLOSE: the reason. Valid until
     * the next ws_parse call. */
    const uint8_t *data;
    size_t len;
    int code;        /* CLOSE: the peer's code (WS_CLOSE_NO_STATUS without one); ERROR: the code
                      * to close with */
    const char *why; /* ERROR: what was wrong, for the client */
} ws_event;

typedef struct ws_parser {
    size_t max_message; /* bytes of a reassembled message; a longer one is WS_CLOSE_TOO_BIG */
    /* the frame being read */
    uint8_t hdr[WS_HEADER_MAX];
    size_t hdr_len, hdr_need;
    int in_payload, op, fin;
    uint64_t left; /* payload bytes still to come */
    uint8_t mask[4];
    unsigned mask_at;
    uint8_t ctl[WS_CONTROL_MAX];
    size_t ctl_len;
    /* the message being reassembled (data frames) */
    uint8_t *msg;
    size_t msg_len, msg_cap;
    int msg_op; /* WS_OP_TEXT or WS_OP_BINARY while a message is open, else 0 */
    int failed; /* an error was reported: every later call reports it again */
    const char *why;
    int code;
} ws_parser;

void ws_parser_init(ws_parser *p, size_t max_message);
void ws_parser_free(ws_parser *p);
/* Read client bytes buf[0..len) until one event is complete or the bytes run out; returns the
 * bytes consumed (call again with the rest). ev->type is WS_EV_NONE when more bytes are needed.
 * After WS_EV_ERROR the connection must be closed with ev->code; the parser stays failed. */
size_t ws_parse(ws_parser *p, const uint8_t *buf, size_t len, ws_event *ev);

/* The header of an unmasked, final server frame of `len` payload bytes into out; its length. */
size_t ws_frame_header(uint8_t out[WS_HEADER_MAX], int op, uint64_t len);
/* A close frame's payload: the code (big-endian) and the reason cut to fit 125 bytes on a UTF-8
 * character boundary; its length. */
size_t ws_close_payload(uint8_t out[WS_CONTROL_MAX], int code, const char *reason);
/* Sec-WebSocket-Accept for a Sec-WebSocket-Key: base64(SHA-1(key + the RFC's GUID)) into out
 * (28 characters and a NUL). 0, or -1 when the key is not the base64 of 16 bytes. */
int ws_accept(const char *key, char out[29]);
/* Standard base64 (padded) of n bytes into out (4 * ((n + 2) / 3) characters and a NUL). */
void ws_base64(const uint8_t *in, size_t n, char *out);
/* SHA-1 (FIPS 180-4) of n bytes into out[20]. */
void ws_sha1(const uint8_t *data, size_t n, uint8_t out[20]);

#endif
