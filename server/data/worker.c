/* server/data/worker.c: a data-plane thread: UDP <-> AEAD <-> TUN for the peers it owns. */
#include "server/data/worker.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include "proto/cursor.h"
#include "proto/data_crypto.h"
#include "proto/comp.h"
#include "proto/errors.h"
#include "proto/mss.h"
#include "proto/occ.h"
#include "proto/packet.h"
#include "proto/pbuf.h"
#include "server/server.h"
#include "server/data/udp.h"
#include "server/data/worker_decide.h"
#include "server/thread/peer_id.h"

#define WORKER_TICK_MS 1000
#define TUN_READ_LEN (VNET_HDR_LEN + TUN_OFFLOAD_MAX_PACKET)

static void wk_drop(struct worker *w, _Atomic uint64_t *counter, const union udp_addr *from,
                    const char *why)
{
    uint32_t n_suppressed = 0;
    char addr[32];

    stat_inc(counter);
    if (!log_ratelimit_allow(&w->rl_drop, uv_now(&w->loop), 10, 10, &n_suppressed)) {
        return;
    }
    if (n_suppressed) {
        log_msg(LOG_WARN, "worker %d: %u similar messages suppressed", w->index, n_suppressed);
    }
    log_msg(LOG_WARN, "worker %d: dropped packet from %s: %s", w->index,
            from ? udp_addr_str(from, addr, sizeof(addr)) : "tun", why);
}

static void wk_forget_peer(struct worker *w, struct peer *p, enum gone_reason reason)
{
    struct server *srv = w->srv;
    size_t local = peer_id_local(p->peer_id, srv->n_workers);
    struct msg *m;

    for (unsigned i = 0; i < w->n_tx; i++) { /* queued datagrams still go, uncounted */
        if (w->tx_peer[i] == p) {
            w->tx_peer[i] = NULL;
        }
    }
    if (local < srv->max_local_peers && w->by_local[local] == p) {
        w->by_local[local] = NULL;
    }
    if (p->is_installed) {
        atomic_store_explicit(&w->stats.sessions, stat_get(&w->stats.sessions) - 1,
                              memory_order_relaxed);
    }
    p->is_installed = false;
    m = msg_new(MSG_GONE, p, NULL, 0);
    if (!m) {
        log_msg(LOG_ERR, "worker %d: out of memory reporting peer %u gone", w->index, p->peer_id);
        return;
    }
    m->reason = reason;
    server_post_acceptor(srv, m);
}

/* Count tx slots [from, to) as sent: the worker's and their peers' packets and bytes out. */
static void tx_count_sent(struct worker *w, unsigned from, unsigned to)
{
    for (unsigned i = from; i < to; i++) {
        struct peer *p = w->tx_peer[i];
        size_t len = w->tx_iov[i].iov_len;

        if (p) {
            atomic_store_explicit(&p->bytes_tx,
                                  atomic_load_explicit(&p->bytes_tx, memory_order_relaxed) + len,
                                  memory_order_relaxed);
        }
        stat_inc(&w->stats.tx_packets);
        stat_add(&w->stats.tx_bytes, len);
    }
}

/* Send tx slots [from, to) one datagram each, with as few sendmmsg() calls as the kernel
 * allows. A datagram the kernel refuses is dropped and counted; the rest still go. */
static void tx_send_plain(struct worker *w, unsigned from, unsigned to)
{
    while (from < to) {
        int n = sendmmsg(w->udp_fd, &w->tx_msgs[from], to - from, MSG_DONTWAIT);

        if (n <= 0) {
            wk_drop(w, &w->stats.drop_send, &w->tx_addr[from], strerror(errno));
            from++; /* skip the one that failed */
            continue;
        }
        tx_count_sent(w, from, from + (unsigned)n);
        from += (unsigned)n;
    }
}

#define GSO_MAX_SEGMENTS 64 /* UDP_MAX_SEGMENTS of Linux before 6.9 */
#define GSO_LIMIT_TICKS 60  /* ticks a gso_seg_limit lasts */
#define GSO_MAX_BYTES 60000 /* under the 64 KiB an IP datagram (the unsegmented one) holds */

/* One GSO message for tx slots [first, first + n): the same destination, every datagram of
 * size seg except perhaps a shorter last one (the kernel's rule for UDP_SEGMENT). */
static void gso_msg(struct worker *w, unsigned k, unsigned first, unsigned n, uint16_t seg)
{
    struct mmsghdr *mh = &w->gso_msgs[k];
    struct cmsghdr *cm;

    memset(mh, 0, sizeof(*mh));
    mh->msg_hdr.msg_name = &w->tx_addr[first];
    mh->msg_hdr.msg_namelen = udp_addr_len(&w->tx_addr[first]);
    mh->msg_hdr.msg_iov = &w->tx_iov[first];
    mh->msg_hdr.msg_iovlen = n;
    w->gso_first[k] = first;
    if (n < 2) {
        return;
    }
    mh->msg_hdr.msg_control = w->gso_ctrl[k];
    mh->msg_hdr.msg_controllen = sizeof(w->gso_ctrl[k]);
    cm = CMSG_FIRSTHDR(&mh->msg_hdr);
    cm->cmsg_level = SOL_UDP;
    cm->cmsg_type = UDP_SEGMENT;
    cm->cmsg_len = CMSG_LEN(sizeof(seg));
    memcpy(CMSG_DATA(cm), &seg, sizeof(seg));
}

