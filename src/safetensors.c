/*
 * safetensors.c - the safetensors reader (mmap + strict header validation); the writer is in
 * safetensors_write.c and the 16-bit float conversions in half.h.
 *
 * File layout: [u64 LE header length N][N bytes of JSON][data section]. Each JSON entry is
 * {"dtype": "F32", "shape": [d0, ...], "data_offsets": [begin, end]} with offsets relative to the
 * data section; "__metadata__" is an object of strings.
 *
 * Reader: every byte of the header is untrusted. Before a tensor is handed out we check the
 * header length against the file (and a 100 MB cap, as the reference library does), that the
 * JSON is one object starting with '{' followed only by padding whitespace, every entry's keys
 * and types, dims non-negative integers (<= 2^53, exact in a double) whose non-zero product
 * times 8 fits in int64, offsets inside the data section with end - begin = numel * dtype size,
 * no two tensors sharing a byte (sorted by offset), no duplicate names (cJSON keeps duplicate
 * keys, so they are found by sorting). Gaps between tensors are tolerated. Strings are copied
 * out of the cJSON tree, which is freed before st_open returns. Names are also kept in a sorted
 * index for st_find (O(log n)).
 *
 * Data pointers are NOT aligned in general (F32 tensors after a BF16 one with an odd count):
 * converters read through memcpy.
 */
#define _POSIX_C_SOURCE 200809L
#include "safetensors.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define ST_MAX_HEADER 100000000ull    /* the reference library's limit */
#define ST_MAX_INT 9007199254740992.0 /* 2^53: larger integers are not exact in a cJSON double */

struct st_file {
    char *path;
    const uint8_t *base;
    size_t size;
    int mapped;
    int n;
    st_tensor *tensors; /* header order */
    int *by_name;       /* indices sorted by name */
    int n_meta;
    const char **meta; /* key, value, key, value, ... */
    char *strings;     /* every name, key and value, NUL-terminated */
};

static const char *const dtype_names[ST_DTYPE_COUNT] = {"F64", "F32", "F16", "BF16", "I64",
                                                        "I32", "I16", "I8",  "U8",   "BOOL"};
static const size_t dtype_sizes[ST_DTYPE_COUNT] = {8, 4, 2, 2, 8, 4, 2, 1, 1, 1};
/* Valid in later versions of the format but not read here. */
static const char *const dtype_other[] = {"U16",     "U32",     "U64",     "F8_E4M3", "F8_E5M2",
                                          "F8_E8M0", "F6_E2M3", "F6_E3M2", "F4",      "C64"};

const char *st_dtype_name(st_dtype d) {
    return (unsigned)d < ST_DTYPE_COUNT ? dtype_names[d] : "?";
}

size_t st_dtype_size(st_dtype d) { return (unsigned)d < ST_DTYPE_COUNT ? dtype_sizes[d] : 0; }

/* ---- little-endian loads ------------------------------------------------------------------- */

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define ST_HOST_LE 0
#else
#define ST_HOST_LE 1
#endif

