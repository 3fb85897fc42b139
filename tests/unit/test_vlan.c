/* tests/unit/test_vlan.c: 802.1Q tags of a tap server's frames (proto/vlan.h), the rules of
 * openvpn 2.6 vlan.c and multi.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "proto/vlan.h"

static const uint8_t dst[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
static const uint8_t src[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};

/* An IPv4 frame: untagged (tci < 0) or with a tag whose control information is tci; 20 bytes
 * of payload 0xA0.. after the header. Returns its length. */
static size_t frame(uint8_t *f, int tci)
{
    size_t off = 12;

    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    if (tci >= 0) {
        f[off++] = 0x81;
        f[off++] = 0x00;
        f[off++] = (uint8_t)(tci >> 8);
        f[off++] = (uint8_t)tci;
    }
    f[off++] = 0x08;
    f[off++] = 0x00;
    for (int i = 0; i < 20; i++) {
        f[off++] = (uint8_t)(0xA0 + i);
    }
    return off;
}

static void reads_the_vid(void **state)
{
    uint8_t f[64];
    size_t n;

    (void)state;
    n = frame(f, -1);
    assert_int_equal(vlan_frame_vid(f, n), -1);
    n = frame(f, 0xE000 | 10); /* priority 7 */
    assert_int_equal(vlan_frame_vid(f, n), 10);
    n = frame(f, 0xA000); /* priority only */
    assert_int_equal(vlan_frame_vid(f, n), 0);
    assert_int_equal(vlan_frame_vid(f, 17), -1); /* too short for the tag */
    n = frame(f, 4095);
    assert_int_equal(vlan_frame_vid(f, n), 4095);
}

/* A frame from the device, in each vlan-accept mode (server vlan-pvid 1). */
static void from_device(void **state)
{
    uint8_t f[64], plain[64];
    size_t n, plain_n, strip;

    (void)state;
    plain_n = frame(plain, -1);

    /* untagged: the server's vlan-pvid, except with vlan-accept tagged */
    n = frame(f, -1);
    assert_int_equal(vlan_from_device(f, n, VLAN_ACCEPT_ALL, 1, &strip), 1);
    assert_int_equal(strip, 0);
    assert_int_equal(vlan_from_device(f, n, VLAN_ACCEPT_UNTAGGED, 7, &strip), 7);
    assert_int_equal(vlan_from_device(f, n, VLAN_ACCEPT_TAGGED, 1, &strip), -1);
    assert_memory_equal(f, plain, plain_n);

    /* tagged: the tag goes (priority with it) and the frame is its VID's; dropped with
     * vlan-accept untagged */
    n = frame(f, 0xE000 | 20);
    assert_int_equal(vlan_from_device(f, n, VLAN_ACCEPT_UNTAGGED, 1, &strip), -1);
    assert_int_equal(strip, 0);
    assert_int_equal(vlan_from_device(f, n, VLAN_ACCEPT_ALL, 1, &strip), 20);
    assert_int_equal(strip, VLAN_TAG_LEN);
    assert_int_equal(n - strip, plain_n);
    assert_memory_equal(f + strip, plain, plain_n);
    n = frame(f, 30);
    assert_int_equal(vlan_from_device(f, n, VLAN_ACCEPT_TAGGED, 1, &strip), 30);
    assert_memory_equal(f + strip, plain, plain_n);

    /* priority-tagged: the server's vlan-pvid, the tag kept, in every mode */
    for (int a = VLAN_ACCEPT_ALL; a <= VLAN_ACCEPT_UNTAGGED; a++) {
        uint8_t copy[64];

        n = frame(f, 0x6000);
        memcpy(copy, f, n);
        assert_int_equal(vlan_from_device(f, n, (enum vlan_accept)a, 5, &strip), 5);
        assert_int_equal(strip, 0);
        assert_memory_equal(f, copy, n);
    }

    /* shorter than a header */
    assert_int_equal(vlan_from_device(f, 13, VLAN_ACCEPT_ALL, 1, &strip), -1);
    n = frame(f, 20);
    assert_int_equal(vlan_from_device(f, 16, VLAN_ACCEPT_ALL, 1, &strip), -1);
}

static void from_client(void **state)
{
    uint8_t f[64];
    size_t n;

    (void)state;
    n = frame(f, -1);
    assert_true(vlan_client_frame_ok(f, n));
    n = frame(f, 0xE000); /* priority-tagged */
    assert_true(vlan_client_frame_ok(f, n));
    n = frame(f, 10); /* a VID: dropped, whatever it is */
    assert_false(vlan_client_frame_ok(f, n));
}

static void to_device(void **state)
{
    (void)state;
    /* all: untagged in the server's own VLAN, tagged in any other */
    assert_int_equal(vlan_to_device(VLAN_ACCEPT_ALL, 1, 1), VLAN_OUT_AS_IS);
    assert_int_equal(vlan_to_device(VLAN_ACCEPT_ALL, 1, 10), VLAN_OUT_TAG);
    /* tagged: always tagged */
    assert_int_equal(vlan_to_device(VLAN_ACCEPT_TAGGED, 1, 1), VLAN_OUT_TAG);
    assert_int_equal(vlan_to_device(VLAN_ACCEPT_TAGGED, 1, 10), VLAN_OUT_TAG);
    /* untagged: only the server's own VLAN, untagged */
    assert_int_equal(vlan_to_device(VLAN_ACCEPT_UNTAGGED, 10, 10), VLAN_OUT_AS_IS);
    assert_int_equal(vlan_to_device(VLAN_ACCEPT_UNTAGGED, 1, 10), VLAN_OUT_DROP);
}

static void tags(void **state)
{
    uint8_t f[64], hdr[VLAN_TAGGED_LEN];
    size_t n, used;
    static const uint8_t want_untagged[VLAN_TAGGED_LEN] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
                                                           0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
                                                           0x81, 0x00, 0x00, 0x0A, 0x08, 0x00};

    (void)state;
    /* untagged: priority 0, DEI 0, the VID; the rest follows unchanged */
    n = frame(f, -1);
    used = vlan_tag_header(f, n, 10, hdr);
    assert_int_equal(used, VLAN_ETH_LEN);
    assert_memory_equal(hdr, want_untagged, sizeof(hdr));
    assert_int_equal(f[used], 0xA0);

    /* priority-tagged: priority and DEI kept, the VID set */
    n = frame(f, 0xB000); /* priority 5, DEI 1 */
    used = vlan_tag_header(f, n, 4094, hdr);
    assert_int_equal(used, VLAN_TAGGED_LEN);
    assert_int_equal(hdr[14], 0xBF);
    assert_int_equal(hdr[15], 0xFE);
    assert_int_equal(hdr[16], 0x08);
    assert_int_equal(f[used], 0xA0);

    /* tagged with a VID already, or too short: not tagged */
    n = frame(f, 20);
    assert_int_equal(vlan_tag_header(f, n, 10, hdr), 0);
    assert_int_equal(vlan_tag_header(f, 13, 10, hdr), 0);
    n = frame(f, 0x2000);
    assert_int_equal(vlan_tag_header(f, 17, 10, hdr), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_the_vid), cmocka_unit_test(from_device),
        cmocka_unit_test(from_client),   cmocka_unit_test(to_device),
        cmocka_unit_test(tags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
