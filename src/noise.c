/*
 * noise.c - the sampler's noise (noise.h).
 */
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "noise.h"

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t xoshiro(uint64_t s[4]) {
    uint64_t r = rotl(s[0] + s[3], 23) + s[0];
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

static double uniform01(uint64_t s[4]) { /* (0, 1] */
    return ((double)(xoshiro(s) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

static double normal(ptts_rng *g) {
    if (g->has_spare) {
        g->has_spare = 0;
        return g->spare;
    }
    double a = uniform01(g->s), b = uniform01(g->s);
    double r = sqrt(-2.0 * log(a)), t = 2.0 * 3.14159265358979323846 * b;
    g->spare = r * sin(t);
    g->has_spare = 1;
    return r * cos(t);
}

int ptts_noise_draw(ptts_rng *g, const ptts_gen_options *o, int ld, float *out, ptts_error *e) {
    (void)e;
    if (o->noise) { /* run out: zeros, counted on (see noise.h) */
        if (g->noise_used < o->noise_rows)
            memcpy(out, o->noise + (size_t)g->noise_used * ld, (size_t)ld * sizeof(float));
        else
            memset(out, 0, (size_t)ld * sizeof(float));
        g->noise_used++;
        return 0;
    }
    double std = sqrt((double)o->temperature);
    double clamp = o->noise_clamp;
    for (int i = 0; i < ld; i++) {
        if (std <= 0.0) {
            out[i] = 0.f;
            continue;
        }
        double v = normal(g) * std;
        /* a truncated normal by rejection; clamps below 0.1 std would spin: clip those */
        if (clamp > 0.0) {
            if (clamp < 0.1 * std)
                v = v > clamp ? clamp : v < -clamp ? -clamp : v;
            else
                while (fabs(v) > clamp)
                    v = normal(g) * std;
        }
        out[i] = (float)v;
    }
    g->noise_used++;
    return 0;
}

void ptts_rng_seed(ptts_rng *g, int seed_set, uint64_t seed, uint64_t salt) {
    memset(g, 0, sizeof *g);
    if (!seed_set) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)getpid() ^ salt;
        seed = splitmix64(&x);
    }
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        g->s[i] = splitmix64(&x);
}
