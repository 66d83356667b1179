/*
 * arch.c - a model's architecture (weights.h ptts_arch): derived from a checkpoint's tensor
 * shapes, from a named preset, or from the reference's config, with the numbers that follow
 * from the others (ptts_arch_fill_derived) and the flow-head types. Moved out of weights.c,
 * which binds the tensors to an architecture found here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "safetensors.h"
#include "weights.h"

static const st_tensor *need(const st_file *f, const char *name, int ndim, ptts_error *e) {
    const st_tensor *t = st_find(f, name);
    if (!t) {
        ptts_fail(e, PTTS_E_MODEL, "%s: tensor %s is missing (is this a Pocket TTS checkpoint?)",
                  st_path(f), name);
        return NULL;
    }
    if (t->ndim != ndim) {
        ptts_fail(e, PTTS_E_MODEL, "%s: tensor %s has %d dimensions, expected %d", st_path(f), name,
                  t->ndim, ndim);
        return NULL;
    }
    for (int i = 0; i < ndim; i++)
        if (t->shape[i] <= 0 || t->shape[i] > (1 << 24)) {
            ptts_fail(e, PTTS_E_MODEL, "%s: tensor %s has an implausible shape", st_path(f), name);
            return NULL;
        }
    return t;
}

/* 1 + the highest N of tensors named "<prefix>N.<...>". */
static int count_indexed(const st_file *f, const char *prefix) {
    size_t pl = strlen(prefix);
    int hi = -1;
    for (int i = 0; i < st_count(f); i++) {
        const char *n = st_at(f, i)->name;
        if (strncmp(n, prefix, pl) != 0) continue;
        char *end;
        long v = strtol(n + pl, &end, 10);
        if (end != n + pl && *end == '.' && v >= 0 && v < 4096 && v > hi) hi = (int)v;
    }
    return hi + 1;
}

int ptts_arch_derive(const st_file *f, const ptts_weights_options *o, ptts_arch *a, ptts_error *e) {
    memset(a, 0, sizeof *a);
    const st_tensor *t;
    if (!(t = need(f, "flow_lm.input_linear.weight", 2, e))) return e ? e->code : PTTS_E_MODEL;
    a->d = (int)t->shape[0];
    a->ld = (int)t->shape[1];
    if (!(t = need(f, "flow_lm.speaker_proj_weight", 2, e))) return PTTS_E_MODEL;
    a->inner_dim = (int)t->shape[1];
    if (!(t = need(f, "flow_lm.conditioner.embed.weight", 2, e))) return PTTS_E_MODEL;
    a->nb = (int)t->shape[0] - 1;
    a->layers = count_indexed(f, "flow_lm.transformer.layers.");
    if (a->layers <= 0)
        return ptts_fail(e, PTTS_E_MODEL, "%s: no flow_lm.transformer.layers.N tensors",
                         st_path(f));
    if (!(t = need(f, "flow_lm.transformer.layers.0.linear1.weight", 2, e))) return PTTS_E_MODEL;
    a->ffn = (int)t->shape[0];
    a->has_bos_before_voice = st_find(f, "flow_lm.bos_before_voice") != NULL;
    if (!(t = need(f, "flow_lm.flow_net.input_proj.weight", 2, e))) return PTTS_E_MODEL;
    a->fd = (int)t->shape[0];
    a->flow_depth = count_indexed(f, "flow_lm.flow_net.res_blocks.");
    /* K time embedders (MODEL.md 2): the sampler type follows (a config may only confirm it) */
    a->n_time_embed = count_indexed(f, "flow_lm.flow_net.time_embed.");
    a->flow_type = ptts_flow_type_of_k(a->n_time_embed);
    if (a->flow_type < 0)
        return ptts_fail(e, PTTS_E_MODEL,
                         "%s: %d flow time embedders (flow_lm.flow_net.time_embed.N): no sampler "
                         "has that many (lsd 2, flow_matching 1, drifting 0)",
                         st_path(f), a->n_time_embed);
    if (a->n_time_embed > 0) {
        if (!(t = need(f, "flow_lm.flow_net.time_embed.0.freqs", 1, e))) return PTTS_E_MODEL;
        a->nfreq = (int)t->shape[0];
    } else {
        a->nfreq = 128; /* unused without time embedders */
    }
    if (!(t = need(f, "mimi.quantizer.output_proj.weight", 3, e))) return PTTS_E_MODEL;
    a->C = (int)t->shape[0];
    if (!(t = need(f, "mimi.decoder.model.11.conv.weight", 3, e))) return PTTS_E_MODEL;
    a->nf = (int)t->shape[1];
    a->codec_layers = count_indexed(f, "mimi.decoder_transformer.transformer.layers.");
    if (!(t = need(f, "mimi.decoder_transformer.transformer.layers.0.linear1.weight", 2, e)))
        return PTTS_E_MODEL;
    a->codec_ffn = (int)t->shape[0];
    static const char *up[3] = {"mimi.decoder.model.2.convtr.weight",
                                "mimi.decoder.model.5.convtr.weight",
                                "mimi.decoder.model.8.convtr.weight"};
    for (int s = 0; s < 3; s++) {
        if (!(t = need(f, up[s], 3, e))) return PTTS_E_MODEL;
        if (t->shape[2] % 2)
            return ptts_fail(e, PTTS_E_MODEL, "%s: tensor %s has an odd kernel size", st_path(f),
                             up[s]);
        a->ratios[s] = (int)t->shape[2] / 2;
    }
    a->has_encoder = st_find(f, "mimi.encoder.model.0.conv.weight") != NULL;
    a->heads = o && o->heads > 0 ? o->heads : (a->d >= 64 ? a->d / 64 : 1);
    a->codec_heads = o && o->codec_heads > 0 ? o->codec_heads : (a->C >= 64 ? a->C / 64 : 1);
    a->codec_window = 250;
    a->frame_samples = 16 * a->ratios[0] * a->ratios[1] * a->ratios[2];
    if (a->d % a->heads || (a->d / a->heads) % 2 || a->C % a->codec_heads ||
        (a->C / a->codec_heads) % 2 || a->nf < 2 || a->nf % 2 || a->fd <= 0 || a->nb <= 0)
        return ptts_fail(e, PTTS_E_MODEL,
                         "%s: inconsistent architecture (d %d, heads %d, codec C %d, heads %d, "
                         "nf %d)",
                         st_path(f), a->d, a->heads, a->C, a->codec_heads, a->nf);
    return 0;
}

