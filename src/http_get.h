/*
 * http_get.h - the transport under download.c: libcurl GET of one file with resume, retries,
 * progress and cancel; HEAD with the Hugging Face hub's metadata headers; HTTP failures as
 * messages.
 */
#ifndef PTTS_HTTP_GET_H
#define PTTS_HTTP_GET_H

#include "common.h"

/* The headers of one answer (the last after redirects), as the hub sends them. Sizes are -1
 * when absent. */
typedef struct ptts_http_response {
    long status;
    char commit[128];      /* X-Repo-Commit */
    char etag[192];        /* ETag (git blob sha1 for small files) */
    char linked_etag[192]; /* X-Linked-Etag (sha256 of an LFS file) */
    char error_code[64];   /* X-Error-Code: RepositoryNotFound, RevisionNotFound, ... */
    char location[2048];
    int64_t content_length, linked_size, range_start, range_total;
} ptts_http_response;

/* Where a transfer reports (download.c's process-wide callback; fn may be NULL) and the limits
 * of ptts_fetch_options it runs under (all zero: none). */
typedef struct ptts_http_progress {
    ptts_progress_fn fn;
    void *user;
    int public_only;   /* https only, no proxy, every connection to a public address */
    int64_t max_bytes; /* 0: no limit */
    double deadline;   /* ptts_now() seconds; 0: none */
} ptts_http_progress;

/* The size of a regular file: 0 and *size, or -1 (missing, not a regular file). */
int ptts_file_size(const char *path, int64_t *size);

/* Start libcurl once per process. */
int ptts_http_init(ptts_error *e);

/* HEAD `url`, following relative redirects (a renamed repository) and stopping at an absolute
 * one (the hub's CDN), whose headers carry the metadata. 0 when an HTTP answer came, whatever
 * its status; PTTS_E_NETWORK when none did (the message says whether the host is unreachable). */
int ptts_http_head(const char *url, const char *token, const ptts_http_progress *limits,
                   ptts_http_response *r, ptts_error *e);

/* GET `url` into `tmp` (appending: resumed with a Range request from its current size) until it
 * holds the whole file: `size` bytes when known (-1: as the server says). Broken transfers are
 * resumed up to 5 times (within progress->deadline). `name` names the file for progress and
 * messages. On an HTTP failure
 * *http_status (may be NULL) receives the status. Errors: PTTS_E_NETWORK, PTTS_E_NOT_FOUND
 * (404), PTTS_E_IO (tmp not writable), PTTS_E_CANCELLED (the progress callback asked),
 * PTTS_E_INVALID (a non-public address under public_only), PTTS_E_NOMEM (over max_bytes). */
int ptts_http_get_file(const char *url, const char *token, const char *tmp, int64_t size,
                       const char *name, const ptts_http_progress *progress, int *http_status,
                       ptts_error *e);

/* An HTTP error status as a message about `what` (401/403: the token and the licence of a gated
 * repository; 404: which of repository, revision or file is missing). */
int ptts_http_error(ptts_error *e, long status, const ptts_http_response *r, const char *what,
                    const char *url, int have_token);

/* An etag as the hub stores it: without W/ and quotes. */
void ptts_http_normalize_etag(char *dst, size_t cap, const char *etag);

/* `s` percent-encoded as one URL segment ('/' too), malloc'd; NULL: no memory. */
char *ptts_http_escape(const char *s);
/* `path` with each segment percent-encoded and the slashes kept (malloc'd; NULL: no memory). */
char *ptts_http_escape_path(const char *path);

#endif
