/* server/server.c: start-up and shutdown of the running server (main thread). */
#include "server/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

#include "proto/data_crypto.h"
#include "server/control/acceptor.h"
#include "server/config/resolve.h"
#include "server/hooks/updown.h"
#include "server/hooks/hook_env.h"
#include "server/hooks/openvpn_plugin.h"
#include "server/hooks/plugin.h"
#include "server/hooks/script.h"
#include "server/log/log.h"
#include "server/ops/notify.h"
#include "server/ops/privileges.h"
#include "server/ops/status.h"
#include "server/data/peer.h"
#include "server/thread/msg.h"
#include "server/data/tcp.h"
#include "server/data/udp.h"
#include "server/data/worker.h"

#define PEER_ID_MAX 0xFFFFFEu /* openvpn3 rejects larger pushed peer-ids */

/* ---- the routes' side effects (server/addr/routes.h ops): this file owns both the mailbox
 * and the steering map ---- */

static void announce_route(void *ctx, const struct vroute_key *key, uint32_t peer_id, bool is_add)
{
    struct server *srv = ctx;
    int n_missed = mailbox_post_workers(&srv->mb, is_add ? MSG_ROUTE_ADD : MSG_ROUTE_DEL, peer_id,
                                        key, sizeof(*key));

    if (n_missed > 0) {
        log_msg(LOG_ERR, "out of memory: %d worker%s miss%s a route of peer %u", n_missed,
                n_missed == 1 ? "" : "s", n_missed == 1 ? "es" : "", peer_id);
    }
}

static int steer_set(void *ctx, int family, const uint8_t *addr, int worker)
{
    struct server *srv = ctx;
    uint32_t be;

    if (family == 6) {
        return tun_steer_set6(&srv->tun_steer, addr, (uint32_t)worker);
    }
    memcpy(&be, addr, 4);
    return tun_steer_set(&srv->tun_steer, ntohl(be), (uint32_t)worker);
}

static void steer_del(void *ctx, int family, const uint8_t *addr)
{
    struct server *srv = ctx;
    uint32_t be;

    if (family == 6) {
        tun_steer_del6(&srv->tun_steer, addr);
        return;
    }
    memcpy(&be, addr, 4);
    tun_steer_del(&srv->tun_steer, ntohl(be));
}

/* TLS handshake steps run on libuv's thread pool (acceptor_tls.c), whose size libuv reads from
 * UV_THREADPOOL_SIZE when the pool first starts (default 4). Unless the environment sets it,
 * use one thread per online CPU, so that handshakes use every core (at least 2). */
static void set_tls_threads(void)
{
    const char *env = getenv("UV_THREADPOOL_SIZE");
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    char buf[16];

    if (env && env[0]) {
        log_msg(LOG_INFO, "TLS handshakes: UV_THREADPOOL_SIZE=%s threads", env);
        return;
    }
    if (n < 2) {
        n = 2;
    }
    if (n > 1024) {
        n = 1024; /* libuv's own maximum */
    }
    snprintf(buf, sizeof(buf), "%ld", n);
    setenv("UV_THREADPOOL_SIZE", buf, 1);
    log_msg(LOG_INFO, "TLS handshakes: %ld threads", n);
}

static uv_signal_t sig_int, sig_term, sig_usr1, sig_usr2, sig_hup;
static int shutdown_signal = SIGTERM; /* what ended the server, for the down script */
static struct server *running;

