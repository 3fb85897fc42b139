/* server/data/worker_internal.h: what the worker's source files share: worker.c (the thread, its
 * inbox, timer and polling switch), worker_rx.c (UDP receive), worker_tx.c (UDP send) and
 * worker_tun.c (the TUN device). Worker thread only, like everything declared here. The small
 * helpers on the per-packet path of more than one file are static inline here, so they stay
 * inlined in each. */
#ifndef SERVER_DATA_WORKER_INTERNAL_H
#define SERVER_DATA_WORKER_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "proto/cursor.h"
#include "proto/pbuf.h"
#include "proto/tun_offload.h"
#include "server/addr/routes.h"
#include "server/config/config.h"
#include "server/data/peer.h"
#include "server/data/udp.h"
#include "server/data/worker.h"
#include "server/data/worker_decide.h"
#include "server/thread/mailbox.h"
#include "server/thread/msg.h"
#include "server/thread/peer_id.h"

#define TUN_READ_LEN (VNET_HDR_LEN + TUN_OFFLOAD_MAX_PACKET) /* one read with offloads */

/* worker.c */
/* Count a dropped packet in *counter; log it (rate-limited) with its source, NULL: the TUN. */
void wk_drop(struct worker *w, _Atomic uint64_t *counter, const union udp_addr *from,
             const char *why);
/* Take p out of w's table and tell the acceptor it is gone (MSG_GONE, with reason). */
void wk_forget_peer(struct worker *w, struct peer *p, enum gone_reason reason);

/* worker_rx.c */
/* Handle one datagram of len bytes from `from` that reached w (from its socket or handed over). */
void wk_handle_datagram(struct worker *w, const uint8_t *pkt, size_t len,
                        const union udp_addr *from);
/* Handle a P_DATA_V1 of len bytes from `from` for the client with peer_id, which w owns: found
 * by the acceptor from its source address (a UDP client) or by its TCP connection. */
void wk_handle_data_v1(struct worker *w, uint32_t peer_id, const uint8_t *pkt, size_t len,
                       const union udp_addr *from);
/* Receive and handle what waits on w's UDP socket (at most 4 batches); the number of datagrams. */
unsigned wk_udp_drain(struct worker *w, struct moderation_batch *b);
/* Take the acceptor's answer about p's float to `to` (is_ok: MSG_FLOAT_OK, else MSG_FLOAT_NO). */
void wk_float_answered(struct worker *w, struct peer *p, const union udp_addr *to, bool is_ok);

/* worker_tx.c */
/* Send the datagrams queued in w's tx slots (UDP GSO where it can) and empty the queue. */
void wk_tx_flush(struct worker *w);
/* Frame, seal and queue pkt (COMP_HEADROOM bytes of headroom) for p; sent by wk_tx_flush. */
void wk_send_to_peer(struct worker *w, struct peer *p, struct pbuf *pkt);
/* Ask the acceptor once per send key (MSG_RENEGOTIATE) to renegotiate p's keys when that key
 * nears packet-id exhaustion or has carried reneg-bytes / reneg-pkts of traffic. Worker thread;
 * allocates one message only when it asks. */
void wk_check_reneg(struct worker *w, struct peer *p);

/* worker_tun.c */
/* The peer_id that tunnel address dst (family 4 or 6) routes to, or VROUTE_NONE. */
uint32_t wk_route_lookup(const struct worker *w, int family, const uint8_t *dst);
/* Hand a copy of data (len bytes: a packet or frame for a client of worker owner; a frame's VLAN
 * vid, 0 for a packet or without vlan-tagging) to that worker
 * through the mailbox (MSG_PACKET from this worker's pool); counted as a steering miss unless
 * it comes from a client (client-to-client); dropped and counted when the pool is empty (the
 * owner is behind). Worker thread; no allocation. */
void wk_hand_over(struct worker *w, int owner, const uint8_t *data, size_t len, bool is_from_client,
                  uint16_t vid);

/* Send pkt to peer_id's client if w owns it, else hand it to the owning worker. */
void wk_deliver(struct worker *w, uint32_t peer_id, struct pbuf *pkt, int family,
                bool is_from_client);
