/* proto/mss.c: TCP MSS clamping for packets passing through the tunnel. */
#include "proto/mss.h"

#include "proto/csum.h"
#include "proto/cursor.h"

#define INNER_IPV4_TCP_LEN 40
#define IPPROTO_TCP_NUM 6
#define TCP_FLAG_SYN 0x02
#define TCPOPT_EOL 0
#define TCPOPT_NOP 1
#define TCPOPT_MSS 2
#define IPV6_HDR_LEN 40
#define IPV6_EXTRA_HDR_LEN 20 /* an IPv6 header is this much longer than IPv4's */

uint16_t mss_max_for(int mssfix_value, enum mss_mode mode, const struct mss_frame *f)
{
    long v = mssfix_value;

    if (v <= 0) {
        return 0;
    }
    if (mode == MSS_MODE_FIXED) {
        v -= INNER_IPV4_TCP_LEN;
    } else {
        v -= (long)(f->header_len + f->crypto_len);
        if (mode == MSS_MODE_MTU) {
            v -= (long)f->transport_len;
        }
        if (f->cbc_block > 0 && v > 0) {
            v -= v % (long)f->cbc_block; /* whole blocks, one byte of them padding */
            v -= 1;
        }
        v -= (long)f->payload_len + INNER_IPV4_TCP_LEN;
    }
    if (v < 64) { /* never clamp to something silly */
        v = 64;
    }
    return v > 65535 ? 65535 : (uint16_t)v;
}

/* Clamp the MSS option of a TCP SYN segment (tcp_len bytes from tcp, checksum fixed in place). */
static int clamp_tcp(uint8_t *tcp, size_t tcp_len, uint16_t max_mss)
{
    size_t doff, i;

    if (tcp_len < 20 || !(tcp[13] & TCP_FLAG_SYN)) {
        return 0;
    }
    doff = (size_t)(tcp[12] >> 4) * 4;
    if (doff < 20 || doff > tcp_len) {
        return 0;
    }
    for (i = 20; i < doff;) {
        uint8_t kind = tcp[i];

        if (kind == TCPOPT_EOL) {
            break;
        }
        if (kind == TCPOPT_NOP) {
            i++;
            continue;
        }
        if (i + 1 >= doff || tcp[i + 1] < 2 || i + tcp[i + 1] > doff) {
            return 0; /* malformed option list: leave it alone */
        }
        if (kind == TCPOPT_MSS && tcp[i + 1] == 4) {
            uint16_t mss = load_be16(tcp + i + 2);

            if (mss <= max_mss) {
                return 0;
            }
            store_be16(tcp + i + 2, max_mss);
            store_be16(tcp + 16, csum_replace16(load_be16(tcp + 16), mss, max_mss));
            return 1;
        }
        i += tcp[i + 1];
    }
    return 0;
}

int mss_clamp_ipv4(uint8_t *pkt, size_t len, uint16_t max_mss)
{
    size_t ihl;

    if (max_mss == 0 || len < 20 || (pkt[0] >> 4) != 4 || pkt[9] != IPPROTO_TCP_NUM) {
        return 0;
    }
    ihl = (size_t)(pkt[0] & 0x0F) * 4;
    /* Only whole, unfragmented packets: a later fragment has no TCP header. */
    if (ihl < 20 || ihl > len || (load_be16(pkt + 6) & 0x1FFF) != 0) {
        return 0;
    }
    return clamp_tcp(pkt + ihl, len - ihl, max_mss);
}

int mss_clamp_ipv6(uint8_t *pkt, size_t len, uint16_t max_mss)
{
    /* TCP right after the fixed header only: packets with extension headers are left alone. */
    if (max_mss <= IPV6_EXTRA_HDR_LEN || len < IPV6_HDR_LEN || (pkt[0] >> 4) != 6 ||
        pkt[6] != IPPROTO_TCP_NUM) {
        return 0;
    }
    return clamp_tcp(pkt + IPV6_HDR_LEN, len - IPV6_HDR_LEN,
                     (uint16_t)(max_mss - IPV6_EXTRA_HDR_LEN));
}
