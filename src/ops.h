/*
 * ops.h - the compute context shared by every stage (kernel table + thread pool) and the
 * threaded operations built on the kernels: linear layers split over output rows, causal
 * convolutions in the time-major layout of weights.h, and the transformer (backbone and codec)
 * with its KV cache.
 */
#ifndef PTTS_OPS_H
#define PTTS_OPS_H

#include "cpu/kernels.h"
#include "pool.h"
#include "weights.h"

typedef struct ptts_ctx {
    const ptts_kernels *k;
    ptts_pool *pool; /* may be NULL: single-threaded */
} ptts_ctx;

/* Y[N, L->out] = X[N, L->in] W^T + b, rows of W split across the pool. Y must not alias X. */
void ptts_linear(const ptts_ctx *c, const ptts_lin *L, const float *X, int N, float *Y);
/* Same with strided rows (ldx, ldy in floats). */
void ptts_linear_strided(const ptts_ctx *c, const ptts_lin *L, const float *X, int ldx, int N,
                         float *Y, int ldy);

/* The same linear for G groups of N rows each: group g reads X[g] (row stride ldx) and writes
 * Y[g] (ldy). Each output is computed as ptts_linear_strided(X[g], N) computes it (same kernel,
 * same per-row arithmetic), but with panel weights each panel is read once for all the groups
 * (the batched codec: n streams' rows in separate state buffers). */
void ptts_linear_groups(const ptts_ctx *c, const ptts_lin *L, const float *const *X, int ldx, int N,
                        float *const *Y, int ldy, int G);

/* Whether ptts_linear_rows may stand in for ptts_linear_strided over N rows: panel weights
 * (the codec's) at N >= 4, where every output row is computed alone, the same whatever the rows
 * around it or the split. */
int ptts_linear_rows_ok(const ptts_lin *L, int N);
/* Rows n0 .. n1 of ptts_linear_strided(X, ldx, N, Y, ldy) on the calling thread, bit for bit
 * (X and Y are the whole matrices' starts); only where ptts_linear_rows_ok(L, N). Lets a task
 * chain a row range through several stages without a pool region between them. */
void ptts_linear_rows(const ptts_ctx *c, const ptts_lin *L, const float *X, int ldx, int n0, int n1,
                      float *Y, int ldy);

/* fn(ctx, r0, r1) over [0, N) in chunks of a multiple of `align` rows, two chunks a thread of
 * the pool; inline (one call) with one thread, under 65536 flops of `work` or fewer than
 * 2 align rows. The chunks run in any order and at once: fn must touch only its rows. */
typedef void (*ptts_rows_fn)(void *ctx, int r0, int r1);
void ptts_rows_par(const ptts_ctx *c, int N, int align, double work, ptts_rows_fn fn, void *ctx);
/* y = ELU(x) over n values (y may be x), spread over the pool: the kernel's values, any split. */
void ptts_elu_par(const ptts_ctx *c, float *y, const float *x, int n);

/* --- KV cache --------------------------------------------------------------------------------
 * Keys (after RoPE) and values per layer, [cap, d] each. Position p is stored at row p % cap:
 * with window w and at most n rows per call, cap = w + n - 1 keeps every key a query needs
 * (the codec's bounded cache); with cap >= every position ever stored it is a plain cache
 * (the backbone). `len` counts positions appended since reset. In float32 (k, v) or float16
 * (kh, vh: the backbone's in the bf16 and int8 modes, as the GPU holds them; a value is rounded
 * to nearest even once, when it is stored, and read back exactly: half the bytes the attention
 * reads each step). */
typedef struct ptts_kv {
    int layers, d, cap;
    int len;
    int f16;           /* 1: kh, vh hold the rows (k, v NULL); 0: k, v */
    float *k, *v;      /* [layers][cap][d] */
    uint16_t *kh, *vh; /* [layers][cap][d] */
} ptts_kv;

int ptts_kv_init(ptts_kv *kv, int layers, int d, int cap, int f16);
void ptts_kv_free(ptts_kv *kv);
void ptts_kv_reset(ptts_kv *kv); /* len = 0 (contents are overwritten as positions arrive) */
/* Copy src's positions into dst (dst->cap >= src->len, same layers, d and format, plain
 * caches). */
int ptts_kv_copy(ptts_kv *dst, const ptts_kv *src);
/* Rows r0 .. r0 + n - 1 (r0 + n <= cap) of `layer`: set from float32 keys and values [n, d]
 * (rounded in a float16 cache by the kernel table's f16_from_f32), or read out as float32
 * (exact). */
void ptts_kv_set_rows(const ptts_kernels *kt, ptts_kv *kv, int layer, int r0, int n, const float *k,
                      const float *v);
void ptts_kv_get_rows(const ptts_kv *kv, int layer, int r0, int n, float *k, float *v);

/* Scratch floats ptts_transformer_forward needs for n rows over a cache of `cap` positions. */
size_t ptts_transformer_scratch(const ptts_transformer *t, int n, int cap);
/* x [n, d] (in place): rows at absolute positions kv->len .. kv->len + n - 1 (RoPE positions
 * and cache rows), causal, window t->window (0: all earlier positions); appends the n keys and
 * values to the cache. */
void ptts_transformer_forward(const ptts_ctx *c, const ptts_transformer *t, ptts_kv *kv, float *x,
                              int n, float *scratch);

/* Batched generation step over n independent caches: row i of x [n, d] (in place) is the next
 * position of kv[i] (kv[i]->len; each cache gets its key and value appended). The weights are
 * read once per layer for all n rows; attention runs per (row, head) over the row's own cache.
 * cap >= every kv[i]->cap; scratch holds ptts_transformer_step_scratch(t, n, cap) floats. With
 * n = 1 this is ptts_transformer_forward of one row (same results); per-row results do not
 * depend on n. */
size_t ptts_transformer_step_scratch(const ptts_transformer *t, int n, int cap);
void ptts_transformer_step_batch(const ptts_ctx *c, const ptts_transformer *t, ptts_kv *const *kv,
                                 int n, float *x, float *scratch, int cap);

/* Several independent caches, `rows` consecutive positions each: rows g*rows .. of x
 * [groups * rows, d] (in place) continue kv[g] (positions kv[g]->len ..), as
 * ptts_transformer_forward(kv[g], rows) would (same results bit for bit); the weights are read
 * once per layer for all groups, attention runs per (group, head) over the group's own cache.
 * cap >= every kv[g]->cap; scratch holds ptts_transformer_groups_scratch(t, groups, rows, cap)
 * floats. (The batched codec decoder: 16 rows per stream.) */
size_t ptts_transformer_groups_scratch(const ptts_transformer *t, int groups, int rows, int cap);
void ptts_transformer_forward_groups(const ptts_ctx *c, const ptts_transformer *t,
                                     ptts_kv *const *kv, int groups, float *x, int rows,
                                     float *scratch, int cap);

/* RoPE (interleaved pairs, max_period 10000) on one row of `heads` heads of width dh: x, and
 * y too unless NULL (a row's q and k: the angles computed once for both). */
void ptts_rope(float *x, float *y, int heads, int dh, int pos);

#endif
