/*
 * ops.c - threaded linear layers, the KV cache and the transformer layer shared by the backbone
 * (unbounded causal attention, no LayerScale) and the codec (window 250, LayerScale).
 *
 * Transformer layer (MODEL.md section 3), x [n, d]:
 *   x = x + ls1 * out_proj(attn(rope(q), rope(k), v)),  q|k|v = in_proj(LN1(x))  [n, 3d]
 *   x = x + ls2 * linear2(gelu(linear1(LN2(x))))                                 [n, ffn]
 * Attention is per head (Dh = d / heads), scores scaled by 1/sqrt(Dh), keys cached after RoPE.
 *
 * Threads: a linear splits output rows (or, with panel weights and many rows, X rows); RoPE with
 * the cache append, GELU and attention run per row or (row group, head) on the pool too, and
 * ptts_rows_par / ptts_elu_par / ptts_linear_rows let the codec chain its element-wise stages
 * into the same regions. No split changes a value: each is computed as on one thread.
 */
#include "ops.h"
#include "half.h"

#include <math.h>
#include <string.h>

/* ---- linear ------------------------------------------------------------------------------- */

typedef struct {
    const ptts_ctx *c;
    const ptts_lin *L;
    const float *X;
    int ldx, N;
    float *Y;
    int ldy;
    int chunk;
} lin_job;

static void lin_rows(const ptts_ctx *c, const ptts_lin *L, const float *X, int ldx, int N, float *Y,
                     int ldy, int m0, int m1) {
    const ptts_kernels *k = c->k;
    switch (L->type) {
    case PTTS_W_F32:
        (L->stream ? k->gemm_f32_stream : k->gemm_f32)(N, L->in, X, ldx, L->w, L->bias, Y, ldy, m0,
                                                       m1);
        break;
    case PTTS_W_BF16:
        (L->stream ? k->gemm_bf16_stream : k->gemm_bf16)(N, L->in, X, ldx, L->wh, L->bias, Y, ldy,
                                                         m0, m1);
        break;
    case PTTS_W_Q8:
        /* X quantised too (W8A8, the int8 mode's arithmetic on every CPU); gemm_q8 (W8A32)
         * only past the K that gemm_q8q's exact int32 sums allow */
        (L->in > PTTS_Q8Q_KMAX ? k->gemm_q8
         : L->stream           ? k->gemm_q8q_stream
                     : k->gemm_q8q)(N, L->in, X, ldx, L->wq, L->scale, L->bias, Y, ldy, m0, m1);
        break;
    }
}

static void lin_task(void *ctx, int task, int tid) {
    (void)tid;
    lin_job *j = ctx;
    int m0 = task * j->chunk;
    int m1 = PTTS_MIN(j->L->out, m0 + j->chunk);
    if (m0 < m1) lin_rows(j->c, j->L, j->X, j->ldx, j->N, j->Y, j->ldy, m0, m1);
}

/* Rows n0 .. n1 of X against every output (ptts_rows_par over lin_job) */
static void lin_xrows(void *ctx, int n0, int n1) {
    const lin_job *j = ctx;
    lin_rows(j->c, j->L, j->X + (size_t)n0 * j->ldx, j->ldx, n1 - n0, j->Y + (size_t)n0 * j->ldy,
             j->ldy, 0, j->L->out);
}

/* The panel kernels (ptts_lin.wp16 with gemm_bf16_panel, else ptts_lin.wp with
 * gemm_f32_panel): tasks over row blocks when rows dominate, else over panels. Which of the two
 * a matrix has is decided at load by the precision mode alone (weights.c), so every CPU
 * computes the same arithmetic. */
typedef struct {
    const ptts_ctx *c;
    const ptts_lin *L;
    const float *X;
    int ldx, N;
    float *Y;
    int ldy;
    int by_rows, chunk; /* chunk: rows (multiple of 8) or panels per task */
    int bf16;           /* wp16 / gemm_bf16_panel */
} panel_job;

