/*
 * model.c - loading a model: config, weights, tokenizer, thread pool, then its engine
 * (backend.c). Everything here happens once per model, never per frame.
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

#include "download.h"
#include "hub.h"
#include "packed_file.h"

ptts_model_options ptts_model_options_default(void) {
    ptts_model_options o;
    memset(&o, 0, sizeof o);
    return o;
}

/* Numbers the config states that the weights contradict. */
static int check_config(const ptts_config *c, const ptts_arch *a, const char *cfg_path,
                        ptts_error *e) {
#define CHK(cond, what, cv, wv)                                                                    \
    if (cond)                                                                                      \
        return ptts_fail(e, PTTS_E_MODEL, "%s says %s = %d but the weights have %d", cfg_path,     \
                         what, (int)(cv), (int)(wv));
    CHK(c->d_model && c->d_model != a->d, "flow_lm.transformer.d_model", c->d_model, a->d);
    CHK(c->num_layers && c->num_layers != a->layers, "flow_lm.transformer.num_layers",
        c->num_layers, a->layers);
    CHK(c->n_bins && c->n_bins != a->nb, "flow_lm.lookup_table.n_bins", c->n_bins, a->nb);
    CHK(c->flow_dim && c->flow_dim != a->fd, "flow_lm.flow.dim", c->flow_dim, a->fd);
    CHK(c->flow_depth && c->flow_depth != a->flow_depth, "flow_lm.flow.depth", c->flow_depth,
        a->flow_depth);
    CHK(c->insert_bos_before_voice >= 0 && c->insert_bos_before_voice != a->has_bos_before_voice,
        "flow_lm.insert_bos_before_voice", c->insert_bos_before_voice, a->has_bos_before_voice);
    CHK(c->codec_d_model && c->codec_d_model != a->C, "mimi.transformer.d_model", c->codec_d_model,
        a->C);
    CHK(c->seanet_n_filters && c->seanet_n_filters != a->nf, "mimi.seanet.n_filters",
        c->seanet_n_filters, a->nf);
    CHK(c->quantizer_dimension && c->quantizer_dimension != a->ld, "mimi.quantizer.dimension",
        c->quantizer_dimension, a->ld);
#undef CHK
    /* the sampler type must match the time embedders the weights hold (MODEL.md 2) */
    return ptts_arch_check_flow_type(a, c->flow_type, cfg_path, e);
}

static ptts_wmode wmode_of(int precision) {
    return precision == PTTS_PRECISION_BF16   ? PTTS_WMODE_BF16
           : precision == PTTS_PRECISION_INT8 ? PTTS_WMODE_INT8
                                              : PTTS_WMODE_F32;
}

/* The frame-size contract of ptts.h: ptts_stream_next writes one frame into a caller buffer of
 * PTTS_FRAME_SAMPLES samples, and the frame is 16 * the product of the decoder's ratios. */
static int check_frame(const ptts_arch *a, const char *path, ptts_error *e) {
    if (a->frame_samples == PTTS_FRAME_SAMPLES) return 0;
    return ptts_fail(e, PTTS_E_UNSUPPORTED,
                     "%s: a frame of this codec is %d samples (16 x upsampling ratios %d x %d x "
                     "%d), the API's is %d (16 x 6 x 5 x 4)",
                     path, a->frame_samples, a->ratios[0], a->ratios[1], a->ratios[2],
                     PTTS_FRAME_SAMPLES);
}

/* The pool, kernels and text rules, then the backend with the model options' engine settings
 * (o NULL: the defaults). */
static int finish_model(ptts_model *m, int threads, int backend, const ptts_model_options *o,
                        ptts_error *e) {
    m->pool = ptts_pool_create(threads);
    if (!m->pool) return ptts_fail(e, PTTS_E_NOMEM, "cannot start %d threads", threads);
    m->ctx.k = ptts_kernels_best();
    m->ctx.pool = m->pool;
    m->text = m->cfg.text;
    m->default_temperature = m->cfg.default_temperature;
    m->recommended_frames_after_eos = m->cfg.recommended_frames_after_eos;
    const ptts_engine_args a = {
        .w = m->w,
        .ctx = &m->ctx,
        .device = o ? o->device : NULL,
        .overlap = o ? o->overlap : 0,
        .tensor_cores = o ? o->tensor_cores : 0,
        .fence_spin_us = o ? o->fence_spin_us : 0,
    };
    return ptts_backend_init(&m->be, &a, backend, e);
}

void ptts_model_set_vk_tuning(ptts_model *m, const ptts_vk_tuning *t) {
    ptts_backend_set_vk_tuning(&m->be, t);
}

void ptts_model_set_overlap(ptts_model *m, int overlap) {
    ptts_backend_set_overlap(&m->be, overlap);
}

