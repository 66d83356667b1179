/*
 * config.h - the reference's YAML model configuration (also accepts JSON, a YAML subset, e.g.
 * tests/fixtures/{tiny,full}/manifest.json whose "config" object has the same keys).
 *
 * Keys read (unknown keys are tolerated): weights_path, weights_path_without_voice_cloning,
 * pad_with_spaces_for_short_inputs, remove_semicolons, model_recommended_frames_after_eos,
 * flow_lm.insert_bos_before_voice, flow_lm.lookup_table.tokenizer_path / n_bins / dim,
 * flow_lm.transformer.{d_model, num_heads, num_layers, hidden_scale, max_period},
 * flow_lm.flow.{depth, dim}, mimi.{inner_dim, outer_dim, sample_rate, frame_rate},
 * mimi.seanet.{n_filters, dimension, ratios}, mimi.transformer.{d_model, num_heads, num_layers,
 * dim_feedforward, context}, mimi.quantizer.{dimension, output_dimension}.
 * When the document has a top-level "config" mapping (the fixtures' manifest), it is used.
 * Relative paths (not URLs: "hf://", "http://", "https://") are resolved against the folder of
 * the config file.
 */
#ifndef PTTS_CONFIG_H
#define PTTS_CONFIG_H

#include "common.h"

typedef struct ptts_config {
    char *weights_path;                        /* NULL when absent or null */
    char *weights_path_without_voice_cloning;  /* NULL when absent or null */
    char *tokenizer_path;                      /* NULL when absent or null */
    int pad_with_spaces;                       /* 0/1 */
    int remove_semicolons;                     /* 0/1 */
    int recommended_frames_after_eos;          /* -1: none */
    int insert_bos_before_voice;               /* -1: not given */
    /* Architecture numbers for cross-checks against the weights; 0 when not given. */
    int d_model, num_heads, num_layers, hidden_scale, n_bins, lookup_dim;
    int flow_depth, flow_dim;
    int mimi_inner_dim, mimi_outer_dim, seanet_n_filters, seanet_dimension;
    int seanet_ratios[3];
    int codec_d_model, codec_num_heads, codec_num_layers, codec_ffn, codec_context;
    int quantizer_dimension;
    float max_period; /* 0 when not given */
} ptts_config;

/* A config with every field at "not given" (paths NULL, ints 0 / -1 as documented). */
void ptts_config_init(ptts_config *c);
/* Parse a YAML/JSON file; malformed YAML or a wrong-typed known key -> PTTS_E_FORMAT naming the
 * file, line and key. */
int ptts_config_load(ptts_config *c, const char *path, ptts_error *e);
/* Parse from memory; relative paths are resolved against `base_dir` (NULL: kept as is). */
int ptts_config_load_memory(ptts_config *c, const char *text, size_t len, const char *name,
                            const char *base_dir, ptts_error *e);
void ptts_config_free(ptts_config *c); /* frees the strings; the struct itself is the caller's */

#endif
