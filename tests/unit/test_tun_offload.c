/* tests/unit/test_tun_offload.c: TCP segmentation, checksum completion and coalescing for the
 * TUN device's offloads (proto/tun_offload.c), checked against checksums computed here byte by
 * byte in network order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/errors.h"
#include "proto/tun_offload.h"

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_PSH 0x08
#define TCP_ACK 0x10
#define TCP_CWR 0x80

static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, (uint16_t)(v >> 16));
    put16(p + 2, (uint16_t)v);
}

/* Sum of big-endian 16-bit words, odd length padded: RFC 1071 done the slow way. */
static uint32_t sum_be(uint32_t sum, const uint8_t *p, size_t len)
{
    for (size_t i = 0; i < len; i += 2) {
        sum += (uint32_t)(p[i] << 8) | (i + 1 < len ? p[i + 1] : 0);
    }
    return sum;
}

static uint16_t fold(uint32_t sum)
{
    while (sum >> 16) {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    return (uint16_t)sum;
}

static size_t ip_hdr_len_of(const uint8_t *ip)
{
    return (ip[0] >> 4) == 4 ? (size_t)(ip[0] & 0x0F) * 4 : 40;
}

/* The pseudo-header sum for an L4 segment of l4_len bytes with protocol proto. */
static uint32_t pseudo(const uint8_t *ip, size_t l4_len, uint8_t proto)
{
    if ((ip[0] >> 4) == 4) {
        return sum_be(0, ip + 12, 8) + proto + (uint32_t)l4_len;
    }
    return sum_be(0, ip + 8, 32) + proto + (uint32_t)l4_len;
}

/* Whether the TCP checksum of a whole IP packet verifies. */
static int tcp_csum_ok(const uint8_t *ip, size_t len)
{
    size_t iphl = ip_hdr_len_of(ip);

    return fold(sum_be(pseudo(ip, len - iphl, 6), ip + iphl, len - iphl)) == 0xFFFF;
}

static int ipv4_hdr_csum_ok(const uint8_t *ip)
{
    return fold(sum_be(0, ip, ip_hdr_len_of(ip))) == 0xFFFF;
}

static uint8_t payload_byte(size_t i)
{
    return (uint8_t)(i * 7 + 3);
}

/* A TCP packet 198.19.0.2:40000 -> 198.19.0.1:5201 (or 2001:2::2 -> 2001:2::1) with a 12-byte
 * timestamp option, sequence seq, ack 1000, flags, and n payload bytes starting at pattern
 * index from. Checksums are set. Returns the length. */
static size_t make_tcp(uint8_t *p, int family, uint32_t seq, uint8_t flags, size_t from, size_t n)
{
    size_t iphl = family == 4 ? 20 : 40, thl = 32, len = iphl + thl + n;
    uint8_t *t = p + iphl;

    memset(p, 0, iphl + thl);
    if (family == 4) {
        static const uint8_t ip[20] = {0x45, 0, 0,   0,  0x12, 0x34, 0x40, 0,  64, 6,
                                       0,    0, 198, 19, 0,    2,    198,  19, 0,  1};

        memcpy(p, ip, 20);
        put16(p + 2, (uint16_t)len);
        put16(p + 10, (uint16_t)~fold(sum_be(0, p, 20)));
    } else {
        p[0] = 0x60;
        put16(p + 4, (uint16_t)(thl + n));
        p[6] = 6;
        p[7] = 64;
        p[8] = 0x20;
        p[9] = 0x01;
        p[10] = 0x00;
        p[11] = 0x02;
        p[23] = 2;
        memcpy(p + 24, p + 8, 16);
        p[39] = 1;
    }
    put16(t, 40000);
    put16(t + 2, 5201);
    put32(t + 4, seq);
    put32(t + 8, 1000);
    t[12] = (uint8_t)((thl / 4) << 4);
    t[13] = flags;
    put16(t + 14, 512);
    t[20] = 1;
    t[21] = 1;
    t[22] = 8;
    t[23] = 10;
    put32(t + 24, 77);
    put32(t + 28, 66);
    for (size_t i = 0; i < n; i++) {
        t[thl + i] = payload_byte(from + i);
    }
    put16(t + 16, (uint16_t)~fold(sum_be(pseudo(p, thl + n, 6), t, thl + n)));
    return len;
}

static void test_csum_rfc1071_example(void **state)
{
    /* RFC 1071 section 3: 00 01 f2 03 f4 f5 f6 f7 sums to dd f2. */
    static const uint8_t data[8] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    uint16_t s = inet_csum_fold(inet_csum_add(0, data, sizeof(data)));
    uint8_t out[2];

    (void)state;
    memcpy(out, &s, 2);
    assert_int_equal(out[0], 0xdd);
    assert_int_equal(out[1], 0xf2);
    /* Odd length: the last byte is padded with zero. */
    s = inet_csum_fold(inet_csum_add(0, data, 7));
    memcpy(out, &s, 2);
    assert_int_equal(be16(out), fold(sum_be(0, data, 7)));
}

static void check_segments(int family, size_t payload, uint16_t mss, uint8_t flags)
{
    static uint8_t big[70000], seg[2048];
    size_t len = make_tcp(big, family, 0xFFFFF000u, flags, 0, payload), seg_len, got = 0;
    size_t iphl = family == 4 ? 20 : 40, n_expected = (payload + mss - 1) / mss;
    struct vnet_hdr h = {.gso_type = family == 4 ? VNET_GSO_TCPV4 : VNET_GSO_TCPV6,
                         .gso_size = mss,
                         .hdr_len = (uint16_t)(iphl + 32)};
    struct tso_iter it;
    unsigned i = 0;
    int rc;

    assert_int_equal(tso_begin(&it, big, len, &h), 0);
    while ((rc = tso_next(&it, seg, sizeof(seg), &seg_len)) == 1) {
        const uint8_t *t = seg + iphl;
        size_t chunk = seg_len - iphl - 32;
        bool is_last = i + 1 == n_expected;

        assert_true(i < n_expected);
        assert_int_equal(chunk, is_last ? payload - (n_expected - 1) * mss : mss);
        if (family == 4) {
            assert_int_equal(be16(seg + 2), seg_len);
            assert_int_equal(be16(seg + 4), (uint16_t)(0x1234 + i));
            assert_true(ipv4_hdr_csum_ok(seg));
        } else {
            assert_int_equal(be16(seg + 4), seg_len - 40);
        }
        assert_true(tcp_csum_ok(seg, seg_len));
        assert_int_equal(be32(t + 4), (uint32_t)(0xFFFFF000u + got)); /* wraps past 2^32 */
        assert_int_equal(be32(t + 8), 1000);
        assert_int_equal(t[13] & TCP_PSH, is_last ? flags & TCP_PSH : 0);
        assert_int_equal(t[13] & TCP_FIN, is_last ? flags & TCP_FIN : 0);
        assert_int_equal(t[13] & TCP_CWR, i == 0 ? flags & TCP_CWR : 0);
        assert_int_equal(t[13] & TCP_ACK, TCP_ACK);
        assert_memory_equal(t + 20, big + iphl + 20, 12); /* options copied */
        for (size_t k = 0; k < chunk; k++) {
            assert_int_equal(t[32 + k], payload_byte(got + k));
        }
        got += chunk;
        i++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(i, n_expected);
    assert_int_equal(got, payload);
}

static void test_tso_ipv4(void **state)
{
    (void)state;
    check_segments(4, 3500, 1448, TCP_ACK | TCP_PSH | TCP_CWR);
    check_segments(4, 65535 - 52, 1300, TCP_ACK | TCP_FIN);
    check_segments(4, 1448 * 3, 1448, TCP_ACK); /* exact multiple: no short tail */
    check_segments(4, 1, 1448, TCP_ACK);
}

static void test_tso_ipv6(void **state)
{
    (void)state;
    check_segments(6, 5000, 1428, TCP_ACK | TCP_PSH);
    check_segments(6, 7, 1428, TCP_ACK);
}

static void test_tso_refuses(void **state)
{
    static uint8_t pkt[4000], seg[2048];
    size_t len = make_tcp(pkt, 4, 1, TCP_ACK, 0, 3000), seg_len;
    struct vnet_hdr h = {.gso_type = VNET_GSO_TCPV4, .gso_size = 1448};
    struct tso_iter it;

    (void)state;
    h.gso_type = 3; /* UFO */
    assert_int_equal(tso_begin(&it, pkt, len, &h), -PE_UNSUPPORTED);
    h.gso_type = VNET_GSO_TCPV6; /* says IPv6, is IPv4 */
    assert_int_equal(tso_begin(&it, pkt, len, &h), -PE_MALFORMED);
    h.gso_type = VNET_GSO_TCPV4;
    h.gso_size = 0;
    assert_int_equal(tso_begin(&it, pkt, len, &h), -PE_MALFORMED);
    h.gso_size = 1448;
    assert_int_equal(tso_begin(&it, pkt, len - 1, &h), -PE_MALFORMED); /* length mismatch */
    assert_int_equal(tso_begin(&it, pkt, 30, &h), -PE_MALFORMED);
    pkt[9] = 17; /* UDP */
    assert_int_equal(tso_begin(&it, pkt, len, &h), -PE_MALFORMED);
    pkt[9] = 6;
    pkt[6] |= 0x20; /* more fragments: TSO never makes a fragment */
    assert_int_equal(tso_begin(&it, pkt, len, &h), -PE_MALFORMED);
    pkt[6] &= (uint8_t)~0x20;
    assert_int_equal(tso_begin(&it, pkt, len, &h), 0);
    assert_int_equal(tso_next(&it, seg, 100, &seg_len), -PE_NOSPACE);
    len = make_tcp(pkt, 4, 1, TCP_ACK, 0, 0); /* headers only */
    assert_int_equal(tso_begin(&it, pkt, len, &h), -PE_MALFORMED);
    /* IPv6 with a hop-by-hop header in front of TCP is left to the kernel. */
    len = make_tcp(pkt, 6, 1, TCP_ACK, 0, 3000);
    pkt[6] = 0;
    h.gso_type = VNET_GSO_TCPV6;
    assert_int_equal(tso_begin(&it, pkt, len, &h), -PE_UNSUPPORTED);
}

static void test_csum_complete(void **state)
{
    /* A UDP datagram 198.19.0.2:5000 -> 198.19.0.1:5201 whose checksum field holds the
     * pseudo-header sum, as the kernel hands it over with NEEDS_CSUM. */
    uint8_t p[20 + 8 + 333];
    struct vnet_hdr h = {.flags = VNET_F_NEEDS_CSUM, .csum_start = 20, .csum_offset = 6};
    size_t len = sizeof(p);

    (void)state;
    memset(p, 0, sizeof(p));
    p[0] = 0x45;
    put16(p + 2, (uint16_t)len);
    p[8] = 64;
    p[9] = 17;
    p[12] = 198;
    p[13] = 19;
    p[15] = 2;
    p[16] = 198;
    p[17] = 19;
    p[19] = 1;
    put16(p + 20, 5000);
    put16(p + 22, 5201);
    put16(p + 24, (uint16_t)(len - 20));
    for (size_t i = 28; i < len; i++) {
        p[i] = payload_byte(i);
    }
    put16(p + 26, fold(pseudo(p, len - 20, 17)));
    assert_int_equal(tun_offload_csum_complete(p, len, &h), 0);
    assert_int_equal(fold(sum_be(pseudo(p, len - 20, 17), p + 20, len - 20)), 0xFFFF);
    h.csum_offset = 400;
    assert_int_equal(tun_offload_csum_complete(p, len, &h), -PE_MALFORMED);
    h.csum_start = 60000;
    h.csum_offset = 6;
    assert_int_equal(tun_offload_csum_complete(p, len, &h), -PE_MALFORMED);
}

/* What tcp_gro emitted, in order. */
#define MAX_EMITTED 64
struct emitted {
    struct vnet_hdr h[MAX_EMITTED];
    uint8_t *pkt[MAX_EMITTED];
    size_t len[MAX_EMITTED];
    unsigned n;
};

static void collect(void *ctx, const struct vnet_hdr *h, const uint8_t *pkt, size_t len)
{
    struct emitted *e = ctx;

    assert_true(e->n < MAX_EMITTED);
    e->h[e->n] = *h;
    e->pkt[e->n] = malloc(len);
    assert_non_null(e->pkt[e->n]);
    memcpy(e->pkt[e->n], pkt, len);
    e->len[e->n++] = len;
}

static void emitted_free(struct emitted *e)
{
    for (unsigned i = 0; i < e->n; i++) {
        free(e->pkt[i]);
    }
    e->n = 0;
}

/* Feed segment k (mss bytes of payload, from byte k * mss) of a flow to g. */
static void feed(struct tcp_gro *g, int family, unsigned k, size_t mss, size_t n, uint8_t flags)
{
    uint8_t p[2048];
    size_t len = make_tcp(p, family, 5000 + (uint32_t)(k * mss), flags, k * mss, n);

    tcp_gro_add(g, p, len);
}

/* Check that e's packet i is a super-packet of segments [first, first + n_segs) of mss bytes
 * (the last one last_len bytes), and that it verifies once the kernel completes its checksum. */
static void check_merged(struct emitted *e, unsigned i, int family, unsigned first, unsigned n_segs,
                         size_t mss, size_t last_len)
{
    size_t iphl = family == 4 ? 20 : 40, payload = (n_segs - 1) * mss + last_len;
    uint8_t *p = e->pkt[i], *t = p + iphl;

    assert_true(i < e->n);
    assert_int_equal(e->len[i], iphl + 32 + payload);
    assert_int_equal(e->h[i].flags, VNET_F_NEEDS_CSUM);
    assert_int_equal(e->h[i].gso_type, family == 4 ? VNET_GSO_TCPV4 : VNET_GSO_TCPV6);
    assert_int_equal(e->h[i].gso_size, mss);
    assert_int_equal(e->h[i].hdr_len, iphl + 32);
    assert_int_equal(e->h[i].csum_start, iphl);
    assert_int_equal(e->h[i].csum_offset, 16);
    if (family == 4) {
        assert_int_equal(be16(p + 2), e->len[i]);
        assert_true(ipv4_hdr_csum_ok(p));
    } else {
        assert_int_equal(be16(p + 4), e->len[i] - 40);
    }
    assert_int_equal(be32(t + 4), 5000 + first * mss);
    /* The field holds the pseudo-header sum, as the kernel expects of a partial checksum. */
    assert_int_equal(be16(t + 16), fold(pseudo(p, e->len[i] - iphl, 6)));
    for (size_t k = 0; k < payload; k++) {
        assert_int_equal(t[32 + k], payload_byte(first * mss + k));
    }
    assert_int_equal(tun_offload_csum_complete(p, e->len[i], &e->h[i]), 0);
    assert_true(tcp_csum_ok(p, e->len[i]));
}

static void test_gro_merges_in_order_segments(void **state)
{
    struct emitted e = {0};
    struct tcp_gro g;

    (void)state;
    assert_int_equal(tcp_gro_init(&g, collect, &e), 0);
    for (unsigned k = 0; k < 10; k++) {
        feed(&g, 4, k, 1448, 1448, TCP_ACK);
    }
    assert_int_equal(e.n, 0); /* held until the flush */
    tcp_gro_flush(&g);
    assert_int_equal(e.n, 1);
    check_merged(&e, 0, 4, 0, 10, 1448, 1448);
    assert_int_equal(g.n_merged, 9);
    emitted_free(&e);

    /* IPv6, ending with a short segment carrying PSH; PSH lands on the super-packet. */
    for (unsigned k = 0; k < 4; k++) {
        feed(&g, 6, k, 1428, k == 3 ? 100 : 1428, k == 3 ? TCP_ACK | TCP_PSH : TCP_ACK);
    }
    tcp_gro_flush(&g);
    assert_int_equal(e.n, 1);
    check_merged(&e, 0, 6, 0, 4, 1428, 100);
    assert_int_equal(e.pkt[0][40 + 13], TCP_ACK | TCP_PSH);
    emitted_free(&e);
    tcp_gro_free(&g);
}

static void test_gro_keeps_flow_order(void **state)
{
    struct emitted e = {0};
    struct tcp_gro g;

    (void)state;
    assert_int_equal(tcp_gro_init(&g, collect, &e), 0);
    /* 0, 1, then 3 (a gap), then 2: nothing jumps ahead of what came before it. */
    feed(&g, 4, 0, 1448, 1448, TCP_ACK);
    feed(&g, 4, 1, 1448, 1448, TCP_ACK);
    feed(&g, 4, 3, 1448, 1448, TCP_ACK);
    feed(&g, 4, 2, 1448, 1448, TCP_ACK);
    tcp_gro_flush(&g);
    assert_int_equal(e.n, 3);
    check_merged(&e, 0, 4, 0, 2, 1448, 1448);
    assert_int_equal(e.h[1].gso_type, VNET_GSO_NONE);
    assert_int_equal(be32(e.pkt[1] + 24), 5000 + 3 * 1448);
    assert_true(tcp_csum_ok(e.pkt[1], e.len[1])); /* a lone segment leaves untouched */
    assert_int_equal(be32(e.pkt[2] + 24), 5000 + 2 * 1448);
    emitted_free(&e);

    /* A FIN goes out after the held data of its flow, not before. */
    feed(&g, 4, 0, 1448, 1448, TCP_ACK);
    feed(&g, 4, 1, 1448, 1448, TCP_ACK);
    feed(&g, 4, 2, 1448, 0, TCP_ACK | TCP_FIN);
    assert_int_equal(e.n, 2);
    check_merged(&e, 0, 4, 0, 2, 1448, 1448);
    assert_int_equal(e.pkt[1][33], TCP_ACK | TCP_FIN);
    tcp_gro_flush(&g);
    assert_int_equal(e.n, 2);
    emitted_free(&e);
    tcp_gro_free(&g);
}

static void test_gro_refuses_to_merge(void **state)
{
    uint8_t p[2048];
    struct emitted e = {0};
    struct tcp_gro g;
    size_t len;

    (void)state;
    assert_int_equal(tcp_gro_init(&g, collect, &e), 0);
    /* A different acknowledgment number. */
    feed(&g, 4, 0, 1448, 1448, TCP_ACK);
    len = make_tcp(p, 4, 5000 + 1448, TCP_ACK, 1448, 1448);
    put32(p + 28, 2000);
    put16(p + 36, 0);
    put16(p + 36, (uint16_t)~fold(sum_be(pseudo(p, len - 20, 6), p + 20, len - 20)));
    tcp_gro_add(&g, p, len);
    /* Different timestamp option. */
    len = make_tcp(p, 4, 5000 + 2 * 1448, TCP_ACK, 2 * 1448, 1448);
    p[20 + 27] ^= 1;
    tcp_gro_add(&g, p, len);
    /* Larger than the first segment. */
    feed(&g, 4, 3, 1448, 1448, TCP_ACK);
    len = make_tcp(p, 4, 5000 + 4 * 1448, TCP_ACK, 4 * 1448, 1449);
    tcp_gro_add(&g, p, len);
    /* Another window (a window update must reach the sender), the IPv4 reserved flag. */
    len = make_tcp(p, 4, 5000 + 4 * 1448 + 1449, TCP_ACK, 4 * 1448 + 1449, 1449);
    put16(p + 34, (uint16_t)(be16(p + 34) + 1));
    tcp_gro_add(&g, p, len);
    len = make_tcp(p, 4, 5000 + 4 * 1448 + 2 * 1449, TCP_ACK, 4 * 1448 + 2 * 1449, 1449);
    p[6] |= 0x80;
    tcp_gro_add(&g, p, len);
    tcp_gro_flush(&g);
    assert_int_equal(e.n, 7);
    for (unsigned i = 0; i < e.n; i++) {
        assert_int_equal(e.h[i].gso_type, VNET_GSO_NONE);
        assert_int_equal(e.h[i].flags, 0);
    }
    emitted_free(&e);

    /* A short segment closes the super-packet: the next one starts another. */
    feed(&g, 4, 0, 1448, 1448, TCP_ACK);
    feed(&g, 4, 1, 1448, 1000, TCP_ACK);
    len = make_tcp(p, 4, 5000 + 1448 + 1000, TCP_ACK, 1448 + 1000, 1448);
    tcp_gro_add(&g, p, len);
    tcp_gro_flush(&g);
    assert_int_equal(e.n, 2);
    check_merged(&e, 0, 4, 0, 2, 1448, 1000);
    emitted_free(&e);

    /* SYN, pure ACK and non-TCP packets pass through at once. */
    len = make_tcp(p, 4, 1, TCP_SYN, 0, 0);
    tcp_gro_add(&g, p, len);
    len = make_tcp(p, 4, 1, TCP_ACK, 0, 0);
    tcp_gro_add(&g, p, len);
    p[9] = 17;
    tcp_gro_add(&g, p, len);
    assert_int_equal(e.n, 3);
    emitted_free(&e);

    /* An IPv4 fragment of a held flow's protocol flushes what is held first. */
    feed(&g, 4, 0, 1448, 1448, TCP_ACK);
    len = make_tcp(p, 4, 5000 + 1448, TCP_ACK, 1448, 1448);
    p[6] |= 0x20; /* more fragments */
    tcp_gro_add(&g, p, len);
    assert_int_equal(e.n, 2);
    assert_int_equal(be32(e.pkt[0] + 24), 5000);
    emitted_free(&e);
    tcp_gro_free(&g);
}

static void test_gro_many_flows(void **state)
{
    struct emitted e = {0};
    struct tcp_gro g;
    uint8_t p[2048];
    size_t total = 0;

    (void)state;
    assert_int_equal(tcp_gro_init(&g, collect, &e), 0);
    /* TCP_GRO_FLOWS + 2 flows (different source ports), two segments each, interleaved. */
    for (unsigned k = 0; k < 2; k++) {
        for (unsigned f = 0; f < TCP_GRO_FLOWS + 2; f++) {
            size_t len = make_tcp(p, 4, 5000 + k * 1000, TCP_ACK, k * 1000, 1000);

            put16(p + 20, (uint16_t)(40000 + f));
            tcp_gro_add(&g, p, len);
        }
    }
    tcp_gro_flush(&g);
    for (unsigned i = 0; i < e.n; i++) {
        total += e.len[i] - 52;
    }
    assert_int_equal(total, (TCP_GRO_FLOWS + 2) * 2 * 1000); /* nothing lost or doubled */
    assert_true(e.n >= TCP_GRO_FLOWS + 2);
    emitted_free(&e);
    tcp_gro_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csum_rfc1071_example),
        cmocka_unit_test(test_tso_ipv4),
        cmocka_unit_test(test_tso_ipv6),
        cmocka_unit_test(test_tso_refuses),
        cmocka_unit_test(test_csum_complete),
        cmocka_unit_test(test_gro_merges_in_order_segments),
        cmocka_unit_test(test_gro_keeps_flow_order),
        cmocka_unit_test(test_gro_refuses_to_merge),
        cmocka_unit_test(test_gro_many_flows),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
