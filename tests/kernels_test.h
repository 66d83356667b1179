/*
 * kernels_test.h - what test_kernels.c and test_kernels_elem.c share: a NaN pattern no kernel
 * produces (outputs are poisoned with it before a call; what a kernel must not write keeps it)
 * and bf16 conversions by bits.
 */
#ifndef PTTS_KERNELS_TEST_H
#define PTTS_KERNELS_TEST_H

#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/kernels.h"
#include "half.h"
#include "pool.h"
#include "ptts.h"
#include "test.h"

static const uint32_t POISON = 0x7fc0dead; /* a NaN no kernel produces */
static inline float poison_f(void) {
    float f;
    memcpy(&f, &POISON, 4);
    return f;
}
static inline int is_poison(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u == POISON;
}
static inline float bf16_to_f32(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline uint16_t f32_to_bf16_trunc(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

#endif