void ptts_arch_fill_derived(ptts_arch *a) {
    /* zero is lsd: a synthetic architecture states its sampler type, K follows */
    a->n_time_embed = ptts_flow_k(a->flow_type);
    if (!a->ffn) a->ffn = 4 * a->d;
    if (!a->nfreq) a->nfreq = 128;
    if (!a->codec_window) a->codec_window = 250;
    if (!a->ratios[0]) {
        a->ratios[0] = 6;
        a->ratios[1] = 5;
        a->ratios[2] = 4;
    }
    if (!a->codec_ffn) a->codec_ffn = 4 * a->C;
    if (!a->heads) a->heads = a->d >= 64 ? a->d / 64 : 1;
    if (!a->codec_heads) a->codec_heads = a->C >= 64 ? a->C / 64 : 1;
    a->frame_samples = 16 * a->ratios[0] * a->ratios[1] * a->ratios[2];
}

int ptts_flow_k(int flow_type) {
    switch (flow_type) {
    case PTTS_FLOW_LSD: return 2;
    case PTTS_FLOW_MATCHING: return 1;
    case PTTS_FLOW_DRIFTING: return 0;
    default: return -1;
    }
}

int ptts_flow_type_of_k(int k) {
    for (int t = PTTS_FLOW_LSD; t <= PTTS_FLOW_DRIFTING; t++)
        if (ptts_flow_k(t) == k) return t;
    return -1;
}

/* indexed by PTTS_FLOW_* */
static const char *const flow_type_names[] = {"lsd", "flow_matching", "drifting"};

int ptts_flow_type_from_name(const char *name) {
    for (int t = PTTS_FLOW_LSD; name && t <= PTTS_FLOW_DRIFTING; t++)
        if (!strcmp(name, flow_type_names[t])) return t;
    return -1;
}

const char *ptts_flow_type_name(int flow_type) {
    return flow_type >= PTTS_FLOW_LSD && flow_type <= PTTS_FLOW_DRIFTING
               ? flow_type_names[flow_type]
               : "unknown";
}

int ptts_arch_check_flow_type(const ptts_arch *a, int flow_type, const char *source,
                              ptts_error *e) {
    const int k = ptts_flow_k(flow_type);
    if (k < 0)
        return ptts_fail(e, PTTS_E_MODEL,
                         "%s: unknown sampler type %d (lsd, flow_matching or "
                         "drifting)",
                         source, flow_type);
    if (k != a->n_time_embed)
        return ptts_fail(e, PTTS_E_MODEL,
                         "%s says flow.type %s (%d time embedders), but the weights have %d "
                         "(the %s head)",
                         source, ptts_flow_type_name(flow_type), k, a->n_time_embed,
                         ptts_flow_type_name(ptts_flow_type_of_k(a->n_time_embed)));
    return 0;
}