static void panel_task(void *ctx, int task, int tid) {
    (void)tid;
    const panel_job *j = ctx;
    const ptts_lin *L = j->L;
    int np = (L->out + PTTS_PANEL - 1) / PTTS_PANEL;
    int n0 = 0, n1 = j->N, p0 = 0, p1 = np;
    if (j->by_rows) {
        n0 = task * j->chunk;
        n1 = PTTS_MIN(j->N, n0 + j->chunk);
    } else {
        p0 = task * j->chunk;
        p1 = PTTS_MIN(np, p0 + j->chunk);
    }
    if (n0 >= n1 || p0 >= p1) return;
    if (j->bf16)
        j->c->k->gemm_bf16_panel(L->in, j->X, j->ldx, L->wp16, L->bias, j->Y, j->ldy, L->out, n0,
                                 n1, p0, p1);
    else
        j->c->k->gemm_f32_panel(L->in, j->X, j->ldx, L->wp, L->bias, j->Y, j->ldy, L->out, n0, n1,
                                p0, p1);
}

void ptts_linear_strided(const ptts_ctx *c, const ptts_lin *L, const float *X, int ldx, int N,
                         float *Y, int ldy) {
    int threads = ptts_pool_threads(c->pool);
    double work = (double)N * L->out * L->in;
    const int bf16 = L->wp16 != NULL;
    if ((bf16 || L->wp) && N >= 4) {
        int np = (L->out + PTTS_PANEL - 1) / PTTS_PANEL;
        panel_job j = {c, L, X, ldx, N, Y, ldy, 0, np, bf16};
        int tasks = 1;
        if (threads > 1 && work >= 65536.0) {
            if (N >= 64 || np < 2 * threads) {
                j.by_rows = 1;
                j.chunk = ((N + 2 * threads - 1) / (2 * threads) + 7) & ~7;
                tasks = (N + j.chunk - 1) / j.chunk;
            } else {
                j.chunk = (np + 2 * threads - 1) / (2 * threads);
                tasks = (np + j.chunk - 1) / j.chunk;
            }
        }
        if (tasks <= 1) {
            j.by_rows = 0;
            j.chunk = np;
            panel_task(&j, 0, 0);
        } else {
            ptts_pool_run(c->pool, tasks, panel_task, &j);
        }
        return;
    }
    if (threads > 1 && work >= 65536.0 && L->out < 32 && N >= 64) {
        /* few outputs, many rows (the codec's last conv: 1 output, 1920 rows a frame): chunks
         * of rows, 16-row aligned as every kernel tiles rows, so each row's arithmetic is that
         * of the whole call */
        lin_job j = {c, L, X, ldx, N, Y, ldy, 0};
        ptts_rows_par(c, N, 16, work, lin_xrows, &j);
        return;
    }
    if (threads <= 1 || work < 65536.0 || L->out < 32) {
        lin_rows(c, L, X, ldx, N, Y, ldy, 0, L->out);
        return;
    }
    /* A few tasks per thread for balance; chunks of whole 16-row groups. */
    int tasks = threads * 4;
    int chunk = (L->out + tasks - 1) / tasks;
    chunk = (chunk + 15) & ~15;
    tasks = (L->out + chunk - 1) / chunk;
    lin_job j = {c, L, X, ldx, N, Y, ldy, chunk};
    ptts_pool_run(c->pool, tasks, lin_task, &j);
}

/* Grouped: tasks over chunks of panels; inside a task, panel by panel, every group's rows,
 * so one panel (K * 64 or 128 bytes) is fetched once and reused from L1/L2 by all groups. */
typedef struct {
    const ptts_ctx *c;
    const ptts_lin *L;
    const float *const *X;
    int ldx, N;
    float *const *Y;
    int ldy, G;
    int chunk; /* panels per task */
    int bf16;
} groups_job;