/* Send the queued datagrams. With UDP GSO, each run of datagrams to one client with one size
 * (a bulk transfer's full-size packets) leaves as one message that the kernel segments: one
 * pass through the UDP/IP stack instead of one per datagram. Where the kernel refuses
 * UDP_SEGMENT, GSO stays off for this worker and the datagrams go one by one. */
static void wk_tx_flush(struct worker *w)
{
    unsigned n_msgs = 0, done = 0;

    if (!w->is_gso_ok) {
        tx_send_plain(w, 0, w->n_tx);
        w->n_tx = 0;
        return;
    }
    for (unsigned i = 0; i < w->n_tx;) {
        size_t seg = w->tx_iov[i].iov_len, total = seg;
        unsigned j = i + 1;

        while (j < w->n_tx && seg < w->gso_seg_limit && j - i < GSO_MAX_SEGMENTS &&
               w->tx_iov[j].iov_len <= seg && total + w->tx_iov[j].iov_len <= GSO_MAX_BYTES &&
               udp_addr_equal(&w->tx_addr[j], &w->tx_addr[i])) {
            total += w->tx_iov[j].iov_len;
            if (w->tx_iov[j++].iov_len < seg) {
                break; /* a shorter datagram ends the run */
            }
        }
        gso_msg(w, n_msgs++, i, j - i, (uint16_t)seg);
        i = j;
    }
    while (done < n_msgs) {
        int n = sendmmsg(w->udp_fd, &w->gso_msgs[done], n_msgs - done, MSG_DONTWAIT);
        unsigned first, last;

        if (n > 0) {
            for (unsigned k = done; k < done + (unsigned)n; k++) {
                size_t n_dgrams = w->gso_msgs[k].msg_hdr.msg_iovlen;

                if (n_dgrams > 1) {
                    stat_add(&w->stats.tx_gso, n_dgrams);
                }
                tx_count_sent(w, w->gso_first[k], w->gso_first[k] + (unsigned)n_dgrams);
            }
            done += (unsigned)n;
            continue;
        }
        first = w->gso_first[done];
        last = done + 1 < n_msgs ? w->gso_first[done + 1] : w->n_tx;
        if (w->gso_msgs[done].msg_hdr.msg_iovlen > 1 && errno == EMSGSIZE) {
            /* Segments above the path MTU: from now on datagrams this large go one by one. */
            size_t seg = w->tx_iov[first].iov_len;
            char addr[64];

            if (seg < w->gso_seg_limit) {
                w->gso_seg_limit = seg;
                w->gso_limit_ticks = 0;
            }
            if (!w->is_gso_limit_logged) {
                w->is_gso_limit_logged = true;
                log_msg(LOG_INFO,
                        "worker %d: %zu-byte datagrams to %s exceed the path MTU: datagrams of "
                        "that size or more are sent without UDP GSO (IP-fragmented; said once)",
                        w->index, seg, udp_addr_str(&w->tx_addr[first], addr, sizeof(addr)));
            }
            tx_send_plain(w, first, last);
            done++;
            continue;
        }
        if (w->gso_msgs[done].msg_hdr.msg_iovlen > 1 &&
            (errno == EINVAL || errno == EIO || errno == ENOPROTOOPT || errno == EOPNOTSUPP)) {
            log_msg(LOG_WARN,
                    "worker %d: the kernel refuses UDP GSO (%s): sending datagrams one by one",
                    w->index, strerror(errno));
            w->is_gso_ok = false;
            tx_send_plain(w, first, w->n_tx);
            w->n_tx = 0;
            return;
        }
        /* This message failed (full buffer, unreachable...): its datagrams are dropped. */
        for (unsigned k = first; k < last; k++) {
            wk_drop(w, &w->stats.drop_send, &w->tx_addr[k], strerror(errno));
        }
        done++;
    }
    w->n_tx = 0;
}

/* Frame (compression stub), encrypt and queue one payload for p (wk_tx_flush sends it, at the end
 * of the current callback at the latest). The framing goes into pkt's headroom: every buffer a
 * packet for a client travels in has COMP_HEADROOM bytes of it (a packet without is dropped
 * and counted, never framed outside its buffer). */
