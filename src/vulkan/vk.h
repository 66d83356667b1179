/*
 * vk.h - the Vulkan compute infrastructure of the GPU backend: instance and device selection
 * (discrete first; PTTS_VK_DEVICE=N picks the N-th device), one descriptor-set layout shared by
 * every pipeline (six storage buffers: weights, arena, K cache, V cache, integers, host I/O;
 * PVK_KV_SETS sets of it that differ in the cache buffers they bind),
 * one 128-byte push-constant range, the compute pipelines built from SPIR-V embedded at build
 * time (glslc), buffers allocated up front, and a command recorder (dispatch + full barrier).
 */
#ifndef PTTS_VK_H
#define PTTS_VK_H

#include <stddef.h>
#include <stdint.h>
#include <vulkan/vulkan.h>

#include "common.h"
#include "vk_prof.h"

/* The compute pipelines, one row each: X(enum suffix, shaders/<name>.comp, optional). An
 * optional pipeline is left NULL where the device cannot run it: stepk512 needs 512 invocations
 * and their shared memory; the tensor-core tiles need pvk_ctx.coop: gemm_tc_* (128 / 64 / 32
 * square rows x outputs) and gemm_tch_* (float16 weight copies: 64 x 128, 128 x 64 and 128 x
 * 32), from GEMM_TC_L to GEMM_TCH_Q; and attn_tc, attn_group's attention on tensor cores;
 * attn_dec needs subgroup shuffles in groups of 8 (pvk_ctx.shuffle8). */
#define PVK_PIPELINES(X)                                                                           \
    X(LINEAR, linear, 0)                                                                           \
    X(GEMM, gemm, 0)                                                                               \
    X(LAYERNORM, layernorm, 0)                                                                     \
    X(ROWOP, rowop, 0)                                                                             \
    X(ROPE_KV, rope_kv, 0)                                                                         \
    X(ATTENTION, attention, 0)                                                                     \
    X(UPSAMPLE, upsample, 0)                                                                       \
    X(ADVANCE, advance, 0)                                                                         \
    X(MGEMM, mgemm, 0)                                                                             \
    X(SKINNY, skinny, 0)                                                                           \
    X(STEPK, stepk, 0)                                                                             \
    X(ATTN_GROUP, attn_group, 0)                                                                   \
    X(GEMM_L, gemm_l, 0)                                                                           \
    X(GEMM_R64, gemm_r64, 0)                                                                       \
    X(GEMM_R32, gemm_r32, 0)                                                                       \
    X(STEPK512, stepk512, 1)                                                                       \
    X(GEMM_TC_L, gemm_tc_l, 1)                                                                     \
    X(GEMM_TC_M, gemm_tc_m, 1)                                                                     \
    X(GEMM_TC_S, gemm_tc_s, 1)                                                                     \
    X(GEMM_TCH_W, gemm_tch_w, 1)                                                                   \
    X(GEMM_TCH_T, gemm_tch_t, 1)                                                                   \
    X(GEMM_TCH_Q, gemm_tch_q, 1)                                                                   \
    X(ATTN_TC, attn_tc, 1)                                                                         \
    X(ATTN_DEC, attn_dec, 1)

enum {
#define PVK_ENUM_(id, name, opt) PVK_##id,
    PVK_PIPELINES(PVK_ENUM_)
#undef PVK_ENUM_
        PVK_N_PIPELINES
};

/* OR'd into pvk_dispatch's pipeline: its variant with specialization constant 0 (XACT in
 * shaders/linear_pc.glsl) = 3, ELU on every X value loaded; the linear kernels only. Made on
 * first use (most are never used); a failure shows at pvk_cmd_end. */
#define PVK_XELU 0x100

/* Descriptor bindings (set 0), as in shaders/common.glsl. */
enum { PVK_B_WEIGHTS, PVK_B_ARENA, PVK_B_KC, PVK_B_VC, PVK_B_INTS, PVK_B_IO, PVK_N_BINDINGS };
/* Descriptor sets, alike but for the K and V cache bindings: set i binds the i-th pair of cache
 * buffers (pvk_bind_kv), so caches larger than one binding's range are split over buffers
 * and a dispatch sees the pair it needs (pvk_kv_window). */
#define PVK_KV_SETS 16

typedef struct pvk_buffer {
    VkBuffer buf;
    VkDeviceMemory mem;
    VkDeviceSize size;
    void *map; /* host-visible buffers: persistently mapped */
} pvk_buffer;

