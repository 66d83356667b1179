/*
 * tokenizer.c - SentencePiece in C, bit-exact with the SentencePiece library 0.1.97 (the one the
 * reference Pocket TTS calls), so that token ids never differ from the reference's.
 *
 * What it does and why it is built this way:
 *  - The `.model` file is a protobuf ModelProto. A small wire-format reader takes only the fields
 *    that change encoding or decoding (pieces, trainer_spec model_type / byte_fallback /
 *    treat_whitespace_as_suffix / unk_surface, normalizer_spec and denormalizer_spec) and checks
 *    every length, so hostile files give PTTS_E_FORMAT instead of crashes. A known field with the
 *    wrong wire type is an error too (protobuf would keep it as an unknown field, but no writer
 *    produces that, and rejecting it keeps the reader simple and strict).
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
#include "tokenizer.h"

#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PT_NORMAL = 1, PT_UNKNOWN = 2, PT_CONTROL = 3, PT_USER = 4, PT_UNUSED = 5, PT_BYTE = 6 };
enum { MT_UNIGRAM = 1, MT_BPE = 2, MT_WORD = 3, MT_CHAR = 4 };

#define SPACE_SYM "\xe2\x96\x81"
#define SPACE_SYM_LEN 3
#define REPLACEMENT_CHAR "\xef\xbf\xbd"
#define CHARSMAP_MAX_RESULTS 32 /* the library's kMaxTrieResultsSize */
#define MODEL_MAX_BYTES ((size_t)1 << 30)

/* ------------------------------------------------------------------------------------------ */
/* Growable byte buffer.                                                                       */

typedef struct {
    char *p;
    size_t n, cap;
    int oom;
} buf;