static void groups_task(void *ctx, int task, int tid) {
    (void)tid;
    const groups_job *j = ctx;
    const ptts_lin *L = j->L;
    const int np = (L->out + PTTS_PANEL - 1) / PTTS_PANEL;
    const int p1 = PTTS_MIN(np, (task + 1) * j->chunk);
    for (int p = task * j->chunk; p < p1; p++)
        for (int g = 0; g < j->G; g++) {
            if (j->bf16)
                j->c->k->gemm_bf16_panel(L->in, j->X[g], j->ldx, L->wp16, L->bias, j->Y[g], j->ldy,
                                         L->out, 0, j->N, p, p + 1);
            else
                j->c->k->gemm_f32_panel(L->in, j->X[g], j->ldx, L->wp, L->bias, j->Y[g], j->ldy,
                                        L->out, 0, j->N, p, p + 1);
        }
}

void ptts_linear_groups(const ptts_ctx *c, const ptts_lin *L, const float *const *X, int ldx, int N,
                        float *const *Y, int ldy, int G) {
    const int bf16 = L->wp16 != NULL;
    if (!((bf16 || L->wp) && N >= 4)) {
        /* not the panel path: the per-group call is the arithmetic of decoding alone */
        for (int g = 0; g < G; g++)
            ptts_linear_strided(c, L, X[g], ldx, N, Y[g], ldy);
        return;
    }
    const int np = (L->out + PTTS_PANEL - 1) / PTTS_PANEL;
    const int threads = ptts_pool_threads(c->pool);
    groups_job j = {c, L, X, ldx, N, Y, ldy, G, np, bf16};
    int tasks = 1;
    if (threads > 1 && np > 1) {
        j.chunk = (np + 2 * threads - 1) / (2 * threads);
        tasks = (np + j.chunk - 1) / j.chunk;
    }
    if (tasks <= 1)
        groups_task(&j, 0, 0);
    else
        ptts_pool_run(c->pool, tasks, groups_task, &j);
}

void ptts_linear(const ptts_ctx *c, const ptts_lin *L, const float *X, int N, float *Y) {
    ptts_linear_strided(c, L, X, L->in, N, Y, L->out);
}

int ptts_linear_rows_ok(const ptts_lin *L, int N) { return (L->wp16 || L->wp) && N >= 4; }

void ptts_linear_rows(const ptts_ctx *c, const ptts_lin *L, const float *X, int ldx, int n0, int n1,
                      float *Y, int ldy) {
    const int np = (L->out + PTTS_PANEL - 1) / PTTS_PANEL;
    if (n0 >= n1) return;
    if (L->wp16)
        c->k->gemm_bf16_panel(L->in, X, ldx, L->wp16, L->bias, Y, ldy, L->out, n0, n1, 0, np);
    else
        c->k->gemm_f32_panel(L->in, X, ldx, L->wp, L->bias, Y, ldy, L->out, n0, n1, 0, np);
}

/* ---- row-parallel regions and element-wise maps -------------------------------------------- */

typedef struct {
    ptts_rows_fn fn;
    void *ctx;
    int N, chunk;
} rows_job;

static void rows_task(void *ctx, int task, int tid) {
    (void)tid;
    const rows_job *j = ctx;
    const int r0 = task * j->chunk;
    j->fn(j->ctx, r0, PTTS_MIN(j->N, r0 + j->chunk));
}

void ptts_rows_par(const ptts_ctx *c, int N, int align, double work, ptts_rows_fn fn, void *ctx) {
    const int threads = ptts_pool_threads(c->pool);
    if (N <= 0) return;
    if (threads <= 1 || work < 65536.0 || N < 2 * align) {
        fn(ctx, 0, N);
        return;
    }
    /* two chunks a thread, as ptts_linear's row split */
    int chunk = (N + 2 * threads - 1) / (2 * threads);
    chunk = (chunk + align - 1) / align * align;
    rows_job j = {fn, ctx, N, chunk};
    ptts_pool_run(c->pool, (N + chunk - 1) / chunk, rows_task, &j);
}

