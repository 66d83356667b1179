/*
 * gemm_loop.h - the ISA-independent driver loops of the SIMD kernel tables: blocking over
 * rows of X and W, X panels, stack buffers of quantised / rounded X rows, panel stepping and
 * the dispatch of tails to register tiles of constant size. Included by kernels_avx2.c,
 * kernels_avx512.c and kernels_neon.c after they define their register-level code; every
 * function here is static, so each table gets its own copy compiled with its own flags.
 *
 * The including file defines:
 *   AI                       static inline always_inline
 *   WT_F32, WT_BF16, WT_Q8   weight types of the widening gemm
 *   NB                       X rows per widening / q8q tile (3 or 4)
 *   tile4, tile1             (wt, pf, nb, K, X, ldx, W, m, scale, b, Y, ldy): rows m..m+3 (or m)
 *                            of W against rows 0..nb-1 of X, nb <= NB a constant after inlining;
 *                            pf != 0: W's lines prefetched pf bytes ahead (pf_ahead)
 *   qx_t, QALIGN             element type of a quantised X row (q8q) and the multiple of K its
 *                            rows are padded to (with the value of q = 0)
 *   quant_row                (K, Kp, x, xq) -> d: row x quantised as kernels.h specifies
 *   qtile                    (nr, pf, nb, K, Kp, xq, d, W, m, scale, b, Y, ldy), nr 1 or 4
 *   PR, BPR                  X rows per f32 / bf16 panel tile (2, 3, 4 or 8, as a literal: the
 *                            tail dispatch is chosen by token pasting)
 *   panel_out, panel_setup   (b, m, left): bias and store masks of one panel (left outputs)
 *   ptile                    (nr, K, X, ldx, Wp, o, Y, ldy, pf): f32 panel tile, nr <= PR, the
 *                            panel's lines pf bytes ahead prefetched (0: none; "panels" below)
 *   xrows_bf16               (rows, K, Kp, X, ldx, xb): rows of X rounded to bf16 as
 *                            kernels.h specifies (DAZ), zero-padded to Kp = K rounded up to even
 *   btile                    (nr, K2, xb, Kp, Wp16, o, Y, ldy, pf): bf16 panel tile, nr <= BPR
 */
#ifndef PTTS_GEMM_LOOP_H
#define PTTS_GEMM_LOOP_H

#if NB != 3 && NB != 4
#error "gemm_loop.h: NB must be 3 or 4"
#endif

/* ---- streamed matrices (ptts_lin.stream, the *_stream entries) ---------------------------
 * A matrix read once a step and larger than the caches (the backbone's, 76-302 MB a step) is
 * read with each line prefetched PF_AHEAD bytes ahead into L2 (pf_ahead, PREFETCHT1), on x86
 * (ptts_cpu_prefetch, PTTS_PF_STREAM). Also for a batch's N > NB: the chunks of NB rows re-read
 * a block of W (4 rows, 4-16 KiB) from L1 right after its first read, and without the prefetch
 * the hardware's own did not keep the compute fed (a 2-vCPU Zen 5, one thread, the backbone's 24
 * int8 matrices: N = 8 12.1-12.7 -> 5.1-5.8 ms a pass, at the kernel's in-cache speed; N = 16
 * 18.4 -> 9.2-9.8; bf16 N = 8 20.0-21.5 -> 17.6-18.0; bench/RESULTS.md, "The CPU server against
 * the engine; batched steps prefetched"). The same arithmetic: the plain entries' bits.
 * Measured with `bench_pipeline --threads 2 --stored bf16`, interleaved (bench/RESULTS.md,
 * "Streamed backbone weights" and "The prefetch policy on a second Zen 4"): on the H200 host's
 * Xeon (Sapphire / Emerald Rapids), against no prefetch (medians of 4 rounds): bf16 step 8.85
 * -> 5.40 ms and loop 12.93 -> 9.04; float32 on bf16 values 9.93 -> 4.56 and 16.53 -> 13.28;
 * int8 2.44 -> 2.17 and 6.96 -> 5.12; there the non-temporal form (PREFETCHNTA) lost 26-43% on
 * the step and 25-62% on the loop (its fills skip L2), T0 gained least. On a 2-vCPU Zen 4 the
 * non-temporal form took the int8 step from ~2.03 to 1.49-1.63 ms and the loop from ~3.4 to
 * 2.85-3.07 (this form: 1.64-1.94 and 2.95-3.17), so AMD used it until, on a second Zen 4 host,
 * this form beat it on the loop in every mode (int8 7.22 -> 5.28 ms, bf16 10.00 -> 7.29, float32
 * on bf16 values 11.46 -> 9.21; 10 of 10 rounds each): one form for x86, the one that never
 * lost much. */
#define PF_AHEAD 16384

