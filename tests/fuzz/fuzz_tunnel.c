/* tests/fuzz/fuzz_tunnel.c: the packets of the data plane under a coverage-guided fuzzer.
 *
 * Two paths, picked by the first input byte:
 *  - even: what an authenticated client's decrypted payloads go through in the worker
 *    (server/data/worker_rx.c handle_plaintext): keepalive/OCC recognition, MSS clamping, then the
 *    TCP coalescer (tcp_gro) that writes super-packets to the TUN device. The rest of the input is
 *    a sequence of packets, each as [length low byte][length high 3 bits | 0x80 = end of batch]
 *    followed by that many bytes.
 *  - odd: one read from a TUN device with offloads (worker_tun.c tun_offload_packet): a
 *    virtio_net_hdr and an IP packet, completed or cut into segments (tso_begin/tso_next).
 *
 * Beyond "does not crash" (ASan/UBSan in the fuzzing build), each path checks what the kernel
 * and the client rely on, with checksums and header parsing written here independently of
 * proto/:
 *  - the coalescer loses, adds, alters and reorders nothing within a TCP flow: every packet it
 *    writes, super-packets cut back into segments, matches the packets offered, flow by flow and
 *    in order (IPv4 id with DF, checksums and an urgent pointer without URG excepted); every
 *    super-packet has a valid IPv4 header checksum, lengths that match, and a partial TCP
 *    checksum that completes to a valid one;
 *  - MSS clamping changes nothing but the TCP header's options and checksum, and keeps a valid
 *    TCP checksum valid;
 *  - every segment cut from a super-packet carries a valid checksum, a length field that
 *    matches, and the super-packet's payload, in order, with nothing missing.
 *
 * Built as a libFuzzer target by scripts/fuzz.sh (clang); tests/fuzz/replay.c runs the same
 * function over the committed corpus in every ctest run.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/errors.h"
#include "proto/mss.h"
#include "proto/occ.h"
#include "proto/tun_offload.h"
#include "tests/fuzz/fuzz_check.h"

#define MAX_PACKETS 64 /* packets per input; the rest of a longer input is ignored */
#define MAX_SEGMENTS 1024
#define MAX_MSS 1360 /* what mssfix 1492 mtu gives with AES-GCM (proto/mss.c) */

