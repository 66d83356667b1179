/*
 * weights.c - checkpoint tensors -> ptts_weights (see weights.h for the layouts).
 *
 * bind_model() is the only table of tensor names and shapes. It runs against a "source":
 *   SRC_FILE  a validated safetensors file; every missing or mis-shaped tensor is collected and
 *             reported together, by name;
 *   SRC_FILL  the pocket-fill-v1 generator (synthetic weights, tests and benchmarks);
 *   SRC_LIST  records names and shapes only (to write a synthetic checkpoint).
 * The architecture is derived from shapes before binding (MODEL.md section 2).
 */
#include "weights.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "config.h"
#include "fill.h"
#include "safetensors.h"

enum { SRC_FILE, SRC_FILL, SRC_LIST };

typedef struct binder {
    int src;
    const st_file *st;
    ptts_weights *w;
    ptts_wmode mode;
    int fill_bf16; /* SRC_FILL: values rounded to bf16 (ptts_weights_options.fill_bf16) */
    ptts_tensor_fn list_fn;
    void *list_user;
    /* problems found in SRC_FILE mode, reported together */
    int n_problems;
    char problems[PTTS_ERROR_MSG_MAX];
    int fatal; /* allocation failure or a list callback error */
    int fatal_code;
    int pack; /* matrices bound now also get a panel layout: PACK_F32 (wp) or PACK_BF16 (wp16) */
} binder;

enum { PACK_NONE, PACK_F32, PACK_BF16 };

static void problem(binder *b, const char *fmt, ...) PTTS_PRINTF(2, 3);
static void problem(binder *b, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t used = strlen(b->problems);
    if (b->n_problems < 6 && used + strlen(msg) + 3 < sizeof b->problems)
        snprintf(b->problems + used, sizeof b->problems - used, "%s%s", b->n_problems ? "; " : "",
                 msg);
    b->n_problems++;
}

/* A new block of the weights (zero-filled, or with `raw` left as it is: for a block the caller
 * writes whole), freed with them; NULL when out of memory. */
static void *hold_block(binder *b, size_t bytes, int raw) {
    ptts_weights *w = b->w;
    if (w->n_blocks == w->cap_blocks) {
        int cap = w->cap_blocks ? 2 * w->cap_blocks : 256;
        void **nb = realloc(w->blocks, (size_t)cap * sizeof *nb);
        if (!nb) return NULL;
        w->blocks = nb;
        w->cap_blocks = cap;
    }
    void *p = raw ? ptts_malloc_aligned(bytes) : ptts_calloc_aligned(bytes);
    if (!p) return NULL;
    w->blocks[w->n_blocks++] = p;
    w->bytes += bytes;
    return p;
}

static void *hold(binder *b, size_t bytes) { return hold_block(b, bytes, 0); }
static void *hold_raw(binder *b, size_t bytes) { return hold_block(b, bytes, 1); }

/* Frees block p (of `bytes` bytes) when it is one of the held blocks: a source tensor nothing
 * points at any more (a conv's [cout, cin, k] original once packed, the float32 original of a
 * matrix converted to bf16 / int8, whose ptts_lin.w is NULL). */
static void release(binder *b, void *p, size_t bytes) {
    ptts_weights *w = b->w;
    if (!p) return;
    for (int i = w->n_blocks - 1; i >= 0; i--)
        if (w->blocks[i] == p) {
            ptts_free_aligned(p);
            w->blocks[i] = w->blocks[--w->n_blocks];
            w->bytes -= bytes;
            return;
        }
}

static void shape_str(char *buf, size_t n, int ndim, const int64_t *s) {
    size_t o = 0;
    o += (size_t)snprintf(buf + o, n - o, "[");
    for (int i = 0; i < ndim && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, "%s%lld", i ? ", " : "", (long long)s[i]);
    if (o < n) snprintf(buf + o, n - o, "]");
}

/* The float32 values of tensor `name` with the expected shape; NULL in list mode, when absent
 * (optional: silently; else a problem is recorded) or mis-shaped. */