typedef struct {
    const ptts_ctx *c;
    float *y;
    const float *x;
} elu_job;

static void elu_rows(void *ctx, int r0, int r1) {
    const elu_job *j = ctx;
    j->c->k->elu(j->y + r0, j->x + r0, r1 - r0);
}

void ptts_elu_par(const ptts_ctx *c, float *y, const float *x, int n) {
    elu_job j = {c, y, x};
    /* ~10 flops a value; chunks of whole cache lines (the kernel's per-value result does not
     * depend on where a chunk starts) */
    ptts_rows_par(c, n, 64, 10.0 * n, elu_rows, &j);
}

/* ---- KV cache ----------------------------------------------------------------------------- */

int ptts_kv_init(ptts_kv *kv, int layers, int d, int cap, int f16) {
    memset(kv, 0, sizeof *kv);
    size_t n;
    if (layers <= 0 || d <= 0 || cap <= 0 || ptts_mul_size((size_t)layers * d, (size_t)cap, &n) ||
        ptts_mul_size(n, f16 ? sizeof(uint16_t) : sizeof(float), &n))
        return PTTS_E_INVALID;
    if (f16) {
        kv->kh = ptts_calloc_aligned(n);
        kv->vh = ptts_calloc_aligned(n);
    } else {
        kv->k = ptts_calloc_aligned(n);
        kv->v = ptts_calloc_aligned(n);
    }
    if (f16 ? !kv->kh || !kv->vh : !kv->k || !kv->v) {
        ptts_kv_free(kv);
        return PTTS_E_NOMEM;
    }
    kv->layers = layers;
    kv->d = d;
    kv->cap = cap;
    kv->f16 = f16 != 0;
    return 0;
}

void ptts_kv_free(ptts_kv *kv) {
    if (!kv) return;
    ptts_free_aligned(kv->k);
    ptts_free_aligned(kv->v);
    ptts_free_aligned(kv->kh);
    ptts_free_aligned(kv->vh);
    memset(kv, 0, sizeof *kv);
}

void ptts_kv_reset(ptts_kv *kv) { kv->len = 0; }

/* element offset of row r of `layer` */
static size_t kv_off(const ptts_kv *kv, int layer, int r) {
    return ((size_t)layer * kv->cap + (size_t)r) * kv->d;
}

int ptts_kv_copy(ptts_kv *dst, const ptts_kv *src) {
    if (dst->layers != src->layers || dst->d != src->d || dst->f16 != src->f16 ||
        dst->cap < src->len || src->len > src->cap)
        return PTTS_E_INVALID;
    const size_t bytes = (size_t)src->len * src->d * (src->f16 ? sizeof(uint16_t) : sizeof(float));
    for (int l = 0; l < src->layers; l++) {
        if (src->f16) {
            memcpy(dst->kh + kv_off(dst, l, 0), src->kh + kv_off(src, l, 0), bytes);
            memcpy(dst->vh + kv_off(dst, l, 0), src->vh + kv_off(src, l, 0), bytes);
        } else {
            memcpy(dst->k + kv_off(dst, l, 0), src->k + kv_off(src, l, 0), bytes);
            memcpy(dst->v + kv_off(dst, l, 0), src->v + kv_off(src, l, 0), bytes);
        }
    }
    dst->len = src->len;
    return 0;
}

void ptts_kv_set_rows(const ptts_kernels *kt, ptts_kv *kv, int layer, int r0, int n, const float *k,
                      const float *v) {
    const size_t o = kv_off(kv, layer, r0), m = (size_t)n * kv->d;
    if (!kv->f16) {
        memcpy(kv->k + o, k, m * sizeof(float));
        memcpy(kv->v + o, v, m * sizeof(float));
        return;
    }
    kt->f16_from_f32(kv->kh + o, k, m);
    kt->f16_from_f32(kv->vh + o, v, m);
}

