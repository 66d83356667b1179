/*
 * download.h - files named by URL, fetched with libcurl into the caches the reference uses, so
 * a file it (or huggingface_hub) already downloaded is reused as it is.
 *
 *  hf://ORG/NAME/PATH[@REVISION]  (REVISION defaults to "main")
 *      GET {HF_ENDPOINT or https://huggingface.co}/ORG/NAME/resolve/REVISION/PATH, cached in the
 *      Hugging Face hub layout under $HF_HUB_CACHE (default $HF_HOME/hub, HF_HOME defaulting to
 *      $XDG_CACHE_HOME/huggingface or ~/.cache/huggingface):
 *        models--ORG--NAME/blobs/ETAG                    the content (ETAG: sha256 for LFS files)
 *        models--ORG--NAME/snapshots/COMMIT/PATH         -> ../../blobs/ETAG (relative symlink)
 *        models--ORG--NAME/refs/REVISION                 COMMIT, when REVISION is a branch or tag
 *      A commit-hash revision already in the cache is used without touching the network. The
 *      token (HF_TOKEN, else the file $HF_TOKEN_PATH or $HF_HOME/token) goes to the endpoint.
 *  http://... and https://...
 *      cached as ~/.cache/pocket_tts/SHA256(URL).EXT like the reference; a cached file is used
 *      without touching the network.
 *
 * A transfer goes to NAME.incomplete beside its final name and resumes with a Range request,
 * within one call (up to 5 attempts) and across calls. The result is checked against the size
 * the server announced and, for LFS files, against their sha256, then renamed into place. A
 * lock file serialises processes fetching the same file. HF_HUB_OFFLINE=1 forbids the network:
 * only cached files resolve (ptts_offline in hf_cache.h).
 *
 * Layers: download.c (this front and the progress callback) -> hf_cache.c (both caches, their
 * locks and checks) -> http_get.c (the libcurl transfer).
 */
#ifndef PTTS_DOWNLOAD_H
#define PTTS_DOWNLOAD_H

#include "common.h"

/* Is `s` a URL this module fetches (hf://, http://, https://)? */
int ptts_is_url(const char *s);

/* Resolve `url` to a local file (downloading it when needed): *path receives a malloc'd path.
 * A string that is not a URL is copied unchanged. On failure *http_status (may be NULL)
 * receives the HTTP status that caused it (401, 403, 404, ...) or 0. Errors: PTTS_E_NETWORK
 * (unreachable, refused, corrupt transfer), PTTS_E_NOT_FOUND (404, or not cached when offline),
 * PTTS_E_IO (cache not writable, disk full), PTTS_E_INVALID (malformed URL), PTTS_E_CANCELLED
 * (the progress callback asked to stop). */
int ptts_download(char **path, const char *url, int *http_status, ptts_error *e);

/* Look `url` up in the cache only: 1 and *path (malloc'd) when cached, else 0. */
int ptts_download_cached(char **path, const char *url);

#endif
