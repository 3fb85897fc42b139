/* proto/tos.h: `passtos`, as openvpn 2.6 does it (forward.c process_ip_header with
 * PIPV4_PASSTOS, socket.h link_socket_extract_tos): the TOS byte of an IPv4 packet read from the
 * tun/tap device is given to the datagram that carries it to the client, so that routers on the
 * way can treat a call's packets (DSCP EF, say) apart from a download's.
 *
 * Differences from 2.6, on purpose: only the DSCP bits are copied, not the two ECN bits (a
 * router's congestion mark on the outer header would be lost at the client, which does not
 * copy it back inside, so an ECN-capable outer header would hide congestion instead of
 * signalling it); and each datagram gets its own packet's DSCP, where 2.6 sets the last one on
 * its socket and so also gives it to the IPv6 packets and control packets sent after it.
 *
 * Pure function on caller-owned bytes; any thread.
 */
#ifndef PROTO_TOS_H
#define PROTO_TOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TOS_DSCP_MASK 0xfc /* the six DSCP bits of the TOS byte (RFC 2474); the rest is ECN */

/* The DSCP bits (the TOS byte & TOS_DSCP_MASK) of pkt (len bytes): an IPv4 packet (is_ether
 * false: a tun device's), or an Ethernet frame (is_ether true: a tap device's) carrying one,
 * untagged or with one 802.1Q tag. 0 for anything else (IPv6, ARP, a short or non-IPv4
 * packet). */
uint8_t tos_dscp_of(const uint8_t *pkt, size_t len, bool is_ether);

#endif /* PROTO_TOS_H */
