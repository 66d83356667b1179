/*
 * tokenizer_json.c - the Hugging Face `tokenizer.json` backend: the subset Kyutai ships (MODEL.md
 * 9.3) plus the normalizers Kyutai's converter adds for non-identity .model normalizers, encoded
 * and decoded as the `tokenizers` library does for them.
 *
 * Map: JSON helpers -> the normalizer (base64, Precompiled, Replace, Strip, Prepend) -> the
 * checks of the other components (nulls, pre_tokenizer, decoder) -> added_tokens -> the Unigram
 * vocabulary (pieces, scores, trie, byte ids) -> tk_json_load -> encoding (cut at added tokens,
 * the normalizer and Metaspace per segment, the Viterbi per word, fused unknown spans with byte
 * fallback) -> decoding (specials dropped, Metaspace, ByteFallback, Fuse).
 *
 * Why it is built this way:
 *  - The normalizer is either a bare Prepend("\u2581") or a Sequence of the converter's steps in
 *    its order, each optional: Precompiled (a SentencePiece precompiled_charsmap in base64,
 *    parsed and applied by the .model backend's code), Replace(Regex " {2,}" -> " "), Strip,
 *    Prepend("\u2581"). Anything else (another component, another Replace pattern, another
 *    order) is refused with PTTS_E_UNSUPPORTED naming it, as are a BPE model or a
 *    post_processor; malformed or hostile files get PTTS_E_FORMAT naming the field.
 *  - Precompiled is applied character by character with the longest charsmap match, as
 *    SentencePiece does; the library looks matches up per grapheme cluster first, which gives
 *    the same text wherever the charsmap's multi-character keys are whole clusters (its NFKC
 *    compositions are).
 *  - Memory is bounded by the file: the file is capped (JSON_MAX_BYTES), the vocabulary at
 *    JSON_MAX_PIECES, the trie at 2^24 - 2 bytes of pieces (its node ids are 24-bit); the
 *    charsmap by the file size.
 *  - The Viterbi is the library's Unigram encode_optimized: float64 scores, every vocabulary
 *    piece takes part (byte pieces and the literal control spellings too), an unknown edge of one
 *    character scored min(scores) - 10 where no one-character piece matches, ties kept by the
 *    first candidate (strict >). It is not SentencePiece's (float sums over NORMAL/USER pieces
 *    only), so it is not shared with tokenizer.c, but it walks the same hashed byte trie: linear
 *    in text length times the longest piece.
 *  - Text is bytes here, not a Rust str: without Precompiled an invalid UTF-8 byte is one
 *    character that no piece matches, so it becomes an unknown edge and then its <0xHH> byte
 *    piece; the charsmap turns it into U+FFFD, as SentencePiece's normalizer does.
 */
#include "tokenizer_common.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#define JSON_MAX_PIECES (1 << 18) /* the shipped files have 4000 */
#define UNK_PENALTY 10.0

/* ------------------------------------------------------------------------------------------ */
/* JSON helpers.                                                                               */

static const char *jstr(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int jis(const cJSON *o, const char *key, const char *want) {
    const char *s = jstr(o, key);
    return s && strcmp(s, want) == 0;
}

/* Absent or null. */
static int jnull(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return !v || cJSON_IsNull(v);
}

/* An integer-valued number in [0, limit): its value, else -1. */
static int jindex(const cJSON *v, int limit) {
    if (!cJSON_IsNumber(v)) return -1;
    double d = v->valuedouble;
    if (!(d >= 0) || d >= limit || d != floor(d)) return -1;
    return (int)d;
}

static const char *type_of(const cJSON *o) {
    const char *s = cJSON_IsObject(o) ? jstr(o, "type") : NULL;
    return s ? s : "(no type)";
}

/* ------------------------------------------------------------------------------------------ */
/* The components around the model.                                                            */

/* Metaspace with replacement U+2581, prepend_scheme "always" and split: the pre_tokenizer and
 * the first decoder step. */
static int is_metaspace(const cJSON *o) {
    return cJSON_IsObject(o) && jis(o, "type", "Metaspace") && jis(o, "replacement", SPACE_SYM) &&
           jis(o, "prepend_scheme", "always") &&
           cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "split"));
}

