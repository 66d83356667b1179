/*
 * backbone.c - the FlowLM backbone (MODEL.md section 4): d 1024, 16 heads, 6 or 24 layers,
 * ffn 4096, RoPE, causal attention over every earlier position, no LayerScale.
 *
 * Input rows: voice prompt (bos_before_voice, latents @ speaker_proj^T), text tokens
 * (conditioner.embed rows), generation steps (input_linear @ latent_prev or bos_emb). Prompt rows
 * only fill the KV cache; they run as [n, d] matrix passes of PTTS_PROMPT_BLOCK rows.
 */
#include "backbone.h"

#include <stdlib.h>
#include <string.h>

static int alloc_scratch(ptts_backbone *b, ptts_error *e) {
    ptts_free_aligned(b->scratch);
    size_t n = ptts_transformer_scratch(&b->w->backbone, PTTS_PROMPT_BLOCK, b->kv.cap);
    b->scratch = ptts_calloc_aligned(n * sizeof(float));
    if (!b->scratch) return ptts_fail(e, PTTS_E_NOMEM, "backbone: out of memory (scratch)");
    return 0;
}

int ptts_backbone_init(ptts_backbone *b, const ptts_weights *w, int cap, int kv16, ptts_error *e) {
    memset(b, 0, sizeof *b);
    b->w = w;
    const ptts_arch *a = &w->arch;
    if (cap < 1) cap = 1;
    if (ptts_kv_init(&b->kv, a->layers, a->d, cap, kv16))
        return ptts_fail(e, PTTS_E_NOMEM, "backbone: cannot allocate a cache of %d positions", cap);
    b->rows = ptts_calloc_aligned((size_t)PTTS_PROMPT_BLOCK * a->d * sizeof(float));
    b->x1 = ptts_calloc_aligned((size_t)a->d * sizeof(float));
    if (!b->rows || !b->x1) {
        ptts_backbone_free(b);
        return ptts_fail(e, PTTS_E_NOMEM, "backbone: out of memory");
    }
    int rc = alloc_scratch(b, e);
    if (rc) ptts_backbone_free(b);
    return rc;
}

void ptts_backbone_free(ptts_backbone *b) {
    if (!b) return;
    ptts_kv_free(&b->kv);
    ptts_free_aligned(b->rows);
    ptts_free_aligned(b->scratch);
    ptts_free_aligned(b->x1);
    memset(b, 0, sizeof *b);
}

int ptts_backbone_reserve(ptts_backbone *b, int positions, ptts_error *e) {
    if (positions <= b->kv.cap) return 0;
    int cap = PTTS_MAX(positions, b->kv.cap + b->kv.cap / 2);
    ptts_kv nkv;
    if (ptts_kv_init(&nkv, b->kv.layers, b->kv.d, cap, b->kv.f16))
        return ptts_fail(e, PTTS_E_NOMEM, "backbone: cannot allocate a cache of %d positions", cap);
    ptts_kv_copy(&nkv, &b->kv);
    ptts_kv_free(&b->kv);
    b->kv = nkv;
    return alloc_scratch(b, e);
}

int ptts_backbone_set_voice(ptts_backbone *b, const ptts_voice_state *v, ptts_error *e) {
    const ptts_arch *a = &b->w->arch;
    if (v->layers != a->layers || v->heads * v->dh != a->d || v->heads != a->heads)
        return ptts_fail(e, PTTS_E_MODEL,
                         "voice state has %d layers x %d heads x %d, the model needs %d x %d x %d",
                         v->layers, v->heads, v->dh, a->layers, a->heads, a->d / a->heads);
    int rc = ptts_backbone_reserve(b, v->positions, e);
    if (rc) return rc;
    size_t row = (size_t)a->d, P = (size_t)v->positions;
    for (int l = 0; l < a->layers; l++)
        ptts_kv_set_rows(ptts_kernels_best(), &b->kv, l, 0, (int)P, v->k + (size_t)l * P * row,
                         v->v + (size_t)l * P * row);
    b->kv.len = v->positions;
    return 0;
}

