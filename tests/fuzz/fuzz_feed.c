/*
 * fuzz_feed.c - libFuzzer target for incremental text (text_feed.h): the first byte picks the
 * markup flags, the rest is cut into pieces at every 0xFF byte (which stays in the text) and
 * fed; after each piece the complete text is taken. Every cut must lie in the text fed, at
 * the length ptts_text_complete gives for what was waiting, and the pieces taken, with the
 * rest taken at the end, must be the input byte for byte - never a crash or a lost byte.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text_feed.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const unsigned flags = data[0] & 7;
    const char *s = (const char *)data + 1;
    const size_t n = size - 1;
    char *out = malloc(n + 1);
    if (!out) return 0;
    size_t got = 0;
    ptts_feed f;
    memset(&f, 0, sizeof f);
    ptts_error e;
    memset(&e, 0, sizeof e);
    for (size_t i = 0; i <= n;) {
        size_t j = i;
        while (j < n && (unsigned char)s[j] != 0xFF)
            j++;
        if (j < n) j++; /* the 0xFF ends the piece */
        if (j == i) break;
        if (ptts_feed_append(&f, s + i, j - i, &e)) abort();
        size_t want = ptts_text_complete(f.p, f.n, flags);
        char *t;
        size_t len;
        if (ptts_feed_take(&f, flags, &t, &len, &e) || len != want || (len && !t) || len > n - got)
            abort();
        if (len) memcpy(out + got, t, len);
        got += len;
        free(t);
        i = j;
    }
    char *t;
    size_t len;
    if (ptts_feed_flush(&f, 1, &e) || ptts_feed_take(&f, flags, &t, &len, &e) || len != n - got ||
        f.n != 0)
        abort();
    if (len) memcpy(out + got, t, len);
    got += len;
    free(t);
    if (got != n || (n && memcmp(out, s, n))) abort();
    if (ptts_feed_append(&f, "x", 1, &e) != PTTS_E_INVALID) abort();
    ptts_feed_free(&f);
    free(out);
    return 0;
}
