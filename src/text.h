/*
 * text.h - the reference's text preparation and sentence splitting (MODEL.md section 8).
 */
#ifndef PTTS_TEXT_H
#define PTTS_TEXT_H

#include "common.h"
#include "tokenizer.h"

/* The per-language text rules of a 3.3 config (MODEL.md sections 8.1 and 10.2). The config
 * (config.c) fills it; ptts_text_options_default() gives the 3.3 defaults (append and capitalise
 * on, everything else off). replace_characters: n_replace single characters (from[i], one
 * UTF-8 character) each mapped to to[i] (a UTF-8 string, "" deletes), owned by whoever filled
 * it; a key that is not one character is refused (PTTS_E_INVALID), a later duplicate wins. */
typedef struct ptts_text_options {
    int pad_with_spaces; /* pad_with_spaces_for_short_inputs */
    int remove_semicolons;
    int append_terminal_punctuation; /* default 1 */
    int capitalize_first_letter;     /* default 1 */
    int n_replace;
    const char *const *replace_from;
    const char *const *replace_to;
} ptts_text_options;

ptts_text_options ptts_text_options_default(void);

/* prepare_text_prompt (MODEL.md 8.1 and 8.2): returns a malloc'd prepared text in *out and the
 * frames-after-EOS guess (3 when at most 4 words, else 1) in *guess. Empty text (after strip and
 * replacement) -> PTTS_E_TEXT with the reference's message "Text prompt cannot be empty". */
int ptts_text_prepare(const char *text, const ptts_text_options *o, char **out, int *guess,
                      ptts_error *e);

typedef struct ptts_chunk {
    char *text;       /* the chunk's text as split_into_best_sentences returns it */
    char *model_text; /* text prepared again (3.3, MODEL.md 8.4): what the model is fed */
    int *ids;         /* the token ids of model_text (no BOS/EOS) */
    int n_ids;
    int guess; /* frames-after-EOS guess of model_text's prepare (F = guess + 2) */
} ptts_chunk;

/* split_into_best_sentences (MODEL.md 8.3) followed by the per-chunk preparation of 8.4: each
 * chunk carries its re-prepared model_text, its ids and its guess. *chunks is a malloc'd array of
 * *n; free with ptts_chunks_free. */
int ptts_text_split(const ptts_tokenizer *tok, const char *text, int max_tokens,
                    const ptts_text_options *o, ptts_chunk **chunks, int *n, ptts_error *e);
void ptts_chunks_free(ptts_chunk *chunks, int n);

/* Chunks of more than hard_max ids (text without any punctuation) are cut at word boundaries
 * into pieces of about max_tokens ids; shorter chunks are kept as they are. Replaces *chunks. */
int ptts_chunks_limit(const ptts_tokenizer *tok, ptts_chunk **chunks, int *n, int max_tokens,
                      int hard_max, const ptts_text_options *o, ptts_error *e);

#endif
