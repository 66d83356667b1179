/*
 * server_log.c - the server's log lines on stderr (srv_log, server.h), which every part of the
 * server writes: the HTTP side, the WebSocket and Wyoming endpoints, the generation thread.
 */
#include <stdarg.h>

#include "server.h"
#include "util.h"

void srv_log(const srv *s, int level, const char *fmt, ...) {
    if (level > s->cfg.log_level) return;
    va_list ap;
    va_start(ap, fmt);
    tool_vlog(level, fmt, ap);
    va_end(ap);
}
