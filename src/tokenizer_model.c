/*
 * tokenizer_model.c - reads a SentencePiece `.model` (a protobuf ModelProto) into the tokenizer
 * struct (MODEL.md 9.2).
 *
 * Map: protobuf wire format (pb_varint, pb_next) -> the three sub-messages the tokenizer uses
 * (parse_piece, parse_trainer, parse_normalizer) -> the precompiled character map
 * (tk_load_charsmap) -> load_impl in steps: parse_model (the top-level fields), build_pieces (copy
 * and check every piece), build_tries (the piece trie, the user-symbol matcher, the byte ids).
 *
 * Why it is built this way: a small wire-format reader takes only the fields that change
 * encoding or decoding (pieces, trainer_spec model_type / byte_fallback /
 * treat_whitespace_as_suffix / unk_surface, normalizer_spec and denormalizer_spec) and checks
 * every length, so hostile files give PTTS_E_FORMAT instead of crashes. A known field with the
 * wrong wire type is an error too (protobuf would keep it as an unknown field, but no writer
 * produces that, and rejecting it keeps the reader simple and strict). The character map is
 * split into the darts-clone double array and the replacement pool; its indexes are
 * bounds-checked at lookup time (tokenizer.c).
 */
#include "tokenizer_common.h"

#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        for (int i = 0; i < 8; i++)
            f->v |= (uint64_t)r->p[i] << (8 * i);
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
        for (int i = 0; i < 4; i++)
            f->v |= (uint64_t)r->p[i] << (8 * i);
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
            if (f.v >= PT_NORMAL && f.v <= PT_BYTE)
                out->type = (int)f.v; /* unknown enum: ignored */
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
        case 40:
        case 41:
        case 42:
        case 43: /* unk/bos/eos/pad ids (pieces carry their types) */
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
int tk_load_charsmap(norm_spec *s, const char *name, ptts_error *e) {
    if (s->charsmap_len == 0) return 0;
    const uint8_t *b = s->charsmap;
    if (s->charsmap_len <= 4)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: precompiled_charsmap is broken", name);
    uint32_t trie_size =
        (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    if (trie_size > s->charsmap_len - 4 || trie_size / 4 == 0)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: precompiled_charsmap trie size %u does not fit",
                         name, trie_size);
    s->n_units = trie_size / 4;
    s->units = malloc(s->n_units * sizeof *s->units);
    s->pool_len = s->charsmap_len - 4 - trie_size;
    s->pool = malloc(s->pool_len + 1);
    if (!s->units || !s->pool) return ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory", name);
    for (size_t i = 0; i < s->n_units; i++) {
        const uint8_t *u = b + 4 + 4 * i;
        s->units[i] =
            (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
    }
    memcpy(s->pool, b + 4 + trie_size, s->pool_len);
    s->pool[s->pool_len] = 0;
    return 0;
}

void tk_norm_free(norm_spec *s) {
    free(s->units);
    free(s->pool);
}

/* The fields of a ModelProto that the tokenizer uses, pointing into the file's bytes. */
typedef struct {
    raw_piece *rp;
    size_t n_rp, cap_rp, total; /* total: the pieces' bytes */
    raw_trainer tr;
    norm_spec ns, ds;
    int has_ds;
} raw_model;

static int parse_model(const uint8_t *data, size_t size, const char *name, raw_model *m,
                       ptts_error *e) {
    pb r = {data, data + size};
    pbf f;
    int k;
    while ((k = pb_next(&r, &f)) == 1) {
        if (f.field == 1) {
            if (f.wt != 2)
                return ptts_fail(e, PTTS_E_FORMAT, "%s: pieces has the wrong wire type", name);
            if (m->n_rp == m->cap_rp) {
                size_t nc = m->cap_rp ? m->cap_rp * 2 : 1024;
                raw_piece *np = realloc(m->rp, nc * sizeof *np);
                if (!np) return ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory", name);
                m->rp = np;
                m->cap_rp = nc;
            }
            if (parse_piece(f.data, f.len, &m->rp[m->n_rp]))
                return ptts_fail(e, PTTS_E_FORMAT, "%s: piece %zu is malformed", name, m->n_rp);
            m->total += m->rp[m->n_rp].len;
            m->n_rp++;
        } else if (f.field == 2) {
            if (f.wt != 2 || parse_trainer(f.data, f.len, &m->tr))
                return ptts_fail(e, PTTS_E_FORMAT, "%s: trainer_spec is malformed", name);
        } else if (f.field == 3) {
            if (f.wt != 2 || parse_normalizer(f.data, f.len, &m->ns))
                return ptts_fail(e, PTTS_E_FORMAT, "%s: normalizer_spec is malformed", name);
        } else if (f.field == 5) {
            if (f.wt != 2 || parse_normalizer(f.data, f.len, &m->ds))
                return ptts_fail(e, PTTS_E_FORMAT, "%s: denormalizer_spec is malformed", name);
            m->has_ds = 1;
        } else if (f.field == 4) {
            if (f.wt != 2)
                return ptts_fail(e, PTTS_E_FORMAT, "%s: self_test_data has the wrong wire type",
                                 name);
        }
    }
    if (k < 0)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: not a SentencePiece model (malformed protobuf)",
                         name);
    if (m->n_rp == 0) return ptts_fail(e, PTTS_E_FORMAT, "%s: the model has no pieces", name);
    if (m->n_rp > (size_t)INT_MAX / 4)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: too many pieces", name);
    if (m->tr.model_type != MT_UNIGRAM && m->tr.model_type != MT_BPE)
        return ptts_fail(e, PTTS_E_UNSUPPORTED, "%s: model type %d (word/char) is not supported",
                         name, m->tr.model_type);
    return PTTS_OK;
}

