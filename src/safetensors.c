/*
 * safetensors.c - the safetensors reader (mmap + strict header validation) and writer.
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
 * Writer: tensors are stored back to back in the given order (no gaps: the reference reader
 * rejects holes), after a header padded with spaces to a multiple of 8 bytes, so the data
 * section starts 8-byte aligned in the file. Integers are printed by us (cJSON would print
 * 1e+15), strings JSON-escaped, and every input is validated before the file is created.
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

/* ---- float conversions --------------------------------------------------------------------- */

static uint32_t f2u(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float u2f(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float st_bf16_to_f32(uint16_t h) { return u2f((uint32_t)h << 16); }

float st_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    if (exp == 0) {
        /* zero or subnormal: mant * 2^-24, exact in float */
        float v = (float)mant * 0x1p-24f;
        return u2f(f2u(v) | sign);
    }
    if (exp == 31) return u2f(sign | 0x7f800000u | (mant << 13)); /* inf, NaN (payload kept) */
    return u2f(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t st_f32_to_bf16(float f) {
    uint32_t x = f2u(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40); /* quiet NaN */
    x += 0x7fffu + ((x >> 16) & 1); /* round to nearest even; overflow carries into inf */
    return (uint16_t)(x >> 16);
}

uint16_t st_f32_to_f16(float f) {
    uint32_t x = f2u(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00 | ((ax >> 13) & 0x3ff)); /* NaN */
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00); /* >= 65520 rounds to inf */
    if (ax >= 0x38800000u) {                                 /* normal half (>= 2^-14) */
        ax -= 112u << 23;                                    /* rebias 127 -> 15 */
        ax += 0xfffu + ((ax >> 13) & 1);
        return (uint16_t)(sign | (ax >> 13));
    }
    int e = (int)(ax >> 23);
    if (e < 102) return sign; /* below 2^-25: rounds to zero (2^-25 itself ties to 0) */
    /* subnormal half: the value is m * 2^(e-150), the unit 2^-24, so the result is m >> (126-e) */
    uint32_t m = (ax & 0x7fffffu) | 0x800000u;
    int shift = 126 - e; /* 14..24 */
    uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) r++; /* may carry into the smallest normal */
    return (uint16_t)(sign | r);
}

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
                dst[i] = u2f((uint32_t)ld_le(p + 4 * i, 4));
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

/* ---- writer -------------------------------------------------------------------------------- */

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
        nbytes[i] = zero ? 0 : prod * dtype_sizes[t->dtype];
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
        buf_str(&h, dtype_names[t->dtype]);
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
