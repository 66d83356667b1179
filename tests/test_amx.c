// ctest-label: unit
/*
 * test_amx.c - the AMX table's parts that any CPU can check, and what only an AMX CPU can say.
 *
 * On every CPU (plain C, src/cpu/amx_pack.c): the tile configuration bytes; the int8 B operand
 * (ptts_amx_q8_pack_row) read through a scalar model of tdpbssd's indexing against W rows as
 * the kernel loads them (the last k tile zero-padded), which must give the exact int32 dot
 * products; the bf16 B operands, the panel layout (ptts_bf16_panel_pack) at a 128-byte row
 * stride and ptts_amx_bf16_btail for a panel's last pair rows, element by element against the
 * bf16 rounding of W (zero past K). Detection: amx is listed exactly when CPUID has
 * AMX-TILE/BF16/INT8 and AVX-512 is listed, XCR0 has the tile state and Linux granted tile
 * data (ARCH_GET_XCOMP_PERM); PTTS_ISA=avx512 never gives amx, PTTS_ISA=amx gives it when
 * listed.
 * On an AMX CPU (else skipped, said on stdout): the order in which tdpbf16ps adds. The amx
 * table's gemm_bf16_panel against five models of the same products: "ref" (the reference's
 * one chain, the odd element of a pair first), "even" (one chain, even element first: Intel's
 * older pseudo-code), "split" (per instruction of 16 pairs, an even chain and an odd chain from
 * 0, then their sum added to C: Intel's current pseudo-code), "pair" (one chain, each pair's
 * two products added exactly and rounded once), "tile" (per instruction one chain from 0, even
 * first, then added to C); each step rounded to nearest even and flushed. The counts of identical
 * values are printed; the bound of kernels.h is checked, and "split" (kernels.h's arithmetic for
 * amx, as measured on a Xeon with AMX) must be every value. And gemm_q8q bit for bit against the
 * reference on the shapes test_kernels.c leaves out: K above 2048 (16-row blocks), N across several
 * blocks, m ranges with a tail of W rows.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/amx_pack.h"
#include "cpu/kernels.h"
#include "test.h"

#if defined(__x86_64__)
#include <cpuid.h>
#ifdef __linux__
#include <sys/syscall.h>
#include <unistd.h>
#endif
#endif

static float bits_f(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint32_t f_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
/* f32 -> bf16, nearest even (normal values only here) */
static uint16_t bf16_rne(float f) {
    uint32_t u = f_bits(f);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static float bf16_val(uint16_t h) { return bits_f((uint32_t)h << 16); }

/* ---- everywhere ------------------------------------------------------------------------- */

static void test_tilecfg(void) {
    uint8_t cfg[64];
    memset(cfg, 0xa5, sizeof cfg);
    ptts_amx_tilecfg(cfg);
    int bad = cfg[0] != 1 || cfg[1] != 0;
    for (int i = 2; i < 16; i++)
        bad |= cfg[i] != 0;
    for (int t = 0; t < 8; t++)
        bad |= cfg[16 + 2 * t] != AMX_COLSB || cfg[17 + 2 * t] != 0 || cfg[48 + t] != AMX_ROWS;
    for (int i = 32; i < 48; i++)
        bad |= cfg[i] != 0;
    for (int i = 56; i < 64; i++)
        bad |= cfg[i] != 0;
    CHECKF(!bad, "tile configuration: palette 1, 8 tiles of %d x %d bytes, reserved bytes 0",
           AMX_ROWS, AMX_COLSB);
}

/* 16 rows of W (K) against 16 quantised rows through B, by the tile model, for several K. */
static void test_q8_pack(void) {
    static const int Ks[] = {1, 63, 64, 65, 200, 1024, 2047};
    int bad = 0, cases = 0;
    for (size_t ki = 0; ki < sizeof Ks / sizeof *Ks; ki++) {
        const int K = Ks[ki], Kq = (K + 63) & ~63, rows = 16 - (int)ki; /* rows < 16: zero */
        int8_t *W = malloc((size_t)16 * K), *q = malloc((size_t)16 * Kq);
        int8_t *B = malloc((size_t)16 * Kq), *A = calloc((size_t)16 * Kq, 1);
        REQUIRE(W && q && B && A);
        for (int i = 0; i < 16 * K; i++)
            W[i] = (int8_t)(int)(test_rnd() % 255 - 127);
        memset(q, 0, (size_t)16 * Kq);
        for (int j = 0; j < rows; j++)
            for (int k = 0; k < K; k++)
                q[(size_t)j * Kq + k] = (int8_t)(int)(test_rnd() % 255 - 127);
        memset(B, 0x5a, (size_t)16 * Kq);
        for (int j = 0; j < 16; j++)
            ptts_amx_q8_pack_row(q + (size_t)j * Kq, Kq, j, B);
        for (int r = 0; r < 16; r++) /* A as the kernel loads it: W rows, zero past K */
            memcpy(A + (size_t)r * Kq, W + (size_t)r * K, (size_t)K);
        for (int r = 0; r < 16; r++)
            for (int j = 0; j < 16; j++) {
                int32_t c = 0, want = 0;
                for (int t = 0; t < Kq / 64; t++)     /* tdpbssd per 64-k tile */
                    for (int k4 = 0; k4 < 16; k4++) { /* B row k4 of the tile */
                        const int8_t *a = A + (size_t)r * Kq + t * 64 + k4 * 4;
                        const int8_t *b = B + (size_t)(t * 16 + k4) * AMX_COLSB + j * 4;
                        for (int i = 0; i < 4; i++)
                            c += (int32_t)a[i] * b[i];
                    }
                for (int k = 0; k < K; k++)
                    want += (int32_t)W[(size_t)r * K + k] * q[(size_t)j * Kq + k];
                bad += c != want;
            }
        cases++;
        free(W);
        free(q);
        free(B);
        free(A);
    }
    CHECKF(!bad, "int8 B operand: %d dot products differ", bad);
    printf("int8 B operand: %d K values, 256 dot products each, exact\n", cases);
}

/* The B tiles of every panel half and k tile, as gemm_bf16_panel_amx takes them, against
 * bf16(W). */
static void test_bf16_b(void) {
    static const int Ks[] = {1, 2, 31, 32, 33, 64, 100, 513};
    static const int Ms[] = {1, 16, 17, 32, 45, 64};
    int bad = 0, tiles = 0;
    for (size_t ki = 0; ki < sizeof Ks / sizeof *Ks; ki++)
        for (size_t mi = 0; mi < sizeof Ms / sizeof *Ms; mi++) {
            const int K = Ks[ki], M = Ms[mi], K2 = (K + 1) / 2, t = K2 % AMX_ROWS;
            const int np = (M + PTTS_PANEL - 1) / PTTS_PANEL;
            float *W = malloc((size_t)M * K * sizeof(float));
            uint16_t *Wp = malloc(ptts_bf16_panel_elems(M, K) * sizeof(uint16_t));
            REQUIRE(W && Wp);
            for (int i = 0; i < M * K; i++)
                W[i] = test_frand(-1.f, 1.f);
            ptts_bf16_panel_pack(W, M, K, Wp);
            uint16_t bt[AMX_ROWS * 64];
            for (int p = 0; p < np; p++) {
                const uint16_t *P = Wp + (size_t)p * K2 * 64;
                if (t) ptts_amx_bf16_btail(P + (size_t)(K2 - t) * 64, t, bt);
                for (int k2 = 0; k2 < K2; k2 += AMX_ROWS) {
                    const uint16_t *B = k2 + AMX_ROWS <= K2 ? P + (size_t)k2 * 64 : bt;
                    for (int h = 0; h < 2; h++, tiles++)
                        for (int r = 0; r < AMX_ROWS; r++) /* tile row r at 128 bytes */
                            for (int j = 0; j < 16; j++)
                                for (int i = 0; i < 2; i++) {
                                    const int m = p * 32 + h * 16 + j, k = 2 * (k2 + r) + i;
                                    uint16_t got = B[(size_t)r * 64 + h * 32 + j * 2 + i];
                                    uint16_t want =
                                        m < M && k < K ? bf16_rne(W[(size_t)m * K + k]) : 0;
                                    bad += got != want;
                                }
                }
            }
            free(W);
            free(Wp);
        }
    CHECKF(!bad, "bf16 B operand: %d elements differ from bf16(W)", bad);
    printf("bf16 B operand: %d tiles from the panel layout, as bf16(W)\n", tiles);
}

/* ---- detection ---------------------------------------------------------------------------- */

static int want_amx(int has512) {
#if defined(__x86_64__) && defined(__linux__) && defined(SYS_arch_prctl)
    unsigned a, b, c, d;
    if (!has512 || __get_cpuid_max(0, NULL) < 7) return 0;
    __cpuid_count(7, 0, a, b, c, d);
    (void)a, (void)b, (void)c;
    if (!((d >> 22) & 1) || !((d >> 24) & 1) || !((d >> 25) & 1)) return 0;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 0x60000) != 0x60000) return 0;
    unsigned long perm = 0;
    if (syscall(SYS_arch_prctl, 0x1022 /* ARCH_GET_XCOMP_PERM */, &perm) != 0) return 0;
    return (perm >> 18) & 1;
