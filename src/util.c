/* util.c - error messages, the log sink, aligned allocation and the clock (see common.h). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"

const char *ptts_strerror(int code) {
    switch (code) {
    case PTTS_OK: return "success";
    case PTTS_E_INVALID: return "invalid argument";
    case PTTS_E_NOMEM: return "out of memory";
    case PTTS_E_IO: return "input/output error";
    case PTTS_E_FORMAT: return "malformed file";
    case PTTS_E_MODEL: return "model does not match";
    case PTTS_E_UNSUPPORTED: return "not supported";
    case PTTS_E_TEXT: return "unusable text";
    case PTTS_E_NOT_FOUND: return "not found";
    case PTTS_E_NETWORK: return "network error";
    case PTTS_E_CANCELLED: return "cancelled";
    case PTTS_E_BACKEND: return "GPU backend error";
    case PTTS_E_AUDIO: return "unusable audio";
    case PTTS_E_BUSY: return "busy";
    case PTTS_E_INTERNAL: return "internal error";
    default: return "unknown error";
    }
}

int ptts_fail(ptts_error *e, int code, const char *fmt, ...) {
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        e->code = code;
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

int ptts_fail_prefix(ptts_error *e, int code, const char *prefix) {
    if (!e) return code;
    if (e->code == 0) e->code = code;
    char tmp[2 * PTTS_ERROR_MSG_MAX + 256];
    snprintf(tmp, sizeof tmp, "%.255s: %s", prefix, e->msg);
    memcpy(e->msg, tmp, sizeof e->msg - 1);
    e->msg[sizeof e->msg - 1] = 0;
    return e->code;
}

/* Set and called under one mutex (ptts.h: any thread may set it; a callback is never called
 * after the call that replaced it has returned). */
static pthread_mutex_t g_log_mu = PTHREAD_MUTEX_INITIALIZER;
static ptts_log_fn g_log_fn;
static void *g_log_user;

void ptts_set_log_callback(ptts_log_fn fn, void *user) {
    pthread_mutex_lock(&g_log_mu);
    g_log_fn = fn;
    g_log_user = user;
    pthread_mutex_unlock(&g_log_mu);
}

void ptts_log(int level, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&g_log_mu);
    if (g_log_fn) g_log_fn(g_log_user, level, buf);
    pthread_mutex_unlock(&g_log_mu);
}

int ptts_mul_size(size_t n, size_t m, size_t *out) {
    if (m != 0 && n > SIZE_MAX / m) return -1;
    *out = n * m;
    return 0;
}

void *ptts_malloc_aligned(size_t n) {
    if (n == 0) n = 1;
    if (n > SIZE_MAX - 64) return NULL;
    return aligned_alloc(64, (n + 63) & ~(size_t)63);
}

void *ptts_calloc_aligned(size_t n) {
    void *p = ptts_malloc_aligned(n);
    if (p) memset(p, 0, (n ? n + 63 : 64) & ~(size_t)63);
    return p;
}

void ptts_free_aligned(void *p) { free(p); }

double ptts_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

char *ptts_strdup(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}