/* The weights, tokenizer and config of the options as local files (downloaded when they are
 * URLs), in order of precedence: explicit paths, then the config's, then the language's. */
typedef struct model_files {
    char *config, *weights, *tokenizer;
} model_files;

static void model_files_free(model_files *f) {
    free(f->config);
    free(f->weights);
    free(f->tokenizer);
}

static int resolve_files(model_files *f, ptts_model *m, const ptts_model_options *o,
                         const ptts_language *lang, int need_tokenizer, ptts_error *e) {
    int rc;
    if (o->config_path) { /* a local path or a URL (--config URL): fetched into the cache, its
                           * relative paths resolved against its own location */
        if ((rc = ptts_config_fetch(&m->cfg, o->config_path, &f->config, e))) return rc;
    }
    if (o->weights_path) {
        rc = ptts_fetch(&f->weights, o->weights_path, e);
    } else if (m->cfg.weights_path || m->cfg.weights_path_without_voice_cloning) {
        rc = m->cfg.weights_path
                 ? ptts_hub_fetch_weights(&f->weights, m->cfg.weights_path,
                                          m->cfg.weights_path_without_voice_cloning, NULL, e)
                 : ptts_fetch(&f->weights, m->cfg.weights_path_without_voice_cloning, e);
    } else if (lang) {
        char *tok = NULL;
        rc = ptts_language_fetch(lang->name, &f->weights, &tok, NULL, e);
        if (!rc && !o->tokenizer_path && !m->cfg.tokenizer_path)
            f->tokenizer = tok;
        else
            free(tok);
    } else {
        return ptts_fail(e, PTTS_E_INVALID,
                         "no weights: give a language, a weights path or a "
                         "config with weights_path");
    }
    if (rc) return rc;
    if (f->tokenizer || !need_tokenizer) return 0;
    const char *tp = o->tokenizer_path ? o->tokenizer_path : m->cfg.tokenizer_path;
    if (!tp && lang) {
        char *w = NULL;
        rc = ptts_language_fetch(lang->name, &w, &f->tokenizer, NULL, e);
        free(w);
        return rc;
    }
    if (!tp)
        return ptts_fail(e, PTTS_E_INVALID,
                         "no tokenizer: give a tokenizer path, a language or "
                         "a config with flow_lm.lookup_table.tokenizer_path");
    return ptts_fetch(&f->tokenizer, tp, e);
}

/* The part of a load that ptts_weights_convert shares: the model's files (the tokenizer's too
 * when need_tokenizer), its config and its weights (timed in load_ms_weights). *mp is set,
 * complete or partial, whatever happens (the caller frees it). */
static int load_weights(ptts_model **mp, model_files *f, const ptts_model_options *opt,
                        int need_tokenizer, ptts_error *e) {
    *mp = NULL;
    ptts_model_options o = opt ? *opt : ptts_model_options_default();
    const ptts_language *lang = NULL;
    if (o.language) {
        if (!(lang = ptts_language_find(o.language))) {
            char list[512] = "";
            for (int i = 0; i < ptts_language_count(); i++) {
                strcat(list, i ? ", " : "");
                strcat(list, ptts_language_at(i)->name);
            }
            return ptts_fail(e, PTTS_E_INVALID, "unknown language '%s' (languages: %s)", o.language,
                             list);
        }
    } else if (!o.config_path && !o.weights_path && !o.tokenizer_path) {
        lang = ptts_language_find("english"); /* the reference's default model */
    }
    ptts_model *m = calloc(1, sizeof *m);
    if (!m) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    *mp = m;
    ptts_config_init(&m->cfg);
    int rc = resolve_files(f, m, &o, lang, need_tokenizer, e);
    if (rc) return rc;
    /* the language's packaged config (text rules, defaults); a config states its own */
    if (lang && !o.config_path && (rc = ptts_language_config(lang, &m->cfg, e))) return rc;
    ptts_weights_options wo = {0};
    wo.mode = wmode_of(o.precision);
    wo.heads = m->cfg.num_heads;
    wo.codec_heads = m->cfg.codec_num_heads;
    double t0 = ptts_now();
    /* a file written by `pocket-tts convert` is mapped, with nothing to convert or pack */
    rc = ptts_packed_is(f->weights) ? ptts_packed_load(&m->w, f->weights, &wo, e)
                                    : ptts_weights_load(&m->w, f->weights, &wo, e);
    if (rc) return rc;
    m->load_ms_weights = (ptts_now() - t0) * 1e3;
    if ((rc = check_frame(&m->w->arch, f->weights, e))) return rc;
    if (o.config_path && (rc = check_config(&m->cfg, &m->w->arch, o.config_path, e))) return rc;
    return 0;
}

