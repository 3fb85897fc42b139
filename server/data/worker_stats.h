/* server/data/worker_stats.h: a worker's packet and drop counters, written by the worker that
 * owns them and read by other threads (the status file, the log at SIGUSR2 and at the stop).
 *
 * A reader needs only this header: the counters are relaxed atomics, each written by one thread
 * with a plain load and store (stat_inc, stat_add: no locked instruction on the per-packet path)
 * and read anywhere with stat_get.
 */
#ifndef SERVER_DATA_WORKER_STATS_H
#define SERVER_DATA_WORKER_STATS_H

#include <stdatomic.h>
#include <stdint.h>

/* Packet and drop counters of one worker. Only the owner thread writes them (stat_inc: no
 * locked instruction); the acceptor reads them for the status file. */
struct worker_stats {
    _Atomic uint64_t sessions; /* peers installed now */
    _Atomic uint64_t rx_packets, tx_packets;
    _Atomic uint64_t rx_bytes, tx_bytes; /* link bytes of those packets (as the peers' counters) */
    _Atomic uint64_t handed_over;   /* TUN packets or datagrams that reached this worker but belong
                                     * to another (steering off or refused by the kernel) */
    _Atomic uint64_t drop_handover; /* packets for another thread dropped: it is
                                     * WORKER_POOL_MSGS behind */
    _Atomic uint64_t drop_short, drop_unknown_peer, drop_no_key, drop_auth, drop_replay,
        drop_bad_source, drop_not_ip, drop_no_route, drop_compressed, drop_link_local;
    _Atomic uint64_t drop_send; /* packets the kernel refused to send (UDP send, TCP write) */
    _Atomic uint64_t drop_vlan; /* dev tap with vlan-tagging: frames vlan-accept or a client's
                                 * tag rules out (proto/vlan.h) */
    _Atomic uint64_t client_to_client;   /* packets forwarded between clients (client-to-client) */
    _Atomic uint64_t tx_gso;             /* datagrams that left inside UDP GSO sends */
    _Atomic uint64_t tun_tso_reads;      /* TCP super-packets read from the TUN device... */
    _Atomic uint64_t tun_tso_segments;   /* ...and the segments they were cut into */
    _Atomic uint64_t tun_gro_writes;     /* super-packets written to the TUN device... */
    _Atomic uint64_t tun_gro_segments;   /* ...and the segments they carried */
    _Atomic uint64_t drop_tun_read;      /* TUN reads refused: bad offload header or too long */
    _Atomic uint64_t drop_tun_write;     /* packets the TUN device refused (write failed) */
    _Atomic uint64_t udp_recv_errors;    /* recvmmsg calls that failed (not EAGAIN) */
    _Atomic uint64_t drop_tun_multicast; /* multicast/broadcast read from the TUN device */
    _Atomic uint64_t polling_entered;    /* switches from waking per packet to polling */
    _Atomic uint64_t drop_float; /* authenticated datagrams from an address the session has not
                                  * floated to: the float was refused or is still being decided */
    _Atomic uint64_t tcp_accepted, tcp_closed; /* TCP connections (worker_tcp.c) */
    _Atomic uint64_t tcp_bytes_in;             /* bytes read from them */
    _Atomic uint64_t drop_tcp_queue; /* packets for a TCP client that had tcp-queue-limit waiting */
    _Atomic uint64_t drop_tcp_framing;     /* connections closed for a bad length in the stream */
    _Atomic uint64_t drop_tcp_hand_window; /* connections closed: no handshake in hand-window */
    _Atomic uint64_t drop_tcp_refused;     /* connections not accepted: table full, accept error */
    _Atomic uint64_t tcp_port_share;       /* connections proxied to the port-share server */
    _Atomic uint64_t comp_rx;              /* payloads from clients decompressed (proto/comp.h) */
    _Atomic uint64_t comp_tx;              /* payloads to clients compressed */
    _Atomic uint64_t drop_comp_malformed;  /* bad compression framing, or a compressed block
                                            * that did not decompress within the buffer */
    /* `fragment` (proto/fragment.h): pieces received and packets they completed, packets sent
     * in pieces and the pieces, incomplete packets given up (timed out, pushed out of the
     * window), and drops: bad pieces (header, size, past the buffer) and packets too long
     * for 32 pieces */
    _Atomic uint64_t frag_rx_pieces, frag_rx_packets, frag_tx_packets, frag_tx_pieces;
    _Atomic uint64_t frag_abandoned, drop_frag;
};

/* Add one to a counter owned by the calling thread. */
static inline void stat_inc(_Atomic uint64_t *c)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

/* Add n to a counter owned by the calling thread. */
static inline void stat_add(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

/* Counter value for a reader on another thread. */
static inline uint64_t stat_get(const _Atomic uint64_t *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

/* Packets this worker dropped, all reasons together. Any thread. */
uint64_t worker_stats_dropped(const struct worker_stats *s);

/* Log every counter of s, the counters of worker index, in one LOG_INFO line (at SIGUSR2,
 * MSG_STATS, and at the stop). Any thread; the values are read one by one, not as a snapshot. */
void worker_stats_log(const struct worker_stats *s, int index);

#endif /* SERVER_DATA_WORKER_STATS_H */
