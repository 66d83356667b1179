/*
 * flow_head.c - the flow head (SimpleMLPAdaLN) and its samplers, MODEL.md section 5.
 *
 * Shapes (R rows sampled together, d backbone width, fd flow width, ld latent width):
 *   h [R, d] -> cond_embed -> ce [R, fd]          (constant over the sampler steps)
 *   te_i [fd]: the time embedding of step i        (constant for a step count: computed at create)
 *              lsd (T0(s_i) + T1(t_i)) / 2, flow_matching T0(t_i), drifting 0 (no embedder)
 *   y [R, fd] = te_i + ce;  sy = silu(y)
 *   x [R, ld] -> input_proj -> xh [R, fd]
 *   res block: adaLN_modulation.1(sy) -> [R, 3 fd] = shift | scale | gate
 *              xh += gate * mlp.2(silu(mlp.0(LN(xh; in_ln, 1e-6) * (1 + scale) + shift)))
 *   final:     final_layer.adaLN_modulation.1(sy) -> [R, 2 fd] = shift | scale
 *              v [R, ld] = final_layer.linear(LN(xh; 1e-6, no affine) * (1 + scale) + shift)
 *   lsd, N steps: x_0 = noise; x += v(h, s = i/N, t = (i+1)/N, x) / N for i < N.
 *   flow_matching, N steps (Euler): x_0 = noise; x += v(h, t = i/N, x) / N for i < N.
 *   drifting: latent = v(h, noise), one evaluation, not added to the noise (N is ignored).
 * T_k(tau) = RMSNorm(mlp.2(silu(mlp.0([cos(tau freqs), sin(tau freqs)]))); mlp.3.alpha) with the
 * odd RMSNorm: x * alpha / sqrt(unbiased var(x) + 1e-5), x not centred. T0 takes s, T1 takes t.
 * All scratch is allocated at create; ptts_flow_sample allocates nothing.
 */
#include "flow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FLOW_LN_EPS 1e-6f
#define FLOW_RMS_EPS 1e-5

struct ptts_flow {
    const ptts_flow_weights *w;
    int type;  /* PTTS_FLOW_* */
    int steps; /* as asked */
    int evals; /* flow evaluations per sample: steps, or 1 for drifting */
    int max_rows;
    int d, fd, ld, depth;
    float *te;  /* [evals, fd] */
    float *ce;  /* [R, fd] cond_embed(h) */
    float *sy;  /* [R, fd] silu(te + ce) */
    float *xh;  /* [R, fd] the flow's hidden state */
    float *hb;  /* [R, fd] modulated LN output */
    float *ub;  /* [R, fd] mlp.0 output (silu in place) */
    float *mod; /* [R, 3 fd] shift | scale | gate */
    float *vb;  /* [R, ld] flow direction */
};

/* T_k(tau) -> out [fd]. Runs once per step at create (single-threaded reference kernels). */
static void time_embed(const ptts_ctx *c, const ptts_time_embed *T, int nfreq, int fd, float tau,
                       float *e, float *a, float *b, float *out) {
    for (int j = 0; j < nfreq; j++) {
        float arg = tau * T->freqs[j];
        e[j] = cosf(arg);
        e[nfreq + j] = sinf(arg);
    }
    ptts_linear(c, &T->mlp0, e, 1, a);
    c->k->silu(a, a, fd);
    ptts_linear(c, &T->mlp2, a, 1, b);
    double mean = 0;
    for (int j = 0; j < fd; j++)
        mean += b[j];
    mean /= fd;
    double var = 0;
    for (int j = 0; j < fd; j++)
        var += ((double)b[j] - mean) * ((double)b[j] - mean);
    var = fd > 1 ? var / (fd - 1) : 0.0;
    float inv = (float)(1.0 / sqrt(var + FLOW_RMS_EPS));
    for (int j = 0; j < fd; j++)
        out[j] = b[j] * (T->alpha[j] * inv);
}

