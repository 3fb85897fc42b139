/* server/data/worker_decide.h: what a worker does with a datagram, a float answer, a new key or a
 * packet for a client, decided apart from its I/O.
 *
 * The worker's files (worker.c, worker_rx.c, worker_tx.c, worker_tun.c) read sockets and the TUN
 * device, count, log and post messages; the choices (which peer a P_DATA_V2 is for, which
 * thread owns it, which key opens it, whether it is fresh and authentic, whether its source is a
 * float to ask the acceptor about, where a client's packet for another client goes) are made
 * here, over state and a time passed in: no I/O, no libuv, no logging, no clock reads, no lock,
 * no allocation. tests/fuzz/fuzz_worker_decide.c drives the same functions against a model.
 * Everything here runs on the worker thread that owns the table and its peers
 * (server/data/peer.h), and is per packet, hence static inline.
 */
#ifndef SERVER_DATA_WORKER_DECIDE_H
#define SERVER_DATA_WORKER_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/cursor.h"
#include "proto/data_crypto.h"
#include "proto/errors.h"
#include "proto/packet.h"
#include "server/data/peer.h"
#include "server/data/udp.h"
#include "server/thread/peer_id.h"

#define WORKER_DECIDE_FLOAT_ASK_MS 1000 /* an unanswered float question is asked again after */
#define WORKER_DECIDE_FLOAT_RETRY_MS                                                               \
    5000 /* a refused address is asked about again after (its holder may have gone) */

/* One worker's view of the peers: by_local[peer_id / n_workers] is the peer this worker
 * (index, 0..n_workers-1) carries, for peer_id % n_workers == index, or NULL. Borrowed. */
struct worker_decide_table {
    int index;
    int n_workers;
    struct peer *const *by_local;
    size_t max_local_peers;
};

enum worker_rx {
    WORKER_RX_DROP_EMPTY,        /* empty datagram */
    WORKER_RX_TO_ACCEPTOR,       /* not P_DATA_V2 (control, P_DATA_V1): the acceptor's */
    WORKER_RX_DROP_SHORT,        /* P_DATA_V2 shorter than its header */
    WORKER_RX_HAND_OVER,         /* P_DATA_V2 for another worker's peer: post it to out->owner */
    WORKER_RX_DROP_UNKNOWN_PEER, /* no peer installed here with that peer_id */
    WORKER_RX_DROP_NO_KEY,       /* the peer has no key for the packet's key_id */
    WORKER_RX_DROP_REPLAY,       /* packet_id seen before or too old (out->err) */
    WORKER_RX_DROP_AUTH,         /* malformed or the tag did not verify (out->err) */
    WORKER_RX_FLOAT,             /* authentic and fresh, but from an address other than the
                                  * peer's: dropped; ask the acceptor when out->is_float_ask */
    WORKER_RX_ACCEPT,            /* authentic, fresh, from the peer: out->plain_len bytes */
};

/* What worker_decide_rx() found besides its verdict. */
struct worker_rx_out {
    int owner;          /* WORKER_RX_HAND_OVER: the worker to post the datagram to */
    struct peer *peer;  /* from WORKER_RX_DROP_NO_KEY on: the peer of the peer_id */
    struct data_key *k; /* from WORKER_RX_DROP_REPLAY on: the key that opened it */
    size_t plain_len;   /* WORKER_RX_ACCEPT: plaintext bytes written */
    int err;            /* WORKER_RX_DROP_REPLAY, WORKER_RX_DROP_AUTH: data_key_open()'s -PE_* */
    bool is_float_ask;  /* WORKER_RX_FLOAT: ask now (worker_decide_float_should_ask()) */
};

/* The worker that owns peer_id (n_workers >= 1). */
static inline int worker_decide_owner(const struct worker_decide_table *t, uint32_t peer_id)
{
    return peer_id_worker(peer_id, t->n_workers);
}

/* The peer installed in t under peer_id (which t's worker must own), or NULL. */
static inline struct peer *worker_decide_lookup(const struct worker_decide_table *t,
                                                uint32_t peer_id)
{
    size_t local = peer_id_local(peer_id, t->n_workers);
    struct peer *p = local < t->max_local_peers ? t->by_local[local] : NULL;

    return p && p->peer_id == peer_id ? p : NULL;
}

/* Whether an authentic, fresh datagram of p from `from` (not p->remote) should make the worker
 * ask the acceptor about a float now: not while a question is unanswered for less than
 * WORKER_DECIDE_FLOAT_ASK_MS, nor about an address refused less than
 * WORKER_DECIDE_FLOAT_RETRY_MS ago. now_ms: the worker loop's clock. */
