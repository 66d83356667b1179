/*
 * ws_frame.c - RFC 6455 frames without I/O (see ws_frame.h).
 *
 * Why this and libmicrohttpd: the server already runs on libmicrohttpd, whose upgrade support
 * (MHD_ALLOW_UPGRADE, MHD_create_response_for_upgrade, status 101) hands over the raw socket
 * after the handshake; Debian bookworm's libmicrohttpd (0.9.75) has no WebSocket framing of its
 * own (libmicrohttpd_ws is not packaged), and a second HTTP/WebSocket library (libwebsockets)
 * would bring its own event loop and listening socket beside MHD's. What is left, the framing,
 * is small, fully specified and has no I/O, so it is written here where the fuzzer reaches it.
 *
 * The parser reads a frame header (2 to 14 bytes) as bytes arrive, then streams the payload
 * through the mask into the message buffer (data frames, bounded by max_message) or into a
 * 125-byte buffer (control frames), so a frame of any length needs no more memory than its
 * message's limit. Refusals (RFC 6455 5.2, 5.4, 5.5, 7.4): an unmasked frame, reserved bits
 * (no extension is negotiated), an unknown opcode, a control frame longer than 125 bytes or
 * fragmented, a continuation with no message open or a new message inside one, a 64-bit length
 * with its top bit set, a close payload of 1 byte or with an invalid code: 1002; a message over
 * the limit: 1009; a text message or a close reason that is not valid UTF-8: 1007.
 */
#include "ws_frame.h"

#include <stdlib.h>
#include <string.h>

#include "server.h"

void ws_parser_init(ws_parser *p, size_t max_message) {
    memset(p, 0, sizeof *p);
    p->max_message = max_message;
    p->hdr_need = 2;
}

void ws_parser_free(ws_parser *p) {
    free(p->msg);
    p->msg = NULL;
    p->msg_len = p->msg_cap = 0;
}

static size_t fail(ws_parser *p, ws_event *ev, int code, const char *why, size_t used) {
    p->failed = 1;
    p->code = code;
    p->why = why;
    ev->type = WS_EV_ERROR;
    ev->code = code;
    ev->why = why;
    return used;
}

/* fail() for header_done: -1. */
static int hfail(ws_parser *p, ws_event *ev, int code, const char *why) {
    fail(p, ev, code, why, 0);
    return -1;
}

/* A close code a peer may send (RFC 6455 7.4.1, 7.4.2; 1004-1006 and 1015 are never sent). */
static int close_code_ok(int c) {
    return (c >= 1000 && c <= 1003) || (c >= 1007 && c <= 1014) || (c >= 3000 && c <= 4999);
}

static int utf8_ok(const uint8_t *d, size_t n) {
    uint32_t cp = 0;
    size_t at = srv_utf8_check((const char *)d, n, &cp);
    /* srv_utf8_check also stops at control characters, which are valid UTF-8: go on past them */
    while (at < n && cp != 0xFFFFFFFFu) {
        size_t skip = cp < 0x80 ? 1 : 2; /* C0 and DEL are 1 byte, C1 (U+0080-U+009F) 2 */
        size_t more = srv_utf8_check((const char *)d + at + skip, n - at - skip, &cp);
        at += skip + more;
    }
    return at == n;
}

/* The header is complete in p->hdr: check it and set up the payload. 0, or an error. */
static int header_done(ws_parser *p, ws_event *ev) {
    const uint8_t b0 = p->hdr[0], b1 = p->hdr[1];
    p->fin = b0 >> 7;
    p->op = b0 & 15;
    uint64_t len = b1 & 127;
    if (len == 126) {
        len = ((uint64_t)p->hdr[2] << 8) | p->hdr[3];
    } else if (len == 127) {
        len = 0;
        for (int i = 0; i < 8; i++)
            len = (len << 8) | p->hdr[2 + i];
    }
    memcpy(p->mask, p->hdr + p->hdr_len - 4, 4);
    p->mask_at = 0;
    p->left = len;
    p->ctl_len = 0;
    if (p->op >= 8) {
        if (p->op > WS_OP_PONG) return hfail(p, ev, WS_CLOSE_PROTOCOL, "unknown opcode");
        if (!p->fin) return hfail(p, ev, WS_CLOSE_PROTOCOL, "fragmented control frame");
        if (len > WS_CONTROL_MAX)
            return hfail(p, ev, WS_CLOSE_PROTOCOL, "control frame over 125 bytes");
        if (p->op == WS_OP_CLOSE && len == 1)
            return hfail(p, ev, WS_CLOSE_PROTOCOL, "close frame of 1 byte");
    } else {
        if (p->op > WS_OP_BINARY) return hfail(p, ev, WS_CLOSE_PROTOCOL, "unknown opcode");
        if (p->op == WS_OP_CONT && !p->msg_op)
            return hfail(p, ev, WS_CLOSE_PROTOCOL, "continuation frame with no message");
        if (p->op != WS_OP_CONT && p->msg_op)
            return hfail(p, ev, WS_CLOSE_PROTOCOL, "new message inside a fragmented one");
        if (p->op != WS_OP_CONT) {
            p->msg_op = p->op;
            p->msg_len = 0;
        }
        if (len > p->max_message || p->msg_len > p->max_message - len)
            return hfail(p, ev, WS_CLOSE_TOO_BIG, "message too large");
        if (p->msg_len + len > p->msg_cap) {
            /* grow geometrically, never past the limit */
            size_t want = p->msg_len + (size_t)len, cap = p->msg_cap ? p->msg_cap : 256;
            while (cap < want)
                cap = cap > p->max_message / 2 ? p->max_message : cap * 2;
            uint8_t *nm = realloc(p->msg, cap ? cap : 1);
            if (!nm) return hfail(p, ev, WS_CLOSE_INTERNAL, "out of memory");
            p->msg = nm;
            p->msg_cap = cap;
        }
    }
    p->in_payload = 1;
    return 0;
}

