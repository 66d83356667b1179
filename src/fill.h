/*
 * fill.h - the synthetic weight generator `pocket-fill-v1` (tests/fixtures/README.md).
 *
 * Every tensor of a checkpoint is a pure function of its name and shape, so tests and
 * full-size benchmarks can build weights without a file. tests/fixtures/tiny/model.safetensors
 * was written by the reference with this formula and must match bit for bit.
 */
#ifndef PTTS_FILL_H
#define PTTS_FILL_H

#include <stdint.h>

/* The formula's hash and mixer, exposed for tests. */
uint64_t ptts_fill_fnv1a64(const char *s);
uint64_t ptts_fill_mix(uint64_t x);

/* Fill `out` (numel = product of shape floats, row-major) with the values of tensor `name`.
 * ndim 0 is a scalar (numel 1, fan_in 1). */
void ptts_fill_tensor(const char *name, int ndim, const int64_t *shape, float *out);

#endif
