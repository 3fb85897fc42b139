/* proto/icmp6.h: the ICMPv6 "destination unreachable, no route" answer openvpn 2.6 gives with
 * `block-ipv6` (forward.c ipv6_send_icmp_unreachable; RFC 4443 section 3.1). Pure code, no I/O.
 */
#ifndef PROTO_ICMP6_H
#define PROTO_ICMP6_H

#include <stddef.h>
#include <stdint.h>

#define ICMP6_UNREACH_MAX 1280 /* RFC 4443 2.4 (c): the answer fits the IPv6 minimum MTU */

/* Build in out (cap bytes, at least 48 + 64) the answer to the IPv6 packet pkt (len bytes):
 * an IPv6 header with pkt's version, traffic class, flow label and hop limit, from src (16
 * bytes, network order) to pkt's source, then ICMPv6 type 1 code 0 (no route to destination)
 * with its checksum, then as much of pkt as fits in ICMP6_UNREACH_MAX bytes in all (and cap).
 * Returns the length, or 0 when pkt is not an IPv6 packet of at least 40 bytes or cap is too
 * small. Any thread; no allocation. */
size_t icmp6_unreach_build(uint8_t *out, size_t cap, const uint8_t *pkt, size_t len,
                           const uint8_t src[16]);

#endif /* PROTO_ICMP6_H */