static int buf_reserve(buf *b, size_t extra) {
    if (b->oom) return -1;
    if (extra <= b->cap - b->n) return 0;
    if (extra > SIZE_MAX / 2 - b->n) {
        b->oom = 1;
        return -1;
    }
    size_t cap = b->cap ? b->cap : 64;
    while (cap - b->n < extra) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

static void buf_put(buf *b, const void *s, size_t n) {
    if (n == 0 || buf_reserve(b, n)) return;
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

static int ends_with(const buf *b, const char *s, size_t n) {
    return b->n >= n && memcmp(b->p + b->n - n, s, n) == 0;
}

/* ------------------------------------------------------------------------------------------ */
/* UTF-8 as string_util::DecodeUTF8 / OneCharLen.                                              */

static size_t one_char_len(unsigned char c) {
    static const unsigned char tbl[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return tbl[c >> 4];
}

static int is_trail(unsigned char c) { return (c & 0xC0) == 0x80; }
static int valid_cp(uint32_t c) { return c < 0xD800 || (c >= 0xE000 && c <= 0x10FFFF); }

/* Returns the code point (0xFFFD with *mblen = 1 when malformed). */
static uint32_t decode_utf8(const unsigned char *s, size_t len, size_t *mblen) {
    if (s[0] < 0x80) {
        *mblen = 1;
        return s[0];
    }
    if (len >= 2 && (s[0] & 0xE0) == 0xC0) {
        uint32_t cp = ((uint32_t)(s[0] & 0x1F) << 6) | (s[1] & 0x3F);
        if (is_trail(s[1]) && cp >= 0x80 && valid_cp(cp)) {
            *mblen = 2;
            return cp;
        }
    } else if (len >= 3 && (s[0] & 0xF0) == 0xE0) {
        uint32_t cp = ((uint32_t)(s[0] & 0x0F) << 12) | ((uint32_t)(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
        if (is_trail(s[1]) && is_trail(s[2]) && cp >= 0x800 && valid_cp(cp)) {
            *mblen = 3;
            return cp;
        }
    } else if (len >= 4 && (s[0] & 0xF8) == 0xF0) {
        uint32_t cp = ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3F) << 12) |
                      ((uint32_t)(s[2] & 0x3F) << 6) | (s[3] & 0x3F);
        if (is_trail(s[1]) && is_trail(s[2]) && is_trail(s[3]) && cp >= 0x10000 && valid_cp(cp)) {
            *mblen = 4;
            return cp;
        }
    }
    *mblen = 1;
    return 0xFFFD;
}

/* IsValidDecodeUTF8: a literal U+FFFD (3 bytes) counts as valid. */
static int valid_decode_utf8(const unsigned char *s, size_t len, size_t *mblen) {
    uint32_t c = decode_utf8(s, len, mblen);
    return c != 0xFFFD || *mblen == 3;
}

/* ------------------------------------------------------------------------------------------ */
/* Byte trie with a hashed transition table: key (node << 8 | byte) -> child node.             */

typedef struct {
    uint32_t *keys; /* key + 1; 0 = empty slot */
    int32_t *child;
    uint32_t mask;
    int32_t *value; /* per node: piece id or -1 */
    int n_nodes, cap_nodes;
} htrie;

static uint32_t htrie_hash(uint32_t k) {
    k *= 0x9E3779B1u;
    return k ^ (k >> 15);
}

static int htrie_init(htrie *t, size_t total_bytes) {
    memset(t, 0, sizeof *t);
    if (total_bytes > (size_t)INT_MAX / 4) return -1;
    size_t cap = 16;
    while (cap < total_bytes * 2 + 2) cap *= 2;
    t->keys = calloc(cap, sizeof *t->keys);
    t->child = malloc(cap * sizeof *t->child);
    t->cap_nodes = (int)total_bytes + 1;
    t->value = malloc((size_t)t->cap_nodes * sizeof *t->value);
    if (!t->keys || !t->child || !t->value) return -1;
    t->mask = (uint32_t)(cap - 1);
    t->n_nodes = 1;
    t->value[0] = -1;
    return 0;
}

static void htrie_free(htrie *t) {
    free(t->keys);
    free(t->child);
    free(t->value);
    memset(t, 0, sizeof *t);
}

static inline int32_t htrie_next(const htrie *t, int32_t node, unsigned char c) {
    uint32_t key = ((uint32_t)node << 8 | c) + 1;
    uint32_t h = htrie_hash(key) & t->mask;
    for (;;) {
        uint32_t k = t->keys[h];
        if (k == key) return t->child[h];
        if (k == 0) return -1;
        h = (h + 1) & t->mask;
    }
}

/* Inserts a key (the caller sized the trie for the sum of all key lengths). */
static void htrie_insert(htrie *t, const unsigned char *s, size_t n, int32_t value) {
    int32_t node = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t nx = htrie_next(t, node, s[i]);
        if (nx < 0) {
            nx = t->n_nodes++;
            t->value[nx] = -1;
            uint32_t key = ((uint32_t)node << 8 | s[i]) + 1;
            uint32_t h = htrie_hash(key) & t->mask;
            while (t->keys[h]) h = (h + 1) & t->mask;
            t->keys[h] = key;
            t->child[h] = nx;
        }
        node = nx;
    }
    t->value[node] = value;
}

/* Length of the longest key that is a prefix of s[0..n) (0 when none). */
static size_t htrie_longest(const htrie *t, const unsigned char *s, size_t n) {
    int32_t node = 0;
    size_t best = 0;
    for (size_t i = 0; i < n; i++) {
        node = htrie_next(t, node, s[i]);
        if (node < 0) break;
        if (t->value[node] >= 0) best = i + 1;
    }
    return best;
}

/* ------------------------------------------------------------------------------------------ */
/* The model.                                                                                  */

typedef struct {
    int add_dummy_prefix, remove_extra_ws, escape_ws;
    const uint8_t *charsmap; /* raw bytes inside the model copy (set while parsing) */
    size_t charsmap_len;
    uint32_t *units; /* darts-clone double array */
    size_t n_units;
    char *pool; /* replacement strings, NUL-terminated (an extra NUL appended) */
    size_t pool_len;
} norm_spec;

typedef struct {
    uint32_t *slot; /* piece id + 1; 0 = empty */
    uint32_t mask;
} piece_map;

struct ptts_tokenizer {
    int n;
    char **piece;     /* NUL-terminated piece strings */
    uint32_t *len;    /* their lengths */
    float *score;
    uint8_t *type;
    char *store; /* backing memory of the piece strings */

    int model_type, byte_fallback, ws_suffix, unk_id;
    float min_score, max_score;
    char *unk_surface;

    norm_spec norm, denorm;
    int has_denorm;

    piece_map normal_map, reserved_map; /* the library's pieces_ and reserved_id_map_ */
    htrie trie;                         /* NORMAL, USER_DEFINED, UNUSED pieces */
    htrie user;                         /* USER_DEFINED pieces (the prefix matcher) */
    int n_user;
    int byte_id[256];
};

static uint32_t hash_bytes(const void *p, size_t n) {
    const unsigned char *s = p;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 16777619u;
    return h;
}

static int map_init(piece_map *m, int n) {
    size_t cap = 16;
    while (cap < (size_t)n * 2 + 2) cap *= 2;
    m->slot = calloc(cap, sizeof *m->slot);
    m->mask = (uint32_t)(cap - 1);
    return m->slot ? 0 : -1;
}

static int map_find(const ptts_tokenizer *t, const piece_map *m, const char *s, size_t n) {
    uint32_t h = hash_bytes(s, n) & m->mask;
    for (;;) {
        uint32_t v = m->slot[h];
        if (!v) return -1;
        int id = (int)(v - 1);
        if (t->len[id] == n && memcmp(t->piece[id], s, n) == 0) return id;
        h = (h + 1) & m->mask;
    }
}

/* 0, or -1 when the piece is already present. */
static int map_add(ptts_tokenizer *t, piece_map *m, int id) {
    uint32_t h = hash_bytes(t->piece[id], t->len[id]) & m->mask;
    for (;;) {
        uint32_t v = m->slot[h];
        if (!v) {
            m->slot[h] = (uint32_t)id + 1;
            return 0;
        }
        int o = (int)(v - 1);
        if (t->len[o] == t->len[id] && memcmp(t->piece[o], t->piece[id], t->len[id]) == 0) return -1;
        h = (h + 1) & m->mask;
    }
}

/* The library's PieceToId: reserved pieces first, then normal ones, else unk. */
static int piece_to_id(const ptts_tokenizer *t, const char *s, size_t n) {
    int id = map_find(t, &t->reserved_map, s, n);
    if (id >= 0) return id;
    id = map_find(t, &t->normal_map, s, n);
    return id >= 0 ? id : t->unk_id;
}

/* "<0xXX>" (upper-case hex, as ByteToPiece writes it) -> byte, else -1. */
static int piece_to_byte(const char *s, size_t n) {
    static const char hex[] = "0123456789ABCDEF";
    if (n != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>') return -1;
    const char *a = memchr(hex, s[3], 16), *b = memchr(hex, s[4], 16);
    if (!a || !b || !s[3] || !s[4]) return -1;
    return (int)((a - hex) * 16 + (b - hex));
}

/* ------------------------------------------------------------------------------------------ */
/* Protobuf wire format.                                                                       */

typedef struct {
    const uint8_t *p, *end;
} pb;

typedef struct {
    uint32_t field;
    int wt;
    uint64_t v;          /* varint, fixed32, fixed64 */
    const uint8_t *data; /* length-delimited */
    size_t len;
} pbf;

static int pb_varint(pb *r, uint64_t *v) {
    uint64_t x = 0;
    for (int s = 0; s < 64; s += 7) {
        if (r->p >= r->end) return -1;
        uint8_t c = *r->p++;
        x |= (uint64_t)(c & 0x7F) << s;
        if (!(c & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

/* 1: a field was read; 0: end of message; -1: malformed. */
static int pb_next(pb *r, pbf *f) {
    if (r->p >= r->end) return 0;
    uint64_t key;
    if (pb_varint(r, &key)) return -1;
    if (key >> 32 || (key >> 3) == 0) return -1;
    f->field = (uint32_t)(key >> 3);
    f->wt = (int)(key & 7);
    f->data = NULL;
    f->len = 0;
    f->v = 0;
    switch (f->wt) {
    case 0: return pb_varint(r, &f->v) ? -1 : 1;
    case 1:
        if (r->end - r->p < 8) return -1;
        for (int i = 0; i < 8; i++) f->v |= (uint64_t)r->p[i] << (8 * i);
        r->p += 8;
        return 1;
    case 2: {
        uint64_t n;
        if (pb_varint(r, &n)) return -1;
        if (n > (uint64_t)(r->end - r->p)) return -1;
        f->data = r->p;
        f->len = (size_t)n;
        r->p += n;
        return 1;
    }
    case 5:
        if (r->end - r->p < 4) return -1;
        for (int i = 0; i < 4; i++) f->v |= (uint64_t)r->p[i] << (8 * i);
        r->p += 4;
        return 1;
    default: return -1; /* groups (3, 4) are not used by ModelProto; 6 and 7 do not exist */
    }
}

typedef struct {
    const uint8_t *s;
    size_t len;
    float score;
    int type;
} raw_piece;

static int parse_piece(const uint8_t *d, size_t n, raw_piece *out) {
    pb r = {d, d + n};
    pbf f;
    int k;
    out->s = (const uint8_t *)"";
    out->len = 0;
    out->score = 0;
    out->type = PT_NORMAL;
    while ((k = pb_next(&r, &f)) == 1) {
        if (f.field == 1) {
            if (f.wt != 2) return -1;
            out->s = f.data;
            out->len = f.len;
        } else if (f.field == 2) {
            if (f.wt != 5) return -1;
            uint32_t u = (uint32_t)f.v;
            memcpy(&out->score, &u, 4);
        } else if (f.field == 3) {
            if (f.wt != 0) return -1;
            if (f.v >= PT_NORMAL && f.v <= PT_BYTE) out->type = (int)f.v; /* unknown enum: ignored */
        }
    }
    return k;
}

typedef struct {
    int model_type, byte_fallback, ws_suffix;
    const uint8_t *unk_surface;
    size_t unk_surface_len;
    int has_unk_surface;
} raw_trainer;

static int parse_trainer(const uint8_t *d, size_t n, raw_trainer *t) {
    pb r = {d, d + n};
    pbf f;
    int k;
    while ((k = pb_next(&r, &f)) == 1) {
        switch (f.field) {
        case 3: /* model_type */
            if (f.wt != 0) return -1;
            if (f.v >= MT_UNIGRAM && f.v <= MT_CHAR) t->model_type = (int)f.v;
            break;
        case 24: /* treat_whitespace_as_suffix */
            if (f.wt != 0) return -1;
            t->ws_suffix = f.v != 0;
            break;
        case 35: /* byte_fallback */
            if (f.wt != 0) return -1;
            t->byte_fallback = f.v != 0;
            break;
        case 40: case 41: case 42: case 43: /* unk/bos/eos/pad ids (pieces carry their types) */
            if (f.wt != 0) return -1;
            break;
        case 44: /* unk_surface */
            if (f.wt != 2) return -1;
            t->unk_surface = f.data;
            t->unk_surface_len = f.len;
            t->has_unk_surface = 1;
            break;
        default: break;
        }
    }
    return k;
}

static int parse_normalizer(const uint8_t *d, size_t n, norm_spec *s) {
    pb r = {d, d + n};
    pbf f;
    int k;
    while ((k = pb_next(&r, &f)) == 1) {
        switch (f.field) {
        case 1: /* name */
        case 6: /* normalization_rule_tsv */
            if (f.wt != 2) return -1;
            break;
        case 2:
            if (f.wt != 2) return -1;
            s->charsmap = f.data;
            s->charsmap_len = f.len;
            break;
        case 3:
            if (f.wt != 0) return -1;
            s->add_dummy_prefix = f.v != 0;
            break;
        case 4:
            if (f.wt != 0) return -1;
            s->remove_extra_ws = f.v != 0;
            break;
        case 5:
            if (f.wt != 0) return -1;
            s->escape_ws = f.v != 0;
            break;
        default: break;
        }
    }
    return k;
}

/* Splits the precompiled map into the double array and the replacement pool (both copied). */
static int load_charsmap(norm_spec *s, const char *name, ptts_error *e) {
    if (s->charsmap_len == 0) return 0;
    const uint8_t *b = s->charsmap;
    if (s->charsmap_len <= 4)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: precompiled_charsmap is broken", name);
    uint32_t trie_size = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    if (trie_size > s->charsmap_len - 4 || trie_size / 4 == 0)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: precompiled_charsmap trie size %u does not fit", name,
                         trie_size);
    s->n_units = trie_size / 4;
    s->units = malloc(s->n_units * sizeof *s->units);
    s->pool_len = s->charsmap_len - 4 - trie_size;
    s->pool = malloc(s->pool_len + 1);
    if (!s->units || !s->pool) return ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory", name);
    for (size_t i = 0; i < s->n_units; i++) {
        const uint8_t *u = b + 4 + 4 * i;
        s->units[i] = (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
    }
    memcpy(s->pool, b + 4 + trie_size, s->pool_len);
    s->pool[s->pool_len] = 0;
    return 0;
}

static void norm_free(norm_spec *s) {
    free(s->units);
    free(s->pool);
}

void ptts_tokenizer_free(ptts_tokenizer *t) {
    if (!t) return;
    free(t->piece);
    free(t->len);
    free(t->score);
    free(t->type);
    free(t->store);
    free(t->unk_surface);
    norm_free(&t->norm);
    norm_free(&t->denorm);
    free(t->normal_map.slot);
    free(t->reserved_map.slot);
    htrie_free(&t->trie);
    htrie_free(&t->user);
    free(t);
}

static int load_impl(ptts_tokenizer *t, const uint8_t *data, size_t size, const char *name,
                     ptts_error *e) {
    raw_piece *rp = NULL;
    size_t n_rp = 0, cap_rp = 0, total = 0;
    raw_trainer tr = {MT_UNIGRAM, 0, 0, NULL, 0, 0};
    norm_spec ns = {1, 1, 1, NULL, 0, NULL, 0, NULL, 0};
    norm_spec ds = {1, 1, 1, NULL, 0, NULL, 0, NULL, 0};
    int has_ds = 0, rc = 0;
    pb r = {data, data + size};
    pbf f;
    int k;
#define FAIL(code, ...)                                                                          \
    do {                                                                                         \
        rc = ptts_fail(e, code, __VA_ARGS__);                                                    \
        goto done;                                                                               \
    } while (0)

    while ((k = pb_next(&r, &f)) == 1) {
        if (f.field == 1) {
            if (f.wt != 2) FAIL(PTTS_E_FORMAT, "%s: pieces has the wrong wire type", name);
            if (n_rp == cap_rp) {
                size_t nc = cap_rp ? cap_rp * 2 : 1024;
                raw_piece *np = realloc(rp, nc * sizeof *rp);
                if (!np) FAIL(PTTS_E_NOMEM, "%s: out of memory", name);
                rp = np;
                cap_rp = nc;
            }
            if (parse_piece(f.data, f.len, &rp[n_rp]))
                FAIL(PTTS_E_FORMAT, "%s: piece %zu is malformed", name, n_rp);
            total += rp[n_rp].len;
            n_rp++;
        } else if (f.field == 2) {
            if (f.wt != 2 || parse_trainer(f.data, f.len, &tr))
                FAIL(PTTS_E_FORMAT, "%s: trainer_spec is malformed", name);
        } else if (f.field == 3) {
            if (f.wt != 2 || parse_normalizer(f.data, f.len, &ns))
                FAIL(PTTS_E_FORMAT, "%s: normalizer_spec is malformed", name);
        } else if (f.field == 5) {
            if (f.wt != 2 || parse_normalizer(f.data, f.len, &ds))
                FAIL(PTTS_E_FORMAT, "%s: denormalizer_spec is malformed", name);
            has_ds = 1;
        } else if (f.field == 4) {
            if (f.wt != 2) FAIL(PTTS_E_FORMAT, "%s: self_test_data has the wrong wire type", name);
        }
    }
    if (k < 0) FAIL(PTTS_E_FORMAT, "%s: not a SentencePiece model (malformed protobuf)", name);
    if (n_rp == 0) FAIL(PTTS_E_FORMAT, "%s: the model has no pieces", name);
    if (n_rp > (size_t)INT_MAX / 4) FAIL(PTTS_E_FORMAT, "%s: too many pieces", name);
    if (tr.model_type != MT_UNIGRAM && tr.model_type != MT_BPE)
        FAIL(PTTS_E_UNSUPPORTED, "%s: model type %d (word/char) is not supported", name, tr.model_type);

    t->n = (int)n_rp;
    t->model_type = tr.model_type;
    t->byte_fallback = tr.byte_fallback;
    t->ws_suffix = tr.ws_suffix;
    t->unk_id = -1;
    t->piece = malloc(n_rp * sizeof *t->piece);
    t->len = malloc(n_rp * sizeof *t->len);
    t->score = malloc(n_rp * sizeof *t->score);
    t->type = malloc(n_rp);
    t->store = malloc(total + n_rp);
    if (tr.has_unk_surface) {
        t->unk_surface = malloc(tr.unk_surface_len + 1);
        if (t->unk_surface) {
            memcpy(t->unk_surface, tr.unk_surface, tr.unk_surface_len);
            t->unk_surface[tr.unk_surface_len] = 0;
        }
    } else {
        t->unk_surface = ptts_strdup(" \xE2\x81\x87 ");
    }
    if (!t->piece || !t->len || !t->score || !t->type || !t->store || !t->unk_surface ||
        map_init(&t->normal_map, t->n) || map_init(&t->reserved_map, t->n))
        FAIL(PTTS_E_NOMEM, "%s: out of memory", name);

    char *w = t->store;
    size_t trie_bytes = 0, user_bytes = 0;
    int byte_found[256] = {0};
    t->min_score = FLT_MAX;
    t->max_score = FLT_MIN;
    for (int i = 0; i < t->n; i++) {
        const raw_piece *p = &rp[i];
        if (p->len == 0) FAIL(PTTS_E_FORMAT, "%s: piece %d is empty", name, i);
        if (p->len > UINT32_MAX / 2 || memchr(p->s, 0, p->len))
            FAIL(PTTS_E_FORMAT, "%s: piece %d holds a NUL byte or is too long", name, i);
        memcpy(w, p->s, p->len);
        w[p->len] = 0;
        t->piece[i] = w;
        t->len[i] = (uint32_t)p->len;
        w += p->len + 1;
        t->score[i] = p->score;
        t->type[i] = (uint8_t)p->type;
        int normal = p->type == PT_NORMAL || p->type == PT_USER || p->type == PT_UNUSED;
        if (map_add(t, normal ? &t->normal_map : &t->reserved_map, i))
            FAIL(PTTS_E_FORMAT, "%s: piece %d (\"%.40s\") is defined twice", name, i, t->piece[i]);
        if (normal) trie_bytes += p->len;
        if (p->type == PT_USER) {
            user_bytes += p->len;
            t->n_user++;
        }
        if (p->type == PT_NORMAL) {
            if (p->score < t->min_score) t->min_score = p->score;
            if (p->score > t->max_score) t->max_score = p->score;
        }
        if (p->type == PT_UNKNOWN) {
            if (t->unk_id >= 0) FAIL(PTTS_E_FORMAT, "%s: more than one unknown piece", name);
            t->unk_id = i;
        }
        if (p->type == PT_BYTE) {
            if (!t->byte_fallback)
                FAIL(PTTS_E_FORMAT, "%s: byte piece %d without byte_fallback", name, i);
            int b = piece_to_byte(t->piece[i], t->len[i]);
            if (b < 0) FAIL(PTTS_E_FORMAT, "%s: byte piece %d (\"%.40s\") is invalid", name, i, t->piece[i]);
            byte_found[b] = 1;
        }
    }
    if (t->unk_id < 0) FAIL(PTTS_E_FORMAT, "%s: no unknown piece (<unk>) is defined", name);
    if (t->byte_fallback)
        for (int b = 0; b < 256; b++)
            if (!byte_found[b]) FAIL(PTTS_E_FORMAT, "%s: byte_fallback without all 256 byte pieces", name);
    if (t->model_type == MT_UNIGRAM && trie_bytes == 0)
        FAIL(PTTS_E_FORMAT, "%s: no normal pieces are defined", name);
    if (trie_bytes > ((size_t)1 << 24) - 2) /* trie node ids must fit in 24 bits */
        FAIL(PTTS_E_FORMAT, "%s: the pieces are too long in total", name);

    if (htrie_init(&t->trie, trie_bytes) || htrie_init(&t->user, user_bytes))
        FAIL(PTTS_E_NOMEM, "%s: out of memory", name);
    for (int i = 0; i < t->n; i++) {
        int ty = t->type[i];
        if (ty == PT_NORMAL || ty == PT_USER || ty == PT_UNUSED)
            htrie_insert(&t->trie, (const unsigned char *)t->piece[i], t->len[i], i);
        if (ty == PT_USER) htrie_insert(&t->user, (const unsigned char *)t->piece[i], t->len[i], i);
    }
    for (int b = 0; b < 256; b++) {
        char s[8];
        snprintf(s, sizeof s, "<0x%02X>", b);
        t->byte_id[b] = piece_to_id(t, s, 6);
    }

    if ((rc = load_charsmap(&ns, name, e))) goto done;
    t->norm = ns;
    memset(&ns, 0, sizeof ns);
    if (has_ds && ds.charsmap_len > 0) {
        if ((rc = load_charsmap(&ds, name, e))) goto done;
        t->denorm = ds;
        t->has_denorm = 1;
        memset(&ds, 0, sizeof ds);
    }
#undef FAIL
done:
    norm_free(&ns);
    norm_free(&ds);
    free(rp);
    return rc;
}

int ptts_tokenizer_load_memory(ptts_tokenizer **out, const void *data, size_t size, const char *name,
                               ptts_error *e) {
    if (!out) return ptts_fail(e, PTTS_E_INVALID, "tokenizer: no output pointer");
    *out = NULL;
    if (!name) name = "tokenizer";
    if (!data && size) return ptts_fail(e, PTTS_E_INVALID, "%s: no data", name);
    if (size > MODEL_MAX_BYTES) return ptts_fail(e, PTTS_E_FORMAT, "%s: model file too large", name);
    ptts_tokenizer *t = calloc(1, sizeof *t);
    if (!t) return ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory", name);
    int rc = load_impl(t, data ? data : (const void *)"", size, name, e);
    if (rc) {
        ptts_tokenizer_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int ptts_tokenizer_load(ptts_tokenizer **out, const char *path, ptts_error *e) {
    if (!out || !path) return ptts_fail(e, PTTS_E_INVALID, "tokenizer: no path");
    *out = NULL;
    FILE *fp = fopen(path, "rb");
    if (!fp) return ptts_fail(e, PTTS_E_IO, "%s: cannot open", path);
    buf b = {0};
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, fp)) > 0) {
        buf_put(&b, chunk, got);
        if (b.oom || b.n > MODEL_MAX_BYTES) break;
    }
    int err = ferror(fp);
    fclose(fp);
    int rc;
    if (err) rc = ptts_fail(e, PTTS_E_IO, "%s: read error", path);
    else if (b.oom) rc = ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory", path);
    else rc = ptts_tokenizer_load_memory(out, b.p, b.n, path, e);
    free(b.p);
    return rc;
}

int ptts_tokenizer_vocab_size(const ptts_tokenizer *t) { return t ? t->n : 0; }

const char *ptts_tokenizer_piece(const ptts_tokenizer *t, int id) {
    if (!t || id < 0 || id >= t->n) return NULL;
    return t->piece[id];
}

/* ------------------------------------------------------------------------------------------ */
/* Normalizer.                                                                                 */

/* darts-clone commonPrefixSearch over the charsmap, keeping the longest of the first
 * CHARSMAP_MAX_RESULTS matches. 0 and *mlen = 0 when nothing matches; -1 on a bad index. */
static int charsmap_match(const norm_spec *s, const unsigned char *in, size_t n, size_t *mlen,
                          uint32_t *value) {
    const uint32_t *a = s->units;
    size_t nu = s->n_units, pos = 0;
    int found = 0;
    *mlen = 0;
    uint32_t u = a[0];
#define DA_OFFSET(u) (((u) >> 10) << (((u) & (1u << 9)) >> 6))
    pos ^= DA_OFFSET(u);
    for (size_t i = 0; i < n; i++) {
        pos ^= in[i];
        if (pos >= nu) return -1;
        u = a[pos];
        if ((u & 0x800000FFu) != in[i]) return 0;
        pos ^= DA_OFFSET(u);
        if ((u >> 8) & 1) {
            if (pos >= nu) return -1;
            if (found < CHARSMAP_MAX_RESULTS) {
                *mlen = i + 1;
                *value = a[pos] & 0x7FFFFFFFu;
            }
            found++;
        }
    }
#undef DA_OFFSET
    return 0;
}

/* NormalizePrefix: the normalized form of the first character(s) of `in` and the bytes it
 * consumed. 0, or -1 when the charsmap is broken. */
static int normalize_prefix(const ptts_tokenizer *t, const norm_spec *s, int use_matcher,
                            const unsigned char *in, size_t n, const char **out, size_t *out_len,
                            size_t *consumed) {
    if (use_matcher && t->n_user) {
        size_t m = htrie_longest(&t->user, in, n);
        if (m) {
            *out = (const char *)in;
            *out_len = *consumed = m;
            return 0;
        }
    }
    size_t mlen = 0;
    uint32_t value = 0;
    if (s->units && charsmap_match(s, in, n, &mlen, &value)) return -1;
    if (mlen == 0) {
        size_t l;
        if (!valid_decode_utf8(in, n, &l)) {
            *out = REPLACEMENT_CHAR;
            *out_len = 3;
            *consumed = 1;
        } else {
            *out = (const char *)in;
            *out_len = *consumed = l;
        }
        return 0;
    }
    if (value >= s->pool_len) return -1;
    *out = s->pool + value;
    *out_len = strlen(*out);
    *consumed = mlen;
    return 0;
}

static void add_ws(const norm_spec *s, buf *o) {
    if (s->escape_ws) buf_put(o, SPACE_SYM, SPACE_SYM_LEN);
    else buf_put(o, " ", 1);
}

static int normalize(const ptts_tokenizer *t, const norm_spec *s, int use_matcher, int ws_suffix,
                     const char *text, size_t len, buf *o, ptts_error *e) {
    const unsigned char *in = (const unsigned char *)text;
    const char *sp;
    size_t sp_len, used;
    o->n = 0;
    if (len == 0) return 0;
    if (s->remove_extra_ws) {
        while (len > 0) {
            if (normalize_prefix(t, s, use_matcher, in, len, &sp, &sp_len, &used)) goto broken;
            if (sp_len != 1 || sp[0] != ' ') break;
            in += used;
            len -= used;
        }
    }
    if (len == 0) return 0;
    if (buf_reserve(o, len * 3 + 16)) return ptts_fail(e, PTTS_E_NOMEM, "tokenizer: out of memory");
    if (!ws_suffix && s->add_dummy_prefix) add_ws(s, o);
    int prev_space = s->remove_extra_ws;
    while (len > 0) {
        if (normalize_prefix(t, s, use_matcher, in, len, &sp, &sp_len, &used)) goto broken;
        if (prev_space)
            while (sp_len > 0 && sp[0] == ' ') {
                sp++;
                sp_len--;
            }
        if (sp_len > 0) {
            if (s->escape_ws) {
                size_t a = 0;
                for (size_t i = 0; i < sp_len; i++)
                    if (sp[i] == ' ') {
                        buf_put(o, sp + a, i - a);
                        buf_put(o, SPACE_SYM, SPACE_SYM_LEN);
                        a = i + 1;
                    }
                buf_put(o, sp + a, sp_len - a);
            } else {
                buf_put(o, sp, sp_len);
            }
            prev_space = sp[sp_len - 1] == ' ';
        }
        in += used;
        len -= used;
        if (!s->remove_extra_ws) prev_space = 0;
    }
    if (s->remove_extra_ws) {
        const char *ws = s->escape_ws ? SPACE_SYM : " ";
        size_t wl = s->escape_ws ? SPACE_SYM_LEN : 1;
        while (ends_with(o, ws, wl)) o->n -= wl;
    }
    if (ws_suffix && s->add_dummy_prefix) add_ws(s, o);
    if (o->oom) return ptts_fail(e, PTTS_E_NOMEM, "tokenizer: out of memory");
    return 0;
broken:
    return ptts_fail(e, PTTS_E_FORMAT, "tokenizer: the precompiled charsmap is malformed");
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
        size_t mblen = one_char_len(s[start]);
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

/* The agenda's order: a before b when a has the lower score, or the same score and a greater left. */
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
    int id = map_find(c->t, &c->t->normal_map, (const char *)c->s + l->start, size);
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
        if (t->n_user) m = htrie_longest(&t->user, s + pos, size - pos);
        y->freeze = m > 0;
        if (!m) {
            m = one_char_len(s[pos]);
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
            int id = piece_to_id(t, (const char *)s + ws, wl);
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
    if ((rc = normalize(t, &t->norm, 1, t->ws_suffix, text, len, &norm, e))) goto done;
    if (norm.n > (size_t)INT32_MAX - 1) {
        rc = ptts_fail(e, PTTS_E_NOMEM, "tokenizer: text too long");
        goto done;
    }
    const unsigned char *s = (const unsigned char *)(norm.p ? norm.p : "");
    int r = t->model_type == MT_UNIGRAM ? encode_unigram(t, s, norm.n, &sg) : encode_bpe(t, s, norm.n, &sg);
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
        if (!valid_decode_utf8(bytes + off, n - off, &used)) {
            buf_put(o, REPLACEMENT_CHAR, 3);
            used = 1;
        } else {
            buf_put(o, bytes + off, used);
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
            return ptts_fail(e, PTTS_E_INVALID, "tokenizer: invalid id %d (vocabulary %d)", ids[i], t->n);
    buf o = {0};
    unsigned char *bytes = malloc((size_t)n + 1);
    size_t nb = 0;
    if (!bytes) return ptts_fail(e, PTTS_E_NOMEM, "tokenizer: out of memory");
    int strip = !continued && (t->norm.add_dummy_prefix || t->norm.remove_extra_ws);
    for (int i = 0; i < n; i++) {
        const char *p = t->piece[ids[i]];
        size_t pl = t->len[ids[i]];
        int id = piece_to_id(t, p, pl);
        int ty = t->type[id];
        if (ty == PT_BYTE) {
            bytes[nb++] = (unsigned char)piece_to_byte(t->piece[id], t->len[id]);
            continue;
        }
        flush_bytes(&o, bytes, nb);
        nb = 0;
        if (ty == PT_CONTROL) continue;
        if (ty == PT_UNKNOWN) {
            if (t->len[id] == pl && memcmp(t->piece[id], p, pl) == 0) buf_put(&o, t->unk_surface, strlen(t->unk_surface));
            else buf_put(&o, p, pl);
            continue;
        }
        if (o.n == 0 && strip && pl >= SPACE_SYM_LEN && memcmp(p, SPACE_SYM, SPACE_SYM_LEN) == 0) {
            p += SPACE_SYM_LEN;
            pl -= SPACE_SYM_LEN;
        }
        size_t a = 0;
        for (size_t j = 0; j + SPACE_SYM_LEN <= pl;) {
            if (memcmp(p + j, SPACE_SYM, SPACE_SYM_LEN) == 0) {
                buf_put(&o, p + a, j - a);
                buf_put(&o, " ", 1);
                j += SPACE_SYM_LEN;
                a = j;
            } else {
                j++;
            }
        }
        buf_put(&o, p + a, pl - a);
    }
    flush_bytes(&o, bytes, nb);
    free(bytes);
    if (t->has_denorm && !o.oom) {
        buf d = {0};
        int rc = normalize(t, &t->denorm, 0, 0, o.p ? o.p : "", o.n, &d, e);
        free(o.p);
        if (rc) {
            free(d.p);
            return rc;
        }
        o = d;
    }
    if (buf_reserve(&o, 1)) {
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

int ptts_tokenizer_is_byte(const ptts_tokenizer *t, int id) {
    return t && id >= 0 && id < t->n && t->type[id] == PT_BYTE;
}
