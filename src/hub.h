/*
 * hub.h - the published models (MODEL.md sections 7 and 10): the language table with its
 * repositories, revisions and text rules, the preset voices, the gated-then-open choice of
 * weights, and configs named by URL.
 */
#ifndef PTTS_HUB_H
#define PTTS_HUB_H

#include "common.h"
#include "config.h"

#define PTTS_GATED_REPO "kyutai/pocket-tts"
#define PTTS_OPEN_REPO "kyutai/pocket-tts-without-voice-cloning"

/* Fetch `primary` (the gated weights with voice cloning); when that fails for a reason other
 * than the local disk or a cancel, fetch `fallback` (the open weights) instead and say why
 * through the log (a refusal of the gated repository is explained once per process).
 * *used_primary (may be NULL) says which one *path is. `fallback` may be NULL. */
int ptts_hub_fetch_weights(char **path, const char *primary, const char *fallback,
                           int *used_primary, ptts_error *e);

/* The packaged config of language `l` (what the reference's languages/{name}.yaml holds,
 * MODEL.md 10.2-10.6) as a parsed config: its text rules, sampler, BOS rule and architecture,
 * weights_path the gated file (NULL when not known), weights_path_without_voice_cloning the
 * open one and tokenizer_path the tokenizer, as pinned hf:// URLs (NULL for portuguese_24l,
 * whose files no source shows). */
int ptts_language_config(const ptts_language *l, ptts_config *c, ptts_error *e);

/* A --config argument: a local path, an http(s) URL or hf://ORG/NAME/PATH[@REVISION], ending in
 * .yaml or .yml (for hf://, before @REVISION), as the reference requires, or .json (this
 * project's JSON form, e.g. the fixtures' manifest.json). Downloads it when needed and parses it;
 * its relative paths resolve against its own location (for hf://, the same repository folder and
 * revision; for http(s), the URL's folder), so the files it names are fetched from beside it.
 * *local (may be NULL) receives the local copy's path (malloc'd). */
int ptts_config_fetch(ptts_config *c, const char *path_or_url, char **local, ptts_error *e);

/* The files a config names, as local paths (downloaded when they are URLs): *weights from
 * weights_path (gated, with voice cloning) falling back to weights_path_without_voice_cloning as
 * ptts_hub_fetch_weights does, *has_cloning (may be NULL) saying which; NULL when the config
 * names no single weights file (the caller gives one). *tokenizer from tokenizer_path. Both
 * malloc'd; on failure both NULL. */
int ptts_config_fetch_files(const ptts_config *c, char **weights, char **tokenizer,
                            int *has_cloning, ptts_error *e);

#endif
