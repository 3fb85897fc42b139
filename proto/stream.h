/* proto/stream.h: openvpn's packet framing on a stream transport (TCP).
 *
 * Over TCP every OpenVPN packet (control or data, the same bytes as a UDP datagram) is preceded
 * by its length as a 16-bit big-endian number (openvpn 2.6 socket.c, the stream_buf functions
 * and link_socket_write_tcp). A length of 0 or above the receiver's packet buffer is an error
 * that ends the connection (2.6: "Bad encapsulated packet length from peer", then a restart of
 * that client's instance). Pure functions; any thread.
 */
#ifndef PROTO_STREAM_H
#define PROTO_STREAM_H

#include <stddef.h>
#include <stdint.h>

#define STREAM_LEN_HDR 2        /* bytes of the length in front of each packet */
#define STREAM_MAX_PACKET 65535 /* the largest length the header can carry */

/* The first packet framed in buf (len bytes of the stream, untrusted): *pkt points into buf at
 * its pkt_len bytes and *used is STREAM_LEN_HDR + *pkt_len, the bytes to consume. Returns 0;
 * -PE_SHORT when buf does not hold the whole packet yet (nothing is set: read more); or
 * -PE_MALFORMED when the length is 0 or above max_len (the caller's packet buffer): the stream
 * cannot be resynchronised and the connection must be closed. */
int stream_next(const uint8_t *buf, size_t len, size_t max_len, const uint8_t **pkt,
                size_t *pkt_len, size_t *used);

/* The length header of a packet of pkt_len bytes (1..STREAM_MAX_PACKET) into hdr. Returns 0, or
 * -PE_MALFORMED for a length the header cannot carry (nothing written). */
int stream_put_len(uint8_t hdr[STREAM_LEN_HDR], size_t pkt_len);

/* port-share: whether the first len bytes of a TCP connection (untrusted) start an OpenVPN
 * client's first packet, its hard reset, as openvpn 2.6 decides it (ps.c is_openvpn_protocol):
 * P_CONTROL_HARD_RESET_CLIENT_V2 with a length of 14 to 255, or
 * P_CONTROL_HARD_RESET_CLIENT_V3 (tls-crypt-v2, the wrapped client key makes it longer) with 336
 * to 1278. Returns 1 (OpenVPN), 0 (something else: proxy it), or -1 while fewer than 3 bytes
 * are there (2.6 decides on 2 already; waiting for the opcode byte is never wrong). */
int stream_is_openvpn_start(const uint8_t *buf, size_t len);

#endif /* PROTO_STREAM_H */