static void on_signal(uv_signal_t *h, int signum)
{
    (void)h;
    if (signum == SIGUSR2) {
        /* As openvpn: SIGUSR2 writes statistics to the log. Each thread logs its own. */
        for (int i = MAILBOX_ACCEPTOR; running && i < running->n_workers; i++) {
            struct msg *m = msg_new(MSG_STATS, NULL, NULL, 0);

            if (m) {
                mailbox_post(&running->mb, i, m);
            }
        }
        return;
    }
    if ((signum == SIGHUP || signum == SIGUSR1) && running && running->cfg->proc.log_file) {
        /* so that logrotate works without copytruncate */
        int err = log_reopen(running->cfg->proc.log_file);

        if (err) {
            log_msg(LOG_WARN, "%s: cannot reopen the log file %s: %s; still writing the old one",
                    signum == SIGHUP ? "SIGHUP" : "SIGUSR1", running->cfg->proc.log_file,
                    strerror(-err));
        } else {
            log_msg(LOG_INFO, "%s: log file %s reopened", signum == SIGHUP ? "SIGHUP" : "SIGUSR1",
                    running->cfg->proc.log_file);
        }
    }
    if (signum == SIGHUP) {
        /* openvpn 2.6 restarts (dropping every client); ovpnd re-reads the config on the
         * acceptor thread and applies what can change with the clients connected (reload.c) */
        struct msg *m = running ? msg_new(MSG_RELOAD, NULL, NULL, 0) : NULL;

        log_msg(LOG_INFO, "SIGHUP: reloading the configuration");
        if (m) {
            mailbox_post(&running->mb, MAILBOX_ACCEPTOR, m);
        } else if (running) {
            log_msg(LOG_ERR, "SIGHUP: out of memory; the configuration is not reloaded");
        }
        return;
    }
    if (signum == SIGUSR1) {
        /* openvpn restarts on SIGUSR1 (sig.c), keeping its config; ovpnd has nothing to
         * restart in place, and the signal's default action would end the server silently. */
        log_msg(LOG_WARN, "SIGUSR1: a restart in place is not implemented; ignored (clients "
                          "stay connected)");
        return;
    }
    log_msg(LOG_INFO, "%s received, shutting down", signum == SIGINT ? "SIGINT" : "SIGTERM");
    shutdown_signal = signum;
    uv_close((uv_handle_t *)&sig_int, NULL);
    uv_close((uv_handle_t *)&sig_term, NULL);
    uv_close((uv_handle_t *)&sig_usr1, NULL);
    uv_close((uv_handle_t *)&sig_usr2, NULL);
    uv_close((uv_handle_t *)&sig_hup, NULL);
    /* (SIGUSR1/SIGUSR2/SIGHUP would now end the process before its goodbyes are out) */
    signal(SIGUSR1, SIG_IGN);
    signal(SIGUSR2, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    /* Closing the handles restored the default actions. The shutdown that follows (exit notices
     * to clients, each thread's statistics, the status file) is short; a second SIGINT/SIGTERM,
     * which `timeout` or a kill of the whole process group delivers right after the first, must
     * not cut it short. SIGKILL still ends it. */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
}

/* An on/off switch from the environment (OVPND_STEERING, OVPND_TUN_OFFLOAD, OVPND_UDP_GSO): on
 * when unset or "on"/"1"/"yes"/"true", off for "off"/"0"/"no"/"false"; anything else is logged
 * and leaves it on. */
static bool env_switch(const char *name)
{
    static const char *const offs[] = {"off", "0", "no", "false"};
    static const char *const ons[] = {"on", "1", "yes", "true"};
    const char *v = getenv(name);

    if (!v) {
        return true;
    }
    for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
        if (strcasecmp(v, offs[i]) == 0) {
            return false;
        }
        if (strcasecmp(v, ons[i]) == 0) {
            return true;
        }
    }
    log_msg(LOG_WARN, "%s=%s is not on or off: leaving it on", name, v);
    return true;
}

/* The unsigned number in environment variable name, within 0..max; def when it is not set, or
 * (with a warning) when it is not such a number. */
static unsigned env_unsigned(const char *name, unsigned long max, unsigned def)
{
    const char *env = getenv(name);
    char *end;
    unsigned long v;

    if (!env) {
        return def;
    }
    v = strtoul(env, &end, 10);
    if (*env == '\0' || *end != '\0' || v > max) {
        log_msg(LOG_WARN, "%s=%s is not 0..%lu: using %u", name, env, max, def);
        return def;
    }
    return (unsigned)v;
}