static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* RFC 1071, one big-endian 16-bit word at a time. */
static uint32_t ref_sum(uint32_t sum, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i + 1 < n; i += 2) {
        sum += be16(p + i);
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    if (n & 1) {
        sum += (uint32_t)p[n - 1] << 8;
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    return sum;
}

/* A TCP segment as this file reads it: a whole IPv4 packet (any header length, not a fragment)
 * or IPv6 packet with TCP as its next header, lengths matching len. */
struct tcp_view {
    int family;
    size_t ip_hdr_len;
    size_t hdr_len; /* IP + TCP */
};

static bool view_tcp(const uint8_t *p, size_t len, struct tcp_view *v)
{
    size_t thl;

    if (len >= 20 && p[0] >> 4 == 4) {
        v->family = 4;
        v->ip_hdr_len = (size_t)(p[0] & 15) * 4;
        if (v->ip_hdr_len < 20 || v->ip_hdr_len > len || be16(p + 2) != len || p[9] != 6 ||
            (be16(p + 6) & 0xBFFF) != 0) {
            return false;
        }
    } else if (len >= 40 && p[0] >> 4 == 6) {
        v->family = 6;
        v->ip_hdr_len = 40;
        if ((size_t)be16(p + 4) + 40 != len || p[6] != 6) {
            return false;
        }
    } else {
        return false;
    }
    if (v->ip_hdr_len + 20 > len) {
        return false;
    }
    thl = (size_t)(p[v->ip_hdr_len + 12] >> 4) * 4;
    if (thl < 20 || v->ip_hdr_len + thl > len) {
        return false;
    }
    v->hdr_len = v->ip_hdr_len + thl;
    return true;
}

/* The pseudo-header sum (RFC 9293 3.1, RFC 8200 8.1) of a TCP segment of tcp_len bytes. */
static uint32_t pseudo_sum(const uint8_t *p, const struct tcp_view *v, size_t tcp_len)
{
    uint8_t tail[8] = {0};
    uint32_t sum;

    if (v->family == 4) {
        sum = ref_sum(0, p + 12, 8);
        tail[1] = 6;
        tail[2] = (uint8_t)(tcp_len >> 8);
        tail[3] = (uint8_t)tcp_len;
        return ref_sum(sum, tail, 4);
    }
    sum = ref_sum(0, p + 8, 32);
    tail[0] = (uint8_t)(tcp_len >> 24);
    tail[1] = (uint8_t)(tcp_len >> 16);
    tail[2] = (uint8_t)(tcp_len >> 8);
    tail[3] = (uint8_t)tcp_len;
    tail[7] = 6;
    return ref_sum(sum, tail, 8);
}

static bool tcp_csum_ok(const uint8_t *p, size_t len, const struct tcp_view *v)
{
    size_t tcp_len = len - v->ip_hdr_len;

    return ref_sum(pseudo_sum(p, v, tcp_len), p + v->ip_hdr_len, tcp_len) == 0xFFFF;
}

static bool ipv4_hdr_csum_ok(const uint8_t *p, size_t ip_hdr_len)
{
    return ref_sum(0, p, ip_hdr_len) == 0xFFFF;
}

/* One packet offered to or written by the coalescer, normalised for comparison. */
struct rec {
    uint8_t *bytes;
    size_t len;
    bool is_tcp;
    uint8_t flow[37]; /* family, addresses, ports */
    size_t flow_len;
};

struct side {
    struct rec recs[MAX_SEGMENTS];
    size_t n;
};

static struct side offered, written;

/* Record a copy of pkt: for a TCP segment, its flow, and with what the kernel may rewrite
 * zeroed (IPv4 header checksum, the IPv4 id of a DF packet, the TCP checksum, the urgent
 * pointer without URG). */
static void record(struct side *s, const uint8_t *pkt, size_t len)
{
    struct rec *r;
    struct tcp_view v;

    CHECK(s->n < MAX_SEGMENTS);
    r = &s->recs[s->n++];
    r->bytes = malloc(len ? len : 1);
    CHECK(r->bytes != NULL);
    memcpy(r->bytes, pkt, len);
    r->len = len;
    r->is_tcp = view_tcp(pkt, len, &v);
    r->flow_len = 0;
    if (!r->is_tcp) {
        return;
    }
    r->flow[0] = (uint8_t)v.family;
    if (v.family == 4) {
        memcpy(r->flow + 1, pkt + 12, 8);
        r->flow_len = 9;
        r->bytes[10] = r->bytes[11] = 0;
        if (pkt[6] & 0x40) {
            r->bytes[4] = r->bytes[5] = 0;
        }
    } else {
        memcpy(r->flow + 1, pkt + 8, 32);
        r->flow_len = 33;
    }
    memcpy(r->flow + r->flow_len, pkt + v.ip_hdr_len, 4);
    r->flow_len += 4;
    r->bytes[v.ip_hdr_len + 16] = r->bytes[v.ip_hdr_len + 17] = 0;
    if (!(pkt[v.ip_hdr_len + 13] & 0x20)) {
        /* without URG the urgent pointer means nothing (RFC 9293 3.1), and is not kept */
        r->bytes[v.ip_hdr_len + 18] = r->bytes[v.ip_hdr_len + 19] = 0;
    }
}

static void side_clear(struct side *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->recs[i].bytes);
    }
    s->n = 0;
}

static bool same_rec(const struct rec *a, const struct rec *b)
{
    return a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0;
}

static bool same_flow(const struct rec *a, const struct rec *b)
{
    return a->flow_len == b->flow_len && memcmp(a->flow, b->flow, a->flow_len) == 0;
}