static float *tensor(binder *b, int optional, const char *name, int ndim, int64_t s0, int64_t s1,
                     int64_t s2) {
    int64_t shape[3] = {s0, s1, s2};
    if (b->fatal) return NULL;
    size_t numel = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] <= 0 || ptts_mul_size(numel, (size_t)shape[i], &numel)) {
            b->fatal = 1;
            b->fatal_code = PTTS_E_MODEL;
            problem(b, "tensor %s: invalid derived shape", name);
            return NULL;
        }
    }
    if (b->src == SRC_LIST) {
        if (b->list_fn(b->list_user, name, ndim, shape) != 0) {
            b->fatal = 1;
            b->fatal_code = PTTS_E_IO;
        }
        return NULL;
    }
    float *out = NULL;
    if (b->src == SRC_FILL) {
        out = hold_raw(b, numel * sizeof(float));
        if (!out) goto nomem;
        ptts_fill_tensor(name, ndim, shape, out);
        for (size_t i = 0; b->fill_bf16 && i < numel; i++)
            out[i] = st_bf16_to_f32(st_f32_to_bf16(out[i]));
        return out;
    }
    const st_tensor *t = st_find(b->st, name);
    if (!t) {
        if (!optional) problem(b, "tensor %s is missing", name);
        return NULL;
    }
    int ok = t->ndim == ndim;
    for (int i = 0; ok && i < ndim; i++)
        ok = t->shape[i] == shape[i];
    if (!ok) {
        char got[96], want[96];
        shape_str(got, sizeof got, t->ndim, t->shape);
        shape_str(want, sizeof want, ndim, shape);
        problem(b, "tensor %s has shape %s, expected %s", name, got, want);
        return NULL;
    }
    out = hold_raw(b, numel * sizeof(float)); /* st_to_f32 writes every value */
    if (!out) goto nomem;
    ptts_error e = {0};
    if (st_to_f32(b->st, t, out, &e) != 0) {
        problem(b, "%s", e.msg);
        return NULL;
    }
    return out;
nomem:
    b->fatal = 1;
    b->fatal_code = PTTS_E_NOMEM;
    problem(b, "out of memory loading %s", name);
    return NULL;
}

/* roundf(x) (half away from zero) clamped to [-127, 127], without the library calls (the
 * int8 load's quantisation was mostly roundf and fmaxf calls): the truncation's remainder is
 * exact below 2^23 and |x| < 127.5 here. A NaN (a hostile checkpoint's) gives 0. */
static int8_t quant8(float x) {
    if (!(x == x)) return 0;
    if (x >= 127.5f) return 127;
    if (x <= -127.5f) return -127;
    int i = (int)x;
    const float f = x - (float)i;
    i += (f >= 0.5f) - (f <= -0.5f); /* no branch: the remainders are random */
    return (int8_t)i;
}

/* Whether every one of the n values is a bf16 (its low 16 bits zero): a BF16 checkpoint's, as
 * the released files are. Stops at the first that is not (a float32 checkpoint's first row). */
static int bf16_exact(const float *w, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &w[i], 4);
        if (u & 0xffffu) return 0;
    }
    return 1;
}

/* Store a [out, in] float32 matrix in the kernel's format for `type`. A float32 matrix whose
 * values are all bf16 is stored as bf16: the same values in half the bytes, which the one-row
 * steps stream (bandwidth-bound: the backbone of a released file in float32 mode), computed in
 * float32 by the same widening kernels (kernels.h: sums in another order at most, as between
 * ISAs); the GPU's one-dispatch step streams the bf16 copy (vk_weights.c). */
