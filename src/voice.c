/*
 * voice.c - voice states (MODEL.md section 7): the backbone KV cache after the voice prompt,
 * read from and written to the reference's safetensors format.
 *
 * File, per layer i: "transformer.layers.{i}.self_attn/cache" [2, 1, P, H, Dh] (F32/BF16/F16;
 * [0] keys after RoPE, [1] values) and "transformer.layers.{i}.self_attn/offset" [1] int64 (the
 * positions in use), or in older files ".../current_end" whose first dimension is that count;
 * 3.3 adds ".../pad" [1] int64, which may be missing or 0 (non-zero: refused, see layer_pad).
 * In memory (voice.h): k, v [layers][positions][d] with d = H * Dh, head-major within a row, so
 * cache[0, 0, p, :, :] is exactly row p of k. Only the first `offset` positions are kept.
 * The layer count is the number of ".../cache" tensors; layers 0..n-1 must all be present.
 */
#include "voice.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "safetensors.h"

#define VOICE_PREFIX "transformer.layers."
#define VOICE_MAX_LAYERS 4096

/* Index N of "transformer.layers.N<suffix>" (N decimal, no sign, no leading zeros unless 0);
 * -1 when the name has another form, -2 when N is out of range. */
static int layer_index(const char *name, const char *suffix) {
    const size_t np = sizeof VOICE_PREFIX - 1;
    if (strncmp(name, VOICE_PREFIX, np) != 0) return -1;
    const char *p = name + np;
    if (*p < '0' || *p > '9') return -1;
    if (p[0] == '0' && p[1] >= '0' && p[1] <= '9') return -1;
    long n = 0;
    int big = 0;
    while (*p >= '0' && *p <= '9') {
        if (n < VOICE_MAX_LAYERS)
            n = n * 10 + (*p - '0');
        else
            big = 1;
        p++;
    }
    if (strcmp(p, suffix) != 0) return -1;
    return big || n >= VOICE_MAX_LAYERS ? -2 : (int)n;
}

static size_t floats_per_cache(int layers, int positions, int d) {
    size_t n;
    if (ptts_mul_size((size_t)layers, (size_t)positions, &n) || ptts_mul_size(n, (size_t)d, &n) ||
        ptts_mul_size(n, sizeof(float), &n))
        return 0;
    return n;
}

int ptts_voice_state_alloc(ptts_voice_state **out, int layers, int heads, int dh, int positions,
                           ptts_error *e) {
    if (!out) return ptts_fail(e, PTTS_E_INVALID, "voice state: NULL output");
    *out = NULL;
    if (layers < 1 || heads < 1 || dh < 1 || positions < 0 || heads > INT_MAX / dh)
        return ptts_fail(e, PTTS_E_INVALID,
                         "voice state: invalid size (layers %d, heads %d, dh %d, positions %d)",
                         layers, heads, dh, positions);
    const int d = heads * dh;
    size_t bytes = floats_per_cache(layers, positions, d);
    if (bytes == 0 && positions > 0)
        return ptts_fail(e, PTTS_E_NOMEM, "voice state: %d layers x %d positions x %d too large",
                         layers, positions, d);
    ptts_voice_state *v = calloc(1, sizeof *v);
    if (!v) return ptts_fail(e, PTTS_E_NOMEM, "voice state: out of memory");
    v->layers = layers;
    v->heads = heads;
    v->dh = dh;
    v->positions = positions;
    static atomic_uint_fast64_t next_id = 1; /* never reused within a process */
    v->id = (uint64_t)atomic_fetch_add(&next_id, 1);
    v->k = ptts_calloc_aligned(bytes);
    v->v = ptts_calloc_aligned(bytes);
    if (!v->k || !v->v) {
        ptts_voice_state_free(v);
        return ptts_fail(e, PTTS_E_NOMEM, "voice state: out of memory (%zu bytes)", 2 * bytes);
    }
    *out = v;
    return PTTS_OK;
}

void ptts_voice_state_free(ptts_voice_state *v) {
    if (!v) return;
    ptts_free_aligned(v->k);
    ptts_free_aligned(v->v);
    free(v);
}

