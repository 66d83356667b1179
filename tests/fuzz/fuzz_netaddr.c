/*
 * fuzz_netaddr.c - libFuzzer target for the address classifier (netaddr.h) that decides where a
 * server's download of a client's URL may connect. Bytes as an address (first byte: the family)
 * and as text (inet_pton of either family). Properties: never a crash; an IPv4 address and its
 * IPv4-mapped and NAT64 IPv6 forms get the same verdict; loopback, unspecified, link-local and
 * private forms are never public whatever the other bytes.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "netaddr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_v4(const uint8_t *a) {
    const char *v4 = ptts_addr_nonpublic(AF_INET, a);
    uint8_t m[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    memcpy(m + 12, a, 4);
    const char *mapped = ptts_addr_nonpublic(AF_INET6, m);
    if ((v4 == NULL) != (mapped == NULL)) abort();
    static const uint8_t nat64[12] = {0, 0x64, 0xff, 0x9b};
    memcpy(m, nat64, 12);
    if ((v4 == NULL) != (ptts_addr_nonpublic(AF_INET6, m) == NULL)) abort();
    if ((a[0] == 127 || a[0] == 10 || a[0] == 0 || (a[0] == 169 && a[1] == 254) ||
         (a[0] == 192 && a[1] == 168) || (a[0] == 172 && (a[1] & 0xf0) == 16) || a[0] >= 224) &&
        v4 == NULL)
        abort();
    struct sockaddr_in sin = {.sin_family = AF_INET};
    memcpy(&sin.sin_addr, a, 4);
    if ((ptts_sockaddr_nonpublic((const struct sockaddr *)&sin) == NULL) != (v4 == NULL)) abort();
}

static void check_v6(const uint8_t *a) {
    const char *v6 = ptts_addr_nonpublic(AF_INET6, a);
    if ((a[0] == 0xff || (a[0] & 0xfe) == 0xfc || (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)) && !v6)
        abort();
    if ((a[0] & 0xe0) != 0x20 && !v6) { /* outside 2000::/3: only embedded IPv4 can be public */
        static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        static const uint8_t nat64[12] = {0, 0x64, 0xff, 0x9b};
        if (memcmp(a, mapped, 12) && memcmp(a, nat64, 12)) abort();
    }
    struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6};
    memcpy(&sin6.sin6_addr, a, 16);
    if ((ptts_sockaddr_nonpublic((const struct sockaddr *)&sin6) == NULL) != (v6 == NULL)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size >= 5 && !(data[0] & 1)) check_v4(data + 1);
    if (size >= 17 && (data[0] & 1)) check_v6(data + 1);
    if (size > 0 && size < 64) { /* the same through the text forms */
        char txt[64];
        memcpy(txt, data, size);
        txt[size] = 0;
        uint8_t a[16];
        if (inet_pton(AF_INET, txt, a) == 1) check_v4(a);
        if (inet_pton(AF_INET6, txt, a) == 1) check_v6(a);
    }
    if (ptts_addr_nonpublic(AF_UNIX, data) == NULL) abort();
    return 0;
}
