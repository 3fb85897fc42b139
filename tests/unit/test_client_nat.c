/* tests/unit/test_client_nat.c: `client-nat` (proto/client_nat.h): which address each rule
 * rewrites in each direction (openvpn 2.6 clinat.c), and that every checksum stays valid,
 * checked by recomputing it from scratch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "proto/client_nat.h"

#define A(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static uint32_t sum16(const uint8_t *p, size_t len, size_t skip)
{
    uint32_t sum = 0;

    for (size_t i = 0; i < len; i += 2) {
        uint16_t w = (uint16_t)(p[i] << 8);

        if (i + 1 < len) {
            w |= p[i + 1];
        }
        if (i != skip) {
            sum += w;
        }
    }
    return sum;
}

static uint16_t fold(uint32_t sum)
{
    while (sum >> 16) {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    return (uint16_t)~sum;
}

static uint16_t ip_checksum(const uint8_t *ip)
{
    return fold(sum16(ip, (size_t)(ip[0] & 0x0F) * 4, 10));
}

/* The TCP or UDP checksum over the pseudo header, as it should be (UDP: 0 stored as 0xFFFF). */
static uint16_t l4_checksum(const uint8_t *ip, size_t len)
{
    size_t ihl = (size_t)(ip[0] & 0x0F) * 4, l4_len = len - ihl;
    size_t at = ip[9] == 6 ? 16 : 6;
    uint32_t sum = sum16(ip + 12, 8, SIZE_MAX) + ip[9] + (uint32_t)l4_len;
    uint16_t c = fold(sum + sum16(ip + ihl, l4_len, at));

    return ip[9] == 17 && c == 0 ? 0xFFFF : c;
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

/* An IPv4 packet of proto (6 TCP, 17 UDP, 1 ICMP) from src to dst with a header of ihl words
 * and 11 bytes of payload after the transport header, all checksums valid. Returns its length. */
static size_t make_packet(uint8_t *p, uint8_t proto, uint32_t src, uint32_t dst, int ihl)
{
    size_t hl = (size_t)ihl * 4, l4 = proto == 6 ? 20 : 8, len = hl + l4 + 11;

    memset(p, 0, len);
    p[0] = (uint8_t)(0x40 | ihl);
    put16(p + 2, (uint16_t)len);
    p[8] = 64;
    p[9] = proto;
    put32(p + 12, src);
    put32(p + 16, dst);
    for (size_t i = 20; i < hl; i++) {
        p[i] = 1; /* NOP options */
    }
    put16(p + hl, 40000);
    put16(p + hl + 2, proto == 6 ? 80 : 53);
    if (proto == 6) {
        p[hl + 12] = 0x50;
        p[hl + 13] = 0x18;
    } else {
        put16(p + hl + 4, (uint16_t)(l4 + 11));
    }
    for (size_t i = 0; i < 11; i++) {
        p[hl + l4 + i] = (uint8_t)(0xA0 + i);
    }
    put16(p + 10, ip_checksum(p));
    if (proto == 6) {
        put16(p + hl + 16, l4_checksum(p, len));
    } else if (proto == 17) {
        put16(p + hl + 6, l4_checksum(p, len));
    }
    return len;
}

static void assert_valid(const uint8_t *p, size_t len)
{
    size_t hl = (size_t)(p[0] & 0x0F) * 4;

    assert_int_equal(get16(p + 10), ip_checksum(p));
    if (p[9] == 6) {
        assert_int_equal(get16(p + hl + 16), l4_checksum(p, len));
    } else if (p[9] == 17 && get16(p + hl + 6) != 0) {
        assert_int_equal(get16(p + hl + 6), l4_checksum(p, len));
    }
}

static struct client_nat one_rule(enum client_nat_type type, uint32_t net, uint32_t mask,
                                  uint32_t alias)
{
    struct client_nat n = {.n_rules = 1};

    n.rules[0] = (struct client_nat_rule){type, net, mask, alias};
    return n;
}

/* snat 198.19.0.0/24 -> 198.19.7.0: out, the source is mapped; in, the destination back. */
static void snat_both_directions(void **state)
{
    struct client_nat n =
        one_rule(CLIENT_NAT_SNAT, A(198, 19, 0, 0), A(255, 255, 255, 0), A(198, 19, 7, 0));
    uint8_t p[128];
    const uint8_t protos[] = {6, 17, 1};

    (void)state;
    for (size_t i = 0; i < sizeof(protos); i++) {
        size_t len = make_packet(p, protos[i], A(198, 19, 0, 1), A(198, 19, 0, 2), 5);

        assert_true(client_nat_apply(&n, p, len, CLIENT_NAT_OUTGOING));
        assert_int_equal(get32(p + 12), A(198, 19, 7, 1));
        assert_int_equal(get32(p + 16), A(198, 19, 0, 2)); /* the client's own: unchanged */
        assert_valid(p, len);

        len = make_packet(p, protos[i], A(198, 19, 0, 2), A(198, 19, 7, 1), 5);
        assert_true(client_nat_apply(&n, p, len, CLIENT_NAT_INCOMING));
        assert_int_equal(get32(p + 12), A(198, 19, 0, 2));
        assert_int_equal(get32(p + 16), A(198, 19, 0, 1));
        assert_valid(p, len);
    }
}

/* dnat 198.19.0.0/24 -> 198.19.9.0: out, the destination; in, the source. */
static void dnat_both_directions(void **state)
{
    struct client_nat n =
        one_rule(CLIENT_NAT_DNAT, A(198, 19, 0, 0), A(255, 255, 255, 0), A(198, 19, 9, 0));
    uint8_t p[128];
    size_t len = make_packet(p, 6, A(198, 19, 1, 1), A(198, 19, 0, 2), 5);

    (void)state;
    assert_true(client_nat_apply(&n, p, len, CLIENT_NAT_OUTGOING));
    assert_int_equal(get32(p + 12), A(198, 19, 1, 1));
    assert_int_equal(get32(p + 16), A(198, 19, 9, 2));
    assert_valid(p, len);
    len = make_packet(p, 17, A(198, 19, 9, 2), A(198, 19, 1, 1), 5);
    assert_true(client_nat_apply(&n, p, len, CLIENT_NAT_INCOMING));
    assert_int_equal(get32(p + 12), A(198, 19, 0, 2));
    assert_int_equal(get32(p + 16), A(198, 19, 1, 1));
    assert_valid(p, len);
}

/* Each address is rewritten by the first rule that matches it only; both addresses can change. */
static void first_match_per_address(void **state)
{
    struct client_nat n = {.n_rules = 3};
    uint8_t p[128];
    size_t len;

    (void)state;
    n.rules[0] = (struct client_nat_rule){CLIENT_NAT_SNAT, A(198, 19, 0, 0), A(255, 255, 0, 0),
                                          A(198, 18, 0, 0)};
    n.rules[1] = (struct client_nat_rule){CLIENT_NAT_SNAT, A(198, 19, 0, 0), A(255, 255, 255, 0),
                                          A(198, 19, 200, 0)}; /* never: rule 0 came first */
    n.rules[2] = (struct client_nat_rule){CLIENT_NAT_DNAT, A(198, 19, 5, 0), A(255, 255, 255, 0),
                                          A(198, 19, 6, 0)};
    len = make_packet(p, 6, A(198, 19, 0, 1), A(198, 19, 5, 9), 5);
    assert_true(client_nat_apply(&n, p, len, CLIENT_NAT_OUTGOING));
    assert_int_equal(get32(p + 12), A(198, 18, 0, 1));
    assert_int_equal(get32(p + 16), A(198, 19, 6, 9));
    assert_valid(p, len);
}

/* A network written with host bits never matches (as 2.6 compares it as written). */
static void network_with_host_bits_never_matches(void **state)
{
    struct client_nat n =
        one_rule(CLIENT_NAT_SNAT, A(198, 19, 0, 1), A(255, 255, 255, 0), A(198, 19, 7, 0));
    uint8_t p[128], before[128];
    size_t len = make_packet(p, 6, A(198, 19, 0, 1), A(198, 19, 0, 2), 5);

    (void)state;
    memcpy(before, p, len);
    assert_false(client_nat_apply(&n, p, len, CLIENT_NAT_OUTGOING));
    assert_memory_equal(p, before, len);
}

/* IP options: the TCP header is found past them (2.6 would fix bytes inside the options). */
static void header_with_options(void **state)
{
    struct client_nat n =
        one_rule(CLIENT_NAT_SNAT, A(198, 19, 0, 0), A(255, 255, 255, 0), A(198, 19, 7, 0));
    uint8_t p[128];
    size_t len = make_packet(p, 6, A(198, 19, 0, 1), A(198, 19, 0, 2), 8);

    (void)state;
    assert_true(client_nat_apply(&n, p, len, CLIENT_NAT_OUTGOING));
    assert_int_equal(get32(p + 12), A(198, 19, 7, 1));
    assert_valid(p, len);
    assert_int_equal(p[20], 1); /* the options are untouched */
}

/* UDP without a checksum keeps none; a later fragment has no transport header to fix. */
static void udp_zero_checksum_and_fragments(void **state)
{
    struct client_nat n =
        one_rule(CLIENT_NAT_SNAT, A(198, 19, 0, 0), A(255, 255, 255, 0), A(198, 19, 7, 0));
    uint8_t p[128], payload[64];
    size_t len = make_packet(p, 17, A(198, 19, 0, 1), A(198, 19, 0, 2), 5);

    (void)state;
    put16(p + 26, 0);
    assert_true(client_nat_apply(&n, p, len, CLIENT_NAT_OUTGOING));
    assert_int_equal(get16(p + 26), 0);
    assert_int_equal(get16(p + 10), ip_checksum(p));

    len = make_packet(p, 6, A(198, 19, 0, 1), A(198, 19, 0, 2), 5);
    put16(p + 6, 0x00B9); /* fragment offset 185 * 8: the bytes after the header are payload */
    put16(p + 10, ip_checksum(p));
    memcpy(payload, p + 20, len - 20);
    assert_true(client_nat_apply(&n, p, len, CLIENT_NAT_OUTGOING));
    assert_int_equal(get16(p + 10), ip_checksum(p));
    assert_memory_equal(p + 20, payload, len - 20);
}

/* Whatever is not a whole IPv4 header is left alone; a short TCP header gets only the IP fix. */
static void malformed_left_alone(void **state)
{
    struct client_nat n =
        one_rule(CLIENT_NAT_SNAT, A(198, 19, 0, 0), A(255, 255, 255, 0), A(198, 19, 7, 0));
    uint8_t p[128], before[128];
    size_t len = make_packet(p, 6, A(198, 19, 0, 1), A(198, 19, 0, 2), 5);

    (void)state;
    memcpy(before, p, len);
    assert_false(client_nat_apply(&n, p, 19, CLIENT_NAT_OUTGOING));
    p[0] = 0x45 + 0x10; /* version 5 */
    assert_false(client_nat_apply(&n, p, len, CLIENT_NAT_OUTGOING));
    p[0] = 0x4F; /* 60-byte header in a 30-byte packet */
    assert_false(client_nat_apply(&n, p, 30, CLIENT_NAT_OUTGOING));
    p[0] = 0x44; /* header length below 20 */
    assert_false(client_nat_apply(&n, p, len, CLIENT_NAT_OUTGOING));
    p[0] = 0x45;
    assert_memory_equal(p, before, len);
    assert_false(client_nat_apply(NULL, p, len, CLIENT_NAT_OUTGOING));
    assert_true(client_nat_apply(&n, p, 30, CLIENT_NAT_OUTGOING)); /* TCP cut at byte 10 */
    assert_int_equal(get16(p + 10), ip_checksum(p));
    assert_memory_equal(p + 20, before + 20, 10);
}

static void parses_like_openvpn(void **state)
{
    struct client_nat_rule r;
    char why[160];

    (void)state;
    assert_int_equal(
        client_nat_parse("snat", "198.19.0.0", "255.255.255.0", "198.18.5.0", &r, why, sizeof(why)),
        0);
    assert_int_equal(r.type, CLIENT_NAT_SNAT);
    assert_int_equal(r.network, A(198, 19, 0, 0));
    assert_int_equal(r.netmask, A(255, 255, 255, 0));
    assert_int_equal(r.alias, A(198, 18, 5, 0));
    assert_int_equal(
        client_nat_parse("dnat", "198.19.0.0", "255.255.0.0", "198.19.9.0", &r, why, sizeof(why)),
        0);
    assert_int_equal(r.type, CLIENT_NAT_DNAT);
    assert_int_equal(
        client_nat_parse("xnat", "198.19.0.0", "255.0.0.0", "198.19.9.0", &r, why, sizeof(why)),
        -1);
    assert_non_null(strstr(why, "'xnat'"));
    assert_int_equal(
        client_nat_parse("snat", "198.19.0.0", "255.0.0.0", "vpn.example", &r, why, sizeof(why)),
        -1);
    assert_non_null(strstr(why, "alias"));
    assert_int_equal(
        client_nat_parse("snat", "198.19.0.0", "255.0.0", "198.19.9.0", &r, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "netmask"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(snat_both_directions),
        cmocka_unit_test(dnat_both_directions),
        cmocka_unit_test(first_match_per_address),
        cmocka_unit_test(network_with_host_bits_never_matches),
        cmocka_unit_test(header_with_options),
        cmocka_unit_test(udp_zero_checksum_and_fragments),
        cmocka_unit_test(malformed_left_alone),
        cmocka_unit_test(parses_like_openvpn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
