/*
 * codec_blocks.h - pieces the Mimi encoder and decoder share: a list of buffers allocated at
 * set-up and freed together, the causal streaming Conv1d over time-major rows, and the SEANet
 * residual block (MODEL.md section 6).
 */
#ifndef PTTS_CODEC_BLOCKS_H
#define PTTS_CODEC_BLOCKS_H

#include "ops.h"
#include "weights.h"

typedef struct ptts_bufs {
    float *mem[40];
    int n;
} ptts_bufs;

/* A zeroed [rows, cols] float buffer owned by b; NULL when out of memory or out of slots. */
float *ptts_bufs_alloc(ptts_bufs *b, size_t rows, size_t cols);
void ptts_bufs_free(ptts_bufs *b);

/* Causal streaming Conv1d: buf = [hist rows | new input rows], hist = k - stride (zeros at the
 * start: a fresh state). */
typedef struct ptts_sconv {
    const ptts_conv *cv;
    int hist;
    float *buf; /* [hist + max_in, cin] */
} ptts_sconv;

int ptts_sconv_init(ptts_bufs *b, ptts_sconv *s, const ptts_conv *cv, int max_in);
/* Where the caller writes the T new input rows. */
static inline float *ptts_sconv_in(const ptts_sconv *s) {
    return s->buf + (size_t)s->hist * s->cv->cin;
}
/* T new rows already at ptts_sconv_in(s) -> y [T / stride, cout]; keeps the last hist rows. */
void ptts_sconv_run(const ptts_ctx *c, ptts_sconv *s, int T, float *y);
/* Fresh state: the history rows zeroed. */
void ptts_sconv_reset(ptts_sconv *s);

/* SEANet residual block x += conv1x1(ELU(conv_k3(ELU(x)))) over up to max rows. */
typedef struct ptts_sres {
    ptts_sconv c1;
    const ptts_conv *c2;
    float *h; /* [max, m/2] */
    float *t; /* [max, m] */
} ptts_sres;

int ptts_sres_init(ptts_bufs *b, ptts_sres *r, const ptts_resnet *rw, int max);
/* x [T, m] in place. */
void ptts_sres_run(const ptts_ctx *c, ptts_sres *r, float *x, int T);

#endif
