/*
 * fuzz_markup.c - libFuzzer target for ptts_markup_parse (src/markup.c). The first input byte's
 * low 3 bits are the flags (so that the ASCII seeds "0".."7" pick them), the rest is the text.
 * A parse must either succeed with the invariants of markup.h (at least one segment; text and
 * pauses alternate; pauses positive and, merged, at most 10 s per input byte of markup; text
 * NUL-terminated; offsets increasing inside the input; no more text than input; with markup off,
 * or with no "[" for the bracket rules and no "<" or "&" for the SSML ones, one segment holding
 * the input unchanged) or fail with
 * PTTS_E_TEXT and "markup at byte B: ..." where the input has "[", "<" or "&" at B - never a
 * crash, a leak or undefined behaviour. Seeds: tests/fuzz/seeds/markup/.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "markup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    unsigned flags = data[0] & 7u;
    const char *s = (const char *)data + 1;
    size_t n = size - 1;
    ptts_markup *m = NULL;
    ptts_error e;
    memset(&e, 0, sizeof e);
    int rc = ptts_markup_parse(s, n, flags, &m, &e);
    if (rc != PTTS_OK) {
        size_t at;
        if (m != NULL || rc != PTTS_E_TEXT || e.code != rc) abort();
        if (sscanf(e.msg, "markup at byte %zu: ", &at) != 1 || at >= n) abort();
        if (s[at] != '[' && s[at] != '<' && s[at] != '&') abort();
        return 0;
    }
    if (!m || m->n < 1) abort();
    int brackets = (flags & PTTS_MARKUP_BRACKETS) && memchr(s, '[', n);
    int ssml = (flags & PTTS_MARKUP_SSML) && (memchr(s, '<', n) || memchr(s, '&', n));
    int plain = !brackets && !ssml;
    if (plain && (m->n != 1 || m->segments[0].kind != PTTS_SEGMENT_TEXT ||
                  m->segments[0].len != n || memcmp(m->segments[0].text, s, n) != 0))
        abort();
    size_t text = 0;
    for (size_t i = 0; i < m->n; i++) {
        const ptts_segment *g = &m->segments[i];
        if (g->offset > n) abort();
        if (i > 0 && (g->kind == m->segments[i - 1].kind || g->offset <= m->segments[i - 1].offset))
            abort();
        if (g->kind == PTTS_SEGMENT_TEXT) {
            if (!g->text || g->text[g->len] != 0 || g->samples != 0) abort();
            text += g->len;
        } else {
            /* the shortest pause markup, "[pause]", is 7 bytes of at most 10 s each */
            if (g->text || g->samples <= 0 ||
                g->samples > (int64_t)(n / 7 + 1) * PTTS_MARKUP_MAX_PAUSE_SAMPLES)
                abort();
        }
    }
    if (text > n) abort();
    ptts_markup_free(m);
    return 0;
}
