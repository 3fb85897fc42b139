/* server/data/peer.h: one connected client as both planes see it (the messages that carry it
 * between threads are in server/thread/msg.h).
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
#include "proto/fragment.h"
#include "server/log/log.h"
#include "server/data/udp.h"
#include "server/thread/msg.h"
#include "server/thread/msgq.h"
#include "server/addr/vroute.h"

#define PEER_CN_MAX 256
#define PEER_N_KEY_IDS 8

struct ctl_session;
struct tcp_conn;

/* Where a peer's question to the acceptor about a float stands (worker_rx.c ask_float). */
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
    struct udp_local local; /* multihome: the address its datagrams arrive on (set by the
                             * acceptor at install, then by the worker from each datagram) */
    uint64_t link;          /* its TCP connection (server/data/tcp.h), 0 for a UDP client */
    char common_name[PEER_CN_MAX];
    char cipher[32];
    time_t connected_since;
    bool use_data_v2;      /* the client announced IV_PROTO DATA_V2 */
    struct comp_peer comp; /* framing and compression: set by the acceptor before MSG_INSTALL,
                            * then the worker's */
    /* `fragment N` (UDP clients only, else NULL): allocated by the acceptor before MSG_INSTALL
     * (its reassembly buffers, proto/fragment.h), then the worker's; freed with the peer */
    struct fragment *frag;
    /* `mssfix`: the MSS of TCP SYNs to and from this client is clamped to this (0 = off), for
     * its cipher, packet header, compression framing and transport (proto/mss.h). Set by the
     * acceptor before MSG_INSTALL. */
    uint16_t mss_max;
    /* keepalive as pushed to this client at its connect (a reload changes it only for clients
     * that connect later): the server pings after ping_s idle and drops the client after
     * ping_restart_s silent; 0 = off. Set by the acceptor before MSG_INSTALL. */
    int ping_s, ping_restart_s;
    /* dev tap: how many source MACs the client may have learned at once (max-routes-per-client
     * less its own addresses and iroutes, 2.6 multi.c route_quota_test). Set by the acceptor
     * before MSG_INSTALL. */
    uint32_t mac_quota;
    /* dev tap with vlan-tagging: the client's VLAN (1..4094: its client-config-dir or
     * client-connect vlan-pvid, else the server's), proto/vlan.h; 0 without vlan-tagging. Set
     * by the acceptor before MSG_INSTALL. */
    uint16_t vlan_pvid;

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
    uint32_t n_macs;       /* dev tap: MACs learned for it now (its worker's table counts) */
    uint32_t n_macs_asked; /* dev tap: MACs learn-address is asked about (count in the quota) */
    struct tcp_conn *conn; /* the worker's connection of a TCP client, once installed */
    struct log_ratelimit rl;
    _Atomic uint64_t bytes_rx; /* link bytes received, written by the worker */
    _Atomic uint64_t bytes_tx;
    /* Wall-clock seconds of the last packet routed to or from the client, keepalive pings
     * not counted: the status file's "Last Ref" (2.6 multi.c, route->last_reference). Set
     * when the client connects, then written by the worker. */
    _Atomic int64_t last_ref_s;
    /* Tunnel bytes routed to or from the client (IP packets; keepalive pings and other
     * control not counted), for `inactive N BYTES`; written by the worker. */
    _Atomic uint64_t tun_bytes;

    /* Control plane: the acceptor's. */
    struct ctl_session *ctl;
    struct vroute_key
        *routes; /* announced to every worker (MSG_ROUTE_ADD): IPv6 address, iroutes */
    size_t n_routes;
    bool is_slot_handed_over; /* its peer-id went to the same client's next session */
};

#endif /* SERVER_DATA_PEER_H */