typedef struct pvk_ctx {
    VkInstance instance;
    VkPhysicalDevice phys;
    VkPhysicalDeviceProperties props;
    VkPhysicalDeviceMemoryProperties mem_props;
    VkDevice dev;
    VkQueue queue;
    /* a second queue (VK_NULL_HANDLE: none) of another compute family qfamily2 (UINT32_MAX:
     * none), with its own command pool pool2 (command buffers for it: pvk_cmd_begin_q(c, 1)) */
    VkQueue queue2;
    uint32_t qfamily2;
    VkCommandPool pool2;
    VkFence fence2;
    /* pvk_submit_pair's submission in flight: its command buffers (b: none, or on the
     * second queue when there is one) */
    VkCommandBuffer fly_a, fly_b;
    int spin_us; /* poll a fence this long before a blocking wait (0 after pvk_create: the
                  * engine sets it from ptts_engine_args.fence_spin_us) */
    uint32_t qfamily;
    VkCommandPool pool;
    VkFence fence;
    VkDescriptorSetLayout dsl;
    VkPipelineLayout layout;
    VkDescriptorPool dpool;
    VkDescriptorSet set[PVK_KV_SETS];
    int kvset, bound_kvset; /* the set the next dispatch binds, the one bound */
    VkPipeline pipe[PVK_N_PIPELINES];
    VkPipeline pipe_x[PVK_N_PIPELINES]; /* PVK_XELU variants: pvk_make_xelu, else on first use */
    int xfail;                          /* one could not be made */
    int skip_barrier;                   /* the next pvk_dispatch records no barrier after itself */
    /* The weights binding is a dynamic storage buffer: a window of wrange bytes (the device's
     * maxStorageBufferRange, 128 MiB on lavapipe, the whole buffer on large GPUs) at byte
     * offset wbase, moved per dispatch (pvk_weights_window); shaders index it relative to
     * wbase. wfail: a dispatch needed more than one window (pvk_cmd_end reports it). */
    VkDeviceSize wsize, wrange, wbase, bound_wbase;
    int wfail;
    int sm_count; /* streaming multiprocessors (VK_NV_shader_sm_builtins), 0 when unknown */
    /* VK_NV_cooperative_matrix with 16 x 16 x 16 float16 products into float32 sums in a
     * 32-invocation subgroup, and the float16 arithmetic and memory model its shaders need:
     * the PVK_GEMM_TC_* and PVK_GEMM_TCH_* pipelines exist. */
    int coop;
    /* subgroups of 8 to 128 invocations, a power of two, with shuffles in compute shaders
     * (attn_dec.comp's groups of 8): the PVK_ATTN_DEC pipeline exists */
    int shuffle8;
    int pipe_stats; /* PTTS_VK_PIPE_STATS: pipelines created with their statistics */
    pvk_prof pf;    /* PTTS_VK_PROFILE (vk_prof.h) */
} pvk_ctx;

/* One Vulkan device as seen by a probe. */
typedef struct pvk_device_info {
    char name[256];
    int discrete;              /* 1: discrete GPU, 0: integrated / virtual / CPU (lavapipe) */
    int type;                  /* VkPhysicalDeviceType */
    unsigned long long memory; /* bytes of its largest device-local heap */
} pvk_device_info;
#define PVK_MAX_DEVICES 16

/* Enumerate devices (at most `max`); returns the count, or < 0 (e filled) without a loader or
 * devices. */
int pvk_probe(pvk_device_info *out, int max, ptts_error *e);
/* The device index to use (< 0 with e filled when there is none): `want` names it, by its index
 * or a part of its name in any case ("auto", NULL or "" pick); PTTS_VK_DEVICE stands in when
 * want is NULL or "". Picking: the first discrete GPU, else the first integrated, else
 * device 0. */
int pvk_pick(const pvk_device_info *d, int n, const char *want, ptts_error *e);
/* "discrete GPU", "integrated GPU", "virtual GPU", "CPU" or "other". */
const char *pvk_type_name(int type);

/* A context on the device pvk_pick chooses for `want`. */
int pvk_create(pvk_ctx *c, const char *want, ptts_error *e);
void pvk_destroy(pvk_ctx *c);

