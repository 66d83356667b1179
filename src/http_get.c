/*
 * http_get.c - the libcurl transport of download.c: one file over HTTP(S) into a local partial
 * file, resumed with Range requests and retried on broken connections (MAX_ATTEMPTS, with a
 * growing pause), checked against the size the server announced, with progress reports and a
 * cancel; a HEAD that reads the hub's metadata headers; HTTP failures as messages that say what
 * to do (a token, a licence, a missing file or revision).
 */
#include "http_get.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "netaddr.h"

#define MAX_ATTEMPTS 5

int ptts_file_size(const char *path, int64_t *size) {
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
    *size = (int64_t)st.st_size;
    return 0;
}

static pthread_once_t g_curl_once = PTHREAD_ONCE_INIT;
static CURLcode g_curl_init_rc;
static void curl_init_once(void) { g_curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

int ptts_http_init(ptts_error *e) {
    pthread_once(&g_curl_once, curl_init_once);
    if (g_curl_init_rc != CURLE_OK)
        return ptts_fail(e, PTTS_E_NETWORK, "libcurl cannot start: %s",
                         curl_easy_strerror(g_curl_init_rc));
    return 0;
}

static void response_reset(ptts_http_response *r) {
    memset(r, 0, sizeof *r);
    r->content_length = r->linked_size = r->range_start = r->range_total = -1;
}

static void copy_value(char *dst, size_t cap, const char *v, size_t n) {
    if (n >= cap) n = cap - 1;
    memcpy(dst, v, n);
    dst[n] = 0;
}

static size_t on_header(char *buf, size_t size, size_t nitems, void *user) {
    ptts_http_response *r = user;
    size_t n = size * nitems, len = n;
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
        len--;
    if (len >= 5 && !strncmp(buf, "HTTP/", 5)) { /* a new response (after a redirect) */
        response_reset(r);
        const char *sp = memchr(buf, ' ', len);
        if (sp) r->status = strtol(sp + 1, NULL, 10);
        return n;
    }
    const char *colon = memchr(buf, ':', len);
    if (!colon) return n;
    size_t klen = (size_t)(colon - buf);
    const char *v = colon + 1, *end = buf + len;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    size_t vlen = (size_t)(end - v);
    char num[32];
    copy_value(num, sizeof num, v, vlen);
#define KEY(name) (klen == strlen(name) && !strncasecmp(buf, name, klen))
    if (KEY("x-repo-commit"))
        copy_value(r->commit, sizeof r->commit, v, vlen);
    else if (KEY("etag"))
        copy_value(r->etag, sizeof r->etag, v, vlen);
    else if (KEY("x-linked-etag"))
        copy_value(r->linked_etag, sizeof r->linked_etag, v, vlen);
    else if (KEY("x-error-code"))
        copy_value(r->error_code, sizeof r->error_code, v, vlen);
    else if (KEY("location"))
        copy_value(r->location, sizeof r->location, v, vlen);
    else if (KEY("content-length"))
        r->content_length = strtoll(num, NULL, 10);
    else if (KEY("x-linked-size"))
        r->linked_size = strtoll(num, NULL, 10);
    else if (KEY("content-range")) { /* bytes START-END/TOTAL */
        long long a = -1, b = -1, t = -1;
        if (sscanf(num, "bytes %lld-%lld/%lld", &a, &b, &t) >= 2) {
            r->range_start = a;
            r->range_total = t;
        }
    }
#undef KEY
    return n;
}

/* An etag as the hub stores it: without W/ and quotes. */
void ptts_http_normalize_etag(char *dst, size_t cap, const char *etag) {
    if (!strncmp(etag, "W/", 2)) etag += 2;
    size_t n = strlen(etag);
    if (n >= 2 && etag[0] == '"' && etag[n - 1] == '"') {
        etag++;
        n -= 2;
    }
    copy_value(dst, cap, etag, n);
}

typedef struct transfer {
    CURL *c;
    FILE *f;
    const char *path; /* of f */
    int64_t base;     /* bytes already in f when the request started */
    int64_t got;      /* body bytes written by this request */
    int64_t limit;    /* expected total size, -1 unknown */
    int write_errno, overflow, range_mismatch, started;
    int64_t max_bytes; /* 0: no limit */
    int too_large;
    const char *name; /* for the progress callback */
    const ptts_http_progress *progress;
    int64_t total;
    double last_progress;
    int cancelled;
    ptts_http_response *r;
} transfer;

static size_t on_body(char *buf, size_t size, size_t nitems, void *user) {
    transfer *t = user;
    size_t n = size * nitems;
    long status = t->r->status;
    if (status != 200 && status != 206) return n; /* an error page: not part of the file */
    if (!t->started) {
        t->started = 1;
        if (status == 200 && t->base > 0) { /* the server ignored the Range: start over */
            if (fflush(t->f) != 0 || ftruncate(fileno(t->f), 0) != 0 ||
                fseek(t->f, 0, SEEK_SET) != 0) {
                t->write_errno = errno;
                return 0;
            }
            t->base = 0;
        } else if (status == 206 && t->r->range_start != t->base) {
            t->range_mismatch = 1;
            return 0;
        }
    }
    if (t->max_bytes > 0 && t->base + t->got + (int64_t)n > t->max_bytes) {
        t->too_large = 1;
        return 0;
    }
    if (t->limit >= 0 && t->base + t->got + (int64_t)n > t->limit) {
        t->overflow = 1;
        return 0;
    }
    if (fwrite(buf, 1, n, t->f) != n) {
        t->write_errno = errno ? errno : EIO;
        return 0;
    }
    t->got += (int64_t)n;
    return n;
}

static int on_progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow) {
    (void)ultotal;
    (void)ulnow;
    transfer *t = user;
    if (!t->progress || !t->progress->fn || !t->name) return 0;
    double now = ptts_now();
    if (now - t->last_progress < 0.1) return 0;
    t->last_progress = now;
    int64_t total = t->limit >= 0 ? t->limit : (dltotal > 0 ? t->base + (int64_t)dltotal : -1);
    if (t->progress->fn(t->progress->user, t->name, t->base + (int64_t)dlnow, total)) {
        t->cancelled = 1;
        return 1;
    }
    return 0;
}