/* block-ipv6 (2.6 forward.c ipv6_send_icmp_unreachable): the answers come from the tunnel's
 * IPv6 remote address, server-ipv6 NETWORK+2 (helper.c) or ifconfig-ipv6's REMOTE, else from
 * fe80::7. */
static void set_block_ipv6(struct server *srv)
{
    const struct config *cfg = srv->cfg;
    struct worker_env *we = &srv->worker_env;
    static const uint8_t fallback[16] = {0xfe, 0x80, [15] = 7};

    we->block_ipv6 = cfg->net.block_ipv6;
    memcpy(we->block_ipv6_src, fallback, 16);
    if (cfg->net.has_ifconfig_ipv6) {
        memcpy(we->block_ipv6_src, cfg->net.ifconfig_ipv6_remote, 16);
    } else if (cfg->net.has_server_ipv6 && srv->plan.has_ipv6) {
        /* local6 is NETWORK+1 */
        memcpy(we->block_ipv6_src, srv->plan.local6, 16);
        for (int i = 15; i >= 0 && ++we->block_ipv6_src[i] == 0; i--) {
        }
    }
}

/* The sizes and switches the threads run with: the number of workers, peer-id slots, and the
 * OVPND_* environment knobs. */
static void set_limits(struct server *srv)
{
    const struct config *cfg = srv->cfg;
    struct worker_env *we = &srv->worker_env;

    srv->n_workers = cfg->proc.workers > 0 ? cfg->proc.workers : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (srv->n_workers < 1) {
        srv->n_workers = 1;
    }
    if (srv->n_workers > TUN_MAX_QUEUES) {
        srv->n_workers = TUN_MAX_QUEUES;
    }
    we->cfg = cfg;
    we->n_workers = srv->n_workers;
    we->max_local_peers = (size_t)cfg->clients.max_clients / (size_t)srv->n_workers + 16;
    if (we->max_local_peers * (size_t)srv->n_workers > PEER_ID_MAX) {
        we->max_local_peers = PEER_ID_MAX / (size_t)srv->n_workers;
    }
    we->moderation_us = env_unsigned("OVPND_MODERATION_US", 100000, WORKER_MODERATION_US);
    if (we->moderation_us != WORKER_MODERATION_US) {
        log_msg(LOG_WARN, "OVPND_MODERATION_US=%u: %s", we->moderation_us,
                we->moderation_us ? "workers poll at that period under load"
                                  : "interrupt moderation off, workers wake for every datagram");
    }
    we->moderation_bulk_len = env_unsigned("OVPND_MODERATION_BULK_LEN", 65535, MODERATION_BULK_LEN);
    if (we->moderation_bulk_len != MODERATION_BULK_LEN) {
        log_msg(LOG_WARN, "OVPND_MODERATION_BULK_LEN=%u: %s", we->moderation_bulk_len,
                we->moderation_bulk_len ? "shorter datagrams never start polling"
                                        : "every datagram counts towards polling");
    }
    we->udp_gso = env_switch("OVPND_UDP_GSO");
    if (!we->udp_gso) {
        log_msg(LOG_WARN, "OVPND_UDP_GSO=off: datagrams are sent one by one");
    }
}

/* Run an up / route-up / down script (server/hooks/updown.h) with the device's arguments and the
 * variables every script gets. 0, or a negative code when it failed. */
