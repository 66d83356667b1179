/*
 * fill.c - `pocket-fill-v1` synthetic weights (see fill.h and tests/fixtures/README.md).
 *
 *   u[i]     = (double)(mix(fnv1a64(name) + i) >> 40) / 2^23 - 1      in [-1, 1), 24 bits
 *   value[i] = (float)(expression in double), chosen by the leaf (last dot-separated component)
 *              and the rank, first matching rule of the table below.
 *
 * Bit-exactness with the reference (numpy float64 then cast) needs every expression evaluated
 * in double in the table's order, with a single rounding to float at the end.
 */
#include "fill.h"

#include <math.h>
#include <string.h>

uint64_t ptts_fill_fnv1a64(const char *s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ull;
    }
    return h;
}

uint64_t ptts_fill_mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

typedef enum {
    R_FREQS,    /* exp(-ln(10000) i / n) */
    R_EMB_STD,  /* 1 + 0.5 u */
    R_EMB_MEAN, /* 0.1 u */
    R_UNIT,     /* u */
    R_SCALE,    /* 0.5 + 0.25 u */
    R_NORM,     /* 1 + 0.1 u */
    R_BIAS,     /* 0.1 u */
    R_FAN_IN    /* u sqrt(3 / fan_in) */
} fill_rule;

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

static fill_rule pick_rule(const char *name, int ndim) {
    const char *dot = strrchr(name, '.');
    const char *leaf = dot ? dot + 1 : name;
    if (strcmp(leaf, "freqs") == 0) return R_FREQS;
    if (strcmp(leaf, "emb_std") == 0) return R_EMB_STD;
    if (strcmp(leaf, "emb_mean") == 0) return R_EMB_MEAN;
    if (strcmp(leaf, "bos_emb") == 0 || strcmp(leaf, "bos_before_voice") == 0) return R_UNIT;
    if (strcmp(leaf, "scale") == 0) return R_SCALE;
    if (ndim == 1 && (strcmp(leaf, "weight") == 0 || strcmp(leaf, "alpha") == 0)) return R_NORM;
    if (ndim == 1 && strcmp(leaf, "bias") == 0) return R_BIAS;
    if (ends_with(name, "conditioner.embed.weight")) return R_UNIT;
    return R_FAN_IN;
}

void ptts_fill_tensor(const char *name, int ndim, const int64_t *shape, float *out) {
    int64_t numel = 1;
    for (int k = 0; k < ndim; k++)
        numel *= shape[k];
    if (numel <= 0) return;
    fill_rule r = pick_rule(name, ndim);
    if (r == R_FREQS) {
        for (int64_t i = 0; i < numel; i++)
            out[i] = (float)exp(-log(10000.0) * (double)i / (double)numel);
        return;
    }
    /* fan_in = numel / shape[0]; a scalar counts as fan_in 1 */
    double fan_in = ndim > 0 ? (double)(numel / shape[0]) : 1.0;
    double k = sqrt(3.0 / fan_in);
    uint64_t h = ptts_fill_fnv1a64(name);
    for (int64_t i = 0; i < numel; i++) {
        double u = (double)(ptts_fill_mix(h + (uint64_t)i) >> 40) / 8388608.0 - 1.0;
        double v;
        switch (r) {
        case R_EMB_STD: v = 1.0 + 0.5 * u; break;
        case R_EMB_MEAN: v = 0.1 * u; break;
        case R_UNIT: v = u; break;
        case R_SCALE: v = 0.5 + 0.25 * u; break;
        case R_NORM: v = 1.0 + 0.1 * u; break;
        case R_BIAS: v = 0.1 * u; break;
        default: v = u * k; break;
        }
        out[i] = (float)v;
    }
}
