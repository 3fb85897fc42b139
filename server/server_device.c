/* server/server_device.c: start-up of the TUN or TAP device: opening it (with its queue
 * length, offloads and lladdr), its addresses, and the routes into it. Main thread, before the
 * threads start. */
#include "server/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "server/addr/vroute.h"
#include "server/log/log.h"

/* The tun device's IPv4 side: subnet as `ip addr add LOCAL/BITS`; net30 and p2p as a
 * point-to-point address (add_routes adds, with `server`, a route to the whole network). */
static int configure_tun4(struct server *srv)
{
    const struct topology_plan *plan = &srv->plan;
    int err;

    if (plan->topology == CONFIG_TOPOLOGY_SUBNET) {
        err = tun_configure(&srv->tun, plan->local, plan->remote_netmask, srv->cfg->net.tun_mtu);
    } else {
        err =
            tun_configure_p2p(&srv->tun, plan->local, plan->remote_netmask, srv->cfg->net.tun_mtu);
    }
    if (err) {
        log_msg(LOG_ERR, "cannot configure TUN device %s: %s", srv->tun.name, strerror(-err));
    }
    return err;
}

/* The routes into the device: the one `server` adds for net30 and p2p (helper.c), then the
 * `route` lines. 2.6 do_route: after the device has its address, or with ifconfig-noexec after
 * the up script that gives it one; with route-noexec none of them, the pool route included. A
 * route the kernel refuses is logged and counted, and start-up goes on, as in 2.6 (route.c
 * add_routes; a server's management state still says CONNECTED,SUCCESS, mudp.c ISC_SERVER);
 * one that exists already is no error. */
int server_add_routes(struct server *srv)
{
    const struct topology_plan *plan = &srv->plan;
    const struct config *cfg = srv->cfg;
    char net[80];
    int err = 0;

    if (plan->has_route) {
        uint8_t a[4];
        uint32_t be = htonl(plan->route_network);
        int plen = __builtin_popcount(plan->route_netmask);

        memcpy(a, &be, 4);
        vroute_prefix_str(4, a, plen, net, sizeof(net));
        if (cfg->net.route_noexec) {
            log_msg(LOG_INFO, "route-noexec: route %s into %s not added", net, srv->tun.name);
        } else {
            err = tun_add_route(&srv->tun, 4, a, plen, -1, cfg->net.route_table);
            if (err && err != -EEXIST) {
                log_msg(LOG_ERR, "cannot add route %s into %s: %s (starting without it)", net,
                        srv->tun.name, strerror(-err));
                srv->n_route_errors++;
            }
        }
    }
    for (size_t i = 0; i < cfg->net.n_routes; i++) {
        const struct config_route *r = &cfg->net.routes[i];

        if (cfg->net.route_noexec) {
            log_msg(LOG_INFO, "route-noexec: route %s into %s not added",
                    vroute_prefix_str(r->family, r->addr, r->plen, net, sizeof(net)),
                    srv->tun.name);
            continue;
        }
        err = tun_add_route(&srv->tun, r->family, r->addr, r->plen, r->metric, r->table);
        if (err == -EEXIST) {
            err = 0;
        } else if (err) {
            log_msg(LOG_ERR, "route: cannot add route %s into %s: %s (starting without it)",
                    vroute_prefix_str(r->family, r->addr, r->plen, net, sizeof(net)), srv->tun.name,
                    strerror(-err));
            srv->n_route_errors++;
        }
    }
    return 0;
}

/* dev tap, once opened: lladdr, and the device's MAC for the workers (never learned from a
 * client). No offloads and no steering program: they expect IP packets, not frames. */