/* A transfer under public_only: the address of a refused connection, for the message. */
typedef struct guard {
    int refused;
    const char *what; /* netaddr.h's word for it */
    char addr[INET6_ADDRSTRLEN];
} guard;

/* libcurl asks for each connection's socket with the address it resolved and will connect to:
 * checking here checks what is connected to (no second lookup to race), every redirect hop and
 * every address happy eyeballs tries. */
static curl_socket_t open_checked(void *user, curlsocktype purpose, struct curl_sockaddr *a) {
    guard *g = user;
    const char *what = purpose == CURLSOCKTYPE_IPCXN ? ptts_sockaddr_nonpublic(&a->addr) : "other";
    if (what) {
        g->refused = 1;
        g->what = what;
        const void *ip = a->family == AF_INET6
                             ? (const void *)&((const struct sockaddr_in6 *)&a->addr)->sin6_addr
                             : (const void *)&((const struct sockaddr_in *)&a->addr)->sin_addr;
        if (!inet_ntop(a->family, ip, g->addr, sizeof g->addr))
            snprintf(g->addr, sizeof g->addr, "?");
        return CURL_SOCKET_BAD;
    }
    return socket(a->family, a->socktype, a->protocol);
}

static int refused_error(ptts_error *e, const char *url, const guard *g) {
    return ptts_fail(e, PTTS_E_INVALID,
                     "%s: the host resolves to %s, a %s address: refused (only public addresses)",
                     url, g->addr, g->what);
}

/* Milliseconds left before the deadline (at least 1), 0 without one. */
static long ms_left(const ptts_http_progress *lim) {
    if (!lim || lim->deadline <= 0) return 0;
    double left = lim->deadline - ptts_now();
    return left < 0.001 ? 1 : (long)(left * 1000.0);
}

