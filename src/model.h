/*
 * model.h - the internals of ptts_model and ptts_voice (public handles of ptts.h).
 */
#ifndef PTTS_MODEL_H
#define PTTS_MODEL_H

#include "config.h"
#include "engine.h"
#include "ops.h"
#include "tokenizer.h"
#include "voice.h"
#include "weights.h"

struct ptts_model {
    ptts_config cfg;
    ptts_weights *w;
    ptts_tokenizer *tok;
    ptts_pool *pool;
    ptts_ctx ctx;
    int pad_with_spaces, remove_semicolons;
    int recommended_frames_after_eos; /* -1: none */
    const ptts_engine_ops *engine;    /* NULL: the CPU engine */
    int overlap;                      /* PTTS_OVERLAP_*: read when an engine is created */
};

struct ptts_voice {
    ptts_voice_state *st;
};

/* A model with synthetic pocket-fill-v1 weights of architecture `a` (tests and benchmarks at
 * full size without a checkpoint file). */
int ptts_model_create_filled(ptts_model **out, const ptts_arch *a, const char *tokenizer_path,
                             int threads, int precision, ptts_error *e);

#endif