static void wk_send_to_peer(struct worker *w, struct peer *p, struct pbuf *pkt)
{
    struct mmsghdr *mh;
    size_t out_len;
    unsigned slot;
    int err;

    if (!p->tx_key) {
        wk_drop(w, &w->stats.drop_no_key, NULL, "no send key");
        return;
    }
    if (w->n_tx == WORKER_BATCH) {
        wk_tx_flush(w);
    }
    slot = w->n_tx;
    err = comp_frame(p->framing, pkt);
    if (err) {
        wk_drop(w, &w->stats.drop_send, &p->remote,
                "no room in front of the packet for its framing");
        return;
    }
    err = data_key_seal(p->tx_key, p->use_data_v2, p->peer_id, pbuf_ptr(pkt), pkt->len,
                        w->tx_bufs[slot], sizeof(w->tx_bufs[slot]), &out_len);
    if (err) {
        wk_drop(w, &w->stats.drop_send, NULL, proto_strerror(err));
        return;
    }
    w->tx_addr[slot] = p->remote;
    w->tx_peer[slot] = p;
    w->tx_iov[slot].iov_base = w->tx_bufs[slot];
    w->tx_iov[slot].iov_len = out_len;
    mh = &w->tx_msgs[slot];
    memset(mh, 0, sizeof(*mh));
    mh->msg_hdr.msg_name = &w->tx_addr[slot];
    mh->msg_hdr.msg_namelen = udp_addr_len(&w->tx_addr[slot]);
    mh->msg_hdr.msg_iov = &w->tx_iov[slot];
    mh->msg_hdr.msg_iovlen = 1;
    w->n_tx++;
    if (!p->is_reneg_requested && data_key_tx_wants_renegotiation(p->tx_key)) {
        /* 2.6 renegotiates at packet id 0xFF000000, long before ids run out. */
        struct msg *m = msg_new(MSG_RENEGOTIATE, p, NULL, 0);

        if (m) {
            p->is_reneg_requested = true;
            server_post_acceptor(w->srv, m);
        }
    }
    p->last_tx_ms = uv_now(&w->loop);
}

/* The peer_id that tunnel address dst (family 4 or 6, network order) routes to, or
 * VROUTE_NONE: IPv4 pool addresses through the shared addr_owner array, everything else (IPv6
 * addresses, ifconfig-push addresses outside the pool, iroutes) through this worker's own route
 * table. */
static uint32_t wk_route_lookup(const struct worker *w, int family, const uint8_t *dst)
{
    const struct server *srv = w->srv;

    if (family == 4) {
        uint32_t a = load_be32(dst);

        size_t idx = ip_pool_index(&srv->pool, a);

        if (idx != SIZE_MAX) {
            uint32_t owner = atomic_load_explicit(&srv->addr_owner[idx], memory_order_acquire);

            if (owner != 0) {
                return owner - 1;
            }
        }
    }
    return vroute_lookup(&w->routes, family, dst);
}

/* The family of an IP packet (4 or 6) and where its source and destination addresses are, or 0
 * when it is too short for its version's header. */
static int wk_ip_addrs(const uint8_t *pkt, size_t len, const uint8_t **src, const uint8_t **dst)
{
    if (len >= 20 && (pkt[0] >> 4) == 4) {
        *src = pkt + 12;
        *dst = pkt + 16;
        return 4;
    }
    if (len >= 40 && (pkt[0] >> 4) == 6) {
        *src = pkt + 8;
        *dst = pkt + 24;
        return 6;
    }
    return 0;
}

/* This worker's peer table as the decisions in worker_decide.h read it. */
static struct worker_decide_table wk_table(const struct worker *w)
{
    return (struct worker_decide_table){.index = w->index,
                                        .n_workers = w->srv->n_workers,
                                        .by_local = w->by_local,
                                        .max_local_peers = w->srv->max_local_peers};
}

/* A packet for peer_id's client (from the TUN device, or from another client with
 * client-to-client): send it if this worker owns that peer, else hand it to the owner. */
/* p's traffic was routed now (status "Last Ref"); one store a second at most. */
static void wk_touch_last_ref(const struct worker *w, struct peer *p)
{
    if (atomic_load_explicit(&p->last_ref_s, memory_order_relaxed) != w->wall_s) {
        atomic_store_explicit(&p->last_ref_s, w->wall_s, memory_order_relaxed);
    }
}

static void wk_deliver(struct worker *w, uint32_t peer_id, struct pbuf *pkt, int family,
                       bool is_from_client)
{
    struct server *srv = w->srv;
    const struct worker_decide_table t = wk_table(w);
    struct peer *p = NULL;
    int owner;

    switch (worker_decide_deliver(&t, peer_id, &owner, &p)) {
    case WORKER_DELIVER_HAND_OVER: {
        struct msg *m = msg_pool_take(&w->pool, MSG_PACKET, pbuf_ptr(pkt), pkt->len);

        /* A client's packet for another worker's client is not a steering miss. */
        if (!is_from_client) {
            stat_inc(&w->stats.handed_over);
        }
        if (!m) {
            wk_drop(w, &w->stats.drop_handover, NULL, "hand-over refused: the owner is behind");
            return;
        }
        m->from_tun = true;
        server_post_worker(srv, owner, m);
        return;
    }
    case WORKER_DELIVER_NOT_INSTALLED:
        wk_drop(w, &w->stats.drop_no_route, NULL, "client not installed yet");
        return;
    case WORKER_DELIVER_SEND:
        break;
    }
    if (family == 4) {
        mss_clamp_ipv4(pbuf_ptr(pkt), pkt->len, srv->mss_max);
    } else {
        mss_clamp_ipv6(pbuf_ptr(pkt), pkt->len, srv->mss_max);
    }
    wk_touch_last_ref(w, p);
    wk_send_to_peer(w, p, pkt);
}