void ptts_kv_get_rows(const ptts_kv *kv, int layer, int r0, int n, float *k, float *v) {
    const size_t o = kv_off(kv, layer, r0), m = (size_t)n * kv->d;
    if (!kv->f16) {
        memcpy(k, kv->k + o, m * sizeof(float));
        memcpy(v, kv->v + o, m * sizeof(float));
        return;
    }
    for (size_t i = 0; i < m; i++) {
        k[i] = st_f16_to_f32(kv->kh[o + i]);
        v[i] = st_f16_to_f32(kv->vh[o + i]);
    }
}

/* ---- RoPE --------------------------------------------------------------------------------- */

/* Mirrors the reference's float32 arithmetic: freqs_i = exp(i * (-ln(max_period) * 2 / Dh))
 * with the constant rounded to float, angle = (float)pos * freqs_i, cos/sin in float. */
void ptts_rope(float *x, float *y, int heads, int dh, int pos) {
    const float c = (float)(-log(10000.0) * 2.0 / dh);
    const float t = (float)pos;
    for (int i = 0; i < dh / 2; i++) {
        float f = expf((float)i * c);
        float a = t * f;
        float cs = cosf(a), sn = sinf(a);
        for (int h = 0; h < heads; h++) {
            float *p = x + (size_t)h * dh + 2 * i;
            float r = p[0], m = p[1];
            p[0] = r * cs - m * sn;
            p[1] = r * sn + m * cs;
            if (!y) continue;
            p = y + (size_t)h * dh + 2 * i;
            r = p[0], m = p[1];
            p[0] = r * cs - m * sn;
            p[1] = r * sn + m * cs;
        }
    }
}

/* ---- transformer -------------------------------------------------------------------------- */

size_t ptts_transformer_scratch(const ptts_transformer *t, int n, int cap) {
    size_t d = (size_t)t->d, rows = (size_t)n;
    /* h [n,d] + qkv [n,3d] + att [n,d] + ff [n,ffn] + tmp [n,d] + scores [heads, PTTS_ROWS_Q,
     * cap] (a task's rows at a time: att_rows) */
    return rows * d * 6 + rows * (size_t)t->ffn + (size_t)t->heads * PTTS_ROWS_Q * (size_t)cap + 64;
}

/* Attention of one (row group, head) task. The n rows of x form nkv groups of rpg = n / nkv
 * consecutive rows; group g is the positions kv[g]->len .. kv[g]->len + rpg - 1 of its own
 * cache. One task per (group, head) covers the group's rows, scores [nkv * heads,
 * PTTS_ROWS_Q * scap] (one row's, scap, where a group has one row: the batched step). The
 * single-cache forward is nkv = 1 (rpg = n), the batched step nkv = n (rpg = 1), the batched
 * codec nkv streams of 16 rows each: a row's arithmetic is the same in every case. */
typedef struct {
    const ptts_ctx *c;
    const ptts_transformer *t;
    ptts_kv *const *kv;
    int nkv, rpg;
    int layer;
    const float *qkv; /* [n, 3d] (q already rotated) */
    float *att;       /* [n, d] */
    float *scores;
    int scap; /* scores row stride */
} att_job;

/* The cache rows of keys k0 .. k0 + n - 1: ring rows k0 % cap onwards, wrapping at most once, as
 * two runs of consecutive rows (the row kernels give the values of a dot / axpy per key). */
typedef struct {
    int r0, n0, n; /* first run: rows r0 .. r0 + n0 - 1; then rows 0 .. n - n0 - 1 */
} key_runs;

static key_runs runs_of(int k0, int n, int cap) {
    key_runs r = {k0 % cap, 0, n};
    r.n0 = PTTS_MIN(n, cap - r.r0);
    return r;
}

