/*
 * tokenizer.c - the tokenizer's public entry points (tokenizer.h) and SentencePiece's
 * normalize, encode and decode, bit-exact with the SentencePiece library 0.1.97 (the one the
 * reference Pocket TTS calls), so that token ids never differ from the reference's.
 *
 * Map: loading and picking the backend (by the config's kind or the file's suffix, MODEL.md
 * 9.1) -> the normalizer -> segmentation (unigram Viterbi, BPE merges) -> encode_impl (the
 * post-processing) -> the decoder. The `.model` reader is tokenizer_model.c, the
 * `tokenizer.json` backend tokenizer_json.c, shared structures tokenizer_common.c.
 *
 * What it does and why it is built this way:
 *  - Normalization reads the precompiled character map exactly as the library does: a u32 trie
 *    size, a darts-clone double array, and a pool of NUL-terminated replacements; the longest
 *    match wins, bytes with no rule pass through one UTF-8 character at a time, and malformed
 *    UTF-8 becomes U+FFFD one byte at a time. Every trie index is bounds-checked at lookup time
 *    (an out-of-range index means a hostile map: the encode call fails with PTTS_E_FORMAT).
 *    Whitespace handling (strip, collapse, dummy prefix, escape to U+2581) follows
 *    normalizer.cc; user-defined symbols are copied verbatim, matched longest-first.
 *  - Pieces live in a hash-addressed byte trie (transition table keyed by node and byte): one
 *    probe per byte keeps the unigram Viterbi (the library's "optimized" single-pass encoder,
 *    with its float/double score arithmetic reproduced) fast, and the BPE merge loop uses the
 *    same piece hash map as the library's `pieces_` plus a binary heap ordered like its agenda.
 *  - Post-processing follows PopulateSentencePieceText: runs of unknown pieces merge into one,
 *    and with byte_fallback an unknown piece becomes its UTF-8 bytes as <0xXX> pieces.
 *  - Decoding follows Decode(ids) of 0.1.97: control pieces vanish, unknown ids print the
 *    unk_surface (" \xE2\x81\x87 " by default), the leading U+2581 is dropped while the text is
 *    still empty, runs of byte pieces are reassembled into UTF-8 with U+FFFD per bad byte, and a
 *    denormalizer map is applied when the model has one.
 */
#include "tokenizer_common.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* Loading and the backend choice.                                                             */

void ptts_tokenizer_free(ptts_tokenizer *t) {
    if (!t) return;
    free(t->piece);
    free(t->len);
    free(t->score);
    free(t->type);
    free(t->store);
    free(t->unk_surface);
    tk_norm_free(&t->norm);
    tk_norm_free(&t->denorm);
    free(t->normal_map.slot);
    free(t->reserved_map.slot);
    tk_trie_free(&t->trie);
    tk_trie_free(&t->user);
    tk_json_free(t);
    free(t);
}

