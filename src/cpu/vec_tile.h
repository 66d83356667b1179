/*
 * vec_tile.h - the register tiles of the widening gemm (f32 / bf16 / q8 weights) of the x86
 * tables, written once on the vector primitives of vec_loop.h: included by kernels_avx2.c and
 * kernels_avx512.c after those primitives and the following, before gemm_loop.h (which drives
 * the tiles):
 *   ldw, ldw_n             (wt, W, off [, r]): VL weights (the first r) widened to f32, exactly
 *   vhsum4                 (a, b, c, d): the four horizontal sums in one __m128
 *   tile4_head             (wt, pf, nb, K, X, ldx, W, row, acc): an ISA-specific prefix of the
 *                          4-row tile's k loop; returns the k it reached (0: none)
 *   pf_ahead               (p, pf): fetch the line pf bytes past p (gemm_loop.h, "streamed
 *                          matrices")
 *   NB, WT_*               as for gemm_loop.h
 */
#ifndef PTTS_VEC_TILE_H
#define PTTS_VEC_TILE_H

/* ---- widening gemm tiles ------------------------------------------------------------------
 * K tails through masked (tail) loads, no reads past a row; the sums of 4 rows of W land in one
 * 128-bit vector, so per-row scale (q8: acc * scale, then + b, two roundings as the reference)
 * bias and store take 4 outputs at a time. */

/* Rows m..m+3 of W against rows 0..nb-1 of X (nb a constant after inlining); pf != 0: each line
 * of W read is prefetched pf bytes ahead (a streamed matrix, gemm_loop.h). */
AI void tile4(int wt, int pf, int nb, int K, const float *X, int ldx, const void *W, int m,
              const float *scale, const float *b, float *Y, int ldy) {
    const int esz = wt == WT_F32 ? 4 : wt == WT_BF16 ? 2 : 1;
    vf acc[4][NB];
    for (int r = 0; r < 4; r++)
        for (int n = 0; n < nb; n++)
            acc[r][n] = vzero();
    const size_t row = (size_t)m * (size_t)K;
    int k = tile4_head(wt, pf, nb, K, X, ldx, W, row, acc);
    for (; k + VL <= K; k += VL) {
        vf xv[NB];
        for (int n = 0; n < nb; n++)
            xv[n] = vload(X + (size_t)n * ldx + k);
        for (int r = 0; r < 4; r++) {
            if (pf && ((k * esz) & 63) == 0) /* one prefetch a line */
                pf_ahead((const char *)W + (row + (size_t)r * K + k) * esz, pf);
            vf w = ldw(wt, W, row + (size_t)r * K + k);
            for (int n = 0; n < nb; n++)
                acc[r][n] = vfma(w, xv[n], acc[r][n]);
        }
    }
    if (k < K) {
        vf xv[NB];
        for (int n = 0; n < nb; n++)
            xv[n] = vload_n(X + (size_t)n * ldx + k, K - k);
        for (int r = 0; r < 4; r++) {
            vf w = ldw_n(wt, W, row + (size_t)r * K + k, K - k);
            for (int n = 0; n < nb; n++)
                acc[r][n] = vfma(w, xv[n], acc[r][n]);
        }
    }
    for (int n = 0; n < nb; n++) {
        __m128 s = vhsum4(acc[0][n], acc[1][n], acc[2][n], acc[3][n]);
        if (wt == WT_Q8) s = _mm_mul_ps(s, _mm_loadu_ps(scale + m));
        if (b) s = _mm_add_ps(s, _mm_loadu_ps(b + m));
        _mm_storeu_ps(Y + (size_t)n * ldy + m, s);
    }
}

/* One row m of W against rows 0..nb-1 of X (the last rows of a range: no prefetch). */
AI void tile1(int wt, int pf, int nb, int K, const float *X, int ldx, const void *W, int m,
              const float *scale, const float *b, float *Y, int ldy) {
    (void)pf;
    vf acc[NB];
    for (int n = 0; n < nb; n++)
        acc[n] = vzero();
    const size_t row = (size_t)m * (size_t)K;
    int k = 0;
    for (; k + VL <= K; k += VL) {
        vf w = ldw(wt, W, row + k);
        for (int n = 0; n < nb; n++)
            acc[n] = vfma(w, vload(X + (size_t)n * ldx + k), acc[n]);
    }
    if (k < K) {
        vf w = ldw_n(wt, W, row + k, K - k);
        for (int n = 0; n < nb; n++)
            acc[n] = vfma(w, vload_n(X + (size_t)n * ldx + k, K - k), acc[n]);
    }
    for (int n = 0; n < nb; n++) {
        float s = vhsum(acc[n]);
        if (wt == WT_Q8) s *= scale[m];
        if (b) s += b[m];
        Y[(size_t)n * ldy + m] = s;
    }
}

#endif
