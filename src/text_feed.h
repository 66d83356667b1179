/*
 * text_feed.h - text as the generation loop takes it: markup (markup.h) parsed, each text
 * segment prepared and split into chunks (text.h), the pauses between them in samples; and the
 * rule that says how much of a text that is still arriving holds complete sentences.
 */
#ifndef PTTS_TEXT_FEED_H
#define PTTS_TEXT_FEED_H

#include "text.h"

/* Chunks and the silence around them: pause[i] samples of zeros come before chunk i, pause[n]
 * after the last one. n may be 0 (a text of pauses only): then pause[0] is all of it. */
typedef struct ptts_items {
    ptts_chunk *chunks;
    int n;
    int64_t *pause; /* [n + 1] */
} ptts_items;

/* text[0..len) through ptts_markup_parse(flags), then each text segment through
 * ptts_text_split and ptts_chunks_limit(max_tokens, hard_max) as a whole text would be;
 * `gap` samples of silence go between two chunks that no pause separates. Errors: the
 * parser's and the splitter's (PTTS_E_TEXT for invalid markup or an empty text). */
int ptts_items_build(const ptts_tokenizer *tok, const ptts_text_options *to, const char *text,
                     size_t len, unsigned flags, int max_tokens, int hard_max, int64_t gap,
                     ptts_items *out, ptts_error *e);
void ptts_items_free(ptts_items *it);

/* The length of the longest prefix of s[0..n) that ends a sentence for incremental input
 * (ptts.h, ptts_stream_start_incremental): just after a run of end marks (. ! ? U+2026) that
 * something follows, unless the run is one "." after a digit and the next character other than
 * whitespace is a digit (a decimal point, MODEL.md 8.3), or that character has not arrived.
 * Marks inside a tag ("<" and a letter, "/", "!" or "?" up to ">", with SSML in flags) or a
 * "[pause...]" (with brackets) do not count; an unclosed one ends the scan. 0: none. */
size_t ptts_text_complete(const char *s, size_t n, unsigned flags);

/* Incremental text (ptts.h, ptts_stream_start_incremental): bytes fed and not yet taken,
 * feed[0..flushed) complete by a flush, ended once the end came. Zero is an empty feed. */
typedef struct ptts_feed {
    char *p;
    size_t n, cap, flushed;
    int ended;
} ptts_feed;

/* Append len bytes: PTTS_E_BUSY when more than PTTS_FEED_MAX_BYTES would wait (nothing is
 * taken), PTTS_E_INVALID after the end. */
int ptts_feed_append(ptts_feed *f, const char *text, size_t len, ptts_error *e);
/* A flush (end = 0) or the end (1). */
int ptts_feed_flush(ptts_feed *f, int end, ptts_error *e);
/* Remove the complete text (ptts_text_complete with the markup flags, the flushed part; at the
 * end all of it) and return it as a malloc'd NUL-terminated copy of *len bytes; *text NULL
 * when there is none. */
int ptts_feed_take(ptts_feed *f, unsigned flags, char **text, size_t *len, ptts_error *e);
void ptts_feed_free(ptts_feed *f);

#endif