/* m blocks of 4 rows of W outside, chunks of NB rows of X inside, so a 4-row W block is read
 * from memory once and re-read from L1/L2 by every chunk; X in panels of about 256 KiB (a
 * multiple of NB rows) kept in L2 while W streams past: W is read once per panel. */
AI void gemm_run(int wt, int pf, int N, int K, const float *X, int ldx, const void *W,
                 const float *scale, const float *b, float *Y, int ldy, int m0, int m1) {
    if (N <= 0 || m1 <= m0) return;
    int panel = K > 0 ? (int)((256u * 1024u) / ((unsigned)K * 4u)) : N;
    panel = panel / NB * NB;
    if (panel < NB) panel = NB;
    for (int n0 = 0; n0 < N; n0 += panel) {
        const int n1 = N - n0 < panel ? N : n0 + panel;
        int m = m0;
        for (; m + 4 <= m1; m += 4) {
            int n = n0;
            for (; n + NB <= n1; n += NB)
                tile4(wt, pf, NB, K, X + (size_t)n * ldx, ldx, W, m, scale, b, Y + (size_t)n * ldy,
                      ldy);
            const float *x = X + (size_t)n * ldx;
            float *y = Y + (size_t)n * ldy;
            switch (n1 - n) {
#if NB > 3
            case 3: tile4(wt, pf, 3, K, x, ldx, W, m, scale, b, y, ldy); break;
#endif
            case 2: tile4(wt, pf, 2, K, x, ldx, W, m, scale, b, y, ldy); break;
            case 1: tile4(wt, pf, 1, K, x, ldx, W, m, scale, b, y, ldy); break;
            default: break;
            }
        }
        for (; m < m1; m++) {
            int n = n0;
            for (; n + NB <= n1; n += NB)
                tile1(wt, pf, NB, K, X + (size_t)n * ldx, ldx, W, m, scale, b, Y + (size_t)n * ldy,
                      ldy);
            const float *x = X + (size_t)n * ldx;
            float *y = Y + (size_t)n * ldy;
            switch (n1 - n) {
#if NB > 3
            case 3: tile1(wt, pf, 3, K, x, ldx, W, m, scale, b, y, ldy); break;
#endif
            case 2: tile1(wt, pf, 2, K, x, ldx, W, m, scale, b, y, ldy); break;
            case 1: tile1(wt, pf, 1, K, x, ldx, W, m, scale, b, y, ldy); break;
            default: break;
            }
        }
    }
}

/* stream: the *_stream entries (W prefetched ahead, as the CPU wants it) */
AI void gemm_any(int wt, int stream, int N, int K, const float *X, int ldx, const void *W,
                 const float *scale, const float *b, float *Y, int ldy, int m0, int m1) {
    if (stream && (ptts_cpu_prefetch() & PTTS_PF_STREAM))
        gemm_run(wt, PF_AHEAD, N, K, X, ldx, W, scale, b, Y, ldy, m0, m1);
    else
        gemm_run(wt, 0, N, K, X, ldx, W, scale, b, Y, ldy, m0, m1);
}

static void gemm_f32_isa(int N, int K, const float *X, int ldx, const float *W, const float *b,
                         float *Y, int ldy, int m0, int m1) {
    gemm_any(WT_F32, 0, N, K, X, ldx, W, NULL, b, Y, ldy, m0, m1);
}

static void gemm_bf16_isa(int N, int K, const float *X, int ldx, const uint16_t *W, const float *b,
                          float *Y, int ldy, int m0, int m1) {
    gemm_any(WT_BF16, 0, N, K, X, ldx, W, NULL, b, Y, ldy, m0, m1);
}

static void gemm_q8_isa(int N, int K, const float *X, int ldx, const int8_t *W, const float *scale,
                        const float *b, float *Y, int ldy, int m0, int m1) {
    gemm_any(WT_Q8, 0, N, K, X, ldx, W, scale, b, Y, ldy, m0, m1);
}

static void gemm_f32_stream_isa(int N, int K, const float *X, int ldx, const float *W,
                                const float *b, float *Y, int ldy, int m0, int m1) {
    gemm_any(WT_F32, 1, N, K, X, ldx, W, NULL, b, Y, ldy, m0, m1);
}

static void gemm_bf16_stream_isa(int N, int K, const float *X, int ldx, const uint16_t *W,
                                 const float *b, float *Y, int ldy, int m0, int m1) {
    gemm_any(WT_BF16, 1, N, K, X, ldx, W, NULL, b, Y, ldy, m0, m1);
}

/* ---- q8q: X quantised per row into a stack buffer, integer dot products ------------------
 * Chunks of rows of X are quantised once (QBUF bytes) and reused by every W block; m blocks of
 * 4 rows (the last ones 1 row), chunks of NB rows of X inside. */