static int is_prepend(const cJSON *o) {
    return cJSON_IsObject(o) && jis(o, "type", "Prepend") && jis(o, "prepend", SPACE_SYM);
}

/* Standard base64 (padding required, no whitespace) of s into a malloc'd *out of *n bytes. */
static int base64_decode(const char *s, uint8_t **out, size_t *n) {
    size_t len = strlen(s);
    if (len == 0 || len % 4) return -1;
    uint8_t *o = malloc(len / 4 * 3);
    if (!o) return -2;
    size_t w = 0;
    for (size_t i = 0; i < len; i += 4) {
        uint32_t v = 0;
        int pad = 0;
        for (int k = 0; k < 4; k++) {
            char c = s[i + k];
            int d = c >= 'A' && c <= 'Z'   ? c - 'A'
                    : c >= 'a' && c <= 'z' ? c - 'a' + 26
                    : c >= '0' && c <= '9' ? c - '0' + 52
                    : c == '+'             ? 62
                    : c == '/'             ? 63
                                           : -1;
            /* '=' only at the end of the last quantum, at most two of them. */
            if (c == '=' && i + 4 == len && k >= 2 && (k == 3 || s[i + 3] == '=')) {
                pad++;
                d = 0;
            } else if (d < 0 || pad) {
                free(o);
                return -1;
            }
            v = v << 6 | (uint32_t)d;
        }
        o[w++] = (uint8_t)(v >> 16);
        if (pad < 2) o[w++] = (uint8_t)(v >> 8);
        if (pad < 1) o[w++] = (uint8_t)v;
    }
    *out = o;
    *n = w;
    return 0;
}

/* Precompiled: the base64 of a SentencePiece precompiled_charsmap, into t->norm. */
static int load_precompiled(ptts_tokenizer *t, const cJSON *o, const char *name, ptts_error *e) {
    const char *b64 = jstr(o, "precompiled_charsmap");
    if (!b64)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: Precompiled needs a string precompiled_charsmap",
                         name);
    uint8_t *blob = NULL;
    size_t n = 0;
    int r = base64_decode(b64, &blob, &n);
    if (r == -2) return ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory", name);
    if (r) return ptts_fail(e, PTTS_E_FORMAT, "%s: precompiled_charsmap is not base64", name);
    t->norm.charsmap = blob;
    t->norm.charsmap_len = n;
    int rc = tk_load_charsmap(&t->norm, name, e);
    t->norm.charsmap = NULL; /* the units and pool are copies */
    t->norm.charsmap_len = 0;
    free(blob);
    return rc;
}

/* One step of the normalizer Sequence; *stage is the converter's order (Precompiled, Replace,
 * Strip, Prepend), each at most once and in that order. */
static int load_norm_step(ptts_tokenizer *t, const cJSON *o, int *stage, const char *name,
                          ptts_error *e) {
    static const char *order[] = {"Precompiled", "Replace", "Strip", "Prepend"};
    const char *type = type_of(o);
    int k = 0;
    while (k < 4 && strcmp(type, order[k]) != 0)
        k++;
    if (k == 4)
        return ptts_fail(e, PTTS_E_UNSUPPORTED,
                         "%s: normalizer Sequence with %s is not supported (only Precompiled, "
                         "Replace, Strip, Prepend)",
                         name, type);
    if (k < *stage)
        return ptts_fail(e, PTTS_E_UNSUPPORTED,
                         "%s: normalizer Sequence with %s after %s is not supported (only in the "
                         "order Precompiled, Replace, Strip, Prepend)",
                         name, type, order[*stage - 1]);
    *stage = k + 1;
    if (k == 0) return load_precompiled(t, o, name, e);
    if (k == 1) {
        const cJSON *pat = cJSON_GetObjectItemCaseSensitive(o, "pattern");
        if (!cJSON_IsObject(pat) || !jis(pat, "Regex", " {2,}") || !jis(o, "content", " ")) {
            const char *re = cJSON_IsObject(pat) ? jstr(pat, "Regex") : NULL;
            const char *str = cJSON_IsObject(pat) ? jstr(pat, "String") : NULL;
            const char *kind = re ? "Regex" : "String", *what = re ? re : str;
            if (!what) {
                kind = "pattern";
                what = "?";
            }
            return ptts_fail(e, PTTS_E_UNSUPPORTED,
                             "%s: normalizer Replace of %s \"%.40s\" is not supported (only Regex "
                             "\" {2,}\" -> \" \")",
                             name, kind, what);
        }
        t->collapse_spaces = 1;
        return PTTS_OK;
    }
    if (k == 2) {
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(o, "strip_left");
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "strip_right");
        if (!cJSON_IsBool(l) || !cJSON_IsBool(r))
            return ptts_fail(e, PTTS_E_FORMAT,
                             "%s: normalizer Strip needs booleans strip_left and strip_right",
                             name);
        t->strip_left = (uint8_t)cJSON_IsTrue(l);
        t->strip_right = (uint8_t)cJSON_IsTrue(r);
        return PTTS_OK;
    }
    if (!is_prepend(o))
        return ptts_fail(e, PTTS_E_UNSUPPORTED,
                         "%s: normalizer Prepend is not supported (only Prepend(\"\xe2\x96\x81\"))",
                         name);
    t->prepend = 1;
    return PTTS_OK;
}