int ptts_voice_state_clone(ptts_voice_state **out, const ptts_voice_state *v, ptts_error *e) {
    if (!out || !v) return ptts_fail(e, PTTS_E_INVALID, "voice state clone: NULL argument");
    int rc = ptts_voice_state_alloc(out, v->layers, v->heads, v->dh, v->positions, e);
    if (rc) return rc;
    size_t bytes = floats_per_cache(v->layers, v->positions, v->heads * v->dh);
    if (bytes) {
        memcpy((*out)->k, v->k, bytes);
        memcpy((*out)->v, v->v, bytes);
    }
    return PTTS_OK;
}

static void shape_str(char *buf, size_t n, const st_tensor *t) {
    size_t used = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < t->ndim && used < n; i++)
        used +=
            (size_t)snprintf(buf + used, n - used, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
    if (used < n) snprintf(buf + used, n - used, "]");
}

/* The positions in use by layer i: its offset tensor (an integer scalar or [1]) or, in older
 * files, the first dimension of current_end. */
static int layer_offset(const st_file *f, int i, int64_t *off, ptts_error *e) {
    const char *path = st_path(f);
    char nm[96];
    snprintf(nm, sizeof nm, VOICE_PREFIX "%d.self_attn/offset", i);
    const st_tensor *t = st_find(f, nm);
    if (t) {
        if (t->numel != 1)
            return ptts_fail(e, PTTS_E_FORMAT, "%s: tensor %s has %lld values, expected 1", path,
                             nm, (long long)t->numel);
        if (t->dtype != ST_I64 && t->dtype != ST_I32 && t->dtype != ST_I16 && t->dtype != ST_I8 &&
            t->dtype != ST_U8)
            return ptts_fail(e, PTTS_E_FORMAT, "%s: tensor %s has dtype %s, expected I64", path, nm,
                             st_dtype_name(t->dtype));
        return st_to_i64(f, t, off, e);
    }
    snprintf(nm, sizeof nm, VOICE_PREFIX "%d.self_attn/current_end", i);
    t = st_find(f, nm);
    if (t) {
        if (t->ndim < 1)
            return ptts_fail(e, PTTS_E_FORMAT,
                             "%s: tensor %s is a scalar; its first dimension "
                             "should be the position count",
                             path, nm);
        *off = t->shape[0];
        return PTTS_OK;
    }
    return ptts_fail(e, PTTS_E_FORMAT,
                     "%s: " VOICE_PREFIX "%d.self_attn/offset (or current_end) is missing", path,
                     i);
}

/* Layer i's pad (MODEL.md 7.1): missing or 0. A pad p > 0 marks cache positions 0..p-1 as
 * padding of a batched training generation; no published file has one and this reader does not
 * implement the shift, so it is refused. */
static int layer_pad(const st_file *f, int i, ptts_error *e) {
    const char *path = st_path(f);
    char nm[96];
    snprintf(nm, sizeof nm, VOICE_PREFIX "%d.self_attn/pad", i);
    const st_tensor *t = st_find(f, nm);
    if (!t) return PTTS_OK;
    if (t->numel != 1 || (t->dtype != ST_I64 && t->dtype != ST_I32 && t->dtype != ST_I16 &&
                          t->dtype != ST_I8 && t->dtype != ST_U8))
        return ptts_fail(e, PTTS_E_FORMAT, "%s: tensor %s should be one integer (I64 [1])", path,
                         nm);
    int64_t pad = 0;
    int rc = st_to_i64(f, t, &pad, e);
    if (rc) return rc;
    if (pad != 0)
        return ptts_fail(e, PTTS_E_UNSUPPORTED,
                         "%s: tensor %s is %lld: a voice state with padded positions (from "
                         "batched generation) is not supported; export the voice again",
                         path, nm, (long long)pad);
    return PTTS_OK;
}

