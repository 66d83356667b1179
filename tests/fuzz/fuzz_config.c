/*
 * fuzz_config.c - libFuzzer target for the YAML/JSON model config (src/config.c): arbitrary
 * bytes through the libyaml pre-pass, the document loader and the key table. A refusal must be
 * an error naming the input with the config left empty; an accepted config must hold every
 * required string and a consistent replace_characters table. Odd-sized inputs resolve their
 * relative paths against an hf:// folder with a revision, even-sized ones against a local one.
 * Seeds: tests/fuzz/seeds/config/ (the fixture configs, a manifest, anchors).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ptts_config c;
    ptts_error e;
    memset(&e, 0, sizeof e);
    const char *base = size & 1 ? "hf://org/repo/dir@0123abcd" : "/models/dir";
    int rc = ptts_config_load_memory(&c, (const char *)data, size, "fuzz.yaml", base, &e);
    if (rc) {
        if (e.code != rc || strncmp(e.msg, "fuzz.yaml", 9) != 0) abort();
        if (c.tokenizer_path || c.weights_path || c.replace_from || c.text.n_replace) abort();
        return 0;
    }
    if (!c.flow_lm_dtype || !c.tokenizer_kind || !c.tokenizer_path || !c.mimi_dtype ||
        !c.seanet_pad_mode)
        abort();
    if ((c.flow_lm_weights_path == NULL) != (c.mimi_weights_path == NULL)) abort();
    if (c.n_seanet_ratios < 1 || c.n_seanet_ratios > PTTS_CONFIG_MAX_RATIOS) abort();
    if (c.text.n_replace < 0 || (c.text.n_replace && !c.replace_from)) abort();
    for (int i = 0; i < c.text.n_replace; i++)
        if (!c.text.replace_from[i][0] || c.text.replace_from[i] != c.replace_from[i] ||
            !c.text.replace_to[i])
            abort();
    ptts_config_free(&c);
    return 0;
}