static int run_updown(struct server *srv, char *const *cmd, const char *script_type,
                      int plugin_type)
{
    struct plugin_set *ps = srv->acceptor ? acceptor_plugins(srv->acceptor) : NULL;
    const struct config *cfg = srv->cfg;
    struct script_env env = {0};
    struct hook_server hs;
    char local[INET_ADDRSTRLEN], remote[INET_ADDRSTRLEN];
    struct in_addr in;
    struct updown_dev dev;
    int err;

    bool is_mgmt_up = cfg->mgmt.up_down && strcmp(script_type, "route-up") == 0;

    if (cmd == NULL && (ps == NULL || plugin_set_count(ps, plugin_type) == 0) && !is_mgmt_up) {
        return 0;
    }
    memset(&hs, 0, sizeof(hs));
    hs.dev = srv->tun.name;
    hs.tun_mtu = cfg->net.tun_mtu;
    hs.local = srv->plan.local;
    hs.remote_netmask = srv->plan.remote_netmask;
    hs.is_p2p = srv->plan.topology != CONFIG_TOPOLOGY_SUBNET;
    hs.has_ipv6 = srv->has_ipv6;
    memcpy(hs.local6, srv->server_addr6, 16);
    hs.ipv6_bits = srv->ipv6_bits;
    hs.port = (uint16_t)cfg->net.port;
    hs.start_time = time(NULL);
    hs.pid = (long)getpid();
    in.s_addr = htonl(srv->plan.local);
    inet_ntop(AF_INET, &in, local, sizeof(local));
    in.s_addr = htonl(srv->plan.remote_netmask);
    inet_ntop(AF_INET, &in, remote, sizeof(remote));
    dev.name = srv->tun.name;
    dev.tun_mtu = cfg->net.tun_mtu;
    /* server-bridge: no address, empty arguments (2.6 run_up_down) */
    dev.local = srv->plan.local != 0 ? local : "";
    dev.remote_netmask = srv->plan.local != 0 ? remote : "";
    err = hook_env_global(&env, cfg, &hs);
    if (err == 0 &&
        (strcmp(script_type, "down") == 0 || strcmp(script_type, "route-pre-down") == 0)) {
        /* 2.6 signal_description: the signal's name in lower case */
        err = script_env_add(&env, "signal", shutdown_signal == SIGINT ? "sigint" : "sigterm");
    }
    if (err == 0 && is_mgmt_up) {
        err = acceptor_set_updown_env(srv->acceptor, &env);
    }
    err = err ? err
              : updown_run(ps, plugin_type, cmd, script_type,
                           strcmp(script_type, "route-up") ? &dev : NULL, &env);
    script_env_clear(&env);
    return err;
}

/* The UDP socket group (socket 0 the acceptor's, 1 + i worker i's) on udp_local and the TCP
 * listening sockets (one per worker) on tcp_local, each NULL when not configured, and the kernel
 * steering programs. */
static int open_sockets(struct server *srv, const union udp_addr *udp_local,
                        const union udp_addr *tcp_local)
{
    const struct config *cfg = srv->cfg;
    bool want_steering = env_switch("OVPND_STEERING");
    struct socket_opts so = {.mark = cfg->net.mark, .bind_dev = cfg->net.bind_dev};
    char addr[UDP_ADDR_STR_MAX];
    int err;

    if (!want_steering) {
        log_msg(LOG_WARN, "OVPND_STEERING=off: kernel steering disabled, packets that reach the "
                          "wrong thread are handed over");
    }
    if (tcp_local) {
        /* one listening socket per worker: the kernel picks the worker at accept */
        err = tcp_group_open(tcp_local, &so, srv->n_workers, srv->tcp_fds);
        if (err) {
            log_msg(LOG_ERR, "cannot listen on TCP %s: %s%s%s",
                    udp_addr_str(tcp_local, addr, sizeof(addr)), strerror(-err),
                    err == -EADDRINUSE ? " (another server running?)" : "",
                    err == -ENODEV ? " (bind-dev names no device)" : "");
            return err;
        }
    }
    if (udp_local) {
        err = udp_group_open(udp_local, &so, 1 + srv->n_workers, srv->udp_fds, want_steering,
                             &srv->is_steered);
        if (err) {
            log_msg(LOG_ERR, "cannot bind UDP %s: %s%s%s",
                    udp_addr_str(udp_local, addr, sizeof(addr)), strerror(-err),
                    err == -EADDRINUSE ? " (another server running?)" : "",
                    err == -ENODEV ? " (bind-dev names no device)" : "");
            return err;
        }
        if (want_steering && !srv->is_steered) {
            log_msg(LOG_WARN, "the kernel refused the UDP steering program: packets reaching "
                              "the wrong thread are handed over (slower)");
        }
        /* Every control packet lands on the acceptor's socket: a burst of them (every client's
         * EXIT at once) waits in its queue, which holds one from each client. */
        err = udp_rcvbuf_force(srv->udp_fds[0],
                               udp_rcvbuf_for_clients((long)cfg->clients.max_clients));
        if (err) {
            log_msg(LOG_WARN,
                    "cannot raise the control socket's receive buffer above net.core.rmem_max "
                    "(%s): a burst of control packets beyond it is dropped",
                    strerror(-err));
        }
        for (int i = 0; cfg->net.multihome && i < 1 + srv->n_workers; i++) {
            err = udp_pktinfo_enable(srv->udp_fds[i], udp_local->sa.sa_family);
            if (err) {
                log_msg(LOG_ERR, "multihome: cannot ask for packet information: %s",
                        strerror(-err));
                return err;
            }
        }
    }
    if (want_steering && srv->n_workers > 1 && !cfg->net.is_tap) {
        err = tun_steer_open(&srv->tun_steer, &srv->tun,
                             (uint32_t)(srv->pool.n > (size_t)cfg->clients.max_clients
                                            ? srv->pool.n
                                            : (size_t)cfg->clients.max_clients));
        if (err) {
            log_msg(LOG_WARN,
                    "the kernel refused the TUN steering program (%s): packets for "
                    "clients of other workers are handed over (slower)",
                    strerror(-err));
        }
    }
    return 0;
}

