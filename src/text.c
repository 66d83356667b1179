/*
 * text.c - the reference's prepare_text_prompt and split_into_best_sentences (MODEL.md section 8),
 * reproduced with Python's string semantics so that chunk texts and ids match the reference
 * byte for byte.
 *
 * Why each piece is here:
 * - Python's str.strip()/str.split() whitespace is "general category Zs, or bidirectional class
 *   WS, B or S" (Objects/unicodectype.c, Tools/unicode/makeunicodedata.py); utf8proc gives both
 *   properties, so the same set falls out (TAB..CR, 0x1C..0x1F, space, NEL, NBSP, U+1680,
 *   U+2000..200A, U+2028/2029, U+202F, U+205F, U+3000).
 * - str.isalnum() on one character is isalpha (Lu Ll Lt Lm Lo) or isdecimal/isdigit/isnumeric,
 *   and every character with a numeric value is in Nd, Nl or No: so "category L* or N*". Checked
 *   against CPython 3.11 over every assigned code point.
 * - str.isupper() on one character is the Unicode "Uppercase" property (Lu plus Other_Uppercase).
 *   The Other_Uppercase characters (Roman numerals, circled/squared Latin capitals) are their own
 *   uppercase, so "not Lu -> replace by upper()" gives the same text; we test Lu only.
 * - str.upper() uses the full case mapping: utf8proc_toupper (the simple mapping) plus the
 *   unconditional multi-character mappings of SpecialCasing.txt (special_upper below: every code
 *   point whose Python upper() is longer than one character, e.g. U+00DF -> "SS").
 * - Invalid UTF-8 bytes never reach Python; here each is kept as an opaque one-byte character
 *   with no property (not space, not upper-cased, not alphanumeric), so nothing crashes and the
 *   bytes go on to the tokenizer, which handles them like SentencePiece.
 * Every pass is linear in the text length; merging appends into a growing buffer.
 */
#include "text.h"

#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

/* Unconditional multi-character uppercase mappings (SpecialCasing.txt, as CPython applies them in
 * str.upper()); sorted by code point. Unused trailing slots are 0. */
