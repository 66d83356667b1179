// ctest-label: unit
/*
 * test_weights.c - binding a checkpoint: the architecture derived from shapes (tiny fixture),
 * the int8 mode's rows (scale max|w| / 127, values roundf(w / scale) clamped to +-127), every
 * missing or mis-shaped tensor reported by name in one message, a wrong dtype refused,
 * weights without the codec encoder accepted (no voice cloning), and a config whose numbers
 * contradict the weights refused with the key named.
 */
#include <math.h>
#include <unistd.h>

#include "model.h"
#include "safetensors.h"
#include "test.h"

static char dir[] = "/tmp/ptts_weights_XXXXXX";

/* Copy of the tiny checkpoint: `drop` names are left out (prefix match when ending in '*'),
 * `reshape` gets shape {2, 64}, `retype` becomes I64 of the same element count. */
/* tests/fixtures/tiny/config.yaml at `path` with flow_lm.transformer.d_model set to `d` and
 * the tokenizer path made absolute. */
static void write_tiny_config(const char *path, int d) {
    FILE *in = fopen(fixture_path("tiny/config.yaml"), "r");
    FILE *out = fopen(path, "w");
    REQUIRE(in && out);
    char line[256];
    int replaced = 0; /* flow_lm.transformer.d_model is the file's first d_model */
    while (fgets(line, sizeof line, in)) {
        if (!replaced && !strncmp(line, "    d_model:", 12)) {
            fprintf(out, "    d_model: %d\n", d);
            replaced = 1;
        } else if (strstr(line, "tokenizer_path:")) {
            fprintf(out, "    tokenizer_path: %s\n",
                    fixture_path("tokenizer/sp_unigram_tiny.model"));
        } else {
            fputs(line, out);
        }
    }
    fclose(in);
    fclose(out);
}

static const char *variant(const char *name, const char *const *drop, const char *reshape,
                           const char *retype) {
    static char path[512];
    snprintf(path, sizeof path, "%s/%s.safetensors", dir, name);
    st_file *f;
    ptts_error e = {0};
    REQUIRE(st_open(&f, fixture_path("tiny/model.safetensors"), &e) == 0);
    int n = st_count(f), m = 0;
    st_out_tensor *out = calloc((size_t)n, sizeof *out);
    void **bufs = calloc((size_t)n, sizeof *bufs);
    for (int i = 0; i < n; i++) {
        const st_tensor *t = st_at(f, i);
        int skip = 0;
        for (int d = 0; drop && drop[d]; d++) {
            size_t l = strlen(drop[d]);
            skip |= drop[d][l - 1] == '*' ? !strncmp(t->name, drop[d], l - 1)
                                          : !strcmp(t->name, drop[d]);
        }
        if (skip) continue;
        st_out_tensor *o = &out[m++];
        o->name = t->name;
        o->dtype = t->dtype;
        o->ndim = t->ndim;
        memcpy(o->shape, t->shape, sizeof o->shape);
        o->data = t->data;
        if (reshape && !strcmp(t->name, reshape)) {
            /* [1, 64] -> [2, 64]: twice the data */
            o->shape[0] = 2;
            bufs[i] = calloc(2, t->nbytes);
            o->data = bufs[i];
        }
        if (retype && !strcmp(t->name, retype)) {
            o->dtype = ST_I64;
            bufs[i] = calloc((size_t)t->numel, 8);
            o->data = bufs[i];
        }
    }
    REQUIRE(st_write(path, out, m, NULL, &e) == 0);
    for (int i = 0; i < n; i++)
        free(bufs[i]);
    free(bufs);
    free(out);
    st_close(f);
    return path;
}

