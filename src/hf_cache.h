/*
 * hf_cache.h - the caches under download.c: hf:// files in the Hugging Face hub layout (see
 * download.h) and http(s) files in ~/.cache/pocket_tts, fetched through http_get.c under a lock.
 */
#ifndef PTTS_HF_CACHE_H
#define PTTS_HF_CACHE_H

#include "common.h"
#include "http_get.h"

/* HF_HUB_OFFLINE set to 1/true/yes/on: only cached files resolve. */
int ptts_offline(void);

/* hf://ORG/NAME/PATH[@REVISION] to its snapshot file in the hub cache, downloaded unless a
 * commit-pinned copy is there (or, offline or unreachable, any cached copy of the branch). */
int ptts_hf_fetch(char **out, const char *url, const ptts_http_progress *progress, int *http_status,
                  ptts_error *e);
/* hf://ORG/NAME/PATH[@REVISION] split into "ORG/NAME", "PATH" and the revision ("main" when
 * none), each malloc'd; every segment a plain name (no empty, '.' or '..' segment, no control
 * character). PTTS_E_INVALID for anything else (the fuzz target tests/fuzz/fuzz_url.c). */
int ptts_hf_url_parse(const char *url, char **repo, char **file, char **rev, ptts_error *e);
/* The cached snapshot file of an hf:// URL without any network, or NULL. */
char *ptts_hf_cached(const char *url);

/* An http(s) URL to ~/.cache/pocket_tts/SHA256(URL).EXT, downloaded unless there. */
int ptts_url_fetch(char **out, const char *url, const ptts_http_progress *progress,
                   int *http_status, ptts_error *e);
/* The reference's cache name for a downloaded URL (malloc'd; NULL: no memory). */
char *ptts_url_cache_path(const char *url);

#endif