int ptts_tokenizer_load_memory(ptts_tokenizer **out, const void *data, size_t size,
                               const char *name, ptts_error *e) {
    if (!out) return ptts_fail(e, PTTS_E_INVALID, "tokenizer: no output pointer");
    *out = NULL;
    if (!name) name = "tokenizer";
    if (!data && size) return ptts_fail(e, PTTS_E_INVALID, "%s: no data", name);
    ptts_tokenizer *t = calloc(1, sizeof *t);
    if (!t) return ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory", name);
    int rc = tk_sp_load(t, data ? data : (const void *)"", size, name, e);
    if (rc) {
        ptts_tokenizer_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int ptts_tokenizer_load_json_memory(ptts_tokenizer **out, const void *data, size_t size,
                                    const char *name, ptts_error *e) {
    if (!out) return ptts_fail(e, PTTS_E_INVALID, "tokenizer: no output pointer");
    *out = NULL;
    if (!name) name = "tokenizer.json";
    if (!data && size) return ptts_fail(e, PTTS_E_INVALID, "%s: no data", name);
    ptts_tokenizer *t = calloc(1, sizeof *t);
    if (!t) return ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory", name);
    int rc = tk_json_load(t, data ? data : "", size, name, e);
    if (rc) {
        ptts_tokenizer_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

/* MODEL.md 9.1: the path, with any "@revision" suffix removed, ends in ".json". */
static int json_by_suffix(const char *path) {
    const char *at = strrchr(path, '@'), *slash = strrchr(path, '/');
    size_t n = at && (!slash || at > slash) ? (size_t)(at - path) : strlen(path);
    return n >= 5 && memcmp(path + n - 5, ".json", 5) == 0;
}

int ptts_tokenizer_load_kind(ptts_tokenizer **out, const char *path, const char *kind,
                             ptts_error *e) {
    if (!out || !path) return ptts_fail(e, PTTS_E_INVALID, "tokenizer: no path");
    *out = NULL;
    int json = (kind && (strcmp(kind, "tokenizers") == 0 || strcmp(kind, "json") == 0)) ||
               json_by_suffix(path);
    char *data;
    size_t size;
    int rc = tk_read_file(path, json ? JSON_MAX_BYTES : MODEL_MAX_BYTES, &data, &size, e);
    if (rc) return rc;
    rc = json ? ptts_tokenizer_load_json_memory(out, data, size, path, e)
              : ptts_tokenizer_load_memory(out, data, size, path, e);
    free(data);
    return rc;
}

int ptts_tokenizer_load(ptts_tokenizer **out, const char *path, ptts_error *e) {
    return ptts_tokenizer_load_kind(out, path, NULL, e);
}

int ptts_tokenizer_vocab_size(const ptts_tokenizer *t) { return t ? t->n : 0; }

const char *ptts_tokenizer_piece(const ptts_tokenizer *t, int id) {
    if (!t || id < 0 || id >= t->n) return NULL;
    return t->piece[id];
}

/* ------------------------------------------------------------------------------------------ */
/* Segmentation: a list of (start, length, id) over the normalized text.                       */

typedef struct {
    uint32_t start, len;
    int id;
} seg;

typedef struct {
    seg *p;
    size_t n, cap;
} segs;

static int segs_push(segs *v, uint32_t start, uint32_t len, int id) {
    if (v->n == v->cap) {
        size_t nc = v->cap ? v->cap * 2 : 64;
        seg *np = realloc(v->p, nc * sizeof *np);
        if (!np) return -1;
        v->p = np;
        v->cap = nc;
    }
    v->p[v->n].start = start;
    v->p[v->n].len = len;
    v->p[v->n].id = id;
    v->n++;
    return 0;
}

typedef struct {
    float score;
    int32_t starts_at;
    int32_t id;
} best_node;

/* The library's optimized unigram encoder (Model::Encode, kOptimized). */
static int encode_unigram(const ptts_tokenizer *t, const unsigned char *s, size_t size, segs *out) {
    best_node *best = malloc((size + 1) * sizeof *best);
    if (!best) return -1;
    for (size_t i = 0; i <= size; i++) {
        best[i].score = 0;
        best[i].starts_at = -1;
        best[i].id = -1;
    }
    const float unk_score = t->min_score - 10.0f;
    const htrie *tr = &t->trie;
    size_t start = 0;
    while (start < size) {
        const float till_here = best[start].score;
        int has_single = 0;
        size_t mblen = tk_char_len(s[start]);
        if (mblen > size - start) mblen = size - start;
        int32_t node = 0;
        for (size_t pos = start; pos < size;) {
            node = htrie_next(tr, node, s[pos]);
            if (node < 0) break;
            pos++;
            int32_t id = tr->value[node];
            if (id < 0 || t->type[id] == PT_UNUSED) continue;
            best_node *tn = &best[pos];
            size_t length = pos - start;
            double sc = t->type[id] == PT_USER ? (double)((float)length * t->max_score) - 0.1
                                               : (double)t->score[id];
            double cand = sc + (double)till_here;
            if (tn->starts_at == -1 || cand > (double)tn->score) {
                tn->score = (float)cand;
                tn->starts_at = (int32_t)start;
                tn->id = id;
            }
            if (!has_single && length == mblen) has_single = 1;
        }
        if (!has_single) {
            best_node *tn = &best[start + mblen];
            float cand = unk_score + till_here;
            if (tn->starts_at == -1 || cand > tn->score) {
                tn->score = cand;
                tn->starts_at = (int32_t)start;
                tn->id = t->unk_id;
            }
        }
        start += mblen;
    }
    /* Backtrack, then reverse. */
    size_t first = out->n;
    size_t end = size;
    int rc = 0;
    while (end > 0) {
        const best_node *b = &best[end];
        if (b->starts_at < 0 || (size_t)b->starts_at >= end) {
            rc = -2;
            break;
        }
        if (segs_push(out, (uint32_t)b->starts_at, (uint32_t)(end - (size_t)b->starts_at), b->id)) {
            rc = -1;
            break;
        }
        end = (size_t)b->starts_at;
    }
    for (size_t i = first, j = out->n; rc == 0 && j > i + 1; i++, j--) {
        seg tmp = out->p[i];
        out->p[i] = out->p[j - 1];
        out->p[j - 1] = tmp;
    }
    free(best);
    return rc;
}

typedef struct {
    int prev, next;
    uint32_t start, len;
    int freeze;
} bpe_sym;

typedef struct {
    float score;
    int left, right;
    uint32_t size;
} bpe_pair;

typedef struct {
    bpe_pair *p;
    size_t n, cap;
} bpe_heap;

/* The agenda's order: a before b when a has the lower score, or the same score and a greater left.
 */
static int pair_less(const bpe_pair *a, const bpe_pair *b) {
    return a->score < b->score || (a->score == b->score && a->left > b->left);
}

static int heap_push(bpe_heap *h, bpe_pair v) {
    if (h->n == h->cap) {
        size_t nc = h->cap ? h->cap * 2 : 64;
        bpe_pair *np = realloc(h->p, nc * sizeof *np);
        if (!np) return -1;
        h->p = np;
        h->cap = nc;
    }
    size_t i = h->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!pair_less(&h->p[parent], &v)) break;
        h->p[i] = h->p[parent];
        i = parent;
    }
    h->p[i] = v;
    return 0;
}

static bpe_pair heap_pop(bpe_heap *h) {
    bpe_pair top = h->p[0], last = h->p[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && pair_less(&h->p[c], &h->p[c + 1])) c++;
        if (!pair_less(&last, &h->p[c])) break;
        h->p[i] = h->p[c];
        i = c;
    }
    if (h->n) h->p[i] = last;
    return top;
}

typedef struct {
    uint32_t ls, ll, rs, rl;
    int set;
} rev_merge;

typedef struct {
    const ptts_tokenizer *t;
    const unsigned char *s;
    bpe_sym *sym;
    bpe_heap *heap;
    rev_merge *rev; /* per piece id, allocated at the first unused piece */
} bpe_ctx;

static int bpe_maybe_add(bpe_ctx *c, int left, int right) {
    if (left == -1 || right == -1 || c->sym[left].freeze || c->sym[right].freeze) return 0;
    const bpe_sym *l = &c->sym[left], *r = &c->sym[right];
    uint32_t size = l->len + r->len;
    int id = tk_map_find(c->t, &c->t->normal_map, (const char *)c->s + l->start, size);
    if (id < 0) return 0;
    bpe_pair p = {c->t->score[id], left, right, size};
    if (heap_push(c->heap, p)) return -1;
    if (c->t->type[id] == PT_UNUSED) {
        if (!c->rev) {
            c->rev = calloc((size_t)c->t->n, sizeof *c->rev);
            if (!c->rev) return -1;
        }
        rev_merge m = {l->start, l->len, r->start, r->len, 1};
        c->rev[id] = m;
    }
    return 0;
}

/* The library's BPE Model::Encode (without dropout). */
static int encode_bpe(const ptts_tokenizer *t, const unsigned char *s, size_t size, segs *out) {
    bpe_heap heap = {0};
    bpe_ctx c = {t, s, NULL, &heap, NULL};
    uint32_t *stack = NULL;
    int rc = -1;
    size_t n_sym = 0;
    c.sym = malloc((size ? size : 1) * sizeof *c.sym);
    if (!c.sym) goto done;
    for (size_t pos = 0; pos < size;) {
        bpe_sym *y = &c.sym[n_sym];
        size_t m = 0;
        if (t->n_user) m = tk_trie_longest(&t->user, s + pos, size - pos);
        y->freeze = m > 0;
        if (!m) {
            m = tk_char_len(s[pos]);
            if (m > size - pos) m = size - pos;
        }
        y->start = (uint32_t)pos;
        y->len = (uint32_t)m;
        y->prev = n_sym == 0 ? -1 : (int)n_sym - 1;
        pos += m;
        y->next = pos >= size ? -1 : (int)n_sym + 1;
        n_sym++;
    }
    for (size_t i = 1; i < n_sym; i++)
        if (bpe_maybe_add(&c, (int)i - 1, (int)i)) goto done;
    while (heap.n) {
        bpe_pair top = heap_pop(&heap);
        bpe_sym *l = &c.sym[top.left], *r = &c.sym[top.right];
        if (l->len == 0 || r->len == 0 || l->len + r->len != top.size) continue;
        l->len += r->len;
        l->next = r->next;
        if (r->next >= 0) c.sym[r->next].prev = top.left;
        r->len = 0;
        if (bpe_maybe_add(&c, l->prev, top.left) || bpe_maybe_add(&c, top.left, l->next)) goto done;
    }
    /* Resegment unused pieces into the pair that formed them (iteratively, right half pushed
     * first so that the left half comes out first). */
    size_t cap = 64, sp = 0;
    stack = malloc(cap * 2 * sizeof *stack);
    if (!stack) goto done;
    for (int idx = n_sym ? 0 : -1; idx != -1; idx = c.sym[idx].next) {
        sp = 0;
        stack[sp * 2] = c.sym[idx].start;
        stack[sp * 2 + 1] = c.sym[idx].len;
        sp++;
        while (sp) {
            sp--;
            uint32_t ws = stack[sp * 2], wl = stack[sp * 2 + 1];
            int id = tk_piece_to_id(t, (const char *)s + ws, wl);
            if (t->type[id] != PT_UNUSED || !c.rev || !c.rev[id].set) {
                if (segs_push(out, ws, wl, id)) goto done;
                continue;
            }
            if (sp + 2 > cap) {
                uint32_t *ns = realloc(stack, cap * 4 * sizeof *stack);
                if (!ns) goto done;
                stack = ns;
                cap *= 2;
            }
            const rev_merge *m = &c.rev[id];
            stack[sp * 2] = m->rs;
            stack[sp * 2 + 1] = m->rl;
            stack[sp * 2 + 2] = m->ls;
            stack[sp * 2 + 3] = m->ll;
            sp += 2;
        }
    }
    rc = 0;
done:
    free(stack);
    free(c.sym);
    free(c.rev);
    free(heap.p);
    return rc;
}

/* Normalize + segment + PopulateSentencePieceText. `pieces` may be NULL. */
/* The JSON backend's ids, and its pieces (the vocabulary strings of the ids) when asked. */
static int json_encode_pieces(const ptts_tokenizer *t, const char *text, size_t len, int **ids_out,
                              char ***pieces_out, int *n_out, ptts_error *e) {
    int rc = tk_json_encode(t, text, len, ids_out, n_out, e);
    if (rc || !pieces_out) return rc;
    size_t bytes = 0;
    for (int i = 0; i < *n_out; i++)
        bytes += t->len[(*ids_out)[i]] + 1;
    char **pieces = malloc(((size_t)*n_out + 1) * sizeof(char *) + bytes + 1);
    if (!pieces) {
        free(*ids_out);
        *ids_out = NULL;
        *n_out = 0;
        return ptts_fail(e, PTTS_E_NOMEM, "tokenizer: out of memory");
    }
    char *pw = (char *)(pieces + *n_out + 1);
    for (int i = 0; i < *n_out; i++) {
        int id = (*ids_out)[i];
        pieces[i] = pw;
        memcpy(pw, t->piece[id], t->len[id] + 1);
        pw += t->len[id] + 1;
    }
    pieces[*n_out] = NULL;
    *pieces_out = pieces;
    return PTTS_OK;
}

static int encode_impl(const ptts_tokenizer *t, const char *text, size_t len, int **ids_out,
                       char ***pieces_out, int *n_out, ptts_error *e) {
    buf norm = {0};
    segs sg = {0};
    int *ids = NULL;
    char **pieces = NULL;
    int rc = 0;
    if (!t || !ids_out || !n_out || (!text && len))
        return ptts_fail(e, PTTS_E_INVALID, "tokenizer: invalid arguments to encode");
    *ids_out = NULL;
    *n_out = 0;
    if (pieces_out) *pieces_out = NULL;
    if (len > (size_t)INT32_MAX / 8) return ptts_fail(e, PTTS_E_NOMEM, "tokenizer: text too long");
    if (t->kind == TK_JSON) return json_encode_pieces(t, text, len, ids_out, pieces_out, n_out, e);
    if ((rc = tk_normalize(t, &t->norm, 1, t->ws_suffix, text, len, &norm, e))) goto done;
    if (norm.n > (size_t)INT32_MAX - 1) {
        rc = ptts_fail(e, PTTS_E_NOMEM, "tokenizer: text too long");
        goto done;
    }
    const unsigned char *s = (const unsigned char *)(norm.p ? norm.p : "");
    int r = t->model_type == MT_UNIGRAM ? encode_unigram(t, s, norm.n, &sg)
                                        : encode_bpe(t, s, norm.n, &sg);
    if (r) {
        rc = r == -1 ? ptts_fail(e, PTTS_E_NOMEM, "tokenizer: out of memory")
                     : ptts_fail(e, PTTS_E_INTERNAL, "tokenizer: broken best path");
        goto done;
    }
    /* Post-process: merge unknown runs, or expand them to bytes. */
    size_t n = 0, text_bytes = 0;
    for (size_t i = 0; i < sg.n; i++) {
        int unk = t->type[sg.p[i].id] == PT_UNKNOWN;
        if (unk && t->byte_fallback) {
            n += sg.p[i].len;
            text_bytes += (size_t)sg.p[i].len * 7;
        } else {
            n++;
            text_bytes += sg.p[i].len + 1;
        }
    }
    ids = malloc((n ? n : 1) * sizeof *ids);
    if (pieces_out) pieces = malloc((n + 1) * sizeof(char *) + text_bytes + 1);
    if (!ids || (pieces_out && !pieces)) {
        rc = ptts_fail(e, PTTS_E_NOMEM, "tokenizer: out of memory");
        goto done;
    }
    char *pw = pieces ? (char *)(pieces + n + 1) : NULL;
    size_t k = 0;
    int prev_unk = 0;
    for (size_t i = 0; i < sg.n; i++) {
        const seg *g = &sg.p[i];
        int ty = t->type[g->id];
        int unk = ty == PT_UNKNOWN;
        if (ty == PT_CONTROL) {
            /* A control id never comes out of the segmenters with a surface; kept as is. */
            if (pieces) {
                pieces[k] = pw;
                memcpy(pw, s + g->start, g->len);
                pw += g->len;
                *pw++ = 0;
            }
            ids[k++] = g->id;
        } else if (unk && t->byte_fallback) {
            for (uint32_t j = 0; j < g->len; j++) {
                int b = s[g->start + j];
                if (pieces) {
                    pieces[k] = pw;
                    pw += sprintf(pw, "<0x%02X>", b) + 1;
                }
                ids[k++] = t->byte_id[b];
            }
        } else if (prev_unk && unk) {
            /* Contiguous in the normalized text: extend the previous piece. */
            if (pieces) {
                pw--; /* over the NUL */
                memcpy(pw, s + g->start, g->len);
                pw += g->len;
                *pw++ = 0;
            }
        } else {
            if (pieces) {
                pieces[k] = pw;
                memcpy(pw, s + g->start, g->len);
                pw += g->len;
                *pw++ = 0;
            }
            ids[k++] = g->id;
        }
        prev_unk = unk;
    }
    if (pieces) pieces[k] = NULL;
    *ids_out = ids;
    *n_out = (int)k;
    if (pieces_out) *pieces_out = pieces;
    ids = NULL;
    pieces = NULL;
done:
    free(ids);
    free(pieces);
    free(norm.p);
    free(sg.p);
    return rc;
}

int ptts_tokenizer_encode(const ptts_tokenizer *t, const char *text, size_t len, int **ids, int *n,
                          ptts_error *e) {
    return encode_impl(t, text, len, ids, NULL, n, e);
}

int ptts_tokenizer_encode_pieces(const ptts_tokenizer *t, const char *text, size_t len, int **ids,
                                 char ***pieces, int *n, ptts_error *e) {
    if (!pieces) return ptts_fail(e, PTTS_E_INVALID, "tokenizer: no pieces pointer");
    return encode_impl(t, text, len, ids, pieces, n, e);
}

/* ------------------------------------------------------------------------------------------ */
/* Decoder.                                                                                    */

static void flush_bytes(buf *o, const unsigned char *bytes, size_t n) {
    size_t off = 0;
    while (off < n) {
        size_t used;
        if (!tk_valid_utf8(bytes + off, n - off, &used)) {
            tk_buf_put(o, REPLACEMENT_CHAR, 3);
            used = 1;
        } else {
            tk_buf_put(o, bytes + off, used);
        }
        off += used;
    }
}

int ptts_tokenizer_decode_part(const ptts_tokenizer *t, const int *ids, int n, int continued,
                               char **text, ptts_error *e) {
    if (!t || !text || n < 0 || (!ids && n))
        return ptts_fail(e, PTTS_E_INVALID, "tokenizer: invalid arguments to decode");
    *text = NULL;
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= t->n)
            return ptts_fail(e, PTTS_E_INVALID, "tokenizer: invalid id %d (vocabulary %d)", ids[i],
                             t->n);
    if (t->kind == TK_JSON) return tk_json_decode(t, ids, n, continued, text, e);
    buf o = {0};
    unsigned char *bytes = malloc((size_t)n + 1);
    size_t nb = 0;
    if (!bytes) return ptts_fail(e, PTTS_E_NOMEM, "tokenizer: out of memory");
    int strip = !continued && (t->norm.add_dummy_prefix || t->norm.remove_extra_ws);
    for (int i = 0; i < n; i++) {
        const char *p = t->piece[ids[i]];
        size_t pl = t->len[ids[i]];
        int id = tk_piece_to_id(t, p, pl);
        int ty = t->type[id];
        if (ty == PT_BYTE) {
            bytes[nb++] = (unsigned char)tk_piece_to_byte(t->piece[id], t->len[id]);
            continue;
        }
        flush_bytes(&o, bytes, nb);
        nb = 0;
        if (ty == PT_CONTROL) continue;
        if (ty == PT_UNKNOWN) {
            if (t->len[id] == pl && memcmp(t->piece[id], p, pl) == 0)
                tk_buf_put(&o, t->unk_surface, strlen(t->unk_surface));
            else
                tk_buf_put(&o, p, pl);
            continue;
        }
        if (o.n == 0 && strip && pl >= SPACE_SYM_LEN && memcmp(p, SPACE_SYM, SPACE_SYM_LEN) == 0) {
            p += SPACE_SYM_LEN;
            pl -= SPACE_SYM_LEN;
        }
        size_t a = 0;
        for (size_t j = 0; j + SPACE_SYM_LEN <= pl;) {
            if (memcmp(p + j, SPACE_SYM, SPACE_SYM_LEN) == 0) {
                tk_buf_put(&o, p + a, j - a);
                tk_buf_put(&o, " ", 1);
                j += SPACE_SYM_LEN;
                a = j;
            } else {
                j++;
            }
        }
        tk_buf_put(&o, p + a, pl - a);
    }
    flush_bytes(&o, bytes, nb);
    free(bytes);
    if (t->has_denorm && !o.oom) {
        buf d = {0};
        int rc = tk_normalize(t, &t->denorm, 0, 0, o.p ? o.p : "", o.n, &d, e);
        free(o.p);
        if (rc) {
            free(d.p);
            return rc;
        }
        o = d;
    }
    if (tk_buf_reserve(&o, 1)) {
        free(o.p);
        return ptts_fail(e, PTTS_E_NOMEM, "tokenizer: out of memory");
    }
    o.p[o.n] = 0;
    *text = o.p;
    return 0;
}

