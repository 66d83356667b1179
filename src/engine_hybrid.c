/*
 * engine_hybrid.c - the codec-only GPU mode behind engine.h (--backend vulkan-codec): the
 * backbone and the flow head run on the CPU engine (batched step, one step per call), the codec
 * on the Vulkan engine from the latents the CPU produced. Where the CPU is fast enough for the
 * autoregressive part but the codec is its larger half (the codec is ~0.5 GFLOP a frame, the
 * backbone a memory-bound read of its weights), this moves the larger half off the CPU without
 * paying the GPU's per-step submit for the backbone. bench/RESULTS.md compares the three modes.
 *
 * The Vulkan engine is created whole (it also holds backbone weights and caches it never uses
 * here): simple, at the cost of GPU memory.
 */
#include <stdlib.h>
#include <string.h>

#include "engine_vulkan.h"
#include "weights.h"

typedef struct hy_engine {
    const ptts_engine_ops *vk;
    void *cpu, *gpu;
    float *lat; /* [slots][ld]: the latents of the last step call, in call order */
    int S, ld;
} hy_engine;

static void hy_destroy(void *p) {
    hy_engine *h = p;
    if (!h) return;
    if (h->cpu) ptts_engine_cpu.destroy(h->cpu);
    if (h->gpu) h->vk->destroy(h->gpu);
    free(h->lat);
    free(h);
}

static int hy_create(void **out, const ptts_engine_args *a, int slots, ptts_error *e) {
    *out = NULL;
    const ptts_engine_ops *vk = ptts_vulkan_engine();
    if (!vk) return ptts_fail(e, PTTS_E_UNSUPPORTED, "this build has no Vulkan backend");
    if (slots < 1) return ptts_fail(e, PTTS_E_INVALID, "an engine needs at least one slot");
    hy_engine *h = calloc(1, sizeof *h);
    if (!h) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    h->vk = vk;
    h->S = slots;
    h->ld = a->w->arch.ld;
    h->lat = malloc((size_t)slots * h->ld * sizeof(float));
    int rc = h->lat ? 0 : ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    if (!rc) rc = ptts_engine_cpu.create(&h->cpu, a, slots, e);
    if (!rc) rc = vk->create(&h->gpu, a, slots, e);
    if (rc) {
        hy_destroy(h);
        return rc;
    }
    *out = h;
    return 0;
}

static int hy_max_steps(void *p) {
    hy_engine *h = p;
    return ptts_engine_cpu.max_steps_per_call(h->cpu);
}

static int hy_set_sampler_steps(void *p, int steps, ptts_error *e) {
    hy_engine *h = p;
    return ptts_engine_cpu.set_sampler_steps(h->cpu, steps, e);
}

static int hy_reserve(void *p, int positions, ptts_error *e) {
    hy_engine *h = p;
    return ptts_engine_cpu.reserve(h->cpu, positions, e);
}

static int hy_begin_chunk(void *p, int slot, const ptts_voice_state *v, const int *ids, int n_ids,
                          int max_steps, ptts_error *e) {
    hy_engine *h = p;
    int rc = ptts_engine_cpu.begin_chunk(h->cpu, slot, v, ids, n_ids, max_steps, e);
    return rc ? rc : ptts_vulkan_codec_reset(h->gpu, slot, e);
}

static int hy_step(void *p, const int *slots, int n, int k, const float *noise, float *eos,
                   float *latents, ptts_error *e) {
    hy_engine *h = p;
    int rc = ptts_engine_cpu.step(h->cpu, slots, n, k, noise, eos, latents, e);
    if (!rc) memcpy(h->lat, latents, (size_t)n * k * h->ld * sizeof(float));
    return rc;
}

static int hy_decode(void *p, const int *slots, int n, int k, const int *counts, float *pcm,
                     ptts_error *e) {
    hy_engine *h = p;
    return ptts_vulkan_decode_latents(h->gpu, slots, n, k, counts, h->lat, pcm, e);
}

static const ptts_engine_ops hy_ops = {
    .name = "vulkan-codec",
    .create = hy_create,
    .destroy = hy_destroy,
    .max_steps_per_call = hy_max_steps,
    .set_sampler_steps = hy_set_sampler_steps,
    .reserve = hy_reserve,
    .begin_chunk = hy_begin_chunk,
    .step = hy_step,
    .decode = hy_decode,
};

const ptts_engine_ops *ptts_hybrid_engine(void) { return ptts_vulkan_engine() ? &hy_ops : NULL; }