int main(void) {
    REQUIRE(mkdtemp(dir));
    ptts_error e = {0};
    ptts_weights_options o = {.heads = 4, .codec_heads = 4};
    ptts_weights *w = NULL;

    /* the architecture from the shapes */
    REQUIRE(ptts_weights_load(&w, fixture_path("tiny/model.safetensors"), &o, &e) == 0);
    const ptts_arch *a = &w->arch;
    CHECK(a->d == 64 && a->heads == 4 && a->layers == 2 && a->ffn == 256);
    CHECK(a->ld == 16 && a->inner_dim == 16 && a->nb == 300 && a->has_bos_before_voice);
    CHECK(a->fd == 32 && a->flow_depth == 2 && a->nfreq == 128);
    CHECK(a->n_time_embed == 2 && a->flow_type == PTTS_FLOW_LSD);
    CHECK(a->C == 32 && a->nf == 4 && a->codec_heads == 4 && a->codec_layers == 2 &&
          a->codec_ffn == 64 && a->codec_window == 250);
    CHECK(a->ratios[0] == 6 && a->ratios[1] == 5 && a->ratios[2] == 4 && a->frame_samples == 1920);
    CHECK(a->has_encoder);
    ptts_weights_free(w);

    /* int8: each row's scale max|w| / 127 and q = roundf(w / scale) clamped to +-127, the
     * rule weights.c computes without the library calls */
    ptts_weights *w32 = NULL;
    o.mode = PTTS_WMODE_INT8;
    REQUIRE(ptts_weights_load(&w, fixture_path("tiny/model.safetensors"), &o, &e) == 0);
    o.mode = PTTS_WMODE_F32;
    REQUIRE(ptts_weights_load(&w32, fixture_path("tiny/model.safetensors"), &o, &e) == 0);
    long bad = 0, n8 = 0;
    for (int l = 0; l < w->arch.layers; l++) {
        const ptts_lin *q = &w->backbone.layer[l].linear1, *f = &w32->backbone.layer[l].linear1;
        CHECK(q->type == PTTS_W_Q8 && f->type == PTTS_W_F32);
        if (q->type != PTTS_W_Q8 || f->type != PTTS_W_F32) continue;
        for (int m = 0; m < q->out; m++) {
            float mx = 0.f;
            for (int k = 0; k < q->in; k++)
                mx = fmaxf(mx, fabsf(f->w[(size_t)m * q->in + k]));
            const float sc = mx > 0.f ? mx / 127.f : 1.f;
            bad += q->scale[m] != sc;
            for (int k = 0; k < q->in; k++, n8++) {
                float v = roundf(f->w[(size_t)m * q->in + k] / sc);
                v = v > 127.f ? 127.f : v < -127.f ? -127.f : v;
                bad += q->wq[(size_t)m * q->in + k] != (int8_t)v;
            }
        }
    }
    CHECKF(bad == 0 && n8 > 0, "int8 rows: %ld of %ld values differ from roundf's", bad, n8);
    ptts_weights_free(w);
    ptts_weights_free(w32);

    /* every problem by name, in one message */
    const char *drop[] = {"flow_lm.out_norm.weight", "mimi.decoder.model.0.conv.bias", NULL};
    const char *p = variant("broken", drop, "flow_lm.out_eos.weight", NULL);
    CHECK(ptts_weights_load(&w, p, &o, &e) == PTTS_E_MODEL && w == NULL);
    printf("broken checkpoint: %s\n", e.msg);
    CHECK(strstr(e.msg, "3 problems") != NULL);
    CHECK(strstr(e.msg, "tensor flow_lm.out_norm.weight is missing") != NULL);
    CHECK(strstr(e.msg, "tensor mimi.decoder.model.0.conv.bias is missing") != NULL);
    CHECK(strstr(e.msg, "tensor flow_lm.out_eos.weight has shape [2, 64], expected [1, 64]") !=
          NULL);
    CHECK(strstr(e.msg, "broken.safetensors") != NULL);

    /* a weight stored as integers */
    p = variant("retyped", NULL, NULL, "flow_lm.flow_net.cond_embed.weight");
    CHECK(ptts_weights_load(&w, p, &o, &e) != 0 && w == NULL);
    CHECKF(strstr(e.msg, "flow_lm.flow_net.cond_embed.weight") != NULL, "%s", e.msg);

    /* a tensor the architecture is derived from */
    const char *drop_arch[] = {"flow_lm.input_linear.weight", NULL};
    p = variant("noinput", drop_arch, NULL, NULL);
    CHECK(ptts_weights_load(&w, p, &o, &e) == PTTS_E_MODEL);
    CHECKF(strstr(e.msg, "flow_lm.input_linear.weight is missing") != NULL, "%s", e.msg);

    /* without the codec encoder: loads, no voice cloning */
    const char *drop_enc[] = {"mimi.encoder.*", "mimi.encoder_transformer.*", "mimi.downsample.*",
                              NULL};
    p = variant("noenc", drop_enc, NULL, NULL);
    CHECKF(ptts_weights_load(&w, p, &o, &e) == 0, "%s", e.msg);
    if (w) CHECK(!w->arch.has_encoder);
    ptts_weights_free(w);

    /* the sampler from the time embedders: without time_embed.1 a flow_matching head (K 1);
     * with time_embed.1 incomplete, still K 2 and the missing tensor named */
    const char *drop_t1[] = {"flow_lm.flow_net.time_embed.1.*", NULL};
    p = variant("k1", drop_t1, NULL, NULL);
    CHECKF(ptts_weights_load(&w, p, &o, &e) == 0, "%s", e.msg);
    if (w) CHECK(w->arch.n_time_embed == 1 && w->arch.flow_type == PTTS_FLOW_MATCHING);
    ptts_weights_free(w);
    const char *drop_t1w[] = {"flow_lm.flow_net.time_embed.1.mlp.2.weight", NULL};
    p = variant("k2part", drop_t1w, NULL, NULL);
    CHECK(ptts_weights_load(&w, p, &o, &e) == PTTS_E_MODEL && w == NULL);
    CHECKF(strstr(e.msg, "flow_lm.flow_net.time_embed.1.mlp.2.weight is missing"), "%s", e.msg);

    /* a config that contradicts the weights (the tiny 3.3 config with another width) */
    char cfg[512];
    snprintf(cfg, sizeof cfg, "%s/wrong.yaml", dir);
    write_tiny_config(cfg, 128);
    ptts_model_options mo = ptts_model_options_default();
    mo.config_path = cfg;
    mo.weights_path = fixture_path("tiny/model.safetensors");
    ptts_model *m = NULL;
    CHECK(ptts_model_load(&m, &mo, &e) == PTTS_E_MODEL && m == NULL);
    CHECKF(strstr(e.msg, "flow_lm.transformer.d_model = 128") && strstr(e.msg, "have 64"), "%s",
           e.msg);
    /* the same config with the right width loads */
    write_tiny_config(cfg, 64);
    CHECKF(ptts_model_load(&m, &mo, &e) == 0, "%s", e.msg);
    ptts_model_free(m);

    const char *files[] = {"broken", "retyped", "noinput", "noenc", "k1", "k2part"};
    char path[512];
    for (int i = 0; i < 6; i++) {
        snprintf(path, sizeof path, "%s/%s.safetensors", dir, files[i]);
        unlink(path);
    }
    unlink(cfg);
    rmdir(dir);
    return test_summary();
}