static int load_normalizer(ptts_tokenizer *t, const cJSON *root, const char *name, ptts_error *e) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(root, "normalizer"), *o;
    if (is_prepend(n)) {
        t->prepend = 1;
        return PTTS_OK;
    }
    if (!cJSON_IsObject(n) || !jis(n, "type", "Sequence"))
        return ptts_fail(e, PTTS_E_UNSUPPORTED,
                         "%s: normalizer %s is not supported (only Prepend(\"\xe2\x96\x81\") or a "
                         "Sequence)",
                         name, type_of(n));
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(n, "normalizers");
    if (!cJSON_IsArray(list))
        return ptts_fail(e, PTTS_E_FORMAT, "%s: normalizer Sequence without a normalizers list",
                         name);
    int stage = 0, rc;
    cJSON_ArrayForEach(o, list) {
        if ((rc = load_norm_step(t, o, &stage, name, e))) return rc;
    }
    return PTTS_OK;
}

static int check_components(const cJSON *root, const char *name, ptts_error *e) {
    static const char *nulls[] = {"truncation", "padding", "post_processor"};
    for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++)
        if (!jnull(root, nulls[i]))
            return ptts_fail(e, PTTS_E_UNSUPPORTED, "%s: %s is not supported (only null)", name,
                             nulls[i]);
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer");
    if (!is_metaspace(p))
        return ptts_fail(e, PTTS_E_UNSUPPORTED,
                         "%s: pre_tokenizer %s is not supported (only Metaspace \"\xe2\x96\x81\" "
                         "with prepend_scheme always and split)",
                         name, type_of(p));
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "decoder");
    const cJSON *dl = cJSON_IsObject(d) ? cJSON_GetObjectItemCaseSensitive(d, "decoders") : NULL;
    if (!jis(d, "type", "Sequence") || !cJSON_IsArray(dl) || cJSON_GetArraySize(dl) != 3 ||
        !is_metaspace(cJSON_GetArrayItem(dl, 0)) ||
        !jis(cJSON_GetArrayItem(dl, 1), "type", "ByteFallback") ||
        !jis(cJSON_GetArrayItem(dl, 2), "type", "Fuse"))
        return ptts_fail(e, PTTS_E_UNSUPPORTED,
                         "%s: decoder %s is not supported (only Sequence[Metaspace, "
                         "ByteFallback, Fuse])",
                         name, type_of(d));
    return PTTS_OK;
}

/* added_tokens: special, not normalized, no stripping or single_word, each the vocabulary
 * piece at its id. Marks them special and puts them in the added-token trie. */
