/*
 * backend.h - which engine runs a model, what it receives, and the idle engines kept for the
 * next stream or batch. The model owns one ptts_backend (made at load from the model's weights,
 * kernels and options); the generation loop acquires an engine from it and releases it
 * afterwards. Engines never see the model, nor does this file: a ptts_backend holds the
 * ptts_engine_args every new engine receives.
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

/* A model's engines: the kind (always set), what new ones receive (args.device owned; args.vk
 * set from the cache when engines are made) and the idle ones. */
typedef struct ptts_backend {
    const ptts_engine_ops *engine;
    ptts_engine_args args;
    ptts_engine_cache cache;
} ptts_backend;

/* Pick b->engine for ptts_model_options.backend (PTTS_BACKEND_*), keep a copy of args (device
 * copied) and make the cache ready: cpu; vulkan or vulkan-codec (an error when no Vulkan device
 * works); auto: the Vulkan engine on a discrete GPU or on the device args->device names, else
 * the CPU (said at info level). On an error, ptts_backend_free still frees what was made. */
int ptts_backend_init(ptts_backend *b, const ptts_engine_args *args, int backend, ptts_error *e);
/* Destroy the idle engines and the cache (the model is being freed). */
void ptts_backend_free(ptts_backend *b);

/* An engine for `slots` streams: an idle one of the same kind when the model has one, else a new
 * one. ptts_engine_release gives it back (kept when there is room, else destroyed); failed is
 * nonzero when an operation on it failed (then it is destroyed). */
int ptts_engine_acquire(const ptts_backend *b, const ptts_engine_ops *ops, int slots, void **eng,
                        ptts_error *e);
void ptts_engine_release(const ptts_backend *b, const ptts_engine_ops *ops, int slots, void *eng,
                         int failed);

/* Test entries (internal). Each stores the setting that new engines receive and drops the idle
 * engines, so that the next stream or batch gets an engine made with it. Call them while no
 * stream or batch of the model is being created. */
/* The GPU engine's forced paths; t NULL: none (the engine decides). */
void ptts_backend_set_vk_tuning(ptts_backend *b, const ptts_vk_tuning *t);
/* PTTS_OVERLAP_* for the CPU engine (the model option, changed after loading). */
void ptts_backend_set_overlap(ptts_backend *b, int overlap);

#endif