static int load_file(ptts_voice_state **out, const st_file *f, int layers, int heads, int dh,
                     ptts_error *e) {
    const char *path = st_path(f);
    char nm[96], sh[128];

    /* layer count */
    int n = 0, count = 0;
    for (int i = 0; i < st_count(f); i++) {
        const st_tensor *t = st_at(f, i);
        int idx = layer_index(t->name, ".self_attn/cache");
        if (idx == -2)
            return ptts_fail(e, PTTS_E_FORMAT, "%s: tensor %s: layer index out of range", path,
                             t->name);
        if (idx < 0) continue;
        count++;
        if (idx + 1 > n) n = idx + 1;
    }
    if (count == 0)
        return ptts_fail(e, PTTS_E_FORMAT,
                         "%s: no " VOICE_PREFIX "N.self_attn/cache tensors: not a voice state",
                         path);
    for (int i = 0; i < n; i++) {
        snprintf(nm, sizeof nm, VOICE_PREFIX "%d.self_attn/cache", i);
        if (!st_find(f, nm))
            return ptts_fail(e, PTTS_E_FORMAT,
                             "%s: tensor %s is missing (the file has layers up "
                             "to %d)",
                             path, nm, n - 1);
    }
    if (layers > 0 && n != layers)
        return ptts_fail(e, PTTS_E_MODEL, "%s: the voice state has %d layers, the model has %d",
                         path, n, layers);

    /* shapes, dtypes, offsets */
    int64_t P = 0, H = 0, D = 0, off = 0;
    for (int i = 0; i < n; i++) {
        snprintf(nm, sizeof nm, VOICE_PREFIX "%d.self_attn/cache", i);
        const st_tensor *t = st_find(f, nm);
        shape_str(sh, sizeof sh, t);
        if (t->ndim != 5 || t->shape[0] != 2 || t->shape[1] != 1)
            return ptts_fail(e, PTTS_E_FORMAT,
                             "%s: tensor %s has shape %s, expected [2, 1, P, "
                             "heads, dh]",
                             path, nm, sh);
        if (t->dtype != ST_F32 && t->dtype != ST_BF16 && t->dtype != ST_F16)
            return ptts_fail(e, PTTS_E_UNSUPPORTED,
                             "%s: tensor %s has dtype %s (F32, BF16 or "
                             "F16 expected)",
                             path, nm, st_dtype_name(t->dtype));
        if ((heads > 0 && t->shape[3] != heads) || (dh > 0 && t->shape[4] != dh))
            return ptts_fail(e, PTTS_E_MODEL,
                             "%s: tensor %s has shape %s, the model expects "
                             "[2, 1, P, %d, %d]",
                             path, nm, sh, heads > 0 ? heads : (int)t->shape[3],
                             dh > 0 ? dh : (int)t->shape[4]);
        if (i == 0) {
            P = t->shape[2];
            H = t->shape[3];
            D = t->shape[4];
            if (H < 1 || D < 1 || H > INT_MAX / D || P > INT_MAX)
                return ptts_fail(e, PTTS_E_FORMAT, "%s: tensor %s has unusable shape %s", path, nm,
                                 sh);
        } else if (t->shape[2] != P || t->shape[3] != H || t->shape[4] != D) {
            return ptts_fail(e, PTTS_E_FORMAT,
                             "%s: tensor %s has shape %s, layer 0 has [2, 1, "
                             "%lld, %lld, %lld]",
                             path, nm, sh, (long long)P, (long long)H, (long long)D);
        }
        int64_t o = 0;
        int rc = layer_offset(f, i, &o, e);
        if (!rc) rc = layer_pad(f, i, e);
        if (rc) return rc;
        if (o < 1 || o > P)
            return ptts_fail(e, PTTS_E_FORMAT,
                             "%s: layer %d: offset %lld outside the cache's %lld "
                             "positions",
                             path, i, (long long)o, (long long)P);
        if (i > 0 && o != off)
            return ptts_fail(e, PTTS_E_FORMAT, "%s: layer %d: offset %lld, layer 0 has %lld", path,
                             i, (long long)o, (long long)off);
        off = o;
    }

    ptts_voice_state *v = NULL;
    int rc = ptts_voice_state_alloc(&v, n, (int)H, (int)D, (int)off, e);
    if (rc) return rc;
    const size_t d = (size_t)(H * D), row = (size_t)P * d, used = (size_t)off * d;
    size_t tmp_bytes;
    if (ptts_mul_size(2 * row, sizeof(float), &tmp_bytes)) {
        ptts_voice_state_free(v);
        return ptts_fail(e, PTTS_E_NOMEM, "%s: voice state too large", path);
    }
    float *tmp = malloc(tmp_bytes);
    if (!tmp) {
        ptts_voice_state_free(v);
        return ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory (%zu bytes)", path, tmp_bytes);
    }
    for (int i = 0; i < n; i++) {
        snprintf(nm, sizeof nm, VOICE_PREFIX "%d.self_attn/cache", i);
        rc = st_to_f32(f, st_find(f, nm), tmp, e);
        if (rc) break;
        memcpy(v->k + (size_t)i * used, tmp, used * sizeof(float));
        memcpy(v->v + (size_t)i * used, tmp + row, used * sizeof(float));
    }
    free(tmp);
    if (rc) {
        ptts_voice_state_free(v);
        return rc;
    }
    *out = v;
    return PTTS_OK;
}