int ptts_weights_convert(const ptts_model_options *opt, const char *out, ptts_error *e) {
    if (!out) return ptts_fail(e, PTTS_E_INVALID, "convert: no output path");
    ptts_model_options o = opt ? *opt : ptts_model_options_default();
    if (o.precision < PTTS_PRECISION_F32 || o.precision > PTTS_PRECISION_INT8)
        return ptts_fail(e, PTTS_E_INVALID, "unknown precision %d", o.precision);
    ptts_model *m;
    model_files f = {0};
    int rc = load_weights(&m, &f, &o, 0, e);
    if (!rc && m->w->map)
        rc = ptts_fail(e, PTTS_E_INVALID, "%s is already a converted file; convert the checkpoint",
                       f.weights);
    if (!rc) rc = ptts_packed_write(m->w, wmode_of(o.precision), f.weights, out, e);
    model_files_free(&f);
    ptts_model_free(m);
    return rc;
}

int ptts_model_load(ptts_model **out, const ptts_model_options *opt, ptts_error *e) {
    *out = NULL;
    ptts_model_options o = opt ? *opt : ptts_model_options_default();
    if (o.overlap < PTTS_OVERLAP_AUTO || o.overlap > PTTS_OVERLAP_OFF)
        return ptts_fail(e, PTTS_E_INVALID, "unknown overlap mode %d", o.overlap);
    if (o.tensor_cores < -1 || o.tensor_cores > 1)
        return ptts_fail(e, PTTS_E_INVALID, "tensor_cores is 0 (auto), 1 (on) or -1 (off), not %d",
                         o.tensor_cores);
    ptts_model *m;
    model_files f = {0};
    int rc = load_weights(&m, &f, &o, 1, e);
    if (rc) goto fail;
    double t1 = ptts_now();
    /* the backend by the config's lookup_table.tokenizer kind, else by the file's suffix
     * (MODEL.md 9.1); with a config the vocabulary must be exactly n_bins */
    if ((rc = ptts_tokenizer_load_kind(&m->tok, f.tokenizer, m->cfg.tokenizer_kind, e))) goto fail;
    double t2 = ptts_now();
    m->load_ms_tokenizer = (t2 - t1) * 1e3;
    int vocab = ptts_tokenizer_vocab_size(m->tok);
    if (vocab > m->w->arch.nb || (o.config_path && vocab != m->w->arch.nb)) {
        rc = ptts_fail(e, PTTS_E_MODEL, "%s has %d pieces but the model's lookup table has %d",
                       f.tokenizer, vocab, m->w->arch.nb);
        goto fail;
    }
    if ((rc = finish_model(m, o.threads, o.backend, &o, e))) goto fail;
    m->load_ms_finish = (ptts_now() - t2) * 1e3;
    model_files_free(&f);
    *out = m;
    return 0;
fail:
    model_files_free(&f);
    ptts_model_free(m);
    return rc;
}

int ptts_model_create_filled(ptts_model **out, const ptts_arch *a, const char *tokenizer_path,
                             int threads, int precision, ptts_error *e) {
    return ptts_model_create_filled_bf16(out, a, tokenizer_path, threads, precision, 0, e);
}

int ptts_model_create_filled_bf16(ptts_model **out, const ptts_arch *a, const char *tokenizer_path,
                                  int threads, int precision, int fill_bf16, ptts_error *e) {
    *out = NULL;
    ptts_model *m = calloc(1, sizeof *m);
    if (!m) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    ptts_config_init(&m->cfg);
    ptts_weights_options wo = {.mode = wmode_of(precision), .fill_bf16 = fill_bf16};
    int rc = ptts_weights_fill(&m->w, a, &wo, e);
    if (!rc) rc = check_frame(&m->w->arch, "filled weights", e);
    if (!rc) rc = ptts_tokenizer_load(&m->tok, tokenizer_path, e);
    if (!rc) rc = finish_model(m, threads, PTTS_BACKEND_CPU, NULL, e);
    if (rc) {
        ptts_model_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

void ptts_model_free(ptts_model *m) {
    if (!m) return;
    ptts_backend_free(&m->be);
    ptts_pool_free(m->pool);
    ptts_tokenizer_free(m->tok);
    ptts_weights_free(m->w);
    ptts_config_free(&m->cfg);
    free(m);
}

void ptts_model_get_info(const ptts_model *m, ptts_model_info *info) {
    const ptts_arch *a = &m->w->arch;
    memset(info, 0, sizeof *info);
    info->layers = a->layers;
    info->d = a->d;
    info->heads = a->heads;
    info->latent_dim = a->ld;
    info->vocab_size = a->nb;
    info->has_voice_cloning = a->has_encoder;
    info->insert_bos_before_voice = a->has_bos_before_voice;
    info->sample_rate = PTTS_SAMPLE_RATE;
    info->frame_samples = a->frame_samples;
    info->threads = ptts_pool_threads(m->pool);
    info->isa = m->ctx.k->isa;
    info->weight_bytes = m->w->bytes;
}
