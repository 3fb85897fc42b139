/* server/data/peer.h: one connected client as both planes see it, and the messages between threads.
 *
 * A struct peer is created by the acceptor when a client's keys are ready. Its `ctl` part is
 * touched only by the acceptor. The data part is handed to the owning worker with MSG_INSTALL
 * and from then on is touched only by that worker, until the worker answers MSG_GONE; then the
 * acceptor frees the whole peer. A message to a worker about a peer may still be queued when
 * the worker has already dropped it (timeout) and the acceptor freed it, so the worker checks
 * such messages against its own table (by peer_id and pointer) before touching the peer: its
 * queue is FIFO, so a freed peer's address can only be reused by an MSG_INSTALL queued later. The
 * byte counters are written by the worker alone and read by the acceptor for the status file, with
 * relaxed atomics (no lock).
 */
#ifndef SERVER_DATA_PEER_H
#define SERVER_DATA_PEER_H

#include <netinet/in.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "proto/comp.h"
#include "proto/data_crypto.h"
#include "server/log/log.h"
#include "server/data/udp.h"
#include "server/thread/msgq.h"
#include "server/addr/vroute.h"

#define PEER_CN_MAX 256
#define PEER_N_KEY_IDS 8

struct ctl_session;

/* Where a peer's question to the acceptor about a float stands (worker.c ask_float). */
enum peer_float {
    PEER_FLOAT_NONE = 0, /* nothing asked, or the last question was answered yes */
    PEER_FLOAT_ASKED,    /* MSG_FLOAT sent for float_to, no answer yet */
    PEER_FLOAT_REFUSED,  /* float_to is another client's: its datagrams are dropped */
};

struct peer {
    uint32_t peer_id;
    int worker;        /* index of the owning worker: peer_id % n_workers */
    uint32_t vaddr;    /* tunnel address, host byte order */
    size_t pool_index; /* ip_pool_index(vaddr) */
    bool has_vaddr6;
    uint8_t vaddr6[16]; /* tunnel IPv6 address, network order, when has_vaddr6 */
    union udp_addr remote;
    char common_name[PEER_CN_MAX];
    char cipher[32];
    time_t connected_since;
    bool use_data_v2;          /* the client announced IV_PROTO DATA_V2 */
    enum comp_framing framing; /* the stub framing pushed to this client */

    /* Data plane: the owning worker's once installed. */
    struct data_key key_store[2];
    struct data_key *keys[PEER_N_KEY_IDS]; /* by key_id */
    struct data_key *tx_key;
    struct data_key *pending_tx_key; /* newest key: used for sending once the client uses it */
    uint64_t pending_since_ms;
    bool is_reneg_requested; /* MSG_RENEGOTIATE sent for the current send key */
    uint64_t last_rx_ms;
    uint64_t last_tx_ms;
    /* Authenticated datagrams from an address other than remote: the acceptor decides whether
     * the session floats there; until it says yes they are dropped. */
    enum peer_float float_state;
    union udp_addr float_to; /* the address asked about */
    uint64_t float_asked_ms; /* when (the worker loop's clock) */
    bool is_installed;
    struct log_ratelimit rl;
    _Atomic uint64_t bytes_rx; /* link bytes received, written by the worker */
    _Atomic uint64_t bytes_tx;
    /* Wall-clock seconds of the last packet routed to or from the client, keepalive pings
     * not counted: the status file's "Last Ref" (2.6 multi.c, route->last_reference). Set
     * when the client connects, then written by the worker. */
    _Atomic int64_t last_ref_s;

    /* Control plane: the acceptor's. */
    struct ctl_session *ctl;
    struct vroute_key
        *routes; /* announced to every worker (MSG_ROUTE_ADD): IPv6 address, iroutes */
    size_t n_routes;
    bool is_slot_handed_over; /* its peer-id went to the same client's next session */
};

enum msg_type {
    MSG_INSTALL,   /* acceptor -> worker: take over peer's data plane */
    MSG_REMOVE,    /* acceptor -> worker: drop peer (by pointer), answer MSG_GONE */
    MSG_NEW_KEY,   /* acceptor -> worker: data[] is a struct data_key (renegotiated), owned by it */
    MSG_INSTALLED, /* worker -> acceptor: peer's data plane is live */
    MSG_GONE,      /* worker -> acceptor: the worker no longer uses peer */
    MSG_FLOAT,     /* worker -> acceptor: peer's authenticated packets come from `from`: float? */
    MSG_FLOAT_OK,  /* acceptor -> worker: yes, peer's traffic goes to `from` from now on */
    MSG_FLOAT_NO,  /* acceptor -> worker: no, `from` is another client's address */
    MSG_RENEGOTIATE, /* worker -> acceptor: the send key nears packet-id exhaustion */
    MSG_PACKET,      /* either way: a datagram or TUN packet that reached the wrong thread */
    MSG_STOP,        /* main -> any: leave the loop */
    MSG_STATS,       /* main -> any: log your counters (SIGUSR2) */
    MSG_ROUTE_ADD,   /* acceptor -> every worker: data[] is a struct vroute_key for peer_id */
    MSG_ROUTE_DEL,   /* acceptor -> every worker: drop that route if it is still peer_id's */
    MSG_KEY_RETIRE,  /* acceptor -> worker: data[0] is a key_id of peer whose key ran out */
};

enum gone_reason {
    GONE_REMOVED = 0,  /* asked by the acceptor */
    GONE_EXIT,         /* the client said goodbye (OCC_EXIT) */
    GONE_PING_TIMEOUT, /* ping-restart expired */
};

struct pktpool;

/* A message between threads; owned by the receiver once pushed, who releases it with
 * msg_free(). data[] only for MSG_PACKET. */
struct msg {
    struct msgq_node node; /* first: msgq_node pointers are cast back to struct msg */
    struct pktpool
        *pool; /* the pool this message is a slot of (server/thread/pktpool.h), or NULL */
    enum msg_type type;
    struct peer *peer;
    uint32_t peer_id; /* MSG_NEW_KEY, MSG_REMOVE, MSG_ROUTE_*, MSG_FLOAT*, MSG_KEY_RETIRE: the
                       * peer's id when sent */
    enum gone_reason reason;
    bool from_tun; /* MSG_PACKET: a TUN packet (else a datagram from `from`) */
    union udp_addr from;
    size_t len;
    uint8_t data[];
};

/* Allocate a message with room for len data bytes (copied when data != NULL). NULL if out of
 * memory. Any thread. */
struct msg *msg_new(enum msg_type type, struct peer *peer, const void *data, size_t len);

/* Release m: back to its pool (pktpool_put()) or free(). Any thread. NULL is a no-op. */
void msg_free(struct msg *m);

#endif /* SERVER_DATA_PEER_H */