static int load_added(ptts_tokenizer *t, const cJSON *root, const char *name, ptts_error *e) {
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "added_tokens"), *a;
    if (!cJSON_IsArray(list))
        return ptts_fail(e, PTTS_E_FORMAT, "%s: added_tokens is not a list", name);
    if (cJSON_GetArraySize(list) > t->n)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: more added_tokens than vocabulary pieces", name);
    size_t bytes = 0;
    int i = 0;
    cJSON_ArrayForEach(a, list) {
        static const char *off[] = {"single_word", "lstrip", "rstrip", "normalized"};
        const char *content = cJSON_IsObject(a) ? jstr(a, "content") : NULL;
        int id = cJSON_IsObject(a) ? jindex(cJSON_GetObjectItemCaseSensitive(a, "id"), t->n) : -1;
        if (!content || id < 0)
            return ptts_fail(e, PTTS_E_FORMAT,
                             "%s: added_tokens[%d] needs a string content and a vocabulary id",
                             name, i);
        for (size_t k = 0; k < sizeof off / sizeof off[0]; k++)
            if (!cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(a, off[k])))
                return ptts_fail(e, PTTS_E_UNSUPPORTED, "%s: added_tokens[%d]: %s must be false",
                                 name, i, off[k]);
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "special")))
            return ptts_fail(e, PTTS_E_UNSUPPORTED,
                             "%s: added_tokens[%d]: only special tokens are supported", name, i);
        if (strcmp(t->piece[id], content) != 0)
            return ptts_fail(e, PTTS_E_FORMAT,
                             "%s: added_tokens[%d]: id %d is not the vocabulary index of "
                             "\"%.40s\"",
                             name, i, id, content);
        t->special[id] = 1;
        bytes += t->len[id];
        i++;
    }
    t->n_added = i;
    if (tk_trie_init(&t->added, bytes))
        return ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory", name);
    for (int id = 0; id < t->n; id++)
        if (t->special[id])
            tk_trie_insert(&t->added, (const unsigned char *)t->piece[id], t->len[id], id);
    return PTTS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* The Unigram model.                                                                          */

static int valid_utf8_string(const char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        size_t l;
        if (!tk_valid_utf8((const unsigned char *)s + i, n - i, &l)) return 0;
        i += l;
    }
    return 1;
}

/* A piece of the form "<0x..>": its byte (upper-case hex, as byte fallback writes it), or -2
 * when it is malformed; -1 for any other piece. */
