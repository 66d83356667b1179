/*
 * flow_check.h - shared body of test_flow.c (tiny) and test_flow_full.c (full size): the flow
 * head + its sampler against a flow_head*.safetensors fixture (cond [5, d] = h, noise [5, ld] ->
 * out_steps{N} [5, ld] for the listed N), rows together, one at a time, in place, and on a
 * thread pool.
 */
#ifndef PTTS_FLOW_CHECK_H
#define PTTS_FLOW_CHECK_H

#include "flow.h"
#include "safetensors.h"
#include "test.h"

static float *flow_check_read(st_file *f, const char *name, int64_t rows, int64_t cols) {
    ptts_error e = {0};
    const int64_t shape[2] = {rows, cols};
    const st_tensor *t = NULL;
    if (st_expect(f, name, 2, shape, &t, &e) != 0) {
        fprintf(stderr, "%s\n", e.msg);
        exit(1);
    }
    float *v = malloc((size_t)(rows * cols) * sizeof *v);
    REQUIRE(v != NULL);
    REQUIRE(st_to_f32(f, t, v, &e) == 0);
    return v;
}

/* Max relative L2 error per row of out [rows, ld] against want. */
static double flow_check_err(const float *out, const float *want, int rows, int ld) {
    double worst = 0;
    for (int r = 0; r < rows; r++) {
        double err = rel_l2(out + (size_t)r * ld, want + (size_t)r * ld, (size_t)ld);
        if (!(err <= worst)) worst = err;
    }
    return worst;
}

/* steps_list [n_steps]: the N of the fixture's out_steps{N}, ascending. */
static void flow_check(const ptts_weights *w, const char *fixture, double tol,
                       const int *steps_list, int n_steps) {
    ptts_error e = {0};
    st_file *f = NULL;
    if (st_open(&f, fixture_path(fixture), &e) != 0) {
        fprintf(stderr, "%s\n", e.msg);
        exit(1);
    }
    const int d = w->arch.d, ld = w->arch.ld, R = 5;
    float *cond = flow_check_read(f, "cond", R, d);
    float *noise = flow_check_read(f, "noise", R, ld);
    float *out = malloc((size_t)R * ld * sizeof *out);
    REQUIRE(out != NULL);

    ptts_pool *pool = ptts_pool_create(2);
    REQUIRE(pool != NULL);
    const ptts_ctx ctxs[2] = {{ptts_kernels_best(), NULL}, {ptts_kernels_best(), pool}};

    for (int si = 0; si < n_steps; si++) {
        const int steps = steps_list[si];
        char name[32];
        snprintf(name, sizeof name, "out_steps%d", steps);
        float *want = flow_check_read(f, name, R, ld);

        ptts_flow *fl = NULL;
        REQUIRE(ptts_flow_create(&fl, w, steps, R, &e) == 0);
        CHECK(ptts_flow_steps(fl) == steps);
        for (int ci = 0; ci < 2; ci++) {
            const ptts_ctx *c = &ctxs[ci];
            /* all rows together */
            memset(out, 0, (size_t)R * ld * sizeof *out);
            ptts_flow_sample(fl, c, cond, noise, R, out);
            double err_all = flow_check_err(out, want, R, ld);
            /* one row at a time */
            for (int r = 0; r < R; r++)
                ptts_flow_sample(fl, c, cond + (size_t)r * d, noise + (size_t)r * ld, 1,
                                 out + (size_t)r * ld);
            double err_one = flow_check_err(out, want, R, ld);
            /* in place (out aliases x0), rows 1..4 */
            memcpy(out, noise, (size_t)R * ld * sizeof *out);
            ptts_flow_sample(fl, c, cond + d, out + ld, R - 1, out + ld);
            double err_inplace = flow_check_err(out + ld, want + ld, R - 1, ld);
            printf("%s steps %d (%s, %d threads): rows together %.3g, one at a time %.3g, "
                   "in place %.3g\n",
                   fixture, steps, c->k->isa, c->pool ? ptts_pool_threads(c->pool) : 1, err_all,
                   err_one, err_inplace);
            CHECKF(err_all <= tol, "steps %d: %g", steps, err_all);
            CHECKF(err_one <= tol, "steps %d: %g", steps, err_one);
            CHECKF(err_inplace <= tol, "steps %d: %g", steps, err_inplace);
        }
        ptts_flow_free(fl);
        free(want);
    }

    /* More rows than max_rows: done max_rows at a time. */
    const int last = steps_list[n_steps - 1];
    char last_name[32];
    snprintf(last_name, sizeof last_name, "out_steps%d", last);
    {
        float *want = flow_check_read(f, last_name, R, ld);
        ptts_flow *fl = NULL;
        REQUIRE(ptts_flow_create(&fl, w, last, 2, &e) == 0);
        ptts_flow_sample(fl, &ctxs[1], cond, noise, R, out);
        double err = flow_check_err(out, want, R, ld);
        printf("%s steps %d, 5 rows with max_rows 2: %.3g\n", fixture, last, err);
        CHECKF(err <= tol, "max_rows 2: %g", err);
        ptts_flow_free(fl);
        free(want);
    }

    /* The step counts give different latents (the test above is not vacuous); the drifting
     * head ignores N (4 steps give the 1-step output exactly). */
    float *w1 = flow_check_read(f, "out_steps1", R, ld);
    if (n_steps > 1) {
        float *wl = flow_check_read(f, last_name, R, ld);
        CHECK(flow_check_err(w1, wl, R, ld) > 100 * tol);
        free(wl);
    } else {
        ptts_flow *fl = NULL;
        float *o1 = malloc((size_t)R * ld * sizeof *o1);
        REQUIRE(o1 && ptts_flow_create(&fl, w, 1, R, &e) == 0);
        ptts_flow_sample(fl, &ctxs[0], cond, noise, R, o1);
        ptts_flow_free(fl);
        REQUIRE(ptts_flow_create(&fl, w, 4, R, &e) == 0);
        ptts_flow_sample(fl, &ctxs[0], cond, noise, R, out);
        ptts_flow_free(fl);
        CHECK(memcmp(o1, out, (size_t)R * ld * sizeof *o1) == 0);
        /* and its output is not the noise plus something small: it replaces the noise */
        CHECK(flow_check_err(o1, noise, R, ld) > 0.5);
        free(o1);
    }
    free(w1);

    /* Bad arguments are refused. */
    ptts_flow *fl = NULL;
    CHECK(ptts_flow_create(&fl, w, 0, R, &e) == PTTS_E_INVALID && fl == NULL);
    CHECK(ptts_flow_create(&fl, w, 1, 0, &e) == PTTS_E_INVALID && fl == NULL);

    ptts_pool_free(pool);
    free(out);
    free(noise);
    free(cond);
    st_close(f);
}

#endif