static void make_lin(binder *b, ptts_lin *L, float *w, const float *bias, int out, int in,
                     ptts_wtype type) {
    const int exact = type == PTTS_W_F32 && w && bf16_exact(w, (size_t)out * (size_t)in);
    if (exact) type = PTTS_W_BF16;
    memset(L, 0, sizeof *L);
    L->out = out;
    L->in = in;
    L->bias = bias;
    L->type = PTTS_W_F32;
    L->w = w;
    if (w && type != PTTS_W_Q8 && b->pack == PACK_BF16 && out >= PTTS_PANEL &&
        in <= PTTS_BF16_PANEL_KMAX) {
        /* bf16 panels, k pairs interleaved (kernels.h); from the f32 values, so a bf16 matrix
         * gets the same bf16 values as its wh */
        uint16_t *wp16 = hold(b, ptts_bf16_panel_elems(out, in) * sizeof(uint16_t));
        if (!wp16) goto nomem;
        ptts_bf16_panel_pack(w, out, in, wp16);
        L->wp16 = wp16;
    } else if (w && type != PTTS_W_Q8 && b->pack && out >= PTTS_PANEL) {
        /* panels of PTTS_PANEL outputs, k major: wp[p][k][j] = w[p*PANEL + j][k], zero-padded;
         * a bf16 matrix gets its bf16 values (widened exactly), so results keep its rounding */
        size_t np = (size_t)(out + PTTS_PANEL - 1) / PTTS_PANEL;
        float *wp = hold_raw(b, np * (size_t)in * PTTS_PANEL * sizeof(float));
        if (!wp) goto nomem;
        for (size_t p = 0; p < np; p++)
            for (int k = 0; k < in; k++)
                for (int j = 0; j < PTTS_PANEL; j++) {
                    size_t m = p * PTTS_PANEL + (size_t)j;
                    float v = m < (size_t)out ? w[m * (size_t)in + (size_t)k] : 0.f;
                    if (type == PTTS_W_BF16 && !exact) v = st_bf16_to_f32(st_f32_to_bf16(v));
                    wp[(p * (size_t)in + (size_t)k) * PTTS_PANEL + (size_t)j] = v;
                }
        L->wp = wp;
    }
    if (!w || type == PTTS_W_F32) return;
    size_t n = (size_t)out * (size_t)in;
    if (type == PTTS_W_BF16) {
        uint16_t *h = hold_raw(b, n * sizeof(uint16_t));
        if (!h) goto nomem;
        if (exact) { /* the high halves, as they are */
            for (size_t i = 0; i < n; i++) {
                uint32_t u;
                memcpy(&u, &w[i], 4);
                h[i] = (uint16_t)(u >> 16);
            }
        } else {
            for (size_t i = 0; i < n; i++)
                h[i] = st_f32_to_bf16(w[i]);
        }
        L->type = PTTS_W_BF16;
        L->wh = h;
        L->w = NULL;
        release(b, w, n * sizeof(float)); /* readers use wh / wp (src/vulkan widens wh) */
    } else if (type == PTTS_W_Q8) {
        /* symmetric per-row int8: scale = max|w| / 127, q = round(w / scale) */
        int8_t *q = hold_raw(b, n);
        float *scale = hold_raw(b, (size_t)out * sizeof(float));
        if (!q || !scale) goto nomem;
        for (int m = 0; m < out; m++) {
            const float *row = w + (size_t)m * in;
            float mx = 0.f;
            for (int k = 0; k < in; k++) { /* fmaxf's result (a NaN is passed over), inline */
                const float a = fabsf(row[k]);
                mx = a > mx ? a : mx;
            }
            float s = mx > 0.f ? mx / 127.f : 1.f;
            scale[m] = s;
            for (int k = 0; k < in; k++)
                q[(size_t)m * in + k] = quant8(row[k] / s);
        }
        L->type = PTTS_W_Q8;
        L->wq = q;
        L->scale = scale;
        L->w = NULL;
        release(b, w, n * sizeof(float)); /* readers use wq / scale */
    }
    return;
nomem:
    b->fatal = 1;
    b->fatal_code = PTTS_E_NOMEM;
}

/* A [out, in] BF16 matrix of the file as it is (a new block), or NULL where that does not
 * apply: another source or dtype, or a tensor absent or mis-shaped (tensor() then reports it). */
