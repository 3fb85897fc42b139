/* server/data/worker_tx.c: a worker's UDP send path (a TCP client's packets are sealed into its
 * connection's queue instead, worker_tcp.c): a packet for a client is framed, sealed and
 * queued (wk_send_to_peer), and the queue leaves at the end of every callback in as few
 * sendmmsg() calls as the kernel allows, runs to one client with one size as one UDP GSO send
 * (wk_tx_flush). Worker thread only; no lock, no allocation. */
#include "server/data/worker_internal.h"

#include <errno.h>
#include <string.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "proto/comp.h"
#include "proto/data_crypto.h"
#include "proto/errors.h"
#include "proto/fragment.h"
#include "proto/pbuf.h"
#include "proto/tos.h"

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
#define GSO_MAX_BYTES 60000 /* under the 64 KiB an IP datagram (the unsegmented one) holds */

/* One GSO message for tx slots [first, first + n): the same destination, every datagram of
 * size seg except perhaps a shorter last one (the kernel's rule for UDP_SEGMENT). */
static void gso_msg(struct worker *w, unsigned k, unsigned first, unsigned n, uint16_t seg)
{
    struct mmsghdr *mh = &w->gso_msgs[k];
    struct cmsghdr *cm;

    uint8_t *ctrl = w->gso_ctrl[k].buf;
    size_t used = 0;

    memset(mh, 0, sizeof(*mh));
    mh->msg_hdr.msg_name = &w->tx_addr[first];
    mh->msg_hdr.msg_namelen = udp_addr_len(&w->tx_addr[first]);
    mh->msg_hdr.msg_iov = &w->tx_iov[first];
    mh->msg_hdr.msg_iovlen = n;
    w->gso_first[k] = first;
    mh->msg_hdr.msg_control = ctrl;
    mh->msg_hdr.msg_controllen = sizeof(w->gso_ctrl[k].buf);
    if (n >= 2) {
        cm = CMSG_FIRSTHDR(&mh->msg_hdr);
        cm->cmsg_level = SOL_UDP;
        cm->cmsg_type = UDP_SEGMENT;
        cm->cmsg_len = CMSG_LEN(sizeof(seg));
        memcpy(CMSG_DATA(cm), &seg, sizeof(seg));
        used = CMSG_SPACE(sizeof(seg));
    }
    used += udp_pktinfo_write(&w->tx_local[first], ctrl + used, sizeof(w->gso_ctrl[k].buf) - used);
    used += udp_tos_write(&w->tx_addr[first], w->tx_tos[first], ctrl + used,
                          sizeof(w->gso_ctrl[k].buf) - used);
    mh->msg_hdr.msg_controllen = used;
    if (used == 0) {
        mh->msg_hdr.msg_control = NULL;
    }
}

/* multihome: whether two slots leave from the same address (one GSO send has one source). */
static bool same_local(const struct udp_local *a, const struct udp_local *b)
{
    if (a->family != b->family || a->ifindex != b->ifindex) {
        return false;
    }
    return a->family == AF_INET    ? a->addr.v4.s_addr == b->addr.v4.s_addr
           : a->family == AF_INET6 ? memcmp(&a->addr.v6, &b->addr.v6, 16) == 0
                                   : true;
}

/* Send the queued datagrams. With UDP GSO, each run of datagrams to one client with one size
 * (a bulk transfer's full-size packets) leaves as one message that the kernel segments: one
 * pass through the UDP/IP stack instead of one per datagram. Where the kernel refuses
 * UDP_SEGMENT, GSO stays off for this worker and the datagrams go one by one. */