/* A super-packet the coalescer wrote: check it, then record the segments it stands for. */
static void record_super(const struct vnet_hdr *h, const uint8_t *pkt, size_t len)
{
    static uint8_t copy[TUN_OFFLOAD_MAX_PACKET], seg[TUN_OFFLOAD_MAX_PACKET];
    struct tcp_view v;
    struct tso_iter it;
    size_t seg_len, tcp_len;
    uint32_t sum;
    int rc;

    CHECK(len <= TUN_OFFLOAD_MAX_PACKET);
    CHECK(view_tcp(pkt, len, &v));
    CHECK(h->flags == VNET_F_NEEDS_CSUM);
    CHECK(h->gso_type == (v.family == 4 ? VNET_GSO_TCPV4 : VNET_GSO_TCPV6));
    CHECK(h->hdr_len == v.hdr_len && h->csum_start == v.ip_hdr_len && h->csum_offset == 16);
    CHECK(h->gso_size > 0 && len - v.hdr_len > h->gso_size); /* at least two segments */
    if (v.family == 4) {
        CHECK(ipv4_hdr_csum_ok(pkt, v.ip_hdr_len));
    }
    /* NEEDS_CSUM: the field holds the folded pseudo-header sum; completing it as the kernel
     * does (skb_checksum_help) must give a valid checksum. */
    tcp_len = len - v.ip_hdr_len;
    CHECK(be16(pkt + v.ip_hdr_len + 16) == pseudo_sum(pkt, &v, tcp_len));
    memcpy(copy, pkt, len);
    copy[v.ip_hdr_len + 16] = copy[v.ip_hdr_len + 17] = 0;
    sum = ref_sum(pseudo_sum(pkt, &v, tcp_len), copy + v.ip_hdr_len, tcp_len);
    copy[v.ip_hdr_len + 16] = (uint8_t)(~sum >> 8);
    copy[v.ip_hdr_len + 17] = (uint8_t)~sum;
    CHECK(tcp_csum_ok(copy, len, &v));

    CHECK(tso_begin(&it, pkt, len, h) == 0);
    while ((rc = tso_next(&it, seg, sizeof(seg), &seg_len)) == 1) {
        record(&written, seg, seg_len);
    }
    CHECK(rc == 0);
}

static void on_emit(void *ctx, const struct vnet_hdr *h, const uint8_t *pkt, size_t len)
{
    (void)ctx;
    if (h->gso_type == VNET_GSO_NONE) {
        CHECK(h->flags == 0);
        record(&written, pkt, len);
    } else {
        record_super(h, pkt, len);
    }
}

/* For the report of a failed check: a packet's length and first bytes. */
static void dump(const char *what, size_t i, const struct rec *r)
{
    fprintf(stderr, "%s packet %zu (%zu bytes, %s):", what, i, r->len,
            r->is_tcp ? "TCP" : "not a whole TCP segment");
    for (size_t k = 0; k < r->len && k < 80; k++) {
        fprintf(stderr, "%s%02x", k % 20 ? "" : "\n  ", r->bytes[k]);
    }
    fprintf(stderr, "\n");
}

/* written must be offered with only the order between flows changed: within each TCP flow the
 * same packets in the same order; packets that are not whole TCP segments the same multiset. */
static void compare_sides(void)
{
    static bool used[MAX_SEGMENTS];
    size_t i, j;

    CHECK(written.n == offered.n);
    memset(used, 0, sizeof(used));
    for (i = 0; i < offered.n; i++) {
        const struct rec *o = &offered.recs[i];

        if (o->is_tcp) {
            /* the next written packet of this flow */
            for (j = 0; j < written.n; j++) {
                if (!used[j] && written.recs[j].is_tcp && same_flow(&written.recs[j], o)) {
                    break;
                }
            }
        } else {
            for (j = 0; j < written.n; j++) {
                if (!used[j] && !written.recs[j].is_tcp && same_rec(&written.recs[j], o)) {
                    break;
                }
            }
        }
        if (j == written.n || !same_rec(&written.recs[j], o)) {
            dump("offered", i, o);
            if (j < written.n) {
                dump("written", j, &written.recs[j]);
            }
        }
        CHECK(j < written.n);
        CHECK(same_rec(&written.recs[j], o));
        used[j] = true;
    }
}

