/* proto/stream.c: the length framing of packets on a TCP stream. */
#include "proto/stream.h"

#include "proto/cursor.h"
#include "proto/errors.h"
#include "proto/packet.h"

int stream_next(const uint8_t *buf, size_t len, size_t max_len, const uint8_t **pkt,
                size_t *pkt_len, size_t *used)
{
    size_t n;

    if (len < STREAM_LEN_HDR) {
        return -PE_SHORT;
    }
    n = (size_t)buf[0] << 8 | buf[1];
    if (n == 0 || n > max_len) {
        return -PE_MALFORMED;
    }
    if (len - STREAM_LEN_HDR < n) {
        return -PE_SHORT;
    }
    *pkt = buf + STREAM_LEN_HDR;
    *pkt_len = n;
    *used = STREAM_LEN_HDR + n;
    return 0;
}

int stream_put_len(uint8_t hdr[STREAM_LEN_HDR], size_t pkt_len)
{
    if (pkt_len == 0 || pkt_len > STREAM_MAX_PACKET) {
        return -PE_MALFORMED;
    }
    hdr[0] = (uint8_t)(pkt_len >> 8);
    hdr[1] = (uint8_t)pkt_len;
    return 0;
}

int stream_is_openvpn_start(const uint8_t *buf, size_t len)
{
    size_t plen;

    if (len < 3) {
        return -1;
    }
    plen = (size_t)buf[0] << 8 | buf[1];
    if (buf[2] == (uint8_t)(P_CONTROL_HARD_RESET_CLIENT_V3 << P_OPCODE_SHIFT)) {
        /* the WKc alone is 290 bytes, metadata up to 1024 (2.6 allows 255 more) */
        return plen >= 336 && plen < 1024 + 255;
    }
    return plen >= 14 && plen <= 255 &&
           buf[2] == (uint8_t)(P_CONTROL_HARD_RESET_CLIENT_V2 << P_OPCODE_SHIFT);
}