/* Copies the pieces into t and checks them: no empty or NUL-holding piece, no duplicate, one
 * unknown piece, valid byte pieces (all 256 with byte_fallback). Sets *trie_bytes / *user_bytes
 * to the lengths the two tries need. */
static int build_pieces(ptts_tokenizer *t, const raw_model *m, const char *name, size_t *trie_bytes,
                        size_t *user_bytes, ptts_error *e) {
    size_t n_rp = m->n_rp;
    t->piece = malloc(n_rp * sizeof *t->piece);
    t->len = malloc(n_rp * sizeof *t->len);
    t->score = malloc(n_rp * sizeof *t->score);
    t->type = malloc(n_rp);
    t->store = malloc(m->total + n_rp);
    if (m->tr.has_unk_surface) {
        t->unk_surface = malloc(m->tr.unk_surface_len + 1);
        if (t->unk_surface) {
            memcpy(t->unk_surface, m->tr.unk_surface, m->tr.unk_surface_len);
            t->unk_surface[m->tr.unk_surface_len] = 0;
        }
    } else {
        t->unk_surface = ptts_strdup(" \xE2\x81\x87 ");
    }
    if (!t->piece || !t->len || !t->score || !t->type || !t->store || !t->unk_surface ||
        tk_map_init(&t->normal_map, t->n) || tk_map_init(&t->reserved_map, t->n))
        return ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory", name);

    char *w = t->store;
    int byte_found[256] = {0};
    t->min_score = FLT_MAX;
    t->max_score = FLT_MIN;
    *trie_bytes = *user_bytes = 0;
    for (int i = 0; i < t->n; i++) {
        const raw_piece *p = &m->rp[i];
        if (p->len == 0) return ptts_fail(e, PTTS_E_FORMAT, "%s: piece %d is empty", name, i);
        if (p->len > UINT32_MAX / 2 || memchr(p->s, 0, p->len))
            return ptts_fail(e, PTTS_E_FORMAT, "%s: piece %d holds a NUL byte or is too long", name,
                             i);
        memcpy(w, p->s, p->len);
        w[p->len] = 0;
        t->piece[i] = w;
        t->len[i] = (uint32_t)p->len;
        w += p->len + 1;
        t->score[i] = p->score;
        t->type[i] = (uint8_t)p->type;
        int normal = p->type == PT_NORMAL || p->type == PT_USER || p->type == PT_UNUSED;
        if (tk_map_add(t, normal ? &t->normal_map : &t->reserved_map, i))
            return ptts_fail(e, PTTS_E_FORMAT, "%s: piece %d (\"%.40s\") is defined twice", name, i,
                             t->piece[i]);
        if (normal) *trie_bytes += p->len;
        if (p->type == PT_USER) {
            *user_bytes += p->len;
            t->n_user++;
        }
        if (p->type == PT_NORMAL) {
            if (p->score < t->min_score) t->min_score = p->score;
            if (p->score > t->max_score) t->max_score = p->score;
        }
        if (p->type == PT_UNKNOWN) {
            if (t->unk_id >= 0)
                return ptts_fail(e, PTTS_E_FORMAT, "%s: more than one unknown piece", name);
            t->unk_id = i;
        }
        if (p->type == PT_BYTE) {
            if (!t->byte_fallback)
                return ptts_fail(e, PTTS_E_FORMAT, "%s: byte piece %d without byte_fallback", name,
                                 i);
            int b = tk_piece_to_byte(t->piece[i], t->len[i]);
            if (b < 0)
                return ptts_fail(e, PTTS_E_FORMAT, "%s: byte piece %d (\"%.40s\") is invalid", name,
                                 i, t->piece[i]);
            byte_found[b] = 1;
        }
    }
    if (t->unk_id < 0)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: no unknown piece (<unk>) is defined", name);
    if (t->byte_fallback)
        for (int b = 0; b < 256; b++)
            if (!byte_found[b])
                return ptts_fail(e, PTTS_E_FORMAT, "%s: byte_fallback without all 256 byte pieces",
                                 name);
    if (t->model_type == MT_UNIGRAM && *trie_bytes == 0)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: no normal pieces are defined", name);
    if (*trie_bytes > ((size_t)1 << 24) - 2) /* trie node ids must fit in 24 bits */
        return ptts_fail(e, PTTS_E_FORMAT, "%s: the pieces are too long in total", name);
    return PTTS_OK;
}