static uint64_t ld_le(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* ---- reader -------------------------------------------------------------------------------- */

void st_close(st_file *f) {
    if (!f) return;
    if (f->mapped && f->base) munmap((void *)f->base, f->size);
    free(f->path);
    free(f->tensors);
    free(f->by_name);
    free(f->meta);
    free(f->strings);
    free(f);
}

const char *st_path(const st_file *f) { return f->path; }
int st_count(const st_file *f) { return f->n; }
const st_tensor *st_at(const st_file *f, int i) {
    return i >= 0 && i < f->n ? &f->tensors[i] : NULL;
}

const st_tensor *st_find(const st_file *f, const char *name) {
    int lo = 0, hi = f->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        int c = strcmp(f->tensors[f->by_name[mid]].name, name);
        if (c == 0) return &f->tensors[f->by_name[mid]];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Compares the first string of two (array of) string pointers: sorts names, and metadata
 * (key, value) pairs by key. */
static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char *st_metadata(const st_file *f, const char *key) {
    int lo = 0, hi = f->n_meta;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        int c = strcmp(f->meta[2 * mid], key);
        if (c == 0) return f->meta[2 * mid + 1];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* qsort has no context argument in C11, so the sorted records carry what they compare. */
typedef struct {
    uint64_t begin, end;
    int idx;
} st_span;

static int cmp_span(const void *a, const void *b) {
    const st_span *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return 0;
}

typedef struct {
    const char *name;
    int idx;
} st_named;

static int cmp_named(const void *a, const void *b) {
    const st_named *x = a, *y = b;
    return strcmp(x->name, y->name);
}

/* A JSON number that is an integer in [0, 2^53]. */
static int json_uint(const cJSON *j, uint64_t *out) {
    if (!cJSON_IsNumber(j)) return -1;
    double d = j->valuedouble;
    if (!(d >= 0.0 && d <= ST_MAX_INT) || d != (double)(uint64_t)d) return -1;
    *out = (uint64_t)d;
    return 0;
}

static int json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Validate one tensor entry into *t (name and data set by the caller). */
static int parse_entry(const char *fname, const cJSON *ent, st_tensor *t, uint64_t *begin,
                       uint64_t *end, uint64_t data_size, ptts_error *e) {
    const char *tn = ent->string;
    if (!cJSON_IsObject(ent))
        return ptts_fail(e, PTTS_E_FORMAT, "%s: tensor %s: entry is not an object", fname, tn);
    const cJSON *jd = NULL, *js = NULL, *jo = NULL;
    for (const cJSON *c = ent->child; c; c = c->next) {
        const cJSON **slot = strcmp(c->string, "dtype") == 0          ? &jd
                             : strcmp(c->string, "shape") == 0        ? &js
                             : strcmp(c->string, "data_offsets") == 0 ? &jo
                                                                      : NULL;
        if (!slot) continue; /* unknown keys are tolerated, as by the reference reader */
        if (*slot)
            return ptts_fail(e, PTTS_E_FORMAT, "%s: tensor %s: duplicate key \"%s\"", fname, tn,
                             c->string);
        *slot = c;
    }
    if (!jd || !js || !jo)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: tensor %s: missing \"%s\"", fname, tn,
                         !jd   ? "dtype"
                         : !js ? "shape"
                               : "data_offsets");
    if (!cJSON_IsString(jd))
        return ptts_fail(e, PTTS_E_FORMAT, "%s: tensor %s: dtype is not a string", fname, tn);
    int d = -1;
    for (int k = 0; k < ST_DTYPE_COUNT; k++)
        if (strcmp(jd->valuestring, dtype_names[k]) == 0) d = k;
    if (d < 0) {
        for (size_t k = 0; k < sizeof dtype_other / sizeof *dtype_other; k++)
            if (strcmp(jd->valuestring, dtype_other[k]) == 0)
                return ptts_fail(e, PTTS_E_UNSUPPORTED, "%s: tensor %s: dtype %s is not supported",
                                 fname, tn, jd->valuestring);
        return ptts_fail(e, PTTS_E_FORMAT, "%s: tensor %s: unknown dtype \"%.40s\"", fname, tn,
                         jd->valuestring);
    }
    t->dtype = (st_dtype)d;

    if (!cJSON_IsArray(js))
        return ptts_fail(e, PTTS_E_FORMAT, "%s: tensor %s: shape is not an array", fname, tn);
    int nd = cJSON_GetArraySize(js);
    if (nd > ST_MAX_DIMS)
        return ptts_fail(e, PTTS_E_UNSUPPORTED, "%s: tensor %s: %d dimensions (at most %d)", fname,
                         tn, nd, ST_MAX_DIMS);
    t->ndim = nd;
    /* The product of the non-zero dims must leave room for 8-byte elements in an int64, so
     * that callers may multiply dims and sizes freely; a zero dim makes numel 0. */
    uint64_t prod = 1;
    int zero = 0, k = 0;
    for (const cJSON *c = js->child; c; c = c->next, k++) {
        uint64_t v;
        if (json_uint(c, &v) != 0)
            return ptts_fail(e, PTTS_E_FORMAT,
                             "%s: tensor %s: shape[%d] is not a non-negative integer", fname, tn,
                             k);
        t->shape[k] = (int64_t)v;
        if (v == 0) {
            zero = 1;
            continue;
        }
        if (prod > (uint64_t)(INT64_MAX / 8) / v)
            return ptts_fail(e, PTTS_E_FORMAT, "%s: tensor %s: shape product overflows", fname, tn);
        prod *= v;
    }
    t->numel = zero ? 0 : (int64_t)prod;

    if (!cJSON_IsArray(jo) || cJSON_GetArraySize(jo) != 2 || json_uint(jo->child, begin) != 0 ||
        json_uint(jo->child->next, end) != 0)
        return ptts_fail(e, PTTS_E_FORMAT,
                         "%s: tensor %s: data_offsets is not [begin, end] of non-negative integers",
                         fname, tn);
    if (*begin > *end || *end > data_size)
        return ptts_fail(e, PTTS_E_FORMAT,
                         "%s: tensor %s: data_offsets [%llu, %llu] out of range (data section is "
                         "%llu bytes)",
                         fname, tn, (unsigned long long)*begin, (unsigned long long)*end,
                         (unsigned long long)data_size);
    uint64_t want = (uint64_t)t->numel * dtype_sizes[d];
    if (*end - *begin != want)
        return ptts_fail(
            e, PTTS_E_FORMAT,
            "%s: tensor %s: data_offsets [%llu, %llu] hold %llu bytes, shape and dtype "
            "%s need %llu",
            fname, tn, (unsigned long long)*begin, (unsigned long long)*end,
            (unsigned long long)(*end - *begin), dtype_names[d], (unsigned long long)want);
    t->nbytes = (size_t)want;
    return 0;
}

/* Parse and validate the header of f->base[0..f->size); fills the tables of f. */
static int parse(st_file *f, ptts_error *e) {
    const char *fn = f->path;
    if (f->size == 0) return ptts_fail(e, PTTS_E_FORMAT, "%s: file is empty", fn);
    if (f->size < 8)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: file is too short (%zu bytes) for a header", fn,
                         f->size);
    uint64_t hl = ld_le(f->base, 8);
    if (hl > f->size - 8)
        return ptts_fail(e, PTTS_E_FORMAT,
                         "%s: header length %llu exceeds the file (%zu bytes after the length)", fn,
                         (unsigned long long)hl, f->size - 8);
    if (hl > ST_MAX_HEADER)
        return ptts_fail(e, PTTS_E_FORMAT, "%s: header length %llu is too large (limit %llu)", fn,
                         (unsigned long long)hl, ST_MAX_HEADER);
    const char *js = (const char *)f->base + 8;
    size_t jl = (size_t)hl;
    if (jl == 0 || js[0] != '{')
        return ptts_fail(e, PTTS_E_FORMAT, "%s: header does not start with '{'", fn);
    /* Raw control bytes are invalid JSON anywhere (inside strings too); cJSON would skip them
     * as whitespace, so refuse them here (NUL padding included). */
    for (size_t k = 0; k < jl; k++) {
        unsigned char c = (unsigned char)js[k];
        if (c < 0x20 && !json_space((char)c))
            return ptts_fail(e, PTTS_E_FORMAT,
                             "%s: header contains control byte 0x%02x at byte %zu", fn, c, k);
    }
    while (jl > 0 && json_space(js[jl - 1]))
        jl--; /* padding */
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(js, jl, &end, 0);
    if (!root) {
        size_t at = end && end >= js && end <= js + jl ? (size_t)(end - js) : 0;
        return ptts_fail(e, PTTS_E_FORMAT, "%s: header is not valid JSON (near byte %zu of %zu)",
                         fn, at, (size_t)hl);
    }
    int rc = 0;
    st_span *spans = NULL;
    st_named *names = NULL;
    if (end != js + jl) {
        rc = ptts_fail(e, PTTS_E_FORMAT, "%s: header has trailing bytes after the JSON object", fn);
        goto done;
    }
    if (!cJSON_IsObject(root)) {
        rc = ptts_fail(e, PTTS_E_FORMAT, "%s: header is not a JSON object", fn);
        goto done;
    }

    /* First pass: count, check __metadata__, size the string arena. */
    const cJSON *meta = NULL;
    size_t nstr = 0;
    int nt = 0;
    for (const cJSON *c = root->child; c; c = c->next) {
        if (strcmp(c->string, "__metadata__") == 0) {
            if (meta) {
                rc = ptts_fail(e, PTTS_E_FORMAT, "%s: duplicate \"__metadata__\"", fn);
                goto done;
            }
            meta = c;
            if (!cJSON_IsObject(c)) {
                rc = ptts_fail(e, PTTS_E_FORMAT, "%s: __metadata__ is not an object", fn);
                goto done;
            }
            for (const cJSON *m = c->child; m; m = m->next) {
                if (!cJSON_IsString(m)) {
                    rc = ptts_fail(e, PTTS_E_FORMAT,
                                   "%s: __metadata__ value \"%s\" is not a string", fn, m->string);
                    goto done;
                }
                nstr += strlen(m->string) + strlen(m->valuestring) + 2;
                f->n_meta++;
            }
            continue;
        }
        if (nt == INT_MAX / 2) {
            rc = ptts_fail(e, PTTS_E_FORMAT, "%s: too many tensors", fn);
            goto done;
        }
        nt++;
        nstr += strlen(c->string) + 1;
    }

    uint64_t data_size = (uint64_t)(f->size - 8 - (size_t)hl);
    const uint8_t *data = f->base + 8 + hl;
    f->tensors = calloc((size_t)nt + 1, sizeof *f->tensors);
    f->by_name = calloc((size_t)nt + 1, sizeof *f->by_name);
    f->meta = calloc(2 * (size_t)f->n_meta + 1, sizeof *f->meta);
    f->strings = malloc(nstr + 1);
    spans = calloc((size_t)nt + 1, sizeof *spans);
    names = calloc((size_t)nt + 1, sizeof *names);
    if (!f->tensors || !f->by_name || !f->meta || !f->strings || !spans || !names) {
        rc = ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory for %d tensors", fn, nt);
        goto done;
    }
    char *sp = f->strings;
    int i = 0;
    for (const cJSON *c = root->child; c; c = c->next) {
        if (c == meta) continue;
        st_tensor *t = &f->tensors[i];
        uint64_t b = 0, en = 0;
        if ((rc = parse_entry(fn, c, t, &b, &en, data_size, e)) != 0) goto done;
        size_t l = strlen(c->string) + 1;
        memcpy(sp, c->string, l);
        t->name = sp;
        sp += l;
        t->data = data + b;
        spans[i] = (st_span){b, en, i};
        names[i] = (st_named){t->name, i};
        i++;
    }
    f->n = nt;
    if (meta) {
        int k = 0;
        for (const cJSON *m = meta->child; m; m = m->next, k++) {
            size_t l = strlen(m->string) + 1;
            memcpy(sp, m->string, l);
            f->meta[2 * k] = sp;
            sp += l;
            l = strlen(m->valuestring) + 1;
            memcpy(sp, m->valuestring, l);
            f->meta[2 * k + 1] = sp;
            sp += l;
        }
    }

    /* Metadata sorted by key (st_metadata searches it); duplicate keys. */
    qsort(f->meta, (size_t)f->n_meta, 2 * sizeof *f->meta, cmp_str);
    for (int k = 1; k < f->n_meta; k++)
        if (strcmp(f->meta[2 * k - 2], f->meta[2 * k]) == 0) {
            rc = ptts_fail(e, PTTS_E_FORMAT, "%s: duplicate __metadata__ key \"%s\"", fn,
                           f->meta[2 * k]);
            goto done;
        }
    /* Duplicate names. */
    qsort(names, (size_t)nt, sizeof *names, cmp_named);
    for (int k = 0; k < nt; k++) {
        if (k > 0 && strcmp(names[k - 1].name, names[k].name) == 0) {
            rc = ptts_fail(e, PTTS_E_FORMAT, "%s: tensor %s: duplicate name", fn, names[k].name);
            goto done;
        }
        f->by_name[k] = names[k].idx;
    }
    /* Overlaps: after sorting by begin, each non-empty tensor must start at or after the end of
     * every earlier non-empty one. */
    qsort(spans, (size_t)nt, sizeof *spans, cmp_span);
    int prev = -1;
    for (int k = 0; k < nt; k++) {
        if (spans[k].begin == spans[k].end) continue;
        if (prev >= 0 && spans[k].begin < spans[prev].end) {
            rc = ptts_fail(
                e, PTTS_E_FORMAT,
                "%s: tensor %s: data_offsets [%llu, %llu] overlap tensor %s [%llu, %llu]", fn,
                f->tensors[spans[k].idx].name, (unsigned long long)spans[k].begin,
                (unsigned long long)spans[k].end, f->tensors[spans[prev].idx].name,
                (unsigned long long)spans[prev].begin, (unsigned long long)spans[prev].end);
            goto done;
        }
        prev = k;
    }
done:
    free(spans);
    free(names);
    cJSON_Delete(root);
    return rc;
}

static st_file *st_new(const char *name) {
    st_file *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->path = ptts_strdup(name ? name : "(memory)");
    if (!f->path) {
        free(f);
        return NULL;
    }
    return f;
}

int st_open_memory(st_file **out, const void *buf, size_t size, const char *name, ptts_error *e) {
    if (!out) return ptts_fail(e, PTTS_E_INVALID, "st_open_memory: out is NULL");
    *out = NULL;
    if (!buf && size > 0) return ptts_fail(e, PTTS_E_INVALID, "st_open_memory: buffer is NULL");
    st_file *f = st_new(name);
    if (!f) return ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory", name ? name : "(memory)");
    f->base = buf;
    f->size = size;
    int rc = parse(f, e);
    if (rc != 0) {
        st_close(f);
        return rc;
    }
    *out = f;
    return 0;
}

int st_open(st_file **out, const char *path, ptts_error *e) {
    if (!out || !path) return ptts_fail(e, PTTS_E_INVALID, "st_open: NULL argument");
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ptts_fail(e, errno == ENOENT ? PTTS_E_NOT_FOUND : PTTS_E_IO, "%s: cannot open: %s",
                         path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int err = errno;
        close(fd);
        return ptts_fail(e, PTTS_E_IO, "%s: cannot stat: %s", path, strerror(err));
    }
    if (S_ISDIR(sb.st_mode)) {
        close(fd);
        return ptts_fail(e, PTTS_E_IO, "%s: is a directory", path);
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return ptts_fail(e, PTTS_E_IO, "%s: not a regular file", path);
    }
    if ((uint64_t)sb.st_size > (uint64_t)SIZE_MAX) {
        close(fd);
        return ptts_fail(e, PTTS_E_NOMEM, "%s: file too large to map", path);
    }
    st_file *f = st_new(path);
    if (!f) {
        close(fd);
        return ptts_fail(e, PTTS_E_NOMEM, "%s: out of memory", path);
    }
    f->size = (size_t)sb.st_size;
    if (f->size > 0) {
        void *p = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int err = errno;
            close(fd);
            st_close(f);
            return ptts_fail(e, PTTS_E_IO, "%s: cannot map: %s", path, strerror(err));
        }
        f->base = p;
        f->mapped = 1;
    }
    close(fd); /* the mapping keeps the file */
    int rc = parse(f, e);
    if (rc != 0) {
        st_close(f);
        return rc;
    }
    *out = f;
    return 0;
}