static bool wk_is_multicast(int family, const uint8_t *a)
{
    return family == 4 ? (a[0] & 0xF0) == 0xE0 || load_be32(a) == 0xFFFFFFFFu : a[0] == 0xFF;
}

/* A packet read from the TUN device (or handed over by another worker): route it to its peer. */
static void wk_route_tun_packet(struct worker *w, struct pbuf *pkt)
{
    const uint8_t *src, *dst;
    int family = wk_ip_addrs(pbuf_ptr(pkt), pkt->len, &src, &dst);
    uint32_t peer_id;

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
    wk_deliver(w, peer_id, pkt, family, false);
}

static bool is_ipv6_link_local(const uint8_t *a)
{
    return a[0] == 0xFE && (a[1] & 0xC0) == 0x80;
}

static void handle_plaintext(struct worker *w, struct peer *p, struct pbuf *pkt)
{
    uint8_t *plain = pbuf_ptr(pkt);
    size_t len = pkt->len;
    const uint8_t *src, *dst;
    enum occ_type occ;
    uint32_t to;
    int family;

    if (occ_is_ping(plain, len)) {
        return;
    }
    if (occ_parse(plain, len, &occ) == 0) {
        if (occ == OCC_EXIT) {
            log_msg(LOG_INFO, "peer %u %s: client sent explicit exit notify", p->peer_id,
                    p->common_name);
            wk_forget_peer(w, p, GONE_EXIT);
        }
        return;
    }
    family = wk_ip_addrs(plain, len, &src, &dst);
    if (family == 0) {
        stat_inc(&w->stats.drop_not_ip);
        return;
    }
    /* Like openvpn's "bad source address" (multi.c, multi_process_incoming_link): a client may
     * only send from its own addresses and the subnets routed to it. */
    if (!(family == 4 && load_be32(src) == p->vaddr) &&
        wk_route_lookup(w, family, src) != p->peer_id) {
        if (family == 6 && is_ipv6_link_local(src)) {
            stat_inc(&w->stats.drop_link_local); /* router solicitations and the like */
            return;
        }
        wk_drop(w, &w->stats.drop_bad_source, &p->remote, "bad source address in tunnel packet");
        return;
    }
    wk_touch_last_ref(w, p);
    if (w->srv->cfg->client_to_client && !wk_is_multicast(family, dst)) {
        to = wk_route_lookup(w, family, dst);
        if (worker_decide_c2c(true, false, to, p->peer_id)) {
            stat_inc(&w->stats.client_to_client);
            wk_deliver(w, to, pkt, family, true);
            return;
        }
    }
    if (family == 4) {
        mss_clamp_ipv4(plain, len, w->srv->mss_max);
    } else {
        mss_clamp_ipv6(plain, len, w->srv->mss_max);
    }
    if (w->has_vnet_hdr) {
        tcp_gro_add(&w->gro, plain, len); /* written by wk_tun_write_offload, at the latest when
                                           * the callback ends (wk_flush_out) */
    } else if (write(w->tun_fd, plain, len) < 0) {
        wk_drop(w, &w->stats.drop_send, &p->remote, "TUN write failed");
    }
}

/* tcp_gro's output: one packet for the TUN device, behind its virtio_net_hdr. */
static void wk_tun_write_offload(void *ctx, const struct vnet_hdr *h, const uint8_t *pkt,
                                 size_t len)
{
    struct worker *w = ctx;
    uint8_t hdr[VNET_HDR_LEN];
    struct iovec iov[2] = {{hdr, sizeof(hdr)}, {(void *)(uintptr_t)pkt, len}};

    vnet_hdr_put(hdr, h);
    if (writev(w->tun_fd, iov, 2) < 0) {
        wk_drop(w, &w->stats.drop_send, NULL, "TUN write failed");
        return;
    }
    if (h->gso_type != VNET_GSO_NONE) {
        stat_inc(&w->stats.tun_gro_writes);
        stat_add(&w->stats.tun_gro_segments,
                 (len - h->hdr_len + h->gso_size - 1) / (h->gso_size ? h->gso_size : 1));
    }
}

/* End of a callback: send the queued datagrams and write the coalesced TUN packets. */
static void wk_flush_out(struct worker *w)
{
    wk_tx_flush(w);
    if (w->has_vnet_hdr) {
        tcp_gro_flush(&w->gro);
    }
}

/* An authenticated, fresh datagram of p came from `from`, not from p->remote: a NAT rebinding,
 * a roaming laptop, or a copy of one of the client's datagrams sent from another address. The
 * acceptor decides whether the session floats there, since it knows every session's address
 * (acceptor.c handle_float: not onto an address another client uses, as openvpn 2.6's
 * multi_process_float); until it says yes (MSG_FLOAT_OK) the datagrams from `from` are dropped
 * and counted. is_ask: worker_decide_float_should_ask() said to ask now (once per
 * WORKER_DECIDE_FLOAT_ASK_MS, about a refused address once per WORKER_DECIDE_FLOAT_RETRY_MS).
 * Worker thread; the message comes from the worker's pool (no allocation). */