static uint16_t *file_bf16(binder *b, const char *name, int out, int in) {
    const st_tensor *t = b->src == SRC_FILE ? st_find(b->st, name) : NULL;
    if (!t || t->dtype != ST_BF16 || t->ndim != 2 || t->shape[0] != out || t->shape[1] != in)
        return NULL;
    uint16_t *h = hold_raw(b, (size_t)t->numel * sizeof(uint16_t));
    if (!h) {
        b->fatal = 1;
        b->fatal_code = PTTS_E_NOMEM;
        problem(b, "out of memory loading %s", name);
        return NULL;
    }
    for (size_t i = 0; i < (size_t)t->numel; i++) /* little-endian in the file */
        h[i] = (uint16_t)(t->data[2 * i] | t->data[2 * i + 1] << 8);
    return h;
}

static void linear(binder *b, ptts_lin *L, const char *name, int out, int in, int has_bias,
                   ptts_wtype type) {
    char nm[256];
    snprintf(nm, sizeof nm, "%.200s.weight", name);
    /* float32 asked of a BF16 matrix with no panel copy: its values as they are, not widened
     * and narrowed again (what make_lin would store; a faster load of the released files) */
    uint16_t *h = type == PTTS_W_F32 && b->pack == PACK_NONE ? file_bf16(b, nm, out, in) : NULL;
    float *w = h ? NULL : tensor(b, 0, nm, 2, out, in, 0);
    float *bias = NULL;
    if (has_bias) {
        snprintf(nm, sizeof nm, "%.200s.bias", name);
        bias = tensor(b, 0, nm, 1, out, 0, 0);
    }
    if (h)
        *L = (ptts_lin){.out = out, .in = in, .type = PTTS_W_BF16, .wh = h, .bias = bias};
    else
        make_lin(b, L, w, bias, out, in, type);
}

static const float *vec(binder *b, int optional, const char *fmt_name, int n) {
    return tensor(b, optional, fmt_name, 1, n, 0, 0);
}

/* Conv1d [cout, cin, k] -> [cout, k*cin] (k major). */
static void conv(binder *b, ptts_conv *c, const char *prefix, int cin, int cout, int k, int stride,
                 int has_bias, ptts_wtype type) {
    char nm[256];
    c->cin = cin;
    c->cout = cout;
    c->k = k;
    c->stride = stride;
    snprintf(nm, sizeof nm, "%.200s.weight", prefix);
    float *w = tensor(b, 0, nm, 3, cout, cin, k);
    float *bias = NULL;
    if (has_bias) {
        snprintf(nm, sizeof nm, "%.200s.bias", prefix);
        bias = tensor(b, 0, nm, 1, cout, 0, 0);
    }
    float *packed = NULL;
    if (w) {
        packed = hold(b, (size_t)cout * cin * k * sizeof(float));
        if (!packed) {
            b->fatal = 1;
            b->fatal_code = PTTS_E_NOMEM;
            return;
        }
        for (int o = 0; o < cout; o++)
            for (int i = 0; i < cin; i++)
                for (int j = 0; j < k; j++)
                    packed[((size_t)o * k + j) * cin + i] = w[((size_t)o * cin + i) * k + j];
    }
    release(b, w, (size_t)cout * cin * k * sizeof(float)); /* only packed is used */
    make_lin(b, &c->w, packed, bias, cout, k * cin, type);
}

/* ConvTranspose1d [cin, cout, k] -> [k*cout, cin]. */
static void convtr(binder *b, ptts_convtr *c, const char *prefix, int cin, int cout, int k,
                   int stride, ptts_wtype type) {
    char nm[256];
    c->cin = cin;
    c->cout = cout;
    c->k = k;
    c->stride = stride;
    snprintf(nm, sizeof nm, "%.200s.weight", prefix);
    float *w = tensor(b, 0, nm, 3, cin, cout, k);
    snprintf(nm, sizeof nm, "%.200s.bias", prefix);
    c->bias = tensor(b, 0, nm, 1, cout, 0, 0);
    float *packed = NULL;
    if (w) {
        packed = hold(b, (size_t)cout * cin * k * sizeof(float));
        if (!packed) {
            b->fatal = 1;
            b->fatal_code = PTTS_E_NOMEM;
            return;
        }
        for (int i = 0; i < cin; i++)
            for (int o = 0; o < cout; o++)
                for (int j = 0; j < k; j++)
                    packed[((size_t)j * cout + o) * cin + i] = w[((size_t)i * cout + o) * k + j];
    }
    release(b, w, (size_t)cout * cin * k * sizeof(float)); /* only packed is used */
    make_lin(b, &c->w, packed, NULL, k * cout, cin, type);
}

