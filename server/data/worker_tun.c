/* server/data/worker_tun.c: a worker's TUN side: what it reads from its queue of the TUN device
 * (offloaded super-packets cut into segments) is routed to the client that holds the
 * destination address, on this worker or handed to the owner (wk_deliver, also the path of
 * client-to-client); decrypted TCP segments are written coalesced (wk_tun_write_offload).
 * Worker thread only; no lock, no allocation. */
#include "server/data/worker_internal.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "proto/client_nat.h"
#include "proto/comp.h"
#include "proto/cursor.h"
#include "proto/errors.h"
#include "proto/icmp6.h"
#include "proto/mss.h"
#include "proto/pbuf.h"

/* The peer_id that tunnel address dst (family 4 or 6, network order) routes to, or
 * VROUTE_NONE: IPv4 pool addresses through the shared owner array (server/addr/routes.h),
 * everything else (IPv6 addresses, ifconfig-push addresses outside the pool, iroutes) through this
 * worker's own route table. */
uint32_t wk_route_lookup(const struct worker *w, int family, const uint8_t *dst)
{
    if (family == 4) {
        uint32_t owner = routes_pool_owner(w->env->routes, load_be32(dst));

        if (owner != VROUTE_NONE) {
            return owner;
        }
    }
    return vroute_lookup(&w->routes, family, dst);
}

/* block-ipv6: write the ICMPv6 no-route answer to pkt into the TUN device. */
static void block_ipv6_answer(struct worker *w, const struct pbuf *pkt)
{
    uint8_t out[VNET_HDR_LEN + ICMP6_UNREACH_MAX];
    size_t off = w->has_vnet_hdr ? VNET_HDR_LEN : 0;
    size_t n = icmp6_unreach_build(out + off, sizeof(out) - off, pbuf_ptr(pkt), pkt->len,
                                   w->env->block_ipv6_src);

    if (n == 0) {
        return;
    }
    if (off > 0) {
        struct vnet_hdr h;

        memset(&h, 0, sizeof(h));
        h.gso_type = VNET_GSO_NONE;
        vnet_hdr_put(out, &h);
    }
    if (write(w->tun_fd, out, off + n) < 0) {
        wk_drop(w, &w->stats.drop_tun_write, NULL, "TUN write failed");
    }
}

void wk_hand_over(struct worker *w, int owner, const uint8_t *data, size_t len, bool is_from_client,
                  uint16_t vid)
{
    struct msg *m = msg_pool_take(&w->pool, MSG_PACKET, data, len);

    /* A client's packet for another worker's client is not a steering miss. */
    if (!is_from_client) {
        stat_inc(&w->stats.handed_over);
    }
    if (!m) {
        wk_drop(w, &w->stats.drop_handover, NULL, "hand-over refused: the owner is behind");
        return;
    }
    m->from_tun = true;
    m->is_from_client = is_from_client;
    m->vid = vid;
    mailbox_post(w->env->mb, owner, m);
}

/* A packet for peer_id's client (from the TUN device, or from another client with
 * client-to-client): send it if this worker owns that peer, else hand it to the owner. */
void wk_deliver(struct worker *w, uint32_t peer_id, struct pbuf *pkt, int family,
                bool is_from_client)
{
    const struct worker_env *env = w->env;
    const struct worker_decide_table t = wk_table(w);
    struct peer *p = NULL;
    int owner;

    if (family == 6 && env->block_ipv6) {
        /* 2.6 process_ip_header: from the TUN device (multi_process_incoming_tun) answered with
         * an ICMPv6 no route into the device; between clients (multi_get_queue) dropped */
        if (!is_from_client) {
            block_ipv6_answer(w, pkt);
        }
        stat_inc(&w->stats.drop_no_route);
        return;
    }
    switch (worker_decide_deliver(&t, peer_id, &owner, &p)) {
    case WORKER_DELIVER_HAND_OVER:
        wk_hand_over(w, owner, pbuf_ptr(pkt), pkt->len, is_from_client, 0);
        return;
    case WORKER_DELIVER_NOT_INSTALLED:
        wk_drop(w, &w->stats.drop_no_route, NULL, "client not installed yet");
        return;
    case WORKER_DELIVER_SEND:
        break;
    }
    if (family == 4) {
        /* 2.6 translates what comes from the TUN device (process_incoming_tun), not what
         * goes between clients (multi_get_queue) */
        if (!is_from_client) {
            (void)client_nat_apply(env->cfg->net.client_nat, pbuf_ptr(pkt), pkt->len,
                                   CLIENT_NAT_OUTGOING);
        }
        mss_clamp_ipv4(pbuf_ptr(pkt), pkt->len, p->mss_max);
    } else {
        mss_clamp_ipv6(pbuf_ptr(pkt), pkt->len, p->mss_max);
    }
    wk_touch_last_ref(w, p, pkt->len);
    wk_send_to_peer(w, p, pkt);
}

