/* proto/tun_offload.c: TCP segmentation and coalescing for a TUN device with offloads. */
#include "proto/tun_offload.h"

#include <stdlib.h>
#include <string.h>

#include "proto/cursor.h"
#include "proto/errors.h"

#define IPPROTO_TCP_NUM 6
#define IPV4_DF 0x4000
#define IPV6_HDR_LEN 40
#define TCP_MIN_HDR_LEN 20
#define TCP_CSUM_OFFSET 16
#define TCP_FIN 0x01
#define TCP_PSH 0x08
#define TCP_ACK 0x10
#define TCP_CWR 0x80

void vnet_hdr_get(const uint8_t *b, struct vnet_hdr *h)
{
    h->flags = b[0];
    h->gso_type = b[1];
    memcpy(&h->hdr_len, b + 2, 2);
    memcpy(&h->gso_size, b + 4, 2);
    memcpy(&h->csum_start, b + 6, 2);
    memcpy(&h->csum_offset, b + 8, 2);
}

void vnet_hdr_put(uint8_t *b, const struct vnet_hdr *h)
{
    b[0] = h->flags;
    b[1] = h->gso_type;
    memcpy(b + 2, &h->hdr_len, 2);
    memcpy(b + 4, &h->gso_size, 2);
    memcpy(b + 6, &h->csum_start, 2);
    memcpy(b + 8, &h->csum_offset, 2);
}

/* Native-order 32-bit words summed into 64 bits cannot overflow below 2^32 words; the fold
 * then gives the 16-bit ones-complement sum in the data's byte order (RFC 1071 section 2). */
uint64_t inet_csum_add(uint64_t sum, const uint8_t *data, size_t len)
{
    while (len >= 4) {
        uint32_t v;

        memcpy(&v, data, 4);
        sum += v;
        data += 4;
        len -= 4;
    }
    if (len >= 2) {
        uint16_t v;

        memcpy(&v, data, 2);
        sum += v;
        data += 2;
        len -= 2;
    }
    if (len) {
        uint8_t tail[2] = {data[0], 0};
        uint16_t v;

        memcpy(&v, tail, 2);
        sum += v;
    }
    return sum;
}

uint16_t inet_csum_fold(uint64_t sum)
{
    while (sum >> 16) {
        sum = (sum & 0xFFFFu) + (sum >> 16);
    }
    return (uint16_t)sum;
}

/* The sum of the TCP pseudo header for a segment of tcp_len bytes (RFC 9293 3.1, RFC 8200 8.1). */
static uint64_t pseudo_sum(int family, const uint8_t *ip, size_t tcp_len)
{
    if (family == 4) {
        uint8_t tail[4] = {0, IPPROTO_TCP_NUM, (uint8_t)(tcp_len >> 8), (uint8_t)tcp_len};

        return inet_csum_add(inet_csum_add(0, ip + 12, 8), tail, sizeof(tail));
    } else {
        uint8_t tail[8] = {(uint8_t)(tcp_len >> 24),
                           (uint8_t)(tcp_len >> 16),
                           (uint8_t)(tcp_len >> 8),
                           (uint8_t)tcp_len,
                           0,
                           0,
                           0,
                           IPPROTO_TCP_NUM};

        return inet_csum_add(inet_csum_add(0, ip + 8, 32), tail, sizeof(tail));
    }
}

static void put_csum(uint8_t *at, uint16_t v)
{
    memcpy(at, &v, 2);
}

static void ipv4_set_hdr_csum(uint8_t *ip, size_t ip_hdr_len)
{
    ip[10] = ip[11] = 0;
    put_csum(ip + 10, (uint16_t)~inet_csum_fold(inet_csum_add(0, ip, ip_hdr_len)));
}

int tun_offload_csum_complete(uint8_t *pkt, size_t len, const struct vnet_hdr *h)
{
    size_t start = h->csum_start, at = start + h->csum_offset;
    uint16_t c;

    if (start >= len || at + 2 > len) {
        return -PE_MALFORMED;
    }
    c = (uint16_t)~inet_csum_fold(inet_csum_add(0, pkt + start, len - start));
    put_csum(pkt + at, c ? c : 0xFFFF);
    return 0;
}

