/*
 * safetensors_write.c - the safetensors writer (safetensors.h): tensors stored back to back in
 * the given order (no gaps: the reference reader rejects holes), after a header padded with
 * spaces to a multiple of 8 bytes, so the data section starts 8-byte aligned in the file.
 * Integers are printed here (cJSON would print 1e+15), strings JSON-escaped, and every input is
 * validated before the file is created. The file is written beside its final name, fsynced and
 * renamed over it, then the folder is fsynced, so a failure never leaves a partial file.
 */
#define _POSIX_C_SOURCE 200809L
#include "safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ST_MAX_INT 9007199254740992.0 /* 2^53: the largest dim a JSON reader holds exactly */

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

typedef struct {
    char *p;
    size_t len, cap;
    int oom;
} st_buf;

static void buf_put(st_buf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

static void buf_str(st_buf *b, const char *s) { buf_put(b, s, strlen(s)); }

static void buf_json(st_buf *b, const char *s) {
    buf_put(b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            buf_put(b, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            buf_put(b, esc, 6);
        } else {
            buf_put(b, (const char *)&c, 1);
        }
    }
    buf_put(b, "\"", 1);
}

/* Well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF): JSON readers of
 * the reference reject anything else. */
static int utf8_ok(const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p;
        int n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
        if (n < 0) return 0;
        uint32_t cp = n == 0 ? c : n == 1 ? (c & 0x1f) : n == 2 ? (c & 0x0f) : (c & 0x07);
        for (int k = 1; k <= n; k++) {
            if ((p[k] & 0xc0) != 0x80) return 0;
            cp = (cp << 6) | (p[k] & 0x3f);
        }
        static const uint32_t min_cp[4] = {0, 0x80, 0x800, 0x10000};
        if (cp < min_cp[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
        p += n + 1;
    }
    return 1;
}

static int write_all(int fd, const void *p, size_t n) {
    const uint8_t *q = p;
    while (n > 0) {
        size_t chunk = n < ((size_t)1 << 30) ? n : ((size_t)1 << 30);
        ssize_t w = write(fd, q, chunk);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        q += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Input checks; fills nbytes[i]. */
static int write_check(const char *path, const st_out_tensor *ts, int n, const char *const *meta,
                       uint64_t *nbytes, ptts_error *e) {
    for (int i = 0; i < n; i++) {
        const st_out_tensor *t = &ts[i];
        if (!t->name || !t->name[0] || !utf8_ok(t->name) || strcmp(t->name, "__metadata__") == 0)
            return ptts_fail(e, PTTS_E_INVALID, "%s: tensor %d: invalid name", path, i);
        if ((unsigned)t->dtype >= ST_DTYPE_COUNT)
            return ptts_fail(e, PTTS_E_INVALID, "%s: tensor %s: invalid dtype %d", path, t->name,
                             (int)t->dtype);
        if (t->ndim < 0 || t->ndim > ST_MAX_DIMS)
            return ptts_fail(e, PTTS_E_INVALID, "%s: tensor %s: invalid ndim %d", path, t->name,
                             t->ndim);
        uint64_t prod = 1;
        int zero = 0;
        for (int k = 0; k < t->ndim; k++) {
            if (t->shape[k] < 0 || (double)t->shape[k] > ST_MAX_INT)
                return ptts_fail(e, PTTS_E_INVALID, "%s: tensor %s: invalid dim %lld", path,
                                 t->name, (long long)t->shape[k]);
            uint64_t v = (uint64_t)t->shape[k];
            if (v == 0) {
                zero = 1;
                continue;
            }
            if (prod > (uint64_t)(INT64_MAX / 8) / v)
                return ptts_fail(e, PTTS_E_INVALID, "%s: tensor %s: shape product overflows", path,
                                 t->name);
            prod *= v;
        }
        nbytes[i] = zero ? 0 : prod * st_dtype_size(t->dtype);
        if (nbytes[i] > SIZE_MAX)
            return ptts_fail(e, PTTS_E_INVALID, "%s: tensor %s: too large", path, t->name);
        if (nbytes[i] && !t->data)
            return ptts_fail(e, PTTS_E_INVALID, "%s: tensor %s: data is NULL", path, t->name);
    }
    const char **names = malloc(((size_t)n + 1) * sizeof *names);
    if (!names) return ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory", path);
    for (int i = 0; i < n; i++)
        names[i] = ts[i].name;
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    for (int i = 1; i < n; i++)
        if (strcmp(names[i - 1], names[i]) == 0) {
            int rc = ptts_fail(e, PTTS_E_INVALID, "%s: tensor %s: duplicate name", path, names[i]);
            free(names);
            return rc;
        }
    free(names);
    if (meta) {
        for (int i = 0; meta[i]; i += 2) {
            if (!meta[i + 1])
                return ptts_fail(e, PTTS_E_INVALID, "%s: metadata key \"%s\" has no value", path,
                                 meta[i]);
            if (!utf8_ok(meta[i]) || !utf8_ok(meta[i + 1]))
                return ptts_fail(e, PTTS_E_INVALID, "%s: metadata \"%s\" is not UTF-8", path,
                                 meta[i]);
            for (int j = 0; j < i; j += 2)
                if (strcmp(meta[i], meta[j]) == 0)
                    return ptts_fail(e, PTTS_E_INVALID, "%s: duplicate metadata key \"%s\"", path,
                                     meta[i]);
        }
    }
    return 0;
}

/* Make the rename durable: fsync the folder holding `path`. Best effort: the file itself is
 * complete and synced, and some file systems refuse fsync on a directory. */
static void sync_dir(const char *path) {
    const char *slash = strrchr(path, '/');
    char *dir = slash ? malloc((size_t)(slash - path) + 2) : NULL;
    if (slash && !dir) return;
    if (dir) {
        size_t l = slash == path ? 1 : (size_t)(slash - path);
        memcpy(dir, path, l);
        dir[l] = 0;
    }
    int fd = open(dir ? dir : ".", O_RDONLY | O_CLOEXEC);
    free(dir);
    if (fd < 0) return;
    (void)fsync(fd);
    close(fd);
}

int st_write(const char *path, const st_out_tensor *ts, int n, const char *const *meta,
             ptts_error *e) {
    if (!path || n < 0 || (n > 0 && !ts))
        return ptts_fail(e, PTTS_E_INVALID, "st_write: invalid arguments");
    uint64_t *nbytes = calloc((size_t)n + 1, sizeof *nbytes);
    if (!nbytes) return ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory", path);
    int rc = write_check(path, ts, n, meta, nbytes, e);
    if (rc != 0) {
        free(nbytes);
        return rc;
    }

    st_buf h = {0};
    char num[64];
    buf_str(&h, "{");
    int first = 1;
    if (meta && meta[0]) {
        buf_str(&h, "\"__metadata__\":{");
        for (int i = 0; meta[i]; i += 2) {
            if (i) buf_str(&h, ",");
            buf_json(&h, meta[i]);
            buf_str(&h, ":");
            buf_json(&h, meta[i + 1]);
        }
        buf_str(&h, "}");
        first = 0;
    }
    uint64_t off = 0;
    for (int i = 0; i < n; i++) {
        const st_out_tensor *t = &ts[i];
        if (!first) buf_str(&h, ",");
        first = 0;
        buf_json(&h, t->name);
        buf_str(&h, ":{\"dtype\":\"");
        buf_str(&h, st_dtype_name(t->dtype));
        buf_str(&h, "\",\"shape\":[");
        for (int k = 0; k < t->ndim; k++) {
            snprintf(num, sizeof num, "%s%lld", k ? "," : "", (long long)t->shape[k]);
            buf_str(&h, num);
        }
        snprintf(num, sizeof num, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)off,
                 (unsigned long long)(off + nbytes[i]));
        buf_str(&h, num);
        off += nbytes[i];
    }
    buf_str(&h, "}");
    while (!h.oom && (h.len % 8) != 0)
        buf_str(&h, " ");
    if (h.oom) {
        free(h.p);
        free(nbytes);
        return ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory for the header", path);
    }

    size_t tl = strlen(path) + 32;
    char *tmp = malloc(tl);
    if (!tmp) {
        free(h.p);
        free(nbytes);
        return ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory", path);
    }
    snprintf(tmp, tl, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        rc = ptts_fail(e, PTTS_E_IO, "%s: cannot create: %s", tmp, strerror(errno));
        goto out;
    }
    uint8_t len8[8];
    for (int k = 0; k < 8; k++)
        len8[k] = (uint8_t)((uint64_t)h.len >> (8 * k));
    int bad = write_all(fd, len8, 8) || write_all(fd, h.p, h.len);
    for (int i = 0; i < n && !bad; i++)
        bad = write_all(fd, ts[i].data, (size_t)nbytes[i]);
    if (!bad) bad = fsync(fd);
    if (bad) {
        rc = ptts_fail(e, PTTS_E_IO, "%s: write failed: %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        goto out;
    }
    if (close(fd) != 0) {
        rc = ptts_fail(e, PTTS_E_IO, "%s: close failed: %s", tmp, strerror(errno));
        unlink(tmp);
        goto out;
    }
    if (rename(tmp, path) != 0) {
        rc = ptts_fail(e, PTTS_E_IO, "%s: cannot rename to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
        goto out;
    }
    sync_dir(path);
out:
    free(tmp);
    free(h.p);
    free(nbytes);
    return rc;
}
