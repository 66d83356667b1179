/*
 * markup.c - pauses and SSML in input text (the rules are in markup.h).
 *
 * One left-to-right pass over the input. Text bytes are appended to one arena allocated up front
 * (len + 1 bytes is enough: entities and aliases never grow, and every text segment's NUL is paid
 * for by the markup of at least 7 bytes that ends it, "[pause]" being the shortest); the bytes
 * since the last pause are the pending text. A pause flushes the pending text as a segment (or
 * drops it when it is whitespace) and adds to the previous pause when no text came between.
 * Every scan ahead (a tag, a comment, an entity) either consumes what it scanned or stops the
 * parse with an error, so the pass stays linear.
 */
#include "markup.h"

#include <stdlib.h>
#include <string.h>

#include "text_py.h"

#define NS_PER_S 1000000000LL
#define MAX_PAUSE_NS (10 * NS_PER_S)
#define SNIPPET_MAX 48
#define ENTITY_MAX 32 /* longest entity scanned for its ";" ("&#x" plus leading zeros) */

typedef struct parser {
    const char *s; /* input s[0..n) */
    size_t n;
    unsigned flags;
    char *out; /* text arena */
    size_t out_n;
    size_t pend;     /* start of the pending text in out */
    size_t pend_src; /* input offset of the pending text's first byte */
    ptts_segment *seg;
    size_t n_seg, cap_seg;
    int speak_depth; /* open <speak> elements: entities are decoded inside */
    ptts_error *e;
} parser;

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }
static int is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_blank(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static int is_word(int c) { return is_alpha(c) || is_digit(c) || c == '-' || c == '_'; }
static int is_name(int c) { return is_word(c) || c == ':' || c == '.'; }

/* s[0..n) starts with the ASCII word w, in any case. */
static int starts_ci(const char *s, size_t n, const char *w) {
    size_t k = strlen(w);
    if (n < k) return 0;
    for (size_t i = 0; i < k; i++)
        if (lower((unsigned char)s[i]) != w[i]) return 0;
    return 1;
}

static int equals_ci(const char *s, size_t n, const char *w) {
    return n == strlen(w) && starts_ci(s, n, w);
}

/* The error "markup at byte AT: SNIPPET: why", SNIPPET being s[at..at+len) cut at SNIPPET_MAX
 * bytes (then "..."), with control characters and invalid UTF-8 (a character cut there too)
 * shown as "?". */
static int fail(parser *p, size_t at, size_t len, const char *why) {
    char snip[SNIPPET_MAX * 3 + 4];
    size_t k = 0, i = at, end = at + PTTS_MIN(len, p->n - at);
    int cut = 0;
    if (end - at > SNIPPET_MAX) {
        end = at + SNIPPET_MAX;
        cut = 1;
    }
    while (i < end) {
        int32_t cp;
        size_t l = py_u8_next(p->s, end, i, &cp);
        if (cp < 0x20 || cp == 0x7f) {
            snip[k++] = '?';
        } else {
            memcpy(snip + k, p->s + i, l);
            k += l;
        }
        i += l;
    }
    if (cut) {
        memcpy(snip + k, "...", 3);
        k += 3;
    }
    snip[k] = 0;
    return ptts_fail(p->e, PTTS_E_TEXT, "markup at byte %zu: %s: %s", at, snip, why);
}

static int push_segment(parser *p, ptts_segment sg) {
    if (p->n_seg == p->cap_seg) {
        size_t cap = p->cap_seg ? 2 * p->cap_seg : 16;
        ptts_segment *g = realloc(p->seg, cap * sizeof *g);
        if (!g) return ptts_fail(p->e, PTTS_E_NOMEM, "markup: out of memory (%zu segments)", cap);
        p->seg = g;
        p->cap_seg = cap;
    }
    p->seg[p->n_seg++] = sg;
    return PTTS_OK;
}

/* Append text bytes taken from input offset `src`. */
static void emit(parser *p, size_t src, const char *b, size_t len) {
    if (p->out_n == p->pend) p->pend_src = src;
    memcpy(p->out + p->out_n, b, len);
    p->out_n += len;
}

static int pending_is_blank(const parser *p) {
    const char *t = p->out + p->pend;
    size_t n = p->out_n - p->pend, i = 0;
    while (i < n) {
        int32_t cp;
        size_t l = py_u8_next(t, n, i, &cp);
        if (!py_isspace(cp)) return 0;
        i += l;
    }
    return 1;
}

/* Close the pending text as a segment (kept even when blank if `keep_blank`). */
static int flush_text(parser *p, int keep_blank) {
    if (!keep_blank && pending_is_blank(p)) {
        p->out_n = p->pend;
        return PTTS_OK;
    }
    ptts_segment sg = {PTTS_SEGMENT_TEXT, NULL, p->out_n - p->pend, 0, p->pend_src};
    sg.text = p->out + p->pend; /* the arena is never moved */
    p->out[p->out_n++] = 0;
    p->pend = p->out_n;
    return push_segment(p, sg);
}

/* A written pause of ns nanoseconds (0 <= ns <= MAX_PAUSE_NS) at input offset `at`. */
static int add_pause(parser *p, size_t at, int64_t ns) {
    int64_t samples = (ns * 3 + 62500) / 125000; /* round(ns * 24000 / 1e9), ties up */
    if (samples == 0) return PTTS_OK;
    int rc = flush_text(p, 0);
    if (rc) return rc;
    if (p->n_seg > 0 && p->seg[p->n_seg - 1].kind == PTTS_SEGMENT_PAUSE) {
        p->seg[p->n_seg - 1].samples += samples;
        return PTTS_OK;
    }
    ptts_segment sg = {PTTS_SEGMENT_PAUSE, NULL, 0, samples, at};
    return push_segment(p, sg);
}

enum { DUR_OK, DUR_SYNTAX, DUR_LONG, DUR_FINE };

/* A duration s[0..n): digits with an optional fraction, then "s", "ms" or (when unit_optional,
 * meaning seconds) nothing. -> exact nanoseconds in *ns. */
static int parse_duration(const char *s, size_t n, int unit_optional, int64_t *ns) {
    size_t i = 0;
    int64_t m = 0; /* the digits kept, the last k of them after the point */
    int digits = 0, k = 0, big = 0, tail = 0;
    while (i < n && is_digit(s[i])) {
        if (m > 1000000) /* over 10 s whatever the unit; m stays below 1e16 with 9 decimals */
            big = 1;
        else
            m = m * 10 + (s[i] - '0');
        digits++;
        i++;
    }
    if (i < n && s[i] == '.') {
        size_t f = ++i;
        for (; i < n && is_digit(s[i]); i++) {
            if (k < 9) {
                m = m * 10 + (s[i] - '0');
                k++;
            } else if (s[i] != '0') {
                tail = 1; /* finer than a nanosecond */
            }
        }
        if (i == f) return DUR_SYNTAX;
        digits++;
    }
    if (!digits) return DUR_SYNTAX;
    int exp;
    if (i == n && unit_optional)
        exp = 9;
    else if (equals_ci(s + i, n - i, "s"))
        exp = 9;
    else if (equals_ci(s + i, n - i, "ms"))
        exp = 6;
    else
        return DUR_SYNTAX;
    if (big) return DUR_LONG;
    if (tail) return DUR_FINE;
    while (k > exp && m % 10 == 0) {
        m /= 10;
        k--;
    }
    if (k > exp) return DUR_FINE;
    int64_t scale = 1;
    for (int j = k; j < exp; j++)
        scale *= 10;
    if (m > MAX_PAUSE_NS / scale) return DUR_LONG;
    *ns = m * scale;
    return DUR_OK;
}

static const char *dur_reason(int d, const char *syntax) {
    return d == DUR_LONG   ? "a pause is at most 10 s"
           : d == DUR_FINE ? "a pause is given to the nanosecond at most"
                           : syntax;
}

/* [pause] or [pause:S] at p->s[i] ("[pause" seen, not followed by a word character). */
static int bracket(parser *p, size_t *pos) {
    size_t at = *pos, i = at + 6, n = p->n;
    const char *s = p->s;
    size_t close = i;
    while (close < n && close - at < 64 && s[close] != ']')
        close++;
    size_t shown = close < n && s[close] == ']' ? close + 1 - at : close - at;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    int64_t ns = NS_PER_S / 2;
    if (i < n && s[i] == ':') {
        i++;
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
        size_t b = i;
        while (i < n && (is_digit(s[i]) || s[i] == '.' || is_alpha(s[i])))
            i++;
        size_t e = i;
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i >= n) return fail(p, at, shown, "[pause is not closed by ]");
        if (s[i] != ']')
            return fail(p, at, shown, "pause must be a number of seconds, as in [pause:1.5]");
        int d = parse_duration(s + b, e - b, 1, &ns);
        if (d != DUR_OK)
            return fail(p, at, shown,
                        dur_reason(d, "pause must be a number of seconds, as in [pause:1.5]"));
    } else if (i >= n) {
        return fail(p, at, shown, "[pause is not closed by ]");
    } else if (s[i] != ']') {
        return fail(p, at, shown, "expected ] or :seconds after [pause");
    }
    *pos = i + 1;
    return add_pause(p, at, ns);
}

