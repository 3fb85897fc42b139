/* server/thread/msg.h: the messages threads send each other (through their msgq and a
 * uv_async wake-up): what each type means, who sends it to whom, and who owns it. The receiver
 * owns a message once it is pushed and releases it with msg_free().
 */
#ifndef SERVER_THREAD_MSG_H
#define SERVER_THREAD_MSG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/addr/udp_addr.h"
#include "server/thread/msgq.h"

struct peer; /* server/data/peer.h; a message only carries the pointer */

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
    MSG_RELOAD,      /* main -> acceptor: read the config again (SIGHUP, control/reload.c) */
    MSG_ROUTE_ADD,   /* acceptor -> every worker: data[] is a struct vroute_key for peer_id */
    MSG_ROUTE_DEL,   /* acceptor -> every worker: drop that route if it is still peer_id's */
    MSG_KEY_RETIRE,  /* acceptor -> worker: data[0] is a key_id of peer whose key ran out */
    MSG_CALL,        /* any -> any: data[] is a struct msg_call to run on the receiver's thread
                      * (a plugin call that returned, for the module that made it) */
    MSG_LINK_SEND,   /* acceptor -> worker: write data[] (a control packet) to TCP link */
    MSG_LINK_CLOSE,  /* acceptor -> worker: close TCP link once what is queued on it is written */
    MSG_LINK_CLOSED, /* worker -> acceptor: TCP link has closed (its sessions end) */
    MSG_MAC_LEARN,   /* worker -> every other worker (dev tap): data[] is a MAC (6 bytes), the
                      * learn's stamp (8 bytes, host order) and the VLAN (2 bytes, host order),
                      * learned for peer_id */
    MSG_MAC_FORGET,  /* worker -> every other worker (dev tap): peer_id left, forget its MACs */
    MSG_MAC_NOTE,    /* worker -> acceptor (dev tap): data[] is a struct mac_note about peer: a MAC
                      * it learned (for the status and learn-address "delete"), or one to ask
                      * learn-address about before it is learned */
    MSG_MAC_ANSWER,  /* acceptor -> worker (dev tap): data[] is the struct mac_note asked about,
                      * is_ok set to learn-address's answer */
};

enum gone_reason {
    GONE_REMOVED = 0,  /* asked by the acceptor */
    GONE_EXIT,         /* the client said goodbye (OCC_EXIT) */
    GONE_PING_TIMEOUT, /* ping-restart expired */
    GONE_LINK_CLOSED,  /* its TCP connection closed (by the client, an error or bad framing) */
};

struct msg_pool;

/* A message between threads; owned by the receiver once pushed, who releases it with
 * msg_free(). data[] only for MSG_PACKET. */
struct msg {
    struct msgq_node node; /* first: msgq_node pointers are cast back to struct msg */
    struct msg_pool
        *pool; /* the pool this message is a slot of (server/thread/pktpool.h), or NULL */
    enum msg_type type;
    struct peer *peer;
    uint32_t peer_id; /* MSG_NEW_KEY, MSG_REMOVE, MSG_ROUTE_*, MSG_FLOAT*, MSG_KEY_RETIRE: the
                       * peer's id when sent */
    enum gone_reason reason;
    bool from_tun;       /* MSG_PACKET: a TUN packet (else a datagram from `from`) */
    bool is_from_client; /* MSG_PACKET from_tun: a client-to-client packet, not the device's */
    /* MSG_PACKET from_tun (dev tap): a broadcast or multicast frame for every client of the
     * receiving worker except peer_id (MAC_TABLE_NONE: from the device, no exception) */
    bool is_bcast;
    /* MSG_PACKET from_tun (dev tap): the frame's VLAN (proto/vlan.h), 0 without vlan-tagging */
    uint16_t vid;
    /* MSG_PACKET acceptor -> worker: a P_DATA_V1 datagram (no peer-id in it) of the client whose
     * peer_id the acceptor found by its source address */
    bool is_data_v1;
    union udp_addr from;
    /* MSG_PACKET from a worker: the TCP connection a control packet came on (0: UDP);
     * MSG_LINK_*: the connection (server/data/tcp.h link ids) */
    uint64_t link;
    size_t len;
    uint8_t data[];
};