static int bind_transformer(binder *b, ptts_transformer *t, const char *prefix, int d, int heads,
                            int layers, int ffn, int window, int layer_scale, ptts_wtype type) {
    t->d = d;
    t->heads = heads;
    t->layers = layers;
    t->ffn = ffn;
    t->window = window;
    t->layer = calloc((size_t)layers, sizeof *t->layer);
    if (!t->layer) return PTTS_E_NOMEM;
    char nm[256];
    for (int i = 0; i < layers; i++) {
        ptts_tlayer *L = &t->layer[i];
#define NM(s) (snprintf(nm, sizeof nm, "%.100s.layers.%d.%.100s", prefix, i, s), nm)
        linear(b, &L->in_proj, NM("self_attn.in_proj"), 3 * d, d, 0, type);
        linear(b, &L->out_proj, NM("self_attn.out_proj"), d, d, 0, type);
        L->norm1_w = vec(b, 0, NM("norm1.weight"), d);
        L->norm1_b = vec(b, 0, NM("norm1.bias"), d);
        L->norm2_w = vec(b, 0, NM("norm2.weight"), d);
        L->norm2_b = vec(b, 0, NM("norm2.bias"), d);
        linear(b, &L->linear1, NM("linear1"), ffn, d, 0, type);
        linear(b, &L->linear2, NM("linear2"), d, ffn, 0, type);
        if (layer_scale) {
            L->ls1 = vec(b, 0, NM("layer_scale_1.scale"), d);
            L->ls2 = vec(b, 0, NM("layer_scale_2.scale"), d);
        }
#undef NM
    }
    return 0;
}

static void resnet(binder *b, ptts_resnet *r, const char *prefix, int m, ptts_wtype type) {
    char nm[256];
    snprintf(nm, sizeof nm, "%.200s.block.1.conv", prefix);
    conv(b, &r->c1, nm, m, m / 2, 3, 1, 1, type);
    snprintf(nm, sizeof nm, "%.200s.block.3.conv", prefix);
    conv(b, &r->c2, nm, m / 2, m, 1, 1, 1, type);
}

