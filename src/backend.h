/*
 * backend.h - which engine runs a model, what it receives, and the idle engines kept for the
 * next stream or batch. The model owns one ptts_engine_cache; the generation loop acquires an
 * engine from it and releases it afterwards. Engines never see the model: ptts_engine_acquire
 * builds their ptts_engine_args from it.
 */
#ifndef PTTS_BACKEND_H
#define PTTS_BACKEND_H

#include <pthread.h>

#include "engine.h"

/* Idle engines of freed streams and batches: creating one allocates its caches and, on a GPU,
 * uploads the weights, which a library creating a stream per utterance would otherwise pay every
 * time. Keyed by (ops, slots); guarded by mu (streams are created from any thread). The tuning
 * is what new engines receive (tests only; vk_set 0: none). */
typedef struct ptts_engine_cache {
    struct ptts_idle_engine {
        const ptts_engine_ops *ops;
        void *eng;
        int slots;
        unsigned long age; /* clock when kept */
    } idle[2];
    unsigned long clock;
    ptts_vk_tuning vk; /* gemm_force and tc_force owned */
    int vk_set;
    pthread_mutex_t mu;
    int mu_ok;
} ptts_engine_cache;

/* Pick m->engine for ptts_model_options.backend (PTTS_BACKEND_*) and make the cache ready:
 * cpu; vulkan or vulkan-codec (an error when no Vulkan device works); auto: the Vulkan engine on
 * a discrete GPU or on the device m->device names, else the CPU (said at info level). */
int ptts_backend_init(ptts_model *m, int backend, ptts_error *e);
/* Destroy the idle engines and the cache (the model is being freed). */
void ptts_backend_free(ptts_model *m);

/* An engine for `slots` streams: an idle one of the same kind when the model has one, else a new
 * one. ptts_engine_release gives it back (kept when there is room, else destroyed); failed is
 * nonzero when an operation on it failed (then it is destroyed). */
int ptts_engine_acquire(const ptts_model *m, const ptts_engine_ops *ops, int slots, void **eng,
                        ptts_error *e);
void ptts_engine_release(const ptts_model *m, const ptts_engine_ops *ops, int slots, void *eng,
                         int failed);

/* Test entries (internal). Each stores the setting that new engines receive and drops the idle
 * engines, so that the next stream or batch gets an engine made with it. Call them while no
 * stream or batch of the model is being created. */
/* The GPU engine's forced paths; t NULL: none (the engine decides). */
void ptts_model_set_vk_tuning(ptts_model *m, const ptts_vk_tuning *t);
/* PTTS_OVERLAP_* for the CPU engine (the model option, changed after loading). */
void ptts_model_set_overlap(ptts_model *m, int overlap);

#endif