#else
    (void)has512;
    return 0;
#endif
}

static const ptts_kernels *test_detection(void) {
    const ptts_kernels *all[8], *amx = NULL;
    int n = ptts_kernels_all(all, 8), has512 = 0;
    for (int i = 0; i < n; i++) {
        has512 |= strcmp(all[i]->isa, "avx512") == 0;
        if (strcmp(all[i]->isa, "amx") == 0) amx = all[i];
    }
    const int want = want_amx(has512);
    CHECKF(!!amx == want, "amx listed %d, CPU and kernel allow it %d", !!amx, want);
    setenv("PTTS_ISA", "avx512", 1);
    CHECK(strcmp(ptts_kernels_best()->isa, "amx") != 0);
    setenv("PTTS_ISA", "amx", 1);
    CHECK(!amx || ptts_kernels_best() == amx);
    unsetenv("PTTS_ISA");
    CHECK(!amx || ptts_kernels_best() == amx);
    if (amx) CHECK(amx->gemm_f32 == all[n - 2]->gemm_f32); /* the AVX-512 entries */
    printf("amx: %s\n", amx ? "listed" : "not listed (no AMX, or tile data not granted)");
    return amx;
}

/* ---- on an AMX CPU: tdpbf16ps's order ------------------------------------------------------- */