static int bind_model(binder *b, const ptts_arch *a) {
    ptts_weights *w = b->w;
    w->arch = *a;
    ptts_wtype big = b->mode == PTTS_WMODE_INT8   ? PTTS_W_Q8
                     : b->mode == PTTS_WMODE_BF16 ? PTTS_W_BF16
                                                  : PTTS_W_F32;
    ptts_wtype codec_t = b->mode == PTTS_WMODE_BF16 ? PTTS_W_BF16 : PTTS_W_F32;
    const int d = a->d, ld = a->ld, fd = a->fd, C = a->C, nf = a->nf;
    char nm[256];

    /* backbone and its inputs */
    w->bos_emb = vec(b, 0, "flow_lm.bos_emb", ld);
    if (a->has_bos_before_voice)
        w->bos_before_voice = tensor(b, 0, "flow_lm.bos_before_voice", 3, 1, 1, d);
    make_lin(b, &w->speaker_proj,
             tensor(b, 0, "flow_lm.speaker_proj_weight", 2, d, a->inner_dim, 0), NULL, d,
             a->inner_dim, PTTS_W_F32);
    w->codec.emb_std = vec(b, 0, "flow_lm.emb_std", ld);
    w->codec.emb_mean = vec(b, 0, "flow_lm.emb_mean", ld);
    w->embed = tensor(b, 0, "flow_lm.conditioner.embed.weight", 2, a->nb + 1, d, 0);
    linear(b, &w->input_linear, "flow_lm.input_linear", d, ld, 0, PTTS_W_F32);
    int rc = bind_transformer(b, &w->backbone, "flow_lm.transformer", d, a->heads, a->layers,
                              a->ffn, 0, 0, big);
    if (rc) return rc;
    /* a step reads every backbone matrix once, 76-302 MB: streamed (kernels.h ptts_lin.stream) */
    for (int i = 0; i < a->layers; i++) {
        ptts_tlayer *L = &w->backbone.layer[i];
        L->in_proj.stream = L->out_proj.stream = L->linear1.stream = L->linear2.stream = 1;
    }
    w->out_norm_w = vec(b, 0, "flow_lm.out_norm.weight", d);
    w->out_norm_b = vec(b, 0, "flow_lm.out_norm.bias", d);
    linear(b, &w->out_eos, "flow_lm.out_eos", 1, d, 1, PTTS_W_F32);

    /* flow head */
    ptts_flow_weights *f = &w->flow;
    for (int i = 0; i < a->n_time_embed; i++) {
        ptts_time_embed *t = &f->time[i];
        snprintf(nm, sizeof nm, "flow_lm.flow_net.time_embed.%d.freqs", i);
        t->freqs = vec(b, 0, nm, a->nfreq);
        snprintf(nm, sizeof nm, "flow_lm.flow_net.time_embed.%d.mlp.0", i);
        linear(b, &t->mlp0, nm, fd, 2 * a->nfreq, 1, PTTS_W_F32);
        snprintf(nm, sizeof nm, "flow_lm.flow_net.time_embed.%d.mlp.2", i);
        linear(b, &t->mlp2, nm, fd, fd, 1, PTTS_W_F32);
        snprintf(nm, sizeof nm, "flow_lm.flow_net.time_embed.%d.mlp.3.alpha", i);
        t->alpha = vec(b, 0, nm, fd);
    }
    linear(b, &f->cond_embed, "flow_lm.flow_net.cond_embed", fd, d, 1, PTTS_W_F32);
    linear(b, &f->input_proj, "flow_lm.flow_net.input_proj", fd, ld, 1, PTTS_W_F32);
    f->block = calloc((size_t)a->flow_depth, sizeof *f->block);
    if (!f->block) return PTTS_E_NOMEM;
    for (int i = 0; i < a->flow_depth; i++) {
        ptts_res_block *r = &f->block[i];
#define NM(s) (snprintf(nm, sizeof nm, "flow_lm.flow_net.res_blocks.%d.%s", i, s), nm)
        r->ln_w = vec(b, 0, NM("in_ln.weight"), fd);
        r->ln_b = vec(b, 0, NM("in_ln.bias"), fd);
        linear(b, &r->mlp0, NM("mlp.0"), fd, fd, 1, PTTS_W_F32);
        linear(b, &r->mlp2, NM("mlp.2"), fd, fd, 1, PTTS_W_F32);
        linear(b, &r->ada, NM("adaLN_modulation.1"), 3 * fd, fd, 1, PTTS_W_F32);
#undef NM
    }
    linear(b, &f->final_linear, "flow_lm.flow_net.final_layer.linear", ld, fd, 1, PTTS_W_F32);
    linear(b, &f->final_ada, "flow_lm.flow_net.final_layer.adaLN_modulation.1", 2 * fd, fd, 1,
           PTTS_W_F32);
    /* read once a frame, after the codec and backbone have evicted them: streamed too (their
     * cost inside the loop, bench/RESULTS.md "The flow head inside the overlap region") */
    f->cond_embed.stream = f->input_proj.stream = 1;
    f->final_linear.stream = f->final_ada.stream = 1;
    for (int i = 0; i < a->flow_depth; i++)
        f->block[i].mlp0.stream = f->block[i].mlp2.stream = f->block[i].ada.stream = 1;

    /* codec decoder */
    ptts_codec_weights *c = &w->codec;
    /* the codec runs its matrices over 16 to 1920 rows a frame: panel copies for the
     * outer-product kernel (about 25 MB more at full size in f32). The reduced-precision modes
     * take bf16 panels (X rounded to bf16 too, the vdpbf16ps arithmetic on every CPU: on
     * AVX512-BF16 twice the MACs per instruction, and half the memory everywhere); int8
     * activations would be audible here. quant_out (one row a frame) and the first and last
     * convolutions stay f32 in every mode. */
    const int codec_pack = b->mode != PTTS_WMODE_F32 ? PACK_BF16 : PACK_F32;
    b->pack = PACK_F32;
    make_lin(b, &c->quant_out, tensor(b, 0, "mimi.quantizer.output_proj.weight", 3, C, ld, 1), NULL,
             C, ld, PTTS_W_F32);
    c->upsample_k = 32;
    c->upsample_stride = 16;
    c->upsample_w = tensor(b, 0, "mimi.upsample.convtr.convtr.weight", 3, C, 1, 32);
    b->pack = codec_pack;
    rc = bind_transformer(b, &c->dec_tr, "mimi.decoder_transformer.transformer", C, a->codec_heads,
                          a->codec_layers, a->codec_ffn, a->codec_window, 1, codec_t);
    if (rc) return rc;
    int m = 8 * nf;
    conv(b, &c->dec_in, "mimi.decoder.model.0.conv", C, m, 7, 1, 1, codec_t);
    for (int s = 0; s < 3; s++) {
        int r = a->ratios[s];
        snprintf(nm, sizeof nm, "mimi.decoder.model.%d.convtr", 2 + 3 * s);
        convtr(b, &c->dec_up[s], nm, m, m / 2, 2 * r, r, codec_t);
        snprintf(nm, sizeof nm, "mimi.decoder.model.%d", 3 + 3 * s);
        resnet(b, &c->dec_res[s], nm, m / 2, codec_t);
        m /= 2;
    }
    b->pack = PACK_F32;
    conv(b, &c->dec_out, "mimi.decoder.model.11.conv", nf, 1, 3, 1, 1, PTTS_W_F32);

    /* codec encoder (optional: weights without voice cloning lack it) */
    if (a->has_encoder) {
        m = nf;
        conv(b, &c->enc_in, "mimi.encoder.model.0.conv", 1, nf, 7, 1, 1, PTTS_W_F32);
        b->pack = codec_pack;
        for (int s = 0; s < 3; s++) {
            int r = a->ratios[2 - s];
            snprintf(nm, sizeof nm, "mimi.encoder.model.%d", 1 + 3 * s);
            resnet(b, &c->enc_res[s], nm, m, codec_t);
            snprintf(nm, sizeof nm, "mimi.encoder.model.%d.conv", 3 + 3 * s);
            conv(b, &c->enc_down[s], nm, m, 2 * m, 2 * r, r, 1, codec_t);
            m *= 2;
        }
        conv(b, &c->enc_out, "mimi.encoder.model.11.conv", m, C, 3, 1, 1, codec_t);
        rc = bind_transformer(b, &c->enc_tr, "mimi.encoder_transformer.transformer", C,
                              a->codec_heads, a->codec_layers, a->codec_ffn, a->codec_window, 1,
                              codec_t);
        if (rc) return rc;
        b->pack = PACK_NONE; /* 32 MB for a layer run at 12.5 rows a second: no panel copy */
        conv(b, &c->downsample, "mimi.downsample.conv.conv", C, a->inner_dim, 32, 16, 0,
             PTTS_W_F32);
    }
    return 0;
}