/* host: host-visible, coherent, mapped (else device-local). */
int pvk_buffer_create(pvk_ctx *c, pvk_buffer *b, VkDeviceSize size, int host, ptts_error *e);
/* windowed: may exceed the storage buffer range (bound through the moving weights window). */
int pvk_buffer_create_ex(pvk_ctx *c, pvk_buffer *b, VkDeviceSize size, int host, int windowed,
                         ptts_error *e);
void pvk_buffer_destroy(pvk_ctx *c, pvk_buffer *b);
/* Place the weights window for the following dispatches so that bytes [lo, hi) of the weights
 * buffer are visible; returns the window's base (bytes; shaders see offset - base). */
VkDeviceSize pvk_weights_window(pvk_ctx *c, VkDeviceSize lo, VkDeviceSize hi);
/* Point a binding of every descriptor set at a buffer (the caches: pvk_bind_kv). */
void pvk_bind(pvk_ctx *c, int binding, const pvk_buffer *b);
/* Set i < n binds k[i] and v[i] as the K and V caches, the sets from n on k[0] and v[0]
 * (n <= PVK_KV_SETS). */
void pvk_bind_kv(pvk_ctx *c, int n, const pvk_buffer *k, const pvk_buffer *v);
/* The following dispatches of the recording see cache pair i (pvk_cmd_begin: pair 0). */
void pvk_kv_window(pvk_ctx *c, int i);

VkCommandBuffer pvk_cmd_begin(pvk_ctx *c, ptts_error *e);
int pvk_cmd_end(pvk_ctx *c, VkCommandBuffer cb, ptts_error *e);
/* Submit and wait for completion. */
int pvk_submit_wait(pvk_ctx *c, VkCommandBuffer cb, ptts_error *e);
/* q = 1: for / on the second queue (the first where there is none) */
VkCommandBuffer pvk_cmd_begin_q(pvk_ctx *c, int q, ptts_error *e);
int pvk_submit_wait_q(pvk_ctx *c, VkCommandBuffer cb, int q, ptts_error *e);
void pvk_cmd_free_q(pvk_ctx *c, VkCommandBuffer cb, int q);
/* Submit a (recorded for the first queue) and b (for the second: pvk_cmd_begin_q(c, 1);
 * VK_NULL_HANDLE: a alone) with nothing ordering them (they must share no buffer region one of
 * them writes): on two queues where the device has them, so they can run side by side, else
 * in one submission. Returns once submitted; pvk_wait_pair waits for both (0 at once when
 * nothing is in flight). Nothing else may be submitted in between (the fences are shared). */
int pvk_submit_pair(pvk_ctx *c, VkCommandBuffer a, VkCommandBuffer b, ptts_error *e);
int pvk_wait_pair(pvk_ctx *c, ptts_error *e);
void pvk_cmd_free(pvk_ctx *c, VkCommandBuffer cb);

/* Record one dispatch (push constants `pc` of `bytes`) followed by a full compute barrier. */
void pvk_dispatch(pvk_ctx *c, VkCommandBuffer cb, int pipe, const void *pc, uint32_t bytes,
                  uint32_t gx, uint32_t gy, uint32_t gz);
/* The next dispatch is independent of the one after it (neither reads what the other writes):
 * it gets no barrier of its own (the following one's barrier covers both). */
void pvk_skip_barrier(pvk_ctx *c);
/* The PVK_XELU variants of the linear kernels (the tensor-core tiles among them) made now,
 * instead of on first use inside a recording. */
int pvk_make_xelu(pvk_ctx *c, ptts_error *e);
/* Dispatch `items` invocations of a 256-wide 1-D shader as a 2-D grid (shaders flatten it). */
void pvk_dispatch_flat(pvk_ctx *c, VkCommandBuffer cb, int pipe, const void *pc, uint32_t bytes,
                       uint64_t items);
/* Fill bytes of a buffer with a 32-bit value inside a recording, followed by a barrier. */
void pvk_fill(VkCommandBuffer cb, const pvk_buffer *dst, VkDeviceSize off, VkDeviceSize bytes,
              uint32_t value);
/* Copy between buffers inside a recording, followed by a barrier. */
void pvk_copy(VkCommandBuffer cb, const pvk_buffer *src, VkDeviceSize so, const pvk_buffer *dst,
              VkDeviceSize dof, VkDeviceSize bytes);

/* The pipeline's shader name (vk.h's table). */
const char *pvk_pipe_name(int pipe);

#endif