/* Route a packet read from the TUN device to its peer; or one another worker handed over (read
 * from its TUN device, or with is_from_client a client-to-client packet, which is not given the
 * TUN device's treatment: client-nat, block-ipv6's answer). */
void wk_route_tun_packet(struct worker *w, struct pbuf *pkt, bool is_from_client);
/* tcp_gro's output callback (ctx: the worker): write one packet to the TUN device. */
void wk_tun_write_offload(void *ctx, const struct vnet_hdr *h, const uint8_t *pkt, size_t len);
/* The TUN queue's readiness callback (h->data: the worker): read, route, flush. */
void wk_on_tun(uv_poll_t *h, int status, int events);

/* worker_tap.c (dev tap: Ethernet frames, routed by MAC as 2.6 multi.c does) */
/* A frame from client p (decrypted, pkt with COMP_HEADROOM of headroom): its source MAC learned
 * or the frame dropped, then to the other clients (client-to-client) and/or the tap device. */
void wk_tap_from_client(struct worker *w, struct peer *p, struct pbuf *pkt);
/* A frame read from the tap device: with vlan-tagging untagged or dropped as vlan-accept says
 * (pkt may lose its tag), then routed in its VLAN (wk_tap_route_frame). */
void wk_tap_from_device(struct worker *w, struct pbuf *pkt);
/* A frame in VLAN vid (0 without vlan-tagging) from the tap device, untagged already, or handed
 * over by another worker (is_from_client: another client's, client-to-client): to the client
 * owning its destination MAC in that VLAN, or to every client of the VLAN. */
void wk_tap_route_frame(struct worker *w, struct pbuf *pkt, bool is_from_client, uint16_t vid);
/* A broadcast frame (len bytes, in VLAN vid; 0: any) another worker handed over: to each of w's
 * clients of that VLAN except except_peer_id (MAC_TABLE_NONE: none). */
void wk_tap_bcast_local(struct worker *w, const uint8_t *frame, size_t len, uint32_t except_peer_id,
                        uint16_t vid);
/* MSG_MAC_LEARN from another worker (data: MAC, stamp and VID, len bytes). */
void wk_tap_mac_learned(struct worker *w, uint32_t peer_id, const uint8_t *data, size_t len);
/* MSG_MAC_ANSWER about p (one of w's): learn-address's answer (data: a struct mac_note, len
 * bytes) about a MAC p asked for: learned, or refused for a while. */
void wk_tap_mac_answer(struct worker *w, struct peer *p, const uint8_t *data, size_t len);
/* peer_id left: forget its MACs here and, with tell_others (its owner), on every other worker. */
void wk_tap_forget(struct worker *w, uint32_t peer_id, bool tell_others);

/* worker_tcp.c */
/* The readiness callback of a TCP connection (h->data: the connection). */
void wk_tcp_on_conn(uv_poll_t *h, int status, int events);
/* Close c (why: for the log, at level lvl, rate-limited): its peer is forgotten (MSG_GONE), the
 * acceptor told (MSG_LINK_CLOSED), its memory freed once libuv lets go of it. No-op when closing
 * already. */
void wk_tcp_close(struct worker *w, struct tcp_conn *c, enum log_level lvl, const char *why);
/* Room for one packet to c: a pointer where up to *cap bytes go, or NULL when the packet must be
 * dropped (tcp-queue-limit packets wait already, counted; or c is closing). wk_tcp_commit then
 * queues what was written there. */
uint8_t *wk_tcp_reserve(struct worker *w, struct tcp_conn *c, size_t *cap);
void wk_tcp_commit(struct worker *w, struct tcp_conn *c, size_t len);
/* passtos for a TCP client: give c's socket tos (IP_TOS, or IPV6_TCLASS for an IPv6 client) when
 * it differs from what it has, so that the segments the kernel sends from now on carry it, as
 * 2.6 sets IP_TOS on a client's socket after each packet (socket.h link_socket_set_tos). The
 * queued packets of one write share the latest value. The connection's worker only. */
