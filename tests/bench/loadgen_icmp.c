/* tests/bench/loadgen_icmp.c: IPv4 ICMP echo request building and echo reply parsing. */
#include "tests/bench/loadgen_icmp.h"

#include <string.h>

#include "proto/cursor.h"

#define IPPROTO_ICMP_NUM 1
#define ICMP_ECHO_REPLY 0
#define ICMP_ECHO_REQUEST 8

uint16_t loadgen_inet_checksum(const uint8_t *p, size_t len)
{
    uint32_t sum = 0;
    size_t i;

    for (i = 0; i + 1 < len; i += 2) {
        sum += (uint32_t)p[i] << 8 | p[i + 1];
    }
    if (i < len) {
        sum += (uint32_t)p[i] << 8;
    }
    while (sum >> 16) {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    return (uint16_t)~sum;
}

size_t loadgen_icmp_echo_build(uint32_t src, uint32_t dst, uint16_t ident, uint16_t seq,
                               uint64_t send_stamp, size_t payload_len, uint8_t *out, size_t cap)
{
    size_t total = LOADGEN_ICMP_ECHO_HDRS + payload_len;
    uint8_t *ip = out, *icmp = out + LOADGEN_IPV4_HDR_LEN, *data = icmp + LOADGEN_ICMP_HDR_LEN;

    if (payload_len > LOADGEN_ICMP_PAYLOAD_MAX || total > cap) {
        return 0;
    }
    memset(ip, 0, LOADGEN_ICMP_ECHO_HDRS);
    ip[0] = 0x45; /* version 4, 5 words of header */
    store_be16(ip + 2, (uint16_t)total);
    store_be16(ip + 4, seq);
    ip[8] = 64;
    ip[9] = IPPROTO_ICMP_NUM;
    store_be32(ip + 12, src);
    store_be32(ip + 16, dst);
    store_be16(ip + 10, loadgen_inet_checksum(ip, LOADGEN_IPV4_HDR_LEN));

    icmp[0] = ICMP_ECHO_REQUEST;
    store_be16(icmp + 4, ident);
    store_be16(icmp + 6, seq);
    for (size_t i = 0; i < payload_len; i++) {
        data[i] = (uint8_t)(0x10 + i);
    }
    for (size_t i = 0; i < 8 && i < payload_len; i++) {
        data[i] = (uint8_t)(send_stamp >> (56 - 8 * i));
    }
    store_be16(icmp + 2, loadgen_inet_checksum(icmp, LOADGEN_ICMP_HDR_LEN + payload_len));
    return total;
}

/* The ICMP message of an unfragmented IPv4 packet with valid checksums whose ICMP type is type
 * (code 0): its header length in *ihl and the packet's total length in *total; false for anything
 * else. */
static bool icmp_of(const uint8_t *pkt, size_t len, uint8_t type, size_t *ihl, size_t *total)
{
    if (len < LOADGEN_IPV4_HDR_LEN || (pkt[0] >> 4) != 4) {
        return false;
    }
    *ihl = (size_t)(pkt[0] & 0x0F) * 4;
    *total = load_be16(pkt + 2);
    if (*ihl < LOADGEN_IPV4_HDR_LEN || *total < *ihl + LOADGEN_ICMP_HDR_LEN || *total > len) {
        return false;
    }
    if ((load_be16(pkt + 6) & 0x3FFF) != 0) { /* MF set or a fragment offset */
        return false;
    }
    if (pkt[9] != IPPROTO_ICMP_NUM || loadgen_inet_checksum(pkt, *ihl) != 0) {
        return false;
    }
    return pkt[*ihl] == type && pkt[*ihl + 1] == 0 &&
           loadgen_inet_checksum(pkt + *ihl, *total - *ihl) == 0;
}

size_t loadgen_icmp_echo_answer(uint8_t *pkt, size_t len, uint32_t self)
{
    size_t ihl, total;
    uint8_t *icmp;

    if (!icmp_of(pkt, len, ICMP_ECHO_REQUEST, &ihl, &total) || load_be32(pkt + 16) != self) {
        return 0;
    }
    store_be32(pkt + 16, load_be32(pkt + 12));
    store_be32(pkt + 12, self);
    pkt[8] = 64;
    store_be16(pkt + 10, 0);
    store_be16(pkt + 10, loadgen_inet_checksum(pkt, ihl));
    icmp = pkt + ihl;
    icmp[0] = ICMP_ECHO_REPLY;
    store_be16(icmp + 2, 0);
    store_be16(icmp + 2, loadgen_inet_checksum(icmp, total - ihl));
    return total;
}

bool loadgen_icmp_echo_reply_parse(const uint8_t *pkt, size_t len, struct loadgen_echo_reply *out)
{
    size_t ihl, total;
    const uint8_t *icmp;
    size_t icmp_len;

    if (!icmp_of(pkt, len, ICMP_ECHO_REPLY, &ihl, &total)) {
        return false;
    }
    icmp = pkt + ihl;
    icmp_len = total - ihl;
    out->src = load_be32(pkt + 12);
    out->dst = load_be32(pkt + 16);
    out->ident = load_be16(icmp + 4);
    out->seq = load_be16(icmp + 6);
    out->send_stamp = 0;
    if (icmp_len >= LOADGEN_ICMP_HDR_LEN + 8) {
        for (size_t i = 0; i < 8; i++) {
            out->send_stamp = out->send_stamp << 8 | icmp[LOADGEN_ICMP_HDR_LEN + i];
        }
    }
    return true;
}
