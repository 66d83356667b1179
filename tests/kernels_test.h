/*
 * kernels_test.h - what test_kernels.c and test_kernels_elem.c share: a NaN pattern no kernel
 * produces (outputs are poisoned with it before a call; what a kernel must not write keeps it)
 * and bf16 by truncation; the bit casts and bf16 widening are half.h's.
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
static inline float poison_f(void) { return half_u2f(POISON); }
static inline int is_poison(float f) { return half_f2u(f) == POISON; }
/* bf16 by truncation (the bits above the 16 that it drops): test weights, not a rounding */
static inline uint16_t f32_to_bf16_trunc(float f) { return (uint16_t)(half_f2u(f) >> 16); }

#endif
