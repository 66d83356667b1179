/*
 * server_log.c - the server's log lines on stderr (srv_log, server.h), which every part of the
 * server writes: the HTTP side, the WebSocket and Wyoming endpoints, the generation thread.
 */
#include <stdarg.h>
#include <stdio.h>

#include "server.h"

void srv_log(const srv *s, int level, const char *fmt, ...) {
    if (level > s->cfg.log_level) return;
    static const char *const names[] = {"error", "warning", "info", "debug"};
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "pocket-tts: %s: %s\n", names[level & 3], buf);
}
