/* tests/bench/loadgen_icmp.h: the tunnel traffic of the load generator, hand-built IPv4 ICMP echo.
 *
 * Each simulated client sends echo requests from its pushed tunnel address to the server's tunnel
 * address; the server's kernel answers them through its TUN device. Layouts from RFC 791 (IPv4
 * header), RFC 792 (echo / echo reply) and RFC 1071 (the internet checksum). Pure functions, any
 * thread.
 */
#ifndef TESTS_BENCH_LOADGEN_ICMP_H
#define TESTS_BENCH_LOADGEN_ICMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOADGEN_IPV4_HDR_LEN 20 /* no options */
#define LOADGEN_ICMP_HDR_LEN 8  /* type, code, checksum, identifier, sequence */
#define LOADGEN_ICMP_ECHO_HDRS (LOADGEN_IPV4_HDR_LEN + LOADGEN_ICMP_HDR_LEN)
#define LOADGEN_ICMP_PAYLOAD_MAX 1400 /* keeps the packet under a 1500-byte tun MTU */

/* RFC 1071 internet checksum of len bytes (odd length padded with a zero byte), already
 * complemented: store it big-endian in the checksum field, which must be zero while summing. */
uint16_t loadgen_inet_checksum(const uint8_t *p, size_t len);

/* Build an IPv4 ICMP echo request: src -> dst (host order), TTL 64, DF clear, IP id = seq,
 * ICMP identifier ident and sequence seq, then payload_len bytes of a fixed pattern that starts
 * with the 8-byte big-endian send_stamp (the caller's clock, echoed back unchanged; may be 0).
 * Both checksums are filled. out needs LOADGEN_ICMP_ECHO_HDRS + payload_len bytes (cap).
 * Returns the packet length, or 0 when cap is too small or payload_len > LOADGEN_ICMP_PAYLOAD_MAX.
 */
size_t loadgen_icmp_echo_build(uint32_t src, uint32_t dst, uint16_t ident, uint16_t seq,
                               uint64_t send_stamp, size_t payload_len, uint8_t *out, size_t cap);

/* What an echo reply carried. */
struct loadgen_echo_reply {
    uint32_t src, dst; /* host order */
    uint16_t ident, seq;
    uint64_t send_stamp; /* the first 8 payload bytes, 0 if fewer came back */
};

/* Recognise an IPv4 ICMP echo reply (type 0, code 0) in pkt[0..len): version 4, header length
 * within the packet, total length within len, not a fragment, protocol 1, valid IPv4 and ICMP
 * checksums. Fills *out and returns true; false for anything else (untrusted input, any bytes). */
bool loadgen_icmp_echo_reply_parse(const uint8_t *pkt, size_t len, struct loadgen_echo_reply *out);

/* Answer an IPv4 ICMP echo request (type 8, code 0) addressed to self (host order), as a host's
 * stack does: checked like loadgen_icmp_echo_reply_parse (header length, total length within
 * len, not a fragment, both checksums), then turned in place into the echo reply (addresses
 * swapped, TTL 64, type 0, checksums recomputed; the rest unchanged). Returns the reply's
 * length (the request's IPv4 total length), or 0 when pkt is anything else (untrusted input,
 * left unchanged). */
size_t loadgen_icmp_echo_answer(uint8_t *pkt, size_t len, uint32_t self);

#endif /* TESTS_BENCH_LOADGEN_ICMP_H */
