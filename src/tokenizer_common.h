/*
 * tokenizer_common.h - what the tokenizer files share (not a public header): the tokenizer struct,
 * the growable byte buffer, UTF-8 decoding as SentencePiece does it, the hashed byte trie and
 * the piece hash map (tokenizer_common.c), the SentencePiece loader (tokenizer_model.c) and the
 * tokenizer.json backend (tokenizer_json.c). tokenizer.c holds the public entry points and the
 * SentencePiece normalizer, encoders and decoder.
 */
#ifndef PTTS_TOKENIZER_COMMON_H
#define PTTS_TOKENIZER_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

/* The public handle of tokenizer.h, defined below (C11 allows the repeated typedef). */
typedef struct ptts_tokenizer ptts_tokenizer;

enum { PT_NORMAL = 1, PT_UNKNOWN = 2, PT_CONTROL = 3, PT_USER = 4, PT_UNUSED = 5, PT_BYTE = 6 };
enum { MT_UNIGRAM = 1, MT_BPE = 2, MT_WORD = 3, MT_CHAR = 4 };

#define SPACE_SYM "\xe2\x96\x81"
#define SPACE_SYM_LEN 3
#define REPLACEMENT_CHAR "\xef\xbf\xbd"
#define CHARSMAP_MAX_RESULTS 32 /* the library's kMaxTrieResultsSize */
#define MODEL_MAX_BYTES ((size_t)1 << 30)
/* The shipped English file is 245 KB; cJSON needs up to ~20x the text in nodes. */
#define JSON_MAX_BYTES ((size_t)16 << 20)

enum { TK_SENTENCEPIECE = 0, TK_JSON = 1 };

/* Growable byte buffer; oom is sticky (later puts do nothing). */
typedef struct {
    char *p;
    size_t n, cap;
    int oom;
} buf;

/* Byte trie with a hashed transition table: key (node << 8 | byte) -> child node.             */

typedef struct {
    uint32_t *keys; /* key + 1; 0 = empty slot */
    int32_t *child;
    uint32_t mask;
    int32_t *value; /* per node: piece id or -1 */
    int n_nodes, cap_nodes;
} htrie;

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
    char **piece;  /* NUL-terminated piece strings */
    uint32_t *len; /* their lengths */
    float *score;
    uint8_t *type;
    char *store; /* backing memory of the piece strings */

    int model_type, byte_fallback, ws_suffix, unk_id;
    float min_score, max_score;
    char *unk_surface;

    norm_spec norm, denorm;
    int has_denorm;

    piece_map normal_map, reserved_map; /* the library's pieces_ and reserved_id_map_ (JSON:
                                         * every piece is in normal_map) */
    htrie trie;                         /* NORMAL, USER_DEFINED, UNUSED pieces (JSON: all) */
    htrie user;                         /* USER_DEFINED pieces (the prefix matcher) */
    int n_user;
    int byte_id[256];

    /* tokenizer.json only (tokenizer_json.c); score is unused there. */
    int kind;          /* TK_SENTENCEPIECE or TK_JSON */
    double *dscore;    /* the vocabulary's float64 scores */
    double unk_dscore; /* min(all scores) - 10: the unknown edge */
    uint8_t *special;  /* per id: an added special token (decode drops it) */
    htrie added;       /* the added tokens' contents, matched before the model */
    int n_added;
    /* The normalizer steps after the charsmap (t->norm, when Precompiled): Replace(" {2,}" ->
     * " "), Strip's two sides, Prepend("\u2581"). */
    uint8_t collapse_spaces, strip_left, strip_right, prepend;
};

int tk_buf_reserve(buf *b, size_t extra);
void tk_buf_put(buf *b, const void *s, size_t n);
int tk_ends_with(const buf *b, const char *s, size_t n);

/* UTF-8 as string_util::DecodeUTF8 / OneCharLen: the byte length announced by a lead byte; the
 * code point at s (0xFFFD with *mblen = 1 when malformed); IsValidDecodeUTF8 (a literal U+FFFD
 * counts as valid). */
size_t tk_char_len(unsigned char c);
uint32_t tk_decode_utf8(const unsigned char *s, size_t len, size_t *mblen);
int tk_valid_utf8(const unsigned char *s, size_t len, size_t *mblen);

int tk_trie_init(htrie *t, size_t total_bytes);
void tk_trie_free(htrie *t);
/* Inserts a key (the caller sized the trie for the sum of all key lengths). */
void tk_trie_insert(htrie *t, const unsigned char *s, size_t n, int32_t value);
/* Length of the longest key that is a prefix of s[0..n) (0 when none). */
size_t tk_trie_longest(const htrie *t, const unsigned char *s, size_t n);

static inline uint32_t htrie_hash(uint32_t k) {
    k *= 0x9E3779B1u;
    return k ^ (k >> 15);
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

uint32_t tk_hash(const void *p, size_t n);
int tk_map_init(piece_map *m, int n);
int tk_map_find(const ptts_tokenizer *t, const piece_map *m, const char *s, size_t n);
/* 0, or -1 when the piece is already present. */
int tk_map_add(ptts_tokenizer *t, piece_map *m, int id);
/* The library's PieceToId: reserved pieces first, then normal ones, else unk. */
int tk_piece_to_id(const ptts_tokenizer *t, const char *s, size_t n);
/* "<0xXX>" (upper-case hex, as ByteToPiece writes it) -> byte, else -1. */
int tk_piece_to_byte(const char *s, size_t n);

/* A whole file into *out (malloc'd, *size bytes), refused beyond max bytes. */
int tk_read_file(const char *path, size_t max, char **out, size_t *size, ptts_error *e);

void tk_norm_free(norm_spec *s);
/* Splits s->charsmap (the precompiled double array + replacement pool blob, which the caller
 * keeps) into s->units and s->pool, both copied (tokenizer_model.c). */
int tk_load_charsmap(norm_spec *s, const char *name, ptts_error *e);
/* t->norm's charsmap alone over text[0..len) into o (tokenizer.c): each character replaced by
 * its longest match, invalid UTF-8 bytes by U+FFFD; PTTS_E_FORMAT when the charsmap is broken. */
/* The SentencePiece normalization of text [len] into o (tokenizer_norm.c): s the charsmap and
 * whitespace rules, use_matcher the user-defined symbols first, ws_suffix the whitespace
 * suffix mode. */
int tk_normalize(const ptts_tokenizer *t, const norm_spec *s, int use_matcher, int ws_suffix,
                 const char *text, size_t len, buf *o, ptts_error *e);
int tk_charsmap_apply(const ptts_tokenizer *t, const char *text, size_t len, buf *o, ptts_error *e);
/* SentencePiece .model bytes into t (tokenizer_model.c). */
int tk_sp_load(ptts_tokenizer *t, const uint8_t *data, size_t size, const char *name,
               ptts_error *e);

/* tokenizer_json.c */
int tk_json_load(ptts_tokenizer *t, const char *data, size_t size, const char *name, ptts_error *e);
void tk_json_free(ptts_tokenizer *t);
int tk_json_encode(const ptts_tokenizer *t, const char *text, size_t len, int **ids, int *n,
                   ptts_error *e);
int tk_json_decode(const ptts_tokenizer *t, const int *ids, int n, int continued, char **text,
                   ptts_error *e);

#endif
