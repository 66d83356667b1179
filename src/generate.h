/*
 * generate.h - internal views of a stream for tests and tools: the last step's latent and EOS
 * logit, and the text chunks of the current utterance.
 */
#ifndef PTTS_GENERATE_H
#define PTTS_GENERATE_H

#include "ptts.h"
#include "text.h"

typedef struct ptts_step_record {
    int chunk, step;
    int emitted;          /* 0 for the step at which the stop rule ended the chunk */
    float eos;            /* EOS logit */
    const float *latent;  /* [ld], valid until the next call */
} ptts_step_record;

/* The last computed step (also the one not emitted when a chunk stops). */
const ptts_step_record *ptts_stream_last_step(const ptts_stream *s);
/* The chunks of the current utterance (valid until the next start). */
int ptts_stream_chunks(const ptts_stream *s, const ptts_chunk **chunks);

#endif