/* ---- conversions --------------------------------------------------------------------------- */

int st_to_f32(const st_file *f, const st_tensor *t, float *dst, ptts_error *e) {
    size_t n = (size_t)t->numel;
    const uint8_t *p = t->data;
    switch (t->dtype) {
    case ST_F32:
        if (ST_HOST_LE) {
            if (n) memcpy(dst, p, n * 4);
        } else {
            for (size_t i = 0; i < n; i++)
                dst[i] = half_u2f((uint32_t)ld_le(p + 4 * i, 4));
        }
        return 0;
    case ST_BF16:
        for (size_t i = 0; i < n; i++)
            dst[i] = st_bf16_to_f32((uint16_t)(p[2 * i] | p[2 * i + 1] << 8));
        return 0;
    case ST_F16:
        for (size_t i = 0; i < n; i++)
            dst[i] = st_f16_to_f32((uint16_t)(p[2 * i] | p[2 * i + 1] << 8));
        return 0;
    default:
        return ptts_fail(e, PTTS_E_UNSUPPORTED,
                         "%s: tensor %s: dtype %s cannot be read as float (F32, BF16, F16 only)",
                         f->path, t->name, st_dtype_name(t->dtype));
    }
}

float *st_load_f32(const char *path, const char *name, size_t *n, ptts_error *e) {
    if (n) *n = 0;
    st_file *f = NULL;
    if (!path || !name) {
        ptts_fail(e, PTTS_E_INVALID, "st_load_f32: NULL argument");
        return NULL;
    }
    if (st_open(&f, path, e)) return NULL;
    const st_tensor *t = st_find(f, name);
    float *out = NULL;
    if (!t)
        ptts_fail(e, PTTS_E_NOT_FOUND, "%s: tensor %s is missing", path, name);
    else if (!(out = malloc(((size_t)t->numel ? (size_t)t->numel : 1) * sizeof *out)))
        ptts_fail(e, PTTS_E_NOMEM, "%s: tensor %s: out of memory", path, name);
    else if (st_to_f32(f, t, out, e)) {
        free(out);
        out = NULL;
    } else if (n) {
        *n = (size_t)t->numel;
    }
    st_close(f);
    return out;
}

