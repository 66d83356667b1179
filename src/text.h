/*
 * text.h - the reference's text preparation and sentence splitting (MODEL.md section 8).
 */
#ifndef PTTS_TEXT_H
#define PTTS_TEXT_H

#include "common.h"
#include "tokenizer.h"

/* prepare_text_prompt: returns a malloc'd prepared text in *out and the frames-after-EOS guess
 * (3 when at most 4 words, else 1) in *guess. Empty text (after strip) -> PTTS_E_TEXT with the
 * reference's message "Text prompt cannot be empty". */
int ptts_text_prepare(const char *text, int pad_with_spaces, int remove_semicolons, char **out,
                      int *guess, ptts_error *e);

typedef struct ptts_chunk {
    char *text; /* the chunk's text, as the reference keeps it */
    int *ids;   /* the chunk's token ids (text tokenized as-is) */
    int n_ids;
} ptts_chunk;

/* split_into_best_sentences: prepare the whole text, then split and merge into chunks of at most
 * max_tokens ids (MODEL.md section 8). *chunks is a malloc'd array of *n; free with
 * ptts_chunks_free. */
int ptts_text_split(const ptts_tokenizer *tok, const char *text, int max_tokens,
                    int pad_with_spaces, int remove_semicolons, ptts_chunk **chunks, int *n,
                    ptts_error *e);
void ptts_chunks_free(ptts_chunk *chunks, int n);

/* Chunks of more than hard_max ids (text without any punctuation) are cut at word boundaries
 * into pieces of about max_tokens ids; shorter chunks are kept as they are. Replaces *chunks. */
int ptts_chunks_limit(const ptts_tokenizer *tok, ptts_chunk **chunks, int *n, int max_tokens,
                      int hard_max, ptts_error *e);

#endif