static const struct {
    uint32_t cp;
    uint32_t up[3];
} special_upper[] = {
    {0x00DF, {0x0053, 0x0053, 0x0000}}, {0x0149, {0x02BC, 0x004E, 0x0000}},
    {0x01F0, {0x004A, 0x030C, 0x0000}}, {0x0390, {0x0399, 0x0308, 0x0301}},
    {0x03B0, {0x03A5, 0x0308, 0x0301}}, {0x0587, {0x0535, 0x0552, 0x0000}},
    {0x1E96, {0x0048, 0x0331, 0x0000}}, {0x1E97, {0x0054, 0x0308, 0x0000}},
    {0x1E98, {0x0057, 0x030A, 0x0000}}, {0x1E99, {0x0059, 0x030A, 0x0000}},
    {0x1E9A, {0x0041, 0x02BE, 0x0000}}, {0x1F50, {0x03A5, 0x0313, 0x0000}},
    {0x1F52, {0x03A5, 0x0313, 0x0300}}, {0x1F54, {0x03A5, 0x0313, 0x0301}},
    {0x1F56, {0x03A5, 0x0313, 0x0342}}, {0x1F80, {0x1F08, 0x0399, 0x0000}},
    {0x1F81, {0x1F09, 0x0399, 0x0000}}, {0x1F82, {0x1F0A, 0x0399, 0x0000}},
    {0x1F83, {0x1F0B, 0x0399, 0x0000}}, {0x1F84, {0x1F0C, 0x0399, 0x0000}},
    {0x1F85, {0x1F0D, 0x0399, 0x0000}}, {0x1F86, {0x1F0E, 0x0399, 0x0000}},
    {0x1F87, {0x1F0F, 0x0399, 0x0000}}, {0x1F88, {0x1F08, 0x0399, 0x0000}},
    {0x1F89, {0x1F09, 0x0399, 0x0000}}, {0x1F8A, {0x1F0A, 0x0399, 0x0000}},
    {0x1F8B, {0x1F0B, 0x0399, 0x0000}}, {0x1F8C, {0x1F0C, 0x0399, 0x0000}},
    {0x1F8D, {0x1F0D, 0x0399, 0x0000}}, {0x1F8E, {0x1F0E, 0x0399, 0x0000}},
    {0x1F8F, {0x1F0F, 0x0399, 0x0000}}, {0x1F90, {0x1F28, 0x0399, 0x0000}},
    {0x1F91, {0x1F29, 0x0399, 0x0000}}, {0x1F92, {0x1F2A, 0x0399, 0x0000}},
    {0x1F93, {0x1F2B, 0x0399, 0x0000}}, {0x1F94, {0x1F2C, 0x0399, 0x0000}},
    {0x1F95, {0x1F2D, 0x0399, 0x0000}}, {0x1F96, {0x1F2E, 0x0399, 0x0000}},
    {0x1F97, {0x1F2F, 0x0399, 0x0000}}, {0x1F98, {0x1F28, 0x0399, 0x0000}},
    {0x1F99, {0x1F29, 0x0399, 0x0000}}, {0x1F9A, {0x1F2A, 0x0399, 0x0000}},
    {0x1F9B, {0x1F2B, 0x0399, 0x0000}}, {0x1F9C, {0x1F2C, 0x0399, 0x0000}},
    {0x1F9D, {0x1F2D, 0x0399, 0x0000}}, {0x1F9E, {0x1F2E, 0x0399, 0x0000}},
    {0x1F9F, {0x1F2F, 0x0399, 0x0000}}, {0x1FA0, {0x1F68, 0x0399, 0x0000}},
    {0x1FA1, {0x1F69, 0x0399, 0x0000}}, {0x1FA2, {0x1F6A, 0x0399, 0x0000}},
    {0x1FA3, {0x1F6B, 0x0399, 0x0000}}, {0x1FA4, {0x1F6C, 0x0399, 0x0000}},
    {0x1FA5, {0x1F6D, 0x0399, 0x0000}}, {0x1FA6, {0x1F6E, 0x0399, 0x0000}},
    {0x1FA7, {0x1F6F, 0x0399, 0x0000}}, {0x1FA8, {0x1F68, 0x0399, 0x0000}},
    {0x1FA9, {0x1F69, 0x0399, 0x0000}}, {0x1FAA, {0x1F6A, 0x0399, 0x0000}},
    {0x1FAB, {0x1F6B, 0x0399, 0x0000}}, {0x1FAC, {0x1F6C, 0x0399, 0x0000}},
    {0x1FAD, {0x1F6D, 0x0399, 0x0000}}, {0x1FAE, {0x1F6E, 0x0399, 0x0000}},
    {0x1FAF, {0x1F6F, 0x0399, 0x0000}}, {0x1FB2, {0x1FBA, 0x0399, 0x0000}},
    {0x1FB3, {0x0391, 0x0399, 0x0000}}, {0x1FB4, {0x0386, 0x0399, 0x0000}},
    {0x1FB6, {0x0391, 0x0342, 0x0000}}, {0x1FB7, {0x0391, 0x0342, 0x0399}},
    {0x1FBC, {0x0391, 0x0399, 0x0000}}, {0x1FC2, {0x1FCA, 0x0399, 0x0000}},
    {0x1FC3, {0x0397, 0x0399, 0x0000}}, {0x1FC4, {0x0389, 0x0399, 0x0000}},
    {0x1FC6, {0x0397, 0x0342, 0x0000}}, {0x1FC7, {0x0397, 0x0342, 0x0399}},
    {0x1FCC, {0x0397, 0x0399, 0x0000}}, {0x1FD2, {0x0399, 0x0308, 0x0300}},
    {0x1FD3, {0x0399, 0x0308, 0x0301}}, {0x1FD6, {0x0399, 0x0342, 0x0000}},
    {0x1FD7, {0x0399, 0x0308, 0x0342}}, {0x1FE2, {0x03A5, 0x0308, 0x0300}},
    {0x1FE3, {0x03A5, 0x0308, 0x0301}}, {0x1FE4, {0x03A1, 0x0313, 0x0000}},
    {0x1FE6, {0x03A5, 0x0342, 0x0000}}, {0x1FE7, {0x03A5, 0x0308, 0x0342}},
    {0x1FF2, {0x1FFA, 0x0399, 0x0000}}, {0x1FF3, {0x03A9, 0x0399, 0x0000}},
    {0x1FF4, {0x038F, 0x0399, 0x0000}}, {0x1FF6, {0x03A9, 0x0342, 0x0000}},
    {0x1FF7, {0x03A9, 0x0342, 0x0399}}, {0x1FFC, {0x03A9, 0x0399, 0x0000}},
    {0xFB00, {0x0046, 0x0046, 0x0000}}, {0xFB01, {0x0046, 0x0049, 0x0000}},
    {0xFB02, {0x0046, 0x004C, 0x0000}}, {0xFB03, {0x0046, 0x0046, 0x0049}},
    {0xFB04, {0x0046, 0x0046, 0x004C}}, {0xFB05, {0x0053, 0x0054, 0x0000}},
    {0xFB06, {0x0053, 0x0054, 0x0000}}, {0xFB13, {0x0544, 0x0546, 0x0000}},
    {0xFB14, {0x0544, 0x0535, 0x0000}}, {0xFB15, {0x0544, 0x053B, 0x0000}},
    {0xFB16, {0x054E, 0x0546, 0x0000}}, {0xFB17, {0x0544, 0x053D, 0x0000}},
};