/* A packet read from the TUN device (or handed over by another worker): route it to its peer. */
void wk_route_tun_packet(struct worker *w, struct pbuf *pkt, bool is_from_client)
{
    const uint8_t *src, *dst;
    int family = wk_ip_addrs(pbuf_ptr(pkt), pkt->len, &src, &dst);
    uint32_t peer_id;

    if (w->env->is_tap) {
        wk_tap_from_device(w, pkt); /* hand-overs of frames come through wk_tap_route_frame */
        return;
    }
    if (family == 0) {
        stat_inc(&w->stats.drop_not_ip);
        return;
    }
    if (wk_is_multicast(family, dst)) {
        /* The server's own IPv6 router solicitations and MLD reports, broadcasts: not for any
         * one client, and ovpnd does not forward multicast. Counted, not logged. */
        stat_inc(&w->stats.drop_tun_multicast);
        return;
    }
    peer_id = wk_route_lookup(w, family, dst);
    if (peer_id == VROUTE_NONE) {
        wk_drop(w, &w->stats.drop_no_route, NULL, "no client has this address");
        return;
    }
    wk_deliver(w, peer_id, pkt, family, is_from_client);
}

/* tcp_gro's output: one packet for the TUN device, behind its virtio_net_hdr. */
void wk_tun_write_offload(void *ctx, const struct vnet_hdr *h, const uint8_t *pkt, size_t len)
{
    struct worker *w = ctx;
    uint8_t hdr[VNET_HDR_LEN];
    struct iovec iov[2] = {{hdr, sizeof(hdr)}, {(void *)(uintptr_t)pkt, len}};

    vnet_hdr_put(hdr, h);
    if (writev(w->tun_fd, iov, 2) < 0) {
        wk_drop(w, &w->stats.drop_tun_write, NULL, "TUN write failed");
        return;
    }
    if (h->gso_type != VNET_GSO_NONE) {
        stat_inc(&w->stats.tun_gro_writes);
        stat_add(&w->stats.tun_gro_segments,
                 (len - h->hdr_len + h->gso_size - 1) / (h->gso_size ? h->gso_size : 1));
    }
}

/* One read from a TUN device with offloads (n bytes at w->tun_buf + COMP_HEADROOM, starting
 * with the virtio_net_hdr): a TCP super-packet is cut into segments, each routed on its own; a
 * partial checksum is completed. */
static void tun_offload_packet(struct worker *w, size_t n)
{
    uint8_t *pkt = w->tun_buf + COMP_HEADROOM + VNET_HDR_LEN;
    size_t len = n - VNET_HDR_LEN, seg_len;
    struct vnet_hdr h;
    struct tso_iter it;
    struct pbuf b;
    int rc;

    vnet_hdr_get(w->tun_buf + COMP_HEADROOM, &h);
    if (h.gso_type == VNET_GSO_NONE) {
        if ((h.flags & VNET_F_NEEDS_CSUM) && tun_offload_csum_complete(pkt, len, &h)) {
            wk_drop(w, &w->stats.drop_tun_read, NULL, "TUN packet with a bad checksum offset");
            return;
        }
        if (len > WORKER_BUF_LEN - COMP_HEADROOM) {
            wk_drop(w, &w->stats.drop_tun_read, NULL, "TUN packet longer than the tunnel carries");
            return;
        }
        b = pbuf_make(w->tun_buf, COMP_HEADROOM + TUN_READ_LEN, COMP_HEADROOM + VNET_HDR_LEN, len);
        wk_route_tun_packet(w, &b, false);
        return;
    }
    rc = tso_begin(&it, pkt, len, &h);
    if (rc) {
        wk_drop(w, &w->stats.drop_tun_read, NULL, proto_strerror(rc));
        return;
    }
    stat_inc(&w->stats.tun_tso_reads);
    while ((rc = tso_next(&it, w->rx_bufs[0] + COMP_HEADROOM, WORKER_BUF_LEN - COMP_HEADROOM,
                          &seg_len)) == 1) {
        stat_inc(&w->stats.tun_tso_segments);
        b = pbuf_make(w->rx_bufs[0], WORKER_BUF_LEN, COMP_HEADROOM, seg_len);
        wk_route_tun_packet(w, &b, false);
    }
    if (rc < 0) {
        wk_drop(w, &w->stats.drop_tun_read, NULL, "TUN super-packet segment too long");
    }
}

/* Read and route what waits on the TUN queue (at most 64 reads). Returns the number of reads. */
static unsigned tun_drain(struct worker *w)
{
    unsigned i;

    for (i = 0; i < 64; i++) {
        struct pbuf b;
        ssize_t n;

        if (w->has_vnet_hdr) {
            n = read(w->tun_fd, w->tun_buf + COMP_HEADROOM, TUN_READ_LEN);
            if (n < VNET_HDR_LEN) {
                break;
            }
            tun_offload_packet(w, (size_t)n);
            continue;
        }
        n = read(w->tun_fd, w->rx_bufs[0] + COMP_HEADROOM, WORKER_BUF_LEN - COMP_HEADROOM);
        if (n <= 0) {
            break;
        }
        b = pbuf_make(w->rx_bufs[0], WORKER_BUF_LEN, COMP_HEADROOM, (size_t)n);
        wk_route_tun_packet(w, &b, false);
    }
    return i;
}

/* The TUN queue stays event-driven: a read is a super-packet of up to 45 segments already, and
 * delaying it would only let the device's queue grow. */
void wk_on_tun(uv_poll_t *h, int status, int events)
{
    (void)events;
    if (status >= 0) {
        tun_drain(h->data);
    }
    wk_flush_out(h->data);
}