int ptts_arch_preset(ptts_arch *a, const char *name) {
    memset(a, 0, sizeof *a);
    if (!strcmp(name, "tiny")) {
        *a = (ptts_arch){.d = 64,
                         .heads = 4,
                         .layers = 2,
                         .ffn = 256,
                         .ld = 16,
                         .inner_dim = 16,
                         .nb = 300,
                         .has_bos_before_voice = 1,
                         .fd = 32,
                         .flow_depth = 2,
                         .C = 32,
                         .nf = 4,
                         .codec_heads = 4,
                         .codec_layers = 2,
                         .codec_ffn = 64,
                         .has_encoder = 1};
    } else if (!strcmp(name, "full")) {
        *a = (ptts_arch){.d = 1024,
                         .heads = 16,
                         .layers = 6,
                         .ffn = 4096,
                         .ld = 32,
                         .inner_dim = 32,
                         .nb = 4000,
                         .has_bos_before_voice = 1,
                         .fd = 512,
                         .flow_depth = 6,
                         .C = 512,
                         .nf = 64,
                         .codec_heads = 8,
                         .codec_layers = 2,
                         .codec_ffn = 2048,
                         .has_encoder = 1};
    } else {
        return PTTS_E_INVALID;
    }
    ptts_arch_fill_derived(a);
    return 0;
}

int ptts_arch_from_config(ptts_arch *a, const ptts_config *c, ptts_error *e) {
    memset(a, 0, sizeof *a);
    if (c->n_seanet_ratios != 3)
        return ptts_fail(e, PTTS_E_MODEL, "mimi.seanet.ratios: %d ratios, the decoder has 3",
                         c->n_seanet_ratios);
    *a = (ptts_arch){.d = c->d_model,
                     .heads = c->num_heads,
                     .layers = c->num_layers,
                     .ffn = c->d_model * c->hidden_scale,
                     .ld = c->quantizer_dimension,
                     .inner_dim = c->mimi_inner_dim,
                     .nb = c->n_bins,
                     .has_bos_before_voice = c->insert_bos_before_voice,
                     .fd = c->flow_dim,
                     .flow_depth = c->flow_depth,
                     .flow_type = c->flow_type,
                     .C = c->codec_d_model,
                     .nf = c->seanet_n_filters,
                     .codec_heads = c->codec_num_heads,
                     .codec_layers = c->codec_num_layers,
                     .codec_ffn = c->codec_ffn,
                     .has_encoder = 1};
    /* the decoder runs the ratios in the config's order (the encoder reversed) */
    for (int i = 0; i < 3; i++)
        a->ratios[i] = c->seanet_ratios[i];
    static const struct {
        const char *key;
        size_t off;
        int max;
    } sizes[] = {
        {"flow_lm.transformer.d_model", offsetof(ptts_arch, d), 1 << 14},
        {"flow_lm.transformer.num_heads", offsetof(ptts_arch, heads), 1 << 10},
        {"flow_lm.transformer.num_layers", offsetof(ptts_arch, layers), 256},
        {"flow_lm.transformer.hidden_scale", offsetof(ptts_arch, ffn), 1 << 16},
        {"mimi.quantizer.dimension", offsetof(ptts_arch, ld), 1 << 12},
        {"mimi.inner_dim", offsetof(ptts_arch, inner_dim), 1 << 14},
        {"flow_lm.lookup_table.n_bins", offsetof(ptts_arch, nb), 1 << 20},
        {"flow_lm.flow.dim", offsetof(ptts_arch, fd), 1 << 14},
        {"flow_lm.flow.depth", offsetof(ptts_arch, flow_depth), 256},
        {"mimi.transformer.d_model", offsetof(ptts_arch, C), 1 << 14},
        {"mimi.seanet.n_filters", offsetof(ptts_arch, nf), 1 << 12},
        {"mimi.transformer.num_heads", offsetof(ptts_arch, codec_heads), 1 << 10},
        {"mimi.transformer.num_layers", offsetof(ptts_arch, codec_layers), 256},
        {"mimi.transformer.dim_feedforward", offsetof(ptts_arch, codec_ffn), 1 << 16},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        const int v = *(const int *)((const char *)a + sizes[i].off);
        if (v < 1 || v > sizes[i].max)
            return ptts_fail(e, PTTS_E_MODEL, "%s: %d is not a size this engine builds",
                             sizes[i].key, v);
    }
    for (int i = 0; i < 3; i++)
        if (a->ratios[i] < 1 || a->ratios[i] > 64)
            return ptts_fail(e, PTTS_E_MODEL, "mimi.seanet.ratios: %d is out of range",
                             a->ratios[i]);
    if (a->d % a->heads || a->C % a->codec_heads)
        return ptts_fail(e, PTTS_E_MODEL, "d_model is not a multiple of num_heads");
    ptts_arch_fill_derived(a);
    return 0;
}
