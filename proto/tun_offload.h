/* proto/tun_offload.h: TCP segmentation and coalescing for a TUN device opened with offloads.
 *
 * With IFF_VNET_HDR and TUNSETOFFLOAD (TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6, linux/if_tun.h),
 * every packet read from or written to the device starts with a struct virtio_net_hdr
 * (linux/virtio_net.h, 10 bytes, in the host's byte order for a TUN device). The kernel then
 * hands the server TCP "super-packets" of up to 64 KiB (gso_type TCPV4/TCPV6, gso_size bytes of
 * payload per segment) and packets whose TCP/UDP checksum is left for the reader to complete
 * (flags NEEDS_CSUM), and it accepts such super-packets written the other way. One read or write
 * then carries what used to take up to 45, and the kernel's TCP stack runs once per super-packet.
 *
 * This module is the pure part: splitting a super-packet into the segments the tunnel carries
 * (the job Linux's tcp_gso_segment does, net/ipv4/tcp_offload.c), completing a partial checksum
 * (skb_checksum_help, net/core/dev.c), and coalescing decrypted segments of one TCP flow back
 * into a super-packet for the kernel (the rules of tcp_gro_receive, net/ipv4/tcp_offload.c).
 * Checksums are RFC 1071's; the pseudo headers are RFC 9293 section 3.1 and RFC 8200 section
 * 8.1. No I/O: the caller reads and writes the device.
 */
#ifndef PROTO_TUN_OFFLOAD_H
#define PROTO_TUN_OFFLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VNET_HDR_LEN 10 /* sizeof(struct virtio_net_hdr), the TUN default (TUNSETVNETHDRSZ) */
#define VNET_F_NEEDS_CSUM 1
#define VNET_GSO_NONE 0
#define VNET_GSO_TCPV4 1
#define VNET_GSO_TCPV6 4
#define VNET_GSO_ECN 0x80

#define TUN_OFFLOAD_MAX_PACKET 65535 /* the largest IP packet a super-packet may be */

/* struct virtio_net_hdr with its fields in host order. */
struct vnet_hdr {
    uint8_t flags;        /* VNET_F_NEEDS_CSUM or 0 */
    uint8_t gso_type;     /* VNET_GSO_*, possibly with VNET_GSO_ECN */
    uint16_t hdr_len;     /* bytes of IP + TCP headers (a hint; never trusted here) */
    uint16_t gso_size;    /* payload bytes per segment */
    uint16_t csum_start;  /* checksum covers the packet from this offset... */
    uint16_t csum_offset; /* ...and is stored this far beyond csum_start */
};

/* Decode/encode the VNET_HDR_LEN bytes at b (host order, as a TUN device without TUNSETVNETLE
 * uses). */
void vnet_hdr_get(const uint8_t *b, struct vnet_hdr *h);
void vnet_hdr_put(uint8_t *b, const struct vnet_hdr *h);

/* RFC 1071 sum of len bytes at data added to sum (start with 0), not yet folded or
 * complemented. Odd lengths are padded with a zero byte, so only the last piece of a sum may have
 * an odd length. */
uint64_t inet_csum_add(uint64_t sum, const uint8_t *data, size_t len);

/* The 16-bit ones-complement fold of sum, not complemented, in the byte order of the data summed
 * (store it with memcpy). */
uint16_t inet_csum_fold(uint64_t sum);

/* Complete the checksum of a packet the kernel left partial (h->flags & VNET_F_NEEDS_CSUM): the
 * field at csum_start + csum_offset holds the pseudo-header sum; sum from csum_start to the end
 * and store the complement there, 0 stored as 0xFFFF (as skb_checksum_help does). pkt (len
 * bytes) is modified in place. Returns 0, or -PE_MALFORMED when the offsets do not fit in len. */
int tun_offload_csum_complete(uint8_t *pkt, size_t len, const struct vnet_hdr *h);

/* Walks a TCP super-packet read from the device, one segment at a time. */
struct tso_iter {
    const uint8_t *pkt;
    size_t len;
    size_t ip_hdr_len;
    size_t hdr_len; /* IP + TCP headers */
    size_t offset;  /* payload bytes already given out */
    uint16_t mss;
    uint16_t ip_id;
    uint32_t seq;
    int family; /* 4 or 6 */
    unsigned index;
};