static CURL *easy_new(const char *url, const char *token, const ptts_http_progress *lim, guard *g,
                      struct curl_slist **hdrs, ptts_http_response *r) {
    CURL *c = curl_easy_init();
    if (!c) return NULL;
    curl_easy_setopt(c, CURLOPT_URL, url);
    if (lim && lim->public_only) {
        curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https");
        curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "https");
        curl_easy_setopt(c, CURLOPT_PROXY, ""); /* a proxy would connect for us, unchecked */
        curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, open_checked);
        curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, g);
    }
    if (lim && lim->max_bytes > 0)
        curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)lim->max_bytes);
    if (ms_left(lim)) curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, ms_left(lim));
    curl_easy_setopt(c, CURLOPT_USERAGENT, "pocket-tts-c/" PTTS_VERSION_STRING);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 20L);
    /* a stalled transfer (under 1 byte/s for 60 s) fails and is resumed */
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, NULL);
    *hdrs = curl_slist_append(NULL, "Accept-Encoding: identity");
    if (token) {
        size_t hl = strlen(token) + 32;
        char *h = malloc(hl);
        if (h) {
            snprintf(h, hl, "Authorization: Bearer %s", token);
            struct curl_slist *n = curl_slist_append(*hdrs, h);
            if (n) *hdrs = n;
            free(h);
        }
    }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, *hdrs);
    return c;
}

/* Is a curl failure worth another attempt (the connection broke, the server hung up)? */
static int transient(CURLcode rc) {
    return rc == CURLE_PARTIAL_FILE || rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR ||
           rc == CURLE_GOT_NOTHING || rc == CURLE_OPERATION_TIMEDOUT || rc == CURLE_HTTP2 ||
           rc == CURLE_HTTP2_STREAM;
}

static int unreachable(CURLcode rc) {
    return rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_RESOLVE_PROXY ||
           rc == CURLE_COULDNT_CONNECT;
}

static int network_error(ptts_error *e, const char *url, CURLcode rc, const char *detail) {
    if (unreachable(rc))
        return ptts_fail(e, PTTS_E_NETWORK,
                         "cannot reach %s (%s): no network? HF_HUB_OFFLINE=1 uses cached files "
                         "only",
                         url, detail[0] ? detail : curl_easy_strerror(rc));
    return ptts_fail(e, PTTS_E_NETWORK, "downloading %s failed: %s", url,
                     detail[0] ? detail : curl_easy_strerror(rc));
}

