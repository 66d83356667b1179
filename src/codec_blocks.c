/* codec_blocks.c - buffers, streaming Conv1d and residual blocks of the Mimi codec (see
 * codec_blocks.h). */
#include "codec_blocks.h"

#include <string.h>

float *ptts_bufs_alloc(ptts_bufs *b, size_t rows, size_t cols) {
    size_t n;
    if (b->n == (int)(sizeof b->mem / sizeof b->mem[0])) return NULL;
    if (ptts_mul_size(rows ? rows : 1, cols ? cols : 1, &n) || ptts_mul_size(n, sizeof(float), &n))
        return NULL;
    float *p = ptts_calloc_aligned(n);
    if (p) b->mem[b->n++] = p;
    return p;
}

void ptts_bufs_free(ptts_bufs *b) {
    for (int i = 0; i < b->n; i++)
        ptts_free_aligned(b->mem[i]);
    b->n = 0;
}

int ptts_sconv_init(ptts_bufs *b, ptts_sconv *s, const ptts_conv *cv, int max_in) {
    s->cv = cv;
    s->hist = cv->k - cv->stride;
    s->buf = ptts_bufs_alloc(b, (size_t)(s->hist + max_in), (size_t)cv->cin);
    return s->buf ? 0 : -1;
}

void ptts_sconv_run(const ptts_ctx *c, ptts_sconv *s, int T, float *y) {
    const int cin = s->cv->cin, st = s->cv->stride;
    ptts_linear_strided(c, &s->cv->w, s->buf, st * cin, T / st, y, s->cv->cout);
    memmove(s->buf, s->buf + (size_t)T * cin, (size_t)s->hist * cin * sizeof(float));
}

void ptts_sconv_reset(ptts_sconv *s) {
    memset(s->buf, 0, (size_t)s->hist * s->cv->cin * sizeof(float));
}

int ptts_sres_init(ptts_bufs *b, ptts_sres *r, const ptts_resnet *rw, int max) {
    r->c2 = &rw->c2;
    r->h = ptts_bufs_alloc(b, (size_t)max, (size_t)rw->c1.cout);
    r->t = ptts_bufs_alloc(b, (size_t)max, (size_t)rw->c2.cout);
    if (!r->h || !r->t) return -1;
    return ptts_sconv_init(b, &r->c1, &rw->c1, max);
}

void ptts_sres_run(const ptts_ctx *c, ptts_sres *r, float *x, int T) {
    const int m = r->c1.cv->cin, half = r->c1.cv->cout;
    c->k->elu(ptts_sconv_in(&r->c1), x, T * m);
    ptts_sconv_run(c, &r->c1, T, r->h);
    c->k->elu(r->h, r->h, T * half);
    ptts_linear(c, &r->c2->w, r->h, T, r->t);
    c->k->axpy(x, 1.f, r->t, T * m);
}
