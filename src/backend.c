/*
 * backend.c - the engine of a model (CPU, Vulkan, or the CPU with the codec on Vulkan), the
 * arguments an engine is created with, and the model's idle engines (see backend.h). Runs when a
 * model loads and when a stream or batch is created or freed, never per frame.
 */
#include "backend.h"

#include <stdlib.h>
#include <string.h>

#include "engine_vulkan.h"

int ptts_backend_init(ptts_backend *b, const ptts_engine_args *args, int backend, ptts_error *e) {
    ptts_engine_cache *c = &b->cache;
    b->args = *args;
    b->args.vk = NULL;
    b->args.device = NULL;
    if (args->device && *args->device && !(b->args.device = ptts_strdup(args->device)))
        return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    if (pthread_mutex_init(&c->mu, NULL))
        return ptts_fail(e, PTTS_E_NOMEM, "cannot create a mutex");
    c->mu_ok = 1;
    b->engine = &ptts_engine_cpu;
    const char *device = b->args.device;
    if (backend == PTTS_BACKEND_CPU) return 0;
    if (backend != PTTS_BACKEND_AUTO && backend != PTTS_BACKEND_VULKAN &&
        backend != PTTS_BACKEND_VULKAN_CODEC)
        return ptts_fail(e, PTTS_E_INVALID, "unknown backend %d", backend);
    if (backend == PTTS_BACKEND_AUTO && device) backend = PTTS_BACKEND_VULKAN;
    const ptts_engine_ops *vk = ptts_vulkan_engine();
    char name[256];
    int discrete = 0;
    ptts_error pe = {0};
    int rc = vk ? ptts_vulkan_probe(device, name, sizeof name, &discrete, &pe)
                : ptts_fail(&pe, PTTS_E_UNSUPPORTED, "this build has no Vulkan backend");
    if (backend == PTTS_BACKEND_VULKAN || backend == PTTS_BACKEND_VULKAN_CODEC) {
        const int codec = backend == PTTS_BACKEND_VULKAN_CODEC;
        if (rc)
            return ptts_fail(e, PTTS_E_BACKEND, "backend %s: %s", codec ? "vulkan-codec" : "vulkan",
                             pe.msg);
        b->engine = codec ? ptts_hybrid_engine() : vk;
        ptts_log(PTTS_LOG_INFO,
                 codec ? "backend: CPU, codec on Vulkan (%s)" : "backend: Vulkan on %s", name);
        return 0;
    }
    if (!rc && discrete) {
        b->engine = vk;
        ptts_log(PTTS_LOG_INFO, "backend: Vulkan on %s (discrete GPU)", name);
    } else if (!rc) {
        ptts_log(PTTS_LOG_INFO, "backend: CPU (the Vulkan device %s is no discrete GPU)", name);
    } else {
        ptts_log(PTTS_LOG_INFO, "backend: CPU (%s)", pe.msg);
    }
    return 0;
}

/* Take the idle engines out of the cache and destroy them. */
static void drop_idle(ptts_engine_cache *c) {
    struct ptts_idle_engine drop[2];
    if (c->mu_ok) pthread_mutex_lock(&c->mu);
    for (int i = 0; i < 2; i++) {
        drop[i] = c->idle[i];
        c->idle[i].eng = NULL;
    }
    if (c->mu_ok) pthread_mutex_unlock(&c->mu);
    for (int i = 0; i < 2; i++)
        if (drop[i].eng) drop[i].ops->destroy(drop[i].eng);
}

static void vk_tuning_clear(ptts_engine_cache *c) {
    free((char *)c->vk.gemm_force);
    free((char *)c->vk.tc_force);
    memset(&c->vk, 0, sizeof c->vk);
    c->vk_set = 0;
}

void ptts_backend_free(ptts_backend *b) {
    ptts_engine_cache *c = &b->cache;
    drop_idle(c);
    vk_tuning_clear(c);
    if (c->mu_ok) pthread_mutex_destroy(&c->mu);
    c->mu_ok = 0;
    free((char *)b->args.device);
    b->args.device = NULL;
}

int ptts_engine_acquire(const ptts_backend *b, const ptts_engine_ops *ops, int slots, void **eng,
                        ptts_error *e) {
    ptts_engine_cache *c = (ptts_engine_cache *)&b->cache; /* mutable, under its mutex */
    *eng = NULL;
    if (c->mu_ok) {
        pthread_mutex_lock(&c->mu);
        for (int i = 0; i < 2 && !*eng; i++)
            if (c->idle[i].eng && c->idle[i].ops == ops && c->idle[i].slots == slots) {
                *eng = c->idle[i].eng;
                c->idle[i].eng = NULL;
            }
        pthread_mutex_unlock(&c->mu);
    }
    if (*eng) return 0;
    ptts_engine_args a = b->args;
    a.vk = c->vk_set ? &c->vk : NULL;
    return ops->create(eng, &a, slots, e);
}

void ptts_engine_release(const ptts_backend *b, const ptts_engine_ops *ops, int slots, void *eng,
                         int failed) {
    ptts_engine_cache *c = (ptts_engine_cache *)&b->cache;
    if (!eng) return;
    const ptts_engine_ops *drop_ops = ops;
    if (!failed && c->mu_ok) { /* a free place, else the least recently kept one */
        pthread_mutex_lock(&c->mu);
        int at = !c->idle[0].eng ? 0 : !c->idle[1].eng ? 1 : c->idle[0].age > c->idle[1].age;
        void *old = c->idle[at].eng;
        drop_ops = c->idle[at].ops;
        c->idle[at] = (struct ptts_idle_engine){ops, eng, slots, ++c->clock};
        eng = old;
        pthread_mutex_unlock(&c->mu);
    }
    if (eng) drop_ops->destroy(eng);
}

void ptts_backend_set_vk_tuning(ptts_backend *b, const ptts_vk_tuning *t) {
    ptts_engine_cache *c = &b->cache;
    drop_idle(c);
    vk_tuning_clear(c);
    if (!t) return;
    c->vk = *t;
    /* a name that cannot be copied is dropped with the whole tuning: no half-forced engine */
    c->vk.gemm_force = t->gemm_force ? ptts_strdup(t->gemm_force) : NULL;
    c->vk.tc_force = t->tc_force ? ptts_strdup(t->tc_force) : NULL;
    c->vk_set = 1;
    if ((t->gemm_force && !c->vk.gemm_force) || (t->tc_force && !c->vk.tc_force))
        vk_tuning_clear(c);
}

void ptts_backend_set_overlap(ptts_backend *b, int overlap) {
    drop_idle(&b->cache);
    b->args.overlap = overlap;
}