static float ftz(float v) { return fabsf(v) < 0x1p-126f ? copysignf(0.f, v) : v; }

/* Model output for x', w' (bf16 values as floats, zero-padded to Kt pairs, Kt a multiple of
 * 16): 0 ref, 1 even, 2 split, 3 pair, 4 tile (above). */
enum { NMODEL = 5 };
static const char *const model_name[NMODEL] = {"ref", "even", "split", "pair", "tile"};
static float model(int how, const float *x, const float *w, int Kt, float bias) {
    float acc = 0.f;
    for (int t = 0; t < Kt; t += 16) {
        float e = 0.f, o = 0.f;
        for (int k2 = t; k2 < t + 16; k2++) {
            const float xe = x[2 * k2], xo = x[2 * k2 + 1], we = w[2 * k2], wo = w[2 * k2 + 1];
            if (how == 0) {
                acc = ftz(fmaf(xo, wo, acc));
                acc = ftz(fmaf(xe, we, acc));
            } else if (how == 1) {
                acc = ftz(fmaf(xe, we, acc));
                acc = ftz(fmaf(xo, wo, acc));
            } else if (how == 2) {
                e = ftz(fmaf(xe, we, e));
                o = ftz(fmaf(xo, wo, o));
            } else if (how == 3) { /* the pair sum is exact in double (16-bit products) */
                acc = ftz((float)((double)acc + ((double)xe * we + (double)xo * wo)));
            } else {
                e = ftz(fmaf(xe, we, e));
                e = ftz(fmaf(xo, wo, e));
            }
        }
        if (how == 2) acc = ftz(acc + ftz(e + o));
        if (how == 4) acc = ftz(acc + e);
    }
    return acc + bias;
}

