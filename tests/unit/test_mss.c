/* tests/unit/test_mss.c: MSS clamping of TCP SYN packets (--mssfix). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "proto/mss.h"

/* Independent check: the full TCP checksum over the pseudo header, computed from scratch. */
static uint16_t tcp_checksum(const uint8_t *ip, size_t len)
{
    size_t ihl = (size_t)(ip[0] & 0x0F) * 4, tcp_len = len - ihl;
    uint32_t sum = 0;

    for (int i = 12; i < 20; i += 2) {
        sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
    }
    sum += 6 + (uint32_t)tcp_len;
    for (size_t i = 0; i < tcp_len; i += 2) {
        uint16_t w = (uint16_t)(ip[ihl + i] << 8);

        if (i + 1 < tcp_len) {
            w |= ip[ihl + i + 1];
        }
        if (i != 16) { /* the checksum field itself counts as zero */
            sum += w;
        }
    }
    while (sum >> 16) {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    return (uint16_t)~sum;
}

/* A SYN from 198.19.0.2:40000 to 198.19.0.1:80 with NOP, NOP, MSS 1460, SACK-permitted. */
static size_t make_syn(uint8_t *p, uint16_t mss, uint8_t flags)
{
    static const uint8_t ip[20] = {0x45, 0, 0,   48, 0x12, 0x34, 0x40, 0,  64, 6,
                                   0,    0, 198, 19, 0,    2,    198,  19, 0,  1};
    uint8_t *t = p + 20;
    uint16_t c;

    memset(p, 0, 48);
    memcpy(p, ip, 20);
    t[0] = 0x9c;
    t[1] = 0x40; /* 40000 */
    t[3] = 80;
    t[12] = 7 << 4; /* 28-byte header */
    t[13] = flags;
    t[14] = 0xff;
    t[20] = 1;
    t[21] = 1;
    t[22] = 2;
    t[23] = 4;
    t[24] = (uint8_t)(mss >> 8);
    t[25] = (uint8_t)mss;
    t[26] = 4;
    t[27] = 2;
    c = tcp_checksum(p, 48);
    t[16] = (uint8_t)(c >> 8);
    t[17] = (uint8_t)c;
    return 48;
}

static void clamps_syn_and_keeps_checksum_valid(void **state)
{
    uint8_t p[48];
    size_t len = make_syn(p, 1460, 0x02);

    (void)state;
    assert_int_equal(mss_clamp_ipv4(p, len, 1400), 1);
    assert_int_equal(p[20 + 24] << 8 | p[20 + 25], 1400);
    assert_int_equal(p[20 + 16] << 8 | p[20 + 17], tcp_checksum(p, len));
}

static void leaves_smaller_mss_and_non_syn_alone(void **state)
{
    uint8_t p[48], before[48];
    size_t len = make_syn(p, 1300, 0x12);

    (void)state;
    memcpy(before, p, len);
    assert_int_equal(mss_clamp_ipv4(p, len, 1400), 0);
    assert_memory_equal(p, before, len);
    len = make_syn(p, 1460, 0x10); /* ACK only */
    memcpy(before, p, len);
    assert_int_equal(mss_clamp_ipv4(p, len, 1400), 0);
    assert_memory_equal(p, before, len);
}

static void truncated_and_malformed_are_untouched(void **state)
{
    uint8_t p[48], before[48];
    size_t len = make_syn(p, 1460, 0x02);

    (void)state;
    memcpy(before, p, len);
    for (size_t n = 0; n < len; n++) {
        assert_int_equal(mss_clamp_ipv4(p, n, 1400), 0);
    }
    p[20 + 21] = 0; /* option length 0 would loop forever if trusted */
    assert_int_equal(mss_clamp_ipv4(p, len, 1400), 0);
    memcpy(p, before, len);
    p[20 + 12] = 15 << 4; /* data offset beyond the packet */
    assert_int_equal(mss_clamp_ipv4(p, len, 1400), 0);
}

/* IPv6: the TCP checksum over the IPv6 pseudo header (RFC 8200 section 8.1), from scratch. */
static uint16_t tcp6_checksum(const uint8_t *ip, size_t len)
{
    size_t tcp_len = len - 40;
    uint32_t sum = 0;

    for (int i = 8; i < 40; i += 2) {
        sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
    }
    sum += (uint32_t)tcp_len + 6;
    for (size_t i = 0; i < tcp_len; i += 2) {
        uint16_t w = (uint16_t)(ip[40 + i] << 8 | (i + 1 < tcp_len ? ip[40 + i + 1] : 0));

        if (i != 16) {
            sum += w;
        }
    }
    while (sum >> 16) {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    return (uint16_t)~sum;
}

/* An IPv6 SYN from 2001:2:0:19::1000 to 2001:2:0:19::1 (RFC 5180 range), MSS 1440. */
static void clamps_ipv6_syn(void **state)
{
    uint8_t p[68], v4[48];
    uint16_t c;

    (void)state;
    memset(p, 0, sizeof(p));
    p[0] = 0x60;
    p[5] = 28; /* payload length */
    p[6] = 6;  /* next header: TCP */
    p[7] = 64;
    static const uint8_t src[16] = {0x20, 1, 0, 2, 0, 0, 0, 0x19, 0, 0, 0, 0, 0, 0, 0x10, 0};
    static const uint8_t dst[16] = {0x20, 1, 0, 2, 0, 0, 0, 0x19, 0, 0, 0, 0, 0, 0, 0, 1};
    memcpy(p + 8, src, 16);
    memcpy(p + 24, dst, 16);
    make_syn(v4, 1440, 0x02);
    memcpy(p + 40, v4 + 20, 28); /* the same TCP header, checksum redone below */
    c = tcp6_checksum(p, sizeof(p));
    p[40 + 16] = (uint8_t)(c >> 8);
    p[40 + 17] = (uint8_t)c;

    /* mssfix gives 1400 for IPv4: IPv6 gets 20 less (its header is 20 bytes longer). */
    assert_int_equal(mss_clamp_ipv6(p, sizeof(p), 1400), 1);
    assert_int_equal(p[40 + 24] << 8 | p[40 + 25], 1380);
    assert_int_equal(p[40 + 16] << 8 | p[40 + 17], tcp6_checksum(p, sizeof(p)));
    assert_int_equal(mss_clamp_ipv6(p, sizeof(p), 1400), 0); /* already small enough */
    assert_int_equal(mss_clamp_ipv4(p, sizeof(p), 1000), 0); /* not IPv4 */
    p[6] = 0; /* a hop-by-hop extension header first: left alone */
    assert_int_equal(mss_clamp_ipv6(p, sizeof(p), 1000), 0);
    p[6] = 6;
    assert_int_equal(mss_clamp_ipv6(p, 50, 1000), 0); /* truncated TCP header */
}

/* A client's frame as 2.6 counts it (mtu.c): AES-GCM, P_DATA_V2, UDP over IPv4. */
static struct mss_frame gcm_udp4(void)
{
    struct mss_frame f = {.transport_len = 28, .header_len = 4, .crypto_len = 20};

    return f;
}

static void limits_match_openvpn(void **state)
{
    struct mss_frame f = gcm_udp4();

    (void)state;
    /* 2.6 default mssfix 1492 (mtu) with AES-GCM and P_DATA_V2 (4 + 4 + 16 bytes): the stock
     * client logs "mss_fix:1400". */
    assert_int_equal(mss_max_for(1492, MSS_MODE_MTU, &f), 1400);
    assert_int_equal(mss_max_for(1450, MSS_MODE_PAYLOAD, &f), 1386);
    assert_int_equal(mss_max_for(1300, MSS_MODE_FIXED, &f), 1260);
    assert_int_equal(mss_max_for(0, MSS_MODE_MTU, &f), 0);
    /* over IPv6: 20 bytes more of outer header */
    f.transport_len = 48;
    assert_int_equal(mss_max_for(1492, MSS_MODE_MTU, &f), 1380);
    assert_int_equal(mss_max_for(1450, MSS_MODE_PAYLOAD, &f), 1386); /* outer not counted */
    /* over TCP/IPv4: the TCP header and the 2-byte packet length */
    f = gcm_udp4();
    f.transport_len = 40;
    f.header_len = 6;
    assert_int_equal(mss_max_for(1492, MSS_MODE_MTU, &f), 1386);
    /* an old client without peer-id (P_DATA_V1: 1 byte), and `compress lz4` (1 byte) */
    f = gcm_udp4();
    f.header_len = 1;
    f.payload_len = 1;
    assert_int_equal(mss_max_for(1492, MSS_MODE_MTU, &f), 1402);
    /* AES-256-CBC with SHA256: IV 16 + HMAC 32 outside, the packet id inside; 1492 - 28 - 4 -
     * 48 = 1412, whole blocks 1408, one byte of padding 1407, minus 4 and 40 */
    f = gcm_udp4();
    f.crypto_len = 48;
    f.cbc_block = 16;
    f.payload_len = 4;
    assert_int_equal(mss_max_for(1492, MSS_MODE_MTU, &f), 1363);
    /* `fragment` adds its 4-byte header inside */
    f = gcm_udp4();
    f.payload_len = 4;
    assert_int_equal(mss_max_for(1492, MSS_MODE_MTU, &f), 1396);
    assert_int_equal(mss_max_for(100, MSS_MODE_MTU, &f), 64); /* never silly */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clamps_syn_and_keeps_checksum_valid),
        cmocka_unit_test(leaves_smaller_mss_and_non_syn_alone),
        cmocka_unit_test(truncated_and_malformed_are_untouched),
        cmocka_unit_test(limits_match_openvpn),
        cmocka_unit_test(clamps_ipv6_syn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
