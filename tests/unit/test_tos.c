/* tests/unit/test_tos.c: the DSCP `passtos` copies to the outer datagram (proto/tos.h; openvpn
 * 2.6 forward.c process_ip_header, socket.h link_socket_extract_tos). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "proto/tos.h"

/* An IPv4 header with TOS tos at p (20 bytes). */
static void ipv4(uint8_t *p, uint8_t tos)
{
    memset(p, 0, 20);
    p[0] = 0x45;
    p[1] = tos;
    p[3] = 20;
    p[8] = 64;
    p[9] = 1;
}

static void test_tun_ipv4(void **state)
{
    uint8_t p[20];

    (void)state;
    ipv4(p, 0xb8); /* DSCP EF */
    assert_int_equal(tos_dscp_of(p, sizeof(p), false), 0xb8);
    ipv4(p, 0xbb); /* EF with ECN CE: the ECN bits are not copied */
    assert_int_equal(tos_dscp_of(p, sizeof(p), false), 0xb8);
    ipv4(p, 0x03);
    assert_int_equal(tos_dscp_of(p, sizeof(p), false), 0);
    ipv4(p, 0x28);
    assert_int_equal(tos_dscp_of(p, 19, false), 0); /* too short for a header */
    assert_int_equal(tos_dscp_of(p, 0, false), 0);
}

static void test_tun_not_ipv4(void **state)
{
    uint8_t p[40] = {0x60, 0xb8}; /* IPv6 (traffic class bits there): 2.6 copies IPv4 only */

    (void)state;
    assert_int_equal(tos_dscp_of(p, sizeof(p), false), 0);
}

static void test_tap(void **state)
{
    uint8_t f[64] = {0};

    (void)state;
    f[12] = 0x08; /* untagged IPv4 */
    f[13] = 0x00;
    ipv4(f + 14, 0x48);
    assert_int_equal(tos_dscp_of(f, 34, true), 0x48);
    assert_int_equal(tos_dscp_of(f, 33, true), 0);
    assert_int_equal(tos_dscp_of(f, 14, false), 0); /* read as a tun packet: not IPv4 */
    f[12] = 0x81;                                   /* one 802.1Q tag, then IPv4 */
    f[13] = 0x00;
    f[14] = 0x00;
    f[15] = 0x0a;
    f[16] = 0x08;
    f[17] = 0x00;
    ipv4(f + 18, 0xb8);
    assert_int_equal(tos_dscp_of(f, 38, true), 0xb8);
    assert_int_equal(tos_dscp_of(f, 16, true), 0);
    f[16] = 0x08; /* ARP */
    f[17] = 0x06;
    assert_int_equal(tos_dscp_of(f, 38, true), 0);
    assert_int_equal(tos_dscp_of(f, 10, true), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tun_ipv4),
        cmocka_unit_test(test_tun_not_ipv4),
        cmocka_unit_test(test_tap),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
