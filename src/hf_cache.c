/*
 * hf_cache.c - the caches of download.c: the Hugging Face hub layout (download.h) with its refs,
 * snapshot links and huggingface_hub's lock files, and ~/.cache/pocket_tts for plain URLs.
 * Where they are comes from the environment as huggingface_hub reads it; a file is fetched
 * beside its final name (http_get.c), checked (size, and sha256 for LFS blobs) and renamed into
 * place under an exclusive lock, so two processes fetching one file do it once.
 */
#include "hf_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sha256.h"

/* ---- environment and files ------------------------------------------------------------------ */

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
                    int64_t size, const char *sha256, const char *name,
                    const ptts_http_progress *progress, int *http_status, ptts_error *e) {
    int rc = mkdirs_parent(final, e);
    if (rc) return rc;
    int lock = lock_file(lock_path);
    int64_t have;
    if (ptts_file_size(final, &have) == 0 &&
        (size < 0 || have == size)) { /* another process did it */
        unlock_file(lock);
        return 0;
    }
    char *tmp = xfmt("%s.incomplete", final);
    if (!tmp) {
        unlock_file(lock);
        return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    }
    rc = ptts_http_get_file(url, token, tmp, size, name, progress, http_status, e);
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
    if (!rc && progress && progress->fn && name) {
        int64_t done = 0;
        ptts_file_size(final, &done);
        progress->fn(progress->user, name, done, done); /* the final call: done == total */
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
    /* every segment of the repo and the path must be a plain name (a trailing '/' too: its
     * empty last segment is refused) */
    for (const char *p = s;;) {
        const char *q = memchr(p, '/', (size_t)(s + body - p));
        size_t n = q ? (size_t)(q - p) : (size_t)(s + body - p);
        if (bad_segment(p, n))
            return ptts_fail(e, PTTS_E_INVALID, "%s: empty, '.' or '..' path segment", url);
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)p[i] < 0x20)
                return ptts_fail(e, PTTS_E_INVALID, "%s: control character in the URL", url);
        if (!q) break;
        p = q + 1;
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

int ptts_hf_url_parse(const char *url, char **repo, char **file, char **rev, ptts_error *e) {
    *repo = *file = *rev = NULL;
    if (strncmp(url, "hf://", 5)) return ptts_fail(e, PTTS_E_INVALID, "not an hf:// URL");
    hf_ref h;
    int rc = hf_parse(&h, url, e);
    if (rc) return rc;
    *repo = h.repo;
    *file = h.file;
    *rev = h.rev;
    free(h.repo_dir);
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
    if (p && ptts_file_size(p, &sz) == 0) return p;
    free(p);
    return NULL;
}

static char *resolve_url(const hf_ref *h) {
    char *ep = endpoint();
    char *file = ptts_http_escape_path(h->file);
    char *rev = ptts_http_escape(h->rev); /* refs/pr/1 is one segment: %2F */
    char *url = ep && file && rev ? xfmt("%s/%s/resolve/%s/%s", ep, h->repo, rev, file) : NULL;
    free(rev);
    free(file);
    free(ep);
    return url;
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

int ptts_hf_fetch(char **out, const char *url, const ptts_http_progress *progress, int *http_status,
                  ptts_error *e) {
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
    ptts_http_response r;
    ptts_error he = {0};
    if ((rc = ptts_http_head(rurl, token, progress, &r, &he))) {
        if (rc == PTTS_E_NETWORK && (cached = hf_cached(&h))) { /* a branch seen before */
            ptts_log(PTTS_LOG_INFO, "%s: using the cached %s", he.msg, url);
            rc = 0;
        } else if (e) {
            *e = he;
        }
        goto done;
    }
    if (r.status >= 400) {
        if (http_status) *http_status = (int)r.status;
        rc = ptts_http_error(e, r.status, &r, url, rurl, token != NULL);
        goto done;
    }
    char etag[192];
    ptts_http_normalize_etag(etag, sizeof etag, r.linked_etag[0] ? r.linked_etag : r.etag);
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
    if (ptts_file_size(blob, &have) != 0 || (size >= 0 && have != size)) {
        rc = fetch_to(rurl, token, blob, lock, size, is_hex(etag, 64) ? etag : NULL, h.file,
                      progress, http_status, e);
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
char *ptts_url_cache_path(const char *url) {
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

int ptts_url_fetch(char **out, const char *url, const ptts_http_progress *progress,
                   int *http_status, ptts_error *e) {
    char *path = ptts_url_cache_path(url);
    if (!path) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    int64_t sz;
    if (ptts_file_size(path, &sz) == 0) {
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
    int rc = lock ? fetch_to(url, NULL, path, lock, -1, NULL, slash ? slash + 1 : url, progress,
                             http_status, e)
                  : ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    free(lock);
    if (rc) {
        free(path);
        return rc;
    }
    *out = path;
    return 0;
}

char *ptts_hf_cached(const char *url) {
    hf_ref h;
    if (hf_parse(&h, url, NULL)) return NULL;
    char *p = hf_cached(&h);
    hf_ref_free(&h);
    return p;
}