static int open_tap(struct server *srv)
{
    const struct config *cfg = srv->cfg;
    struct worker_env *we = &srv->worker_env;
    char mac[20];
    int err;

    if (cfg->net.has_lladdr) {
        err = tun_set_mac(&srv->tun, cfg->net.lladdr);
        if (err) {
            log_msg(LOG_ERR, "lladdr: cannot give %s the address %s: %s", srv->tun.name,
                    mac_str(cfg->net.lladdr, mac, sizeof(mac)), strerror(-err));
            return err;
        }
    }
    we->is_tap = true;
    we->has_tap_mac = tun_get_mac(&srv->tun, we->tap_mac) == 0;
    log_msg(LOG_INFO,
            "TAP device %s (MAC %s): Ethernet frames routed by learned MAC address; no TUN "
            "offloads or steering program with tap",
            srv->tun.name, we->has_tap_mac ? mac_str(we->tap_mac, mac, sizeof(mac)) : "?");
    return 0;
}

int server_open_device(struct server *srv, bool is_offload_wanted)
{
    const struct config *cfg = srv->cfg;
    bool want_offload = is_offload_wanted && !cfg->net.is_tap;
    int err = tun_open(cfg->net.dev, srv->n_workers, want_offload, cfg->net.is_tap, &srv->tun);

    if (err) {
        log_msg(LOG_ERR, "cannot open %s device '%s': %s%s", cfg->net.is_tap ? "TAP" : "TUN",
                cfg->net.dev,
                err == -EBUSY ? "it exists already (another server running?)" : strerror(-err),
                err == -EPERM || err == -EACCES
                    ? " (ovpnd must start as root, or with the CAP_NET_ADMIN capability)"
                    : "");
        return err;
    }
    if (cfg->net.txqueuelen > 0) {
        /* 2.6 tun.c open_tun: right after the device is created; a failure is only a warning */
        err = tun_set_txqueuelen(&srv->tun, cfg->net.txqueuelen);
        if (err) {
            log_msg(LOG_WARN, "txqueuelen: cannot set the TX queue length of %s to %d: %s",
                    srv->tun.name, cfg->net.txqueuelen, strerror(-err));
        } else {
            log_msg(LOG_INFO, "%s: TX queue length set to %d", srv->tun.name, cfg->net.txqueuelen);
        }
    }
    if (cfg->net.is_tap) {
        err = open_tap(srv);
        if (err) {
            return err;
        }
    } else if (!want_offload) {
        log_msg(LOG_WARN, "OVPND_TUN_OFFLOAD=off: TUN segmentation offloads disabled");
    } else if (!srv->tun.has_offload) {
        log_msg(LOG_WARN,
                "the kernel refused TUN segmentation offloads (%s): one packet per "
                "TUN read and write",
                strerror(srv->tun.offload_errno));
    }
    if (cfg->net.ifconfig_noexec) {
        /* 2.6 do_open_tun: no address, MTU or link state; the scripts get the addresses, and the
         * routes wait for the up script (server_run) */
        log_msg(LOG_INFO,
                "ifconfig-noexec: %s is left as opened (no address, MTU or link state): the up "
                "script is expected to configure it; routes are added after it",
                srv->tun.name);
        return srv->plan.has_ipv6 ? server_setup_ipv6(srv) : 0;
    }
    if (cfg->net.is_tap && srv->plan.local == 0) {
        /* server-bridge, or its long form (mode server and a pool or none): 2.6 leaves the
         * device as opened (no address, MTU or link state) */
        log_msg(LOG_INFO,
                "%s: %s is left as opened (no address, MTU or link state, as with openvpn 2.6): "
                "add it to the bridge and bring it up in the up script",
                cfg->net.has_server_bridge || cfg->net.server_bridge_dhcp ? "server-bridge"
                                                                          : "dev tap",
                srv->tun.name);
        return srv->plan.has_ipv6 ? server_setup_ipv6(srv) : 0;
    }
    err = configure_tun4(srv);
    if (!err && srv->plan.has_ipv6) {
        err = server_setup_ipv6(srv);
    }
    return err ? err : server_add_routes(srv);
}
