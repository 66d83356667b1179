/*
 * approx.h - the constants of the vector exp and expm1 shared by every SIMD kernel table
 * (kernels_avx2.c, kernels_avx512.c, kernels_neon.c), so that the tables compute one
 * approximation and differ only by how each ISA builds 2^n.
 *
 * exp(x) (Cephes expf): x clamped to [EXP_LO, EXP_HI] (NaN passes through max/min as the
 * second operand), n = round(x log2 e), r = x - n ln2 in two steps (LN2_HI is exact in 9 bits,
 * so n * LN2_HI is exact), exp(r) = 1 + r + r^2 P(r) with P of degree 5 below, then 2^n.
 * About 1 ulp on [-87, 88]; results below 2^-126 are subnormal (kept), above 88.72 inf.
 *
 * expm1(x) for x <= 0 (elu's negative side): x clamped to EXPM1_LO (expm1(-87) is -1 in
 * float, so the clamp changes no result), the same reduction, expm1(r) = r + r^2 Q(r) with Q
 * the Taylor coefficients 1/2! .. 1/8!, and 2^n expm1(r) + (2^n - 1): accurate near 0 like
 * expm1f, no cancellation.
 */
#ifndef PTTS_APPROX_H
#define PTTS_APPROX_H

#define EXP_LO (-104.f)
#define EXP_HI 89.f
#define EXPM1_LO (-87.f)
#define LOG2E 1.44269504088896341f
#define LN2_HI 0.693359375f
#define LN2_LO (-2.12194440e-4f)

/* P(r), highest degree first */
#define EXP_P0 1.9875691500e-4f
#define EXP_P1 1.3981999507e-3f
#define EXP_P2 8.3334519073e-3f
#define EXP_P3 4.1665795894e-2f
#define EXP_P4 1.6666665459e-1f
#define EXP_P5 5.0000001201e-1f

/* Q(r) = 1/2! + r/3! + ... + r^6/8!, highest degree first */
#define EXPM1_Q0 2.48015873e-5f
#define EXPM1_Q1 1.98412698e-4f
#define EXPM1_Q2 1.38888889e-3f
#define EXPM1_Q3 8.33333333e-3f
#define EXPM1_Q4 4.16666667e-2f
#define EXPM1_Q5 1.66666667e-1f
#define EXPM1_Q6 0.5f

/* tanh GELU through exp: x / (1 + exp(-2u)), u = GELU_C (x + GELU_A x^3) */
#define GELU_C 0.7978845608028654f
#define GELU_A 0.044715f

#endif