/* The frame's payload is all in: report what it completes (or nothing). */
static void frame_done(ws_parser *p, ws_event *ev) {
    p->in_payload = 0;
    p->hdr_len = 0;
    p->hdr_need = 2;
    if (p->op >= 8) {
        ev->data = p->ctl;
        ev->len = p->ctl_len;
        if (p->op == WS_OP_PING) {
            ev->type = WS_EV_PING;
        } else if (p->op == WS_OP_PONG) {
            ev->type = WS_EV_PONG;
        } else {
            ev->type = WS_EV_CLOSE;
            ev->code = WS_CLOSE_NO_STATUS;
            ev->len = 0;
            if (p->ctl_len >= 2) {
                int code = (p->ctl[0] << 8) | p->ctl[1];
                if (!close_code_ok(code)) {
                    fail(p, ev, WS_CLOSE_PROTOCOL, "invalid close code", 0);
                    return;
                }
                if (!utf8_ok(p->ctl + 2, p->ctl_len - 2)) {
                    fail(p, ev, WS_CLOSE_INVALID_DATA, "close reason is not valid UTF-8", 0);
                    return;
                }
                ev->code = code;
                ev->data = p->ctl + 2;
                ev->len = p->ctl_len - 2;
            }
        }
        return;
    }
    if (!p->fin) return;
    const int op = p->msg_op;
    p->msg_op = 0;
    if (op == WS_OP_TEXT && !utf8_ok(p->msg, p->msg_len)) {
        fail(p, ev, WS_CLOSE_INVALID_DATA, "text message is not valid UTF-8", 0);
        return;
    }
    ev->type = op == WS_OP_TEXT ? WS_EV_TEXT : WS_EV_BINARY;
    ev->data = p->msg;
    ev->len = p->msg_len;
}

size_t ws_parse(ws_parser *p, const uint8_t *buf, size_t len, ws_event *ev) {
    memset(ev, 0, sizeof *ev);
    if (p->failed) return fail(p, ev, p->code, p->why, 0);
    size_t i = 0;
    for (;;) {
        if (!p->in_payload) {
            while (i < len && p->hdr_len < p->hdr_need) {
                p->hdr[p->hdr_len++] = buf[i++];
                if (p->hdr_len == 2) {
                    if (p->hdr[0] & 0x70)
                        return fail(p, ev, WS_CLOSE_PROTOCOL, "reserved bits set", i);
                    if (!(p->hdr[1] & 0x80))
                        return fail(p, ev, WS_CLOSE_PROTOCOL, "unmasked client frame", i);
                    const unsigned l7 = p->hdr[1] & 127;
                    p->hdr_need = 2 + (l7 == 126 ? 2 : l7 == 127 ? 8 : 0) + 4;
                } else if (p->hdr_len == 3 && (p->hdr[1] & 127) == 127 && (p->hdr[2] & 0x80)) {
                    return fail(p, ev, WS_CLOSE_PROTOCOL, "payload length over 2^63", i);
                }
            }
            if (p->hdr_len < p->hdr_need) return i;
            if (header_done(p, ev)) return i;
        }
        size_t k = (size_t)(p->left < (uint64_t)(len - i) ? p->left : (uint64_t)(len - i));
        if (k) {
            uint8_t *dst = p->op >= 8 ? p->ctl + p->ctl_len : p->msg + p->msg_len;
            for (size_t j = 0; j < k; j++)
                dst[j] = buf[i + j] ^ p->mask[(p->mask_at + j) & 3];
            p->mask_at = (unsigned)((p->mask_at + k) & 3);
            if (p->op >= 8)
                p->ctl_len += k;
            else
                p->msg_len += k;
            p->left -= k;
            i += k;
        }
        if (p->left == 0) {
            frame_done(p, ev);
            if (ev->type != WS_EV_NONE) return i;
        }
        if (i == len) return i;
    }
}

