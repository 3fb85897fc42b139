/* proto/client_nat.c: `client-nat`, stateless one-to-one NAT of IPv4 addresses (client_nat.h). */
#include "proto/client_nat.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "proto/csum.h"

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

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

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
    old_src = src = get32(pkt + IPV4_OFF_SRC);
    old_dst = dst = get32(pkt + IPV4_OFF_DST);
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
    put32(pkt + IPV4_OFF_SRC, src);
    put32(pkt + IPV4_OFF_DST, dst);
    check = get16(pkt + IPV4_OFF_CHECK);
    check = csum_replace32(csum_replace32(check, old_src, src), old_dst, dst);
    put16(pkt + IPV4_OFF_CHECK, check);
    /* the addresses are in the TCP and UDP pseudo headers: fix those checksums too, where the
     * packet carries the transport header (not in a later fragment) */
    if ((get16(pkt + IPV4_OFF_FRAG) & IPV4_FRAG_OFFSET_MASK) == 0) {
        size_t at = 0;

        if (pkt[IPV4_OFF_PROTO] == PROTO_TCP && len >= hdr_len + TCP_OFF_CHECK + 2) {
            at = hdr_len + TCP_OFF_CHECK;
        } else if (pkt[IPV4_OFF_PROTO] == PROTO_UDP && len >= hdr_len + UDP_OFF_CHECK + 2 &&
                   get16(pkt + hdr_len + UDP_OFF_CHECK) != 0) {
            at = hdr_len + UDP_OFF_CHECK;
        }
        if (at) {
            check = get16(pkt + at);
            check = csum_replace32(csum_replace32(check, old_src, src), old_dst, dst);
            if (pkt[IPV4_OFF_PROTO] == PROTO_UDP && check == 0) {
                check = 0xFFFF; /* 0 would say "no checksum" (RFC 768) */
            }
            put16(pkt + at, check);
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
