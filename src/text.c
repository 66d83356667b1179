/*
 * text.c - the reference's prepare_text_prompt and split_into_best_sentences of 3.3 (MODEL.md
 * sections 8.1 to 8.4), reproduced with Python's string semantics so that chunk texts and ids
 * match the reference byte for byte.
 *
 * Map: prepare (8.1, with the replace step and ensure_terminal_punctuation of 8.2) -> the
 * decimal-point test and segment boundaries (8.3) -> refine and the greedy merge -> the per-chunk
 * preparation of 8.4 (chunk_finish) -> ptts_chunks_limit.
 *
 * Python's character rules (whitespace, isupper/upper, isdigit) are in text_py.c.
 *
 * Why the split is built this way:
 * - The decimal-point test decodes ids[:i] and ids[i:] in full in the reference, once per
 *   sentence end: quadratic on long texts. Here only the two last characters of the first decode
 *   and the first character of the second are needed, and a decode of a short window of ids
 *   gives them exactly (see tail_chars / head_char), so the split stays linear.
 * Every pass is linear in the text length; merging appends into a growing buffer.
 */
#include "text.h"

#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "text_py.h"

/* The sets of ensure_terminal_punctuation (MODEL.md 8.2). */
static int is_terminal(int32_t c) { return c == '.' || c == '!' || c == '?' || c == 0x2026; }
static int is_weak(int32_t c) {
    return c == ',' || c == ';' || c == ':' || c == '-' || c == 0x2013 || c == 0x2014;
}
static int is_closer(int32_t c) {
    return c == '"' || c == '\'' || c == 0x201D || c == 0x2019 || c == ')' || c == ']' || c == 0xBB;
}

/* A growing byte buffer, always NUL-terminated once non-empty. */
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
    if (n) memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
    return 0;
}

typedef struct {
    int32_t cp;
    int idx;
} rep_key;

