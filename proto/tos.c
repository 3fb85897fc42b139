/* proto/tos.c: the DSCP of a tunnel packet, for `passtos` (tos.h). */
#include "proto/tos.h"

#define ETH_HLEN_UNTAGGED 14
#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_8021Q 0x8100
#define IPV4_MIN_HLEN 20

uint8_t tos_dscp_of(const uint8_t *pkt, size_t len, bool is_ether)
{
    size_t off = 0;

    if (is_ether) {
        uint16_t type;

        if (len < ETH_HLEN_UNTAGGED) {
            return 0;
        }
        type = (uint16_t)(pkt[12] << 8 | pkt[13]);
        off = ETH_HLEN_UNTAGGED;
        if (type == ETHERTYPE_8021Q) {
            if (len < ETH_HLEN_UNTAGGED + 4) {
                return 0;
            }
            type = (uint16_t)(pkt[16] << 8 | pkt[17]);
            off += 4;
        }
        if (type != ETHERTYPE_IPV4) {
            return 0;
        }
    }
    if (len - off < IPV4_MIN_HLEN || pkt[off] >> 4 != 4) {
        return 0;
    }
    return pkt[off + 1] & TOS_DSCP_MASK;
}