#define QBUF (64 * 1024)

AI void q8q_run(int pf, int N, int K, const float *X, int ldx, const int8_t *W, const float *scale,
                const float *b, float *Y, int ldy, int m0, int m1) {
    if (N <= 0 || m1 <= m0 || K > PTTS_Q8Q_KMAX) return;
    if (K <= 0) { /* empty dot products: d = 0, dot = 0, as the reference */
        for (int n = 0; n < N; n++)
            for (int m = m0; m < m1; m++)
                Y[(size_t)n * ldy + m] = ((0.f * 0.f) * scale[m]) + (b ? b[m] : 0.f);
        return;
    }
    const int Kp = (K + QALIGN - 1) / QALIGN * QALIGN;
    _Alignas(64) qx_t xq[QBUF / sizeof(qx_t)];
    float d[QBUF / QALIGN];
    int chunk = (int)(QBUF / sizeof(qx_t)) / Kp;
    if (chunk > NB) chunk = chunk / NB * NB;
    for (int n0 = 0; n0 < N; n0 += chunk) {
        const int n1 = N - n0 < chunk ? N : n0 + chunk;
        for (int n = n0; n < n1; n++)
            d[n - n0] = quant_row(K, Kp, X + (size_t)n * ldx, xq + (size_t)(n - n0) * Kp);
        for (int m = m0; m < m1;) {
            const int four = m1 - m >= 4;
            int n = n0;
            for (; n + NB <= n1; n += NB) {
                const qx_t *x = xq + (size_t)(n - n0) * Kp;
                float *y = Y + (size_t)n * ldy;
                if (four)
                    qtile(4, pf, NB, K, Kp, x, d + (n - n0), W, m, scale, b, y, ldy);
                else
                    qtile(1, pf, NB, K, Kp, x, d + (n - n0), W, m, scale, b, y, ldy);
            }
            const qx_t *x = xq + (size_t)(n - n0) * Kp;
            const float *dd = d + (n - n0);
            float *y = Y + (size_t)n * ldy;
            switch ((n1 - n) * 2 + four) {
#if NB > 3
            case 7: qtile(4, pf, 3, K, Kp, x, dd, W, m, scale, b, y, ldy); break;
            case 6: qtile(1, pf, 3, K, Kp, x, dd, W, m, scale, b, y, ldy); break;
#endif
            case 5: qtile(4, pf, 2, K, Kp, x, dd, W, m, scale, b, y, ldy); break;
            case 3: qtile(4, pf, 1, K, Kp, x, dd, W, m, scale, b, y, ldy); break;
            case 4: qtile(1, pf, 2, K, Kp, x, dd, W, m, scale, b, y, ldy); break;
            case 2: qtile(1, pf, 1, K, Kp, x, dd, W, m, scale, b, y, ldy); break;
            default: break;
            }
            m += four ? 4 : 1;
        }
    }
}

static void gemm_q8q_isa(int N, int K, const float *X, int ldx, const int8_t *W, const float *scale,
                         const float *b, float *Y, int ldy, int m0, int m1) {
    q8q_run(0, N, K, X, ldx, W, scale, b, Y, ldy, m0, m1);
}

static void gemm_q8q_stream_isa(int N, int K, const float *X, int ldx, const int8_t *W,
                                const float *scale, const float *b, float *Y, int ldy, int m0,
                                int m1) {
    if (ptts_cpu_prefetch() & PTTS_PF_STREAM)
        q8q_run(PF_AHEAD, N, K, X, ldx, W, scale, b, Y, ldy, m0, m1);
    else
        q8q_run(0, N, K, X, ldx, W, scale, b, Y, ldy, m0, m1);
}

/* ---- panels (outer products) --------------------------------------------------------------
 * Rows [n0, n1) of X in tiles of PR rows against one panel of 32 outputs at a time. A call of
 * at most PANEL_PF_ROWS rows (the codec's low-rate stages: 16 rows against ~19 MB of bf16 or
 * ~38 MB of f32 panels a frame) reads each panel from memory in its first row tile and the
 * rest from L1/L2: that tile prefetches the panel PANEL_PF bytes ahead, on Intel
 * (PTTS_PF_PANEL; measured there with the AVX-512 tiles: bench/RESULTS.md, "Panels
 * prefetched"); not on AMD (a 2-vCPU Zen 4, interleaved: the loop within 1% without the stream
 * prefetch and 5% slower with it, "The prefetch policy on a second Zen 4"); the AVX2 tiles
 * ignore it (measured: it lost there), NEON's too (not measured). No value changes. */
#define PANEL_PF_ROWS 16
#define PANEL_PF 4096

static int panel_pf_bytes(int rows) {
    return rows <= PANEL_PF_ROWS && (ptts_cpu_prefetch() & PTTS_PF_PANEL) ? PANEL_PF : 0;
}