static void ask_float(struct worker *w, struct peer *p, const union udp_addr *from, bool is_ask)
{
    struct msg *m;

    stat_inc(&w->stats.drop_float);
    if (!is_ask) {
        return;
    }
    m = msg_pool_take(&w->pool, MSG_FLOAT, NULL, 0);
    if (!m) {
        return; /* pool empty: asked again at the next datagram */
    }
    m->peer = p;
    m->peer_id = p->peer_id;
    m->from = *from;
    worker_decide_float_asked(p, from, uv_now(&w->loop));
    server_post_acceptor(w->srv, m);
}

/* The acceptor's answer about p's float to `to` (MSG_FLOAT_OK or MSG_FLOAT_NO). */
static void wk_float_answered(struct worker *w, struct peer *p, const union udp_addr *to,
                              bool is_ok)
{
    char old_addr[64], new_addr[64];
    union udp_addr old;

    if (worker_decide_float_answer(p, to, is_ok, uv_now(&w->loop), &old)) {
        log_msg(LOG_INFO, "peer %u %s: floated from %s to %s", p->peer_id, p->common_name,
                udp_addr_str(&old, old_addr, sizeof(old_addr)),
                udp_addr_str(to, new_addr, sizeof(new_addr)));
    }
}

/* A datagram that the kernel steered to this worker. */
static void wk_handle_datagram(struct worker *w, const uint8_t *pkt, size_t len,
                               const union udp_addr *from)
{
    struct server *srv = w->srv;
    const struct worker_decide_table t = wk_table(w);
    /* Decrypted behind COMP_HEADROOM bytes: with client-to-client the payload may be framed
     * again for another client in this buffer. */
    uint8_t plain[COMP_HEADROOM + WORKER_BUF_LEN];
    struct worker_rx_out out = {0};
    struct pbuf payload;
    struct msg *m;
    struct peer *p;

    switch (worker_decide_rx(&t, pkt, len, from, plain + COMP_HEADROOM, WORKER_BUF_LEN,
                             uv_now(&w->loop), &out)) {
    case WORKER_RX_DROP_EMPTY:
        wk_drop(w, &w->stats.drop_short, from, "empty datagram");
        return;
    case WORKER_RX_TO_ACCEPTOR:
        m = msg_pool_take(&w->pool, MSG_PACKET, pkt, len); /* control, or V1: acceptor's */
        stat_inc(&w->stats.handed_over);
        if (!m) {
            wk_drop(w, &w->stats.drop_handover, from, "hand-over refused: the acceptor is behind");
            return;
        }
        m->from = *from;
        server_post_acceptor(srv, m);
        return;
    case WORKER_RX_DROP_SHORT:
        wk_drop(w, &w->stats.drop_short, from, "P_DATA_V2 shorter than its header");
        return;
    case WORKER_RX_HAND_OVER:
        m = msg_pool_take(&w->pool, MSG_PACKET, pkt, len);
        stat_inc(&w->stats.handed_over);
        if (!m) {
            wk_drop(w, &w->stats.drop_handover, from, "hand-over refused: the owner is behind");
            return;
        }
        m->from = *from;
        server_post_worker(srv, out.owner, m);
        return;
    case WORKER_RX_DROP_UNKNOWN_PEER:
        wk_drop(w, &w->stats.drop_unknown_peer, from, "unknown peer-id");
        return;
    case WORKER_RX_DROP_NO_KEY:
        wk_drop(w, &w->stats.drop_no_key, from, "no key for key_id");
        return;
    case WORKER_RX_DROP_REPLAY:
        wk_drop(w, &w->stats.drop_replay, from, proto_strerror(out.err));
        return;
    case WORKER_RX_DROP_AUTH:
        wk_drop(w, &w->stats.drop_auth, from, proto_strerror(out.err));
        return;
    case WORKER_RX_FLOAT:
        ask_float(w, out.peer, from, out.is_float_ask);
        return;
    case WORKER_RX_ACCEPT:
        break;
    }
    p = out.peer;
    payload = pbuf_make(plain, sizeof(plain), COMP_HEADROOM, out.plain_len);
    if (comp_unframe(p->framing, &payload)) {
        wk_drop(w, &w->stats.drop_compressed, from,
                "compressed or badly framed payload (ovpnd pushed stub framing, no compression)");
        return;
    }
    stat_inc(&w->stats.rx_packets);
    stat_add(&w->stats.rx_bytes, len);
    p->last_rx_ms = uv_now(&w->loop);
    if (out.k == p->pending_tx_key) {
        /* The client sends with the renegotiated key, so it has it: switch ours too. */
        p->tx_key = out.k;
        p->pending_tx_key = NULL;
        p->is_reneg_requested = false;
    }
    atomic_store_explicit(&p->bytes_rx,
                          atomic_load_explicit(&p->bytes_rx, memory_order_relaxed) + len,
                          memory_order_relaxed);
    handle_plaintext(w, p, &payload);
}