/* ---- entry points ------------------------------------------------------------------------- */

static int finish(binder *b, int rc, const char *what, ptts_weights **out, ptts_error *e) {
    if (!rc && b->fatal) rc = b->fatal_code ? b->fatal_code : PTTS_E_MODEL;
    if (!rc && b->n_problems) rc = PTTS_E_MODEL;
    if (rc) {
        if (b->n_problems > 1)
            ptts_fail(e, rc, "%s: %d problems: %s%s", what, b->n_problems, b->problems,
                      b->n_problems > 6 ? "; ..." : "");
        else if (b->n_problems == 1)
            ptts_fail(e, rc, "%s: %s", what, b->problems);
        else
            ptts_fail(e, rc, "%s: %s", what, ptts_strerror(rc));
        ptts_weights_free(b->w);
        return rc;
    }
    *out = b->w;
    return 0;
}

int ptts_weights_load(ptts_weights **out, const char *path, const ptts_weights_options *o,
                      ptts_error *e) {
    *out = NULL;
    st_file *f = NULL;
    int rc = st_open(&f, path, e);
    if (rc) return rc;
    ptts_arch a;
    rc = ptts_arch_derive(f, o, &a, e);
    if (rc) {
        st_close(f);
        return rc;
    }
    binder b = {.src = SRC_FILE, .st = f, .mode = o ? o->mode : PTTS_WMODE_F32};
    b.w = calloc(1, sizeof *b.w);
    if (!b.w) {
        st_close(f);
        return ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory", path);
    }
    b.w->mode = b.mode;
    rc = bind_model(&b, &a);
    rc = finish(&b, rc, path, out, e);
    st_close(f);
    return rc;
}

