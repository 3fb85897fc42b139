/* tests/unit/test_stream.c: the 2-byte length framing of packets on TCP (proto/stream.h), as
 * openvpn 2.6 socket.c reads it: a length of 0 or above the buffer ends the stream. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "proto/errors.h"
#include "proto/packet.h"
#include "proto/stream.h"

static void two_packets_then_half(void **state)
{
    static const uint8_t wire[] = {0, 3, 'a', 'b', 'c', 0, 1, 'd', 0, 4, 'e', 'f'};
    const uint8_t *pkt;
    size_t pkt_len, used, off = 0;

    (void)state;
    assert_int_equal(stream_next(wire, sizeof(wire), 2048, &pkt, &pkt_len, &used), 0);
    assert_int_equal(pkt_len, 3);
    assert_memory_equal(pkt, "abc", 3);
    assert_int_equal(used, 5);
    off += used;
    assert_int_equal(stream_next(wire + off, sizeof(wire) - off, 2048, &pkt, &pkt_len, &used), 0);
    assert_int_equal(pkt_len, 1);
    assert_int_equal(pkt[0], 'd');
    off += used;
    /* 4 announced, 2 there: wait for more */
    assert_int_equal(stream_next(wire + off, sizeof(wire) - off, 2048, &pkt, &pkt_len, &used),
                     -PE_SHORT);
    /* one byte of a header */
    assert_int_equal(stream_next(wire, 1, 2048, &pkt, &pkt_len, &used), -PE_SHORT);
    assert_int_equal(stream_next(wire, 0, 2048, &pkt, &pkt_len, &used), -PE_SHORT);
}

static void bad_lengths_end_the_stream(void **state)
{
    static const uint8_t zero[] = {0, 0, 1, 2};
    static const uint8_t big[] = {0xFF, 0xFF};
    static const uint8_t just_over[] = {0x08, 0x01}; /* 2049 */
    const uint8_t *pkt;
    size_t pkt_len, used;

    (void)state;
    assert_int_equal(stream_next(zero, sizeof(zero), 2048, &pkt, &pkt_len, &used), -PE_MALFORMED);
    /* refused from the header alone: nobody waits for 64 KiB that will never be taken */
    assert_int_equal(stream_next(big, sizeof(big), 2048, &pkt, &pkt_len, &used), -PE_MALFORMED);
    assert_int_equal(stream_next(just_over, sizeof(just_over), 2048, &pkt, &pkt_len, &used),
                     -PE_MALFORMED);
    assert_int_equal(stream_next(just_over, sizeof(just_over), 2049, &pkt, &pkt_len, &used),
                     -PE_SHORT);
}

static void length_header(void **state)
{
    uint8_t hdr[STREAM_LEN_HDR] = {9, 9};

    (void)state;
    assert_int_equal(stream_put_len(hdr, 0x1234), 0);
    assert_int_equal(hdr[0], 0x12);
    assert_int_equal(hdr[1], 0x34);
    assert_int_equal(stream_put_len(hdr, 0), -PE_MALFORMED);
    assert_int_equal(stream_put_len(hdr, 65536), -PE_MALFORMED);
    assert_int_equal(hdr[0], 0x12);
    assert_int_equal(stream_put_len(hdr, 65535), 0);
    assert_int_equal(hdr[0], 0xFF);
}

static void port_share_first_bytes(void **state)
{
    static const uint8_t reset_v2[] = {0, 14, P_CONTROL_HARD_RESET_CLIENT_V2 << 3, 1, 2};
    static const uint8_t reset_v2_tls_crypt[] = {0, 66, P_CONTROL_HARD_RESET_CLIENT_V2 << 3};
    static const uint8_t reset_v2_short[] = {0, 13, P_CONTROL_HARD_RESET_CLIENT_V2 << 3};
    static const uint8_t reset_v2_long[] = {1, 0, P_CONTROL_HARD_RESET_CLIENT_V2 << 3};
    static const uint8_t reset_v3[] = {0x01, 0x50, P_CONTROL_HARD_RESET_CLIENT_V3 << 3};
    static const uint8_t reset_v3_short[] = {0, 255, P_CONTROL_HARD_RESET_CLIENT_V3 << 3};
    static const uint8_t control_v1[] = {0, 40, P_CONTROL_V1 << 3};
    static const char http[] = "GET / HTTP/1.1\r\n";
    static const uint8_t tls_hello[] = {0x16, 0x03, 0x01, 0x02, 0x00};

    (void)state;
    assert_int_equal(stream_is_openvpn_start(reset_v2, sizeof(reset_v2)), 1);
    assert_int_equal(stream_is_openvpn_start(reset_v2_tls_crypt, 3), 1);
    assert_int_equal(stream_is_openvpn_start(reset_v3, 3), 1);
    assert_int_equal(stream_is_openvpn_start(reset_v2_short, 3), 0);
    assert_int_equal(stream_is_openvpn_start(reset_v2_long, 3), 0);
    assert_int_equal(stream_is_openvpn_start(reset_v3_short, 3), 0);
    assert_int_equal(stream_is_openvpn_start(control_v1, 3), 0);
    assert_int_equal(stream_is_openvpn_start((const uint8_t *)http, strlen(http)), 0);
    assert_int_equal(stream_is_openvpn_start(tls_hello, sizeof(tls_hello)), 0);
    assert_int_equal(stream_is_openvpn_start(reset_v2, 2), -1);
    assert_int_equal(stream_is_openvpn_start(reset_v2, 0), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_packets_then_half),
        cmocka_unit_test(bad_lengths_end_the_stream),
        cmocka_unit_test(length_header),
        cmocka_unit_test(port_share_first_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