/* Receive and handle what waits on the UDP socket (at most 4 batches). Returns the number of
 * datagrams. */
static unsigned wk_udp_drain(struct worker *w)
{
    struct mmsghdr msgs[WORKER_BATCH];
    struct iovec iov[WORKER_BATCH];
    union udp_addr from[WORKER_BATCH];
    unsigned total = 0;

    for (int round = 0; round < 4; round++) {
        int n;

        for (int i = 0; i < WORKER_BATCH; i++) {
            iov[i].iov_base = w->rx_bufs[i];
            iov[i].iov_len = WORKER_BUF_LEN;
            memset(&msgs[i].msg_hdr, 0, sizeof(msgs[i].msg_hdr));
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
            msgs[i].msg_hdr.msg_name = &from[i];
            msgs[i].msg_hdr.msg_namelen = sizeof(from[i]);
        }
        n = recvmmsg(w->udp_fd, msgs, WORKER_BATCH, MSG_DONTWAIT, NULL);
        if (n <= 0) {
            return total;
        }
        total += (unsigned)n;
        for (int i = 0; i < n; i++) {
            if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
                wk_drop(w, &w->stats.drop_short, &from[i], "datagram larger than the buffer");
                continue;
            }
            wk_handle_datagram(w, w->rx_bufs[i], msgs[i].msg_len, &from[i]);
        }
        if (n < WORKER_BATCH) {
            return total;
        }
    }
    return total;
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
        wk_route_tun_packet(w, &b);
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
        wk_route_tun_packet(w, &b);
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
        wk_route_tun_packet(w, &b);
    }
    return i;
}

static void on_udp(uv_poll_t *h, int status, int events);

/* Switch between waking for every datagram (the socket's readiness) and polling the socket every
 * moderation_us microseconds (a periodic timerfd), like a NIC's interrupt moderation or NAPI:
 * under load each wakeup then handles a batch, which recvmmsg, UDP GSO and the TCP coalescing
 * for the TUN device need, instead of a datagram or two. */
static void set_polling(struct worker *w, bool on)
{
    struct itimerspec its;

    memset(&its, 0, sizeof(its));
    if (on) {
        its.it_value.tv_nsec = (long)w->moderation_us * 1000;
        its.it_interval = its.it_value;
        if (timerfd_settime(w->moderation_fd, 0, &its, NULL) < 0) {
            return; /* stay event-driven */
        }
        uv_poll_stop(&w->udp_poll);
        stat_inc(&w->stats.polling_entered);
    } else {
        timerfd_settime(w->moderation_fd, 0, &its, NULL);
        uv_poll_start(&w->udp_poll, UV_READABLE, on_udp);
    }
    w->is_polling = on;
}

/* A datagram wakeup found n datagrams: go polling when they come faster than two moderation
 * periods apart. */
static void on_udp(uv_poll_t *h, int status, int events)
{
    struct worker *w = h->data;
    unsigned n = status < 0 ? 0 : wk_udp_drain(w);
    uint64_t now;

    (void)events;
    wk_flush_out(w);
    if (w->moderation_us == 0) {
        return;
    }
    now = uv_hrtime() / 1000u;
    if (n > 1 || now - w->last_wakeup_us < 2 * (uint64_t)w->moderation_us) {
        set_polling(w, true);
    }
    w->last_wakeup_us = now;
}

/* The TUN queue stays event-driven: a read is a super-packet of up to 45 segments already, and
 * delaying it would only let the device's queue grow. */
static void wk_on_tun(uv_poll_t *h, int status, int events)
{
    (void)events;
    if (status >= 0) {
        tun_drain(h->data);
    }
    wk_flush_out(h->data);
}

/* A polling period ended: drain the socket; back to event-driven when it was empty. */
static void on_moderation(uv_poll_t *h, int status, int events)
{
    struct worker *w = h->data;
    uint64_t expirations;
    unsigned n;

    (void)events;
    if (read(w->moderation_fd, &expirations, sizeof(expirations)) < 0 || status < 0 ||
        !w->is_polling) {
        return;
    }
    n = wk_udp_drain(w);
    wk_flush_out(w);
    if (n == 0) {
        set_polling(w, false);
        w->last_wakeup_us = uv_hrtime() / 1000u;
    }
}

static void install_peer(struct worker *w, struct peer *p)
{
    struct server *srv = w->srv;
    size_t local = peer_id_local(p->peer_id, srv->n_workers);
    struct msg *m;

    if (local >= srv->max_local_peers ||
        (p->pool_index != SIZE_MAX && p->pool_index >= srv->n_addr_owner)) {
        log_msg(LOG_ERR, "worker %d: peer %u out of table range", w->index, p->peer_id);
        wk_forget_peer(w, p, GONE_REMOVED);
        return;
    }
    w->by_local[local] = p;
    atomic_store_explicit(&w->stats.sessions, stat_get(&w->stats.sessions) + 1,
                          memory_order_relaxed);
    p->last_rx_ms = p->last_tx_ms = uv_now(&w->loop);
    p->is_installed = true;
    m = msg_new(MSG_INSTALLED, p, NULL, 0);
    if (m) {
        server_post_acceptor(srv, m);
    }
}