static int byte_form(const char *s, size_t n) {
    if (n != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>') return -1;
    int b = tk_piece_to_byte(s, n);
    return b >= 0 ? b : -2;
}

static int load_vocab(ptts_tokenizer *t, const cJSON *model, const char *name, ptts_error *e) {
    const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab"), *v;
    if (!cJSON_IsArray(vocab) || cJSON_GetArraySize(vocab) == 0)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: model.vocab is not a non-empty list", name);
    int n = cJSON_GetArraySize(vocab);
    if (n > JSON_MAX_PIECES)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: model.vocab has %d pieces (at most %d)", name, n,
                         JSON_MAX_PIECES);
    size_t total = 0;
    cJSON_ArrayForEach(v, vocab) {
        const cJSON *p = cJSON_GetArrayItem(v, 0), *s = cJSON_GetArrayItem(v, 1);
        if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2 || !cJSON_IsString(p) ||
            !cJSON_IsNumber(s) || !isfinite(s->valuedouble))
            return ptts_fail(e, PTTS_E_FORMAT,
                             "%s: model.vocab entries must be [piece, finite score] pairs", name);
        total += strlen(p->valuestring) + 1;
    }
    t->n = n;
    t->piece = malloc((size_t)n * sizeof *t->piece);
    t->len = malloc((size_t)n * sizeof *t->len);
    t->dscore = malloc((size_t)n * sizeof *t->dscore);
    t->type = malloc((size_t)n);
    t->special = calloc((size_t)n, 1);
    t->store = malloc(total);
    if (!t->piece || !t->len || !t->dscore || !t->type || !t->special || !t->store ||
        tk_map_init(&t->normal_map, n) || tk_map_init(&t->reserved_map, 1))
        return ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory", name);
    char *w = t->store;
    double min_score = DBL_MAX;
    int i = 0;
    cJSON_ArrayForEach(v, vocab) {
        const char *s = cJSON_GetArrayItem(v, 0)->valuestring;
        size_t len = strlen(s);
        if (len == 0) return ptts_fail(e, PTTS_E_FORMAT, "%s: model.vocab[%d] is empty", name, i);
        if (!valid_utf8_string(s, len))
            return ptts_fail(e, PTTS_E_FORMAT, "%s: model.vocab[%d] is not valid UTF-8", name, i);
        memcpy(w, s, len + 1);
        t->piece[i] = w;
        t->len[i] = (uint32_t)len;
        w += len + 1;
        t->dscore[i] = cJSON_GetArrayItem(v, 1)->valuedouble;
        if (t->dscore[i] < min_score) min_score = t->dscore[i];
        int b = byte_form(s, len);
        if (b == -2)
            return ptts_fail(e, PTTS_E_FORMAT,
                             "%s: model.vocab[%d] (\"%s\") is not a valid byte piece <0xHH>", name,
                             i, s);
        t->type[i] = b >= 0 ? PT_BYTE : PT_NORMAL;
        if (tk_map_add(t, &t->normal_map, i))
            return ptts_fail(e, PTTS_E_FORMAT, "%s: model.vocab[%d] (\"%.40s\") is defined twice",
                             name, i, s);
        i++;
    }
    t->unk_dscore = min_score - UNK_PENALTY;
    if (total > ((size_t)1 << 24) - 2) /* trie node ids must fit in 24 bits */
        return ptts_fail(e, PTTS_E_FORMAT, "%s: the pieces are too long in total", name);
    if (tk_trie_init(&t->trie, total)) return ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory", name);
    for (int k = 0; k < n; k++)
        tk_trie_insert(&t->trie, (const unsigned char *)t->piece[k], t->len[k], k);
    /* -1 where the byte piece is missing: a span with such a byte becomes unk_id. */
    for (int b = 0; b < 256; b++) {
        char s[8];
        snprintf(s, sizeof s, "<0x%02X>", b);
        t->byte_id[b] = tk_map_find(t, &t->normal_map, s, 6);
    }
    return PTTS_OK;
}

static int load_model(ptts_tokenizer *t, const cJSON *root, const char *name, ptts_error *e) {
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (!cJSON_IsObject(model)) return ptts_fail(e, PTTS_E_FORMAT, "%s: no model object", name);
    if (!jis(model, "type", "Unigram"))
        return ptts_fail(e, PTTS_E_UNSUPPORTED, "%s: model type %s is not supported (only Unigram)",
                         name, type_of(model));
    /* Every shipped file has byte_fallback true; false (unknown spans become unk_id, as in
     * tokenizers' Unigram) is accepted too, for vocabularies without the 256 byte pieces. */
    const cJSON *bf = cJSON_GetObjectItemCaseSensitive(model, "byte_fallback");
    if (!cJSON_IsBool(bf))
        return ptts_fail(e, PTTS_E_FORMAT, "%s: model.byte_fallback must be true or false", name);
    t->byte_fallback = cJSON_IsTrue(bf);
    const cJSON *unk = cJSON_GetObjectItemCaseSensitive(model, "unk_id");
    if (!unk || cJSON_IsNull(unk))
        return ptts_fail(e, PTTS_E_FORMAT, "%s: model.unk_id is missing", name);
    int rc = load_vocab(t, model, name, e);
    if (rc) return rc;
    t->unk_id = jindex(unk, t->n);
    if (t->unk_id < 0)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: model.unk_id is not an index of model.vocab", name);
    return PTTS_OK;
}

int tk_json_load(ptts_tokenizer *t, const char *data, size_t size, const char *name,
                 ptts_error *e) {
    t->kind = TK_JSON;
    if (size > JSON_MAX_BYTES)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: tokenizer.json larger than %zu bytes", name,
                         (size_t)JSON_MAX_BYTES);
    cJSON *root = cJSON_ParseWithLength(data, size);
    if (!root) return ptts_fail(e, PTTS_E_FORMAT, "%s: not valid JSON", name);
    int rc = PTTS_OK;
    if (!cJSON_IsObject(root))
        rc = ptts_fail(e, PTTS_E_FORMAT, "%s: not a tokenizer.json object", name);
    if (!rc) rc = check_components(root, name, e);
    if (!rc) rc = load_normalizer(t, root, name, e);
    if (!rc) rc = load_model(t, root, name, e);
    if (!rc) rc = load_added(t, root, name, e);
    cJSON_Delete(root);
    return rc;
}