/* One entity at s[i] ("&" seen; i < lim): its UTF-8 bytes in out (1 to 4) -> their count, or 0
 * and *why set. *end: the offset after its ";" (on failure, where the scan stopped). */
static size_t entity(const char *s, size_t lim, size_t i, char out[4], size_t *end,
                     const char **why) {
    size_t j = i + 1;
    while (j < lim && j - i < ENTITY_MAX && s[j] != ';' && s[j] != '&' && s[j] != '<' &&
           !is_blank(s[j]))
        j++;
    *why = "unknown entity (write & as &amp;)";
    *end = j;
    if (j >= lim || s[j] != ';') return 0;
    *end = j + 1;
    const char *b = s + i + 1;
    size_t len = j - i - 1;
    static const struct {
        const char *name;
        char c;
    } named[] = {{"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
    for (size_t k = 0; k < sizeof named / sizeof named[0]; k++)
        if (len == strlen(named[k].name) && memcmp(b, named[k].name, len) == 0) {
            out[0] = named[k].c;
            return 1;
        }
    if (len < 2 || b[0] != '#') return 0;
    int hex = b[1] == 'x';
    size_t d = hex ? 2 : 1;
    if (d == len) return 0;
    uint32_t cp = 0;
    for (; d < len; d++) {
        int c = lower((unsigned char)b[d]), v;
        if (is_digit(c))
            v = c - '0';
        else if (hex && c >= 'a' && c <= 'f')
            v = c - 'a' + 10;
        else
            return 0;
        cp = cp * (hex ? 16 : 10) + (uint32_t)v;
        if (cp > 0x10ffff) break;
    }
    *why = "character reference outside XML's characters";
    if (cp > 0x10ffff || (cp < 0x20 && cp != 0x9 && cp != 0xa && cp != 0xd) ||
        (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
        return 0;
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Decode the attribute value s[b..e) into dst (room for e - b bytes) -> its length in *len. */
static int decode_value(parser *p, size_t b, size_t e, char *dst, size_t *len) {
    size_t k = 0;
    for (size_t i = b; i < e;) {
        if (p->s[i] != '&') {
            dst[k++] = p->s[i++];
            continue;
        }
        size_t end;
        const char *why;
        size_t m = entity(p->s, e, i, dst + k, &end, &why);
        if (!m) return fail(p, i, end - i, why);
        k += m;
        i = end;
    }
    *len = k;
    return PTTS_OK;
}

typedef struct tag_attr {
    size_t b, e; /* the value's bytes in the input, quotes excluded */
    int set;
} tag_attr;

/* Skip s[*i..) up to and past the first `w` (ASCII, exact); 0 when it does not occur. */
static int skip_past(const parser *p, size_t *i, const char *w) {
    size_t k = strlen(w);
    for (size_t j = *i; j + k <= p->n; j++)
        if (p->s[j] == w[0] && memcmp(p->s + j, w, k) == 0) {
            *i = j + k;
            return 1;
        }
    return 0;
}

/* <!-- -->, <![CDATA[ ]]>, <!DOCTYPE > and <? ?> at s[*pos]. */
static int declaration(parser *p, size_t *pos) {
    size_t at = *pos, i = at + 2;
    const char *s = p->s + at;
    size_t left = p->n - at;
    if (s[1] == '?') {
        if (!skip_past(p, &i, "?>")) return fail(p, at, left, "<? is not closed by ?>");
    } else if (starts_ci(s, left, "<!--")) {
        i = at + 4;
        if (!skip_past(p, &i, "-->")) return fail(p, at, left, "comment is not closed by -->");
    } else if (left >= 9 && memcmp(s, "<![CDATA[", 9) == 0) {
        i = at + 9;
        if (!skip_past(p, &i, "]]>")) return fail(p, at, left, "CDATA is not closed by ]]>");
        emit(p, at + 9, p->s + at + 9, i - 3 - (at + 9));
    } else if (starts_ci(s, left, "<!doctype")) {
        size_t j = at + 9;
        while (j < p->n && p->s[j] != '>' && p->s[j] != '[')
            j++;
        if (j < p->n && p->s[j] == '[' && !skip_past(p, &j, "]"))
            return fail(p, at, left, "<!DOCTYPE is not closed by ]>");
        i = j;
        if (!skip_past(p, &i, ">")) return fail(p, at, left, "<!DOCTYPE is not closed by >");
    } else {
        return fail(p, at, left, "unknown <! declaration");
    }
    *pos = i;
    return PTTS_OK;
}

/* The duration of <break> from its attributes. */
static int break_pause(parser *p, size_t at, size_t len, tag_attr time, tag_attr strength) {
    char v[64];
    size_t vn = 0;
    int64_t ns = NS_PER_S / 2;
    int rc;
    if (time.set) {
        if (time.e - time.b >= sizeof v)
            return fail(p, at, len, "time must be a number followed by s or ms");
        if ((rc = decode_value(p, time.b, time.e, v, &vn))) return rc;
        size_t b = 0;
        while (b < vn && is_blank(v[b]))
            b++;
        while (vn > b && is_blank(v[vn - 1]))
            vn--;
        int d = parse_duration(v + b, vn - b, 0, &ns);
        if (d != DUR_OK)
            return fail(p, at, len, dur_reason(d, "time must be a number followed by s or ms"));
    } else if (strength.set) {
        static const struct {
            const char *name;
            int64_t ms;
        } levels[] = {{"none", 0},     {"x-weak", 100}, {"weak", 250},
                      {"medium", 500}, {"strong", 750}, {"x-strong", 1250}};
        const char *why = "strength must be none, x-weak, weak, medium, strong or x-strong";
        if (strength.e - strength.b >= sizeof v) return fail(p, at, len, why);
        if ((rc = decode_value(p, strength.b, strength.e, v, &vn))) return rc;
        size_t k = 0;
        while (k < sizeof levels / sizeof levels[0] && !equals_ci(v, vn, levels[k].name))
            k++;
        if (k == sizeof levels / sizeof levels[0]) return fail(p, at, len, why);
        ns = levels[k].ms * 1000000;
    }
    return add_pause(p, at, ns);
}

/* A tag at s[*pos] ("<" followed by a letter or "/"). */
static int tag(parser *p, size_t *pos) {
    size_t at = *pos, i = at + 1, n = p->n;
    const char *s = p->s;
    size_t shown = 0; /* the snippet: up to the first ">" */
    while (at + shown < n && shown < 64 && s[at + shown] != '>')
        shown++;
    if (at + shown < n && s[at + shown] == '>') shown++;
    int closing = s[i] == '/';
    if (closing) i++;
    size_t nb = i;
    while (i < n && is_name(s[i]))
        i++;
    if (i == nb) return fail(p, at, shown, "expected a tag name");
    const char *name = s + nb;
    size_t name_n = i - nb;
    tag_attr time = {0, 0, 0}, strength = {0, 0, 0}, alias = {0, 0, 0};
    int self_closing = 0;
    for (;;) {
        size_t ws = i;
        while (i < n && is_blank(s[i]))
            i++;
        if (i >= n) return fail(p, at, shown, "tag is not closed by >");
        if (s[i] == '>') {
            i++;
            break;
        }
        if (s[i] == '/' && !closing) {
            if (i + 1 >= n || s[i + 1] != '>') return fail(p, at, shown, "expected > after /");
            i += 2;
            self_closing = 1;
            break;
        }
        if (closing || !is_alpha(s[i]) || i == ws)
            return fail(p, at, shown, "expected an attribute, > or />");
        size_t ab = i;
        while (i < n && is_name(s[i]))
            i++;
        size_t ae = i;
        while (i < n && is_blank(s[i]))
            i++;
        if (i >= n || s[i] != '=') return fail(p, at, shown, "attribute without =\"value\"");
        i++;
        while (i < n && is_blank(s[i]))
            i++;
        if (i >= n || (s[i] != '"' && s[i] != '\''))
            return fail(p, at, shown, "attribute value must be quoted");
        char q = s[i++];
        size_t vb = i;
        while (i < n && s[i] != q)
            i++;
        if (i >= n) return fail(p, at, shown, "attribute quote is not closed");
        tag_attr v = {vb, i, 1};
        i++;
        if (equals_ci(s + ab, ae - ab, "time")) time = v;
        if (equals_ci(s + ab, ae - ab, "strength")) strength = v;
        if (equals_ci(s + ab, ae - ab, "alias")) alias = v;
    }
    shown = i - at;
    *pos = i;
    if (equals_ci(name, name_n, "speak")) {
        if (closing && p->speak_depth > 0) p->speak_depth--;
        if (!closing && !self_closing) p->speak_depth++;
        return PTTS_OK;
    }
    if (!closing && equals_ci(name, name_n, "break"))
        return break_pause(p, at, shown, time, strength);
    if (!closing && alias.set && equals_ci(name, name_n, "sub")) {
        size_t len = 0, end = i;
        if (!self_closing) {
            for (;;) {
                if (!skip_past(p, &end, "</"))
                    return fail(p, at, shown, "<sub> is not closed by </sub>");
                if (starts_ci(s + end, n - end, "sub")) {
                    size_t j = end + 3;
                    while (j < n && is_blank(s[j]))
                        j++;
                    if (j < n && s[j] == '>') {
                        end = j + 1;
                        break;
                    }
                }
            }
        }
        if (p->out_n == p->pend) p->pend_src = at;
        int rc = decode_value(p, alias.b, alias.e, p->out + p->out_n, &len);
        if (rc) return rc;
        p->out_n += len;
        *pos = end;
    }
    return PTTS_OK;
}

static int parse(parser *p) {
    const char *s = p->s;
    size_t n = p->n, i = 0;
    int br = (p->flags & PTTS_MARKUP_BRACKETS) != 0, ssml = (p->flags & PTTS_MARKUP_SSML) != 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        int rc = PTTS_OK;
        if (br && c == '[' && starts_ci(s + i + 1, n - i - 1, "pause") &&
            !(i + 6 < n && is_word(s[i + 6]))) {
            rc = bracket(p, &i);
        } else if (ssml && c == '<' && i + 1 < n && (s[i + 1] == '!' || s[i + 1] == '?')) {
            rc = declaration(p, &i);
        } else if (ssml && c == '<' && i + 1 < n && (is_alpha(s[i + 1]) || s[i + 1] == '/')) {
            rc = tag(p, &i);
        } else if (ssml && c == '&' &&
                   (p->speak_depth > 0 || (p->flags & PTTS_MARKUP_SSML_DOCUMENT))) {
            char u[4];
            size_t end;
            const char *why;
            size_t m = entity(s, n, i, u, &end, &why);
            if (!m) return fail(p, i, end - i, why);
            emit(p, i, u, m);
            i = end;
        } else {
            emit(p, i, s + i, 1);
            i++;
        }
        if (rc) return rc;
    }
    return flush_text(p, p->n_seg == 0);
}

int ptts_markup_parse(const char *text, size_t len, unsigned flags, ptts_markup **out,
                      ptts_error *e) {
    if (!out) return ptts_fail(e, PTTS_E_INVALID, "markup: no output");
    *out = NULL;
    if (!text && len) return ptts_fail(e, PTTS_E_INVALID, "markup: no text");
    parser p;
    memset(&p, 0, sizeof p);
    p.s = text ? text : "";
    p.n = len;
    p.flags = flags;
    p.e = e;
    p.out = malloc(len + 1);
    if (!p.out) return ptts_fail(e, PTTS_E_NOMEM, "markup: out of memory (%zu bytes)", len + 1);
    int rc;
    if (!(flags & (PTTS_MARKUP_BRACKETS | PTTS_MARKUP_SSML))) {
        emit(&p, 0, p.s, len);
        rc = flush_text(&p, 1);
    } else {
        rc = parse(&p);
    }
    ptts_markup *m = rc ? NULL : malloc(sizeof *m);
    if (!m) {
        free(p.out);
        free(p.seg);
        return rc ? rc : ptts_fail(e, PTTS_E_NOMEM, "markup: out of memory");
    }
    m->segments = p.seg;
    m->n = p.n_seg;
    m->text = p.out;
    *out = m;
    return PTTS_OK;
}

void ptts_markup_free(ptts_markup *m) {
    if (!m) return;
    free(m->segments);
    free(m->text);
    free(m);
}