int st_to_i64(const st_file *f, const st_tensor *t, int64_t *dst, ptts_error *e) {
    size_t n = (size_t)t->numel;
    const uint8_t *p = t->data;
    int w;
    switch (t->dtype) {
    case ST_I64: w = 8; break;
    case ST_I32: w = 4; break;
    case ST_I16: w = 2; break;
    case ST_I8: w = 1; break;
    case ST_U8:
        for (size_t i = 0; i < n; i++)
            dst[i] = p[i];
        return 0;
    default:
        return ptts_fail(e, PTTS_E_UNSUPPORTED,
                         "%s: tensor %s: dtype %s cannot be read as integers", f->path, t->name,
                         st_dtype_name(t->dtype));
    }
    int sh = 64 - 8 * w;
    for (size_t i = 0; i < n; i++) {
        uint64_t u = ld_le(p + (size_t)w * i, w) << sh;
        int64_t v;
        memcpy(&v, &u, 8);
        dst[i] = sh ? v / ((int64_t)1 << sh) : v; /* sign-extend without shifting a negative */
    }
    return 0;
}

static int fmt_shape(char *buf, size_t cap, int ndim, const int64_t *shape) {
    size_t o = 0;
    int r = snprintf(buf, cap, "[");
    o += (size_t)(r > 0 ? r : 0);
    for (int k = 0; k < ndim && o < cap; k++) {
        r = snprintf(buf + o, cap - o, "%s%lld", k ? ", " : "", (long long)shape[k]);
        o += (size_t)(r > 0 ? r : 0);
    }
    if (o < cap) snprintf(buf + o, cap - o, "]");
    return 0;
}

int st_expect(const st_file *f, const char *name, int ndim, const int64_t *shape,
              const st_tensor **out, ptts_error *e) {
    if (out) *out = NULL;
    const st_tensor *t = st_find(f, name);
    if (!t) return ptts_fail(e, PTTS_E_MODEL, "%s: tensor %s is missing", f->path, name);
    int same = t->ndim == ndim;
    for (int k = 0; same && k < ndim; k++)
        same = t->shape[k] == shape[k];
    if (!same) {
        char have[160], want[160];
        fmt_shape(have, sizeof have, t->ndim, t->shape);
        fmt_shape(want, sizeof want, ndim, shape);
        return ptts_fail(e, PTTS_E_MODEL, "%s: tensor %s has shape %s, expected %s", f->path, name,
                         have, want);
    }
    if (out) *out = t;
    return 0;
}