int ptts_flow_time_table(const ptts_weights *w, int steps, float *te, ptts_error *e) {
    const ptts_arch *a = &w->arch;
    const size_t fd = (size_t)a->fd;
    if (a->flow_type == PTTS_FLOW_DRIFTING) { /* K = 0: y = cond_embed(h) alone */
        memset(te, 0, (size_t)steps * fd * sizeof *te);
        return 0;
    }
    if (a->flow_type != PTTS_FLOW_LSD && a->flow_type != PTTS_FLOW_MATCHING)
        return ptts_fail(e, PTTS_E_MODEL, "flow head: unknown sampler type %d", a->flow_type);
    float *tmp = ptts_calloc_aligned((2 * (size_t)a->nfreq + 4 * fd) * sizeof(float));
    if (!tmp) return ptts_fail(e, PTTS_E_NOMEM, "flow head: out of memory");
    const ptts_ctx c = {ptts_kernels_ref(), NULL};
    float *emb = tmp, *ta = emb + 2 * a->nfreq, *tb = ta + fd, *t0 = tb + fd, *t1 = t0 + fd;
    for (int i = 0; i < steps; i++) {
        /* the times are float32 scalars: the double i/N rounded */
        float s = (float)((double)i / steps), t = (float)((double)(i + 1) / steps);
        float *out = te + (size_t)i * fd;
        if (a->flow_type == PTTS_FLOW_MATCHING) { /* one embedder, of t = i/N */
            time_embed(&c, &w->flow.time[0], a->nfreq, a->fd, s, emb, ta, tb, out);
            continue;
        }
        time_embed(&c, &w->flow.time[0], a->nfreq, a->fd, s, emb, ta, tb, t0);
        time_embed(&c, &w->flow.time[1], a->nfreq, a->fd, t, emb, ta, tb, t1);
        for (size_t j = 0; j < fd; j++)
            out[j] = (t0[j] + t1[j]) / 2.0f;
    }
    ptts_free_aligned(tmp);
    return 0;
}

static float *scratch(size_t rows, size_t width, int *fail) {
    size_t n;
    if (ptts_mul_size(rows, width, &n) || ptts_mul_size(n, sizeof(float), &n)) {
        *fail = 1;
        return NULL;
    }
    float *p = ptts_calloc_aligned(n);
    if (!p) *fail = 1;
    return p;
}

int ptts_flow_create(ptts_flow **out, const ptts_weights *w, int steps, int max_rows,
                     ptts_error *e) {
    if (!out || !w) return ptts_fail(e, PTTS_E_INVALID, "flow head: NULL argument");
    *out = NULL;
    if (steps < 1 || steps > 1000)
        return ptts_fail(e, PTTS_E_INVALID, "flow head: sampler steps must be in [1, 1000], got %d",
                         steps);
    if (max_rows < 1)
        return ptts_fail(e, PTTS_E_INVALID, "flow head: max_rows must be >= 1, got %d", max_rows);
    const ptts_arch *a = &w->arch;
    const ptts_flow_weights *fw = &w->flow;
    if (a->fd < 1 || a->ld < 1 || a->d < 1 || a->nfreq < 1 || a->flow_depth < 0 ||
        (a->flow_depth > 0 && !fw->block))
        return ptts_fail(e, PTTS_E_MODEL, "flow head: weights are not bound");
    if (ptts_flow_k(a->flow_type) != a->n_time_embed)
        return ptts_fail(e, PTTS_E_MODEL, "flow head: a %s sampler with %d time embedders",
                         ptts_flow_type_name(a->flow_type), a->n_time_embed);

    ptts_flow *f = calloc(1, sizeof *f);
    if (!f) return ptts_fail(e, PTTS_E_NOMEM, "flow head: out of memory");
    f->w = fw;
    f->type = a->flow_type;
    f->steps = steps;
    f->evals = a->flow_type == PTTS_FLOW_DRIFTING ? 1 : steps;
    f->max_rows = max_rows;
    f->d = a->d;
    f->fd = a->fd;
    f->ld = a->ld;
    f->depth = a->flow_depth;
    const size_t R = (size_t)max_rows, fd = (size_t)a->fd;
    int fail = 0;
    f->te = scratch((size_t)f->evals, fd, &fail);
    f->ce = scratch(R, fd, &fail);
    f->sy = scratch(R, fd, &fail);
    f->xh = scratch(R, fd, &fail);
    f->hb = scratch(R, fd, &fail);
    f->ub = scratch(R, fd, &fail);
    f->mod = scratch(R, 3 * fd, &fail);
    f->vb = scratch(R, (size_t)a->ld, &fail);
    int rc = fail ? ptts_fail(e, PTTS_E_NOMEM, "flow head: out of memory")
                  : ptts_flow_time_table(w, f->evals, f->te, e);
    if (rc) {
        ptts_flow_free(f);
        return rc;
    }
    *out = f;
    return PTTS_OK;
}