static inline bool worker_decide_float_should_ask(const struct peer *p, const union udp_addr *from,
                                                  uint64_t now_ms)
{
    if (p->float_state == PEER_FLOAT_ASKED &&
        now_ms - p->float_asked_ms < WORKER_DECIDE_FLOAT_ASK_MS) {
        return false;
    }
    return !(p->float_state == PEER_FLOAT_REFUSED && udp_addr_equal(from, &p->float_to) &&
             now_ms - p->float_asked_ms < WORKER_DECIDE_FLOAT_RETRY_MS);
}

/* The question about p's float to `to` went to the acceptor at now_ms. */
static inline void worker_decide_float_asked(struct peer *p, const union udp_addr *to,
                                             uint64_t now_ms)
{
    p->float_state = PEER_FLOAT_ASKED;
    p->float_to = *to;
    p->float_asked_ms = now_ms;
}

/* The acceptor's answer about p's float to `to` (is_ok: MSG_FLOAT_OK, else MSG_FLOAT_NO) at
 * now_ms. On yes p->remote becomes `to`; returns true when that changed it, with the address it
 * had in *old. */
static inline bool worker_decide_float_answer(struct peer *p, const union udp_addr *to, bool is_ok,
                                              uint64_t now_ms, union udp_addr *old)
{
    bool is_moved = false;

    if (!is_ok) {
        if (udp_addr_equal(to, &p->float_to)) {
            p->float_state = PEER_FLOAT_REFUSED;
            p->float_asked_ms = now_ms;
        }
        return false;
    }
    if (!udp_addr_equal(to, &p->remote)) {
        *old = p->remote;
        p->remote = *to;
        is_moved = true;
    }
    if (udp_addr_equal(to, &p->float_to)) {
        p->float_state = PEER_FLOAT_NONE;
    }
    return is_moved;
}

/* The part of worker_decide_rx() and worker_decide_rx_v1() after the peer p is found: its key
 * for the packet's key_id, then data_key_open() into plain (plain_cap bytes). Returns
 * WORKER_RX_ACCEPT when the packet authenticated (the caller then checks its source), or the
 * drop verdict; fills out->peer, out->k, out->plain_len, out->err. */
static inline enum worker_rx worker_decide_open(struct peer *p, const uint8_t *pkt, size_t len,
                                                uint8_t *plain, size_t plain_cap,
                                                struct worker_rx_out *out)
{
    struct data_key *k = p->keys[packet_key_id(pkt[0])];
    int err;

    out->peer = p;
    if (!k) {
        return WORKER_RX_DROP_NO_KEY;
    }
    out->k = k;
    err = data_key_open(k, pkt, len, plain, plain_cap, &out->plain_len);
    if (err) {
        out->err = err;
        return err == -PE_REPLAY || err == -PE_TOO_OLD ? WORKER_RX_DROP_REPLAY
                                                       : WORKER_RX_DROP_AUTH;
    }
    return WORKER_RX_ACCEPT;
}

/* A datagram of len bytes from `from` that reached t's worker, at now_ms. A P_DATA_V2 of a peer
 * installed here is opened (data_key_open(): replay check, tag, then its packet_id committed)
 * into plain (plain_cap bytes); nothing else is touched but the key's replay window. Returns
 * the verdict, with what it found in *out. */
static inline enum worker_rx worker_decide_rx(const struct worker_decide_table *t,
                                              const uint8_t *pkt, size_t len,
                                              const union udp_addr *from, uint8_t *plain,
                                              size_t plain_cap, uint64_t now_ms,
                                              struct worker_rx_out *out)
{
    uint32_t peer_id;
    struct peer *p;
    int err;

    if (len < 1) {
        return WORKER_RX_DROP_EMPTY;
    }
    if (packet_opcode(pkt[0]) != P_DATA_V2) {
        return WORKER_RX_TO_ACCEPTOR;
    }
    if (len < DATA_V2_HEADER_LEN) {
        return WORKER_RX_DROP_SHORT;
    }
    peer_id = load_be32(pkt) & DATA_PEER_ID_MAX;
    out->owner = worker_decide_owner(t, peer_id);
    if (out->owner != t->index) {
        return WORKER_RX_HAND_OVER;
    }
    p = worker_decide_lookup(t, peer_id);
    if (!p) {
        return WORKER_RX_DROP_UNKNOWN_PEER;
    }
    err = worker_decide_open(p, pkt, len, plain, plain_cap, out);
    if (err != WORKER_RX_ACCEPT) {
        return err;
    }
    if (!udp_addr_equal(from, &p->remote)) {
        /* Authenticated and not a replay: the client may have moved. */
        out->is_float_ask = worker_decide_float_should_ask(p, from, now_ms);
        return WORKER_RX_FLOAT;
    }
    return WORKER_RX_ACCEPT;
}

