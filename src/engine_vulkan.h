/*
 * engine_vulkan.h - the Vulkan engine (src/vulkan/) behind engine.h, and a device probe for
 * backend selection. Built when CMake finds the Vulkan loader and glslc (PTTS_VULKAN); otherwise
 * src/vulkan/absent.c answers that the backend is not built.
 */
#ifndef PTTS_ENGINE_VULKAN_H
#define PTTS_ENGINE_VULKAN_H

#include <stddef.h>

#include "engine.h"

/* The engine's operations, or NULL when the library was built without Vulkan. */
const ptts_engine_ops *ptts_vulkan_engine(void);

/* The device the engine would use for `want` (ptts_model_options.device; NULL: a discrete GPU
 * first, or PTTS_VK_DEVICE): 0 and its name / whether it is a discrete GPU, or < 0 with e
 * filled (not built, no loader, no such device). */
int ptts_vulkan_probe(const char *want, char *name, size_t name_size, int *discrete, ptts_error *e);

/* Workgroups of the one-dispatch step (stepk.comp) of an engine instance, 0 when it is off. */
int ptts_vulkan_engine_stepk(void *eng);

/* 1 when an engine instance runs its GEMMs on tensor cores (float16 operands: the
 * reduced-precision modes, where the device has cooperative matrices), else 0. */
int ptts_vulkan_engine_tc(void *eng);
/* 1 where it runs the grouped attention on tensor cores (attn_tc.comp), else 0. */
int ptts_vulkan_engine_tc_attention(void *eng);
/* 1 where it runs the one-row attention over float16 rows as attn_dec.comp, else 0. */
int ptts_vulkan_engine_dec_attention(void *eng);

/* What an engine instance ran since it was created, so that a test forcing a path
 * (ptts_vk_tuning) can check that the path was taken. */
typedef struct ptts_vk_counts {
    unsigned long long stepk_frames;   /* frames computed by the one-dispatch step */
    unsigned long long conv_copies;    /* codec convs recorded with their window copied first */
    unsigned long long paired;         /* decode + next step submitted together (step_decode) */
    unsigned long long prompts;        /* chunks begun (begin_chunk) */
    unsigned long long prompt_submits; /* submissions that ran them (several chunks each) */
    unsigned long long kv_pairs;       /* KV cache buffer pairs now (1, or per layer + 1) */
    unsigned long long kv_positions;   /* backbone positions the caches hold a slot now */
    unsigned long long kv_grows;       /* times they grew after create (reserve, begin_chunk) */
    unsigned long long codec_groups;   /* codec passes recorded for a later group of slots */
    unsigned long long kv_half;        /* 1: the backbone's KV caches hold float16 pairs */
    unsigned long long ring_half;      /* 1: the codec's rings too */
    unsigned long long attn_tc;        /* grouped attentions recorded on tensor cores (attn_tc) */
    unsigned long long attn_dec;       /* one-row attentions recorded as attn_dec.comp */
} ptts_vk_counts;
void ptts_vulkan_engine_counts(void *eng, ptts_vk_counts *out);
/* Dispatches recorded with the gemm tile `name` (tc: of the tensor-core tiles, else of the
 * register-tiled ones; the names ptts_vk_tuning takes), -1 when there is no such tile. */
long long ptts_vulkan_engine_tile_uses(void *eng, int tc, const char *name);

/* Codec-only use of an engine instance (the hybrid engine: backbone and flow head on the CPU,
 * the codec on the GPU): a slot's codec state made fresh, and the codec run on host latents
 * [n][k][ld] (then as the engine's decode: counts[i] frames of slot i -> pcm [n][k][1920]). */
int ptts_vulkan_codec_reset(void *eng, int slot, ptts_error *e);
int ptts_vulkan_decode_latents(void *eng, const int *slots, int n, int k, const int *counts,
                               const float *latents, float *pcm, ptts_error *e);

/* The hybrid engine's operations (engine_hybrid.c), or NULL without Vulkan. */
const ptts_engine_ops *ptts_hybrid_engine(void);

/* The flow head and the model's sampler alone (tests: the sampler heads against their
 * fixtures), with the engine's sampler steps: h [n][d] (backbone output after out_norm) and
 * the noise x0 [n][ld] -> out [n][ld], n at most the engine's slots. */
int ptts_vulkan_flow_sample(void *eng, const float *h, const float *x0, int n, float *out,
                            ptts_error *e);

/* Bytes of GPU buffers an engine instance holds (weights, caches, scratch, I/O). */
size_t ptts_vulkan_engine_bytes(void *eng);

#endif
