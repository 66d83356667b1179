/*
 * vk_prof.c - the device layer's two debugging reports (vk.h), written through ptts_log at
 * info level, never to a stream of the library's own:
 *  - PTTS_VK_PROFILE=1: a timestamp after every dispatch; the GPU time per pipeline (barrier
 *    included) summed over the replays of recorded command buffers (their first submit and
 *    one-shot ones, such as uploads and prompts, left out) and the 16 costliest dispatch
 *    sites, reported when the context is destroyed;
 *  - PTTS_VK_PIPE_STATS=1: the driver's statistics of every compiled pipeline (registers,
 *    spills, shared memory...) through VK_KHR_pipeline_executable_properties.
 * Query slots: PROF_PER_CB per recorded command buffer, for the last 64 recorded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_prof.h"

#include "common.h"

#define PROF_PER_CB 4096u
#define PROF_QUERIES (64u * PROF_PER_CB)

static int env_on(const char *name) {
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

int pvk_prof_stats_wanted(void) { return env_on("PTTS_VK_PIPE_STATS"); }

void pvk_prof_pipeline_stats(VkDevice dev, VkPipeline pipe, const char *name) {
    PFN_vkGetPipelineExecutablePropertiesKHR props =
        (PFN_vkGetPipelineExecutablePropertiesKHR)vkGetDeviceProcAddr(
            dev, "vkGetPipelineExecutablePropertiesKHR");
    PFN_vkGetPipelineExecutableStatisticsKHR stats =
        (PFN_vkGetPipelineExecutableStatisticsKHR)vkGetDeviceProcAddr(
            dev, "vkGetPipelineExecutableStatisticsKHR");
    if (!props || !stats) return;
    VkPipelineInfoKHR pi = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, .pipeline = pipe};
    uint32_t ne = 0;
    if (props(dev, &pi, &ne, NULL) != VK_SUCCESS) return;
    for (uint32_t x = 0; x < ne; x++) {
        VkPipelineExecutableInfoKHR ei = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR,
                                          .pipeline = pipe,
                                          .executableIndex = x};
        VkPipelineExecutableStatisticKHR st[32];
        uint32_t ns = 32;
        for (uint32_t k = 0; k < ns; k++)
            st[k] = (VkPipelineExecutableStatisticKHR){
                .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR};
        if (stats(dev, &ei, &ns, st) != VK_SUCCESS && ns == 0) continue;
        char line[1024];
        size_t len = (size_t)snprintf(line, sizeof line, "pipeline %-11s", name);
        for (uint32_t k = 0; k < ns && len < sizeof line; k++) {
            int w = 0;
            if (st[k].format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR)
                w = snprintf(line + len, sizeof line - len, " | %s %llu", st[k].name,
                             (unsigned long long)st[k].value.u64);
            else if (st[k].format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR)
                w = snprintf(line + len, sizeof line - len, " | %s %lld", st[k].name,
                             (long long)st[k].value.i64);
            if (w > 0) len += (size_t)w;
        }
        ptts_log(PTTS_LOG_INFO, "%s", line);
    }
}

void pvk_prof_init(pvk_prof *c, VkDevice dev, float timestamp_period, const char *(*name)(int pipe),
                   int n_pipes) {
    c->dev = dev;
    c->name = name;
    c->n_pipes = n_pipes < PVK_PROF_MAX_PIPES ? n_pipes : PVK_PROF_MAX_PIPES;
    if (!env_on("PTTS_VK_PROFILE") || timestamp_period <= 0) return;
    VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                .queryCount = PROF_QUERIES};
    c->pq = calloc(PROF_QUERIES, sizeof *c->pq);
    if (c->pq && vkCreateQueryPool(c->dev, &qi, NULL, &c->qp) == VK_SUCCESS) {
        c->prof = 1;
        c->ts_ns = timestamp_period;
    }
}

static struct pvk_prof_cb *prof_find(pvk_prof *c, VkCommandBuffer cb) {
    for (int i = 0; i < 64; i++)
        if (c->pcb[i].cb == cb) return &c->pcb[i];
    return NULL;
}

void pvk_prof_begin(pvk_prof *c, VkCommandBuffer cb) {
    if (!c->prof) return;
    if (c->qnext + PROF_PER_CB > PROF_QUERIES) c->qnext = 0;
    struct pvk_prof_cb *p = &c->pcb[c->pcb_next++ & 63];
    *p = (struct pvk_prof_cb){cb, c->qnext, 1, 0};
    c->qnext += PROF_PER_CB;
    vkCmdResetQueryPool(cb, c->qp, p->base, PROF_PER_CB);
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, c->qp, p->base);
}

void pvk_prof_dispatch(pvk_prof *c, VkCommandBuffer cb, int pipe, uint32_t gx, uint32_t gy) {
    struct pvk_prof_cb *p = c->prof ? prof_find(c, cb) : NULL;
    if (p && p->n < PROF_PER_CB) {
        c->pq[p->base + p->n] = (struct pvk_prof_q){0, (uint32_t)pipe, gx, gy, 0};
        vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, c->qp, p->base + p->n++);
    }
}

void pvk_prof_collect(pvk_prof *c, VkCommandBuffer cb) {
    struct pvk_prof_cb *p = c->prof ? prof_find(c, cb) : NULL;
    uint64_t t[PROF_PER_CB];
    if (p && p->subs++ > 0 && p->n > 1 &&
        vkGetQueryPoolResults(c->dev, c->qp, p->base, p->n, sizeof t, t, sizeof t[0],
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) == VK_SUCCESS) {
        c->psubmits++;
        for (uint32_t i = 1; i < p->n; i++) {
            struct pvk_prof_q *q = &c->pq[p->base + i];
            double ns = (double)(t[i] - t[i - 1]) * c->ts_ns;
            c->ptime[q->pipe] += ns;
            c->pcount[q->pipe]++;
            q->ns += ns;
            q->count++;
        }
    }
}

void pvk_prof_forget(pvk_prof *c, VkCommandBuffer cb) {
    for (int i = 0; c->prof && i < 64; i++)
        if (c->pcb[i].cb == cb) c->pcb[i].cb = VK_NULL_HANDLE;
}

static void prof_report(pvk_prof *c) {
    double total = 0;
    for (int i = 0; i < c->n_pipes; i++)
        total += c->ptime[i];
    ptts_log(PTTS_LOG_INFO, "vk profile: %llu replays, %.3f ms GPU (dispatch + barrier)",
             (unsigned long long)c->psubmits, total * 1e-6);
    for (int i = 0; i < c->n_pipes; i++)
        if (c->pcount[i])
            ptts_log(PTTS_LOG_INFO, "  %-11s %9.3f ms %5.1f%% %8llu dispatches %7.2f us each",
                     c->name(i), c->ptime[i] * 1e-6, 100.0 * c->ptime[i] / (total > 0 ? total : 1),
                     (unsigned long long)c->pcount[i], c->ptime[i] * 1e-3 / (double)c->pcount[i]);
    /* the 16 costliest dispatch sites */
    for (int r = 0; r < 16; r++) {
        uint32_t best = PROF_QUERIES;
        for (uint32_t q = 0; q < PROF_QUERIES; q++)
            if (c->pq[q].count && c->pq[q].ns >= 0 &&
                (best == PROF_QUERIES || c->pq[q].ns > c->pq[best].ns))
                best = q;
        if (best == PROF_QUERIES) break;
        struct pvk_prof_q *q = &c->pq[best];
        ptts_log(PTTS_LOG_INFO, "  site %6u %-11s grid %6u x %-6u %8.3f ms %6.1f us each", best,
                 c->name((int)q->pipe), q->gx, q->gy, q->ns * 1e-6, q->ns * 1e-3 / q->count);
        q->ns = -1;
    }
}

void pvk_prof_destroy(pvk_prof *c) {
    if (c->prof) prof_report(c);
    if (c->qp) vkDestroyQueryPool(c->dev, c->qp, NULL);
    free(c->pq);
    c->qp = VK_NULL_HANDLE;
    c->pq = NULL;
    c->prof = 0;
}