void ptts_backbone_prompt_rows(ptts_backbone *b, const ptts_ctx *c, const float *rows, int n) {
    const int d = b->w->arch.d;
    for (int i = 0; i < n; i += PTTS_PROMPT_BLOCK) {
        int m = PTTS_MIN(PTTS_PROMPT_BLOCK, n - i);
        if (rows + (size_t)i * d != b->rows)
            memmove(b->rows, rows + (size_t)i * d, (size_t)m * d * sizeof(float));
        ptts_transformer_forward(c, &b->w->backbone, &b->kv, b->rows, m, b->scratch);
    }
}

void ptts_backbone_prompt_tokens(ptts_backbone *b, const ptts_ctx *c, const int *ids, int n) {
    const int d = b->w->arch.d;
    for (int i = 0; i < n; i += PTTS_PROMPT_BLOCK) {
        int m = PTTS_MIN(PTTS_PROMPT_BLOCK, n - i);
        for (int j = 0; j < m; j++)
            memcpy(b->rows + (size_t)j * d, b->w->embed + (size_t)ids[i + j] * d,
                   (size_t)d * sizeof(float));
        ptts_transformer_forward(c, &b->w->backbone, &b->kv, b->rows, m, b->scratch);
    }
}

int ptts_backbone_prompt_voice_latents(ptts_backbone *b, const ptts_ctx *c, const float *latents,
                                       int T, ptts_error *e) {
    const ptts_weights *w = b->w;
    const int in = w->arch.inner_dim;
    int rc = ptts_backbone_reserve(b, b->kv.len + T + 1, e);
    if (rc) return rc;
    if (w->bos_before_voice) ptts_backbone_prompt_rows(b, c, w->bos_before_voice, 1);
    for (int i = 0; i < T; i += PTTS_PROMPT_BLOCK) {
        int m = PTTS_MIN(PTTS_PROMPT_BLOCK, T - i);
        ptts_linear(c, &w->speaker_proj, latents + (size_t)i * in, m, b->rows);
        ptts_transformer_forward(c, &w->backbone, &b->kv, b->rows, m, b->scratch);
    }
    return 0;
}

void ptts_backbone_step(ptts_backbone *b, const ptts_ctx *c, const float *latent_prev, float *h,
                        float *eos) {
    const ptts_weights *w = b->w;
    const int d = w->arch.d;
    ptts_linear(c, &w->input_linear, latent_prev ? latent_prev : w->bos_emb, 1, b->x1);
    ptts_transformer_forward(c, &w->backbone, &b->kv, b->x1, 1, b->scratch);
    c->k->layernorm(h, b->x1, w->out_norm_w, w->out_norm_b, d, 1e-5f);
    ptts_linear(c, &w->out_eos, h, 1, eos);
}

void ptts_backbone_step_batch(ptts_backbone *const *b, int n, const ptts_ctx *c,
                              const float *const *latent_prev, float *x, float *scratch, int cap,
                              ptts_kv **kv, float *h, float *eos) {
    if (n <= 0) return;
    const ptts_weights *w = b[0]->w;
    const int d = w->arch.d, ld = w->arch.ld;
    /* input_linear over the n inputs: stage them in h (free until out_norm) */
    for (int i = 0; i < n; i++) {
        memcpy(h + (size_t)i * ld, latent_prev[i] ? latent_prev[i] : w->bos_emb,
               (size_t)ld * sizeof(float));
        kv[i] = &b[i]->kv;
    }
    ptts_linear(c, &w->input_linear, h, n, x);
    ptts_transformer_step_batch(c, &w->backbone, kv, n, x, scratch, cap);
    for (int i = 0; i < n; i++)
        c->k->layernorm(h + (size_t)i * d, x + (size_t)i * d, w->out_norm_w, w->out_norm_b, d,
                        1e-5f);
    ptts_linear(c, &w->out_eos, h, n, eos);
}

int ptts_backbone_to_voice(const ptts_backbone *b, ptts_voice_state **out, ptts_error *e) {
    const ptts_arch *a = &b->w->arch;
    int P = b->kv.len;
    int rc = ptts_voice_state_alloc(out, a->layers, a->heads, a->d / a->heads, P, e);
    if (rc) return rc;
    size_t row = (size_t)a->d;
    for (int l = 0; l < a->layers; l++)
        ptts_kv_get_rows(&b->kv, l, 0, P, (*out)->k + (size_t)l * P * row,
                         (*out)->v + (size_t)l * P * row);
    return 0;
}