/* The acceptor and the workers, built (not started) with what each is given. */
static int build_threads(struct server *srv, char *errbuf, size_t errbuf_len)
{
    struct worker_env *we = &srv->worker_env;
    struct acceptor_env *ae = &srv->acceptor_env;
    int err;

    srv->workers = calloc((size_t)srv->n_workers, sizeof(*srv->workers));
    srv->worker_stats = calloc((size_t)srv->n_workers, sizeof(*srv->worker_stats));
    if (!srv->workers || !srv->worker_stats) {
        return -ENOMEM;
    }
    we->mb = &srv->mb;
    we->routes = &srv->routes;
    we->has_vnet_hdr = srv->tun.has_vnet_hdr;
    for (int i = 0; i < srv->n_workers; i++) {
        srv->worker_stats[i] = &srv->workers[i].stats;
    }
    *ae = (struct acceptor_env){
        .cfg = srv->cfg,
        .mb = &srv->mb,
        .routes = &srv->routes,
        .pool = &srv->pool,
        .plan = &srv->plan,
        .dev_name = srv->tun.name,
        .udp_fd = srv->udp_fds[0],
        .n_workers = srv->n_workers,
        .max_local_peers = we->max_local_peers,
        .worker_stats = srv->worker_stats,
        .server_addr = srv->server_addr,
        .has_ipv6 = srv->has_ipv6,
        .ipv6_bits = srv->ipv6_bits,
        .is_pool_persisted = srv->is_pool_persisted,
        .persist_fd = srv->persist_fd,
        .persist_err = srv->persist_err,
        .tun = &srv->tun,
        .config_text = srv->config_text,
        .start_dir = srv->start_dir,
    };
    memcpy(ae->server_addr6, srv->server_addr6, 16);
    err = acceptor_new(ae, &srv->acceptor, errbuf, errbuf_len);
    if (err) {
        return err;
    }
    /* learn-address, as a script or a plugin, must accept each MAC before it is learned */
    we->is_learn_hooked = we->is_tap && (srv->cfg->hooks.learn_address != NULL ||
                                         plugin_set_count(acceptor_plugins(srv->acceptor),
                                                          OVPN_PLUGIN_LEARN_ADDRESS) > 0);
    for (int i = 0; i < srv->n_workers; i++) {
        err = worker_init(&srv->workers[i], we, i, srv->udp_fds[1 + i], srv->tun.fds[i]);
        if (err) {
            snprintf(errbuf, errbuf_len, "worker %d: %s", i, uv_strerror(err));
            return err;
        }
        srv->n_workers_built = i + 1;
        err = srv->tcp_fds[i] < 0
                  ? 0
                  : worker_listen_tcp(&srv->workers[i], srv->tcp_fds[i],
                                      (size_t)srv->cfg->clients.max_clients + TCP_CONN_SLACK);
        if (err) {
            snprintf(errbuf, errbuf_len, "worker %d: %s", i, uv_strerror(err));
            return err;
        }
    }
    return 0;
}