int ptts_voice_state_load(ptts_voice_state **out, const char *path, int layers, int heads, int dh,
                          ptts_error *e) {
    if (!out || !path) return ptts_fail(e, PTTS_E_INVALID, "voice state load: NULL argument");
    *out = NULL;
    st_file *f = NULL;
    int rc = st_open(&f, path, e);
    if (rc) return rc;
    rc = load_file(out, f, layers, heads, dh, e);
    st_close(f);
    return rc;
}

int ptts_voice_state_load_memory(ptts_voice_state **out, const void *buf, size_t size,
                                 const char *name, int layers, int heads, int dh, ptts_error *e) {
    if (!out || !buf) return ptts_fail(e, PTTS_E_INVALID, "voice state load: NULL argument");
    *out = NULL;
    st_file *f = NULL;
    int rc = st_open_memory(&f, buf, size, name ? name : "voice state", e);
    if (rc) return rc;
    rc = load_file(out, f, layers, heads, dh, e);
    st_close(f);
    return rc;
}

int ptts_voice_state_save(const ptts_voice_state *v, const char *path, ptts_error *e) {
    if (!v || !path) return ptts_fail(e, PTTS_E_INVALID, "voice state save: NULL argument");
    if (v->layers < 1 || v->layers > VOICE_MAX_LAYERS || v->heads < 1 || v->dh < 1 ||
        v->positions < 1 || v->heads > INT_MAX / v->dh || !v->k || !v->v)
        return ptts_fail(e, PTTS_E_INVALID, "%s: cannot save an empty or invalid voice state",
                         path);
    const int n = v->layers;
    const size_t used = (size_t)v->positions * (size_t)(v->heads * v->dh);
    size_t bytes = floats_per_cache(n, v->positions, v->heads * v->dh);
    if (bytes == 0 || bytes > SIZE_MAX / 2)
        return ptts_fail(e, PTTS_E_NOMEM, "%s: voice state too large", path);
    float *cache = malloc(2 * bytes); /* [layers][2][P][d] */
    int64_t *offsets = malloc((size_t)n * sizeof *offsets);
    static const int64_t zero_pad = 0;
    st_out_tensor *ts = calloc(3 * (size_t)n, sizeof *ts);
    char(*names)[64] = malloc(3 * (size_t)n * sizeof *names);
    int rc = PTTS_OK;
    if (!cache || !offsets || !ts || !names) {
        rc = ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory", path);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        float *c = cache + (size_t)i * 2 * used;
        memcpy(c, v->k + (size_t)i * used, used * sizeof(float));
        memcpy(c + used, v->v + (size_t)i * used, used * sizeof(float));
        offsets[i] = v->positions;
        snprintf(names[3 * i], sizeof names[0], VOICE_PREFIX "%d.self_attn/cache", i);
        snprintf(names[3 * i + 1], sizeof names[0], VOICE_PREFIX "%d.self_attn/offset", i);
        snprintf(names[3 * i + 2], sizeof names[0], VOICE_PREFIX "%d.self_attn/pad", i);
        st_out_tensor *tc = &ts[3 * i], *to = &ts[3 * i + 1], *tp = &ts[3 * i + 2];
        tc->name = names[3 * i];
        tc->dtype = ST_F32;
        tc->ndim = 5;
        tc->shape[0] = 2;
        tc->shape[1] = 1;
        tc->shape[2] = v->positions;
        tc->shape[3] = v->heads;
        tc->shape[4] = v->dh;
        tc->data = c;
        to->name = names[3 * i + 1];
        to->dtype = ST_I64;
        to->ndim = 1;
        to->shape[0] = 1;
        to->data = &offsets[i];
        tp->name = names[3 * i + 2];
        tp->dtype = ST_I64;
        tp->ndim = 1;
        tp->shape[0] = 1;
        tp->data = &zero_pad;
    }
    rc = st_write(path, ts, 3 * n, NULL, e);
done:
    free(names);
    free(ts);
    free(offsets);
    free(cache);
    return rc;
}
