/*
 * test.h - a minimal test harness: CHECK macros that count failures and keep going, helpers to
 * compare float arrays by relative L2 error, and the fixtures folder. A test's main() ends
 * with `return test_summary();`.
 */
#ifndef PTTS_TEST_H
#define PTTS_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures_;
static int test_checks_;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        test_checks_++;                                                                            \
        if (!(cond)) {                                                                             \
            test_failures_++;                                                                      \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

#define CHECKF(cond, ...)                                                                          \
    do {                                                                                           \
        test_checks_++;                                                                            \
        if (!(cond)) {                                                                             \
            test_failures_++;                                                                      \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* Stop the test: something it needs is missing. */
#define REQUIRE(cond)                                                                              \
    do {                                                                                           \
        test_checks_++;                                                                            \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #cond);             \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* A test that cannot run here (no Vulkan device, no browser): main() returns this. ctest shows
 * it as skipped (SKIP_RETURN_CODE 77); with PTTS_NO_SKIP set (CI, which installs everything)
 * it fails instead, so that a lost dependency cannot pass as green. */
static inline int test_skip(const char *why) {
    int strict = getenv("PTTS_NO_SKIP") && *getenv("PTTS_NO_SKIP");
    fprintf(stderr, "%s: %s\n", strict ? "FAIL (PTTS_NO_SKIP is set)" : "SKIP", why);
    return strict ? 1 : 77;
}

/* ||a - b|| / max(||b||, tiny) */
static inline double rel_l2(const float *a, const float *b, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a[i] - (double)b[i];
        num += d * d;
        den += (double)b[i] * (double)b[i];
    }
    if (!(num == num)) return INFINITY; /* NaN */
    return sqrt(num) / (den > 1e-30 ? sqrt(den) : 1e-15);
}

/* Reproducible test inputs: splitmix64 (test_rnd, 32 bits) and a float in [lo, hi) with 24
 * random bits (test_frand); test_rng_seed restarts the sequence. */
static inline uint64_t *test_rng_state_(void) {
    static uint64_t s = 0x9E3779B97F4A7C15ull;
    return &s;
}
static inline void test_rng_seed(uint64_t seed) { *test_rng_state_() = seed; }
static inline uint32_t test_rnd(void) {
    uint64_t z = (*test_rng_state_() += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (uint32_t)((z ^ (z >> 31)) >> 32);
}
static inline float test_frand(float lo, float hi) {
    return lo + (hi - lo) * (float)(test_rnd() >> 8) / 16777216.f;
}

static inline const char *fixture_path(const char *rel) {
    static char buf[8][1024];
    static int k;
    char *b = buf[k++ & 7];
    const char *dir = getenv("PTTS_FIXTURES");
    snprintf(b, 1024, "%s/%s", dir && *dir ? dir : PTTS_FIXTURES, rel);
    return b;
}

/* 0 when every check passed; a program that made no check fails too (it tested nothing). */
static inline int test_summary(void) {
    printf("%d checks, %d failed\n", test_checks_, test_failures_);
    if (!test_checks_) fprintf(stderr, "FAIL: no check was made\n");
    return test_failures_ || !test_checks_ ? 1 : 0;
}

#endif
