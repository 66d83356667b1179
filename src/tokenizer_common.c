/*
 * tokenizer_common.c - the pieces both tokenizer backends build on (declared in
 * tokenizer_common.h).
 *
 * Map: growable byte buffer -> UTF-8 decoding exactly as SentencePiece's string_util (malformed
 * bytes are one U+FFFD each, so hostile text never stops a scan) -> a byte trie with a hashed
 * transition table (one probe per byte: the Viterbi searches stay linear in text length times
 * the longest piece) -> a piece hash map (string -> id, as the library's pieces_) -> reading a
 * whole file with a size bound.
 */
#include "tokenizer_common.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tk_buf_reserve(buf *b, size_t extra) {
    if (b->oom) return -1;
    if (extra <= b->cap - b->n) return 0;
    if (extra > SIZE_MAX / 2 - b->n) {
        b->oom = 1;
        return -1;
    }
    size_t cap = b->cap ? b->cap : 64;
    while (cap - b->n < extra)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void tk_buf_put(buf *b, const void *s, size_t n) {
    if (n == 0 || tk_buf_reserve(b, n)) return;
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

int tk_ends_with(const buf *b, const char *s, size_t n) {
    return b->n >= n && memcmp(b->p + b->n - n, s, n) == 0;
}

/* ------------------------------------------------------------------------------------------ */
/* UTF-8 as string_util::DecodeUTF8 / OneCharLen.                                              */

size_t tk_char_len(unsigned char c) {
    static const unsigned char tbl[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return tbl[c >> 4];
}

static int is_trail(unsigned char c) { return (c & 0xC0) == 0x80; }
static int valid_cp(uint32_t c) { return c < 0xD800 || (c >= 0xE000 && c <= 0x10FFFF); }

/* Returns the code point (0xFFFD with *mblen = 1 when malformed). */
uint32_t tk_decode_utf8(const unsigned char *s, size_t len, size_t *mblen) {
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
        uint32_t cp =
            ((uint32_t)(s[0] & 0x0F) << 12) | ((uint32_t)(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
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
int tk_valid_utf8(const unsigned char *s, size_t len, size_t *mblen) {
    uint32_t c = tk_decode_utf8(s, len, mblen);
    return c != 0xFFFD || *mblen == 3;
}

/* ------------------------------------------------------------------------------------------ */
/* Byte trie with a hashed transition table: key (node << 8 | byte) -> child node.             */

int tk_trie_init(htrie *t, size_t total_bytes) {
    memset(t, 0, sizeof *t);
    if (total_bytes > (size_t)INT_MAX / 4) return -1;
    size_t cap = 16;
    while (cap < total_bytes * 2 + 2)
        cap *= 2;
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

void tk_trie_free(htrie *t) {
    free(t->keys);
    free(t->child);
    free(t->value);
    memset(t, 0, sizeof *t);
}

/* Inserts a key (the caller sized the trie for the sum of all key lengths). */
void tk_trie_insert(htrie *t, const unsigned char *s, size_t n, int32_t value) {
    int32_t node = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t nx = htrie_next(t, node, s[i]);
        if (nx < 0) {
            nx = t->n_nodes++;
            t->value[nx] = -1;
            uint32_t key = ((uint32_t)node << 8 | s[i]) + 1;
            uint32_t h = htrie_hash(key) & t->mask;
            while (t->keys[h])
                h = (h + 1) & t->mask;
            t->keys[h] = key;
            t->child[h] = nx;
        }
        node = nx;
    }
    t->value[node] = value;
}

/* Length of the longest key that is a prefix of s[0..n) (0 when none). */
size_t tk_trie_longest(const htrie *t, const unsigned char *s, size_t n) {
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
/* Piece hash map.                                                                             */

uint32_t tk_hash(const void *p, size_t n) {
    const unsigned char *s = p;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 16777619u;
    return h;
}

int tk_map_init(piece_map *m, int n) {
    size_t cap = 16;
    while (cap < (size_t)n * 2 + 2)
        cap *= 2;
    m->slot = calloc(cap, sizeof *m->slot);
    m->mask = (uint32_t)(cap - 1);
    return m->slot ? 0 : -1;
}

int tk_map_find(const ptts_tokenizer *t, const piece_map *m, const char *s, size_t n) {
    uint32_t h = tk_hash(s, n) & m->mask;
    for (;;) {
        uint32_t v = m->slot[h];
        if (!v) return -1;
        int id = (int)(v - 1);
        if (t->len[id] == n && memcmp(t->piece[id], s, n) == 0) return id;
        h = (h + 1) & m->mask;
    }
}

/* 0, or -1 when the piece is already present. */
int tk_map_add(ptts_tokenizer *t, piece_map *m, int id) {
    uint32_t h = tk_hash(t->piece[id], t->len[id]) & m->mask;
    for (;;) {
        uint32_t v = m->slot[h];
        if (!v) {
            m->slot[h] = (uint32_t)id + 1;
            return 0;
        }
        int o = (int)(v - 1);
        if (t->len[o] == t->len[id] && memcmp(t->piece[o], t->piece[id], t->len[id]) == 0)
            return -1;
        h = (h + 1) & m->mask;
    }
}

/* The library's PieceToId: reserved pieces first, then normal ones, else unk. */
int tk_piece_to_id(const ptts_tokenizer *t, const char *s, size_t n) {
    int id = tk_map_find(t, &t->reserved_map, s, n);
    if (id >= 0) return id;
    id = tk_map_find(t, &t->normal_map, s, n);
    return id >= 0 ? id : t->unk_id;
}

/* "<0xXX>" (upper-case hex, as ByteToPiece writes it) -> byte, else -1. */
int tk_piece_to_byte(const char *s, size_t n) {
    static const char hex[] = "0123456789ABCDEF";
    if (n != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>') return -1;
    const char *a = memchr(hex, s[3], 16), *b = memchr(hex, s[4], 16);
    if (!a || !b || !s[3] || !s[4]) return -1;
    return (int)((a - hex) * 16 + (b - hex));
}

int tk_read_file(const char *path, size_t max, char **out, size_t *size, ptts_error *e) {
    *out = NULL;
    *size = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp) return ptts_fail(e, PTTS_E_IO, "%s: cannot open", path);
    buf b = {0};
    char chunk[65536];
    size_t got;
    int too_big = 0;
    while ((got = fread(chunk, 1, sizeof chunk, fp)) > 0) {
        tk_buf_put(&b, chunk, got);
        if (b.oom) break;
        if (b.n > max) {
            too_big = 1;
            break;
        }
    }
    int err = ferror(fp);
    fclose(fp);
    int rc = PTTS_OK;
    if (err)
        rc = ptts_fail(e, PTTS_E_IO, "%s: read error", path);
    else if (b.oom)
        rc = ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory", path);
    else if (too_big)
        rc = ptts_fail(e, PTTS_E_FORMAT, "%s: tokenizer file larger than %zu bytes", path, max);
    if (rc) {
        free(b.p);
        return rc;
    }
    *out = b.p;
    *size = b.n;
    return PTTS_OK;
}
