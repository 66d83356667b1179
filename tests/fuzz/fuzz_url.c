/*
 * fuzz_url.c - libFuzzer target for the hf:// URL parser (ptts_hf_url_parse), which a server
 * runs on every voice URL a client sends: arbitrary bytes (as a string) give either an error with
 * a message, or three parts that rebuild the URL exactly and hold no segment that could leave
 * the cache folder ('', '.', '..') and no control character - never a crash or a leak.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hf_cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every '/'-separated segment of s is a plain name. */
static int plain_segments(const char *s) {
    for (const char *p = s;;) {
        const char *q = strchr(p, '/');
        size_t n = q ? (size_t)(q - p) : strlen(p);
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) return 0;
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)p[i] < 0x20) return 0;
        if (!q) return 1;
        p = q + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 4096) return 0;
    char *url = malloc(size + 6);
    if (!url) return 0;
    memcpy(url, "hf://", 5);
    memcpy(url + 5, data, size);
    url[size + 5] = 0; /* an embedded NUL ends the string, as in a C caller */
    char *repo, *file, *rev;
    ptts_error e;
    memset(&e, 0, sizeof e);
    int rc = ptts_hf_url_parse(url, &repo, &file, &rev, &e);
    if (rc) {
        if (repo || file || rev || e.code != rc || !e.msg[0]) abort();
        free(url);
        return 0;
    }
    if (!repo || !file || !rev) abort();
    const char *slash = strchr(repo, '/');
    if (!slash || strchr(slash + 1, '/')) abort(); /* exactly ORG/NAME */
    if (!plain_segments(repo) || !plain_segments(file) || strstr(rev, "..") || rev[0] == '/')
        abort();
    size_t n = strlen(url) + 16;
    char *back = malloc(n);
    if (!back) abort();
    int has_rev = strrchr(url + 5, '@') != NULL;
    snprintf(back, n, "hf://%s/%s%s%s", repo, file, has_rev ? "@" : "", has_rev ? rev : "");
    if (strcmp(back, url)) abort();
    free(back);
    free(repo);
    free(file);
    free(rev);
    free(url);
    return 0;
}
