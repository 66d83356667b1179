/*
 * vk_weights.c - the model's weights in the GPU layout (vk_engine.h): one buffer of float32
 * (bf16 and int8 matrices widened exactly), 64-float aligned, with a packed bf16 copy of each
 * backbone and flow matrix the model stores in bf16 (stepk streams those: half the bytes, the
 * same values) and, when the engine runs tensor cores, a float16 copy of each matrix they may
 * multiply (glin.f: the values the tiles rounded W to as they loaded it). Layouts: linears
 * [out][in] as in the checkpoint; each flow block's adaLN linear and the final one stacked
 * into one [depth 3 fd + 2 fd][fd] matrix (one dispatch); convs [cout][k cin] (weights.h);
 * transposed convs as windowed stride-1 convs (wb_convtr); RoPE frequencies computed as ops.c
 * does. Uploads go through a host-visible staging buffer.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"
#include "vk_engine.h"

typedef struct wbuild {
    float *p;
    size_t n, cap;
    int fail;
    int f16; /* float16 copies (wb_f16) */
} wbuild;

static uint32_t wb_reserve(wbuild *b, size_t n) {
    size_t need = ((b->n + 63) & ~(size_t)63) + n;
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap : (1u << 20);
        while (cap < need)
            cap *= 2;
        float *q = realloc(b->p, cap * sizeof(float));
        if (!q) {
            b->fail = 1;
            return 0;
        }
        b->p = q;
        b->cap = cap;
    }
    uint32_t off = (uint32_t)((b->n + 63) & ~(size_t)63);
    if ((size_t)off + n > 0xffffffffu) b->fail = 1;
    b->n = need;
    return off;
}

static uint32_t wb_vec(wbuild *b, const float *v, size_t n) {
    if (!v) return NONE;
    uint32_t off = wb_reserve(b, n);
    if (!b->fail) memcpy(b->p + off, v, n * sizeof(float));
    return off;
}

/* L's weights as float32 at dst. */
static void wb_widen(float *dst, const ptts_lin *L) {
    size_t n = (size_t)L->in * L->out;
    switch (L->type) {
    case PTTS_W_F32: memcpy(dst, L->w, n * sizeof(float)); break;
    case PTTS_W_BF16:
        for (size_t i = 0; i < n; i++) {
            uint32_t u = (uint32_t)L->wh[i] << 16;
            memcpy(&dst[i], &u, 4);
        }
        break;
    case PTTS_W_Q8:
        for (size_t i = 0; i < n; i++)
            dst[i] = (float)L->wq[i] * L->scale[i / (size_t)L->in];
        break;
    }
}

/* The float16 copy of g's float32 matrix (glin.f), where a tensor-core tile may read it: rows
 * of in values rounded to nearest even (half.h, as the shaders' float16_t() rounds: subnormals
 * kept, inf past 65504), padded with zeros to a multiple of 8 (16-byte rows). */
static void wb_f16(wbuild *b, glin *g) {
    if (!b->f16 || g->in % 4 || g->out < 16) return;
    const size_t kp = ((size_t)g->in + 7) & ~(size_t)7;
    const uint32_t off = wb_reserve(b, (size_t)g->out * kp / 2);
    if (b->fail) return;
    uint16_t *h = (uint16_t *)(b->p + off);
    const float *w = b->p + g->w;
    for (size_t m = 0; m < g->out; m++)
        for (size_t k = 0; k < kp; k++)
            h[m * kp + k] = k < g->in ? st_f32_to_f16(w[m * g->in + k]) : 0;
    g->f = off;
}

static glin wb_lin(wbuild *b, const ptts_lin *L) {
    glin g = {NONE, NONE, (uint32_t)L->in, (uint32_t)L->out, NONE, NONE};
    g.w = wb_reserve(b, (size_t)L->in * L->out);
    if (b->fail) return g;
    wb_widen(b->p + g.w, L);
    g.b = wb_vec(b, L->bias, (size_t)L->out);
    if (!b->fail) wb_f16(b, &g);
    return g;
}