void tk_json_free(ptts_tokenizer *t) {
    free(t->dscore);
    free(t->special);
    tk_trie_free(&t->added);
}

/* ------------------------------------------------------------------------------------------ */
/* Encoding.                                                                                   */

typedef struct {
    const ptts_tokenizer *t;
    double *score;  /* per byte position of the word: best path score ending there */
    int32_t *start; /* where the best path's last piece starts (-1: not reached) */
    int32_t *id;    /* its id (unk_id for an unknown edge) */
    int32_t *path;  /* the best path's end positions, last first */
    size_t wcap;    /* room of the four arrays above (the longest word so far + 1) */
    buf mapped;     /* a segment after the charsmap */
    buf norm;       /* a segment after the whole normalizer and Metaspace */
    int *ids;       /* output; room kept for every normalized byte plus every added token */
    size_t icap;
    int n;
} jenc;

static int jenc_grow(jenc *c, size_t need) {
    if (need <= c->wcap) return 0;
    size_t cap = c->wcap ? c->wcap : 64;
    while (cap < need)
        cap *= 2;
    double *sc = realloc(c->score, cap * sizeof *sc);
    if (sc) c->score = sc;
    int32_t *st = realloc(c->start, cap * sizeof *st);
    if (st) c->start = st;
    int32_t *id = realloc(c->id, cap * sizeof *id);
    if (id) c->id = id;
    int32_t *pa = realloc(c->path, cap * sizeof *pa);
    if (pa) c->path = pa;
    if (!sc || !st || !id || !pa) return -1;
    c->wcap = cap;
    return 0;
}

/* Room for `more` further ids. */
static int jenc_ids(jenc *c, size_t more) {
    size_t need = (size_t)c->n + more;
    if (need <= c->icap) return 0;
    size_t cap = c->icap ? c->icap : 64;
    while (cap < need)
        cap *= 2;
    int *p = realloc(c->ids, cap * sizeof *p);
    if (!p) return -1;
    c->ids = p;
    c->icap = cap;
    return 0;
}

/* A fused unknown span s[0..n): the piece equal to it, else with byte_fallback its byte pieces
 * when the vocabulary has all of them, else unk_id (the library's Unigram tokenize). */
static void emit_unknown(jenc *c, const unsigned char *s, size_t n) {
    const ptts_tokenizer *t = c->t;
    int id = tk_map_find(t, &t->normal_map, (const char *)s, n);
    size_t i = 0;
    while (id < 0 && t->byte_fallback && i < n && t->byte_id[s[i]] >= 0)
        i++;
    if (id < 0 && t->byte_fallback && i == n) {
        for (i = 0; i < n; i++)
            c->ids[c->n++] = t->byte_id[s[i]];
        return;
    }
    c->ids[c->n++] = id >= 0 ? id : t->unk_id;
}

