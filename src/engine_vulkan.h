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
int ptts_vulkan_probe(const char *want, char *name, size_t name_size, int *discrete,
                      ptts_error *e);

/* Workgroups of the one-dispatch step (stepk.comp) of an engine instance, 0 when it is off. */
int ptts_vulkan_engine_stepk(void *eng);

/* 1 when an engine instance runs its GEMMs on tensor cores (float16 operands: the
 * reduced-precision modes, where the device has cooperative matrices), else 0. */
int ptts_vulkan_engine_tc(void *eng);

/* Codec-only use of an engine instance (the hybrid engine: backbone and flow head on the CPU,
 * the codec on the GPU): a slot's codec state made fresh, and the codec run on host latents
 * [n][k][ld] (then as the engine's decode: counts[i] frames of slot i -> pcm [n][k][1920]). */
int ptts_vulkan_codec_reset(void *eng, int slot, ptts_error *e);
int ptts_vulkan_decode_latents(void *eng, const int *slots, int n, int k, const int *counts,
                               const float *latents, float *pcm, ptts_error *e);

/* The hybrid engine's operations (engine_hybrid.c), or NULL without Vulkan. */
const ptts_engine_ops *ptts_hybrid_engine(void);

/* The device's copy bandwidth: reps copies of `bytes` between two device-local buffers in one
 * submit, timed on the host; GB/s counted as bytes read + written. A roofline for the engine's
 * memory-bound kernels (bench_vulkan --bandwidth). */
int ptts_vulkan_copy_bandwidth(size_t bytes, int reps, double *gbs, ptts_error *e);

/* Bytes of GPU buffers an engine instance holds (weights, caches, scratch, I/O). */
size_t ptts_vulkan_engine_bytes(void *eng);

#endif
