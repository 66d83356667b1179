/*
 * backbone.h - the FlowLM backbone (MODEL.md section 4) for one stream: a KV cache, prompting
 * (voice rows, text tokens) as matrix-matrix passes, one-position generation steps with
 * out_norm and the EOS head.
 */
#ifndef PTTS_BACKBONE_H
#define PTTS_BACKBONE_H

#include "ops.h"
#include "voice.h"
#include "weights.h"

/* Rows per prompting pass: bounds the scratch; results do not depend on it (to rounding). */
#define PTTS_PROMPT_BLOCK 64

typedef struct ptts_backbone {
    const ptts_weights *w;
    ptts_kv kv;
    float *rows;    /* [PTTS_PROMPT_BLOCK, d] input rows */
    float *scratch; /* ptts_transformer_scratch(PTTS_PROMPT_BLOCK, kv.cap) */
    float *x1;      /* [d] step input */
} ptts_backbone;

/* kv16: the cache in float16 (ops.h; the engine's choice in the bf16 and int8 modes), else
 * float32 */
int ptts_backbone_init(ptts_backbone *b, const ptts_weights *w, int cap, int kv16, ptts_error *e);
void ptts_backbone_free(ptts_backbone *b);
/* Make room for `positions` cache positions (grows, keeping the contents). Called at chunk
 * start, never per frame. */
int ptts_backbone_reserve(ptts_backbone *b, int positions, ptts_error *e);
/* Cache := the voice state (shape checked; rounded to float16 in a float16 cache). */
int ptts_backbone_set_voice(ptts_backbone *b, const ptts_voice_state *v, ptts_error *e);
/* Append prompt rows [n, d] (outputs discarded). */
void ptts_backbone_prompt_rows(ptts_backbone *b, const ptts_ctx *c, const float *rows, int n);
/* Append text tokens (embedding rows). Ids must be in [0, nb). */
void ptts_backbone_prompt_tokens(ptts_backbone *b, const ptts_ctx *c, const int *ids, int n);
/* The voice prompt from codec latents [T, inner_dim]: bos_before_voice (when the model has
 * it) then latents @ speaker_proj^T. */
int ptts_backbone_prompt_voice_latents(ptts_backbone *b, const ptts_ctx *c, const float *latents,
                                       int T, ptts_error *e);
/* One generation step: input_linear(latent_prev, or bos_emb when NULL) at the next position;
 * h [d] = out_norm(x), *eos = out_eos(h). */
void ptts_backbone_step(ptts_backbone *b, const ptts_ctx *c, const float *latent_prev, float *h,
                        float *eos);
/* One generation step of n streams at once (weights read once per layer for all of them):
 * b[i] advances by one position from latent_prev[i] (NULL: bos_emb). x [n, d] and
 * scratch (ptts_transformer_step_scratch(n, cap), cap >= every b[i]->kv.cap) are the caller's
 * workspace; h [n, d], eos [n]. With n = 1 the results equal ptts_backbone_step. */
void ptts_backbone_step_batch(ptts_backbone *const *b, int n, const ptts_ctx *c,
                              const float *const *latent_prev, float *x, float *scratch, int cap,
                              ptts_kv **kv, float *h, float *eos);
/* The cache as a voice state (copy; a float16 cache's values widened, exactly). */
int ptts_backbone_to_voice(const ptts_backbone *b, ptts_voice_state **out, ptts_error *e);

#endif