/* Decode one character at s[i] (i < n): returns its byte length and sets *cp, or -1 in *cp for
 * an invalid byte (length 1). */
static size_t u8_next(const char *s, size_t n, size_t i, int32_t *cp) {
    utf8proc_int32_t c;
    utf8proc_ssize_t len =
        utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(n - i), &c);
    if (len <= 0) {
        *cp = -1;
        return 1;
    }
    *cp = c;
    return (size_t)len;
}

static int py_isspace(int32_t cp) {
    if (cp < 0) return 0;
    if (cp < 0x80) return cp == ' ' || (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x1f);
    const utf8proc_property_t *p = utf8proc_get_property(cp);
    return p->category == UTF8PROC_CATEGORY_ZS || p->bidi_class == UTF8PROC_BIDI_CLASS_WS ||
           p->bidi_class == UTF8PROC_BIDI_CLASS_B || p->bidi_class == UTF8PROC_BIDI_CLASS_S;
}

static int py_isalnum(int32_t cp) {
    if (cp < 0) return 0;
    utf8proc_category_t c = utf8proc_category(cp);
    return (c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO) ||
           (c >= UTF8PROC_CATEGORY_ND && c <= UTF8PROC_CATEGORY_NO);
}

/* Python's str.upper() of one character, UTF-8 encoded into out (at most 12 bytes). */
static size_t py_upper(int32_t cp, char *out) {
    size_t lo = 0, hi = sizeof special_upper / sizeof special_upper[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (special_upper[mid].cp < (uint32_t)cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < sizeof special_upper / sizeof special_upper[0] &&
        special_upper[lo].cp == (uint32_t)cp) {
        size_t k = 0;
        for (int j = 0; j < 3 && special_upper[lo].up[j]; j++)
            k += (size_t)utf8proc_encode_char((utf8proc_int32_t)special_upper[lo].up[j],
                                              (utf8proc_uint8_t *)out + k);
        return k;
    }
    return (size_t)utf8proc_encode_char(utf8proc_toupper(cp), (utf8proc_uint8_t *)out);
}

/* Python's str.strip(): the [*b, *end) byte range without leading/trailing whitespace. */
static void py_strip(const char *s, size_t n, size_t *b, size_t *end) {
    size_t i = 0, first = n, last = n;
    while (i < n) {
        int32_t cp;
        size_t len = u8_next(s, n, i, &cp);
        if (!py_isspace(cp)) {
            if (first == n) first = i;
            last = i + len;
        }
        i += len;
    }
    if (first == n) {
        *b = *end = n;
        return;
    }
    *b = first;
    *end = last;
}

/* len(s.split()) */
static size_t py_word_count(const char *s, size_t n) {
    size_t i = 0, words = 0;
    int in_word = 0;
    while (i < n) {
        int32_t cp;
        size_t len = u8_next(s, n, i, &cp);
        int sp = py_isspace(cp);
        if (!sp && !in_word) words++;
        in_word = !sp;
        i += len;
    }
    return words;
}

/* The code point of the last character of s[0..n), n > 0 (-1 when it is an invalid byte). */
static int32_t last_char(const char *s, size_t n) {
    size_t start = n - 1;
    while (start > 0 && n - start < 4 && ((unsigned char)s[start] & 0xc0) == 0x80)
        start--;
    int32_t cp;
    size_t len = u8_next(s, n, start, &cp);
    return start + len == n ? cp : -1;
}

static int prepare(const char *text, size_t n, int pad_with_spaces, int remove_semicolons,
                   char **out, size_t *out_len, int *guess, ptts_error *e) {
    size_t b, end;
    py_strip(text, n, &b, &end);
    if (b == end) return ptts_fail(e, PTTS_E_TEXT, "Text prompt cannot be empty");
    size_t m = end - b;
    /* 8 spaces of padding + the first character growing to at most 3 code points (12 bytes) +
     * the final '.' + NUL. */
    char *buf = malloc(m + 8 + 12 + 2);
    if (!buf) return ptts_fail(e, PTTS_E_NOMEM, "out of memory preparing %zu bytes of text", m);
    char *t = buf + 8 + 12; /* the working text; the prefix room is for padding and upper() */

    /* text.replace("\n", " ").replace("\r", " ").replace("  ", " "), then ";" -> "," when
     * asked (';' is not a space, so it is independent of the space collapsing). */
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        char c = text[b + i];
        if (c == '\n' || c == '\r')
            c = ' ';
        else if (c == ';' && remove_semicolons)
            c = ',';
        t[k++] = c;
    }
    size_t w = 0;
    for (size_t i = 0; i < k;) {
        if (t[i] == ' ' && i + 1 < k && t[i + 1] == ' ') {
            t[w++] = ' ';
            i += 2;
        } else {
            t[w++] = t[i++];
        }
    }
    m = w;

    /* Replacing never turns a non-space into a space, so the text still starts and ends with
     * non-spaces; the word count cannot change below (upper() of a non-space is no space, '.'
     * joins the last word). */
    size_t words = py_word_count(t, m);
    *guess = words <= 4 ? 3 : 1;

    int32_t cp;
    size_t len0 = u8_next(t, m, 0, &cp);
    if (cp >= 0 && utf8proc_category(cp) != UTF8PROC_CATEGORY_LU) {
        char up[12];
        size_t ul = py_upper(cp, up);
        /* The text is t[0..m); its first character (len0 bytes) becomes up[0..ul). */
        char *nt = t + len0 - ul;
        memcpy(nt, up, ul);
        m = m - len0 + ul;
        t = nt;
    }
    if (py_isalnum(last_char(t, m))) t[m++] = '.';
    if (pad_with_spaces && words < 5) {
        t -= 8;
        memset(t, ' ', 8);
        m += 8;
    }
    memmove(buf, t, m);
    buf[m] = '\0';
    *out = buf;
    *out_len = m;
    return PTTS_OK;
}

