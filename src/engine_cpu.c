/*
 * engine_cpu.c - the CPU engine behind engine.h: per slot a backbone (KV cache), a codec
 * decoder and the last latent; one flow head shared by the slots. One step per call (k = 1):
 * the loop needs each EOS logit before deciding to go on. A step of n slots is one batched
 * backbone pass (every weight matrix read once for the n rows, attention per slot over its own
 * cache) and one flow-head pass over the n rows.
 */
#include <stdlib.h>
#include <string.h>

#include "backbone.h"
#include "codec.h"
#include "engine.h"
#include "flow.h"
#include "model.h"

typedef struct cpu_slot {
    ptts_backbone bb;
    ptts_codec_dec *dec;
    int have_latent; /* latent holds the previous step's output */
} cpu_slot;

typedef struct cpu_engine {
    const ptts_model *m;
    int n_slots;
    cpu_slot *slot;
    ptts_flow *flow;
    float *h;      /* [slots, d] */
    float *x0;     /* [slots, ld] */
    float *latent; /* [slots, ld]: each slot's last latent */
    /* batched step workspace (sized at chunk start for the largest cache) */
    ptts_backbone **bb;     /* [slots] */
    const float **lat_in;   /* [slots] */
    ptts_kv **kv;           /* [slots] */
    float *xs;              /* [slots, d] */
    float *scratch;         /* ptts_transformer_step_scratch(slots, scratch_cap) */
    int scratch_cap;
} cpu_engine;

static void cpu_destroy(void *p) {
    cpu_engine *g = p;
    if (!g) return;
    for (int i = 0; i < g->n_slots && g->slot; i++) {
        ptts_backbone_free(&g->slot[i].bb);
        ptts_codec_dec_free(g->slot[i].dec);
    }
    free(g->slot);
    ptts_flow_free(g->flow);
    ptts_free_aligned(g->h);
    ptts_free_aligned(g->x0);
    ptts_free_aligned(g->latent);
    free(g->bb);
    free(g->lat_in);
    free(g->kv);
    ptts_free_aligned(g->xs);
    ptts_free_aligned(g->scratch);
    free(g);
}

static int cpu_create(void **out, const ptts_model *m, int slots, ptts_error *e) {
    *out = NULL;
    if (slots < 1) return ptts_fail(e, PTTS_E_INVALID, "an engine needs at least one slot");
    cpu_engine *g = calloc(1, sizeof *g);
    if (!g) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    g->m = m;
    const ptts_arch *a = &m->w->arch;
    g->slot = calloc((size_t)slots, sizeof *g->slot);
    g->h = ptts_calloc_aligned((size_t)slots * a->d * sizeof(float));
    g->x0 = ptts_calloc_aligned((size_t)slots * a->ld * sizeof(float));
    g->latent = ptts_calloc_aligned((size_t)slots * a->ld * sizeof(float));
    g->bb = calloc((size_t)slots, sizeof *g->bb);
    g->lat_in = calloc((size_t)slots, sizeof *g->lat_in);
    g->kv = calloc((size_t)slots, sizeof *g->kv);
    g->xs = ptts_calloc_aligned((size_t)slots * a->d * sizeof(float));
    int rc = 0;
    if (!g->slot || !g->h || !g->x0 || !g->latent || !g->bb || !g->lat_in || !g->kv || !g->xs)
        rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    g->n_slots = slots;
    for (int i = 0; !rc && i < slots; i++) {
        rc = ptts_backbone_init(&g->slot[i].bb, m->w, 512, e);
        if (!rc) rc = ptts_codec_dec_create(&g->slot[i].dec, m->w, e);
    }
    if (!rc) rc = ptts_flow_create(&g->flow, m->w, 1, slots, e);
    if (rc) {
        cpu_destroy(g);
        return rc;
    }
    *out = g;
    return 0;
}

static int cpu_max_steps(void *p) {
    (void)p;
    return 1;
}

static int cpu_set_lsd_steps(void *p, int steps, ptts_error *e) {
    cpu_engine *g = p;
    if (ptts_flow_steps(g->flow) == steps) return 0;
    ptts_flow *f;
    int rc = ptts_flow_create(&f, g->m->w, steps, g->n_slots, e);
    if (rc) return rc;
    ptts_flow_free(g->flow);
    g->flow = f;
    return 0;
}

static int cpu_begin_chunk(void *p, int slot, const ptts_voice_state *v, const int *ids,
                           int n_ids, int max_steps, ptts_error *e) {
    cpu_engine *g = p;
    cpu_slot *s = &g->slot[slot];
    int rc = ptts_backbone_reserve(&s->bb, v->positions + n_ids + max_steps + 1, e);
    if (!rc) rc = ptts_backbone_set_voice(&s->bb, v, e);
    if (rc) return rc;
    /* the batched step's scratch covers the largest cache of any slot */
    if (s->bb.kv.cap > g->scratch_cap) {
        size_t n = ptts_transformer_step_scratch(&g->m->w->backbone, g->n_slots, s->bb.kv.cap);
        float *sc = ptts_calloc_aligned(n * sizeof(float));
        if (!sc) return ptts_fail(e, PTTS_E_NOMEM, "out of memory (step scratch)");
        ptts_free_aligned(g->scratch);
        g->scratch = sc;
        g->scratch_cap = s->bb.kv.cap;
    }
    ptts_backbone_prompt_tokens(&s->bb, &g->m->ctx, ids, n_ids);
    ptts_codec_dec_reset(s->dec);
    s->have_latent = 0;
    return 0;
}

static int cpu_step(void *p, const int *slots, int n, int k, const float *noise, float *eos,
                    float *latents, ptts_error *e) {
    cpu_engine *g = p;
    const ptts_arch *a = &g->m->w->arch;
    if (k != 1) return ptts_fail(e, PTTS_E_INTERNAL, "the CPU engine runs one step per call");
    for (int i = 0; i < n; i++) {
        cpu_slot *s = &g->slot[slots[i]];
        g->bb[i] = &s->bb;
        g->lat_in[i] = s->have_latent ? g->latent + (size_t)slots[i] * a->ld : NULL;
    }
    ptts_backbone_step_batch(g->bb, n, &g->m->ctx, g->lat_in, g->xs, g->scratch, g->scratch_cap,
                             g->kv, g->h, eos);
    /* the flow head over every slot's row at once */
    ptts_flow_sample(g->flow, &g->m->ctx, g->h, noise, n, latents);
    for (int i = 0; i < n; i++) {
        memcpy(g->latent + (size_t)slots[i] * a->ld, latents + (size_t)i * a->ld,
               (size_t)a->ld * sizeof(float));
        g->slot[slots[i]].have_latent = 1;
    }
    return 0;
}

static int cpu_decode(void *p, const int *slots, int n, int k, const int *counts, float *pcm,
                      ptts_error *e) {
    (void)e;
    (void)k;
    cpu_engine *g = p;
    const ptts_arch *a = &g->m->w->arch;
    for (int i = 0; i < n; i++)
        if (counts[i] > 0)
            ptts_codec_dec_frame(g->slot[slots[i]].dec, &g->m->ctx,
                                 g->latent + (size_t)slots[i] * a->ld,
                                 pcm + (size_t)i * a->frame_samples, NULL);
    return 0;
}

const ptts_engine_ops ptts_engine_cpu = {
    .name = "cpu",
    .create = cpu_create,
    .destroy = cpu_destroy,
    .max_steps_per_call = cpu_max_steps,
    .set_lsd_steps = cpu_set_lsd_steps,
    .begin_chunk = cpu_begin_chunk,
    .step = cpu_step,
    .decode = cpu_decode,
};