/* The piece trie (NORMAL, USER_DEFINED, UNUSED), the user-symbol matcher and the byte ids. */
static int build_tries(ptts_tokenizer *t, size_t trie_bytes, size_t user_bytes, const char *name,
                       ptts_error *e) {
    if (tk_trie_init(&t->trie, trie_bytes) || tk_trie_init(&t->user, user_bytes))
        return ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory", name);
    for (int i = 0; i < t->n; i++) {
        int ty = t->type[i];
        if (ty == PT_NORMAL || ty == PT_USER || ty == PT_UNUSED)
            tk_trie_insert(&t->trie, (const unsigned char *)t->piece[i], t->len[i], i);
        if (ty == PT_USER)
            tk_trie_insert(&t->user, (const unsigned char *)t->piece[i], t->len[i], i);
    }
    for (int b = 0; b < 256; b++) {
        char s[8];
        snprintf(s, sizeof s, "<0x%02X>", b);
        t->byte_id[b] = tk_piece_to_id(t, s, 6);
    }
    return PTTS_OK;
}

static int load_impl(ptts_tokenizer *t, const uint8_t *data, size_t size, const char *name,
                     ptts_error *e) {
    raw_model m = {0};
    m.tr.model_type = MT_UNIGRAM;
    m.ns.add_dummy_prefix = m.ns.remove_extra_ws = m.ns.escape_ws = 1;
    m.ds = m.ns;
    size_t trie_bytes = 0, user_bytes = 0;
    int rc = parse_model(data, size, name, &m, e);
    if (rc) goto done;
    t->n = (int)m.n_rp;
    t->model_type = m.tr.model_type;
    t->byte_fallback = m.tr.byte_fallback;
    t->ws_suffix = m.tr.ws_suffix;
    t->unk_id = -1;
    if ((rc = build_pieces(t, &m, name, &trie_bytes, &user_bytes, e))) goto done;
    if ((rc = build_tries(t, trie_bytes, user_bytes, name, e))) goto done;
    if ((rc = tk_load_charsmap(&m.ns, name, e))) goto done;
    t->norm = m.ns;
    memset(&m.ns, 0, sizeof m.ns);
    if (m.has_ds && m.ds.charsmap_len > 0) {
        if ((rc = tk_load_charsmap(&m.ds, name, e))) goto done;
        t->denorm = m.ds;
        t->has_denorm = 1;
        memset(&m.ds, 0, sizeof m.ds);
    }
done:
    tk_norm_free(&m.ns);
    tk_norm_free(&m.ds);
    free(m.rp);
    return rc;
}

int tk_sp_load(ptts_tokenizer *t, const uint8_t *data, size_t size, const char *name,
               ptts_error *e) {
    if (size > MODEL_MAX_BYTES)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: model file too large", name);
    t->kind = TK_SENTENCEPIECE;
    return load_impl(t, data, size, name, e);
}