static void log_started(const struct server *srv, const union udp_addr *udp_local,
                        const union udp_addr *tcp_local)
{
    struct in_addr in = {.s_addr = htonl(srv->server_addr)};
    struct in_addr rn = {.s_addr = htonl(srv->plan.remote_netmask)};
    char tunaddr[INET_ADDRSTRLEN + 32], peer[INET_ADDRSTRLEN], addr[UDP_ADDR_STR_MAX];
    char addr2[UDP_ADDR_STR_MAX], where[2 * UDP_ADDR_STR_MAX + 16];

    inet_ntop(AF_INET, &in, tunaddr, INET_ADDRSTRLEN);
    inet_ntop(AF_INET, &rn, peer, sizeof(peer));
    if (srv->cfg->net.has_server_bridge || srv->cfg->net.server_bridge_dhcp) {
        snprintf(tunaddr, sizeof(tunaddr), "(server-bridge: no address from ovpnd)");
    } else if (srv->plan.topology == CONFIG_TOPOLOGY_SUBNET || srv->cfg->net.is_tap) {
        snprintf(tunaddr + strlen(tunaddr), 32, "/%d",
                 __builtin_popcount(srv->plan.remote_netmask));
    } else {
        snprintf(tunaddr + strlen(tunaddr), 32, " peer %s", peer);
    }
    snprintf(where, sizeof(where), "%s%s%s%s%s", udp_local ? "UDP " : "",
             udp_local ? udp_addr_str(udp_local, addr, sizeof(addr)) : "",
             udp_local && tcp_local ? " and " : "", tcp_local ? "TCP " : "",
             tcp_local ? udp_addr_str(tcp_local, addr2, sizeof(addr2)) : "");
    log_msg(LOG_INFO, "ovpnd %s: listening on %s, %s %s (%s%s), %d worker%s", OVPND_VERSION, where,
            srv->tun.name, tunaddr, srv->cfg->net.is_tap ? "dev tap" : "topology ",
            srv->cfg->net.is_tap ? "" : topology_name(srv->plan.topology), srv->n_workers,
            srv->n_workers > 1 ? "s" : "");
    log_msg(LOG_INFO, "data channel crypto: %s",
            data_aead_backend_name(data_crypto_default_backend()));
    if (srv->n_route_errors > 0) {
        log_msg(LOG_WARN, "%d route%s could not be added (see above): running without %s",
                srv->n_route_errors, srv->n_route_errors > 1 ? "s" : "",
                srv->n_route_errors > 1 ? "them" : "it");
    }
    log_msg(LOG_INFO, "Initialization Sequence Completed");
}

/* Run the main loop (signals) until SIGINT/SIGTERM. */
static void run_signals(struct server *srv)
{
    running = srv;
    uv_signal_init(uv_default_loop(), &sig_int);
    uv_signal_init(uv_default_loop(), &sig_term);
    uv_signal_init(uv_default_loop(), &sig_usr1);
    uv_signal_init(uv_default_loop(), &sig_usr2);
    uv_signal_init(uv_default_loop(), &sig_hup);
    uv_signal_start(&sig_int, on_signal, SIGINT);
    uv_signal_start(&sig_term, on_signal, SIGTERM);
    uv_signal_start(&sig_usr1, on_signal, SIGUSR1);
    uv_signal_start(&sig_usr2, on_signal, SIGUSR2);
    uv_signal_start(&sig_hup, on_signal, SIGHUP);
    uv_run(uv_default_loop(), UV_RUN_DEFAULT);
    running = NULL;
}

