/*
 * tokenizer_norm.c - the SentencePiece normalizer: the precompiled character map (a darts-clone
 * double array over UTF-8 with a pool of replacement strings), the user-defined symbols matched
 * first, and the whitespace rules (dummy prefix, extra whitespace removed, escaping to U+2581).
 * Both backends use it: the .model encoder (and its denormalizer when decoding) and the
 * tokenizer.json Precompiled normalizer.
 */
#include <string.h>

#include "tokenizer_common.h"

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
        size_t m = tk_trie_longest(&t->user, in, n);
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
        if (!tk_valid_utf8(in, n, &l)) {
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
    if (s->escape_ws)
        tk_buf_put(o, SPACE_SYM, SPACE_SYM_LEN);
    else
        tk_buf_put(o, " ", 1);
}

int tk_normalize(const ptts_tokenizer *t, const norm_spec *s, int use_matcher, int ws_suffix,
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
    if (tk_buf_reserve(o, len * 3 + 16))
        return ptts_fail(e, PTTS_E_NOMEM, "tokenizer: out of memory");
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
                        tk_buf_put(o, sp + a, i - a);
                        tk_buf_put(o, SPACE_SYM, SPACE_SYM_LEN);
                        a = i + 1;
                    }
                tk_buf_put(o, sp + a, sp_len - a);
            } else {
                tk_buf_put(o, sp, sp_len);
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
        while (tk_ends_with(o, ws, wl))
            o->n -= wl;
    }
    if (ws_suffix && s->add_dummy_prefix) add_ws(s, o);
    if (o->oom) return ptts_fail(e, PTTS_E_NOMEM, "tokenizer: out of memory");
    return 0;
broken:
    return ptts_fail(e, PTTS_E_FORMAT, "tokenizer: the precompiled charsmap is malformed");
}

int tk_charsmap_apply(const ptts_tokenizer *t, const char *text, size_t len, buf *o,
                      ptts_error *e) {
    return tk_normalize(t, &t->norm, 0, 0, text, len, o, e);
}