/* Rows i0 .. i1 - 1 at positions pos0 ..: each row's scores over its keys, softmax, then the
 * values. Up to PTTS_ROWS_Q consecutive rows at a time: their keys are one run of the cache
 * (a row's window moves by at most one key a row), read once for all of them (the _q kernels).
 * The scores over the whole run (a key outside a row's window is scored and left out), the
 * values per segment of keys that a fixed set of the rows sees, in key order: every row's
 * values are those of a row alone. s: [PTTS_ROWS_Q][scap] scores. */
static void att_rows(const att_job *j, const ptts_kv *kv, int h, int i0, int i1, int pos0,
                     float *s) {
    const ptts_kernels *k = j->c->k;
    const int d = j->t->d, dh = d / j->t->heads, cap = kv->cap, win = j->t->window;
    /* head h's columns of the layer's rows, in the cache's format */
    const size_t off = (size_t)j->layer * cap * d + (size_t)h * dh;
    const float *K = kv->f16 ? NULL : kv->k + off, *V = kv->f16 ? NULL : kv->v + off;
    const uint16_t *Kh = kv->f16 ? kv->kh + off : NULL, *Vh = kv->f16 ? kv->vh + off : NULL;
    const float scale = 1.0f / sqrtf((float)dh);
    for (int i = i0; i < i1; i += PTTS_ROWS_Q) {
        const int nq = PTTS_MIN(PTTS_ROWS_Q, i1 - i);
        int first[PTTS_ROWS_Q], end[PTTS_ROWS_Q]; /* row e's keys first[e] .. end[e] - 1 */
        const float *q[PTTS_ROWS_Q];
        float *o[PTTS_ROWS_Q], *se[PTTS_ROWS_Q], *sn[PTTS_ROWS_Q];
        for (int e = 0; e < nq; e++) {
            const int p = pos0 + (i + e - i0);
            first[e] = win > 0 ? PTTS_MAX(0, p - win + 1) : 0;
            end[e] = p + 1;
            q[e] = j->qkv + (size_t)(i + e) * 3 * d + (size_t)h * dh;
            o[e] = j->att + (size_t)(i + e) * d + (size_t)h * dh;
            se[e] = s + (size_t)e * j->scap;
            memset(o[e], 0, (size_t)dh * sizeof(float));
        }
        /* scores over keys first[0] .. end[nq - 1] - 1: every row's keys (the ring holds them
         * all: the layer's rows are appended before its attention) */
        const int k0 = first[0];
        key_runs r = runs_of(k0, end[nq - 1] - k0, cap);
        for (int e = 0; e < nq; e++)
            sn[e] = se[e] + r.n0;
        if (Kh) {
            k->dot_rows_q_h(q, nq, Kh + (size_t)r.r0 * d, d, r.n0, dh, scale, se);
            k->dot_rows_q_h(q, nq, Kh, d, r.n - r.n0, dh, scale, sn);
        } else {
            k->dot_rows_q(q, nq, K + (size_t)r.r0 * d, d, r.n0, dh, scale, se);
            k->dot_rows_q(q, nq, K, d, r.n - r.n0, dh, scale, sn);
        }
        for (int e = 0; e < nq; e++) {
            se[e] += first[e] - k0; /* row e's own keys from here */
            k->softmax(se[e], end[e] - first[e]);
        }
        /* the values over segments [ka, kb) cut where a row's window starts or ends; the rows
         * that see a segment are e_lo .. e_hi - 1 (first and end grow with the row) */
        for (int ka = k0; ka < end[nq - 1];) {
            int kb = end[nq - 1], e_lo = 0, e_hi;
            for (int e = 0; e < nq; e++) {
                if (first[e] > ka) kb = PTTS_MIN(kb, first[e]);
                if (end[e] > ka) kb = PTTS_MIN(kb, end[e]);
            }
            while (end[e_lo] <= ka)
                e_lo++;
            for (e_hi = e_lo; e_hi < nq && first[e_hi] <= ka;)
                e_hi++;
            const float *pp[PTTS_ROWS_Q];
            for (int e = e_lo; e < e_hi; e++)
                pp[e - e_lo] = se[e] + (ka - first[e]);
            r = runs_of(ka, kb - ka, cap);
            if (Vh)
                k->axpy_rows_q_h(o + e_lo, pp, e_hi - e_lo, Vh + (size_t)r.r0 * d, d, r.n0, dh);
            else
                k->axpy_rows_q(o + e_lo, pp, e_hi - e_lo, V + (size_t)r.r0 * d, d, r.n0, dh);
            for (int e = 0; e < e_hi - e_lo; e++)
                pp[e] += r.n0;
            if (Vh)
                k->axpy_rows_q_h(o + e_lo, pp, e_hi - e_lo, Vh, d, r.n - r.n0, dh);
            else
                k->axpy_rows_q(o + e_lo, pp, e_hi - e_lo, V, d, r.n - r.n0, dh);
            ka = kb;
        }
    }
}

