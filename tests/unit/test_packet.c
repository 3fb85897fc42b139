/* tests/unit/test_packet.c: control packet codec against the captured 2.6.14 layouts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "proto/errors.h"
#include "proto/packet.h"

/* The server's answer to a client reset, unwrapped (protocol doc 1.5, captured from 2.6.14):
 * 40 | f3969a5d5d8aa931 | 01 00000000 b37187ee32c2744d | 00000000 */
static const uint8_t server_reset[] = {
    0x40, 0xf3, 0x96, 0x9a, 0x5d, 0x5d, 0x8a, 0xa9, 0x31, 0x01, 0x00, 0x00, 0x00,
    0x00, 0xb3, 0x71, 0x87, 0xee, 0x32, 0xc2, 0x74, 0x4d, 0x00, 0x00, 0x00, 0x00,
};

static void parses_captured_server_reset(void **state)
{
    static const uint8_t own[8] = {0xf3, 0x96, 0x9a, 0x5d, 0x5d, 0x8a, 0xa9, 0x31};
    static const uint8_t remote[8] = {0xb3, 0x71, 0x87, 0xee, 0x32, 0xc2, 0x74, 0x4d};
    struct control_packet p;

    (void)state;
    assert_int_equal(control_packet_parse(server_reset, sizeof(server_reset), &p), 0);
    assert_int_equal(p.opcode, P_CONTROL_HARD_RESET_SERVER_V2);
    assert_int_equal(p.key_id, 0);
    assert_memory_equal(p.session_id, own, 8);
    assert_int_equal(p.acks.n_acks, 1);
    assert_int_equal(p.acks.message_id[0], 0);
    assert_memory_equal(p.acks.remote_session_id, remote, 8);
    assert_true(p.has_message_id);
    assert_int_equal(p.message_id, 0);
    assert_int_equal(p.payload_len, 0);
}

static void write_reproduces_capture(void **state)
{
    struct control_packet p;
    uint8_t out[64];
    size_t len;

    (void)state;
    assert_int_equal(control_packet_parse(server_reset, sizeof(server_reset), &p), 0);
    assert_int_equal(control_packet_write(&p, out, sizeof(out), &len), 0);
    assert_int_equal(len, sizeof(server_reset));
    assert_memory_equal(out, server_reset, len);
    assert_int_equal(control_packet_header_len(1, true), sizeof(server_reset));
    /* One byte short of room. */
    assert_int_equal(control_packet_write(&p, out, len - 1, &len), -PE_NOSPACE);
}

static void every_truncation_is_rejected(void **state)
{
    struct control_packet p;

    (void)state;
    for (size_t n = 0; n < sizeof(server_reset); n++) {
        assert_int_equal(control_packet_parse(server_reset, n, &p), -PE_SHORT);
    }
}

static void more_than_eight_acks_is_malformed(void **state)
{
    uint8_t pkt[64] = {0x20, 1, 2, 3, 4, 5, 6, 7, 8, CONTROL_MAX_ACKS + 1};
    struct control_packet p;

    (void)state;
    assert_int_equal(control_packet_parse(pkt, sizeof(pkt), &p), -PE_MALFORMED);
}

static void zero_session_id_is_malformed(void **state)
{
    uint8_t pkt[14] = {0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    struct control_packet p;

    (void)state;
    assert_int_equal(control_packet_parse(pkt, sizeof(pkt), &p), -PE_MALFORMED);
}

static void ack_packet_rules(void **state)
{
    /* P_ACK_V1 with one ACK: valid; with trailing bytes or without ACKs: malformed. */
    uint8_t ack[] = {0x28, 1, 2, 3, 4, 5, 6, 7, 8, 1, 0, 0, 0, 7, 9, 9, 9, 9, 9, 9, 9, 9, 0xee};
    uint8_t empty[] = {0x28, 1, 2, 3, 4, 5, 6, 7, 8, 0};
    struct control_packet p;

    (void)state;
    assert_int_equal(control_packet_parse(ack, sizeof(ack) - 1, &p), 0);
    assert_false(p.has_message_id);
    assert_int_equal(p.acks.message_id[0], 7);
    assert_int_equal(control_packet_parse(ack, sizeof(ack), &p), -PE_MALFORMED);
    assert_int_equal(control_packet_parse(empty, sizeof(empty), &p), -PE_MALFORMED);
}

static void data_opcodes_are_not_control(void **state)
{
    uint8_t pkt[32] = {0x48, 0, 0, 1};
    struct control_packet p;

    (void)state;
    assert_true(packet_is_data(P_DATA_V2));
    assert_false(packet_is_control(P_DATA_V2));
    assert_false(packet_is_control(P_CONTROL_HARD_RESET_CLIENT_V1));
    assert_true(packet_is_control(P_CONTROL_WKC_V1));
    assert_int_equal(control_packet_parse(pkt, sizeof(pkt), &p), -PE_MALFORMED);
    assert_int_equal(packet_byte0(P_CONTROL_SOFT_RESET_V1, 3), 0x1b);
    assert_int_equal(packet_opcode(0x4a), P_DATA_V2);
    assert_int_equal(packet_key_id(0x4a), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_captured_server_reset),
        cmocka_unit_test(write_reproduces_capture),
        cmocka_unit_test(every_truncation_is_rejected),
        cmocka_unit_test(more_than_eight_acks_is_malformed),
        cmocka_unit_test(zero_session_id_is_malformed),
        cmocka_unit_test(ack_packet_rules),
        cmocka_unit_test(data_opcodes_are_not_control),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
