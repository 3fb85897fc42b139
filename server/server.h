/* server/server.h: the running server: configuration, devices, sockets and threads.
 *
 * Built by the main thread at start-up (server.c); the acceptor and the workers see only what
 * their env structs give them (control/acceptor.h, data/worker.h), and reach each other through
 * the mailbox.
 */
#ifndef SERVER_SERVER_H
#define SERVER_SERVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "server/config/config.h"
#include "server/addr/routes.h"
#include "server/control/acceptor.h"
#include "server/data/worker.h"
#include "server/thread/mailbox.h"
#include "server/addr/pool.h"
#include "server/data/steer.h"
#include "server/config/topology.h"
#include "server/data/tun.h"

struct server {
    struct config *cfg;
    int n_workers;
    struct tun_dev tun;
    struct topology_plan plan; /* what server / ifconfig* expand to (topology.h) */
    struct ip_pool pool;       /* acceptor thread only after start-up; n 0 without a pool */
    bool is_pool_persisted;    /* ifconfig-pool-persist with SECONDS > 0, no duplicate-cn */
    int persist_fd;            /* the persist file opened before privileges were dropped, or -1 */
    int persist_err;           /* why it could not be opened at start-up (-errno, logged), or 0 */
    uint32_t server_addr;      /* tunnel address of the server, host order */
    bool has_ipv6;             /* the tun device has an IPv6 address */
    uint8_t server_addr6[16];  /* ... this one, network order */
    int ipv6_bits;             /* its prefix length, pushed with pool addresses */
    int udp_fds[1 + TUN_MAX_QUEUES];          /* [0] acceptor, [1 + i] worker i */
    int tcp_fds[TUN_MAX_QUEUES];              /* [i] worker i's listening socket, or -1 */
    union udp_addr port_share;                /* the port-share server, when configured */
    bool is_steered;                          /* UDP: the reuseport program is attached */
    struct tun_steer tun_steer;               /* TUN: eBPF queue steering (map_fd -1 when off) */
    struct mailbox mb;                        /* every thread's box */
    struct routes routes;                     /* who holds each tunnel address (after the pool) */
    struct worker_env worker_env;             /* what every worker is given */
    struct acceptor_env acceptor_env;         /* what the acceptor is given */
    const struct worker_stats **worker_stats; /* &workers[i].stats, for the status file */
    struct acceptor *acceptor;
    struct worker *workers;
    int n_workers_built;     /* workers[0 .. n_workers_built - 1] passed worker_init */
    bool is_up_done;         /* the up script ran (or there is none): down runs at the end */
    int n_route_errors;      /* routes the kernel refused at start-up (logged; 2.6 starts on) */
    const char *config_text; /* what SIGHUP parses again (server_run), or NULL */
    const char *start_dir;   /* where relative paths in it start, or NULL */
};

/* Run the server described by cfg until SIGINT/SIGTERM: TUN device, sockets, acceptor and
 * workers. config_text is the config text cfg was parsed from (the command line, borrowed until
 * return; NULL: SIGHUP cannot reload) and start_dir the absolute directory the process started
 * in (NULL: unknown), which SIGHUP reads again. Main thread. Returns 0 after a clean shutdown or
 * a negative code when start-up failed (the reason is logged). */
int server_run(struct config *cfg, const char *config_text, const char *start_dir);

/* server_addr.c, start-up (main thread, before the threads start; errors logged):
 * server_setup_pool: srv->plan from the config (topology.c) and the pool it describes, with the
 * ifconfig-pool-persist file read into it. 0 or -errno. */
int server_setup_pool(struct server *srv);

/* The device's IPv6 address from srv->plan (not given with ifconfig-noexec). 0 or -errno. */
int server_setup_ipv6(struct server *srv);

/* Reserve in the pool the addresses client-config-dir files give with ifconfig-push (so that
 * the pool never hands them to another client); files that do not parse are logged. */
void server_reserve_ccd_addresses(struct server *srv);

/* server_device.c, start-up (main thread, before the threads start; errors logged):
 * server_open_device: open the TUN or TAP device of the config with one queue per worker (TUN
 * segmentation offloads when is_offload_wanted and the kernel has them; never with tap), set its
 * txqueuelen and lladdr, and, unless ifconfig-noexec or an address-less tap bridge leaves it as
 * opened (as 2.6 do_open_tun), give it its addresses and add the routes (server_add_routes).
 * 0 or -errno (a txqueuelen the kernel refuses is only a warning, as in 2.6). */
int server_open_device(struct server *srv, bool is_offload_wanted);

/* The routes into the device: the one `server` adds for net30 and p2p (2.6 helper.c), then the
 * `route` lines; none with route-noexec. 2.6 do_route: after the device has its address, or
 * with ifconfig-noexec after the up script. A route the kernel refuses is logged and counted in
 * srv->n_route_errors, and start-up goes on, as in 2.6 (route.c add_routes); one that exists
 * already is no error. Returns 0. */
int server_add_routes(struct server *srv);

#endif /* SERVER_SERVER_H */