/* A renegotiated key from the acceptor: receive with it at once, send with it once the client
 * does (or after hand-window at the latest, as 2.6's send-key choice does; at once when the
 * current key was retired already), and drop the key before the current one. */
static void install_key(struct worker *w, struct peer *p, const struct data_key *nk)
{
    worker_decide_install_key(p, nk, uv_now(&w->loop));
}

static void on_tick(uv_timer_t *t)
{
    struct worker *w = t->data;
    struct server *srv = w->srv;
    uint64_t now = uv_now(&w->loop);

    w->wall_s = (int64_t)time(NULL);
    /* Forget the path-MTU limit on GSO after a while: it is the smallest of every client's,
     * and paths change; a client still behind a small MTU costs one refused send a minute. */
    if (w->gso_seg_limit != SIZE_MAX && ++w->gso_limit_ticks >= GSO_LIMIT_TICKS) {
        w->gso_seg_limit = SIZE_MAX;
    }

    for (size_t i = 0; i < srv->max_local_peers; i++) {
        struct peer *p = w->by_local[i];

        if (!p) {
            continue;
        }
        if (p->pending_tx_key &&
            now - p->pending_since_ms >= (uint64_t)srv->cfg->hand_window_s * 1000) {
            p->tx_key = p->pending_tx_key;
            p->pending_tx_key = NULL;
            p->is_reneg_requested = false;
        }
        if (srv->ping_restart_s > 0 &&
            now - p->last_rx_ms >= (uint64_t)srv->ping_restart_s * 1000) {
            log_msg(LOG_INFO, "peer %u %s: no packet for %d s (ping-restart), dropping client",
                    p->peer_id, p->common_name, srv->ping_restart_s);
            wk_forget_peer(w, p, GONE_PING_TIMEOUT);
            continue;
        }
        if (srv->ping_s > 0 && now - p->last_tx_ms >= (uint64_t)srv->ping_s * 1000) {
            uint8_t ping[COMP_HEADROOM + sizeof(occ_ping_magic)];
            struct pbuf b = pbuf_make(ping, sizeof(ping), COMP_HEADROOM, sizeof(occ_ping_magic));

            memcpy(pbuf_ptr(&b), occ_ping_magic, sizeof(occ_ping_magic));
            wk_send_to_peer(w, p, &b);
        }
    }
    wk_tx_flush(w);
}

static void stop_loop(struct worker *w)
{
    uv_poll_stop(&w->udp_poll);
    uv_poll_stop(&w->tun_poll);
    uv_timer_stop(&w->tick);
    uv_close((uv_handle_t *)&w->udp_poll, NULL);
    uv_close((uv_handle_t *)&w->tun_poll, NULL);
    if (w->moderation_fd >= 0) {
        uv_poll_stop(&w->moderation_poll);
        uv_close((uv_handle_t *)&w->moderation_poll, NULL);
    }
    uv_close((uv_handle_t *)&w->tick, NULL);
    uv_close((uv_handle_t *)&w->async, NULL);
}

/* Whether m's peer is one this worker carries now, decided without touching the peer, which
 * may be freed already (see peer.h). */
static bool owns(const struct worker *w, const struct msg *m)
{
    size_t local = peer_id_local(m->peer_id, w->srv->n_workers);

    return local < w->srv->max_local_peers && w->by_local[local] == m->peer;
}

static void on_async(uv_async_t *a)
{
    struct worker *w = a->data;
    struct msgq_node *n;

    while ((n = msgq_pop(&w->inbox)) != NULL) {
        struct msg *m = (struct msg *)n;

        switch (m->type) {
        case MSG_INSTALL:
            install_peer(w, m->peer);
            break;
        case MSG_NEW_KEY:
            if (owns(w, m) && m->len == sizeof(struct data_key)) {
                struct data_key nk;

                memcpy(&nk, m->data, sizeof(nk));
                install_key(w, m->peer, &nk);
            } else if (m->len == sizeof(struct data_key)) {
                data_key_clear((struct data_key *)(void *)m->data);
            }
            break;
        case MSG_REMOVE:
            if (owns(w, m)) {
                wk_forget_peer(w, m->peer, GONE_REMOVED);
            }
            break;
        case MSG_FLOAT_OK:
        case MSG_FLOAT_NO:
            if (owns(w, m)) {
                wk_float_answered(w, m->peer, &m->from, m->type == MSG_FLOAT_OK);
            }
            break;
        case MSG_KEY_RETIRE:
            if (owns(w, m) && m->len == 1) {
                worker_decide_retire_key(m->peer, m->data[0]);
            }
            break;
        case MSG_PACKET:
            if (m->from_tun) {
                if (m->len <= WORKER_BUF_LEN - COMP_HEADROOM) {
                    struct pbuf b = pbuf_make(w->rx_bufs[0], WORKER_BUF_LEN, COMP_HEADROOM, m->len);

                    memcpy(pbuf_ptr(&b), m->data, m->len);
                    wk_route_tun_packet(w, &b);
                }
            } else {
                wk_handle_datagram(w, m->data, m->len, &m->from);
            }
            break;
        case MSG_ROUTE_ADD:
            if (m->len == sizeof(struct vroute_key) &&
                vroute_add(&w->routes, (const struct vroute_key *)(void *)m->data, m->peer_id)) {
                log_msg(LOG_ERR, "worker %d: out of memory for a route of peer %u", w->index,
                        m->peer_id);
            }
            break;
        case MSG_ROUTE_DEL:
            if (m->len == sizeof(struct vroute_key)) {
                vroute_del(&w->routes, (const struct vroute_key *)(void *)m->data, m->peer_id);
            }
            break;
        case MSG_STATS:
            worker_stats_log(&w->stats, w->index);
            break;
        case MSG_STOP:
            worker_stats_log(&w->stats, w->index);
            stop_loop(w);
            break;
        default:
            break;
        }
        msg_free(m);
    }
    wk_flush_out(w);
}

