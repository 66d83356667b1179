/*
 * flow.h - the flow head (SimpleMLPAdaLN) and LSD decoding (MODEL.md section 5).
 */
#ifndef PTTS_FLOW_H
#define PTTS_FLOW_H

#include "ops.h"
#include "weights.h"

typedef struct ptts_flow ptts_flow;

/* Precomputes the time embeddings for `steps` LSD steps (constants for a fixed step count)
 * and allocates scratch for up to `max_rows` rows per call. */
int ptts_flow_create(ptts_flow **out, const ptts_weights *w, int steps, int max_rows,
                     ptts_error *e);
void ptts_flow_free(ptts_flow *f);
/* The combined time embeddings of each of `steps` sampler steps -> te [steps, fd]: lsd
 * (T0(i/N) + T1((i+1)/N)) / 2, flow_matching T0(i/N), drifting zeros (arch.flow_type); computed
 * with the reference kernels, so every backend uses the same values. */
int ptts_flow_time_table(const ptts_weights *w, int steps, float *te, ptts_error *e);
int ptts_flow_steps(const ptts_flow *f);

/* rows independent samples: h [rows, d] (backbone output after out_norm), x0 [rows, ld] the
 * noise -> out [rows, ld]. More than max_rows rows are done max_rows at a time. out may alias
 * x0. Allocates nothing. */
void ptts_flow_sample(ptts_flow *f, const ptts_ctx *c, const float *h, const float *x0, int rows,
                      float *out);

#endif