static int rep_cmp(const void *a, const void *b) {
    const rep_key *x = a, *y = b;
    if (x->cp != y->cp) return x->cp < y->cp ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* 8.1 step 2: the one-pass character mapping (a), whitespace collapse (b) and the
 * `([.!?…])\s*[,;:]` rule (c), from s[0..n) into out. Keys are sorted once (a later duplicate
 * key wins, as in a Python dict); each character costs one binary search. */
static int replace_step(const char *s, size_t n, const ptts_text_options *o, sbuf *out,
                        ptts_error *e) {
    rep_key *keys = malloc((size_t)o->n_replace * sizeof *keys);
    sbuf a = {0};
    int rc = PTTS_OK;
    if (!keys) return ptts_fail(e, PTTS_E_NOMEM, "out of memory preparing text");
    for (int i = 0; i < o->n_replace; i++) {
        const char *k = o->replace_from ? o->replace_from[i] : NULL;
        int32_t cp = -1;
        size_t kl = k ? strlen(k) : 0;
        if (kl == 0 || !o->replace_to || !o->replace_to[i] || py_u8_next(k, kl, 0, &cp) != kl ||
            cp < 0) {
            free(keys);
            return ptts_fail(e, PTTS_E_INVALID,
                             "replace_characters entry %d: the key must be one character and "
                             "the value a string",
                             i);
        }
        keys[i].cp = cp;
        keys[i].idx = i;
    }
    qsort(keys, (size_t)o->n_replace, sizeof *keys, rep_cmp);
    for (size_t i = 0; i < n && rc == PTTS_OK;) {
        int32_t cp;
        size_t len = py_u8_next(s, n, i, &cp);
        size_t lo = 0, hi = (size_t)o->n_replace;
        while (lo < hi) { /* the last key <= cp */
            size_t mid = (lo + hi) / 2;
            if (keys[mid].cp <= cp)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (cp >= 0 && lo > 0 && keys[lo - 1].cp == cp) {
            const char *v = o->replace_to[keys[lo - 1].idx];
            if (sb_add(&a, v, strlen(v))) rc = -1;
        } else if (sb_add(&a, s + i, len)) {
            rc = -1;
        }
        i += len;
    }
    free(keys);
    /* (b) " ".join(text.split()), then (c); both only shrink the text. */
    out->n = 0;
    for (size_t i = 0; i < a.n && rc == PTTS_OK;) {
        int32_t cp;
        size_t len = py_u8_next(a.p, a.n, i, &cp);
        if (py_isspace(cp)) {
            i += len;
            continue;
        }
        size_t w = i;
        while (w < a.n) {
            size_t l = py_u8_next(a.p, a.n, w, &cp);
            if (py_isspace(cp)) break;
            w += l;
        }
        if ((out->n && sb_add(out, " ", 1)) || sb_add(out, a.p + i, w - i)) rc = -1;
        i = w;
    }
    free(a.p);
    if (rc) return ptts_fail(e, PTTS_E_NOMEM, "out of memory preparing text");
    size_t w = 0;
    for (size_t i = 0; i < out->n;) {
        int32_t cp;
        size_t len = py_u8_next(out->p, out->n, i, &cp);
        memmove(out->p + w, out->p + i, len);
        w += len;
        i += len;
        if (cp == '.' || cp == '!' || cp == '?' || cp == 0x2026) {
            size_t j = i < out->n && out->p[i] == ' ' ? i + 1 : i;
            if (j < out->n && (out->p[j] == ',' || out->p[j] == ';' || out->p[j] == ':')) i = j + 1;
        }
    }
    out->n = w;
    if (out->p) out->p[w] = '\0';
    return PTTS_OK;
}

/* 8.2 on t[0..*m) in place (the text may grow by one byte: t has room). */
static void ensure_terminal(char *t, size_t *m) {
    size_t core = *m, l;
    while (core > 0) {
        int32_t c = py_last_char(t, core, &l);
        if (c != ' ' && !is_closer(c)) break;
        core -= l;
    }
    if (core == 0) return;
    int32_t last = py_last_char(t, core, &l);
    if (is_terminal(last)) return;
    if (!is_weak(last)) {
        t[(*m)++] = '.';
        return;
    }
    size_t cut = core;
    while (cut > 0) {
        int32_t c = py_last_char(t, cut, &l);
        if (c != ' ' && !is_weak(c)) break;
        cut -= l;
    }
    /* The removed tail t[core..*m) holds only closers and spaces: strip() drops its spaces. */
    size_t cb = core, ce = *m;
    while (cb < ce && t[cb] == ' ')
        cb++;
    while (ce > cb && t[ce - 1] == ' ')
        ce--;
    t[cut] = '.';
    memmove(t + cut + 1, t + cb, ce - cb);
    *m = cut + 1 + (ce - cb);
}

/* prepare_text_prompt (8.1) on text[0..n): *out is malloc'd, *out_len its length. */
static int prepare(const char *text, size_t n, const ptts_text_options *o, char **out,
                   size_t *out_len, int *guess, ptts_error *e) {
    size_t b, end;
    sbuf rep = {0};
    py_strip(text, n, &b, &end);
    const char *src = text + b;
    size_t m = end - b;
    if (o->n_replace > 0) {
        int rc = replace_step(src, m, o, &rep, e);
        if (rc) {
            free(rep.p);
            return rc;
        }
        src = rep.p;
        m = rep.n;
    }
    if (m == 0) {
        free(rep.p);
        return ptts_fail(e, PTTS_E_TEXT, "Text prompt cannot be empty");
    }
    /* 8 spaces of padding + the first character growing to at most 3 code points (12 bytes) +
     * the final '.' + NUL. */
    char *buf = malloc(m + 8 + 12 + 2);
    if (!buf) {
        free(rep.p);
        return ptts_fail(e, PTTS_E_NOMEM, "out of memory preparing %zu bytes of text", m);
    }
    char *t = buf + 8 + 12; /* the working text; the prefix room is for padding and upper() */

    /* Steps 4 and 5: "\n" and "\r" -> " ", then one pass of "  " -> " "; ";" -> "," when asked
     * (';' is not a space, so it is independent of the space collapsing). */
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        char c = src[i];
        if (c == '\n' || c == '\r')
            c = ' ';
        else if (c == ';' && o->remove_semicolons)
            c = ',';
        t[k++] = c;
    }
    free(rep.p);
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
    *guess = py_word_count(t, m) <= 4 ? 3 : 1;

    int32_t cp;
    size_t len0 = py_u8_next(t, m, 0, &cp);
    if (o->capitalize_first_letter && cp >= 0 && utf8proc_category(cp) != UTF8PROC_CATEGORY_LU) {
        char up[12];
        size_t ul = py_upper(cp, up);
        /* The text is t[0..m); its first character (len0 bytes) becomes up[0..ul). */
        char *nt = t + len0 - ul;
        memcpy(nt, up, ul);
        m = m - len0 + ul;
        t = nt;
    }
    if (o->append_terminal_punctuation) ensure_terminal(t, &m);
    if (o->pad_with_spaces && py_word_count(t, m) < 5) {
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

int ptts_text_prepare(const char *text, const ptts_text_options *o, char **out, int *guess,
                      ptts_error *e) {
    if (!text || !o || !out || !guess)
        return ptts_fail(e, PTTS_E_INVALID, "ptts_text_prepare: NULL argument");
    size_t len;
    *out = NULL;
    return prepare(text, strlen(text), o, out, &len, guess, e);
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

/* The ids being split, for the decimal-point test. first_text: the smallest k such that ids[:k]
 * take the decoder out of its start state (computed on first use; n + 1 when there is none). */
typedef struct {
    const ptts_tokenizer *tok;
    const int *ids;
    int n, first_text;
} idview;

/* Whether ids[:k] take the decoder out of its start state (ptts_tokenizer_decode_continues):
 * once true it stays true for larger k, so the first such k is found by doubling and bisection
 * (a handful of decodes unless the text opens with many pieces that print nothing). */
static int prefix_has_text(idview *v, int k, int *has, ptts_error *e) {
    if (v->first_text < 0) {
        int hi = 1, ne = 0, rc;
        for (;;) {
            if (hi > v->n) hi = v->n;
            if ((rc = ptts_tokenizer_decode_continues(v->tok, v->ids, hi, &ne, e))) return rc;
            if (ne || hi == v->n) break;
            hi *= 2;
        }
        if (!ne) {
            v->first_text = v->n + 1;
        } else {
            int lo = hi / 2; /* ids[:lo] leave the start state untouched (lo = 0 trivially) */
            while (hi - lo > 1) {
                int mid = lo + (hi - lo) / 2;
                if ((rc = ptts_tokenizer_decode_continues(v->tok, v->ids, mid, &ne, e))) return rc;
                if (ne)
                    hi = mid;
                else
                    lo = mid;
            }
            v->first_text = hi;
        }
    }
    *has = k >= v->first_text;
    return PTTS_OK;
}

static int is_byte_cut(const idview *v, int k) {
    return k > 0 && k < v->n && ptts_tokenizer_in_byte_run(v->tok, v->ids[k - 1]) &&
           ptts_tokenizer_in_byte_run(v->tok, v->ids[k]);
}

/* The last two code points of decode(ids[:i]) in c[0] (last) and c[1], and how many it has (up
 * to 2). Decoding is local (ptts_tokenizer_decode_is_local): at a cut j that splits no byte run,
 * decode(ids[:i]) = decode(ids[:j]) + decode_part(ids[j:i], continued by ids[:j]), so a window
 * ending at i whose text has two characters gives them. */
static int tail_chars(idview *v, int i, int32_t c[2], int *count, ptts_error *e) {
    for (int w = 2;; w *= 2) {
        int j = i - w < 0 ? 0 : i - w, cont = 0, rc;
        while (is_byte_cut(v, j))
            j--;
        if (j > 0 && (rc = prefix_has_text(v, j, &cont, e))) return rc;
        char *s;
        if ((rc = ptts_tokenizer_decode_part(v->tok, v->ids + j, i - j, cont, &s, e))) return rc;
        size_t sl = strlen(s);
        *count = 0;
        for (size_t p = 0; p < sl;) {
            int32_t cp;
            p += py_u8_next(s, sl, p, &cp);
            c[1] = c[0];
            c[0] = cp;
            if (*count < 2) (*count)++;
        }
        free(s);
        if (*count >= 2 || j == 0 || w > i) return PTTS_OK;
    }
}

/* The first code point of decode(ids[i:]) (*has = 0 when it is empty): a window starting at i
 * that ends at a cut splitting no byte run decodes to a prefix of it. */
static int head_char(idview *v, int i, int32_t *c, int *has, ptts_error *e) {
    for (int w = 1;; w *= 2) {
        int k = w > v->n - i ? v->n : i + w;
        while (is_byte_cut(v, k))
            k++;
        char *s;
        int rc = ptts_tokenizer_decode_part(v->tok, v->ids + i, k - i, 0, &s, e);
        if (rc) return rc;
        size_t sl = strlen(s);
        *has = sl > 0;
        if (*has) py_u8_next(s, sl, 0, c);
        free(s);
        if (*has || k == v->n) return PTTS_OK;
    }
}

/* is_decimal_point (8.3): "." after a digit at the end of decode(ids[:i]), and a digit at the
 * start of decode(ids[i:]). */
static int is_decimal_point(idview *v, int i, int *yes, ptts_error *e) {
    int32_t c[2] = {0, 0}, q = 0;
    int count, has, rc;
    *yes = 0;
    if (!ptts_tokenizer_decode_is_local(v->tok)) {
        /* The reference's two full decodes (a model with a denormalizer: none is shipped). */
        char *p, *s;
        if ((rc = ptts_tokenizer_decode(v->tok, v->ids, i, &p, e))) return rc;
        size_t pl = strlen(p);
        count = 0;
        for (size_t k = 0; k < pl;) {
            int32_t cp;
            k += py_u8_next(p, pl, k, &cp);
            c[1] = c[0];
            c[0] = cp;
            if (count < 2) count++;
        }
        free(p);
        if ((rc = ptts_tokenizer_decode(v->tok, v->ids + i, v->n - i, &s, e))) return rc;
        has = s[0] != '\0';
        if (has) py_u8_next(s, strlen(s), 0, &q);
        free(s);
    } else {
        if ((rc = tail_chars(v, i, c, &count, e))) return rc;
        if (count < 2 || c[0] != '.' || !py_isdigit(c[1])) return PTTS_OK;
        if ((rc = head_char(v, i, &q, &has, e))) return rc;
    }
    *yes = count >= 2 && c[0] == '.' && py_isdigit(c[1]) && has && py_isdigit(q);
    return PTTS_OK;
}

/* boundaries() then the decoded segments (8.3): a cut before the first id that follows a run
 * of ids in `set`, except (decimal_rule) where that run ends a decimal point. */
static int segments(const ptts_tokenizer *tok, const int *ids, int n, const int *set, int nset,
                    int decimal_rule, seglist *out, ptts_error *e) {
    idview v = {tok, ids, n, -1};
    int start = 0, after_end = 0, rc;
    for (int i = 0; i <= n; i++) {
        int cut = i == n;
        if (i < n) {
            if (in_set(ids[i], set, nset)) {
                after_end = 1;
                continue;
            }
            cut = after_end;
            after_end = 0;
            if (cut && decimal_rule) {
                int dp;
                if ((rc = is_decimal_point(&v, i, &dp, e))) return rc;
                cut = !dp;
            }
        }
        if (!cut) continue;
        char *s;
        if ((rc = ptts_tokenizer_decode(tok, ids + start, i - start, &s, e))) return rc;
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

/* Append stripped(s[0..n)) as a new chunk (text only; chunk_finish adds the rest). */
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
    int rc = prepare(c->text, strlen(c->text), o, &c->model_text, &len, &c->guess, e);
    if (rc) return rc;
    return ptts_tokenizer_encode(tok, c->model_text, len, &c->ids, &c->n_ids, e);
}

/* The sentence segments longer than max_tokens, re-encoded from their stripped text and cut
 * after ",;:" runs (no decimal rule); kept whole when that gives a single piece. Moves every
 * text from `sentences` into `refined`. */
static int refine(const ptts_tokenizer *tok, seglist *sentences, int max_tokens, seglist *refined,
                  ptts_error *e) {
    int *commas = NULL, n_commas = 0, *sub = NULL, n_sub = 0;
    int rc = tail_ids(tok, ",;:", &commas, &n_commas, e);
    for (size_t i = 0; i < sentences->n && rc == PTTS_OK; i++) {
        segment *s = &sentences->v[i];
        if (s->count > max_tokens) {
            size_t sb, se;
            py_strip(s->text, strlen(s->text), &sb, &se);
            free(sub);
            sub = NULL;
            if ((rc = ptts_tokenizer_encode(tok, s->text + sb, se - sb, &sub, &n_sub, e))) break;
            seglist parts = {0};
            if ((rc = segments(tok, sub, n_sub, commas, n_commas, 0, &parts, e))) {
                seg_free(&parts);
                break;
            }
            if (parts.n > 1) {
                for (size_t j = 0; j < parts.n && rc == PTTS_OK; j++) {
                    if (seg_push(refined, parts.v[j].count, parts.v[j].text))
                        rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory splitting text");
                    else
                        parts.v[j].text = NULL;
                }
                seg_free(&parts);
                continue;
            }
            seg_free(&parts);
        }
        if (seg_push(refined, s->count, s->text))
            rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory splitting text");
        else
            s->text = NULL;
    }
    free(sub);
    free(commas);
    return rc;
}

/* The greedy merge; like the reference, "no current chunk" means an empty current text, so an
 * empty segment lets the next one start afresh. */
static int merge(const seglist *refined, int max_tokens, ptts_chunk **out, int *n_out,
                 ptts_error *e) {
    sbuf cur = {0};
    size_t cap_out = 0;
    long long cur_count = 0;
    int fail = 0;
    for (size_t i = 0; i < refined->n && !fail; i++) {
        const segment *s = &refined->v[i];
        size_t sl = strlen(s->text);
        if (cur.n == 0) {
            fail = sb_add(&cur, s->text, sl);
            cur_count = s->count;
        } else if (cur_count + s->count > max_tokens) {
            fail = chunk_push(out, n_out, &cap_out, cur.p, cur.n);
            cur.n = 0;
            fail = fail || sb_add(&cur, s->text, sl);
            cur_count = s->count;
        } else {
            fail = sb_add(&cur, " ", 1) || sb_add(&cur, s->text, sl);
            cur_count += s->count;
        }
    }
    if (!fail && cur.n > 0) fail = chunk_push(out, n_out, &cap_out, cur.p, cur.n);
    free(cur.p);
    return fail ? ptts_fail(e, PTTS_E_NOMEM, "out of memory merging text chunks") : PTTS_OK;
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
    int *ids = NULL, *ends = NULL, n_ids = 0, n_ends = 0, guess;
    seglist sentences = {0}, refined = {0};
    ptts_chunk *out = NULL;
    int n_out = 0;
    size_t plen, b, end;

    int rc = prepare(text, strlen(text), o, &prepared, &plen, &guess, e);
    if (rc) goto done;
    py_strip(prepared, plen, &b, &end);
    if ((rc = ptts_tokenizer_encode(tok, prepared + b, end - b, &ids, &n_ids, e))) goto done;
    if ((rc = tail_ids(tok, ".!...?", &ends, &n_ends, e))) goto done;
    if ((rc = segments(tok, ids, n_ids, ends, n_ends, 1, &sentences, e))) goto done;
    if ((rc = refine(tok, &sentences, max_tokens, &refined, e))) goto done;
    if ((rc = merge(&refined, max_tokens, &out, &n_out, e))) goto done;
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
    seg_free(&refined);
    seg_free(&sentences);
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
        ptts_log(PTTS_LOG_WARN,
                 "a sentence of %d tokens without punctuation is cut at word "
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
                size_t nx = ws + py_u8_next(s, len, ws, &cp);
                if (!py_isspace(cp)) break;
                ws = nx;
            }
            size_t we = ws;
            while (we < len) {
                size_t nx = we + py_u8_next(s, len, we, &cp);
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
