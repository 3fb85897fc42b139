/* server/server.h: the running server: configuration, devices, sockets and threads.
 *
 * Built by the main thread at start-up; read-only for the other threads afterwards except for
 * addr_owner, a lock-free map from pool address to the peer_id that holds it, written by the
 * acceptor and read by workers to route TUN packets to the owning worker.
 */
#ifndef SERVER_SERVER_H
#define SERVER_SERVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "server/config/config.h"
#include "server/thread/msgq.h"
#include "server/addr/pool.h"
#include "server/data/steer.h"
#include "server/config/topology.h"
#include "server/data/tun.h"

struct acceptor;
struct worker;
struct msg;

struct server {
    struct config *cfg;
    int n_workers;
    struct tun_dev tun;
    struct topology_plan plan; /* what server / ifconfig* expand to (topology.h) */
    struct ip_pool pool;       /* acceptor thread only after start-up; n 0 without a pool */
    bool is_pool_persisted;    /* ifconfig-pool-persist with SECONDS > 0, no duplicate-cn */
    int persist_fd;            /* the persist file opened before privileges were dropped, or -1 */
    uint32_t server_addr;      /* tunnel address of the server, host order */
    bool has_ipv6;             /* the tun device has an IPv6 address */
    uint8_t server_addr6[16];  /* ... this one, network order */
    int ipv6_bits;             /* its prefix length, pushed with pool addresses */
    int udp_fds[1 + TUN_MAX_QUEUES]; /* [0] acceptor, [1 + i] worker i */
    bool is_steered;                 /* UDP: the reuseport program is attached */
    struct tun_steer tun_steer;      /* TUN: eBPF queue steering (map_fd -1 when off) */
    _Atomic uint32_t *addr_owner;    /* by pool entry: peer_id + 1, or 0 when free */
    size_t n_addr_owner;
    size_t max_local_peers; /* per worker: peer_id / n_workers < this */
    int ping_s;             /* the server's own keepalive: send a ping after ping_s idle */
    int ping_restart_s;     /* drop a client silent for this long */
    unsigned moderation_us; /* workers' polling period under load (OVPND_MODERATION_US), 0 off */
    bool udp_gso;           /* send with UDP GSO where the kernel has it (OVPND_UDP_GSO) */
    uint16_t mss_max;       /* --mssfix: clamp the MSS of TCP SYNs to this (0 = off) */
    struct acceptor *acceptor;
    struct worker *workers;
};

/* Hand msg to worker i's inbox and wake it. Any thread. Ownership passes to the worker. */
void server_post_worker(struct server *srv, int i, struct msg *m);

/* Hand msg to the acceptor's inbox and wake it. Any thread. */
void server_post_acceptor(struct server *srv, struct msg *m);

/* Run the server described by cfg until SIGINT/SIGTERM: TUN device, sockets, acceptor and
 * workers. Main thread. Returns 0 after a clean shutdown or a negative code when start-up failed
 * (the reason is logged). */
int server_run(struct config *cfg);

/* out = base + n, 128-bit big-endian addition (carries past the top bit are lost). */
void server_ipv6_add(const uint8_t base[16], uint64_t n, uint8_t out[16]);

/* "ADDR/PLEN" for family 4 or 6 (addr in network order) into buf; returns buf. */
const char *server_prefix_str(int family, const uint8_t *addr, int plen, char *buf, size_t buf_len);

#endif /* SERVER_SERVER_H */