/* n linears of the same input width stacked into one (outputs concatenated; a missing bias
 * reads as zeros): one dispatch computes them all. */
static glin wb_lin_cat(wbuild *b, const ptts_lin *const *L, int n) {
    size_t out = 0, in = (size_t)L[0]->in;
    int bias = 0;
    for (int i = 0; i < n; i++) {
        out += (size_t)L[i]->out;
        bias |= L[i]->bias != NULL;
    }
    glin g = {NONE, NONE, (uint32_t)in, (uint32_t)out, NONE, NONE};
    g.w = wb_reserve(b, in * out);
    if (b->fail) return g;
    for (int i = 0, r = 0; i < n; r += L[i]->out, i++)
        wb_widen(b->p + g.w + (size_t)r * in, L[i]);
    wb_f16(b, &g);
    if (!bias || b->fail) return g;
    g.b = wb_reserve(b, out);
    if (b->fail) return g;
    for (int i = 0, r = 0; i < n; r += L[i]->out, i++) {
        if (L[i]->bias)
            memcpy(b->p + g.b + r, L[i]->bias, (size_t)L[i]->out * sizeof(float));
        else
            memset(b->p + g.b + r, 0, (size_t)L[i]->out * sizeof(float));
    }
    return g;
}

/* The bf16 copy of a matrix the model stores in bf16 (rows of whole 16-byte groups). */
static void wb_half(wbuild *b, glin *g, const ptts_lin *const *L, int n) {
    if (g->in % 8) return;
    for (int i = 0; i < n; i++)
        if (L[i]->type != PTTS_W_BF16 || !L[i]->wh) return;
    uint32_t off = wb_reserve(b, (size_t)g->out * g->in / 2);
    if (b->fail) return;
    for (int i = 0, r = 0; i < n; r += L[i]->out, i++)
        memcpy((uint16_t *)(b->p + off) + (size_t)r * g->in, L[i]->wh,
               (size_t)L[i]->out * L[i]->in * sizeof(uint16_t));
    g->h = off;
}
static glin wb_lin_h(wbuild *b, const ptts_lin *L) {
    glin g = wb_lin(b, L);
    if (!b->fail) wb_half(b, &g, &L, 1);
    return g;
}

static void wb_tl(wbuild *b, const ptts_tlayer *L, int d, gtl *g, int half) {
    g->qkv = half ? wb_lin_h(b, &L->in_proj) : wb_lin(b, &L->in_proj);
    g->out = half ? wb_lin_h(b, &L->out_proj) : wb_lin(b, &L->out_proj);
    g->l1 = half ? wb_lin_h(b, &L->linear1) : wb_lin(b, &L->linear1);
    g->l2 = half ? wb_lin_h(b, &L->linear2) : wb_lin(b, &L->linear2);
    g->n1w = wb_vec(b, L->norm1_w, (size_t)d);
    g->n1b = wb_vec(b, L->norm1_b, (size_t)d);
    g->n2w = wb_vec(b, L->norm2_w, (size_t)d);
    g->n2b = wb_vec(b, L->norm2_b, (size_t)d);
    g->ls1 = wb_vec(b, L->ls1, (size_t)d);
    g->ls2 = wb_vec(b, L->ls2, (size_t)d);
}

static gconv wb_conv(wbuild *b, const ptts_conv *cv) {
    gconv g = {wb_lin(b, &cv->w), (uint32_t)cv->cin,    (uint32_t)cv->cout,
               (uint32_t)cv->k,   (uint32_t)cv->stride, 0};
    return g;
}

/* A ConvTranspose1d (k, stride s, weights [k * cout][cin]: tap j of output channel c at row
 * j * cout + c) as a stride-1 conv over a window of R = ceil(k / s) input rows: input row t
 * makes output rows t s .. t s + s - 1, row t s + j taking tap j + q s of input row t - q for
 * q < R. One gemm [T][R cin] x [s cout][R cin]^T writes the output rows in place (its s cout
 * outputs of row t are output rows t s .. + s - 1), the bias on every one, and the streaming
 * state is the last R - 1 input rows (zeros at the start, as the partial sums of the overlap-add
 * form are): no [T][k cout] intermediate and no overlap-add pass. Window column
 * (R - 1 - q) cin + i holds input row t - q, channel i. */
