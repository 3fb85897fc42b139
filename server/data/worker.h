/* server/data/worker.h: a data-plane thread.
 *
 * Each worker owns one UDP socket of the reuseport group, one queue of the multiqueue TUN
 * device, and the data-channel state of the peers whose peer_id % n_workers equals its index.
 * Its per-packet path takes no lock and allocates nothing: a packet that reached the wrong
 * thread is copied into a message from the worker's own pool (server/thread/msg.h) for its
 * owner.
 */
#ifndef SERVER_DATA_WORKER_H
#define SERVER_DATA_WORKER_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <netinet/in.h>

#include <uv.h>

#include "server/log/log.h"
#include "server/thread/msgq.h"
#include "server/data/moderation.h"
#include "server/data/peer.h"
#include "server/data/udp.h"
#include "server/data/worker_stats.h"
#include "server/thread/msg.h"
#include "server/addr/mac_table.h"
#include "server/addr/vroute.h"
#include "proto/tun_offload.h"

struct config;
struct mailbox;
struct routes;

#define WORKER_BATCH 64
#define WORKER_BUF_LEN 2048
#define WORKER_MODERATION_US 400 /* polling period under load (OVPND_MODERATION_US) */
/* Packets one worker can have handed over and not yet seen consumed; beyond, they are dropped
 * (drop_handover). About 2 MB: 22 TCP super-packets cut into segments for another worker. */
#define WORKER_POOL_MSGS 1024
#define TCP_MAX_PACKET WORKER_BUF_LEN      /* largest packet read from a TCP client */
#define TCP_MAX_SEND (WORKER_BUF_LEN + 64) /* largest packet written to one (a sealed one) */
#define TCP_READ_LEN 65536                 /* bytes one read of a TCP connection takes at most */
#define TCP_CONN_SLACK 1024 /* connections per worker beyond max-clients (handshakes, junk) */

struct tcp_conn; /* worker_tcp.c */

/* What the server gives every worker: set up by the main thread before the workers start,
 * read-only afterwards; what it points to outlives the workers. */
struct worker_env {
    const struct config *cfg;
    struct mailbox *mb;          /* the workers' boxes and the acceptor's (server/thread) */
    const struct routes *routes; /* who holds each pool address (routes_pool_owner) */
    int n_workers;
    size_t max_local_peers;       /* per worker: peer_id_local() below this */
    bool has_vnet_hdr;            /* the TUN device's reads and writes carry offload headers */
    bool udp_gso;                 /* send with UDP GSO where the kernel has it (OVPND_UDP_GSO) */
    unsigned moderation_us;       /* polling period under load (OVPND_MODERATION_US), 0 off */
    unsigned moderation_bulk_len; /* bytes: shorter datagrams never start polling
                                   * (OVPND_MODERATION_BULK_LEN, moderation.h) */
    bool block_ipv6;              /* block-ipv6: IPv6 towards clients gets ICMPv6 no route (2.6) */
    uint8_t block_ipv6_src[16];   /* the source of those answers: the tunnel's IPv6 remote */
    const union udp_addr *port_share; /* port-share server, or NULL (worker_proxy.c) */
    /* dev tap (worker_tap.c): the device carries Ethernet frames, routed by MAC address; its
     * own MAC (has_tap_mac) is never learned from a client */
    bool is_tap;
    bool has_tap_mac;
    uint8_t tap_mac[MAC_LEN];
    /* dev tap with a learn-address script or plugin: a new or moved MAC is learned only once
     * the acceptor has run it and it accepted (MSG_MAC_NOTE, MSG_MAC_ANSWER) */
    bool is_learn_hooked;
};

/* dev tap with learn-address: MACs of this worker's clients being asked about, or refused. */
#define WORKER_MAC_ASKS 64
/* At most this many of them are one client's (asked, or refused less than
 * WORKER_MAC_REFUSED_MS ago), so that a client sending from ever new MACs cannot hold every
 * slot and keep other clients' new MACs from being asked about. */
#define WORKER_MAC_ASKS_PER_PEER 8
/* How long frames from a MAC learn-address refused are dropped before it is asked again (2.6
 * asks at every frame, its one thread blocked meanwhile). */
#define WORKER_MAC_REFUSED_MS 1000
/* An ask not answered in this long (the acceptor had no memory for it) is asked again. */
#define WORKER_MAC_ASK_MS 60000

struct worker_mac_ask {
    uint8_t mac[MAC_LEN];
    uint32_t peer_id;
    uint64_t since_ms; /* when it was asked, or refused if is_refused (the loop's clock) */
    bool is_used, is_refused;
};

