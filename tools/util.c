/* util.c - the tools' helpers (util.h). */
#define _POSIX_C_SOURCE 200809L
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double tool_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

char *tool_strdup(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

int tool_fail(ptts_error *e, int code, const char *fmt, ...) {
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        e->code = code;
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

void tool_vlog(int level, const char *fmt, va_list ap) {
    static const char *const names[] = {"error", "warning", "info", "debug"};
    char buf[2048];
    vsnprintf(buf, sizeof buf, fmt, ap);
    fprintf(stderr, "pocket-tts: %s: %s\n", names[level & 3], buf);
}

void tool_log(int quiet, int level, const char *fmt, ...) {
    if (quiet && level > PTTS_LOG_ERROR) return;
    va_list ap;
    va_start(ap, fmt);
    tool_vlog(level, fmt, ap);
    va_end(ap);
}