ptts_text_options ptts_text_options_default(void) {
    ptts_text_options o = {0};
    o.append_terminal_punctuation = 1;
    o.capitalize_first_letter = 1;
    return o;
}

int ptts_text_prepare(const char *text, const ptts_text_options *o, char **out,
                      int *guess, ptts_error *e) {
    if (!text || !out || !guess)
        return ptts_fail(e, PTTS_E_INVALID, "ptts_text_prepare: NULL argument");
    size_t len;
    *out = NULL;
    return prepare(text, strlen(text), o->pad_with_spaces, o->remove_semicolons, out, &len, guess, e);
}

/* A growing byte buffer. */
typedef struct {
    char *p;
    size_t n, cap;
} sbuf;

static int sb_add(sbuf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1) {
            if (cap > SIZE_MAX / 2) return -1;
            cap *= 2;
        }
        char *p = realloc(b->p, cap);
        if (!p) return -1;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
    return 0;
}

typedef struct {
    int count;  /* number of ids the text came from */
    char *text; /* decoded text */
} segment;

typedef struct {
    segment *v;
    size_t n, cap;
} seglist;

static int seg_push(seglist *l, int count, char *text) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        segment *v = realloc(l->v, cap * sizeof *v);
        if (!v) return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n].count = count;
    l->v[l->n].text = text;
    l->n++;
    return 0;
}

