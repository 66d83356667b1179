/*
 * model.h - the internals of ptts_model and ptts_voice (public handles of ptts.h).
 */
#ifndef PTTS_MODEL_H
#define PTTS_MODEL_H

#include <pthread.h>

#include "config.h"
#include "engine.h"
#include "ops.h"
#include "text.h"
#include "tokenizer.h"
#include "voice.h"
#include "weights.h"

struct ptts_model {
    ptts_config cfg;
    ptts_weights *w;
    ptts_tokenizer *tok;
    ptts_pool *pool;
    ptts_ctx ctx;
    ptts_text_options text;    /* the config's text rules (MODEL.md 8.1) */
    float default_temperature; /* the config's default_temperature (0.3 when absent) */
    int recommended_frames_after_eos; /* -1: none */
    const ptts_engine_ops *engine;    /* NULL: the CPU engine */
    int overlap;                      /* PTTS_OVERLAP_*: read when an engine is created */
    char *device;                     /* ptts_model_options.device (owned), NULL: pick one */
    int tensor_cores, fence_spin_us;  /* ptts_model_options: read when an engine is created */
    ptts_vk_tuning vk;                /* GPU test hooks (backend.h); zero: none */
    /* Idle engines kept for the next stream or batch: creating one allocates its caches and,
     * on a GPU, uploads the weights (0.5-1.5 s for the full model on the H200), which a
     * library creating a stream per utterance would otherwise pay every time. Keyed by
     * (ops, slots, overlap); guarded by engine_mu (streams are created from any thread). */
    struct ptts_idle_engine {
        const ptts_engine_ops *ops;
        void *eng;
        int slots, overlap;
        unsigned long age; /* idle_clock when kept */
    } idle[2];
    unsigned long idle_clock;
    pthread_mutex_t engine_mu;
    int engine_mu_ok;
};

/* An engine for `slots` streams: an idle one of the same kind when the model has one, else a new
 * one. ptts_engine_release gives it back (kept when there is room, else destroyed); failed is
 * nonzero when an operation on it failed (then it is destroyed). */
int ptts_engine_acquire(const ptts_model *m, const ptts_engine_ops *ops, int slots, void **eng,
                        ptts_error *e);
void ptts_engine_release(const ptts_model *m, const ptts_engine_ops *ops, int slots, void *eng,
                         int failed);
/* Destroy the idle engines (tests that change what a new engine reads from the environment,
 * such as PTTS_VK_STEPK, clear them so that the next stream gets a new one). */
void ptts_engine_cache_clear(const ptts_model *m);

struct ptts_voice {
    ptts_voice_state *st;
};

/* A model with synthetic pocket-fill-v1 weights of architecture `a` (tests and benchmarks at
 * full size without a checkpoint file). */
int ptts_model_create_filled(ptts_model **out, const ptts_arch *a, const char *tokenizer_path,
                             int threads, int precision, ptts_error *e);

#endif