/* Stop the threads (the acceptor first: it tells clients goodbye), then free everything
 * server_run set up, whatever point it reached. */
static void shut_down(struct server *srv, bool is_acceptor_started, int n_started)
{
    if (is_acceptor_started) {
        acceptor_stop(srv->acceptor);
    }
    for (int i = 0; i < n_started; i++) {
        struct msg *m = msg_new(MSG_STOP, NULL, NULL, 0);

        if (m) {
            mailbox_post(&srv->mb, i, m);
        }
        worker_join(&srv->workers[i]);
    }
    for (int i = n_started; srv->mb.boxes && i < srv->n_workers; i++) {
        mailbox_close(&srv->mb, i); /* never started: nothing may wake it */
    }
    for (int i = n_started; i < srv->n_workers_built; i++) {
        worker_discard(&srv->workers[i]);
    }
    tun_steer_close(&srv->tun_steer);
    if (srv->is_up_done &&
        (srv->cfg->net.n_routes > 0 || srv->plan.topology != CONFIG_TOPOLOGY_SUBNET)) {
        /* 2.6 do_close_tun: before the routes it added are deleted (here: go with the device),
         * when there are any (route lines, or the one `server` adds for net30 and p2p) */
        (void)run_updown(srv, srv->cfg->hooks.route_pre_down, "route-pre-down",
                         OVPN_PLUGIN_ROUTE_PREDOWN);
    }
    if (srv->is_up_done && srv->cfg->hooks.down_pre) {
        (void)run_updown(srv, srv->cfg->hooks.down, "down", OVPN_PLUGIN_DOWN);
    }
    tun_close(&srv->tun);
    if (srv->is_up_done && !srv->cfg->hooks.down_pre) {
        /* 2.6: after the device closed; the plugins are still open */
        (void)run_updown(srv, srv->cfg->hooks.down, "down", OVPN_PLUGIN_DOWN);
    }
    if (srv->acceptor) {
        acceptor_free(srv->acceptor);
        srv->acceptor = NULL;
    }
    for (int i = 0; i <= srv->n_workers && i < (int)(sizeof(srv->udp_fds) / sizeof(int)); i++) {
        if (srv->udp_fds[i] >= 0) {
            close(srv->udp_fds[i]);
        }
    }
    for (int i = 0; i < srv->n_workers && i < TUN_MAX_QUEUES; i++) {
        if (srv->tcp_fds[i] >= 0) {
            close(srv->tcp_fds[i]);
        }
    }
    routes_free(&srv->routes);
    ip_pool_clear(&srv->pool);
    if (srv->persist_fd >= 0) {
        close(srv->persist_fd);
    }
    /* every thread is joined and every box drained: no message of a pool is left in use */
    for (int i = 0; srv->workers && i < srv->n_workers; i++) {
        msg_pool_clear(&srv->workers[i].pool);
    }
    mailbox_free(&srv->mb);
    free(srv->workers);
    free(srv->worker_stats);
}

