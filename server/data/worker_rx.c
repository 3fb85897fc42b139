/* server/data/worker_rx.c: what a worker receives on its UDP socket: datagrams drained in batches
 * (wk_udp_drain), each decided (worker_decide.h), opened and checked, its payload sent on to
 * the TUN device or, with client-to-client, to another client; the rest handed to the acceptor
 * or the owning worker. Also the floats: asking the acceptor about a new source address and
 * taking its answer. What a datagram goes through is kept in this one file so that the compiler
 * inlines it into wk_handle_datagram (handle_plaintext, ask_float, the helpers in
 * worker_internal.h); wk_route_lookup and wk_deliver (worker_tun.c) were calls before the split
 * too. Worker thread only; no lock, no allocation. */
#include "server/data/worker_internal.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "proto/client_nat.h"
#include "proto/comp.h"
#include "proto/cursor.h"
#include "proto/errors.h"
#include "proto/fragment.h"
#include "proto/mss.h"
#include "proto/occ.h"
#include "proto/pbuf.h"

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
    if (w->env->is_tap) {
        wk_tap_from_client(w, p, pkt);
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
    wk_touch_last_ref(w, p, len);
    /* clamped with the sender's limit before it is routed, client-to-client too (2.6
     * forward.c, process_incoming_link_part2) */
    if (family == 4) {
        mss_clamp_ipv4(plain, len, p->mss_max);
    } else {
        mss_clamp_ipv6(plain, len, p->mss_max);
    }
    if (w->env->cfg->net.client_to_client && !wk_is_multicast(family, dst)) {
        to = wk_route_lookup(w, family, dst);
        if (worker_decide_c2c(true, false, to, p->peer_id)) {
            stat_inc(&w->stats.client_to_client);
            wk_deliver(w, to, pkt, family, true);
            return;
        }
    }
    if (family == 4) { /* 2.6 process_outgoing_tun: only what goes to the TUN device */
        (void)client_nat_apply(w->env->cfg->net.client_nat, plain, len, CLIENT_NAT_INCOMING);
    }
    if (w->has_vnet_hdr) {
        tcp_gro_add(&w->gro, plain, len); /* written by wk_tun_write_offload, at the latest when
                                           * the callback ends (wk_flush_out) */
    } else if (write(w->tun_fd, plain, len) < 0) {
        wk_drop(w, &w->stats.drop_tun_write, &p->remote, "TUN write failed");
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
    mailbox_post(w->env->mb, MAILBOX_ACCEPTOR, m);
}

/* The acceptor's answer about p's float to `to` (MSG_FLOAT_OK or MSG_FLOAT_NO). */
void wk_float_answered(struct worker *w, struct peer *p, const union udp_addr *to, bool is_ok)
{
    char old_addr[64], new_addr[64];
    union udp_addr old;

    if (worker_decide_float_answer(p, to, is_ok, uv_now(&w->loop), &old)) {
        log_msg(LOG_INFO, "peer %u %s: floated from %s to %s", p->peer_id, p->common_name,
                udp_addr_str(&old, old_addr, sizeof(old_addr)),
                udp_addr_str(to, new_addr, sizeof(new_addr)));
    }
}

/* An authenticated datagram of p (len bytes, opened with key k): counted, and it keeps the
 * session alive; the client sending with the renegotiated key switches ours too. */
static inline void count_rx(struct worker *w, struct peer *p, struct data_key *k, size_t len)
{
    stat_inc(&w->stats.rx_packets);
    stat_add(&w->stats.rx_bytes, len);
    p->last_rx_ms = uv_now(&w->loop);
    if (w->rx_local.family != 0) {
        p->local = w->rx_local; /* multihome: replies leave from where this one arrived */
    }
    if (k == p->pending_tx_key) {
        /* The client sends with the renegotiated key, so it has it: switch ours too. */
        p->tx_key = k;
        p->pending_tx_key = NULL;
        p->is_reneg_requested = false;
    }
    atomic_store_explicit(&p->bytes_rx,
                          atomic_load_explicit(&p->bytes_rx, memory_order_relaxed) + len,
                          memory_order_relaxed);
    k->n_packets++;
    k->n_bytes += len;
    if (k == p->tx_key) {
        wk_check_reneg(w, p);
    }
}

/* `fragment`: the header in front of p's decrypted payload (after decryption, before
 * decompression, as 2.6 forward.c process_incoming_link_part2). Returns 0 when payload now
 * holds a whole packet (the datagram's, or one this piece completed, in p->frag's buffers), 1
 * when a piece was kept and there is nothing to deliver yet, -1 when the datagram was dropped
 * (counted and logged). */
static int unfragment(struct worker *w, struct peer *p, struct pbuf *payload,
                      const union udp_addr *from)
{
    struct fragment_rx_info info;
    int rc = fragment_rx(p->frag, payload, uv_now(&w->loop), &info);

    stat_add(&w->stats.frag_abandoned, info.n_abandoned);
    if (rc < 0) {
        wk_drop(w, &w->stats.drop_frag, from,
                rc == -PE_NOSPACE ? "fragment reaching past the reassembly buffer"
                : rc == -PE_SHORT ? "no fragment header (is fragment set on the client?)"
                                  : "bad fragment header or size");
        return -1;
    }
    if (info.is_piece) {
        stat_inc(&w->stats.frag_rx_pieces);
        if (rc == 0) {
            stat_inc(&w->stats.frag_rx_packets);
        }
    }
    return rc;
}

/* Act on worker_decide_rx*()'s verdict about pkt (len bytes from `from`), whose plaintext, if
 * any, is in plain (plain_size bytes, the payload behind COMP_HEADROOM). */
static inline void handle_verdict(struct worker *w, enum worker_rx verdict,
                                  struct worker_rx_out *out_p, const uint8_t *pkt, size_t len,
                                  const union udp_addr *from, uint8_t *plain, size_t plain_size)
{
    const struct worker_env *env = w->env;
    struct worker_rx_out out = *out_p;
    struct pbuf payload;
    struct msg *m;
    struct peer *p;

    switch (verdict) {
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
        mailbox_post(env->mb, MAILBOX_ACCEPTOR, m);
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
        mailbox_post(env->mb, out.owner, m);
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
    payload = pbuf_make(plain, plain_size, COMP_HEADROOM, out.plain_len);
    if (p->frag) {
        int rc = unfragment(w, p, &payload, from);

        if (rc != 0) {
            if (rc == 1) {
                count_rx(w, p, out.k, len);
            }
            return;
        }
    }
    /* A compressed payload is decompressed into the worker's comp_rx, bounded by its size. */
    switch (comp_unframe(p->comp.framing, &payload, w->comp_rx, sizeof(w->comp_rx))) {
    case 0:
        if (payload.data == w->comp_rx) {
            stat_inc(&w->stats.comp_rx);
        }
        break;
    case -PE_UNSUPPORTED:
        wk_drop(w, &w->stats.drop_compressed, from,
                "compressed payload, but compression from this client is not accepted");
        return;
    default:
        wk_drop(w, &w->stats.drop_comp_malformed, from,
                "bad compression framing, or compressed data that does not decompress within "
                "the buffer");
        return;
    }
    count_rx(w, p, out.k, len);
    handle_plaintext(w, p, &payload);
}

/* A datagram that the kernel steered to this worker. */
void wk_handle_datagram(struct worker *w, const uint8_t *pkt, size_t len,
                        const union udp_addr *from)
{
    const struct worker_decide_table t = wk_table(w);
    /* Decrypted behind COMP_HEADROOM bytes: with client-to-client the payload may be framed
     * again for another client in this buffer. */
    uint8_t plain[COMP_HEADROOM + WORKER_BUF_LEN];
    struct worker_rx_out out = {0};
    enum worker_rx verdict = worker_decide_rx(&t, pkt, len, from, plain + COMP_HEADROOM,
                                              WORKER_BUF_LEN, uv_now(&w->loop), &out);

    handle_verdict(w, verdict, &out, pkt, len, from, plain, sizeof(plain));
}

void wk_handle_data_v1(struct worker *w, uint32_t peer_id, const uint8_t *pkt, size_t len,
                       const union udp_addr *from)
{
    const struct worker_decide_table t = wk_table(w);
    uint8_t plain[COMP_HEADROOM + WORKER_BUF_LEN];
    struct worker_rx_out out = {0};
    enum worker_rx verdict = worker_decide_rx_v1(&t, peer_id, pkt, len, from, plain + COMP_HEADROOM,
                                                 WORKER_BUF_LEN, &out);

    handle_verdict(w, verdict, &out, pkt, len, from, plain, sizeof(plain));
}

/* Receive and handle what waits on the UDP socket (at most 4 batches). Returns the number of
 * datagrams; counts them into b (moderation_count) as well. */
unsigned wk_udp_drain(struct worker *w, struct moderation_batch *b)
{
    struct mmsghdr msgs[WORKER_BATCH];
    struct iovec iov[WORKER_BATCH];
    union udp_addr from[WORKER_BATCH];
    union {
        struct cmsghdr align;
        uint8_t buf[UDP_PKTINFO_SPACE];
    } ctrl[WORKER_BATCH];
    bool is_multihome = w->env->cfg->net.multihome;
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
            if (is_multihome) {
                msgs[i].msg_hdr.msg_control = ctrl[i].buf;
                msgs[i].msg_hdr.msg_controllen = sizeof(ctrl[i].buf);
            }
        }
        n = recvmmsg(w->udp_fd, msgs, WORKER_BATCH, MSG_DONTWAIT, NULL);
        if (n <= 0) {
            if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                stat_inc(&w->stats.udp_recv_errors);
            }
            return total;
        }
        total += (unsigned)n;
        for (int i = 0; i < n; i++) {
            moderation_count(&w->mod, b, msgs[i].msg_len);
            if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
                wk_drop(w, &w->stats.drop_short, &from[i], "datagram larger than the buffer");
                continue;
            }
            if (is_multihome) {
                udp_pktinfo_read(&msgs[i].msg_hdr, &w->rx_local);
            }
            wk_handle_datagram(w, w->rx_bufs[i], msgs[i].msg_len, &from[i]);
            w->rx_local.family = 0; /* handed-over datagrams do not say */
        }
        if (n < WORKER_BATCH) {
            return total;
        }
    }
    return total;
}