/* Prepare to segment pkt (len bytes, the IP packet after the vnet header, not modified; the
 * caller keeps it alive until the last tso_next()) as h says: gso_type TCPV4 or TCPV6, gso_size
 * the segment payload size. The headers are read from the packet itself: an IPv4 header with or
 * without options, or an IPv6 header followed directly by TCP. Returns 0, -PE_UNSUPPORTED for
 * another gso_type or IPv6 extension headers, -PE_MALFORMED for a packet whose headers do not
 * match h or its length, an IPv4 fragment (any flag but DF), no payload, or a gso_size of 0. */
int tso_begin(struct tso_iter *it, const uint8_t *pkt, size_t len, const struct vnet_hdr *h);

/* Write the next segment into out (cap bytes): the headers copied with total/payload length,
 * IPv4 id (+1 per segment), TCP sequence number and checksums set for it; FIN and PSH only on the
 * last segment, CWR only on the first (tcp_gso_segment's rules). *seg_len gets its length.
 * Returns 1 when a segment was written, 0 when none is left, -PE_NOSPACE when out is too small. */
int tso_next(struct tso_iter *it, uint8_t *out, size_t cap, size_t *seg_len);

/* Receives each packet tcp_gro hands back: the vnet header to write in front of it and the IP
 * packet (len bytes, valid only during the call). */
typedef void (*tcp_gro_emit_fn)(void *ctx, const struct vnet_hdr *h, const uint8_t *pkt,
                                size_t len);

#define TCP_GRO_FLOWS 8 /* flows held at once; one more evicts the oldest */

struct tcp_gro_flow {
    uint8_t *buf; /* TUN_OFFLOAD_MAX_PACKET bytes: the first segment's headers, then payloads */
    size_t len;   /* 0: slot free */
    size_t ip_hdr_len;
    size_t hdr_len;
    uint32_t next_seq;
    uint16_t gso_size;
    unsigned n_segs;
    bool is_closed; /* ended by a short or PSH segment: nothing more joins it */
    uint64_t age;
};

/* A coalescer: consecutive in-order segments of one TCP flow become one super-packet. */
struct tcp_gro {
    struct tcp_gro_flow flows[TCP_GRO_FLOWS];
    uint64_t clock;
    uint64_t n_merged; /* segments that joined a held one, for statistics */
    tcp_gro_emit_fn emit;
    void *ctx;
};

/* Allocate the flow buffers (TCP_GRO_FLOWS x TUN_OFFLOAD_MAX_PACKET bytes, freed by
 * tcp_gro_free). Returns 0 or -PE_NOSPACE when memory runs out. */
int tcp_gro_init(struct tcp_gro *g, tcp_gro_emit_fn emit, void *ctx);
void tcp_gro_free(struct tcp_gro *g);

/* Offer one decrypted IP packet (len bytes, copied if held). A TCP segment carrying data with
 * only ACK and maybe PSH set, from an IPv4 header without options and with no flag but DF (not a
 * fragment) or an IPv6 header followed by TCP, joins the held packet of its flow when it
 * continues it: next sequence number, same acknowledgment number, window, reserved bits, TCP
 * options, TOS/traffic class, TTL/hop limit and DF, and no more payload than the first
 * segment's. Anything else is emitted at once, after any held packet of its flow, so no flow's
 * order changes. Packets of different flows may leave in another order than they came, as with
 * the kernel's GRO. Segments are not checksum-verified: they come out of an authenticated
 * tunnel, and the kernel accepts a NEEDS_CSUM packet as checksummed. */
void tcp_gro_add(struct tcp_gro *g, const uint8_t *pkt, size_t len);

/* Emit every held packet: one of several segments as a super-packet (NEEDS_CSUM, gso_type
 * TCPV4/TCPV6, gso_size the first segment's payload, TCP checksum field the pseudo-header sum,
 * IPv4 header checksum recomputed), a lone segment unchanged with an empty header. */
void tcp_gro_flush(struct tcp_gro *g);

#endif /* PROTO_TUN_OFFLOAD_H */