struct worker {
    int index;
    const struct worker_env *env;
    uv_loop_t loop;
    uv_thread_t thread;
    uv_async_t async; /* wakes the loop for what arrives in its mailbox box */
    int udp_fd;
    int tun_fd;
    uv_poll_t udp_poll;
    uv_poll_t tun_poll;
    uv_timer_t tick;
    struct peer **by_local;     /* index peer_id / n_workers */
    struct vroute_table routes; /* every client's IPv6 address and iroutes (see vroute.h) */
    struct mac_table macs;      /* dev tap: every client's learned MACs (see mac_table.h) */
    struct worker_mac_ask mac_asks[WORKER_MAC_ASKS]; /* dev tap with learn-address */
    struct worker_stats stats;
    struct log_ratelimit rl_drop;
    struct msg_pool pool; /* messages for packets handed to another thread; freed by the server
                            after every thread is joined (msg_pool_clear) */
    uint8_t rx_bufs[WORKER_BATCH][WORKER_BUF_LEN];
    /* Sealed datagrams waiting for one sendmmsg() (flushed at the end of every callback). */
    uint8_t tx_bufs[WORKER_BATCH][WORKER_BUF_LEN + 64];
    union udp_addr tx_addr[WORKER_BATCH];
    struct iovec tx_iov[WORKER_BATCH];
    struct mmsghdr tx_msgs[WORKER_BATCH];
    struct peer *tx_peer[WORKER_BATCH]; /* whose datagram each slot is (counted once sent) */
    unsigned n_tx;
    /* multihome: each slot's source address (its peer's); passtos: its TOS byte (0: the
     * socket's); and the control messages saying them */
    struct udp_local tx_local[WORKER_BATCH];
    uint8_t tx_tos[WORKER_BATCH];
    uint8_t tx_dscp; /* passtos: the DSCP of the packet being sealed (wk_send_to_peer) */
    union {
        struct cmsghdr align;
        uint8_t buf[UDP_PKTINFO_SPACE + UDP_TOS_SPACE];
    } tx_ctrl[WORKER_BATCH];
    struct udp_local rx_local; /* multihome: where the datagram being handled arrived (family 0:
                                * not known, e.g. handed over by another thread) */
    /* UDP GSO (UDP_SEGMENT, Linux 4.18+): runs of queued datagrams to one client with one size
     * leave in a single send; cleared for good when the kernel refuses it. Datagrams of
     * gso_seg_limit bytes or more go one by one: a GSO send whose segments exceed the path MTU
     * fails (EMSGSIZE), where single datagrams are IP-fragmented by the kernel. */
    bool is_gso_ok;
    size_t gso_seg_limit;
    unsigned gso_limit_ticks; /* ticks since gso_seg_limit was lowered (reset after a while) */
    bool is_gso_limit_logged;
    struct mmsghdr gso_msgs[WORKER_BATCH];
    union {
        struct cmsghdr align;
        /* UDP_SEGMENT, pktinfo, TOS */
        uint8_t buf[CMSG_SPACE(sizeof(uint16_t)) + UDP_PKTINFO_SPACE + UDP_TOS_SPACE];
    } gso_ctrl[WORKER_BATCH];
    unsigned gso_first[WORKER_BATCH]; /* the tx slot each gso_msgs entry starts at */
    /* TUN offloads (tun.h has_vnet_hdr): reads land in tun_buf (a virtio_net_hdr and up to 64
     * KiB), super-packets are cut into rx_bufs[0]; decrypted TCP segments are coalesced in gro
     * before they are written (both flushed at the end of every callback). */
    bool has_vnet_hdr;
    uint8_t *tun_buf;
    struct tcp_gro gro;
    /* Adaptive interrupt moderation (worker.c set_polling, moderation.h): while bulk data
     * comes in batches the UDP socket is polled every moderation_us microseconds from a
     * timerfd instead of waking for each datagram; 0: off. */
    unsigned moderation_us;
    int moderation_fd;
    uv_poll_t moderation_poll;
    struct moderation mod;
    int64_t wall_s; /* time(NULL) at the last tick, for peers' last_ref_s */
    /* TCP clients (worker_tcp.c): the listening socket of the group (-1: none), the connections
     * by slot and each slot's generation (link ids, tcp.h), those with packets to write */
    int tcp_fd;
    uv_poll_t tcp_poll;
    struct tcp_conn **conns;
    uint32_t *conn_gen;
    size_t n_conn_slots, n_conns, conn_hint;
    struct tcp_conn *tcp_dirty;
    uint8_t *tcp_rx; /* one read: a partial packet carried over, then TCP_READ_LEN bytes */
    struct log_ratelimit rl_tcp;
    /* Compression scratch (proto/comp.h), so that the per-packet path allocates nothing:
     * decompressed payloads from clients land in comp_rx (room to be framed again for
     * client-to-client), compressed ones for clients are made in comp_tx; comp.lzo_wrkmem is
     * allocated only with allow-compression yes. */
    uint8_t comp_rx[COMP_HEADROOM + WORKER_BUF_LEN + COMP_TAILROOM];
    uint8_t comp_tx[COMP_WORK_OUT_LEN(WORKER_BUF_LEN)];
    struct comp_work comp;
    /* dev tap: one copy of a broadcast frame for one client at a time (worker_tap.c) */
    uint8_t bcast_buf[COMP_HEADROOM + WORKER_BUF_LEN + COMP_TAILROOM];
    /* `fragment`: a piece and its header, made here before it is sealed (worker_tx.c) */
    uint8_t frag_tx[FRAGMENT_HEADER_LEN + WORKER_BUF_LEN];
};

/* Set up w as worker i (0 <= i < env->n_workers) reading udp_fd (its socket of the reuseport
 * group) and tun_fd (its TUN queue), neither owned: its loop, handles and tables, and its box
 * of env->mb. Main thread, before any thread starts. 0 or a negative errno. */
int worker_init(struct worker *w, const struct worker_env *env, int i, int udp_fd, int tun_fd);

/* Give w (set up by worker_init) fd, its listening socket of the TCP group (server/data/tcp.h;
 * not owned), with room for max_conns connections at once (further ones are closed at once and
 * counted). Main thread, before the worker starts. 0 or a negative errno. */
int worker_listen_tcp(struct worker *w, int fd, size_t max_conns);

/* Free a worker that worker_init set up but that never started (start-up failed later). Main
 * thread. */
void worker_discard(struct worker *w);

/* Start w's thread running its loop. 0 or -errno. */
int worker_start(struct worker *w);

/* Wait for the thread to end after MSG_STOP (posted to its box), close its box (later posts are
 * released there), drain it, and free w's resources. Main thread. */
void worker_join(struct worker *w);

#endif /* SERVER_DATA_WORKER_H */