void wk_tx_flush(struct worker *w)
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
               udp_addr_equal(&w->tx_addr[j], &w->tx_addr[i]) &&
               same_local(&w->tx_local[j], &w->tx_local[i]) && w->tx_tos[j] == w->tx_tos[i]) {
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

/* Encrypt plain (len bytes, a payload ready for the data channel) for p and queue the datagram
 * (a UDP client's in the next send batch, a TCP client's in its connection's queue). */
static void seal_and_queue(struct worker *w, struct peer *p, const uint8_t *plain, size_t len)
{
    struct mmsghdr *mh;
    size_t out_len, out_cap = sizeof(w->tx_bufs[0]);
    unsigned slot = 0;
    uint8_t *out;
    int err;

    if (p->conn) {
        /* a TCP client: sealed straight into its connection's queue (worker_tcp.c) */
        out = wk_tcp_reserve(w, p->conn, &out_cap);
        if (!out) {
            return; /* counted: tcp-queue-limit */
        }
    } else {
        if (w->n_tx == WORKER_BATCH) {
            wk_tx_flush(w);
        }
        slot = w->n_tx;
        out = w->tx_bufs[slot];
    }
    err = data_key_seal(p->tx_key, p->use_data_v2, p->peer_id, plain, len, out, out_cap, &out_len);
    if (err) {
        wk_drop(w, &w->stats.drop_send, NULL, proto_strerror(err));
        return;
    }
    if (p->conn) {
        if (w->env->cfg->net.passtos) {
            wk_tcp_set_tos(p->conn, w->tx_dscp);
        }
        wk_tcp_commit(w, p->conn, out_len);
        atomic_store_explicit(&p->bytes_tx,
                              atomic_load_explicit(&p->bytes_tx, memory_order_relaxed) + out_len,
                              memory_order_relaxed);
        stat_inc(&w->stats.tx_packets);
        stat_add(&w->stats.tx_bytes, out_len);
    } else {
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
        w->tx_local[slot] = p->local;
        w->tx_tos[slot] = w->tx_dscp;
        if (p->local.family != 0 || w->tx_dscp != 0) {
            /* multihome: from the address the client sends to; passtos: with the DSCP */
            uint8_t *ctrl = w->tx_ctrl[slot].buf;
            size_t cap = sizeof(w->tx_ctrl[slot].buf),
                   used = udp_pktinfo_write(&p->local, ctrl, cap);

            used += udp_tos_write(&w->tx_addr[slot], w->tx_dscp, ctrl + used, cap - used);
            mh->msg_hdr.msg_control = ctrl;
            mh->msg_hdr.msg_controllen = used;
        }
        w->n_tx++;
    }
    p->tx_key->n_packets++;
    p->tx_key->n_bytes += out_len;
    wk_check_reneg(w, p);
    p->last_tx_ms = uv_now(&w->loop);
}

/* `fragment`: send p's framed payload pkt with a fragment header, whole when it fits the
 * client's payload size, else cut into pieces, each sealed into a datagram of its own (after
 * compression, before encryption, as 2.6 forward.c encrypt_sign). The header of a whole packet
 * goes into pkt's headroom when there is room; pieces are made in w->frag_tx. */
static void send_fragmented(struct worker *w, struct peer *p, struct pbuf *pkt)
{
    const uint8_t *src = pbuf_ptr(pkt);
    size_t piece, len = pkt->len;
    struct fragment_header h = {FRAGMENT_WHOLE, 0, 0, 0};
    uint8_t *hdr;
    unsigned n;

    if (fragment_plan(len, fragment_max_payload_of(p->frag), &piece, &n) ||
        piece > sizeof(w->frag_tx) - FRAGMENT_HEADER_LEN) {
        wk_drop(w, &w->stats.drop_frag, &p->remote,
                "packet too long for 32 fragments of the fragment size");
        return;
    }
    if (n == 1) {
        hdr = pbuf_push(pkt, FRAGMENT_HEADER_LEN);
        if (hdr) {
            fragment_header_write(&h, hdr);
            seal_and_queue(w, p, hdr, pkt->len);
            return;
        }
        fragment_header_write(&h, w->frag_tx);
        memcpy(w->frag_tx + FRAGMENT_HEADER_LEN, src, len);
        seal_and_queue(w, p, w->frag_tx, FRAGMENT_HEADER_LEN + len);
        return;
    }
    h.seq_id = fragment_next_seq_id(p->frag);
    h.size = (uint16_t)piece;
    stat_inc(&w->stats.frag_tx_packets);
    for (unsigned i = 0; i < n; i++) {
        size_t off = (size_t)i * piece, n_bytes = i + 1 == n ? len - off : piece;

        h.type = i + 1 == n ? FRAGMENT_LAST : FRAGMENT_NOT_LAST;
        h.frag_id = (uint8_t)i;
        fragment_header_write(&h, w->frag_tx);
        memcpy(w->frag_tx + FRAGMENT_HEADER_LEN, src + off, n_bytes);
        seal_and_queue(w, p, w->frag_tx, FRAGMENT_HEADER_LEN + n_bytes);
        stat_inc(&w->stats.frag_tx_pieces);
    }
}

/* Compress or frame, encrypt and queue one payload for p (wk_tx_flush sends it, at the end of
 * the current callback at the latest). A compressed payload is made in the worker's comp_tx;
 * otherwise the framing goes into pkt's headroom (and tailroom, or one byte more headroom, for
 * the swap framing): every buffer a packet for a client travels in has COMP_HEADROOM bytes of it
 * (a packet without is dropped and counted, never framed outside its buffer). With `fragment`
 * the payload then gets its fragment header, or is cut into pieces (send_fragmented). */
void wk_send_to_peer(struct worker *w, struct peer *p, struct pbuf *pkt)
{
    int err;

    if (!p->tx_key) {
        wk_drop(w, &w->stats.drop_no_key, NULL, "no send key");
        return;
    }
    /* passtos: read before compression, for every datagram of this packet */
    w->tx_dscp =
        w->env->cfg->net.passtos ? tos_dscp_of(pbuf_ptr(pkt), pkt->len, w->env->is_tap) : 0;
    if (p->comp.is_compress && comp_compress(&p->comp, pkt, &w->comp, uv_now(&w->loop)) == 1) {
        stat_inc(&w->stats.comp_tx);
        err = 0;
    } else {
        err = comp_frame(p->comp.framing, pkt);
    }
    if (err) {
        wk_drop(w, &w->stats.drop_send, &p->remote,
                "no room in front of the packet for its framing");
        return;
    }
    if (p->frag) {
        send_fragmented(w, p, pkt);
        return;
    }
    seal_and_queue(w, p, pbuf_ptr(pkt), pkt->len);
}

void wk_check_reneg(struct worker *w, struct peer *p)
{
    const struct config_timers *t = &w->env->cfg->timers;
    const struct data_key *k = p->tx_key;
    struct msg *m;

    if (p->is_reneg_requested || !k) {
        return;
    }
    /* 2.6 renegotiates at packet id 0xFF000000, long before ids run out, and after reneg-bytes
     * or reneg-pkts of traffic on the key (ssl.c, tls_process_state); 2.7 also at AES-GCM's
     * usage limit. */
    if (!data_key_tx_wants_renegotiation(k) && !data_key_usage_limit_reached(k) &&
        !(t->reneg_bytes > 0 && k->n_bytes >= (uint64_t)t->reneg_bytes) &&
        !(t->reneg_pkts > 0 && k->n_packets >= (uint64_t)t->reneg_pkts)) {
        return;
    }
    m = msg_new(MSG_RENEGOTIATE, p, NULL, 0); /* once per key, not per packet */
    if (m) {
        p->is_reneg_requested = true;
        mailbox_post(w->env->mb, MAILBOX_ACCEPTOR, m);
    }
}
