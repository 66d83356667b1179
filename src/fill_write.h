/*
 * fill_write.h - a synthetic pocket-fill-v1 checkpoint of an architecture, written to a file.
 */
#ifndef PTTS_FILL_WRITE_H
#define PTTS_FILL_WRITE_H

#include "safetensors.h"
#include "weights.h"

/* Every tensor of architecture `a` (the names and shapes the loader binds) with the
 * pocket-fill-v1 values, in `dtype` (F32, BF16 or F16, rounded to nearest even). */
int ptts_fill_write(const ptts_arch *a, st_dtype dtype, const char *path, ptts_error *e);

#endif