/* An HTTP error status as a message; `what` names the file. */
int ptts_http_error(ptts_error *e, long status, const ptts_http_response *r, const char *what,
                    const char *url, int have_token) {
    if (status == 401 || status == 403) {
        if (!strcmp(r->error_code, "RepositoryNotFound"))
            return ptts_fail(e, PTTS_E_NETWORK,
                             "%s: the repository does not exist, or is private and %s (HTTP %ld)",
                             what, have_token ? "the token cannot read it" : "needs a token",
                             status);
        return ptts_fail(e, PTTS_E_NETWORK,
                         "%s: access denied (HTTP %ld): %s; the repository is gated: accept its "
                         "licence on its Hugging Face page, then set HF_TOKEN to a token of that "
                         "account",
                         what, status,
                         have_token ? "the token was refused" : "no token (HF_TOKEN)");
    }
    if (status == 404) {
        const char *why = !strcmp(r->error_code, "RepositoryNotFound") ? "no such repository"
                          : !strcmp(r->error_code, "RevisionNotFound") ? "no such revision"
                          : !strcmp(r->error_code, "EntryNotFound")    ? "no such file"
                                                                       : "not found";
        return ptts_fail(e, PTTS_E_NOT_FOUND, "%s: %s (HTTP 404 from %s)", what, why, url);
    }
    return ptts_fail(e, PTTS_E_NETWORK, "%s: HTTP %ld from %s", what, status, url);
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* GET `url` into `tmp` (appending, resumed with Range), until it holds the whole file: `size`
 * bytes when known (-1: as the server says). */
int ptts_http_get_file(const char *url, const char *token, const char *tmp, int64_t size,
                       const char *name, const ptts_http_progress *progress, int *http_status,
                       ptts_error *e) {
    char errbuf[CURL_ERROR_SIZE];
    int rc = 0;
    for (int attempt = 0;; attempt++) {
        int64_t have = 0;
        if (ptts_file_size(tmp, &have) != 0) have = 0;
        if (size >= 0 && have > size) {
            if (truncate(tmp, 0) != 0)
                return ptts_fail(e, PTTS_E_IO, "cannot truncate %s: %s", tmp, strerror(errno));
            have = 0;
        }
        if (size >= 0 && have == size) return 0;
        int64_t max_bytes = progress ? progress->max_bytes : 0;
        if (max_bytes > 0 && size > max_bytes)
            return ptts_fail(e, PTTS_E_NOMEM, "%s: the file (%lld bytes) is over the limit of %lld",
                             url, (long long)size, (long long)max_bytes);
        FILE *f = fopen(tmp, "ab");
        if (!f)
            return ptts_fail(e, PTTS_E_IO,
                             "cannot write %s: %s (set HF_HOME to a writable "
                             "folder)",
                             tmp, strerror(errno));
        ptts_http_response r;
        response_reset(&r);
        struct curl_slist *hdrs = NULL;
        guard g = {0};
        CURL *c = easy_new(url, token, progress, &g, &hdrs, &r);
        if (!c) {
            fclose(f);
            curl_slist_free_all(hdrs);
            return ptts_fail(e, PTTS_E_NOMEM, "cannot start a transfer");
        }
        transfer t = {.c = c,
                      .f = f,
                      .path = tmp,
                      .base = have,
                      .limit = size,
                      .max_bytes = max_bytes,
                      .name = name,
                      .progress = progress,
                      .last_progress = -1,
                      .r = &r};
        char range[48];
        if (have > 0) {
            snprintf(range, sizeof range, "%lld-", (long long)have);
            curl_easy_setopt(c, CURLOPT_RANGE, range);
        }
        errbuf[0] = 0;
        curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
        curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
        curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
        curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(c, CURLOPT_XFERINFODATA, &t);
        CURLcode cr = curl_easy_perform(c);
        curl_easy_cleanup(c);
        curl_slist_free_all(hdrs);
        int close_err = 0;
        if (fflush(f) != 0 || fsync(fileno(f)) != 0) close_err = errno;
        if (fclose(f) != 0 && !close_err) close_err = errno;
        if (!t.write_errno && close_err) t.write_errno = close_err;
        if (t.cancelled) return ptts_fail(e, PTTS_E_CANCELLED, "download of %s cancelled", url);
        if (g.refused) {
            unlink(tmp);
            return refused_error(e, url, &g);
        }
        if (t.too_large || cr == CURLE_FILESIZE_EXCEEDED) {
            unlink(tmp);
            return ptts_fail(e, PTTS_E_NOMEM,
                             "%s: the file is over the limit of %lld bytes; the partial file was "
                             "deleted",
                             url, (long long)max_bytes);
        }
        if (cr == CURLE_OPERATION_TIMEDOUT && ms_left(progress) == 1)
            return ptts_fail(e, PTTS_E_NETWORK, "downloading %s: timed out", url);
        if (t.write_errno)
            return ptts_fail(e, PTTS_E_IO,
                             "cannot write %s: %s (free some space, or set HF_HOME "
                             "to another folder)",
                             tmp, strerror(t.write_errno));
        if (t.overflow) {
            unlink(tmp);
            return ptts_fail(e, PTTS_E_NETWORK,
                             "downloading %s: the server sent more than the %lld bytes it "
                             "announced; the partial file was deleted",
                             url, (long long)size);
        }
        if (r.status == 416 && have > 0) { /* our partial file is not a prefix the server has */
            if (truncate(tmp, 0) != 0)
                return ptts_fail(e, PTTS_E_IO, "cannot truncate %s: %s", tmp, strerror(errno));
            if (attempt + 1 < MAX_ATTEMPTS) continue;
        }
        if (cr == CURLE_OK && (r.status == 200 || r.status == 206)) {
            if (size < 0) { /* the size the server gave for this ptts_http_response */
                int64_t total = r.status == 206         ? r.range_total
                                : r.content_length >= 0 ? r.content_length
                                                        : -1;
                if (total >= 0) {
                    int64_t now = 0;
                    ptts_file_size(tmp, &now);
                    if (now != total)
                        return ptts_fail(e, PTTS_E_NETWORK,
                                         "downloading %s: got %lld of %lld bytes", url,
                                         (long long)now, (long long)total);
                }
                return 0;
            }
            int64_t now = 0;
            ptts_file_size(tmp, &now);
            if (now == size) return 0;
            rc = ptts_fail(e, PTTS_E_NETWORK, "downloading %s: got %lld of %lld bytes", url,
                           (long long)now, (long long)size);
        } else if (cr == CURLE_OK || (r.status >= 400 && !t.started)) {
            if (http_status) *http_status = (int)r.status;
            if (r.status < 500 || attempt + 1 >= MAX_ATTEMPTS)
                return ptts_http_error(e, r.status, &r, url, url, token != NULL);
            rc = ptts_fail(e, PTTS_E_NETWORK, "HTTP %ld from %s", r.status, url);
        } else if (t.range_mismatch) {
            rc = ptts_fail(e, PTTS_E_NETWORK,
                           "downloading %s: the server resumed at the wrong "
                           "offset",
                           url);
            if (truncate(tmp, 0) != 0)
                return ptts_fail(e, PTTS_E_IO, "cannot truncate %s: %s", tmp, strerror(errno));
        } else if (unreachable(cr) || !transient(cr)) {
            return network_error(e, url, cr, errbuf);
        } else {
            rc = network_error(e, url, cr, errbuf);
        }
        if (attempt + 1 >= MAX_ATTEMPTS) return rc;
        if (progress && progress->deadline > 0 &&
            ptts_now() + 0.001 * (double)(100L << attempt) >= progress->deadline)
            return rc;
        ptts_log(PTTS_LOG_INFO, "%s: transfer interrupted (%s), resuming", name ? name : url,
                 errbuf[0] ? errbuf : curl_easy_strerror(cr));
        sleep_ms(100L << attempt);
    }
}

char *ptts_http_escape(const char *s) {
    CURL *c = curl_easy_init();
    char *esc = c ? curl_easy_escape(c, s, 0) : NULL;
    char *out = esc ? ptts_strdup(esc) : NULL;
    curl_free(esc);
    if (c) curl_easy_cleanup(c);
    return out;
}

char *ptts_http_escape_path(const char *path) {
    CURL *c = curl_easy_init();
    if (!c) return NULL;
    size_t cap = strlen(path) * 3 + 1;
    char *out = malloc(cap);
    if (!out) {
        curl_easy_cleanup(c);
        return NULL;
    }
    out[0] = 0;
    const char *p = path;
    for (;;) {
        const char *q = strchr(p, '/');
        size_t n = q ? (size_t)(q - p) : strlen(p);
        char *seg = curl_easy_escape(c, p, (int)n);
        if (!seg) {
            free(out);
            curl_easy_cleanup(c);
            return NULL;
        }
        strcat(out, seg);
        curl_free(seg);
        if (!q) break;
        strcat(out, "/");
        p = q + 1;
    }
    curl_easy_cleanup(c);
    return out;
}

/* HEAD the resolve URL: follows relative redirects (a renamed repository), stops at the
 * absolute one to the CDN, whose headers carry the metadata. */
int ptts_http_head(const char *url, const char *token, const ptts_http_progress *limits,
                   ptts_http_response *r, ptts_error *e) {
    char errbuf[CURL_ERROR_SIZE];
    CURLcode cr = CURLE_OK;
    char *cur = ptts_strdup(url);
    for (int hops = 0; cur && hops < 10; hops++) {
        struct curl_slist *hdrs = NULL;
        response_reset(r);
        guard g = {0};
        CURL *c = easy_new(cur, token, limits, &g, &hdrs, r);
        if (!c) break;
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
        curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
        errbuf[0] = 0;
        cr = curl_easy_perform(c);
        curl_easy_cleanup(c);
        curl_slist_free_all(hdrs);
        if (g.refused) {
            int rc = refused_error(e, url, &g);
            free(cur);
            return rc;
        }
        if (cr != CURLE_OK || r->status < 300 || r->status >= 400 || r->location[0] != '/') {
            free(cur);
            return cr == CURLE_OK ? 0 : network_error(e, url, cr, errbuf);
        }
        /* relative redirect: same scheme and host */
        const char *host_end = strchr(strstr(cur, "://") + 3, '/');
        size_t hl = host_end ? (size_t)(host_end - cur) : strlen(cur);
        size_t nl = hl + strlen(r->location) + 1;
        char *next = malloc(nl);
        if (next) snprintf(next, nl, "%.*s%s", (int)hl, cur, r->location);
        free(cur);
        cur = next;
    }
    free(cur);
    return ptts_fail(e, cur ? PTTS_E_NETWORK : PTTS_E_NOMEM, "%s: too many redirects", url);
}
