/*
 * text_feed.c - markup, splitting and pauses into one list of chunks (text_feed.h), and the
 * sentence-completeness rule of incremental input.
 */
#include <stdlib.h>
#include <string.h>

#include "markup.h"
#include "text_feed.h"
#include "text_py.h"

void ptts_items_free(ptts_items *it) {
    if (!it) return;
    ptts_chunks_free(it->chunks, it->n);
    free(it->pause);
    memset(it, 0, sizeof *it);
}

/* Append n chunks (moved: *src is freed, its contents owned by `it`), `before` samples of
 * silence before the first, gap between the others. */
static int items_append(ptts_items *it, ptts_chunk *src, int n, int64_t before, int64_t gap,
                        ptts_error *e) {
    ptts_chunk *c = realloc(it->chunks, (size_t)(it->n + n) * sizeof *c);
    if (c) it->chunks = c;
    int64_t *p = c ? realloc(it->pause, (size_t)(it->n + n + 1) * sizeof *p) : NULL;
    if (p) it->pause = p;
    if (!c || !p) {
        ptts_chunks_free(src, n);
        return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    }
    memcpy(it->chunks + it->n, src, (size_t)n * sizeof *src);
    free(src);
    for (int i = 0; i < n; i++)
        it->pause[it->n + i] = i == 0 ? before : gap;
    it->n += n;
    it->pause[it->n] = 0;
    return 0;
}

int ptts_items_build(const ptts_tokenizer *tok, const ptts_text_options *to, const char *text,
                     size_t len, unsigned flags, int max_tokens, int hard_max, int64_t gap,
                     ptts_items *out, ptts_error *e) {
    memset(out, 0, sizeof *out);
    out->pause = calloc(1, sizeof *out->pause);
    if (!out->pause) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    ptts_markup *mk;
    int rc = ptts_markup_parse(text, len, flags, &mk, e);
    if (rc) {
        ptts_items_free(out);
        return rc;
    }
    int64_t pending = 0; /* silence since the last chunk */
    for (size_t i = 0; !rc && i < mk->n; i++) {
        const ptts_segment *sg = &mk->segments[i];
        if (sg->kind == PTTS_SEGMENT_PAUSE) {
            pending += sg->samples;
            continue;
        }
        ptts_chunk *c = NULL;
        int n = 0;
        rc = ptts_text_split(tok, sg->text, max_tokens, to, &c, &n, e);
        if (!rc) rc = ptts_chunks_limit(tok, &c, &n, max_tokens, hard_max, to, e);
        if (rc) {
            ptts_chunks_free(c, n);
            break;
        }
        rc = items_append(out, c, n, out->n > 0 && pending == 0 ? gap : pending, gap, e);
        pending = 0;
    }
    ptts_markup_free(mk);
    if (rc) {
        ptts_items_free(out);
        return rc;
    }
    out->pause[out->n] = pending;
    return 0;
}

static int is_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* The end mark at s[i] (. ! ? or the 3 bytes of U+2026): its length, else 0. */
static size_t end_mark(const char *s, size_t n, size_t i) {
    unsigned char c = (unsigned char)s[i];
    if (c == '.' || c == '!' || c == '?') return 1;
    if (c == 0xE2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
        (unsigned char)s[i + 2] == 0xA6)
        return 3;
    return 0;
}

/* The code point that ends just before byte i (0 at the start). */
static int32_t cp_before(const char *s, size_t i) {
    size_t len;
    return i ? py_last_char(s, i, &len) : 0;
}

/* A "[" that starts (or, at the end of s, may start) "[pause", in any ASCII case. */
static int pause_bracket(const char *s, size_t n, size_t i) {
    static const char w[] = "pause";
    for (size_t k = 0; k < 5; k++) {
        if (i + 1 + k >= n) return 1;
        char c = s[i + 1 + k];
        if (c >= 'A' && c <= 'Z') c = (char)(c + 32);
        if (c != w[k]) return 0;
    }
    return 1;
}

size_t ptts_text_complete(const char *s, size_t n, unsigned flags) {
    size_t last = 0, i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        const char *close = NULL;
        if ((flags & PTTS_MARKUP_SSML) && c == '<') {
            if (i + 1 >= n) break;
            unsigned char d = (unsigned char)s[i + 1];
            if ((d | 32) >= 'a' && (d | 32) <= 'z') close = ">";
            if (d == '/' || d == '!' || d == '?') close = ">";
        } else if ((flags & PTTS_MARKUP_BRACKETS) && c == '[' && pause_bracket(s, n, i)) {
            close = "]";
        }
        if (close) {
            const char *q = memchr(s + i + 1, close[0], n - i - 1);
            if (!q) break; /* unclosed: what follows cannot be judged yet */
            i = (size_t)(q - s) + 1;
            continue;
        }
        size_t m = end_mark(s, n, i);
        if (!m) {
            i++;
            continue;
        }
        size_t j = i, marks = 0;
        while (j < n && (m = end_mark(s, n, j)) > 0) {
            j += m;
            marks++;
        }
        if (j >= n) break; /* the run may go on */
        if (marks == 1 && s[i] == '.' && py_isdigit(cp_before(s, i))) {
            size_t k = j;
            while (k < n && is_space((unsigned char)s[k]))
                k++;
            if (k >= n) break; /* a decimal point or not: the next character says */
            int32_t cp;
            py_u8_next(s, n, k, &cp);
            if (py_isdigit(cp)) {
                i = j;
                continue;
            }
        }
        last = j;
        i = j;
    }
    return last;
}

int ptts_feed_append(ptts_feed *f, const char *text, size_t len, ptts_error *e) {
    if (f->ended) return ptts_fail(e, PTTS_E_INVALID, "the utterance's text has ended");
    if (len && !text) return ptts_fail(e, PTTS_E_INVALID, "no text");
    if (len > PTTS_FEED_MAX_BYTES - f->n)
        return ptts_fail(e, PTTS_E_BUSY,
                         "%zu bytes wait to be spoken; %zu more exceed the bound of %u", f->n, len,
                         PTTS_FEED_MAX_BYTES);
    if (f->n + len > f->cap) {
        size_t cap = f->cap * 2 > f->n + len ? f->cap * 2 : f->n + len;
        if (cap < 256) cap = 256;
        if (cap > PTTS_FEED_MAX_BYTES) cap = PTTS_FEED_MAX_BYTES;
        char *p = realloc(f->p, cap);
        if (!p) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
        f->p = p;
        f->cap = cap;
    }
    if (len) memcpy(f->p + f->n, text, len);
    f->n += len;
    return 0;
}

int ptts_feed_flush(ptts_feed *f, int end, ptts_error *e) {
    if (f->ended) return ptts_fail(e, PTTS_E_INVALID, "the utterance's text has ended");
    f->flushed = f->n;
    f->ended = end;
    return 0;
}

int ptts_feed_take(ptts_feed *f, unsigned flags, char **text, size_t *len, ptts_error *e) {
    size_t cut = f->ended ? f->n : ptts_text_complete(f->p, f->n, flags);
    if (cut < f->flushed) cut = f->flushed;
    *text = NULL;
    *len = 0;
    if (cut == 0) return 0;
    char *t = malloc(cut + 1);
    if (!t) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    memcpy(t, f->p, cut);
    t[cut] = '\0';
    memmove(f->p, f->p + cut, f->n - cut);
    f->n -= cut;
    f->flushed = f->flushed > cut ? f->flushed - cut : 0;
    *text = t;
    *len = cut;
    return 0;
}

void ptts_feed_free(ptts_feed *f) {
    free(f->p);
    memset(f, 0, sizeof *f);
}