/* The Viterbi over one word w[0..L) (it starts with U+2581); -1 when out of memory. */
static int viterbi(jenc *c, const unsigned char *w, size_t L) {
    const ptts_tokenizer *t = c->t;
    if (jenc_grow(c, L + 1)) return -1;
    for (size_t i = 0; i <= L; i++)
        c->start[i] = -1;
    c->score[0] = 0;
    c->start[0] = 0;
    for (size_t s = 0; s < L;) {
        size_t mblen;
        tk_decode_utf8(w + s, L - s, &mblen);
        double till = c->score[s];
        int has_single = 0;
        int32_t node = 0;
        for (size_t pos = s; pos < L;) {
            node = htrie_next(&t->trie, node, w[pos]);
            if (node < 0) break;
            pos++;
            int32_t id = t->trie.value[node];
            if (id < 0) continue;
            double cand = till + t->dscore[id];
            if (c->start[pos] < 0 || cand > c->score[pos]) {
                c->score[pos] = cand;
                c->start[pos] = (int32_t)s;
                c->id[pos] = id;
            }
            if (pos - s == mblen) has_single = 1;
        }
        if (!has_single) {
            double cand = till + t->unk_dscore;
            size_t end = s + mblen;
            if (c->start[end] < 0 || cand > c->score[end]) {
                c->score[end] = cand;
                c->start[end] = (int32_t)s;
                c->id[end] = t->unk_id;
            }
        }
        s += mblen;
    }
    /* Backtrack, then emit in order, fusing runs of unk_id edges into spans. */
    int np = 0;
    for (size_t end = L; end > 0; end = (size_t)c->start[end])
        c->path[np++] = (int32_t)end;
    size_t span = 0, span_end = 0;
    int in_span = 0;
    for (int i = np - 1; i >= 0; i--) {
        size_t end = (size_t)c->path[i], beg = (size_t)c->start[end];
        int id = c->id[end];
        if (id == t->unk_id) {
            if (!in_span) span = beg;
            in_span = 1;
            span_end = end;
            continue;
        }
        if (in_span) emit_unknown(c, w + span, span_end - span);
        in_span = 0;
        c->ids[c->n++] = id;
    }
    if (in_span) emit_unknown(c, w + span, span_end - span);
    return 0;
}

/* Rust's char::is_whitespace (the White_Space property), which Strip trims. */
static int is_white(uint32_t c) {
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
           c == 0x205F || c == 0x3000;
}

/* The character ending at s[n): its start. */
static size_t last_char(const unsigned char *s, size_t n) {
    size_t i = n - 1;
    while (i > 0 && n - i < 4 && (s[i] & 0xC0) == 0x80)
        i--;
    size_t l;
    tk_decode_utf8(s + i, n - i, &l);
    return i + l == n ? i : n - 1;
}

/* One segment between added tokens, as the library runs it: the normalizer (charsmap, " {2,}"
 * -> " ", Strip, Prepend "▁"; a segment left empty yields nothing), then Metaspace (" " -> "▁",
 * "▁" prepended unless there), cut before every "▁", one Viterbi per word. */
static int encode_segment(jenc *c, const char *text, size_t len, ptts_error *e) {
    const ptts_tokenizer *t = c->t;
    const unsigned char *s = (const unsigned char *)text;
    if (t->norm.units) {
        int rc = tk_charsmap_apply(t, text, len, &c->mapped, e);
        if (rc) return rc;
        s = (const unsigned char *)c->mapped.p;
        len = c->mapped.n;
    }
    size_t lo = 0, hi = len, l;
    while (t->strip_left && lo < hi && is_white(tk_decode_utf8(s + lo, hi - lo, &l)))
        lo += l;
    while (t->strip_right && lo < hi) {
        size_t i = last_char(s + lo, hi - lo) + lo;
        if (!is_white(tk_decode_utf8(s + i, hi - i, &l))) break;
        hi = i;
    }
    if (lo == hi) return PTTS_OK;
    buf *o = &c->norm;
    o->n = 0;
    /* Each byte grows to at most 3 (" " -> U+2581), plus one prepended U+2581. */
    if (tk_buf_reserve(o, 3 * (hi - lo) + SPACE_SYM_LEN)) goto nomem;
    int lead =
        s[lo] == ' ' || (hi - lo >= SPACE_SYM_LEN && memcmp(s + lo, SPACE_SYM, SPACE_SYM_LEN) == 0);
    if (t->prepend || !lead) tk_buf_put(o, SPACE_SYM, SPACE_SYM_LEN);
    for (size_t i = lo; i < hi; i++) {
        if (s[i] != ' ')
            tk_buf_put(o, s + i, 1);
        else if (!(t->collapse_spaces && i > lo && s[i - 1] == ' '))
            tk_buf_put(o, SPACE_SYM, SPACE_SYM_LEN);
    }
    /* Every id covers at least one normalized byte. */
    if (jenc_ids(c, o->n)) goto nomem;
    const unsigned char *w = (const unsigned char *)o->p;
    size_t m = o->n, beg = 0;
    for (size_t i = SPACE_SYM_LEN; i <= m; i++) {
        if (i < m && (i + SPACE_SYM_LEN > m || memcmp(w + i, SPACE_SYM, SPACE_SYM_LEN) != 0))
            continue;
        if (viterbi(c, w + beg, i - beg)) goto nomem;
        beg = i;
        i += SPACE_SYM_LEN - 1;
    }
    return PTTS_OK;
nomem:
    return ptts_fail(e, PTTS_E_NOMEM, "tokenizer: out of memory encoding %zu bytes", len);
}