void wk_tcp_set_tos(struct tcp_conn *c, uint8_t tos);
/* Write what every connection has queued (the end of each callback, wk_flush_out). */
void wk_tcp_flush(struct worker *w);
/* A control packet from the acceptor for TCP link (MSG_LINK_SEND): queue it. */
void wk_tcp_link_send(struct worker *w, uint64_t link, const uint8_t *pkt, size_t len);
/* The acceptor ended link's session (MSG_LINK_CLOSE): close it after a last write. */
void wk_tcp_link_close(struct worker *w, uint64_t link);
/* Tie p (installed now, p->link set) to its connection. False when the connection is gone. */
bool wk_tcp_bind_peer(struct worker *w, struct peer *p);
/* Once a second: close connections without an installed session after hand-window. */
void wk_tcp_tick(struct worker *w, uint64_t now);
/* Stop accepting, close every connection (the loop is stopping). */
void wk_tcp_stop(struct worker *w);
/* Free the tables (after the loop is gone). */
void wk_tcp_free(struct worker *w);
/* port-share: c's proxy has ended (the server closed, or an error): close c. */
void wk_tcp_proxy_done(struct worker *w, struct tcp_conn *c);
/* The client's address of c. */
const union udp_addr *wk_tcp_conn_remote(const struct tcp_conn *c);

/* worker_proxy.c (port-share) */
struct tcp_proxy;
/* Start proxying conn (its client's socket client_fd, watched by client_poll with
 * wk_tcp_on_conn, which hands its events to wk_proxy_on_client from now on) to the port-share
 * server, first (len bytes, what the client sent so far) going first. NULL when it cannot
 * start (the caller closes conn). */
struct tcp_proxy *wk_proxy_new(struct worker *w, struct tcp_conn *conn, uv_poll_t *client_poll,
                               int client_fd, const uint8_t *first, size_t len);
/* The client's socket is ready for events: false when the proxy is over (close conn). */
bool wk_proxy_on_client(struct tcp_proxy *px, int events);
/* The server's socket's readiness callback (h->data: the proxy). */
void wk_proxy_on_up(uv_poll_t *h, int status, int events);
/* End px (its journal file removed: by the acceptor, or here when is_stopping), freed once
 * libuv lets go of its socket. The client's side is the caller's. NULL is a no-op. */
void wk_proxy_free(struct tcp_proxy *px, bool is_stopping);

/* The family of an IP packet (4 or 6) and where its source and destination addresses are, or 0
 * when it is too short for its version's header. */
static inline int wk_ip_addrs(const uint8_t *pkt, size_t len, const uint8_t **src,
                              const uint8_t **dst)
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

/* Whether address a (family 4 or 6) is multicast or the IPv4 broadcast address. */
static inline bool wk_is_multicast(int family, const uint8_t *a)
{
    return family == 4 ? (a[0] & 0xF0) == 0xE0 || load_be32(a) == 0xFFFFFFFFu : a[0] == 0xFF;
}

/* This worker's peer table as the decisions in worker_decide.h read it. */
static inline struct worker_decide_table wk_table(const struct worker *w)
{
    return (struct worker_decide_table){.index = w->index,
                                        .n_workers = w->env->n_workers,
                                        .by_local = w->by_local,
                                        .max_local_peers = w->env->max_local_peers};
}

/* A tunnel packet of len bytes to or from p was routed now: status "Last Ref" (one store a
 * second at most) and the bytes `inactive` counts. p's worker only (single writer). */
static inline void wk_touch_last_ref(const struct worker *w, struct peer *p, size_t len)
{
    if (atomic_load_explicit(&p->last_ref_s, memory_order_relaxed) != w->wall_s) {
        atomic_store_explicit(&p->last_ref_s, w->wall_s, memory_order_relaxed);
    }
    atomic_store_explicit(&p->tun_bytes,
                          atomic_load_explicit(&p->tun_bytes, memory_order_relaxed) + len,
                          memory_order_relaxed);
}

/* End of a callback: send the queued datagrams and write the coalesced TUN packets. */
static inline void wk_flush_out(struct worker *w)
{
    wk_tx_flush(w);
    if (w->tcp_dirty) {
        wk_tcp_flush(w);
    }
    if (w->has_vnet_hdr) {
        tcp_gro_flush(&w->gro);
    }
}

#endif /* SERVER_DATA_WORKER_INTERNAL_H */
