/*
 * download.c - hf:// and http(s) files through libcurl into the Hugging Face hub cache (see
 * download.h for the layout). One HEAD request to the hub learns the commit, the etag (sha256
 * of LFS files) and the size; the GET follows the hub's redirect to its CDN.
 */
#include "download.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sha256.h"

#define MAX_ATTEMPTS 5

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

/* The callback's answer (nonzero: cancel), 0 when none is set. */
static int report_progress(const char *name, int64_t done, int64_t total) {
    pthread_mutex_lock(&g_progress_mu);
    int r = g_progress_fn ? g_progress_fn(g_progress_user, name, done, total) : 0;
    pthread_mutex_unlock(&g_progress_mu);
    return r;
}

/* ---- strings and paths ---------------------------------------------------------------------- */

static char *xfmt(const char *fmt, ...) PTTS_PRINTF(1, 2);
static char *xfmt(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s) return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

int ptts_is_url(const char *s) {
    return s &&
           (!strncmp(s, "hf://", 5) || !strncmp(s, "http://", 7) || !strncmp(s, "https://", 8));
}

static const char *env(const char *name) {
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

int ptts_offline(void) {
    const char *v = env("HF_HUB_OFFLINE");
    return v && (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") ||
                 !strcasecmp(v, "on"));
}

/* $HF_HOME, else $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface. */
static char *hf_home(void) {
    if (env("HF_HOME")) return ptts_strdup(env("HF_HOME"));
    if (env("XDG_CACHE_HOME")) return xfmt("%s/huggingface", env("XDG_CACHE_HOME"));
    return xfmt("%s/.cache/huggingface", env("HOME") ? env("HOME") : ".");
}

static char *hub_dir(void) {
    if (env("HF_HUB_CACHE")) return ptts_strdup(env("HF_HUB_CACHE"));
    if (env("HUGGINGFACE_HUB_CACHE")) return ptts_strdup(env("HUGGINGFACE_HUB_CACHE"));
    char *h = hf_home();
    char *r = h ? xfmt("%s/hub", h) : NULL;
    free(h);
    return r;
}

static char *endpoint(void) {
    char *s = ptts_strdup(env("HF_ENDPOINT") ? env("HF_ENDPOINT") : "https://huggingface.co");
    if (s)
        for (size_t n = strlen(s); n > 0 && s[n - 1] == '/'; n--)
            s[n - 1] = 0;
    return s;
}

/* HF_TOKEN, else the token file; NULL when there is none. */
static char *hf_token(void) {
    if (env("HF_TOKEN")) return ptts_strdup(env("HF_TOKEN"));
    char *path = NULL;
    if (env("HF_TOKEN_PATH")) {
        path = ptts_strdup(env("HF_TOKEN_PATH"));
    } else {
        char *h = hf_home();
        path = h ? xfmt("%s/token", h) : NULL;
        free(h);
    }
    if (!path) return NULL;
    FILE *f = fopen(path, "r");
    free(path);
    if (!f) return NULL;
    char buf[512];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *s = buf, *end = buf + n;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' || end[-1] == '\r'))
        *--end = 0;
    return *s ? ptts_strdup(s) : NULL;
}

static int file_size(const char *path, int64_t *size) {
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
    *size = (int64_t)st.st_size;
    return 0;
}

/* mkdir -p of the folder `dir`, with a message that says how to get a writable cache. */
static int mkdirs(const char *dir, ptts_error *e) {
    char *p = ptts_strdup(dir);
    if (!p) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s) continue;
        char c = *s;
        *s = 0;
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            int err = errno;
            int rc = ptts_fail(e, PTTS_E_IO,
                               "cannot create the cache folder %s: %s (set HF_HOME, or HOME for "
                               "http downloads, to a writable folder)",
                               p, strerror(err));
            free(p);
            return rc;
        }
        struct stat st;
        if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
            int rc = ptts_fail(e, PTTS_E_IO,
                               "cannot create the cache folder %s: a file is in the way (set "
                               "HF_HOME, or HOME for http downloads, to a writable folder)",
                               p);
            free(p);
            return rc;
        }
        if (!c) break;
        *s = c;
    }
    free(p);
    return 0;
}

static int mkdirs_parent(const char *path, ptts_error *e) {
    char *d = ptts_strdup(path);
    if (!d) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    char *slash = strrchr(d, '/');
    int rc = 0;
    if (slash && slash != d) {
        *slash = 0;
        rc = mkdirs(d, e);
    }
    free(d);
    return rc;
}