static gconv wb_convtr(wbuild *b, const ptts_convtr *ct) {
    const uint32_t cin = (uint32_t)ct->cin, cout = (uint32_t)ct->cout, k = (uint32_t)ct->k,
                   st = (uint32_t)ct->stride, R = (k + st - 1) / st;
    gconv g = {{NONE, NONE, R * cin, st * cout, NONE, NONE}, cin, st * cout, R, 1, st};
    float *src = malloc((size_t)k * cout * cin * sizeof(float));
    if (!src) {
        b->fail = 1;
        return g;
    }
    wb_widen(src, &ct->w);
    g.w.w = wb_reserve(b, (size_t)R * cin * st * cout);
    if (!b->fail) {
        float *dst = b->p + g.w.w;
        for (uint32_t j = 0; j < st; j++)
            for (uint32_t c = 0; c < cout; c++) {
                float *row = dst + ((size_t)j * cout + c) * R * cin;
                for (uint32_t q = 0; q < R; q++) {
                    float *win = row + (size_t)(R - 1 - q) * cin;
                    const uint32_t tap = j + q * st;
                    if (tap < k)
                        memcpy(win, src + ((size_t)tap * cout + c) * cin, cin * sizeof(float));
                    else
                        memset(win, 0, cin * sizeof(float));
                }
            }
    }
    free(src);
    if (!b->fail) wb_f16(b, &g.w);
    if (ct->bias) {
        g.w.b = wb_reserve(b, (size_t)st * cout);
        if (!b->fail)
            for (uint32_t j = 0; j < st; j++)
                memcpy(b->p + g.w.b + (size_t)j * cout, ct->bias, cout * sizeof(float));
    }
    return g;
}

/* RoPE frequencies as ops.c computes them. */
static uint32_t wb_freqs(wbuild *b, int dh) {
    uint32_t off = wb_reserve(b, (size_t)dh / 2);
    if (b->fail) return off;
    const float c = (float)(-log(10000.0) * 2.0 / dh);
    for (int i = 0; i < dh / 2; i++)
        b->p[off + i] = expf((float)i * c);
    return off;
}

int vkw_stage_reserve(vk_engine *g, size_t bytes, ptts_error *e) {
    if (g->stage.size >= bytes) return 0;
    pvk_buffer_destroy(&g->c, &g->stage);
    return pvk_buffer_create(&g->c, &g->stage, bytes, 1, e);
}

/* host bytes -> device buffer at byte offset (through the staging buffer, waits). */
int vkw_upload(vk_engine *g, const pvk_buffer *dst, size_t dst_off, const void *src, size_t bytes,
               ptts_error *e) {
    const size_t chunk = (size_t)64 << 20;
    for (size_t done = 0; done < bytes; done += chunk) {
        size_t n = bytes - done < chunk ? bytes - done : chunk;
        int rc = vkw_stage_reserve(g, n, e);
        if (rc) return rc;
        memcpy(g->stage.map, (const char *)src + done, n);
        VkCommandBuffer cb = pvk_cmd_begin(&g->c, e);
        if (!cb) return PTTS_E_BACKEND;
        pvk_copy(cb, &g->stage, 0, dst, dst_off + done, n);
        rc = pvk_cmd_end(&g->c, cb, e);
        if (!rc) rc = pvk_submit_wait(&g->c, cb, e);
        pvk_cmd_free(&g->c, cb);
        if (rc) return rc;
    }
    return 0;
}