int ptts_tokenizer_decode(const ptts_tokenizer *t, const int *ids, int n, char **text,
                          ptts_error *e) {
    return ptts_tokenizer_decode_part(t, ids, n, 0, text, e);
}

int ptts_tokenizer_decode_is_local(const ptts_tokenizer *t) { return t && !t->has_denorm; }

int ptts_tokenizer_decode_continues(const ptts_tokenizer *t, const int *ids, int n, int *yes,
                                    ptts_error *e) {
    if (!t || !yes || n < 0 || (!ids && n))
        return ptts_fail(e, PTTS_E_INVALID, "tokenizer: invalid arguments to decode");
    *yes = 0;
    if (t->kind == TK_JSON) {
        /* The Metaspace decoder treats the first token that is not special as the first. */
        for (int i = 0; i < n && !*yes; i++) {
            if (ids[i] < 0 || ids[i] >= t->n)
                return ptts_fail(e, PTTS_E_INVALID, "tokenizer: invalid id %d (vocabulary %d)",
                                 ids[i], t->n);
            *yes = !t->special[ids[i]];
        }
        return PTTS_OK;
    }
    char *s;
    int rc = ptts_tokenizer_decode(t, ids, n, &s, e);
    if (rc) return rc;
    *yes = s[0] != '\0';
    free(s);
    return PTTS_OK;
}

int ptts_tokenizer_in_byte_run(const ptts_tokenizer *t, int id) {
    if (!t || id < 0 || id >= t->n) return 0;
    return t->type[id] == PT_BYTE || (t->kind == TK_JSON && t->special[id]);
}