/* The tails of PANEL_ROWS: TILE(t, r) for the t < P rows left, t a constant. */
#define PANEL_TAIL_8(TILE, r)                                                                      \
    case 7: TILE(7, r); break;                                                                     \
    case 6: TILE(6, r); break;                                                                     \
    case 5: TILE(5, r); break;                                                                     \
    case 4:                                                                                        \
        TILE(4, r);                                                                                \
        break;                                                                                     \
        PANEL_TAIL_4(TILE, r)
#define PANEL_TAIL_4(TILE, r)                                                                      \
    case 3:                                                                                        \
        TILE(3, r);                                                                                \
        break;                                                                                     \
        PANEL_TAIL_3(TILE, r)
#define PANEL_TAIL_3(TILE, r)                                                                      \
    case 2:                                                                                        \
        TILE(2, r);                                                                                \
        break;                                                                                     \
        PANEL_TAIL_2(TILE, r)
#define PANEL_TAIL_2(TILE, r)                                                                      \
    case 1:                                                                                        \
        TILE(1, r);                                                                                \
        break;
#define PANEL_TAIL(P, TILE, r) PANEL_TAIL_EXPAND(P, TILE, r)
#define PANEL_TAIL_EXPAND(P, TILE, r) PANEL_TAIL_##P(TILE, r)

/* Calls TILE(nr, r) over the rows [0, rows) in tiles of P rows (a macro: 2, 3, 4 or 8), then
 * the tail. */
#define PANEL_ROWS(rows, P, TILE)                                                                  \
    do {                                                                                           \
        int r_ = 0;                                                                                \
        for (; r_ + (P) <= (rows); r_ += (P))                                                      \
            TILE(P, r_);                                                                           \
        switch ((rows)-r_) {                                                                       \
            PANEL_TAIL(P, TILE, r_)                                                                \
        default: break;                                                                            \
        }                                                                                          \
    } while (0)

static void gemm_f32_panel_isa(int K, const float *X, int ldx, const float *Wp, const float *b,
                               float *Y, int ldy, int M, int n0, int n1, int p0, int p1) {
    if (n1 <= n0) return;
    const float *Xn = X + (size_t)n0 * ldx;
    const int pf = panel_pf_bytes(n1 - n0);
    for (int p = p0; p < p1; p++) {
        const int m = p * PTTS_PANEL, left = M - m;
        if (left <= 0) break;
        const panel_out o = panel_setup(b, m, left);
        const float *W = Wp + (size_t)p * K * PTTS_PANEL;
        float *Ym = Y + (size_t)n0 * ldy + m;
#define PTILE(nr, r)                                                                               \
    ptile(nr, K, Xn + (size_t)(r)*ldx, ldx, W, &o, Ym + (size_t)(r)*ldy, ldy, (r) ? 0 : pf)
        PANEL_ROWS(n1 - n0, PR, PTILE);
#undef PTILE
    }
}

/* X rows rounded to bf16 once per chunk (BXBUF bytes) and reused by every panel; the panel
 * (K * 64 bytes) is re-read from L1/L2 by the chunk's row tiles. */
#define BXBUF (64 * 1024)

static void gemm_bf16_panel_isa(int K, const float *X, int ldx, const uint16_t *Wp16,
                                const float *b, float *Y, int ldy, int M, int n0, int n1, int p0,
                                int p1) {
    if (n1 <= n0 || K < 0 || K > PTTS_BF16_PANEL_KMAX) return;
    const int Kp = (K + 1) & ~1, K2 = Kp / 2;
    _Alignas(64) uint16_t xb[BXBUF / sizeof(uint16_t)];
    const int pf = panel_pf_bytes(n1 - n0);
    int chunk = Kp ? BXBUF / (2 * Kp) : n1 - n0;
    if (chunk >= BPR) chunk -= chunk % BPR;
    for (int nc = n0; nc < n1; nc += chunk) {
        const int rows = n1 - nc < chunk ? n1 - nc : chunk;
        xrows_bf16(rows, K, Kp, X + (size_t)nc * ldx, ldx, xb);
        for (int p = p0; p < p1; p++) {
            const int m = p * PTTS_PANEL, left = M - m;
            if (left <= 0) break;
            const panel_out o = panel_setup(b, m, left);
            const uint16_t *W = Wp16 + (size_t)p * K2 * 2 * PTTS_PANEL;
            float *Yc = Y + (size_t)nc * ldy + m;
#define BTILE(nr, r)                                                                               \
    btile(nr, K2, xb + (size_t)(r)*Kp, Kp, W, &o, Yc + (size_t)(r)*ldy, ldy, (r) ? 0 : pf)
            PANEL_ROWS(rows, BPR, BTILE);
#undef BTILE
        }
    }
}

#endif
