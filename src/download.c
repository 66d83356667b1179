/*
 * download.c - ptts_fetch, the front of the downloader (download.h): a local path stays as it
 * is, hf:// goes to the hub cache and http(s) to the pocket_tts cache (hf_cache.c), both over
 * http_get.c. The process-wide progress callback lives here and is handed down per call.
 */
#include "download.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hf_cache.h"

/* Set and called under one mutex: any thread may set it, and a callback is never called after
 * the call that replaced it has returned. */
static pthread_mutex_t g_progress_mu = PTHREAD_MUTEX_INITIALIZER;
static ptts_progress_fn g_progress_fn;
static void *g_progress_user;

void ptts_set_progress_callback(ptts_progress_fn fn, void *user) {
    pthread_mutex_lock(&g_progress_mu);
    g_progress_fn = fn;
    g_progress_user = user;
    pthread_mutex_unlock(&g_progress_mu);
}

/* What the transfers call: the callback's answer (nonzero cancels), 0 when none is set. */
static int report_progress(void *user, const char *name, int64_t done, int64_t total) {
    (void)user;
    pthread_mutex_lock(&g_progress_mu);
    int r = g_progress_fn ? g_progress_fn(g_progress_user, name, done, total) : 0;
    pthread_mutex_unlock(&g_progress_mu);
    return r;
}

int ptts_is_url(const char *s) {
    return s &&
           (!strncmp(s, "hf://", 5) || !strncmp(s, "http://", 7) || !strncmp(s, "https://", 8));
}

/* ptts_download under the limits of `o` (NULL: none). */
static int download_with(char **path, const char *url, const ptts_fetch_options *o,
                         int *http_status, ptts_error *e) {
    *path = NULL;
    if (http_status) *http_status = 0;
    if (!url || !*url) return ptts_fail(e, PTTS_E_INVALID, "empty path or URL");
    if (!ptts_is_url(url)) {
        *path = ptts_strdup(url);
        return *path ? 0 : ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    }
    int rc = ptts_http_init(e);
    if (rc) return rc;
    ptts_http_progress progress = {report_progress, NULL, 0, 0, 0};
    if (o) {
        if (o->public_only && strncmp(url, "https://", 8) && strncmp(url, "hf://", 5))
            return ptts_fail(e, PTTS_E_INVALID, "%s: only https:// and hf:// URLs are allowed",
                             url);
        progress.public_only = o->public_only;
        progress.max_bytes = o->max_bytes;
        progress.deadline = o->timeout_s > 0 ? ptts_now() + o->timeout_s : 0;
    }
    return !strncmp(url, "hf://", 5) ? ptts_hf_fetch(path, url, &progress, http_status, e)
                                     : ptts_url_fetch(path, url, &progress, http_status, e);
}

int ptts_download(char **path, const char *url, int *http_status, ptts_error *e) {
    return download_with(path, url, NULL, http_status, e);
}

int ptts_fetch_url(char **path, const char *url, const ptts_fetch_options *o, ptts_error *e) {
    if (!ptts_is_url(url)) {
        *path = NULL;
        return ptts_fail(e, PTTS_E_INVALID, "not a URL (hf://, https:// or http://)");
    }
    return download_with(path, url, o, NULL, e);
}

int ptts_download_cached(char **path, const char *url) {
    *path = NULL;
    if (!ptts_is_url(url)) {
        int64_t sz;
        if (ptts_file_size(url, &sz) != 0) return 0;
        *path = ptts_strdup(url);
        return *path != NULL;
    }
    if (strncmp(url, "hf://", 5) != 0) {
        char *p = ptts_url_cache_path(url);
        int64_t sz;
        if (p && ptts_file_size(p, &sz) == 0) {
            *path = p;
            return 1;
        }
        free(p);
        return 0;
    }
    *path = ptts_hf_cached(url);
    return *path != NULL;
}

int ptts_fetch(char **path, const char *path_or_url, ptts_error *e) {
    return ptts_download(path, path_or_url, NULL, e);
}

int ptts_fetch_cached(char **path, const char *path_or_url) {
    return ptts_download_cached(path, path_or_url);
}
