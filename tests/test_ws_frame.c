// ctest-label: unit
/*
 * test_ws_frame.c - the WebSocket frames of `pocket-tts serve` (tools/server/ws_frame.c) against
 * the standards' own examples: SHA-1 (FIPS 180-4 "abc", the two-block message and a million
 * 'a's), the Sec-WebSocket-Accept of RFC 6455 1.3, the masked "Hello" and the fragmented "Hel"
 * "lo" of RFC 6455 5.7, fed whole and one byte at a time; the server's header sizes (7, 16 and
 * 64-bit lengths); refusals with their close codes; close payloads cut on a UTF-8 boundary.
 */
#include "test.h"
#include "ws_frame.h"

static void hex(const uint8_t *d, size_t n, char *out) {
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

static void sha1(void) {
    uint8_t dig[20];
    char h[41];
    ws_sha1((const uint8_t *)"abc", 3, dig);
    hex(dig, 20, h);
    CHECKF(!strcmp(h, "a9993e364706816aba3e25717850c26c9cd0d89d"), "%s", h);
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    ws_sha1((const uint8_t *)two, strlen(two), dig);
    hex(dig, 20, h);
    CHECKF(!strcmp(h, "84983e441c3bd26ebaae4aa1f95129e5e54670f1"), "%s", h);
    uint8_t *a = malloc(1000000);
    REQUIRE(a);
    memset(a, 'a', 1000000);
    ws_sha1(a, 1000000, dig);
    free(a);
    hex(dig, 20, h);
    CHECKF(!strcmp(h, "34aa973cd4c4daa4f61eeb2bdbad27316534016f"), "%s", h);
    char acc[29];
    CHECK(ws_accept("dGhlIHNhbXBsZSBub25jZQ==", acc) == 0 &&
          !strcmp(acc, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="));
    CHECK(ws_accept("dGhlIHNhbXBsZSBub25jZQ=", acc) < 0);  /* 23 characters */
    CHECK(ws_accept("dGhlIHNhbXBsZSBub25jZR==", acc) < 0); /* bits past the 16 bytes */
    CHECK(ws_accept("dGhlIHNhbXBsZSBub25j*Q==", acc) < 0);
    CHECK(ws_accept(NULL, acc) < 0);
}

/* Feed wire (n bytes) whole or a byte at a time; the events' types, and the last data. */
static int feed(const uint8_t *wire, size_t n, int bytewise, int *types, ws_event *last) {
    ws_parser p;
    ws_parser_init(&p, 1024);
    int k = 0;
    static uint8_t keep[1024];
    for (size_t i = 0; i < n;) {
        ws_event ev;
        size_t step = bytewise ? 1 : n - i;
        i += ws_parse(&p, wire + i, step, &ev);
        if (ev.type != WS_EV_NONE) {
            types[k++] = ev.type;
            *last = ev;
            if (ev.len) memcpy(keep, ev.data, ev.len);
            last->data = keep;
            if (ev.type == WS_EV_ERROR) break;
        }
    }
    ws_parser_free(&p);
    return k;
}

static void rfc_examples(void) {
    /* RFC 6455 5.7: a masked "Hello"; "Hel" + "lo" unmasked there, masked here; a ping */
    const uint8_t hello[] = {0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58};
    const uint8_t frag[] = {0x01, 0x83, 0, 0,    0,    0, 'H', 'e', 'l', 0x89, 0x80, 1,
                            2,    3,    4, 0x80, 0x82, 0, 0,   0,   0,   'l',  'o'};
    for (int bw = 0; bw < 2; bw++) {
        int t[4];
        ws_event ev;
        CHECK(feed(hello, sizeof hello, bw, t, &ev) == 1 && t[0] == WS_EV_TEXT && ev.len == 5 &&
              !memcmp(ev.data, "Hello", 5));
        CHECK(feed(frag, sizeof frag, bw, t, &ev) == 2 && t[0] == WS_EV_PING &&
              t[1] == WS_EV_TEXT && ev.len == 5 && !memcmp(ev.data, "Hello", 5));
    }
    uint8_t h[WS_HEADER_MAX];
    CHECK(ws_frame_header(h, WS_OP_TEXT, 5) == 2 && h[0] == 0x81 && h[1] == 5);
    CHECK(ws_frame_header(h, WS_OP_BINARY, 256) == 4 && h[0] == 0x82 && h[1] == 126 && h[2] == 1 &&
          h[3] == 0);
    CHECK(ws_frame_header(h, WS_OP_BINARY, 65536) == 10 && h[1] == 127 && h[7] == 1 && h[8] == 0 &&
          h[9] == 0);
}

static void refusals(void) {
    static const struct {
        uint8_t wire[16];
        size_t n;
        int code;
    } cases[] = {
        {{0x81, 0x05, 'H', 'e', 'l', 'l', 'o'}, 7, WS_CLOSE_PROTOCOL},            /* unmasked */
        {{0xc1, 0x80, 0, 0, 0, 0}, 6, WS_CLOSE_PROTOCOL},                         /* RSV1 */
        {{0x83, 0x80, 0, 0, 0, 0}, 6, WS_CLOSE_PROTOCOL},                         /* opcode 3 */
        {{0x80, 0x80, 0, 0, 0, 0}, 6, WS_CLOSE_PROTOCOL},                         /* lone CONT */
        {{0x09, 0x80, 0, 0, 0, 0}, 6, WS_CLOSE_PROTOCOL},                         /* frag. ping */
        {{0x89, 0xfe, 0, 126, 0, 0, 0, 0}, 8, WS_CLOSE_PROTOCOL},                 /* ping > 125 */
        {{0x88, 0x81, 0, 0, 0, 0, 3}, 7, WS_CLOSE_PROTOCOL},                      /* close 1 B */
        {{0x88, 0x82, 0, 0, 0, 0, 0x03, 0xed}, 8, WS_CLOSE_PROTOCOL},             /* code 1005 */
        {{0x82, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0}, 10, WS_CLOSE_PROTOCOL},         /* 2^63 */
        {{0x82, 0xfe, 0x04, 0x01, 0, 0, 0, 0}, 8, WS_CLOSE_TOO_BIG},              /* 1025 B */
        {{0x81, 0x82, 0, 0, 0, 0, 0xc3, 0x28}, 8, WS_CLOSE_INVALID_DATA},         /* UTF-8 */
        {{0x81, 0x83, 0, 0, 0, 0, 0xed, 0xa0, 0x80}, 9, WS_CLOSE_INVALID_DATA},   /* surrogate */
        {{0x01, 0x80, 0, 0, 0, 0, 0x81, 0x80, 0, 0, 0, 0}, 12, WS_CLOSE_PROTOCOL} /* nested */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int t[4];
        ws_event ev;
        for (int bw = 0; bw < 2; bw++) {
            int k = feed(cases[i].wire, cases[i].n, bw, t, &ev);
            CHECKF(k >= 1 && t[k - 1] == WS_EV_ERROR && ev.code == cases[i].code && ev.why,
                   "case %zu (bytewise %d): %d events, code %d", i, bw, k, k ? ev.code : 0);
        }
    }
    /* a valid close with a reason, control characters in a text message (valid UTF-8) */
    const uint8_t close[] = {0x88, 0x84, 0, 0, 0, 0, 0x03, 0xe8, 'o', 'k'};
    const uint8_t ctl[] = {0x81, 0x82, 0, 0, 0, 0, 0x01, 0x7f};
    int t[4];
    ws_event ev;
    CHECK(feed(close, sizeof close, 0, t, &ev) == 1 && t[0] == WS_EV_CLOSE && ev.code == 1000 &&
          ev.len == 2 && !memcmp(ev.data, "ok", 2));
    CHECK(feed(ctl, sizeof ctl, 1, t, &ev) == 1 && t[0] == WS_EV_TEXT && ev.len == 2);
    /* after an error the parser stays failed */
    ws_parser p;
    ws_parser_init(&p, 16);
    CHECK(ws_parse(&p, cases[0].wire, cases[0].n, &ev) <= cases[0].n && ev.type == WS_EV_ERROR);
    CHECK(ws_parse(&p, cases[1].wire, cases[1].n, &ev) == 0 && ev.type == WS_EV_ERROR);
    ws_parser_free(&p);
}

int main(void) {
    sha1();
    rfc_examples();
    refusals();
    uint8_t cp[WS_CONTROL_MAX];
    char reason[200];
    memset(reason, 'x', sizeof reason - 1);
    reason[sizeof reason - 1] = 0;
    memcpy(reason + 122, "\xc3\xa9", 2); /* an é across the 123-byte cut */
    size_t n = ws_close_payload(cp, 1008, reason);
    CHECK(n == 2 + 122 && cp[0] == 0x03 && cp[1] == 0xf0);
    CHECK(ws_close_payload(cp, 1000, NULL) == 2);
    char b64[16];
    ws_base64((const uint8_t *)"ab", 2, b64);
    CHECK(!strcmp(b64, "YWI="));
    return test_summary();
}