static int is_hex(const char *s, size_t n) {
    if (strlen(s) != n) return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
    return 1;
}

/* ---- HTTP --------------------------------------------------------------------------------- */

static pthread_once_t g_curl_once = PTHREAD_ONCE_INIT;
static CURLcode g_curl_init_rc;
static void curl_init_once(void) { g_curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

typedef struct response {
    long status;
    char commit[128], etag[192], linked_etag[192], error_code[64], location[2048];
    int64_t content_length, linked_size, range_start, range_total;
} response;

static void response_reset(response *r) {
    memset(r, 0, sizeof *r);
    r->content_length = r->linked_size = r->range_start = r->range_total = -1;
}

static void copy_value(char *dst, size_t cap, const char *v, size_t n) {
    if (n >= cap) n = cap - 1;
    memcpy(dst, v, n);
    dst[n] = 0;
}

static size_t on_header(char *buf, size_t size, size_t nitems, void *user) {
    response *r = user;
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
static void normalize_etag(char *dst, size_t cap, const char *etag) {
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
    const char *name; /* for the progress callback */
    int64_t total;
    double last_progress;
    int cancelled;
    response *r;
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
    if (!t->name) return 0;
    double now = ptts_now();
    if (now - t->last_progress < 0.1) return 0;
    t->last_progress = now;
    int64_t total = t->limit >= 0 ? t->limit : (dltotal > 0 ? t->base + (int64_t)dltotal : -1);
    if (report_progress(t->name, t->base + (int64_t)dlnow, total)) {
        t->cancelled = 1;
        return 1;
    }
    return 0;
}

static CURL *easy_new(const char *url, const char *token, struct curl_slist **hdrs, response *r) {
    CURL *c = curl_easy_init();
    if (!c) return NULL;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "pocket-tts-c/" PTTS_VERSION);
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
        char *h = xfmt("Authorization: Bearer %s", token);
        if (h) {
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
static int http_error(ptts_error *e, long status, const response *r, const char *what,
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
static int get_file(const char *url, const char *token, const char *tmp, int64_t size,
                    const char *name, int *http_status, ptts_error *e) {
    char errbuf[CURL_ERROR_SIZE];
    int rc = 0;
    for (int attempt = 0;; attempt++) {
        int64_t have = 0;
        if (file_size(tmp, &have) != 0) have = 0;
        if (size >= 0 && have > size) {
            if (truncate(tmp, 0) != 0)
                return ptts_fail(e, PTTS_E_IO, "cannot truncate %s: %s", tmp, strerror(errno));
            have = 0;
        }
        if (size >= 0 && have == size) return 0;
        FILE *f = fopen(tmp, "ab");
        if (!f)
            return ptts_fail(e, PTTS_E_IO,
                             "cannot write %s: %s (set HF_HOME to a writable "
                             "folder)",
                             tmp, strerror(errno));
        response r;
        response_reset(&r);
        struct curl_slist *hdrs = NULL;
        CURL *c = easy_new(url, token, &hdrs, &r);
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
                      .name = name,
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
            if (size < 0) { /* the size the server gave for this response */
                int64_t total = r.status == 206         ? r.range_total
                                : r.content_length >= 0 ? r.content_length
                                                        : -1;
                if (total >= 0) {
                    int64_t now = 0;
                    file_size(tmp, &now);
                    if (now != total)
                        return ptts_fail(e, PTTS_E_NETWORK,
                                         "downloading %s: got %lld of %lld bytes", url,
                                         (long long)now, (long long)total);
                }
                return 0;
            }
            int64_t now = 0;
            file_size(tmp, &now);
            if (now == size) return 0;
            rc = ptts_fail(e, PTTS_E_NETWORK, "downloading %s: got %lld of %lld bytes", url,
                           (long long)now, (long long)size);
        } else if (cr == CURLE_OK || (r.status >= 400 && !t.started)) {
            if (http_status) *http_status = (int)r.status;
            if (r.status < 500 || attempt + 1 >= MAX_ATTEMPTS)
                return http_error(e, r.status, &r, url, url, token != NULL);
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
        ptts_log(PTTS_LOG_INFO, "%s: transfer interrupted (%s), resuming", name ? name : url,
                 errbuf[0] ? errbuf : curl_easy_strerror(cr));
        sleep_ms(100L << attempt);
    }
}

static int sha256_file(const char *path, char hex[65]) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    enum { BUF = 1 << 16 };
    unsigned char *buf = malloc(BUF);
    if (!buf) {
        fclose(f);
        return -1;
    }
    ptts_sha256 s;
    ptts_sha256_init(&s);
    size_t n;
    while ((n = fread(buf, 1, BUF, f)) > 0)
        ptts_sha256_update(&s, buf, n);
    int bad = ferror(f);
    fclose(f);
    free(buf);
    if (bad) return -1;
    uint8_t d[32];
    ptts_sha256_final(&s, d);
    ptts_sha256_to_hex(d, hex);
    return 0;
}

/* An exclusive lock on `lock_path` held until close (another process fetching the same file
 * waits). Returns the descriptor or -1 (locking is then skipped: the transfer still works). */
static int lock_file(const char *lock_path) {
    if (mkdirs_parent(lock_path, NULL) != 0) return -1;
    int fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    if (flock(fd, LOCK_EX) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void unlock_file(int fd) {
    if (fd >= 0) close(fd);
}

/* Download `url` to `final` via `final`.incomplete, verifying size and sha256 (when given). */
static int fetch_to(const char *url, const char *token, const char *final, const char *lock_path,
                    int64_t size, const char *sha256, const char *name, int *http_status,
                    ptts_error *e) {
    int rc = mkdirs_parent(final, e);
    if (rc) return rc;
    int lock = lock_file(lock_path);
    int64_t have;
    if (file_size(final, &have) == 0 && (size < 0 || have == size)) { /* another process did it */
        unlock_file(lock);
        return 0;
    }
    char *tmp = xfmt("%s.incomplete", final);
    if (!tmp) {
        unlock_file(lock);
        return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    }
    rc = get_file(url, token, tmp, size, name, http_status, e);
    if (!rc && sha256) {
        char hex[65];
        if (sha256_file(tmp, hex) != 0) {
            rc = ptts_fail(e, PTTS_E_IO, "cannot read back %s: %s", tmp, strerror(errno));
        } else if (strcmp(hex, sha256) != 0) {
            unlink(tmp);
            rc = ptts_fail(e, PTTS_E_NETWORK,
                           "the download of %s is corrupt: its sha256 is %s but the server "
                           "announced %s; the file was deleted, try again",
                           url, hex, sha256);
        }
    }
    if (!rc && rename(tmp, final) != 0)
        rc = ptts_fail(e, PTTS_E_IO, "cannot rename %s to %s: %s", tmp, final, strerror(errno));
    if (!rc && name) {
        int64_t done = 0;
        file_size(final, &done);
        report_progress(name, done, done); /* the final call: done == total */
    }
    free(tmp);
    unlock_file(lock);
    return rc;
}

/* ---- hf:// -------------------------------------------------------------------------------- */

typedef struct hf_ref {
    char *repo, *file, *rev; /* "org/name", "path/in/repo", revision ("main" if none) */
    char *repo_dir;          /* {hub}/models--org--name */
} hf_ref;

static void hf_ref_free(hf_ref *h) {
    free(h->repo);
    free(h->file);
    free(h->rev);
    free(h->repo_dir);
}

static int bad_segment(const char *s, size_t n) {
    return n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.');
}

static int hf_parse(hf_ref *h, const char *url, ptts_error *e) {
    memset(h, 0, sizeof *h);
    const char *s = url + 5;
    const char *at = strrchr(s, '@');
    size_t body = at ? (size_t)(at - s) : strlen(s);
    const char *slash1 = memchr(s, '/', body);
    const char *slash2 = slash1 ? memchr(slash1 + 1, '/', body - (size_t)(slash1 + 1 - s)) : NULL;
    if (!slash2 || (at && !at[1]))
        return ptts_fail(e, PTTS_E_INVALID,
                         "%s: expected hf://ORG/NAME/PATH or hf://ORG/NAME/PATH@REVISION", url);
    /* every segment of the repo and the path must be a plain name */
    for (const char *p = s; p < s + body;) {
        const char *q = memchr(p, '/', (size_t)(s + body - p));
        size_t n = q ? (size_t)(q - p) : (size_t)(s + body - p);
        if (bad_segment(p, n))
            return ptts_fail(e, PTTS_E_INVALID, "%s: empty, '.' or '..' path segment", url);
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)p[i] < 0x20)
                return ptts_fail(e, PTTS_E_INVALID, "%s: control character in the URL", url);
        p += n + 1;
    }
    const char *rev = at ? at + 1 : "main";
    if (strstr(rev, "..") || rev[0] == '/' || strchr(rev, '\\'))
        return ptts_fail(e, PTTS_E_INVALID, "%s: bad revision '%s'", url, rev);
    h->repo = xfmt("%.*s", (int)(slash2 - s), s);
    h->file = xfmt("%.*s", (int)(s + body - slash2 - 1), slash2 + 1);
    h->rev = ptts_strdup(rev);
    char *hub = hub_dir();
    h->repo_dir = hub ? xfmt("%s/models--%.*s--%.*s", hub, (int)(slash1 - s), s,
                             (int)(slash2 - slash1 - 1), slash1 + 1)
                      : NULL;
    free(hub);
    if (!h->repo || !h->file || !h->rev || !h->repo_dir) {
        hf_ref_free(h);
        return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    }
    return 0;
}

static char *read_ref(const hf_ref *h) {
    char *p = xfmt("%s/refs/%s", h->repo_dir, h->rev);
    if (!p) return NULL;
    FILE *f = fopen(p, "r");
    free(p);
    if (!f) return NULL;
    char buf[128] = {0};
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' ' || buf[n - 1] == '\r'))
        buf[--n] = 0;
    return n ? ptts_strdup(buf) : NULL;
}

/* The cached snapshot file of `h` (without any network), or NULL. */
static char *hf_cached(const hf_ref *h) {
    char *commit = is_hex(h->rev, 40) ? ptts_strdup(h->rev) : read_ref(h);
    if (!commit) return NULL;
    char *p = xfmt("%s/snapshots/%s/%s", h->repo_dir, commit, h->file);
    free(commit);
    int64_t sz;
    if (p && file_size(p, &sz) == 0) return p;
    free(p);
    return NULL;
}

static char *escape_path(CURL *c, const char *path) {
    /* each segment percent-encoded, slashes kept */
    size_t cap = strlen(path) * 3 + 1;
    char *out = malloc(cap);
    if (!out) return NULL;
    out[0] = 0;
    const char *p = path;
    for (;;) {
        const char *q = strchr(p, '/');
        size_t n = q ? (size_t)(q - p) : strlen(p);
        char *seg = curl_easy_escape(c, p, (int)n);
        if (!seg) {
            free(out);
            return NULL;
        }
        strcat(out, seg);
        curl_free(seg);
        if (!q) break;
        strcat(out, "/");
        p = q + 1;
    }
    return out;
}

static char *resolve_url(const hf_ref *h) {
    CURL *c = curl_easy_init();
    char *ep = endpoint();
    char *file = c ? escape_path(c, h->file) : NULL;
    char *rev = c ? curl_easy_escape(c, h->rev, 0) : NULL;
    char *url = ep && file && rev ? xfmt("%s/%s/resolve/%s/%s", ep, h->repo, rev, file) : NULL;
    curl_free(rev);
    free(file);
    free(ep);
    if (c) curl_easy_cleanup(c);
    return url;
}

/* HEAD the resolve URL: follows relative redirects (a renamed repository), stops at the
 * absolute one to the CDN, whose headers carry the metadata. */
static int hf_head(const char *url, const char *token, response *r, CURLcode *cr, char *errbuf) {
    char *cur = ptts_strdup(url);
    for (int hops = 0; cur && hops < 10; hops++) {
        struct curl_slist *hdrs = NULL;
        response_reset(r);
        CURL *c = easy_new(cur, token, &hdrs, r);
        if (!c) break;
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
        curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
        errbuf[0] = 0;
        *cr = curl_easy_perform(c);
        curl_easy_cleanup(c);
        curl_slist_free_all(hdrs);
        if (*cr != CURLE_OK || r->status < 300 || r->status >= 400 || r->location[0] != '/') {
            free(cur);
            return 0;
        }
        /* relative redirect: same scheme and host */
        const char *host_end = strchr(strstr(cur, "://") + 3, '/');
        size_t hl = host_end ? (size_t)(host_end - cur) : strlen(cur);
        char *next = xfmt("%.*s%s", (int)hl, cur, r->location);
        free(cur);
        cur = next;
    }
    free(cur);
    return -1;
}

static int write_ref(const hf_ref *h, const char *commit, ptts_error *e) {
    char *cached = read_ref(h);
    int same = cached && !strcmp(cached, commit);
    free(cached);
    if (same) return 0;
    char *p = xfmt("%s/refs/%s", h->repo_dir, h->rev);
    char *tmp = p ? xfmt("%s.tmp%ld", p, (long)getpid()) : NULL;
    int rc = 0;
    if (!p || !tmp) {
        rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    } else if (!(rc = mkdirs_parent(p, e))) {
        FILE *f = fopen(tmp, "w");
        if (!f || fputs(commit, f) < 0 || fclose(f) != 0 || rename(tmp, p) != 0) {
            rc = ptts_fail(e, PTTS_E_IO, "cannot write %s: %s", p, strerror(errno));
            unlink(tmp);
        }
    }
    free(tmp);
    free(p);
    return rc;
}

static int link_snapshot(const hf_ref *h, const char *commit, const char *etag, char **out,
                         ptts_error *e) {
    char *snap = xfmt("%s/snapshots/%s/%s", h->repo_dir, commit, h->file);
    if (!snap) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    int rc = mkdirs_parent(snap, e);
    if (rc) {
        free(snap);
        return rc;
    }
    int depth = 2;
    for (const char *p = h->file; *p; p++)
        depth += *p == '/';
    size_t cap = (size_t)depth * 3 + strlen(etag) + 8;
    char *target = malloc(cap);
    if (!target) {
        free(snap);
        return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    }
    target[0] = 0;
    for (int i = 0; i < depth; i++)
        strcat(target, "../");
    strcat(target, "blobs/");
    strcat(target, etag);
    struct stat st;
    if (lstat(snap, &st) == 0) unlink(snap);
    if (symlink(target, snap) != 0) {
        char *blob = xfmt("%s/blobs/%s", h->repo_dir, etag);
        if (!blob || link(blob, snap) != 0)
            rc = ptts_fail(e, PTTS_E_IO, "cannot link %s: %s", snap, strerror(errno));
        free(blob);
    }
    free(target);
    if (rc) {
        free(snap);
        return rc;
    }
    *out = snap;
    return 0;
}

static int hf_fetch(char **out, const char *url, int *http_status, ptts_error *e) {
    hf_ref h;
    int rc = hf_parse(&h, url, e);
    if (rc) return rc;
    char *cached = NULL, *rurl = NULL, *token = NULL;
    if (is_hex(h.rev, 40) && (cached = hf_cached(&h))) goto done;
    if (ptts_offline()) {
        if ((cached = hf_cached(&h))) goto done;
        rc = ptts_fail(e, PTTS_E_NOT_FOUND,
                       "%s is not in the cache (%s) and HF_HUB_OFFLINE is set: run once with the "
                       "network to download it",
                       url, h.repo_dir);
        goto done;
    }
    rurl = resolve_url(&h);
    token = hf_token();
    if (!rurl) {
        rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory");
        goto done;
    }
    response r;
    CURLcode cr = CURLE_OK;
    char errbuf[CURL_ERROR_SIZE];
    if (hf_head(rurl, token, &r, &cr, errbuf) != 0) {
        rc = ptts_fail(e, PTTS_E_NETWORK, "%s: too many redirects", rurl);
        goto done;
    }
    if (cr != CURLE_OK) {
        if ((cached = hf_cached(&h))) { /* a branch seen before: use what the cache has */
            ptts_log(PTTS_LOG_INFO, "cannot reach %s (%s): using the cached %s", rurl,
                     curl_easy_strerror(cr), url);
            goto done;
        }
        rc = network_error(e, rurl, cr, errbuf);
        goto done;
    }
    if (r.status >= 400) {
        if (http_status) *http_status = (int)r.status;
        rc = http_error(e, r.status, &r, url, rurl, token != NULL);
        goto done;
    }
    char etag[192];
    normalize_etag(etag, sizeof etag, r.linked_etag[0] ? r.linked_etag : r.etag);
    const char *commit = r.commit[0] ? r.commit : (is_hex(h.rev, 40) ? h.rev : NULL);
    int64_t size = r.linked_size >= 0 ? r.linked_size : r.content_length;
    if (!commit || !etag[0] || strchr(etag, '/') || !strcmp(etag, "..") || !strcmp(etag, ".")) {
        rc = ptts_fail(e, PTTS_E_NETWORK,
                       "%s: the server's answer has no commit or etag: is %s a Hugging Face "
                       "endpoint?",
                       url, rurl);
        goto done;
    }
    if (strcmp(commit, h.rev) && (rc = write_ref(&h, commit, e))) goto done;
    char *blob = xfmt("%s/blobs/%s", h.repo_dir, etag);
    /* huggingface_hub's lock: {hub}/.locks/models--org--name/{etag}.lock */
    const char *leaf = strrchr(h.repo_dir, '/');
    char *lock =
        leaf ? xfmt("%.*s/.locks/%s/%s.lock", (int)(leaf - h.repo_dir), h.repo_dir, leaf + 1, etag)
             : NULL;
    if (!blob || !lock) {
        free(blob);
        free(lock);
        rc = ptts_fail(e, PTTS_E_NOMEM, "out of memory");
        goto done;
    }
    int64_t have;
    if (file_size(blob, &have) != 0 || (size >= 0 && have != size)) {
        rc = fetch_to(rurl, token, blob, lock, size, is_hex(etag, 64) ? etag : NULL, h.file,
                      http_status, e);
    }
    free(blob);
    free(lock);
    if (!rc) rc = link_snapshot(&h, commit, etag, &cached, e);
done:
    free(token);
    free(rurl);
    hf_ref_free(&h);
    if (!rc) *out = cached;
    return rc;
}

/* ---- http(s) ------------------------------------------------------------------------------ */

/* ~/.cache/pocket_tts/{sha256(url)}.{extension}, the reference's name for a downloaded URL
 * (the extension is kept when it is a plain one: letters and digits, at most 8). */
static char *http_cache_path(const char *url) {
    char hex[65];
    ptts_sha256_hex(url, strlen(url), hex);
    const char *dot = strrchr(url, '.');
    int ext_ok = dot && dot[1] && strlen(dot + 1) <= 8;
    for (const char *p = dot ? dot + 1 : ""; ext_ok && *p; p++)
        ext_ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9');
    const char *home = env("HOME") ? env("HOME") : ".";
    return ext_ok ? xfmt("%s/.cache/pocket_tts/%s.%s", home, hex, dot + 1)
                  : xfmt("%s/.cache/pocket_tts/%s", home, hex);
}

static int http_fetch(char **out, const char *url, int *http_status, ptts_error *e) {
    char *path = http_cache_path(url);
    if (!path) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    int64_t sz;
    if (file_size(path, &sz) == 0) {
        *out = path;
        return 0;
    }
    if (ptts_offline()) {
        free(path);
        return ptts_fail(e, PTTS_E_NOT_FOUND,
                         "%s is not in the cache and HF_HUB_OFFLINE is set: run once with the "
                         "network to download it",
                         url);
    }
    char *lock = xfmt("%s.lock", path);
    const char *slash = strrchr(url, '/');
    int rc =
        lock ? fetch_to(url, NULL, path, lock, -1, NULL, slash ? slash + 1 : url, http_status, e)
             : ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    free(lock);
    if (rc) {
        free(path);
        return rc;
    }
    *out = path;
    return 0;
}

/* ---- entry points -------------------------------------------------------------------------- */

int ptts_download(char **path, const char *url, int *http_status, ptts_error *e) {
    *path = NULL;
    if (http_status) *http_status = 0;
    if (!url || !*url) return ptts_fail(e, PTTS_E_INVALID, "empty path or URL");
    if (!ptts_is_url(url)) {
        *path = ptts_strdup(url);
        return *path ? 0 : ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    }
    pthread_once(&g_curl_once, curl_init_once);
    if (g_curl_init_rc != CURLE_OK)
        return ptts_fail(e, PTTS_E_NETWORK, "libcurl cannot start: %s",
                         curl_easy_strerror(g_curl_init_rc));
    return !strncmp(url, "hf://", 5) ? hf_fetch(path, url, http_status, e)
                                     : http_fetch(path, url, http_status, e);
}

int ptts_download_cached(char **path, const char *url) {
    *path = NULL;
    if (!ptts_is_url(url)) {
        int64_t sz;
        if (file_size(url, &sz) != 0) return 0;
        *path = ptts_strdup(url);
        return *path != NULL;
    }
    if (strncmp(url, "hf://", 5) != 0) {
        char *p = http_cache_path(url);
        int64_t sz;
        if (p && file_size(p, &sz) == 0) {
            *path = p;
            return 1;
        }
        free(p);
        return 0;
    }
    hf_ref h;
    if (hf_parse(&h, url, NULL)) return 0;
    *path = hf_cached(&h);
    hf_ref_free(&h);
    return *path != NULL;
}

int ptts_fetch(char **path, const char *path_or_url, ptts_error *e) {
    return ptts_download(path, path_or_url, NULL, e);
}

int ptts_fetch_cached(char **path, const char *path_or_url) {
    return ptts_download_cached(path, path_or_url);
}
