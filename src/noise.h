/*
 * noise.h - the sampler's noise (MODEL.md 8.4): xoshiro256++ seeded through splitmix64,
 * standard normals by Box-Muller (in double, both values used), scaled by sqrt(temperature);
 * with noise_clamp, values outside [-clamp, clamp] are redrawn (a truncated normal); or rows
 * supplied by the caller (tests replay the reference's draws).
 */
#ifndef PTTS_NOISE_H
#define PTTS_NOISE_H

#include "common.h"

/* The generator: xoshiro256++ state, the spare Box-Muller value, and how many rows of supplied
 * noise were used. A plain value: copied whole to rewind. */
typedef struct ptts_rng {
    uint64_t s[4];
    int has_spare;
    double spare;
    int noise_used;
} ptts_rng;

/* Seed from `seed` when seed_set, else from the clock, the process id and `salt`. */
void ptts_rng_seed(ptts_rng *g, int seed_set, uint64_t seed, uint64_t salt);
/* The noise of one step, out [ld]: o->noise's next row, else draws with o->temperature and
 * o->noise_clamp (both already defaulted). Supplied noise that has run out gives zeros and
 * noise_used counts on: an engine that computes frames ahead (a GPU call of k steps) may draw
 * past the stop, and only a step the stop rule consumes needs a real row (the loop reports
 * that one, MODEL.md 8.4). */
int ptts_noise_draw(ptts_rng *g, const ptts_gen_options *o, int ld, float *out, ptts_error *e);

#endif
