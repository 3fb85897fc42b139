/* proto/csum.h: incremental update of an Internet checksum field (RFC 1624), for code that
 * rewrites a few 16-bit words of a packet (MSS clamping, client-nat). Pure. */
#ifndef PROTO_CSUM_H
#define PROTO_CSUM_H

#include <stdint.h>

/* The checksum field `check` after one 16-bit word it covers changed from old_val to new_val
 * (all three as they are read from the packet, in the same byte order): RFC 1624 eqn. 3,
 * HC' = ~(~HC + ~m + m') in ones' complement arithmetic. */
static inline uint16_t csum_replace16(uint16_t check, uint16_t old_val, uint16_t new_val)
{
    uint32_t sum = (uint16_t)~check;

    sum += (uint16_t)~old_val;
    sum += new_val;
    while (sum >> 16) {
        sum = (sum & 0xFFFFu) + (sum >> 16);
    }
    return (uint16_t)~sum;
}

/* The same for a 32-bit field (an IPv4 address): both of its 16-bit words. */
static inline uint16_t csum_replace32(uint16_t check, uint32_t old_val, uint32_t new_val)
{
    check = csum_replace16(check, (uint16_t)(old_val >> 16), (uint16_t)(new_val >> 16));
    return csum_replace16(check, (uint16_t)old_val, (uint16_t)new_val);
}

#endif /* PROTO_CSUM_H */