size_t ws_frame_header(uint8_t out[WS_HEADER_MAX], int op, uint64_t len) {
    out[0] = (uint8_t)(0x80 | (op & 15));
    if (len < 126) {
        out[1] = (uint8_t)len;
        return 2;
    }
    if (len <= 0xFFFF) {
        out[1] = 126;
        out[2] = (uint8_t)(len >> 8);
        out[3] = (uint8_t)len;
        return 4;
    }
    out[1] = 127;
    for (int i = 0; i < 8; i++)
        out[2 + i] = (uint8_t)(len >> (56 - 8 * i));
    return 10;
}

size_t ws_close_payload(uint8_t out[WS_CONTROL_MAX], int code, const char *reason) {
    out[0] = (uint8_t)(code >> 8);
    out[1] = (uint8_t)code;
    size_t n = reason ? strlen(reason) : 0;
    if (n > WS_CONTROL_MAX - 2) {
        n = WS_CONTROL_MAX - 2;
        while (n > 0 && ((unsigned char)reason[n] & 0xC0) == 0x80)
            n--; /* not inside a character */
    }
    if (n) memcpy(out + 2, reason, n);
    return 2 + n;
}

/* ---- SHA-1 and base64 (the handshake) ----------------------------------------------------- */

static uint32_t rol(uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }

static void sha1_block(uint32_t h[5], const uint8_t *b) {
    uint32_t w[80];
    for (int i = 0; i < 16; i++)
        w[i] = ((uint32_t)b[4 * i] << 24) | ((uint32_t)b[4 * i + 1] << 16) |
               ((uint32_t)b[4 * i + 2] << 8) | b[4 * i + 3];
    for (int i = 16; i < 80; i++)
        w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], bb = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; i++) {
        uint32_t f, k;
        if (i < 20)
            f = (bb & c) | (~bb & d), k = 0x5A827999u;
        else if (i < 40)
            f = bb ^ c ^ d, k = 0x6ED9EBA1u;
        else if (i < 60)
            f = (bb & c) | (bb & d) | (c & d), k = 0x8F1BBCDCu;
        else
            f = bb ^ c ^ d, k = 0xCA62C1D6u;
        uint32_t t = rol(a, 5) + f + e + k + w[i];
        e = d;
        d = c;
        c = rol(bb, 30);
        bb = a;
        a = t;
    }
    h[0] += a, h[1] += bb, h[2] += c, h[3] += d, h[4] += e;
}

void ws_sha1(const uint8_t *data, size_t n, uint8_t out[20]) {
    uint32_t h[5] = {0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u, 0xC3D2E1F0u};
    size_t i = 0;
    for (; n - i >= 64; i += 64)
        sha1_block(h, data + i);
    /* the last block(s): the rest, 0x80, zeros, the length in bits (big-endian 64-bit) */
    uint8_t tail[128] = {0};
    size_t r = n - i;
    memcpy(tail, data + i, r);
    tail[r] = 0x80;
    size_t tl = r + 1 + 8 <= 64 ? 64 : 128;
    const uint64_t bits = (uint64_t)n * 8;
    for (int k = 0; k < 8; k++)
        tail[tl - 1 - k] = (uint8_t)(bits >> (8 * k));
    for (size_t k = 0; k < tl; k += 64)
        sha1_block(h, tail + k);
    for (int k = 0; k < 5; k++) {
        out[4 * k] = (uint8_t)(h[k] >> 24);
        out[4 * k + 1] = (uint8_t)(h[k] >> 16);
        out[4 * k + 2] = (uint8_t)(h[k] >> 8);
        out[4 * k + 3] = (uint8_t)h[k];
    }
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void ws_base64(const uint8_t *in, size_t n, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < n) v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < n) v |= in[i + 2];
        out[o++] = B64[(v >> 18) & 63];
        out[o++] = B64[(v >> 12) & 63];
        out[o++] = i + 1 < n ? B64[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? B64[v & 63] : '=';
    }
    out[o] = 0;
}

int ws_accept(const char *key, char out[29]) {
    static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    /* the base64 of 16 bytes: 22 characters and "==" (RFC 6455 4.2.1 item 5) */
    if (!key || strlen(key) != 24 || strcmp(key + 22, "==")) return -1;
    for (int i = 0; i < 22; i++)
        if (!strchr(B64, key[i]) || !key[i]) return -1;
    if ((strchr(B64, key[21]) - B64) & 15) return -1; /* nonzero bits past the 16 bytes */
    uint8_t buf[24 + sizeof guid - 1], dig[20];
    memcpy(buf, key, 24);
    memcpy(buf + 24, guid, sizeof guid - 1);
    ws_sha1(buf, sizeof buf, dig);
    ws_base64(dig, sizeof dig, out);
    return 0;
}