static void seg_free(seglist *l) {
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].text);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

static int in_set(int id, const int *set, int n) {
    for (int i = 0; i < n; i++)
        if (set[i] == id) return 1;
    return 0;
}

/* _find_boundary_indices then _segments_from_boundaries: cut after every run of boundary ids
 * (the cut is at the first non-boundary id following one) and decode each piece. */
static int segments(const ptts_tokenizer *tok, const int *ids, int n, const int *set, int nset,
                    seglist *out, ptts_error *e) {
    int start = 0, prev = 0;
    for (int i = 0; i <= n; i++) {
        int cut = i == n;
        if (i < n) {
            if (in_set(ids[i], set, nset)) {
                prev = 1;
                continue;
            }
            cut = prev;
            prev = 0;
        }
        if (!cut) continue;
        char *s;
        int rc = ptts_tokenizer_decode(tok, ids + start, i - start, &s, e);
        if (rc) return rc;
        if (seg_push(out, i - start, s)) {
            free(s);
            return ptts_fail(e, PTTS_E_NOMEM, "out of memory splitting text");
        }
        start = i;
    }
    return PTTS_OK;
}

/* The ids of `s` without the first one (the reference's `_, *rest = tokenizer(s)`). */
static int tail_ids(const ptts_tokenizer *tok, const char *s, int **ids, int *n, ptts_error *e) {
    int rc = ptts_tokenizer_encode(tok, s, strlen(s), ids, n, e);
    if (rc) return rc;
    if (*n > 0) {
        memmove(*ids, *ids + 1, (size_t)(*n - 1) * sizeof **ids);
        (*n)--;
    }
    return PTTS_OK;
}

/* Append stripped(s[0..n)) as a new chunk. */
static int chunk_push(ptts_chunk **v, int *n, size_t *cap, const char *s, size_t len) {
    if ((size_t)*n == *cap) {
        size_t c = *cap ? *cap * 2 : 8;
        ptts_chunk *nv = realloc(*v, c * sizeof *nv);
        if (!nv) return -1;
        *v = nv;
        *cap = c;
    }
    size_t b, end;
    py_strip(s, len, &b, &end);
    char *t = malloc(end - b + 1);
    if (!t) return -1;
    memcpy(t, s + b, end - b);
    t[end - b] = '\0';
    (*v)[*n].text = t;
    (*v)[*n].model_text = NULL;
    (*v)[*n].ids = NULL;
    (*v)[*n].n_ids = 0;
    (*v)[*n].guess = 1;
    (*n)++;
    return 0;
}

void ptts_chunks_free(ptts_chunk *chunks, int n) {
    if (!chunks) return;
    for (int i = 0; i < n; i++) {
        free(chunks[i].text);
        free(chunks[i].model_text);
        free(chunks[i].ids);
    }
    free(chunks);
}