int server_run(struct config *cfg, const char *config_text, const char *start_dir)
{
    struct server srv;
    union udp_addr udp_local, tcp_local;
    bool has_udp = false, has_tcp = false;
    char errbuf[512] = "";
    int err, n_started = 0;
    bool is_acceptor_started = false;
    const struct routes_ops ops = {
        .ctx = &srv, .announce = announce_route, .steer_set = steer_set, .steer_del = steer_del};

    memset(&srv, 0, sizeof(srv));
    srv.tun_steer.map_fd = srv.tun_steer.map6_fd = srv.tun_steer.prog_fd = -1;
    srv.persist_fd = -1;
    srv.cfg = cfg;
    srv.config_text = config_text;
    srv.start_dir = start_dir;
    for (size_t i = 0; i < sizeof(srv.udp_fds) / sizeof(srv.udp_fds[0]); i++) {
        srv.udp_fds[i] = -1;
    }
    for (size_t i = 0; i < sizeof(srv.tcp_fds) / sizeof(srv.tcp_fds[0]); i++) {
        srv.tcp_fds[i] = -1;
    }
    set_limits(&srv);
    set_tls_threads();
    notify_init();
    err = server_setup_pool(&srv);
    if (err) {
        goto out;
    }
    set_block_ipv6(&srv);
    server_reserve_ccd_addresses(&srv);
    err = mailbox_init(&srv.mb, srv.n_workers);
    err = err ? err : routes_init(&srv.routes, &srv.pool, &ops);
    if (err) {
        goto out;
    }
    err = server_open_device(&srv, env_switch("OVPND_TUN_OFFLOAD"));
    if (cfg->net.n_sockets == 2) { /* one UDP and one TCP socket (config_check.c) */
        for (int i = 0; i < 2; i++) {
            const struct config_socket *sock = &cfg->net.sockets[i];

            err = err ? err
                      : config_resolve_local(
                            cfg, sock, config_proto_is_tcp(sock->proto) ? &tcp_local : &udp_local);
        }
        has_udp = has_tcp = true;
    } else {
        const struct config_socket one = {
            .host = cfg->net.local, .port = cfg->net.port, .proto = cfg->net.proto};

        has_tcp = config_proto_is_tcp(one.proto);
        has_udp = !has_tcp;
        err = err ? err : config_resolve_local(cfg, &one, has_tcp ? &tcp_local : &udp_local);
    }
    err = err ? err : open_sockets(&srv, has_udp ? &udp_local : NULL, has_tcp ? &tcp_local : NULL);
    if (!err && cfg->net.port_share_host) {
        err = config_resolve_port_share(cfg, &srv.port_share);
        srv.worker_env.port_share = err ? NULL : &srv.port_share;
    }
    if (err) {
        goto out;
    }
    err = build_threads(&srv, errbuf, sizeof(errbuf));
    if (err) {
        const char *origin = config_origin(cfg);
        size_t n = strlen(origin);
        /* an error that names its line (FILE:LINE: ...) already names the file */
        bool is_placed = strncmp(errbuf, origin, n) == 0 && errbuf[n] == ':';

        log_msg(LOG_ERR, "%s%s%s", is_placed ? "" : origin, is_placed ? "" : ": ",
                errbuf[0] ? errbuf : strerror(-err));
        goto out;
    }
    if (cfg->proc.mlock && mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
        /* as 2.6 platform_mlockall: a warning, and the server runs on */
        log_msg(LOG_WARN, "mlock: mlockall failed: %s (memory may be paged out)", strerror(errno));
    }
    /* 2.6: up once the device is configured, route-up after the routes; here, once the
     * plugins are open, and as root */
    err = run_updown(&srv, cfg->hooks.up, "up", OVPN_PLUGIN_UP);
    if (!err && cfg->net.ifconfig_noexec) {
        err = server_add_routes(&srv); /* 2.6: once the up script configured the device */
    }
    err = err ? err : run_updown(&srv, cfg->hooks.route_up, "route-up", OVPN_PLUGIN_ROUTE_UP);
    if (err) {
        goto out;
    }
    srv.is_up_done = true;
    err = privileges_drop(cfg);
    if (err) {
        goto out;
    }
    for (; n_started < srv.n_workers; n_started++) {
        err = worker_start(&srv.workers[n_started]);
        if (err) {
            goto out;
        }
    }
    err = acceptor_start(srv.acceptor);
    if (err) {
        goto out;
    }
    is_acceptor_started = true;
    log_started(&srv, has_udp ? &udp_local : NULL, has_tcp ? &tcp_local : NULL);
    notify_ready(); /* sockets and TUN are up; the control thread reports the client count */
    run_signals(&srv);
    notify_stopping("shutting down");
    err = 0;
out:
    shut_down(&srv, is_acceptor_started, n_started);
    return err;
}
