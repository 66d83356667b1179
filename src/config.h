/*
 * config.h - the reference's YAML model configuration, 3.3 schema (MODEL.md 10.2). JSON is
 * accepted too (a YAML subset), e.g. tests/fixtures/{tiny,full}/manifest.json, whose "config"
 * mapping holds the same keys.
 *
 * Every mapping is strict, as in the reference: an unknown key anywhere is an error naming its
 * full path ("flow_lm.flow.typ: unknown key"), and so are a missing required key and a value of
 * the wrong type. The key table in config.c is the schema. Relative paths (not URLs) are
 * resolved against the folder of the config file.
 */
#ifndef PTTS_CONFIG_H
#define PTTS_CONFIG_H

#include "common.h"
#include "text.h"

/* The sampler heads of MODEL.md section 5: lsd x += flow(h, s, t, x)/N; flow_matching
 * x += flow(h, t, x)/N; drifting latent = flow(h, x0), once. */
enum { PTTS_FLOW_LSD = 0, PTTS_FLOW_MATCHING = 1, PTTS_FLOW_DRIFTING = 2 };

#define PTTS_CONFIG_MAX_RATIOS 8

typedef struct ptts_config {
    /* top level */
    char *weights_path;                       /* NULL when null */
    char *weights_path_without_voice_cloning; /* NULL when null */
    ptts_text_options text; /* the text rules; replace_from/to point into replace[] below */
    int recommended_frames_after_eos; /* model_recommended_frames_after_eos; -1: null */
    float default_temperature;        /* 0.3 when absent */
    /* flow_lm */
    char *flow_lm_dtype;
    int flow_type;            /* PTTS_FLOW_* of weights.h, from flow.type (default lsd) */
    int flow_dim, flow_depth; /* flow.dim (fd), flow.depth (res blocks) */
    int d_model, num_heads, num_layers, hidden_scale; /* transformer; ffn = d_model*hidden_scale */
    float max_period;                                 /* transformer.max_period */
    int lookup_dim, n_bins;                           /* lookup_table.dim (= d_model), n_bins */
    char *tokenizer_kind;        /* lookup_table.tokenizer ("tokenizers", "sentencepiece", ...) */
    char *tokenizer_path;        /* lookup_table.tokenizer_path */
    char *flow_lm_weights_path;  /* flow_lm.weights_path; NULL when null (with mimi's, or none) */
    int insert_bos_before_voice; /* 0/1, default 0 */
    /* mimi */
    char *mimi_dtype;
    int sample_rate, channels;
    float frame_rate;
    int seanet_dimension, seanet_channels, seanet_n_filters, seanet_n_residual_layers;
    int seanet_ratios[PTTS_CONFIG_MAX_RATIOS], n_seanet_ratios;
    int seanet_kernel_size, seanet_residual_kernel_size, seanet_last_kernel_size;
    int seanet_dilation_base, seanet_compress;
    char *seanet_pad_mode;
    int codec_d_model, codec_input_dimension, codec_num_heads, codec_num_layers;
    int codec_output_dimensions[PTTS_CONFIG_MAX_RATIOS], n_codec_output_dimensions;
    float codec_layer_scale, codec_max_period; /* max_period default 10000 */
    int codec_context, codec_ffn;              /* context (frames), dim_feedforward */
    int quantizer_dimension, quantizer_output_dimension;
    char *mimi_weights_path; /* mimi.weights_path; NULL when null */
    int mimi_inner_dim;      /* the speaker projection width: inner_dim, else seanet.dimension */
    int mimi_outer_dim;      /* -1: null */
    /* replace_characters, owned: n pairs of malloc'd UTF-8 strings */
    char **replace_from, **replace_to;
} ptts_config;

/* A config with the schema's defaults and every required value unset (0 / NULL). */
void ptts_config_init(ptts_config *c);
/* Parse a YAML/JSON file (at most 256 KiB, UTF-8). Errors are PTTS_E_FORMAT naming the file,
 * the line and the key path; PTTS_E_IO when it cannot be read. */
int ptts_config_load(ptts_config *c, const char *path, ptts_error *e);
/* Parse the file at `path`, named `name` in messages (NULL: the path), with relative paths
 * resolved against `base_dir` (NULL: kept as is): for a local copy of a config downloaded
 * from a URL, whose paths are relative to that URL. */
int ptts_config_load_file(ptts_config *c, const char *path, const char *name, const char *base_dir,
                          ptts_error *e);
/* Parse from memory; relative paths are resolved against `base_dir` (NULL: kept as is). */
int ptts_config_load_memory(ptts_config *c, const char *text, size_t len, const char *name,
                            const char *base_dir, ptts_error *e);
void ptts_config_free(ptts_config *c); /* frees the strings; the struct itself is the caller's */

#endif