/* 3.3: the chunk is prepared again and the prepared text is what is tokenised (MODEL.md 8.4). */
static int chunk_finish(const ptts_tokenizer *tok, ptts_chunk *c, const ptts_text_options *o,
                        ptts_error *e) {
    size_t len;
    int rc = prepare(c->text, strlen(c->text), o->pad_with_spaces, o->remove_semicolons,
                     &c->model_text, &len, &c->guess, e);
    if (rc) return rc;
    return ptts_tokenizer_encode(tok, c->model_text, len, &c->ids, &c->n_ids, e);
}

int ptts_text_split(const ptts_tokenizer *tok, const char *text, int max_tokens,
                    const ptts_text_options *o, ptts_chunk **chunks, int *n, ptts_error *e) {
    if (!tok || !text || !o || !chunks || !n)
        return ptts_fail(e, PTTS_E_INVALID, "ptts_text_split: NULL argument");
    if (max_tokens < 1)
        return ptts_fail(e, PTTS_E_INVALID, "max_tokens must be at least 1 (got %d)", max_tokens);
    *chunks = NULL;
    *n = 0;

    char *prepared = NULL;
    int *ids = NULL, *ends = NULL, *commas = NULL, *sub = NULL;
    int n_ids = 0, n_ends = 0, n_commas = 0, n_sub = 0, guess;
    seglist sentences = {0}, refined = {0};
    sbuf cur = {0};
    ptts_chunk *out = NULL;
    int n_out = 0;
    size_t cap_out = 0;
    size_t plen, b, end;

    int rc = prepare(text, strlen(text), o->pad_with_spaces, o->remove_semicolons, &prepared, &plen,
                     &guess, e);
    if (rc) goto done;
    py_strip(prepared, plen, &b, &end);
    if ((rc = ptts_tokenizer_encode(tok, prepared + b, end - b, &ids, &n_ids, e))) goto done;
    if ((rc = tail_ids(tok, ".!...?", &ends, &n_ends, e))) goto done;
    if ((rc = segments(tok, ids, n_ids, ends, n_ends, &sentences, e))) goto done;

    /* Sentences longer than max_tokens: re-tokenize the stripped text and cut on ",;:". */
    if ((rc = tail_ids(tok, ",;:", &commas, &n_commas, e))) goto done;
    for (size_t i = 0; i < sentences.n; i++) {
        segment *s = &sentences.v[i];
        if (s->count > max_tokens) {
            size_t sb, se;
            py_strip(s->text, strlen(s->text), &sb, &se);
            free(sub);
            sub = NULL;
            if ((rc = ptts_tokenizer_encode(tok, s->text + sb, se - sb, &sub, &n_sub, e)))
                goto done;
            seglist parts = {0};
            if ((rc = segments(tok, sub, n_sub, commas, n_commas, &parts, e))) {
                seg_free(&parts);
                goto done;
            }
            if (parts.n > 1) {
                size_t j = 0;
                for (; j < parts.n; j++) {
                    if (seg_push(&refined, parts.v[j].count, parts.v[j].text)) break;
                    parts.v[j].text = NULL;
                }
                if (j < parts.n) {
                    seg_free(&parts);
                    rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory splitting text");
                    goto done;
                }
                free(parts.v);
                continue;
            }
            seg_free(&parts);
        }
        if (seg_push(&refined, s->count, s->text)) {
            rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory splitting text");
            goto done;
        }
        s->text = NULL;
    }

    /* Greedy merge; like the reference, "no current chunk" means an empty current text. */
    long long cur_count = 0;
    for (size_t i = 0; i < refined.n; i++) {
        const segment *s = &refined.v[i];
        size_t sl = strlen(s->text);
        int fail = 0;
        if (cur.n == 0) {
            cur.n = 0;
            fail = sb_add(&cur, s->text, sl);
            cur_count = s->count;
        } else if (cur_count + s->count > max_tokens) {
            fail = chunk_push(&out, &n_out, &cap_out, cur.p, cur.n);
            cur.n = 0;
            fail = fail || sb_add(&cur, s->text, sl);
            cur_count = s->count;
        } else {
            fail = sb_add(&cur, " ", 1) || sb_add(&cur, s->text, sl);
            cur_count += s->count;
        }
        if (fail) {
            rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory merging text chunks");
            goto done;
        }
    }
    if (cur.n > 0 && chunk_push(&out, &n_out, &cap_out, cur.p, cur.n)) {
        rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory merging text chunks");
        goto done;
    }

    for (int i = 0; i < n_out; i++) {
        if ((rc = chunk_finish(tok, &out[i], o, e))) goto done;
        if (out[i].n_ids > max_tokens)
            ptts_log(PTTS_LOG_WARN,
                     "Chunk has %d tokens (max %d), generation may skip words: '%.50s...'",
                     out[i].n_ids, max_tokens, out[i].text);
    }
    *chunks = out;
    *n = n_out;
    out = NULL;
    n_out = 0;

done:
    ptts_chunks_free(out, n_out);
    free(cur.p);
    seg_free(&refined);
    seg_free(&sentences);
    free(sub);
    free(commas);
    free(ends);
    free(ids);
    free(prepared);
    return rc;
}

