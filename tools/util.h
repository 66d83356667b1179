/*
 * util.h - small helpers the tools share (the library's own are internal): the clock, string
 * copies, filling a ptts_error, and messages on stderr.
 */
#ifndef PTTS_TOOLS_UTIL_H
#define PTTS_TOOLS_UTIL_H

#include <stdarg.h>

#include "ptts.h"

#if defined(__GNUC__)
#define TOOL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TOOL_PRINTF(a, b)
#endif

#define TOOL_MIN(a, b) ((a) < (b) ? (a) : (b))

/* Monotonic clock in seconds. */
double tool_now(void);
/* Heap copy of s; NULL for NULL or when out of memory. */
char *tool_strdup(const char *s);
/* Fill e (may be NULL) with code and a formatted message; returns code. */
int tool_fail(ptts_error *e, int code, const char *fmt, ...) TOOL_PRINTF(3, 4);
/* "pocket-tts: LEVEL: message" on stderr (PTTS_LOG_*), as the library's log lines are shown;
 * with quiet nonzero only errors. */
void tool_log(int quiet, int level, const char *fmt, ...) TOOL_PRINTF(3, 4);
/* The same line from a va_list, unconditionally (the server's srv_log filters by its level). */
void tool_vlog(int level, const char *fmt, va_list ap);

#endif
