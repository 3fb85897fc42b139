/* proto/client_nat.c: `client-nat`, stateless one-to-one NAT of IPv4 addresses (client_nat.h). */
#include "proto/client_nat.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "proto/csum.h"
#include "proto/cursor.h"

#define IPV4_MIN_HDR_LEN 20
#define IPV4_OFF_FRAG 6
#define IPV4_OFF_PROTO 9
#define IPV4_OFF_CHECK 10
#define IPV4_OFF_SRC 12
#define IPV4_OFF_DST 16
#define IPV4_FRAG_OFFSET_MASK 0x1FFFu
#define PROTO_TCP 6
#define PROTO_UDP 17
#define TCP_OFF_CHECK 16
#define UDP_OFF_CHECK 6

bool client_nat_apply(const struct client_nat *nat, uint8_t *pkt, size_t len,
                      enum client_nat_dir dir)
{
    uint32_t old_src, old_dst, src, dst;
    bool is_src_done = false, is_dst_done = false;
    size_t hdr_len;
    uint16_t check;

    if (!nat || nat->n_rules == 0 || len < IPV4_MIN_HDR_LEN || (pkt[0] >> 4) != 4) {
        return false;
    }
    hdr_len = (size_t)(pkt[0] & 0x0F) * 4;
    if (hdr_len < IPV4_MIN_HDR_LEN || hdr_len > len) {
        return false;
    }
    old_src = src = load_be32(pkt + IPV4_OFF_SRC);
    old_dst = dst = load_be32(pkt + IPV4_OFF_DST);
    for (size_t i = 0; i < nat->n_rules; i++) {
        const struct client_nat_rule *r = &nat->rules[i];
        /* snat rewrites the source going out and the destination coming in; dnat the other */
        bool is_dst = ((unsigned)r->type ^ (unsigned)dir) != 0;
        uint32_t from = dir == CLIENT_NAT_OUTGOING ? r->network : r->alias;
        uint32_t to = dir == CLIENT_NAT_OUTGOING ? r->alias : r->network;
        uint32_t *addr = is_dst ? &dst : &src;
        bool *is_done = is_dst ? &is_dst_done : &is_src_done;

        if (!*is_done && (*addr & r->netmask) == from) {
            *addr = (*addr & ~r->netmask) | to;
            *is_done = true;
        }
    }
    if (src == old_src && dst == old_dst) {
        return false; /* matched, but mapped onto itself */
    }
    store_be32(pkt + IPV4_OFF_SRC, src);
    store_be32(pkt + IPV4_OFF_DST, dst);
    check = load_be16(pkt + IPV4_OFF_CHECK);
    check = csum_replace32(csum_replace32(check, old_src, src), old_dst, dst);
    store_be16(pkt + IPV4_OFF_CHECK, check);
    /* the addresses are in the TCP and UDP pseudo headers: fix those checksums too, where the
     * packet carries the transport header (not in a later fragment) */
    if ((load_be16(pkt + IPV4_OFF_FRAG) & IPV4_FRAG_OFFSET_MASK) == 0) {
        size_t at = 0;

        if (pkt[IPV4_OFF_PROTO] == PROTO_TCP && len >= hdr_len + TCP_OFF_CHECK + 2) {
            at = hdr_len + TCP_OFF_CHECK;
        } else if (pkt[IPV4_OFF_PROTO] == PROTO_UDP && len >= hdr_len + UDP_OFF_CHECK + 2 &&
                   load_be16(pkt + hdr_len + UDP_OFF_CHECK) != 0) {
            at = hdr_len + UDP_OFF_CHECK;
        }
        if (at) {
            check = load_be16(pkt + at);
            check = csum_replace32(csum_replace32(check, old_src, src), old_dst, dst);
            if (pkt[IPV4_OFF_PROTO] == PROTO_UDP && check == 0) {
                check = 0xFFFF; /* 0 would say "no checksum" (RFC 768) */
            }
            store_be16(pkt + at, check);
        }
    }
    return true;
}

static int parse_addr(const char *what, const char *text, uint32_t *out, char *why, size_t why_len)
{
    struct in_addr a;

    if (inet_pton(AF_INET, text, &a) != 1) {
        snprintf(why, why_len, "bad %s '%s' (an IPv4 address)", what, text);
        return -1;
    }
    *out = ntohl(a.s_addr);
    return 0;
}

int client_nat_parse(const char *type, const char *network, const char *netmask, const char *alias,
                     struct client_nat_rule *rule, char *why, size_t why_len)
{
    if (strcmp(type, "snat") == 0) {
        rule->type = CLIENT_NAT_SNAT;
    } else if (strcmp(type, "dnat") == 0) {
        rule->type = CLIENT_NAT_DNAT;
    } else {
        snprintf(why, why_len, "type must be 'snat' or 'dnat', not '%s'", type);
        return -1;
    }
    if (parse_addr("network", network, &rule->network, why, why_len) ||
        parse_addr("netmask", netmask, &rule->netmask, why, why_len) ||
        parse_addr("alias", alias, &rule->alias, why, why_len)) {
        return -1;
    }
    return 0;
}
