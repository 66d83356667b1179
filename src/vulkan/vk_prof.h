/*
 * vk_prof.h - the device layer's debugging reports (vk_prof.c), kept apart from the device
 * struct so that the profiler depends on nothing of vk.c: the device, the pipelines' names and
 * their count come in at init. Active only with PTTS_VK_PROFILE=1 / PTTS_VK_PIPE_STATS=1
 * (README, "Environment variables"); reported through ptts_log.
 */
#ifndef PTTS_VK_PROF_H
#define PTTS_VK_PROF_H

#include <stdint.h>
#include <vulkan/vulkan.h>

#define PVK_PROF_MAX_PIPES 64

/* prof: on; qp holds a timestamp after every dispatch, ts_ns a tick in ns, qnext the next free
 * query, pcb the last 64 recorded command buffers' query ranges, pq [queries] the dispatch each
 * query ends and its summed time, ptime / pcount per pipeline. */
typedef struct pvk_prof {
    VkDevice dev;
    const char *(*name)(int pipe); /* a pipeline's name, for the report */
    int n_pipes;                   /* <= PVK_PROF_MAX_PIPES */
    int prof;
    VkQueryPool qp;
    double ts_ns;
    uint32_t qnext;
    struct pvk_prof_cb {
        VkCommandBuffer cb;
        uint32_t base, n, subs;
    } pcb[64];
    int pcb_next;
    struct pvk_prof_q {
        double ns;
        uint32_t pipe, gx, gy, count;
    } * pq; /* per query slot: the dispatch that ends there and its summed time */
    double ptime[PVK_PROF_MAX_PIPES];
    uint64_t pcount[PVK_PROF_MAX_PIPES], psubmits;
} pvk_prof;

/* PTTS_VK_PIPE_STATS asks for the compiler statistics of every pipeline (at creation). */
int pvk_prof_stats_wanted(void);
void pvk_prof_pipeline_stats(VkDevice dev, VkPipeline pipe, const char *name);
/* PTTS_VK_PROFILE: set up here (a no-op without it), recorded by the begin / dispatch hooks,
 * read back after each submit (collect) and reported by destroy. */
void pvk_prof_init(pvk_prof *p, VkDevice dev, float timestamp_period, const char *(*name)(int pipe),
                   int n_pipes);
void pvk_prof_begin(pvk_prof *p, VkCommandBuffer cb);
void pvk_prof_dispatch(pvk_prof *p, VkCommandBuffer cb, int pipe, uint32_t gx, uint32_t gy);
void pvk_prof_collect(pvk_prof *p, VkCommandBuffer cb);
void pvk_prof_forget(pvk_prof *p, VkCommandBuffer cb);
void pvk_prof_destroy(pvk_prof *p);

#endif