/* A chunk the reference would keep whole even though it has more than `hard_max` ids (a
 * "sentence" with no punctuation at all, such as megabytes of words) is cut at word
 * boundaries into pieces of about max_tokens ids (counted per word). Chunks within hard_max are
 * untouched, so ordinary text is chunked exactly like the reference. */
int ptts_chunks_limit(const ptts_tokenizer *tok, ptts_chunk **chunks, int *n, int max_tokens,
                      int hard_max, const ptts_text_options *o, ptts_error *e) {
    ptts_chunk *in = *chunks, *out = NULL;
    int n_in = *n, n_out = 0, rc = 0;
    size_t cap_out = 0;
    int *wids = NULL, nw = 0;
    for (int c = 0; c < n_in; c++) {
        if (in[c].n_ids <= hard_max) {
            if ((size_t)n_out == cap_out) {
                size_t cap = cap_out ? 2 * cap_out : 8;
                ptts_chunk *nv = realloc(out, cap * sizeof *nv);
                if (!nv) goto nomem;
                out = nv;
                cap_out = cap;
            }
            out[n_out++] = in[c];
            in[c].text = NULL;
            in[c].model_text = NULL;
            in[c].ids = NULL;
            continue;
        }
        ptts_log(PTTS_LOG_WARN, "a sentence of %d tokens without punctuation is cut at word "
                                "boundaries into pieces of about %d tokens",
                 in[c].n_ids, max_tokens);
        const char *s = in[c].text;
        size_t len = strlen(s), i = 0, piece = 0;
        int count = 0;
        while (i < len) {
            /* next word: [ws, we) */
            int32_t cp;
            size_t ws = i;
            while (ws < len) {
                size_t nx = ws + u8_next(s, len, ws, &cp);
                if (!py_isspace(cp)) break;
                ws = nx;
            }
            size_t we = ws;
            while (we < len) {
                size_t nx = we + u8_next(s, len, we, &cp);
                if (py_isspace(cp)) break;
                we = nx;
            }
            if (we == ws) break;
            free(wids);
            wids = NULL;
            if ((rc = ptts_tokenizer_encode(tok, s + ws, we - ws, &wids, &nw, e))) goto fail;
            if (count > 0 && count + nw > max_tokens) {
                if (chunk_push(&out, &n_out, &cap_out, s + piece, ws - piece)) goto nomem;
                piece = ws;
                count = 0;
            }
            count += nw;
            i = we;
        }
        if (piece < len && chunk_push(&out, &n_out, &cap_out, s + piece, len - piece)) goto nomem;
        for (int k = 0; k < n_out; k++) {
            if (out[k].ids || !out[k].text) continue;
            if ((rc = chunk_finish(tok, &out[k], o, e))) goto fail;
        }
    }
    free(wids);
    ptts_chunks_free(in, n_in);
    *chunks = out;
    *n = n_out;
    return 0;
nomem:
    rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory splitting a long sentence");
fail:
    free(wids);
    ptts_chunks_free(out, n_out);
    return rc;
}