int worker_init(struct worker *w, struct server *srv, int i)
{
    int err;

    memset(w, 0, sizeof(*w));
    w->index = i;
    w->srv = srv;
    w->udp_fd = srv->udp_fds[1 + i];
    w->tun_fd = srv->tun.fds[i];
    /* OVPND_UDP_GSO=off: one datagram per send, as without kernel support (for comparison). */
    w->is_gso_ok = srv->udp_gso;
    w->gso_seg_limit = SIZE_MAX;
    w->wall_s = (int64_t)time(NULL);
    w->moderation_us = srv->moderation_us;
    w->moderation_fd = -1;
    msgq_init(&w->inbox);
    vroute_table_init(&w->routes);
    w->by_local = calloc(srv->max_local_peers, sizeof(*w->by_local));
    if (!w->by_local || msg_pool_init(&w->pool, WORKER_POOL_MSGS, WORKER_BUF_LEN)) {
        return -ENOMEM;
    }
    w->has_vnet_hdr = srv->tun.has_vnet_hdr;
    if (w->has_vnet_hdr) {
        w->tun_buf = malloc(COMP_HEADROOM + TUN_READ_LEN);
        if (!w->tun_buf || tcp_gro_init(&w->gro, wk_tun_write_offload, w)) {
            return -ENOMEM;
        }
    }
    err = uv_loop_init(&w->loop);
    if (err) {
        return err;
    }
    err = uv_async_init(&w->loop, &w->async, on_async);
    err = err ? err : uv_poll_init(&w->loop, &w->udp_poll, w->udp_fd);
    err = err ? err : uv_poll_init(&w->loop, &w->tun_poll, w->tun_fd);
    err = err ? err : uv_timer_init(&w->loop, &w->tick);
    if (err) {
        return err;
    }
    w->async.data = w->udp_poll.data = w->tun_poll.data = w->tick.data = w;
    if (!err && w->moderation_us > 0) {
        w->moderation_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        if (w->moderation_fd < 0) {
            return -errno;
        }
        err = uv_poll_init(&w->loop, &w->moderation_poll, w->moderation_fd);
        w->moderation_poll.data = w;
        err = err ? err : uv_poll_start(&w->moderation_poll, UV_READABLE, on_moderation);
    }
    err = err ? err : uv_poll_start(&w->udp_poll, UV_READABLE, on_udp);
    err = err ? err : uv_poll_start(&w->tun_poll, UV_READABLE, wk_on_tun);
    err = err ? err : uv_timer_start(&w->tick, on_tick, WORKER_TICK_MS, WORKER_TICK_MS);
    return err;
}

static void worker_main(void *arg)
{
    struct worker *w = arg;
    char name[16]; /* the kernel keeps 15 characters */

    snprintf(name, sizeof(name), "ovpnd-worker-%d", w->index);
    pthread_setname_np(pthread_self(), name); /* for top -H, ps -L, debuggers */
    uv_run(&w->loop, UV_RUN_DEFAULT);
}

int worker_start(struct worker *w)
{
    return uv_thread_create(&w->thread, worker_main, w);
}

void worker_join(struct worker *w)
{
    struct msgq_node *n;

    uv_thread_join(&w->thread);
    /* Messages that arrived after MSG_STOP: nothing will act on them any more. */
    while ((n = msgq_pop(&w->inbox)) != NULL) {
        struct msg *m = (struct msg *)n;

        if (m->type == MSG_NEW_KEY && m->len == sizeof(struct data_key)) {
            data_key_clear((struct data_key *)(void *)m->data);
        }
        msg_free(m);
    }
    uv_loop_close(&w->loop);
    if (w->moderation_fd >= 0) {
        close(w->moderation_fd);
        w->moderation_fd = -1;
    }
    if (w->has_vnet_hdr) {
        tcp_gro_free(&w->gro);
        free(w->tun_buf);
        w->tun_buf = NULL;
    }
    free(w->by_local);
    vroute_table_free(&w->routes);
    w->by_local = NULL;
}

void worker_post(struct worker *w, struct msg *m)
{
    msgq_push(&w->inbox, &m->node);
    uv_async_send(&w->async);
}
