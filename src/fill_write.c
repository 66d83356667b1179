/*
 * fill_write.c - writing a whole synthetic pocket-fill-v1 checkpoint (every tensor of an
 * architecture, names and shapes from weights.c's binding table) as safetensors, in F32, BF16
 * or F16: a full-size model file for benchmarks and the CLI without the real weights.
 */
#include "fill_write.h"

#include <stdlib.h>
#include <string.h>

#include "fill.h"

typedef struct {
    st_out_tensor *t;
    int n, cap;
    st_dtype dtype;
    int failed;
} collect;

static int add_tensor(void *user, const char *name, int ndim, const int64_t *shape) {
    collect *c = user;
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 256;
        st_out_tensor *nt = realloc(c->t, (size_t)cap * sizeof *nt);
        if (!nt) return -1;
        c->t = nt;
        c->cap = cap;
    }
    st_out_tensor *o = &c->t[c->n];
    memset(o, 0, sizeof *o);
    size_t numel = 1;
    for (int i = 0; i < ndim; i++) {
        o->shape[i] = shape[i];
        numel *= (size_t)shape[i];
    }
    o->ndim = ndim;
    o->dtype = c->dtype;
    char *nm = ptts_strdup(name);
    float *v = malloc(numel * sizeof(float));
    if (!nm || !v) {
        free(nm);
        free(v);
        return -1;
    }
    ptts_fill_tensor(name, ndim, shape, v);
    if (c->dtype != ST_F32) {
        /* narrow in place: the uint16 values fit in the first half of the float buffer */
        uint16_t *h = (uint16_t *)v;
        for (size_t i = 0; i < numel; i++)
            h[i] = c->dtype == ST_BF16 ? st_f32_to_bf16(v[i]) : st_f32_to_f16(v[i]);
    }
    o->name = nm;
    o->data = v;
    c->n++;
    return 0;
}

int ptts_fill_write(const ptts_arch *a, st_dtype dtype, const char *path, ptts_error *e) {
    if (dtype != ST_F32 && dtype != ST_BF16 && dtype != ST_F16)
        return ptts_fail(e, PTTS_E_INVALID, "a synthetic checkpoint is F32, BF16 or F16");
    collect c = {.dtype = dtype};
    int rc = ptts_arch_tensors(a, add_tensor, &c, e);
    if (!rc) {
        const char *meta[] = {"format", "pt", "weights", "pocket-fill-v1", NULL};
        rc = st_write(path, c.t, c.n, meta, e);
    }
    for (int i = 0; i < c.n; i++) {
        free((void *)c.t[i].name);
        free((void *)c.t[i].data);
    }
    free(c.t);
    return rc;
}
