/*
 * dev_api.c - the public entries behind the developer commands `pocket-tts tokenize` and
 * `pocket-tts fill`: a text's SentencePiece ids without loading weights, and a checkpoint of
 * synthetic weights to try the engine without the real ones.
 */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fill_write.h"
#include "tokenizer.h"

/* The tokenizer file of the options, as a local path (*path malloc'd): tokenizer_path, else the
 * config's flow_lm.lookup_table.tokenizer_path, else the language's (english by default). */
static int tokenizer_file(char **path, const ptts_model_options *o, ptts_error *e) {
    if (o->tokenizer_path) return ptts_fetch(path, o->tokenizer_path, e);
    if (o->config_path) {
        char *cfg_file = NULL;
        ptts_config cfg;
        ptts_config_init(&cfg);
        int rc = ptts_fetch(&cfg_file, o->config_path, e); /* a local path or a URL */
        if (!rc) rc = ptts_config_load(&cfg, cfg_file, e);
        if (!rc && cfg.tokenizer_path)
            rc = ptts_fetch(path, cfg.tokenizer_path, e);
        else if (!rc && !o->language)
            rc = ptts_fail(e, PTTS_E_FORMAT, "%s has no flow_lm.lookup_table.tokenizer_path",
                           o->config_path);
        ptts_config_free(&cfg);
        free(cfg_file);
        if (rc || *path) return rc;
    }
    return ptts_language_fetch_tokenizer(o->language ? o->language : "english", path, e);
}

int ptts_tokenize(const ptts_model_options *opt, const char *text, size_t len, int **ids,
                  char ***pieces, int *n, ptts_error *e) {
    if (!ids || !n || (!text && len))
        return ptts_fail(e, PTTS_E_INVALID, "ptts_tokenize: NULL argument");
    *ids = NULL;
    *n = 0;
    if (pieces) *pieces = NULL;
    const ptts_model_options o = opt ? *opt : ptts_model_options_default();
    char *path = NULL;
    ptts_tokenizer *tok = NULL;
    int rc = tokenizer_file(&path, &o, e);
    if (!rc) rc = ptts_tokenizer_load(&tok, path, e);
    if (!rc)
        rc = pieces ? ptts_tokenizer_encode_pieces(tok, text ? text : "", len, ids, pieces, n, e)
                    : ptts_tokenizer_encode(tok, text ? text : "", len, ids, n, e);
    ptts_tokenizer_free(tok);
    free(path);
    return rc;
}

int ptts_synthetic_weights_write(const char *arch, const char *dtype, const char *path,
                                 ptts_error *e) {
    if (!arch || !dtype || !path)
        return ptts_fail(e, PTTS_E_INVALID, "ptts_synthetic_weights_write: NULL argument");
    ptts_arch a;
    const size_t n = strlen(arch);
    const int is_config = (n > 5 && !strcmp(arch + n - 5, ".yaml")) ||
                          (n > 4 && !strcmp(arch + n - 4, ".yml")) ||
                          (n > 5 && !strcmp(arch + n - 5, ".json"));
    if (is_config) { /* the architecture of a config (MODEL.md 10.2) */
        ptts_config c;
        ptts_config_init(&c);
        int rc = ptts_config_load(&c, arch, e);
        if (!rc) rc = ptts_arch_from_config(&a, &c, e);
        ptts_config_free(&c);
        if (rc) return rc;
    } else if (ptts_arch_preset(&a, arch)) {
        return ptts_fail(e, PTTS_E_INVALID,
                         "the architecture is full, tiny or a config file, not '%s'", arch);
    }
    const st_dtype dt = !strcmp(dtype, "f32")    ? ST_F32
                        : !strcmp(dtype, "bf16") ? ST_BF16
                        : !strcmp(dtype, "f16")  ? ST_F16
                                                 : ST_DTYPE_COUNT;
    if (dt == ST_DTYPE_COUNT)
        return ptts_fail(e, PTTS_E_INVALID, "the dtype is f32, bf16 or f16, not '%s'", dtype);
    return ptts_fill_write(&a, dt, path, e);
}