/* MSG_CALL's data: run(arg) on the receiving thread; discard(arg) instead when the receiver has
 * stopped (the message is released unread: discard frees what arg owns). */
struct msg_call {
    void (*run)(void *arg);
    void (*discard)(void *arg);
    void *arg;
};

/* A MSG_CALL message for run / discard with arg (from the heap). NULL if out of memory. Any
 * thread; made ahead by whoever expects the call, so that posting it later cannot fail. */
struct msg *msg_call_new(void (*run)(void *arg), void (*discard)(void *arg), void *arg);

/* The receiver of m (a MSG_CALL) runs it and releases it. */
void msg_call_run(struct msg *m);

/* Release m unread: for a MSG_CALL, its discard runs first. Any thread. NULL is a no-op. */
void msg_discard(struct msg *m);

/* Allocate a message with room for len data bytes (copied when data != NULL). NULL if out of
 * memory. Any thread. */
struct msg *msg_new(enum msg_type type, struct peer *peer, const void *data, size_t len);

/* Release m: back to its pool (msg_pool_put()) or free(). Any thread. NULL is a no-op. */
void msg_free(struct msg *m);

/* Per-thread pools of MSG_PACKET messages, so handing a packet to another thread neither
 * mallocs nor queues without bound.
 *
 * A thread that read a packet belonging to another thread (a datagram for a peer_id another
 * worker owns, a control packet for the acceptor, a TUN packet for another worker's client)
 * copies it into a message and posts it. msg_pool_take() takes
 * that message from the sending thread's own pool; whoever consumes it calls msg_free(), which
 * gives it back to the pool it came from. Only the owner thread takes from a pool; any thread
 * gives back (a lock-free stack that the owner empties with one atomic exchange, so no ABA).
 * When the pool is empty (its n_slots messages are all handed over and not consumed yet: the
 * receiver is behind) msg_pool_take() gives nothing and counts it: the caller drops the
 * packet. So the packets a thread has handed over and not seen consumed, and the memory they
 * take, never exceed its pool, whatever arrives (a flood with kernel steering off).
 */
struct msg_pool {
    struct msgq_node *free_local;         /* owner thread only */
    _Atomic(struct msgq_node *) returned; /* pushed by any thread, emptied by the owner */
    uint8_t *block;                       /* every slot, allocated once */
    size_t n_slots, slot_len, data_cap;
    size_t n_used;      /* slots [0, n_used) have been handed out at least once: the others have
                         * not been touched (their pages cost no memory until a burst needs them) */
    uint64_t n_refused; /* messages not given: pool empty or packet too long (owner writes) */
};

/* Allocate n_slots messages with data_cap data bytes each, in one block. pp must be zeroed.
 * Main thread, before the owner starts. 0 or -ENOMEM. */
int msg_pool_init(struct msg_pool *pp, size_t n_slots, size_t data_cap);

/* Free the block. Only once no thread uses pp or holds one of its messages any more (after all
 * threads are joined and their inboxes drained). Safe on a zeroed pool. */
void msg_pool_clear(struct msg_pool *pp);

/* A message of type with len bytes of data copied in (data may be NULL when len is 0): a free
 * slot of pp. Fields other than type, pool, len and data are zero. Owner thread only. NULL,
 * counted in n_refused, when the pool is empty or len > data_cap: the caller drops what it
 * wanted to hand over. Release with msg_free(), from any thread. Never allocates. */
struct msg *msg_pool_take(struct msg_pool *pp, enum msg_type type, const void *data, size_t len);

/* Give m (a slot of m->pool) back to its pool. Any thread; m must not be used afterwards.
 * Called by msg_free(). */
void msg_pool_put(struct msg *m);

#endif /* SERVER_THREAD_MSG_H */
