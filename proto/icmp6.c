/* proto/icmp6.c: see icmp6.h. */
#include "proto/icmp6.h"

#include <string.h>

#include "proto/tun_offload.h"

#define IP6_HDR_LEN 40
#define ICMP6_HDR_LEN 8
#define IPPROTO_ICMP6_NUM 58

size_t icmp6_unreach_build(uint8_t *out, size_t cap, const uint8_t *pkt, size_t len,
                           const uint8_t src[16])
{
    size_t room = cap < ICMP6_UNREACH_MAX ? cap : ICMP6_UNREACH_MAX;
    size_t quoted, plen;
    uint8_t pseudo[8];
    uint64_t sum;
    uint16_t csum;

    if (len < IP6_HDR_LEN || (pkt[0] >> 4) != 6 || room < IP6_HDR_LEN + ICMP6_HDR_LEN + 64) {
        return 0;
    }
    quoted = len < room - IP6_HDR_LEN - ICMP6_HDR_LEN ? len : room - IP6_HDR_LEN - ICMP6_HDR_LEN;
    plen = ICMP6_HDR_LEN + quoted;
    memcpy(out, pkt, 4); /* version, traffic class, flow label */
    out[4] = (uint8_t)(plen >> 8);
    out[5] = (uint8_t)plen;
    out[6] = IPPROTO_ICMP6_NUM;
    out[7] = pkt[7]; /* hop limit, as 2.6 copies the header */
    memcpy(out + 8, src, 16);
    memcpy(out + 24, pkt + 8, 16); /* to the packet's source */
    out[40] = 1;                   /* destination unreachable */
    out[41] = 0;                   /* no route to destination */
    memset(out + 42, 0, 6);        /* checksum, unused */
    memcpy(out + IP6_HDR_LEN + ICMP6_HDR_LEN, pkt, quoted);
    /* checksum over the pseudo-header (addresses, length, next header) and the ICMPv6 message */
    pseudo[0] = pseudo[1] = 0;
    pseudo[2] = (uint8_t)(plen >> 8);
    pseudo[3] = (uint8_t)plen;
    pseudo[4] = pseudo[5] = pseudo[6] = 0;
    pseudo[7] = IPPROTO_ICMP6_NUM;
    sum = inet_csum_add(0, out + 8, 32);
    sum = inet_csum_add(sum, pseudo, sizeof(pseudo));
    sum = inet_csum_add(sum, out + IP6_HDR_LEN, plen);
    csum = (uint16_t)~inet_csum_fold(sum);
    memcpy(out + 42, &csum, 2);
    return IP6_HDR_LEN + plen;
}
