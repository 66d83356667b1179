/*
 * netaddr.c - the address classifier of netaddr.h. IPv4: the special-purpose blocks of the IANA
 * registry (RFC 6890 and successors) and the cloud metadata addresses, which all fall inside
 * them (169.254.169.254 link-local, 100.100.100.200 carrier-grade NAT, 192.0.0.192 IETF).
 * IPv6: only global unicast (2000::/3) can be public; inside it, the blocks that tunnel or
 * document are refused or judged by their IPv4 address; outside it, the embedded-IPv4 forms
 * (::ffff:0:0/96, ::/96, 64:ff9b::/96) are judged by that address, the rest refused.
 */
#include "netaddr.h"

#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

typedef struct v4_block {
    uint32_t net;
    int bits;
    const char *what;
} v4_block;

#define V4(a, b, c, d) (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) | (d))

static const v4_block v4_blocks[] = {
    {V4(0, 0, 0, 0), 8, "unspecified"},
    {V4(10, 0, 0, 0), 8, "private"},
    {V4(100, 64, 0, 0), 10, "carrier-grade NAT"},
    {V4(127, 0, 0, 0), 8, "loopback"},
    {V4(169, 254, 0, 0), 16, "link-local"},
    {V4(172, 16, 0, 0), 12, "private"},
    {V4(192, 0, 0, 0), 24, "IETF protocol assignment"},
    {V4(192, 0, 2, 0), 24, "documentation"},
    {V4(192, 88, 99, 0), 24, "6to4 relay"},
    {V4(192, 168, 0, 0), 16, "private"},
    {V4(198, 18, 0, 0), 15, "benchmarking"},
    {V4(198, 51, 100, 0), 24, "documentation"},
    {V4(203, 0, 113, 0), 24, "documentation"},
    {V4(224, 0, 0, 0), 4, "multicast"},
    {V4(240, 0, 0, 0), 4, "reserved"}, /* with 255.255.255.255, broadcast */
};

static const char *v4_nonpublic(const uint8_t *a) {
    uint32_t x = V4(a[0], a[1], a[2], a[3]);
    for (size_t i = 0; i < sizeof v4_blocks / sizeof *v4_blocks; i++) {
        uint32_t mask = 0xffffffffu << (32 - v4_blocks[i].bits);
        if ((x & mask) == v4_blocks[i].net) return v4_blocks[i].what;
    }
    return NULL;
}

static int all_zero(const uint8_t *a, int n) {
    for (int i = 0; i < n; i++)
        if (a[i]) return 0;
    return 1;
}

static const char *v6_nonpublic(const uint8_t *a) {
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    static const uint8_t nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
    if (all_zero(a, 16)) return "unspecified";
    if (all_zero(a, 15) && a[15] == 1) return "loopback";
    if (!memcmp(a, mapped, 12) || !memcmp(a, nat64, 12)) return v4_nonpublic(a + 12);
    if (all_zero(a, 12)) return "IPv4-compatible"; /* ::a.b.c.d, deprecated: never routed */
    if ((a[0] & 0xe0) != 0x20) {                   /* outside 2000::/3 */
        if (a[0] == 0xff) return "multicast";
        if ((a[0] & 0xfe) == 0xfc) return "unique local";
        if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80) return "link-local";
        if (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0) return "site-local";
        return "reserved";
    }
    if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0d && a[3] == 0xb8) return "documentation";
    if (a[0] == 0x20 && a[1] == 0x01 && a[2] < 0x02) return "IETF protocol assignment"; /* Teredo */
    if (a[0] == 0x20 && a[1] == 0x02) return v4_nonpublic(a + 2); /* 6to4: 2002:V4ADDR::/48 */
    return NULL;
}

const char *ptts_addr_nonpublic(int family, const uint8_t *a) {
    if (family == AF_INET) return v4_nonpublic(a);
    if (family == AF_INET6) return v6_nonpublic(a);
    return "not IP";
}

const char *ptts_sockaddr_nonpublic(const struct sockaddr *sa) {
    if (!sa) return "not IP";
    if (sa->sa_family == AF_INET) {
        struct sockaddr_in in;
        memcpy(&in, sa, sizeof in);
        return v4_nonpublic((const uint8_t *)&in.sin_addr);
    }
    if (sa->sa_family == AF_INET6) {
        struct sockaddr_in6 in6;
        memcpy(&in6, sa, sizeof in6);
        return v6_nonpublic(in6.sin6_addr.s6_addr);
    }
    return "not IP";
}