int tk_json_encode(const ptts_tokenizer *t, const char *text, size_t len, int **ids_out, int *n_out,
                   ptts_error *e) {
    jenc c = {0};
    c.t = t;
    int rc = PTTS_OK;
    size_t seg = 0;
    for (size_t pos = 0; pos < len && !rc;) {
        size_t m = t->n_added
                       ? tk_trie_longest(&t->added, (const unsigned char *)text + pos, len - pos)
                       : 0;
        if (!m) {
            pos++;
            continue;
        }
        if (pos > seg) rc = encode_segment(&c, text + seg, pos - seg, e);
        if (!rc && jenc_ids(&c, 1))
            rc = ptts_fail(e, PTTS_E_NOMEM, "tokenizer: out of memory encoding %zu bytes", len);
        if (!rc) c.ids[c.n++] = tk_map_find(t, &t->normal_map, text + pos, m);
        pos += m;
        seg = pos;
    }
    if (!rc && len > seg) rc = encode_segment(&c, text + seg, len - seg, e);
    /* An empty result is still a valid (malloc'd) array. */
    if (!rc && jenc_ids(&c, 1))
        rc = ptts_fail(e, PTTS_E_NOMEM, "tokenizer: out of memory encoding %zu bytes", len);
    if (!rc) {
        *ids_out = c.ids;
        *n_out = c.n;
        c.ids = NULL;
    }
    free(c.score);
    free(c.start);
    free(c.id);
    free(c.path);
    free(c.mapped.p);
    free(c.norm.p);
    free(c.ids);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* Decoding.                                                                                   */

int tk_json_decode(const ptts_tokenizer *t, const int *ids, int n, int continued, char **text,
                   ptts_error *e) {
    buf o = {0};
    int first = !continued;
    unsigned char *bytes = malloc((size_t)n + 1);
    if (!bytes) return ptts_fail(e, PTTS_E_NOMEM, "tokenizer: out of memory");
    for (int i = 0; i < n;) {
        int id = ids[i];
        if (t->special[id]) {
            i++;
            continue;
        }
        if (t->type[id] == PT_BYTE) {
            /* A maximal run of byte tokens (specials in between are already gone). */
            size_t nb = 0;
            for (; i < n && (t->special[ids[i]] || t->type[ids[i]] == PT_BYTE); i++)
                if (!t->special[ids[i]])
                    bytes[nb++] = (unsigned char)tk_piece_to_byte(t->piece[ids[i]], 6);
            if (valid_utf8_string((const char *)bytes, nb)) {
                tk_buf_put(&o, bytes, nb);
            } else {
                for (size_t k = 0; k < nb; k++)
                    tk_buf_put(&o, REPLACEMENT_CHAR, 3);
            }
            first = 0;
            continue;
        }
        const char *p = t->piece[id];
        size_t pl = t->len[id], a = 0;
        for (size_t j = 0; j + SPACE_SYM_LEN <= pl;) {
            if (memcmp(p + j, SPACE_SYM, SPACE_SYM_LEN) == 0) {
                tk_buf_put(&o, p + a, j - a);
                if (!first) tk_buf_put(&o, " ", 1);
                j += SPACE_SYM_LEN;
                a = j;
            } else {
                j++;
            }
        }
        tk_buf_put(&o, p + a, pl - a);
        first = 0;
        i++;
    }
    free(bytes);
    if (tk_buf_reserve(&o, 1)) {
        free(o.p);
        return ptts_fail(e, PTTS_E_NOMEM, "tokenizer: out of memory");
    }
    o.p[o.n] = 0;
    *text = o.p;
    return PTTS_OK;
}
