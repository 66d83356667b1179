/*
 * netaddr.h - which IP addresses a download for a remote client may connect to: public unicast
 * only (http_get.c checks each connection of a transfer whose ptts_fetch_options ask for it).
 */
#ifndef PTTS_NETADDR_H
#define PTTS_NETADDR_H

#include <stdint.h>

struct sockaddr;

/* NULL when the address is public; else what it is ("loopback", "private", "link-local",
 * "carrier-grade NAT", "multicast", "unspecified", "reserved", "documentation", ...).
 * family: AF_INET (a: 4 bytes) or AF_INET6 (a: 16 bytes, network order); any other family is
 * "not IP". IPv4-mapped, IPv4-compatible, NAT64 (64:ff9b::/96) and 6to4 forms are judged by the
 * IPv4 address they carry; Teredo and the other IETF-assigned 2001::/23 blocks are refused. */
const char *ptts_addr_nonpublic(int family, const uint8_t *a);
/* The same for a socket address (sin_addr / sin6_addr). */
const char *ptts_sockaddr_nonpublic(const struct sockaddr *sa);

#endif
