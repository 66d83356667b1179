/*
 * absent.c - compiled instead of the Vulkan backend when CMake found no Vulkan loader or glslc:
 * every entry point says so.
 */
#include "engine_vulkan.h"

const ptts_engine_ops *ptts_vulkan_engine(void) { return NULL; }

#define NOT_BUILT                                                                                  \
    "this build has no Vulkan backend (configure with the Vulkan loader headers and glslc "        \
    "installed)"

int ptts_vulkan_probe(const char *want, char *name, size_t name_size, int *discrete,
                      ptts_error *e) {
    (void)want;
    if (name && name_size) name[0] = 0;
    if (discrete) *discrete = 0;
    return ptts_fail(e, PTTS_E_UNSUPPORTED, NOT_BUILT);
}

int ptts_gpu_devices(ptts_gpu_device *out, int max, ptts_error *e) {
    (void)out;
    (void)max;
    return ptts_fail(e, PTTS_E_UNSUPPORTED, NOT_BUILT);
}

int ptts_vulkan_engine_stepk(void *eng) {
    (void)eng;
    return 0;
}

void ptts_vulkan_engine_counts(void *eng, ptts_vk_counts *out) {
    (void)eng;
    *out = (ptts_vk_counts){0};
}

long long ptts_vulkan_engine_tile_uses(void *eng, int tc, const char *name) {
    (void)eng;
    (void)tc;
    (void)name;
    return -1;
}

int ptts_vulkan_engine_tc(void *eng) {
    (void)eng;
    return 0;
}

int ptts_vulkan_engine_tc_attention(void *eng) {
    (void)eng;
    return 0;
}

int ptts_vulkan_engine_dec_attention(void *eng) {
    (void)eng;
    return 0;
}

int ptts_vulkan_flow_sample(void *eng, const float *h, const float *x0, int n, float *out,
                            ptts_error *e) {
    (void)eng;
    (void)h;
    (void)x0;
    (void)n;
    (void)out;
    return ptts_fail(e, PTTS_E_UNSUPPORTED, NOT_BUILT);
}

size_t ptts_vulkan_engine_bytes(void *eng) {
    (void)eng;
    return 0;
}

int ptts_vulkan_codec_reset(void *eng, int slot, ptts_error *e) {
    (void)eng;
    (void)slot;
    return ptts_fail(e, PTTS_E_UNSUPPORTED, NOT_BUILT);
}

int ptts_vulkan_decode_latents(void *eng, const int *slots, int n, int k, const int *counts,
                               const float *latents, float *pcm, ptts_error *e) {
    (void)eng;
    (void)slots;
    (void)n;
    (void)k;
    (void)counts;
    (void)latents;
    (void)pcm;
    return ptts_fail(e, PTTS_E_UNSUPPORTED, NOT_BUILT);
}
