/*
 * model.c - loading a model (config, weights, tokenizer, thread pool) and the public voice
 * handles. Everything here happens once per model or voice, never per frame.
 */
#include "model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio.h"
#include "backbone.h"
#include "backend.h"
#include "codec.h"
#include "download.h"
#include "engine_vulkan.h"
#include "hub.h"

ptts_model_options ptts_model_options_default(void) {
    ptts_model_options o;
    memset(&o, 0, sizeof o);
    return o;
}

/* Numbers the config states that the weights contradict. */
static int check_config(const ptts_config *c, const ptts_arch *a, const char *cfg_path,
                        ptts_error *e) {
#define CHK(cond, what, cv, wv)                                                                 \
    if (cond)                                                                                   \
        return ptts_fail(e, PTTS_E_MODEL, "%s says %s = %d but the weights have %d", cfg_path, \
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
    CHK(c->codec_d_model && c->codec_d_model != a->C, "mimi.transformer.d_model",
        c->codec_d_model, a->C);
    CHK(c->seanet_n_filters && c->seanet_n_filters != a->nf, "mimi.seanet.n_filters",
        c->seanet_n_filters, a->nf);
    CHK(c->quantizer_dimension && c->quantizer_dimension != a->ld, "mimi.quantizer.dimension",
        c->quantizer_dimension, a->ld);
#undef CHK
    return 0;
}

static ptts_wmode wmode_of(int precision) {
    return precision == PTTS_PRECISION_BF16   ? PTTS_WMODE_BF16
           : precision == PTTS_PRECISION_INT8 ? PTTS_WMODE_INT8
                                              : PTTS_WMODE_F32;
}

static int finish_model(ptts_model *m, int threads, ptts_error *e) {
    if (pthread_mutex_init(&m->engine_mu, NULL))
        return ptts_fail(e, PTTS_E_NOMEM, "cannot create a mutex");
    m->engine_mu_ok = 1;
    m->pool = ptts_pool_create(threads);
    if (!m->pool) return ptts_fail(e, PTTS_E_NOMEM, "cannot start %d threads", threads);
    m->ctx.k = ptts_kernels_best();
    m->ctx.pool = m->pool;
    m->text = ptts_text_options_default();
    m->default_temperature = 0.3f;
    m->text.pad_with_spaces = m->cfg.pad_with_spaces;
    m->text.remove_semicolons = m->cfg.remove_semicolons;
    m->recommended_frames_after_eos = m->cfg.recommended_frames_after_eos;
    return 0;
}

/* The compute engine for ptts_model_options.backend: cpu; vulkan (an error when no Vulkan
 * device works); auto: the Vulkan engine on a discrete GPU, else the CPU (said at info level),
 * or on the device m->device names when one is named. */
static int select_engine(ptts_model *m, int backend, ptts_error *e) {
    m->engine = NULL;
    if (backend == PTTS_BACKEND_CPU) return 0;
    if (backend != PTTS_BACKEND_AUTO && backend != PTTS_BACKEND_VULKAN &&
        backend != PTTS_BACKEND_VULKAN_CODEC)
        return ptts_fail(e, PTTS_E_INVALID, "unknown backend %d", backend);
    if (backend == PTTS_BACKEND_AUTO && m->device) backend = PTTS_BACKEND_VULKAN;
    const ptts_engine_ops *vk = ptts_vulkan_engine();
    char name[256];
    int discrete = 0;
    ptts_error pe = {0};
    int rc = vk ? ptts_vulkan_probe(m->device, name, sizeof name, &discrete, &pe)
                : ptts_fail(&pe, PTTS_E_UNSUPPORTED, "this build has no Vulkan backend");
    if (backend == PTTS_BACKEND_VULKAN || backend == PTTS_BACKEND_VULKAN_CODEC) {
        const int codec = backend == PTTS_BACKEND_VULKAN_CODEC;
        if (rc)
            return ptts_fail(e, PTTS_E_BACKEND, "backend %s: %s", codec ? "vulkan-codec" : "vulkan",
                             pe.msg);
        m->engine = codec ? ptts_hybrid_engine() : vk;
        ptts_log(PTTS_LOG_INFO, codec ? "backend: CPU, codec on Vulkan (%s)" : "backend: Vulkan on %s",
                 name);
        return 0;
    }
    if (!rc && discrete) {
        m->engine = vk;
        ptts_log(PTTS_LOG_INFO, "backend: Vulkan on %s (discrete GPU)", name);
    } else if (!rc) {
        ptts_log(PTTS_LOG_INFO, "backend: CPU (the Vulkan device %s is no discrete GPU)", name);
    } else {
        ptts_log(PTTS_LOG_INFO, "backend: CPU (%s)", pe.msg);
    }
    return 0;
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
                         const ptts_language *lang, ptts_error *e) {
    int rc;
    if (o->config_path) {
        if ((rc = ptts_fetch(&f->config, o->config_path, e))) return rc;
        if ((rc = ptts_config_load(&m->cfg, f->config, e))) return rc;
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
        if (!rc && !o->tokenizer_path && !m->cfg.tokenizer_path) f->tokenizer = tok;
        else free(tok);
    } else {
        return ptts_fail(e, PTTS_E_INVALID, "no weights: give a language, a weights path or a "
                                            "config with weights_path");
    }
    if (rc) return rc;
    if (f->tokenizer) return 0;
    const char *tp = o->tokenizer_path ? o->tokenizer_path : m->cfg.tokenizer_path;
    if (!tp && lang) {
        char *w = NULL;
        rc = ptts_language_fetch(lang->name, &w, &f->tokenizer, NULL, e);
        free(w);
        return rc;
    }
    if (!tp)
        return ptts_fail(e, PTTS_E_INVALID, "no tokenizer: give a tokenizer path, a language or "
                                            "a config with flow_lm.lookup_table.tokenizer_path");
    return ptts_fetch(&f->tokenizer, tp, e);
}

int ptts_model_load(ptts_model **out, const ptts_model_options *opt, ptts_error *e) {
    *out = NULL;
    ptts_model_options o = opt ? *opt : ptts_model_options_default();
    if (o.overlap < PTTS_OVERLAP_AUTO || o.overlap > PTTS_OVERLAP_OFF)
        return ptts_fail(e, PTTS_E_INVALID, "unknown overlap mode %d", o.overlap);
    const ptts_language *lang = NULL;
    if (o.language) {
        if (!(lang = ptts_language_find(o.language))) {
            char list[512] = "";
            for (int i = 0; i < ptts_language_count(); i++) {
                strcat(list, i ? ", " : "");
                strcat(list, ptts_language_at(i)->name);
            }
            return ptts_fail(e, PTTS_E_INVALID, "unknown language '%s' (languages: %s)",
                             o.language, list);
        }
    } else if (!o.config_path && !o.weights_path && !o.tokenizer_path) {
        lang = ptts_language_find("english"); /* the reference's default model */
    }
    ptts_model *m = calloc(1, sizeof *m);
    if (!m) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    ptts_config_init(&m->cfg);
    model_files f = {0};
    int rc = resolve_files(&f, m, &o, lang, e);
    if (rc) goto fail;
    if (lang && !o.config_path) { /* the language's text rules (a config states its own) */
        m->cfg.pad_with_spaces = lang->pad_with_spaces;
        m->cfg.remove_semicolons = lang->remove_semicolons;
        m->cfg.recommended_frames_after_eos = lang->frames_after_eos;
    }
    ptts_weights_options wo = {0};
    wo.mode = wmode_of(o.precision);
    wo.heads = o.heads > 0 ? o.heads : m->cfg.num_heads;
    wo.codec_heads = o.codec_heads > 0 ? o.codec_heads : m->cfg.codec_num_heads;
    if ((rc = ptts_weights_load(&m->w, f.weights, &wo, e))) goto fail;
    if (o.config_path && (rc = check_config(&m->cfg, &m->w->arch, o.config_path, e))) goto fail;
    if ((rc = ptts_tokenizer_load(&m->tok, f.tokenizer, e))) goto fail;
    if (ptts_tokenizer_vocab_size(m->tok) > m->w->arch.nb) {
        rc = ptts_fail(e, PTTS_E_MODEL, "%s has %d pieces but the model's embedding has %d",
                       f.tokenizer, ptts_tokenizer_vocab_size(m->tok), m->w->arch.nb);
        goto fail;
    }
    if ((rc = finish_model(m, o.threads, e))) goto fail;
    if (o.device && *o.device && !(m->device = strdup(o.device))) {
        rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory");
        goto fail;
    }
    if ((rc = select_engine(m, o.backend, e))) goto fail;
    m->overlap = o.overlap;
    m->tensor_cores = o.tensor_cores;
    m->fence_spin_us = o.fence_spin_us;
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
    *out = NULL;
    ptts_model *m = calloc(1, sizeof *m);
    if (!m) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    ptts_config_init(&m->cfg);
    ptts_weights_options wo = {.mode = wmode_of(precision)};
    int rc = ptts_weights_fill(&m->w, a, &wo, e);
    if (!rc) rc = ptts_tokenizer_load(&m->tok, tokenizer_path, e);
    if (!rc) rc = finish_model(m, threads, e);
    if (rc) {
        ptts_model_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

int ptts_engine_acquire(const ptts_model *cm, const ptts_engine_ops *ops, int slots, void **eng,
                        ptts_error *e) {
    ptts_model *m = (ptts_model *)cm; /* the cache is the one mutable part, under its mutex */
    *eng = NULL;
    if (m->engine_mu_ok) {
        pthread_mutex_lock(&m->engine_mu);
        for (int i = 0; i < 2 && !*eng; i++)
            if (m->idle[i].eng && m->idle[i].ops == ops && m->idle[i].slots == slots &&
                m->idle[i].overlap == m->overlap) {
                *eng = m->idle[i].eng;
                m->idle[i].eng = NULL;
            }
        pthread_mutex_unlock(&m->engine_mu);
    }
    const ptts_engine_args a = {m->w,           &m->ctx,          m->device, m->overlap,
                                m->tensor_cores, m->fence_spin_us, &m->vk};
    return *eng ? 0 : ops->create(eng, &a, slots, e);
}

void ptts_engine_release(const ptts_model *cm, const ptts_engine_ops *ops, int slots, void *eng,
                         int failed) {
    ptts_model *m = (ptts_model *)cm;
    if (!eng) return;
    const ptts_engine_ops *drop_ops = ops;
    if (!failed && m->engine_mu_ok) { /* a free place, else the least recently kept one */
        pthread_mutex_lock(&m->engine_mu);
        int at = !m->idle[0].eng ? 0 : !m->idle[1].eng ? 1 : m->idle[0].age > m->idle[1].age;
        void *old = m->idle[at].eng;
        drop_ops = m->idle[at].ops;
        m->idle[at] = (struct ptts_idle_engine){ops, eng, slots, m->overlap, ++m->idle_clock};
        eng = old;
        pthread_mutex_unlock(&m->engine_mu);
    }
    if (eng) drop_ops->destroy(eng);
}

void ptts_model_set_vk_tuning(ptts_model *m, const ptts_vk_tuning *t) {
    ptts_engine_cache_clear(m); /* idle engines were made with the old hooks */
    m->vk = t ? *t : (ptts_vk_tuning){0};
}

void ptts_engine_cache_clear(const ptts_model *cm) {
    ptts_model *m = (ptts_model *)cm;
    struct ptts_idle_engine drop[2] = {{0}};
    if (m->engine_mu_ok) pthread_mutex_lock(&m->engine_mu);
    for (int i = 0; i < 2; i++) {
        drop[i] = m->idle[i];
        m->idle[i].eng = NULL;
    }
    if (m->engine_mu_ok) pthread_mutex_unlock(&m->engine_mu);
    for (int i = 0; i < 2; i++)
        if (drop[i].eng) drop[i].ops->destroy(drop[i].eng);
}

void ptts_model_free(ptts_model *m) {
    if (!m) return;
    ptts_engine_cache_clear(m);
    if (m->engine_mu_ok) pthread_mutex_destroy(&m->engine_mu);
    ptts_pool_free(m->pool);
    ptts_tokenizer_free(m->tok);
    ptts_weights_free(m->w);
    ptts_config_free(&m->cfg);
    free(m->device);
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

/* ---- voices ------------------------------------------------------------------------------- */

static int wrap_voice(ptts_voice **out, ptts_voice_state *st, ptts_error *e) {
    *out = calloc(1, sizeof **out);
    if (!*out) {
        ptts_voice_state_free(st);
        return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    }
    (*out)->st = st;
    return 0;
}

int ptts_voice_load(ptts_voice **out, const ptts_model *m, const char *path, ptts_error *e) {
    *out = NULL;
    const ptts_arch *a = &m->w->arch;
    ptts_voice_state *st;
    int rc = ptts_voice_state_load(&st, path, a->layers, a->heads, a->d / a->heads, e);
    return rc ? rc : wrap_voice(out, st, e);
}

int ptts_voice_load_memory(ptts_voice **out, const ptts_model *m, const void *buf, size_t size,
                           ptts_error *e) {
    *out = NULL;
    const ptts_arch *a = &m->w->arch;
    ptts_voice_state *st;
    int rc = ptts_voice_state_load_memory(&st, buf, size, "voice", a->layers, a->heads,
                                          a->d / a->heads, e);
    return rc ? rc : wrap_voice(out, st, e);
}

/* Below this peak amplitude (about -80 dBFS, 3 LSB of 16-bit audio) a clip holds no voice. */
#define PTTS_SILENCE_PEAK 1e-4f

static int no_cloning(ptts_error *e) {
    return ptts_fail(e, PTTS_E_UNSUPPORTED,
                     "this checkpoint has no voice-cloning weights: use a preset voice or the "
                     "model with voice cloning");
}

int ptts_voice_from_samples(ptts_voice **out, const ptts_model *m, const float *samples,
                            int64_t n, int sample_rate, double max_seconds, ptts_error *e) {
    *out = NULL;
    const ptts_arch *a = &m->w->arch;
    if (!a->has_encoder) return no_cloning(e);
    if (sample_rate <= 0 || n <= 0 || !samples)
        return ptts_fail(e, PTTS_E_AUDIO, "empty audio (%lld samples at %d Hz)", (long long)n,
                         sample_rate);
    /* The reference truncates at the input rate (int(30 * rate) samples), then resamples. */
    if (max_seconds > 0) {
        double lim = floor(max_seconds * sample_rate);
        if (lim < 1) lim = 1;
        if ((double)n > lim) n = (int64_t)lim;
    }
    float peak = 0.0f;
    for (int64_t i = 0; i < n; i++) {
        float x = fabsf(samples[i]);
        if (!(x <= 3.0e38f))
            return ptts_fail(e, PTTS_E_AUDIO, "non-finite audio sample at index %lld",
                             (long long)i);
        if (x > peak) peak = x;
    }
    float *pcm = NULL;
    int64_t np = 0;
    int rc = ptts_resample(samples, n, sample_rate, PTTS_SAMPLE_RATE, &pcm, &np, e);
    if (rc) return rc;
    if (np < a->frame_samples) {
        free(pcm);
        return ptts_fail(e, PTTS_E_AUDIO,
                         "the audio is too short to clone a voice: %lld samples at 24 kHz "
                         "(%.2f ms), at least %d (one %.0f ms frame) needed",
                         (long long)np, 1e3 * (double)np / PTTS_SAMPLE_RATE, a->frame_samples,
                         1e3 * a->frame_samples / PTTS_SAMPLE_RATE);
    }
    if (peak < PTTS_SILENCE_PEAK) {
        free(pcm);
        return ptts_fail(e, PTTS_E_AUDIO,
                         "the audio is silent (peak amplitude %.2g): give a recording of the "
                         "voice to clone",
                         (double)peak);
    }
    float *lat = NULL;
    int T = 0;
    rc = ptts_codec_encode(m->w, &m->ctx, pcm, np, &lat, &T, NULL, NULL, e);
    free(pcm);
    if (rc) return rc;
    ptts_backbone bb;
    rc = ptts_backbone_init(&bb, m->w, T + 1, e);
    if (!rc) rc = ptts_backbone_prompt_voice_latents(&bb, &m->ctx, lat, T, e);
    ptts_voice_state *st = NULL;
    if (!rc) rc = ptts_backbone_to_voice(&bb, &st, e);
    ptts_backbone_free(&bb);
    free(lat);
    return rc ? rc : wrap_voice(out, st, e);
}

int ptts_voice_from_audio_file(ptts_voice **out, const ptts_model *m, const char *path,
                               double max_seconds, ptts_error *e) {
    *out = NULL;
    if (!m->w->arch.has_encoder) return no_cloning(e); /* before reading anything */
    float *x = NULL;
    int64_t n = 0;
    int rate = 0;
    /* Exactly the samples the reference keeps (floor(max_seconds * rate)): the rest of a long
     * file is never decoded. */
    int rc = ptts_audio_read(path, max_seconds, &x, &n, &rate, e);
    if (rc) return rc;
    rc = ptts_voice_from_samples(out, m, x, n, rate, max_seconds, e);
    free(x);
    if (rc) return ptts_fail_prefix(e, rc, path);
    return 0;
}

int ptts_voice_save(const ptts_voice *v, const char *path, ptts_error *e) {
    return ptts_voice_state_save(v->st, path, e);
}

int ptts_voice_positions(const ptts_voice *v) { return v->st->positions; }

void ptts_voice_free(ptts_voice *v) {
    if (!v) return;
    ptts_voice_state_free(v->st);
    free(v);
}