static void att_task(void *ctx, int task, int tid) {
    (void)tid;
    const att_job *j = ctx;
    int g = task / j->t->heads, h = task % j->t->heads;
    att_rows(j, j->kv[g], h, g * j->rpg, (g + 1) * j->rpg, j->kv[g]->len,
             j->scores + (size_t)task * (j->rpg > 1 ? PTTS_ROWS_Q : 1) * j->scap);
}

/* Rows r0 .. r1 of a layer's qkv [n, 3d]: RoPE on q and k at the row's position, k and v
 * appended to the row's cache (rows are independent: any split). */
typedef struct {
    const ptts_kernels *k;
    const ptts_transformer *t;
    ptts_kv *const *kv;
    int rpg, layer;
    float *qkv;
} rope_job;

static void rope_rows(void *ctx, int r0, int r1) {
    const rope_job *j = ctx;
    const int d = j->t->d, dh = d / j->t->heads;
    for (int i = r0; i < r1; i++) {
        ptts_kv *kc = j->kv[i / j->rpg];
        const int pos = kc->len + i % j->rpg, row = pos % kc->cap;
        float *q = j->qkv + (size_t)i * 3 * d;
        ptts_rope(q, q + d, j->t->heads, dh, pos);
        ptts_kv_set_rows(j->k, kc, j->layer, row, 1, q + d, q + 2 * d);
    }
}

/* GELU over rows r0 .. r1 of ff [n, ffn] (element-wise: any split gives the kernel's values). */
typedef struct {
    const ptts_ctx *c;
    float *ff;
    int ffn;
} gelu_job;

static void gelu_rows(void *ctx, int r0, int r1) {
    const gelu_job *j = ctx;
    j->c->k->gelu(j->ff + (size_t)r0 * j->ffn, (r1 - r0) * j->ffn);
}

/* The layers over x [n, d], n = nkv * rpg: group g (rows g*rpg ..) continues kv[g] (see
 * att_job). Row results do not depend on the grouping or the batch size. */