static void test_order(const ptts_kernels *amx) {
    static const int Ks[] = {2, 31, 32, 64, 100, 192, 513, 1536, 3584};
    long same[NMODEL] = {0}, total = 0;
    int bad = 0;
    double worst = 0;
    for (size_t ki = 0; ki < sizeof Ks / sizeof *Ks; ki++) {
        /* M 300: more panels than the kernel's group of 8, for the K taken in slices */
        const int K = Ks[ki], M = K >= 1536 ? 300 : 45, N = 37, K2 = (K + 1) / 2;
        const int Kt = (K2 + 15) / 16 * 16;
        float *X = malloc((size_t)N * K * sizeof(float)), *W = malloc((size_t)M * K * 4);
        uint16_t *Wp = malloc(ptts_bf16_panel_elems(M, K) * sizeof(uint16_t));
        float *Y = malloc((size_t)N * M * sizeof(float)), *b = malloc((size_t)M * 4);
        float *xs = calloc((size_t)Kt * 2, sizeof(float)), *ws = calloc((size_t)Kt * 2, 4);
        REQUIRE(X && W && Wp && Y && b && xs && ws);
        for (int i = 0; i < N * K; i++) /* wide exponent range: sums that round often */
            X[i] = test_frand(-1.f, 1.f) * (float)(1u << (test_rnd() % 12));
        for (int i = 0; i < M * K; i++)
            W[i] = test_frand(-1.f, 1.f);
        for (int i = 0; i < M; i++)
            b[i] = test_frand(-1.f, 1.f);
        ptts_bf16_panel_pack(W, M, K, Wp);
        amx->gemm_bf16_panel(K, X, K, Wp, b, Y, M, M, 0, N, 0, (M + 31) / 32);
        for (int n = 0; n < N; n++)
            for (int m = 0; m < M; m++) {
                double mag = fabs(b[m]);
                for (int k = 0; k < K; k++) {
                    xs[k] = bf16_val(ptts_bf16_round(X[(size_t)n * K + k]));
                    ws[k] = bf16_val(bf16_rne(W[(size_t)m * K + k]));
                    mag += fabs((double)xs[k] * ws[k]);
                }
                const float y = Y[(size_t)n * M + m];
                for (int h = 0; h < NMODEL; h++)
                    same[h] += f_bits(model(h, xs, ws, Kt, b[m])) == f_bits(y);
                const double e = fabs((double)y - model(0, xs, ws, Kt, b[m]));
                bad += !(e <= (K + 1) * 0x1p-23 * mag + K * 0x1p-125);
                if (e / (mag * 0x1p-24) > worst) worst = e / (mag * 0x1p-24);
                total++;
            }
        free(X);
        free(W);
        free(Wp);
        free(Y);
        free(b);
        free(xs);
        free(ws);
    }
    CHECKF(!bad, "amx gemm_bf16_panel: %d values outside kernels.h's bound", bad);
#if defined(PTTS_AMX_EMU) && !defined(AMX_EMU_SPLIT) /* amx_emu.sh's model of the ref order */
    CHECKF(same[0] == total, "model ref: %ld of %ld values", same[0], total);
#else /* the hardware, and the model of its order: kernels.h's arithmetic for amx, to the bit */
    CHECKF(same[2] == total, "model split: %ld of %ld values", same[2], total);
#endif
    printf("tdpbf16ps order: of %ld values, identical to model", total);
    for (int h = 0; h < NMODEL; h++)
        printf(" %s %ld", model_name[h], same[h]);
    printf("; worst |y - ref| %.3g x 2^-24 sum|x'w'|\n", worst);
}

static void test_q8q_hw(const ptts_kernels *amx) {
    static const int shapes[][5] = {/* N, K, M, m0, m1 */
                                    {2, 2049, 40, 3, 37},  {17, 3000, 64, 0, 64},
                                    {40, 4096, 33, 0, 33}, {33, 1000, 100, 5, 99},
                                    {3, 4097, 20, 0, 20},  {64, 64, 48, 16, 48}};
    const ptts_kernels *R = ptts_kernels_ref();
    int bad = 0;
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
        const int N = shapes[si][0], K = shapes[si][1], M = shapes[si][2];
        const int m0 = shapes[si][3], m1 = shapes[si][4];
        float *X = malloc((size_t)N * K * 4), *s = malloc((size_t)M * 4),
              *b = malloc((size_t)M * 4);
        int8_t *W = malloc((size_t)M * K);
        float *Y = malloc((size_t)N * M * 4), *YR = malloc((size_t)N * M * 4);
        REQUIRE(X && s && b && W && Y && YR);
        for (int i = 0; i < N * K; i++)
            X[i] = test_frand(-3.f, 3.f);
        for (int i = 0; i < M * K; i++)
            W[i] = (int8_t)(int)(test_rnd() % 256 - 128);
        for (int i = 0; i < M; i++)
            s[i] = test_frand(0.001f, 0.02f), b[i] = test_frand(-1.f, 1.f);
        for (int i = 0; i < N * M; i++)
            Y[i] = YR[i] = -7.f;
        amx->gemm_q8q(N, K, X, K, W, s, si % 2 ? b : NULL, Y, M, m0, m1);
        R->gemm_q8q(N, K, X, K, W, s, si % 2 ? b : NULL, YR, M, m0, m1);
        for (int i = 0; i < N * M; i++)
            bad += f_bits(Y[i]) != f_bits(YR[i]);
        free(X), free(s), free(b), free(W), free(Y), free(YR);
    }
    CHECKF(!bad, "amx gemm_q8q: %d values differ from the reference", bad);
    printf("amx gemm_q8q: %d shapes, %s\n", (int)(sizeof shapes / sizeof *shapes),
           bad ? "differs from ref" : "identical bits to ref");
}

int main(void) {
    test_rng_seed(0x2545F4914F6CDD1Dull); /* the inputs this test has always had */
    test_tilecfg();
    test_q8_pack();
    test_bf16_b();
    const ptts_kernels *amx = test_detection();
#ifdef PTTS_AMX_EMU /* tests/amx_emu.sh: amx on a scalar model of the instructions */
    const ptts_kernels *ptts_kernels_amx(void);
    if (!amx) amx = ptts_kernels_amx();
#endif
    if (amx) {
        test_order(amx);
        test_q8q_hw(amx);
    } else {
        printf("tdpbf16ps order, amx gemm_q8q: skipped (no amx table on this CPU)\n");
    }
    return test_summary();
}