int vkw_upload_weights(vk_engine *g, ptts_error *e) {
    const ptts_weights *w = g->w;
    const ptts_arch *a = &w->arch;
    const ptts_codec_weights *cw = &w->codec;
    wbuild b = {.f16 = g->tn.tc};
    g->wt.bb = calloc((size_t)a->layers, sizeof *g->wt.bb);
    g->wt.cd = calloc((size_t)cw->dec_tr.layers, sizeof *g->wt.cd);
    g->wt.fb = calloc((size_t)(a->flow_depth > 0 ? a->flow_depth : 1), sizeof *g->wt.fb);
    if (!g->wt.bb || !g->wt.cd || !g->wt.fb) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    for (int l = 0; l < a->layers; l++)
        wb_tl(&b, &w->backbone.layer[l], a->d, &g->wt.bb[l], 1);
    g->wt.input_linear = wb_lin_h(&b, &w->input_linear);
    g->wt.out_eos = wb_lin_h(&b, &w->out_eos);
    g->wt.out_nw = wb_vec(&b, w->out_norm_w, (size_t)a->d);
    g->wt.out_nb = wb_vec(&b, w->out_norm_b, (size_t)a->d);
    g->wt.bos = wb_vec(&b, w->bos_emb, (size_t)a->ld);
    g->wt.embed = wb_vec(&b, w->embed, (size_t)(a->nb + 1) * a->d);
    g->wt.bb_freq = wb_freqs(&b, a->d / a->heads);
    const ptts_flow_weights *fw = &w->flow;
    g->wt.cond = wb_lin_h(&b, &fw->cond_embed);
    g->wt.input_proj = wb_lin_h(&b, &fw->input_proj);
    for (int i = 0; i < a->flow_depth; i++) {
        g->wt.fb[i].ln_w = wb_vec(&b, fw->block[i].ln_w, (size_t)a->fd);
        g->wt.fb[i].ln_b = wb_vec(&b, fw->block[i].ln_b, (size_t)a->fd);
        g->wt.fb[i].mlp0 = wb_lin_h(&b, &fw->block[i].mlp0);
        g->wt.fb[i].mlp2 = wb_lin_h(&b, &fw->block[i].mlp2);
    }
    const ptts_lin *ada[65];
    int nada = 0;
    for (int i = 0; i < a->flow_depth && nada < 64; i++)
        ada[nada++] = &fw->block[i].ada;
    ada[nada++] = &fw->final_ada;
    g->wt.ada_all = wb_lin_cat(&b, ada, nada);
    if (!b.fail) wb_half(&b, &g->wt.ada_all, ada, nada);
    g->wt.final_linear = wb_lin_h(&b, &fw->final_linear);
    g->wt.emb_std = wb_vec(&b, cw->emb_std, (size_t)a->ld);
    g->wt.emb_mean = wb_vec(&b, cw->emb_mean, (size_t)a->ld);
    g->wt.quant = wb_lin(&b, &cw->quant_out);
    g->wt.up_w = wb_vec(&b, cw->upsample_w, (size_t)a->C * cw->upsample_k);
    for (int l = 0; l < cw->dec_tr.layers; l++)
        wb_tl(&b, &cw->dec_tr.layer[l], a->C, &g->wt.cd[l], 0);
    g->wt.cd_freq = wb_freqs(&b, cw->dec_tr.d / cw->dec_tr.heads);
    g->wt.dec_in = wb_conv(&b, &cw->dec_in);
    for (int s = 0; s < 3; s++) {
        g->wt.up[s] = wb_convtr(&b, &cw->dec_up[s]);
        g->wt.r1[s] = wb_conv(&b, &cw->dec_res[s].c1);
        g->wt.r2[s] = wb_conv(&b, &cw->dec_res[s].c2);
    }
    g->wt.dec_out = wb_conv(&b, &cw->dec_out);
    int rc = 0;
    if (b.fail) rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory (weights for the GPU)");
    if (!rc) rc = pvk_buffer_create_ex(&g->c, &g->wbuf, b.n * sizeof(float), 0, 1, e);
    if (!rc) rc = vkw_upload(g, &g->wbuf, 0, b.p, b.n * sizeof(float), e);
    free(b.p);
    return rc;
}
