/*
 * common.h - internal helpers shared by every stage: error reporting, logging, aligned
 * allocation, timing. Not part of the public API.
 */
#ifndef PTTS_COMMON_H
#define PTTS_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "ptts.h"

#if defined(__GNUC__)
#define PTTS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PTTS_PRINTF(a, b)
#endif

/* Fill `e` (may be NULL) with `code` and a formatted message; returns `code` so that callers
 * can write `return ptts_fail(e, PTTS_E_FORMAT, "%s: ...", path);`. */
int ptts_fail(ptts_error *e, int code, const char *fmt, ...) PTTS_PRINTF(3, 4);
/* Prefix an existing message with "prefix: " (keeps the code); returns e->code or `code`. */
int ptts_fail_prefix(ptts_error *e, int code, const char *prefix);

void ptts_log(int level, const char *fmt, ...) PTTS_PRINTF(2, 3);

/* 64-byte aligned, zero-filled allocation; NULL on failure or when n overflows. */
void *ptts_calloc_aligned(size_t n);
/* The same without zeroing: for buffers written whole before they are read. */
void *ptts_malloc_aligned(size_t n);
void ptts_free_aligned(void *p);
/* n * m with overflow check: returns 0 and sets *out, or -1. */
int ptts_mul_size(size_t n, size_t m, size_t *out);

/* Monotonic clock in seconds. */
double ptts_now(void);

/* Heap string copy; NULL on allocation failure. */
char *ptts_strdup(const char *s);

#define PTTS_MIN(a, b) ((a) < (b) ? (a) : (b))
#define PTTS_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
