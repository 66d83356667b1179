/*
 * model.h - the internals of ptts_model and ptts_voice (public handles of ptts.h).
 */
#ifndef PTTS_MODEL_H
#define PTTS_MODEL_H

#include "backend.h"
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
    ptts_text_options text;           /* the config's text rules (MODEL.md 8.1) */
    float default_temperature;        /* the config's default_temperature (0.3 when absent) */
    int recommended_frames_after_eos; /* -1: none */
    ptts_backend be; /* the engine kind, what engines receive, the idle ones (backend.c) */
    /* ms that ptts_model_load spent on: the weights (a checkpoint: read, convert, pack; a
     * converted file: map and bind), the tokenizer, the thread pool and the backend
     * (bench/bench_startup.c prints them) */
    double load_ms_weights, load_ms_tokenizer, load_ms_finish;
};

struct ptts_voice {
    ptts_voice_state *st;
};

/* A model with synthetic pocket-fill-v1 weights of architecture `a` (tests and benchmarks at
 * full size without a checkpoint file). */
int ptts_model_create_filled(ptts_model **out, const ptts_arch *a, const char *tokenizer_path,
                             int threads, int precision, ptts_error *e);
/* The same with every value rounded to bf16 when fill_bf16 (ptts_weights_options.fill_bf16: the
 * storage of the released files, so float32 mode keeps the matrices as bf16, weights.c). */
int ptts_model_create_filled_bf16(ptts_model **out, const ptts_arch *a, const char *tokenizer_path,
                                  int threads, int precision, int fill_bf16, ptts_error *e);

/* Test entries (internal): ptts_backend_set_vk_tuning and ptts_backend_set_overlap of the
 * model's backend (see backend.h). */
void ptts_model_set_vk_tuning(ptts_model *m, const ptts_vk_tuning *t);
void ptts_model_set_overlap(ptts_model *m, int overlap);

#endif