/* The client path: each packet as handle_plaintext() treats it. */
static void client_packets(const uint8_t *data, size_t size)
{
    static struct tcp_gro gro;
    static bool is_ready;
    unsigned n = 0;

    if (!is_ready) {
        CHECK(tcp_gro_init(&gro, on_emit, NULL) == 0);
        is_ready = true;
    }
    while (size >= 2 && n++ < MAX_PACKETS) {
        size_t len = (size_t)data[0] | (size_t)(data[1] & 0x07) << 8;
        bool is_batch_end = data[1] & 0x80;
        enum occ_type occ;
        struct tcp_view v;
        uint8_t *pkt;

        data += 2;
        size -= 2;
        len = len < size ? len : size;
        pkt = malloc(len ? len : 1); /* exact size: ASan sees any read past the end */
        CHECK(pkt != NULL);
        memcpy(pkt, data, len);
        data += len;
        size -= len;

        if (occ_is_ping(pkt, len) || occ_parse(pkt, len, &occ) == 0) {
            free(pkt);
            continue;
        }
        if (len >= 1 && (pkt[0] >> 4 == 4 || pkt[0] >> 4 == 6)) {
            bool is_tcp = view_tcp(pkt, len, &v), was_ok = is_tcp && tcp_csum_ok(pkt, len, &v);
            int changed = pkt[0] >> 4 == 4 ? mss_clamp_ipv4(pkt, len, MAX_MSS)
                                           : mss_clamp_ipv6(pkt, len, MAX_MSS - 20);

            CHECK(changed == 0 || changed == 1);
            CHECK(changed || memcmp(pkt, data - len, len) == 0);
            if (is_tcp) {
                /* only the TCP header's option and checksum may change, validity kept */
                CHECK(memcmp(pkt, data - len, v.ip_hdr_len + 16) == 0);
                CHECK(memcmp(pkt + v.hdr_len, data - len + v.hdr_len, len - v.hdr_len) == 0);
                CHECK(!was_ok || tcp_csum_ok(pkt, len, &v));
            }
        }
        record(&offered, pkt, len);
        tcp_gro_add(&gro, pkt, len);
        free(pkt);
        if (is_batch_end) {
            tcp_gro_flush(&gro);
        }
    }
    tcp_gro_flush(&gro);
    compare_sides();
    side_clear(&offered);
    side_clear(&written);
}

/* The TUN path: one read, a virtio_net_hdr then an IP packet. */
static void tun_read(const uint8_t *data, size_t size)
{
    static uint8_t seg[2048];
    struct vnet_hdr h;
    struct tso_iter it;
    struct tcp_view v, sv;
    size_t len, seg_len, offset = 0, payload;
    uint8_t *pkt;
    unsigned n = 0;
    int rc;

    if (size < VNET_HDR_LEN) {
        return;
    }
    vnet_hdr_get(data, &h);
    len = size - VNET_HDR_LEN;
    if (len > TUN_OFFLOAD_MAX_PACKET) {
        len = TUN_OFFLOAD_MAX_PACKET;
    }
    pkt = malloc(len ? len : 1);
    CHECK(pkt != NULL);
    memcpy(pkt, data + VNET_HDR_LEN, len);
    if (h.gso_type == VNET_GSO_NONE) {
        if (h.flags & VNET_F_NEEDS_CSUM) {
            rc = tun_offload_csum_complete(pkt, len, &h);
            CHECK(rc == 0 || (size_t)h.csum_start + h.csum_offset + 2 > len);
        }
        free(pkt);
        return;
    }
    if (tso_begin(&it, pkt, len, &h) != 0) {
        free(pkt);
        return;
    }
    /* tso_begin took it: a whole TCP segment with a usable gso_size */
    CHECK(view_tcp(pkt, len, &v));
    CHECK(h.gso_size > 0);
    payload = len - v.hdr_len;
    while ((rc = tso_next(&it, seg, sizeof(seg), &seg_len)) == 1) {
        size_t chunk;

        CHECK(++n <= payload / h.gso_size + 1);
        CHECK(view_tcp(seg, seg_len, &sv));
        CHECK(sv.family == v.family && sv.hdr_len == v.hdr_len);
        CHECK(memcmp(seg + v.ip_hdr_len, pkt + v.ip_hdr_len, 4) == 0); /* ports */
        CHECK(tcp_csum_ok(seg, seg_len, &sv));
        if (v.family == 4) {
            CHECK(ipv4_hdr_csum_ok(seg, sv.ip_hdr_len));
        }
        chunk = seg_len - sv.hdr_len;
        CHECK(chunk > 0 && chunk <= h.gso_size && offset + chunk <= payload);
        CHECK(be32(seg + v.ip_hdr_len + 4) == be32(pkt + v.ip_hdr_len + 4) + (uint32_t)offset);
        CHECK(memcmp(seg + sv.hdr_len, pkt + v.hdr_len + offset, chunk) == 0);
        offset += chunk;
    }
    CHECK(rc == 0 || rc == -PE_NOSPACE);
    if (rc == 0) {
        CHECK(offset == payload);
    }
    free(pkt);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    if (data[0] & 1) {
        tun_read(data + 1, size - 1);
    } else {
        client_packets(data + 1, size - 1);
    }
    return 0;
}