/* A P_DATA_V1 of len bytes from `from` that the acceptor (by source address) or the client's TCP
 * connection attributed to peer_id, which t's worker owns: opened like a P_DATA_V2 by
 * worker_decide_rx(). There is no float for such clients (2.6 floats only with a peer-id): one
 * from an address other than the peer's is dropped as WORKER_RX_FLOAT without a question. */
static inline enum worker_rx worker_decide_rx_v1(const struct worker_decide_table *t,
                                                 uint32_t peer_id, const uint8_t *pkt, size_t len,
                                                 const union udp_addr *from, uint8_t *plain,
                                                 size_t plain_cap, struct worker_rx_out *out)
{
    struct peer *p;
    int err;

    if (len < 1) {
        return WORKER_RX_DROP_EMPTY;
    }
    if (packet_opcode(pkt[0]) != P_DATA_V1) {
        return WORKER_RX_TO_ACCEPTOR;
    }
    p = worker_decide_owner(t, peer_id) == t->index ? worker_decide_lookup(t, peer_id) : NULL;
    if (!p) {
        return WORKER_RX_DROP_UNKNOWN_PEER;
    }
    err = worker_decide_open(p, pkt, len, plain, plain_cap, out);
    if (err != WORKER_RX_ACCEPT) {
        return err;
    }
    if (!udp_addr_equal(from, &p->remote)) {
        out->is_float_ask = false;
        return WORKER_RX_FLOAT;
    }
    return WORKER_RX_ACCEPT;
}

enum worker_deliver {
    WORKER_DELIVER_SEND,          /* this worker's peer *p: seal and send */
    WORKER_DELIVER_HAND_OVER,     /* another worker's (*owner): post the packet there */
    WORKER_DELIVER_NOT_INSTALLED, /* this worker's, but no such peer installed: drop */
};

/* Where a packet for peer_id's client goes, from t's worker: *owner is set for a hand-over, *p
 * for a send. */
static inline enum worker_deliver worker_decide_deliver(const struct worker_decide_table *t,
                                                        uint32_t peer_id, int *owner,
                                                        struct peer **p)
{
    *owner = worker_decide_owner(t, peer_id);
    if (*owner != t->index) {
        return WORKER_DELIVER_HAND_OVER;
    }
    *p = worker_decide_lookup(t, peer_id);
    return *p ? WORKER_DELIVER_SEND : WORKER_DELIVER_NOT_INSTALLED;
}

/* With client-to-client on (is_c2c), whether a packet of peer `self` whose destination routes to
 * `to` (VROUTE_NONE: nowhere) goes to that client instead of the TUN device. Multicast and
 * broadcast never do (is_dst_multicast), nor a packet for the sender itself. */
static inline bool worker_decide_c2c(bool is_c2c, bool is_dst_multicast, uint32_t to, uint32_t self)
{
    return is_c2c && !is_dst_multicast && to != VROUTE_NONE && to != self;
}

/* Install nk, a renegotiated key from the acceptor (copied), in p at now_ms: it receives at once
 * in the slot not holding the send key, whose earlier key (the one before the current) is
 * wiped; it sends once the client uses it (p->pending_tx_key), or at once when the send key was
 * retired already. */
static inline void worker_decide_install_key(struct peer *p, const struct data_key *nk,
                                             uint64_t now_ms)
{
    struct data_key *slot = p->tx_key == &p->key_store[0] ? &p->key_store[1] : &p->key_store[0];

    if (slot->cipher != DATA_CIPHER_NONE) {
        if (p->keys[slot->key_id] == slot) {
            p->keys[slot->key_id] = NULL;
        }
        data_key_clear(slot);
    }
    *slot = *nk;
    p->keys[slot->key_id] = slot;
    if (!p->tx_key) {
        p->tx_key = slot;
        return;
    }
    p->pending_tx_key = slot;
    p->pending_since_ms = now_ms;
}

/* The acceptor retires key_id (0..255, anything but 0..7 is ignored) of p: its tran-window ran
 * out (2.6 ssl.c lame_duck_must_die). Packets with it are dropped from now on (no key). If it
 * still is the send key, the newer one takes over; without a newer one (a renegotiation still
 * running) nothing is sent until it comes. The key is wiped. */
static inline void worker_decide_retire_key(struct peer *p, uint8_t key_id)
{
    struct data_key *k = key_id < PEER_N_KEY_IDS ? p->keys[key_id] : NULL;

    if (!k) {
        return;
    }
    p->keys[key_id] = NULL;
    if (p->pending_tx_key == k) {
        p->pending_tx_key = NULL;
    }
    if (p->tx_key == k) {
        p->tx_key = p->pending_tx_key;
        p->pending_tx_key = NULL;
        p->is_reneg_requested = false;
    }
    data_key_clear(k);
}

#endif /* SERVER_DATA_WORKER_DECIDE_H */
