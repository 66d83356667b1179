/*
 * engine.h - the narrow interface between the generation loop (generate.c, written once) and a
 * compute backend (CPU: engine_cpu.c; GPU: vulkan/). An engine instance holds `slots`
 * independent streams (KV cache, codec state); the loop drives them:
 *
 *   reserve(positions)              (optional) caches sized for chunks up to that length
 *   begin_chunk(slot, voice, ids)   cache := voice state, prompt the chunk's ids (one batched
 *                                   pass), fresh codec state
 *   step(slots[n], k, noise)        for each listed slot, k consecutive autoregressive steps:
 *                                   latent_{s-1} -> backbone -> EOS logit, flow head -> latent_s
 *                                   (the latent stays in the engine to feed the next step)
 *   decode(slots[n], k, counts)     the codec on the first counts[i] latents of slot i's last
 *                                   step call -> PCM
 *   step_decode(...)                (optional) decode, then the next step (of those slots, or
 *                                   of the ones that go on), in one submission
 *
 * Running several steps per call (k > 1: a GPU submits several frames at once) and several slots
 * per call (batched streams read the weights once) are the engine's business; the loop applies
 * the EOS rule to the returned logits and drops frames past the stop. Layouts: noise
 * [n][k][ld], eos [n][k], latents [n][k][ld], pcm [n][k][frame_samples].
 */
#ifndef PTTS_ENGINE_H
#define PTTS_ENGINE_H

#include "ptts.h"
#include "voice.h"

struct ptts_weights;
struct ptts_ctx;

/* Test hooks of the GPU engine: they force one code path so that a test can compare it with
 * the CPU. Zero (or NULL) everywhere means "the engine decides", which is what users get; an
 * unknown name is an error at create. Set through the model's internal tuning (backend.h). */
typedef struct ptts_vk_tuning {
    int stepk;              /* persistent one-dispatch step: 0 auto, -1 off, N > 0 N workgroups */
    const char *gemm_force; /* a gemm tile name used for every linear, NULL: the tile picker */
    const char *tc_force;   /* a tensor-core tile name, NULL: the picker */
    int conv_copy;          /* ELU'd conv windows through work buffers: 1 on, else off */
    int pipe;               /* decode beside the next step: 0 auto (on), -1 apart */
    size_t kv_range; /* bytes a KV cache buffer may hold (split beyond), 0: the binding range */
    int codec_fg;    /* slot-frames a codec pass may hold (fewer: passes of slot groups), 0: 1024 */
    int kv16;    /* KV caches (backbone, codec rings) in float16: 0 auto (bf16 / int8), 1, -1 off */
    int attn_tc; /* grouped attention on tensor cores (float16 rows): 0 auto (the gemms'), 1, -1 */
    int attn_dec; /* one-row attention in flash-decoding form (float16 rows): 1 on, else off */
} ptts_vk_tuning;

/* What an engine computes with. Engines never see the ptts_model (backend.c builds this). */
typedef struct ptts_engine_args {
    const struct ptts_weights *w;
    const struct ptts_ctx *ctx; /* CPU kernels + thread pool */
    const char *device;         /* GPU index or name part; NULL: the default device */
    int overlap;                /* PTTS_OVERLAP_* (CPU: codec of frame t beside step t+1) */
    int tensor_cores;           /* GPU cooperative-matrix gemms: 0 auto, 1 on, -1 off */
    int fence_spin_us;          /* GPU: poll a fence this long before blocking; 0 default, <0 off */
    const ptts_vk_tuning *vk;   /* NULL: no test hook */
} ptts_engine_args;

typedef struct ptts_engine_ops {
    const char *name;
    int (*create)(void **eng, const ptts_engine_args *a, int slots, ptts_error *e);
    void (*destroy)(void *eng);
    /* The largest k this engine takes in one step call (1 for the CPU). */
    int (*max_steps_per_call)(void *eng);
    int (*set_sampler_steps)(void *eng, int steps, ptts_error *e);
    /* Optional (NULL: nothing to size): every slot's caches sized now for `positions` backbone
     * positions (voice + chunk ids + max_steps + 1), so that no begin_chunk within it grows
     * them (on a GPU a growth copies every slot's caches while the batch waits). */
    int (*reserve)(void *eng, int positions, ptts_error *e);
    /* max_steps: the steps the chunk may compute (max_gen_len, and the kmax - 1 that a call of
     * the batch's k may compute past it: utt_max_steps), so caches can be sized up front. */
    int (*begin_chunk)(void *eng, int slot, const ptts_voice_state *v, const int *ids, int n_ids,
                       int max_steps, ptts_error *e);
    int (*step)(void *eng, const int *slots, int n, int k, const float *noise, float *eos,
                float *latents, ptts_error *e);
    int (*decode)(void *eng, const int *slots, int n, int k, const int *counts, float *pcm,
                  ptts_error *e);
    /* Optional (NULL: the loop calls decode, then step): decode(slots, n, k, counts, pcm) of the
     * last step call, then step(next, nn, kn, noise, eos, latents), with the same results, but
     * as one submission where the two may overlap on the device (the codec of one call beside
     * the next call's backbone). next[nn]: the slots of that call in the order its outputs
     * take, a subsequence of slots (those whose utterance ends with this decode are left out);
     * the step's decode, later, is for exactly those. */
    int (*step_decode)(void *eng, const int *slots, int n, int k, const int *counts, float *pcm,
                       const int *next, int nn, int kn, const float *noise, float *eos,
                       float *latents, ptts_error *e);
    /* Optional (NULL: every operation is done when it returns): step_decode may return once
     * its work is submitted, and sync waits for it and writes pcm, eos and latents (the
     * buffers and counts stay the caller's, untouched, until then). Any other operation syncs
     * first. The host can hand out the last call's frames while the device computes. */
    int (*sync)(void *eng, ptts_error *e);
} ptts_engine_ops;

extern const ptts_engine_ops ptts_engine_cpu;
/* Frames a CPU engine instance has decoded beside the next step's backbone (the overlap of
 * ptts_engine_args.overlap) since it was created; with `paired`, only those decoded beside the
 * whole next step, flow head included (step_decode): tests check that both paths ran. */
long ptts_engine_cpu_overlapped(const void *eng, int paired);

/* Where a CPU engine instance's time went since it was created, wall seconds (bench_pipeline
 * prints them per frame beside the stages timed alone: a stage's cost inside the loop, its
 * weights evicted by the others', against its cost run alone). step: the backbone of slots not
 * computed ahead, and the flow head; decode: the codec with every thread, or the overlap
 * region, and inside that region its step task (region_step: the next step's backbone, and
 * with step_decode its flow head, region_flow of it) and its codec tasks (summed over the
 * threads that ran them); regions and sleeps: the model pool's (ptts_pool_counts). */
typedef struct ptts_cpu_times {
    double backbone, flow, codec, region, region_step, region_flow, region_codec;
    long steps, decodes, regions, sleeps;
} ptts_cpu_times;
void ptts_engine_cpu_times(const void *eng, ptts_cpu_times *out);

#endif