void ptts_flow_free(ptts_flow *f) {
    if (!f) return;
    ptts_free_aligned(f->te);
    ptts_free_aligned(f->ce);
    ptts_free_aligned(f->sy);
    ptts_free_aligned(f->xh);
    ptts_free_aligned(f->hb);
    ptts_free_aligned(f->ub);
    ptts_free_aligned(f->mod);
    ptts_free_aligned(f->vb);
    free(f);
}

int ptts_flow_steps(const ptts_flow *f) { return f->steps; }

/* hb[r] = LN(xh[r]) * (1 + scale[r]) + shift[r]; mod rows have stride `ms` floats. */
static void modulate(const ptts_ctx *c, float *hb, const float *xh, const float *lw,
                     const float *lb, const float *mod, size_t ms, int rows, int fd) {
    for (int r = 0; r < rows; r++) {
        float *y = hb + (size_t)r * fd;
        const float *shift = mod + (size_t)r * ms, *scale = shift + fd;
        c->k->layernorm(y, xh + (size_t)r * fd, lw, lb, fd, FLOW_LN_EPS);
        for (int j = 0; j < fd; j++)
            y[j] = y[j] * (1.0f + scale[j]) + shift[j];
    }
}

static void sample_rows(ptts_flow *f, const ptts_ctx *c, const float *h, const float *x0, int rows,
                        float *out);

void ptts_flow_sample(ptts_flow *f, const ptts_ctx *c, const float *h, const float *x0, int rows,
                      float *out) {
    /* Rows are independent: more than max_rows are done max_rows at a time. */
    for (int r0 = 0; r0 < rows; r0 += f->max_rows) {
        const int n = PTTS_MIN(f->max_rows, rows - r0);
        sample_rows(f, c, h + (size_t)r0 * f->d, x0 + (size_t)r0 * f->ld, n,
                    out + (size_t)r0 * f->ld);
    }
}

static void sample_rows(ptts_flow *f, const ptts_ctx *c, const float *h, const float *x0, int rows,
                        float *out) {
    const ptts_flow_weights *w = f->w;
    const int fd = f->fd, ld = f->ld;
    const size_t nfd = (size_t)rows * fd;

    if (out != x0) memcpy(out, x0, (size_t)rows * ld * sizeof *out);
    ptts_linear(c, &w->cond_embed, h, rows, f->ce);

    for (int i = 0; i < f->evals; i++) {
        const float *te = f->te + (size_t)i * fd;
        for (int r = 0; r < rows; r++) {
            float *sy = f->sy + (size_t)r * fd;
            const float *ce = f->ce + (size_t)r * fd;
            for (int j = 0; j < fd; j++)
                sy[j] = te[j] + ce[j];
        }
        c->k->silu(f->sy, f->sy, (int)nfd);
        ptts_linear(c, &w->input_proj, out, rows, f->xh);

        for (int b = 0; b < f->depth; b++) {
            const ptts_res_block *B = &w->block[b];
            const size_t ms = 3 * (size_t)fd;
            ptts_linear(c, &B->ada, f->sy, rows, f->mod);
            modulate(c, f->hb, f->xh, B->ln_w, B->ln_b, f->mod, ms, rows, fd);
            ptts_linear(c, &B->mlp0, f->hb, rows, f->ub);
            c->k->silu(f->ub, f->ub, (int)nfd);
            ptts_linear(c, &B->mlp2, f->ub, rows, f->hb);
            for (int r = 0; r < rows; r++) {
                float *x = f->xh + (size_t)r * fd;
                const float *u = f->hb + (size_t)r * fd;
                const float *gate = f->mod + (size_t)r * ms + 2 * (size_t)fd;
                for (int j = 0; j < fd; j++)
                    x[j] += gate[j] * u[j];
            }
        }

        ptts_linear(c, &w->final_ada, f->sy, rows, f->mod);
        modulate(c, f->hb, f->xh, NULL, NULL, f->mod, 2 * (size_t)fd, rows, fd);
        if (f->type == PTTS_FLOW_DRIFTING) { /* the output is the latent */
            ptts_linear(c, &w->final_linear, f->hb, rows, out);
            break;
        }
        ptts_linear(c, &w->final_linear, f->hb, rows, f->vb);
        const float n = (float)f->steps;
        for (size_t j = 0; j < (size_t)rows * ld; j++)
            out[j] += f->vb[j] / n;
    }
}