/* Where the IP and TCP headers of a TCP packet end. Returns 4 or 6, or 0 when pkt is not a
 * well-formed TCP packet of exactly len bytes with IPv4 (options allowed only with
 * allow_ip_options) or IPv6 without extension headers. */
static int tcp_headers(const uint8_t *pkt, size_t len, bool allow_ip_options, size_t *ip_hdr_len,
                       size_t *hdr_len)
{
    int family;
    size_t iphl, thl;

    if (len >= 20 && (pkt[0] >> 4) == 4) {
        iphl = (size_t)(pkt[0] & 0x0F) * 4;
        if (iphl < 20 || (!allow_ip_options && iphl != 20) || load_be16(pkt + 2) != len ||
            pkt[9] != IPPROTO_TCP_NUM) {
            return 0;
        }
        family = 4;
    } else if (len >= IPV6_HDR_LEN && (pkt[0] >> 4) == 6) {
        iphl = IPV6_HDR_LEN;
        if ((size_t)load_be16(pkt + 4) + IPV6_HDR_LEN != len || pkt[6] != IPPROTO_TCP_NUM) {
            return 0;
        }
        family = 6;
    } else {
        return 0;
    }
    if (iphl + TCP_MIN_HDR_LEN > len) {
        return 0;
    }
    thl = (size_t)(pkt[iphl + 12] >> 4) * 4;
    if (thl < TCP_MIN_HDR_LEN || iphl + thl > len) {
        return 0;
    }
    *ip_hdr_len = iphl;
    *hdr_len = iphl + thl;
    return family;
}

int tso_begin(struct tso_iter *it, const uint8_t *pkt, size_t len, const struct vnet_hdr *h)
{
    int want = (h->gso_type & ~VNET_GSO_ECN) == VNET_GSO_TCPV4   ? 4
               : (h->gso_type & ~VNET_GSO_ECN) == VNET_GSO_TCPV6 ? 6
                                                                 : 0;

    if (want == 0) {
        return -PE_UNSUPPORTED;
    }
    memset(it, 0, sizeof(*it));
    if (want == 6 && len >= IPV6_HDR_LEN && (pkt[0] >> 4) == 6 && pkt[6] != IPPROTO_TCP_NUM) {
        return -PE_UNSUPPORTED; /* extension headers: left to the kernel (not offered TSO6) */
    }
    it->family = tcp_headers(pkt, len, true, &it->ip_hdr_len, &it->hdr_len);
    if (it->family != want || h->gso_size == 0 || it->hdr_len == len ||
        (want == 4 && (load_be16(pkt + 6) & 0xBFFF) != 0 /* a fragment: never from TSO */)) {
        return -PE_MALFORMED;
    }
    it->pkt = pkt;
    it->len = len;
    it->mss = h->gso_size;
    it->seq = load_be32(pkt + it->ip_hdr_len + 4);
    it->ip_id = want == 4 ? load_be16(pkt + 4) : 0;
    return 0;
}

int tso_next(struct tso_iter *it, uint8_t *out, size_t cap, size_t *seg_len)
{
    size_t payload = it->len - it->hdr_len, chunk, tcp_len;
    uint8_t *tcp = out + it->ip_hdr_len;
    bool is_last;

    if (it->index > 0 && it->offset >= payload) {
        return 0;
    }
    chunk = payload - it->offset < it->mss ? payload - it->offset : it->mss;
    if (it->hdr_len + chunk > cap) {
        return -PE_NOSPACE;
    }
    memcpy(out, it->pkt, it->hdr_len);
    memcpy(out + it->hdr_len, it->pkt + it->hdr_len + it->offset, chunk);
    tcp_len = it->hdr_len - it->ip_hdr_len + chunk;
    if (it->family == 4) {
        store_be16(out + 2, (uint16_t)(it->hdr_len + chunk));
        store_be16(out + 4, (uint16_t)(it->ip_id + it->index));
        ipv4_set_hdr_csum(out, it->ip_hdr_len);
    } else {
        store_be16(out + 4, (uint16_t)tcp_len);
    }
    store_be32(tcp + 4, it->seq + (uint32_t)it->offset);
    is_last = it->offset + chunk >= payload;
    if (!is_last) {
        tcp[13] &= (uint8_t) ~(TCP_FIN | TCP_PSH);
    }
    if (it->index > 0) {
        tcp[13] &= (uint8_t)~TCP_CWR;
    }
    tcp[TCP_CSUM_OFFSET] = tcp[TCP_CSUM_OFFSET + 1] = 0;
    put_csum(tcp + TCP_CSUM_OFFSET, (uint16_t)~inet_csum_fold(inet_csum_add(
                                        pseudo_sum(it->family, out, tcp_len), tcp, tcp_len)));
    *seg_len = it->hdr_len + chunk;
    it->offset += chunk;
    it->index++;
    return 1;
}

