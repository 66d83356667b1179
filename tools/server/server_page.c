/*
 * server_page.c - the web page of `pocket-tts serve` (GET /). The page is one readable source,
 * tools/server/page.html (HTML, CSS and script, self-contained: no CDN, no external fetch),
 * embedded at build time: cmake/embed_file.cmake turns it into the byte list of page_html.inc,
 * which the array below includes. Nothing is read from disk at run time.
 */
#include <stdlib.h>
#include <string.h>

#include "server.h"

/* The bytes of page.html followed by a terminating 0. */
static const unsigned char page_html[] = {
#include "page_html.inc"
};

char *srv_page_build(void) {
    char *p = malloc(sizeof page_html);
    if (p) memcpy(p, page_html, sizeof page_html);
    return p;
}
