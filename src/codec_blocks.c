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

/* After T new rows are consumed: the last hist input rows to the front for the next call. */
static void sconv_keep_hist(ptts_sconv *s, int T) {
    const int cin = s->cv->cin;
    memmove(s->buf, s->buf + (size_t)T * cin, (size_t)s->hist * cin * sizeof(float));
}

void ptts_sconv_run(const ptts_ctx *c, ptts_sconv *s, int T, float *y) {
    const int cin = s->cv->cin, st = s->cv->stride;
    ptts_linear_strided(c, &s->cv->w, s->buf, st * cin, T / st, y, s->cv->cout);
    sconv_keep_hist(s, T);
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

/* Rows r0 .. r1 of a residual block once ELU(x) is in c1's input: conv_k3, ELU, conv1x1 and
 * the residual add, each row through the same kernels as the stage-by-stage path. */
typedef struct {
    const ptts_ctx *c;
    ptts_sres *r;
    float *x;
} sres_job;

static void sres_rows(void *ctx, int r0, int r1) {
    const sres_job *j = ctx;
    const ptts_ctx *c = j->c;
    ptts_sres *r = j->r;
    const int m = r->c1.cv->cin, half = r->c1.cv->cout;
    ptts_linear_rows(c, &r->c1.cv->w, r->c1.buf, m, r0, r1, r->h, half);
    c->k->elu(r->h + (size_t)r0 * half, r->h + (size_t)r0 * half, (r1 - r0) * half);
    ptts_linear_rows(c, &r->c2->w, r->h, half, r0, r1, r->t, m);
    c->k->axpy(j->x + (size_t)r0 * m, 1.f, r->t + (size_t)r0 * m, (r1 - r0) * m);
}

/* Two pool regions: ELU(x) into c1's input (every row, since conv_k3 reads the rows before
 * its own), then per row chunk the rest of the block (sres_rows). Each value is the kernels'
 * as computed stage by stage, whatever the split (tests/test_overlap*, test_codec_batch). */
void ptts_sres_run(const ptts_ctx *c, ptts_sres *r, float *x, int T) {
    const int m = r->c1.cv->cin, half = r->c1.cv->cout;
    ptts_elu_par(c, ptts_sconv_in(&r->c1), x, T * m);
    /* with few rows ptts_linear splits the panels instead (each thread reads part of W) */
    if (T >= 64 && r->c1.cv->stride == 1 && ptts_linear_rows_ok(&r->c1.cv->w, T) &&
        ptts_linear_rows_ok(&r->c2->w, T)) {
        sres_job j = {c, r, x};
        const double work = 2.0 * T * ((double)r->c1.cv->w.in * half + (double)half * m);
        ptts_rows_par(c, T, 8, work, sres_rows, &j);
        sconv_keep_hist(&r->c1, T);
        return;
    }
    ptts_sconv_run(c, &r->c1, T, r->h);
    c->k->elu(r->h, r->h, T * half);
    ptts_linear(c, &r->c2->w, r->h, T, r->t);
    c->k->axpy(x, 1.f, r->t, T * m);
}