int tcp_gro_init(struct tcp_gro *g, tcp_gro_emit_fn emit, void *ctx)
{
    memset(g, 0, sizeof(*g));
    g->emit = emit;
    g->ctx = ctx;
    for (int i = 0; i < TCP_GRO_FLOWS; i++) {
        g->flows[i].buf = malloc(TUN_OFFLOAD_MAX_PACKET);
        if (!g->flows[i].buf) {
            tcp_gro_free(g);
            return -PE_NOSPACE;
        }
    }
    return 0;
}

void tcp_gro_free(struct tcp_gro *g)
{
    for (int i = 0; i < TCP_GRO_FLOWS; i++) {
        free(g->flows[i].buf);
        g->flows[i].buf = NULL;
        g->flows[i].len = 0;
    }
}

static const struct vnet_hdr no_offload; /* all zero: a plain, checksummed packet */

static void emit_flow(struct tcp_gro *g, struct tcp_gro_flow *f)
{
    uint8_t *ip = f->buf, *tcp = f->buf + f->ip_hdr_len;
    size_t tcp_len = f->len - f->ip_hdr_len;
    struct vnet_hdr h;

    if (f->n_segs < 2) {
        g->emit(g->ctx, &no_offload, f->buf, f->len);
        f->len = 0;
        return;
    }
    if (ip[0] >> 4 == 4) {
        store_be16(ip + 2, (uint16_t)f->len);
        ipv4_set_hdr_csum(ip, f->ip_hdr_len);
    } else {
        store_be16(ip + 4, (uint16_t)tcp_len);
    }
    put_csum(tcp + TCP_CSUM_OFFSET, inet_csum_fold(pseudo_sum(ip[0] >> 4, ip, tcp_len)));
    h.flags = VNET_F_NEEDS_CSUM;
    h.gso_type = ip[0] >> 4 == 4 ? VNET_GSO_TCPV4 : VNET_GSO_TCPV6;
    h.hdr_len = (uint16_t)f->hdr_len;
    h.gso_size = f->gso_size;
    h.csum_start = (uint16_t)f->ip_hdr_len;
    h.csum_offset = TCP_CSUM_OFFSET;
    g->emit(g->ctx, &h, f->buf, f->len);
    f->len = 0;
}

void tcp_gro_flush(struct tcp_gro *g)
{
    for (int i = 0; i < TCP_GRO_FLOWS; i++) {
        if (g->flows[i].len) {
            emit_flow(g, &g->flows[i]);
        }
    }
}

/* Whether a and b (IP packets of one family with ip_hdr_len-byte headers) belong to one TCP
 * flow: addresses and ports. */
static bool same_flow(const uint8_t *a, const uint8_t *b, int family, size_t ip_hdr_len)
{
    size_t off = family == 4 ? 12 : 8, n = family == 4 ? 8 : 32;

    return (a[0] >> 4) == (b[0] >> 4) && memcmp(a + off, b + off, n) == 0 &&
           memcmp(a + ip_hdr_len, b + ip_hdr_len, 4) == 0;
}

/* Whether segment pkt (headers as parsed, payload bytes of data) may be appended to f. */
static bool continues(const struct tcp_gro_flow *f, const uint8_t *pkt, size_t ip_hdr_len,
                      size_t hdr_len, size_t payload)
{
    const uint8_t *held = f->buf, *tcp = pkt + ip_hdr_len, *htcp = f->buf + f->ip_hdr_len;

    if (f->is_closed || hdr_len != f->hdr_len || payload > f->gso_size ||
        f->len + payload > TUN_OFFLOAD_MAX_PACKET || load_be32(tcp + 4) != f->next_seq ||
        memcmp(tcp + 8, htcp + 8, 4) != 0 /* ack */ || tcp[12] != htcp[12] ||
        (tcp[13] & (uint8_t)~TCP_PSH) != htcp[13] || memcmp(tcp + 14, htcp + 14, 2) != 0 ||
        memcmp(tcp + TCP_MIN_HDR_LEN, htcp + TCP_MIN_HDR_LEN, hdr_len - ip_hdr_len - 20) != 0) {
        return false;
    }
    if (ip_hdr_len == 20) {
        /* TOS, TTL, DF the same; without DF the ids must count up (inet_gro_receive). */
        return pkt[1] == held[1] && pkt[8] == held[8] && (pkt[6] & 0x40) == (held[6] & 0x40) &&
               ((pkt[6] & 0x40) ||
                load_be16(pkt + 4) == (uint16_t)(load_be16(held + 4) + f->n_segs));
    }
    return memcmp(pkt, held, 4) == 0 && pkt[7] == held[7]; /* class, flow label, hop limit */
}