int ptts_weights_fill(ptts_weights **out, const ptts_arch *arch, const ptts_weights_options *o,
                      ptts_error *e) {
    *out = NULL;
    ptts_arch a = *arch;
    ptts_arch_fill_derived(&a);
    binder b = {
        .src = SRC_FILL, .mode = o ? o->mode : PTTS_WMODE_F32, .fill_bf16 = o ? o->fill_bf16 : 0};
    b.w = calloc(1, sizeof *b.w);
    if (!b.w) return ptts_fail(e, PTTS_E_NOMEM, "pocket-fill-v1: out of memory");
    b.w->mode = b.mode;
    int rc = bind_model(&b, &a);
    return finish(&b, rc, "pocket-fill-v1", out, e);
}

int ptts_arch_tensors(const ptts_arch *arch, ptts_tensor_fn fn, void *user, ptts_error *e) {
    ptts_arch a = *arch;
    ptts_arch_fill_derived(&a);
    binder b = {.src = SRC_LIST, .list_fn = fn, .list_user = user};
    b.w = calloc(1, sizeof *b.w);
    if (!b.w) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    int rc = bind_model(&b, &a);
    if (!rc && b.fatal) rc = b.fatal_code ? b.fatal_code : PTTS_E_INTERNAL;
    ptts_weights_free(b.w);
    if (rc)
        return ptts_fail(e, rc, "listing tensors: %s",
                         b.n_problems ? b.problems : ptts_strerror(rc));
    return 0;
}

static int skip_tensor(void *user, const char *name, int ndim, const int64_t *shape) {
    (void)user;
    (void)name;
    (void)ndim;
    (void)shape;
    return 0;
}

int ptts_weights_skeleton(ptts_weights **out, const ptts_arch *a, ptts_error *e) {
    *out = NULL;
    binder b = {.src = SRC_LIST, .list_fn = skip_tensor};
    b.w = calloc(1, sizeof *b.w);
    if (!b.w) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    int rc = bind_model(&b, a);
    if (!rc && b.fatal) rc = b.fatal_code ? b.fatal_code : PTTS_E_MODEL;
    if (rc) {
        ptts_weights_free(b.w);
        return ptts_fail(e, rc, "binding the architecture: %s",
                         b.n_problems ? b.problems : ptts_strerror(rc));
    }
    *out = b.w;
    return 0;
}

void ptts_weights_free(ptts_weights *w) {
    if (!w) return;
    if (w->map) munmap(w->map, w->map_size);
    for (int i = 0; i < w->n_blocks; i++)
        ptts_free_aligned(w->blocks[i]);
    free(w->blocks);
    free(w->backbone.layer);
    free(w->flow.block);
    free(w->codec.dec_tr.layer);
    free(w->codec.enc_tr.layer);
    free(w);
}