static void transformer_run(const ptts_ctx *c, const ptts_transformer *t, ptts_kv *const *kv,
                            int nkv, float *x, int n, float *scratch, int scap) {
    const ptts_kernels *k = c->k;
    const int d = t->d, dh = d / t->heads, ffn = t->ffn, rpg = n / nkv;
    float *h = scratch;
    float *qkv = h + (size_t)n * d;
    float *att = qkv + (size_t)n * 3 * d;
    float *ff = att + (size_t)n * d;
    float *tmp = ff + (size_t)n * ffn;
    float *scores = tmp + (size_t)n * d;
    long work = 0; /* attention size: rows x keys */
    for (int i = 0; i < n; i++)
        work += kv[i / rpg]->len + i % rpg + 1;

    for (int l = 0; l < t->layers; l++) {
        const ptts_tlayer *L = &t->layer[l];
        for (int i = 0; i < n; i++)
            k->layernorm(h + (size_t)i * d, x + (size_t)i * d, L->norm1_w, L->norm1_b, d, 1e-5f);
        ptts_linear(c, &L->in_proj, h, n, qkv);
        rope_job rj = {c->k, t, kv, rpg, l, qkv};
        ptts_rows_par(c, n, 1, 2000.0 * dh * n, rope_rows, &rj); /* ~1 us of expf/sincosf a row */
        att_job aj = {c, t, kv, nkv, rpg, l, qkv, att, scores, scap};
        int tasks = nkv * t->heads;
        if (work >= 64)
            ptts_pool_run(c->pool, tasks, att_task, &aj);
        else
            for (int i = 0; i < tasks; i++)
                att_task(&aj, i, 0);
        ptts_linear(c, &L->out_proj, att, n, tmp);
        for (int i = 0; i < n; i++) {
            float *xi = x + (size_t)i * d, *ti = tmp + (size_t)i * d;
            if (L->ls1)
                for (int e = 0; e < d; e++)
                    xi[e] += L->ls1[e] * ti[e];
            else
                for (int e = 0; e < d; e++)
                    xi[e] += ti[e];
        }
        for (int i = 0; i < n; i++)
            k->layernorm(h + (size_t)i * d, x + (size_t)i * d, L->norm2_w, L->norm2_b, d, 1e-5f);
        ptts_linear(c, &L->linear1, h, n, ff);
        gelu_job gj = {c, ff, ffn};
        ptts_rows_par(c, n, 1, 20.0 * n * ffn, gelu_rows, &gj);
        ptts_linear(c, &L->linear2, ff, n, tmp);
        for (int i = 0; i < n; i++) {
            float *xi = x + (size_t)i * d, *ti = tmp + (size_t)i * d;
            if (L->ls2)
                for (int e = 0; e < d; e++)
                    xi[e] += L->ls2[e] * ti[e];
            else
                for (int e = 0; e < d; e++)
                    xi[e] += ti[e];
        }
    }
    for (int g = 0; g < nkv; g++)
        kv[g]->len += rpg;
}

void ptts_transformer_forward(const ptts_ctx *c, const ptts_transformer *t, ptts_kv *kv, float *x,
                              int n, float *scratch) {
    ptts_kv *one[1] = {kv};
    transformer_run(c, t, one, 1, x, n, scratch, kv->cap);
}

size_t ptts_transformer_step_scratch(const ptts_transformer *t, int n, int cap) {
    size_t d = (size_t)t->d, rows = (size_t)n;
    return rows * d * 6 + rows * (size_t)t->ffn + rows * (size_t)t->heads * (size_t)cap + 64;
}

void ptts_transformer_step_batch(const ptts_ctx *c, const ptts_transformer *t, ptts_kv *const *kv,
                                 int n, float *x, float *scratch, int cap) {
    if (n <= 0) return;
    transformer_run(c, t, kv, n == 1 ? 1 : n, x, n, scratch, n == 1 ? kv[0]->cap : cap);
}

size_t ptts_transformer_groups_scratch(const ptts_transformer *t, int groups, int rows, int cap) {
    size_t d = (size_t)t->d, n = (size_t)groups * (size_t)rows;
    return n * d * 6 + n * (size_t)t->ffn +
           (size_t)groups * (size_t)t->heads * PTTS_ROWS_Q * (size_t)cap + 64;
}

void ptts_transformer_forward_groups(const ptts_ctx *c, const ptts_transformer *t,
                                     ptts_kv *const *kv, int groups, float *x, int rows,
                                     float *scratch, int cap) {
    if (groups <= 0 || rows <= 0) return;
    transformer_run(c, t, kv, groups, x, groups * rows, scratch, cap);
}