/* Whether a packet tcp_headers() refused may still carry a TCP segment: an IPv4 fragment or
 * packet with options, or IPv6 with extension headers (RFC 8200 4.1's list). */
static bool might_be_tcp(const uint8_t *pkt, size_t len)
{
    if (len >= 20 && (pkt[0] >> 4) == 4) {
        return pkt[9] == IPPROTO_TCP_NUM;
    }
    if (len >= IPV6_HDR_LEN && (pkt[0] >> 4) == 6) {
        uint8_t nh = pkt[6];

        return nh == IPPROTO_TCP_NUM || nh == 0 || nh == 43 || nh == 44 || nh == 50 || nh == 51 ||
               nh == 60 || nh == 135 || nh == 139 || nh == 140;
    }
    return false;
}

void tcp_gro_add(struct tcp_gro *g, const uint8_t *pkt, size_t len)
{
    size_t iphl = 0, hdr_len = 0, payload;
    int family = tcp_headers(pkt, len, false, &iphl, &hdr_len);
    struct tcp_gro_flow *f = NULL, *free_slot = NULL, *oldest = NULL;
    uint8_t flags;
    bool is_mergeable;

    /* IPv4: any flag but DF (MF, the reserved bit) or an offset stops it (inet_gro_receive) */
    if (family == 0 || (family == 4 && (load_be16(pkt + 6) & 0xBFFF) != 0)) {
        if (might_be_tcp(pkt, len)) {
            tcp_gro_flush(g); /* it may belong to a held flow: that goes first */
        }
        g->emit(g->ctx, &no_offload, pkt, len);
        return;
    }
    payload = len - hdr_len;
    flags = pkt[iphl + 13];
    is_mergeable = payload > 0 && (flags & (uint8_t)~TCP_PSH) == TCP_ACK;
    for (int i = 0; i < TCP_GRO_FLOWS; i++) {
        struct tcp_gro_flow *c = &g->flows[i];

        if (!c->len) {
            free_slot = free_slot ? free_slot : c;
        } else if (c->ip_hdr_len == iphl && same_flow(c->buf, pkt, family, iphl)) {
            f = c;
            break;
        } else if (!oldest || c->age < oldest->age) {
            oldest = c;
        }
    }
    if (f && is_mergeable && continues(f, pkt, iphl, hdr_len, payload)) {
        memcpy(f->buf + f->len, pkt + hdr_len, payload);
        f->len += payload;
        f->next_seq += (uint32_t)payload;
        f->n_segs++;
        g->n_merged++;
        if (flags & TCP_PSH) {
            f->buf[f->ip_hdr_len + 13] |= TCP_PSH;
        }
        f->is_closed = payload < f->gso_size || (flags & TCP_PSH);
        return;
    }
    if (f) {
        emit_flow(g, f); /* keep the flow's order: what is held goes first */
    }
    if (!is_mergeable || (flags & TCP_PSH)) {
        g->emit(g->ctx, &no_offload, pkt, len);
        return;
    }
    if (!f) {
        f = free_slot ? free_slot : oldest;
        if (f->len) {
            emit_flow(g, f);
        }
    }
    memcpy(f->buf, pkt, len);
    f->len = len;
    f->ip_hdr_len = iphl;
    f->hdr_len = hdr_len;
    f->next_seq = load_be32(pkt + iphl + 4) + (uint32_t)payload;
    f->gso_size = (uint16_t)payload;
    f->n_segs = 1;
    f->is_closed = false;
    f->age = g->clock++;
}
