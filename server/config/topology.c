/* server/config/topology.c: what `server`, `server-ipv6` and the ifconfig directives expand to; see
 * topology.h. */
#include "server/config/topology.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define TUN_MAX_NETBITS 29 /* helper.c: a tun server needs at least a /29 (a tap one a /30) */

const char *topology_name(int topology)
{
    switch (topology) {
    case CONFIG_TOPOLOGY_NET30:
        return "net30";
    case CONFIG_TOPOLOGY_P2P:
        return "p2p";
    default:
        return "subnet";
    }
}

/* 2.6 ignores topology with a tap device: each client has an address and the netmask, as with
 * topology subnet (helper.c, multi.c multi_select_virtual_addr). */
static int eff_topology(const struct config *cfg)
{
    return cfg->net.is_tap ? CONFIG_TOPOLOGY_SUBNET : cfg->net.topology;
}

static const char *ip_str(uint32_t a, char *buf, size_t len)
{
    struct in_addr in = {.s_addr = htonl(a)};

    return inet_ntop(AF_INET, &in, buf, (socklen_t)len) ? buf : "?";
}

static int fail(const char **directive, const char *name, char *why, size_t why_len,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int fail(const char **directive, const char *name, char *why, size_t why_len,
                const char *fmt, ...)
{
    va_list ap;

    *directive = name;
    va_start(ap, fmt);
    vsnprintf(why, why_len, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

static bool is_netmask(uint32_t m)
{
    uint32_t host = ~m;

    return (host & (host + 1)) == 0;
}

static void add_push(struct topology_plan *plan, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void add_push(struct topology_plan *plan, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(plan->push[plan->n_push++], sizeof(plan->push[0]), fmt, ap);
    va_end(ap);
}

/* helper.c, `server` with dev tun, and with dev tap (as subnet, but no topology is pushed). */
static void expand_server(const struct config *cfg, struct topology_plan *plan)
{
    uint32_t net = cfg->net.server_network, mask = cfg->net.server_netmask, bcast = net | ~mask;
    char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];

    plan->local = net + 1;
    if (eff_topology(cfg) == CONFIG_TOPOLOGY_SUBNET) {
        plan->remote_netmask = mask;
        plan->push_netmask = mask;
        plan->has_pool = !cfg->net.server_nopool;
        plan->pool.type = IP_POOL_INDIV;
        plan->pool.start = net + 2;
        plan->pool.end = bcast - 1;
        add_push(plan, "route-gateway %s", ip_str(net + 1, a, sizeof(a)));
        plan->has_constraint = true; /* replaces an ifconfig-push-constraint line, as in 2.6 */
        plan->constraint_network = net;
        plan->constraint_netmask = mask;
    } else {
        plan->remote_netmask = net + 2;
        plan->has_pool = !cfg->net.server_nopool;
        plan->pool.type =
            eff_topology(cfg) == CONFIG_TOPOLOGY_NET30 ? IP_POOL_NET30 : IP_POOL_INDIV;
        plan->pool.start = net + 4;
        plan->pool.end = bcast - (mask == 0xFFFFFFF8u ? 0 : 4);
        plan->has_route = true;
        plan->route_network = net;
        plan->route_netmask = mask;
        if (cfg->net.client_to_client) {
            add_push(plan, "route %s %s", ip_str(net, a, sizeof(a)), ip_str(mask, b, sizeof(b)));
        } else if (eff_topology(cfg) == CONFIG_TOPOLOGY_NET30) {
            add_push(plan, "route %s", ip_str(net + 1, a, sizeof(a)));
        }
    }
    if (!cfg->net.is_tap) {
        add_push(plan, "topology %s", topology_name(eff_topology(cfg)));
    }
}

/* helper.c, `server-bridge`: the pool and route-gateway from the arguments, or with none
 * "route-gateway dhcp" (not with nogw) and no pool. The device gets no address from it. */
static void expand_server_bridge(const struct config *cfg, struct topology_plan *plan)
{
    char a[INET_ADDRSTRLEN];

    if (cfg->net.has_ifconfig) {
        plan->local = cfg->net.ifconfig_local;
        plan->remote_netmask = cfg->net.ifconfig_remote_netmask;
    }
    plan->pool.type = IP_POOL_INDIV;
    if (cfg->net.has_server_bridge) {
        plan->has_pool = true;
        plan->pool.start = cfg->net.server_bridge_pool_start;
        plan->pool.end = cfg->net.server_bridge_pool_end;
        plan->push_netmask = cfg->net.server_bridge_netmask;
        add_push(plan, "route-gateway %s", ip_str(cfg->net.server_bridge_gw, a, sizeof(a)));
    } else if (!cfg->net.server_bridge_nogw) {
        add_push(plan, "route-gateway dhcp");
    }
}

static void ipv6_add(const uint8_t base[16], uint32_t n, uint8_t out[16])
{
    unsigned carry = 0;

    for (int i = 15; i >= 0; i--) {
        unsigned sum = base[i] + (n & 0xFF) + carry;

        out[i] = (uint8_t)sum;
        carry = sum >> 8;
        n >>= 8;
    }
}

static int plan_ipv6(const struct config *cfg, struct topology_plan *plan, const char **directive,
                     char *why, size_t why_len)
{
    if (cfg->net.has_server_ipv6) {
        if (cfg->net.has_ifconfig_ipv6_pool) {
            return fail(directive, "ifconfig-ipv6-pool", why, why_len,
                        "server-ipv6 already defines an ifconfig-ipv6-pool, so you can't also "
                        "specify one explicitly (use ifconfig-ipv6 instead of server-ipv6)");
        }
        if (cfg->net.has_ifconfig_ipv6) {
            return fail(directive, "ifconfig-ipv6", why, why_len,
                        "server-ipv6 already sets the tun device's IPv6 address");
        }
        plan->has_ipv6 = true;
        ipv6_add(cfg->net.server_ipv6_network, 1, plan->local6);
        plan->ipv6_bits = cfg->net.server_ipv6_bits;
        plan->pool.has_ipv6 = true;
        ipv6_add(cfg->net.server_ipv6_network, cfg->net.server_ipv6_bits < 112 ? 0x1000 : 2,
                 plan->pool.ipv6_base);
        plan->pool.ipv6_bits = cfg->net.server_ipv6_bits;
    } else if (cfg->net.has_ifconfig_ipv6) {
        plan->has_ipv6 = true;
        memcpy(plan->local6, cfg->net.ifconfig_ipv6_local, 16);
        plan->ipv6_bits = cfg->net.ifconfig_ipv6_bits;
        if (cfg->net.has_ifconfig_ipv6_pool) {
            plan->pool.has_ipv6 = true;
            memcpy(plan->pool.ipv6_base, cfg->net.ifconfig_ipv6_pool_base, 16);
            plan->pool.ipv6_bits = cfg->net.ifconfig_ipv6_pool_bits;
        }
    } else if (cfg->net.has_ifconfig_ipv6_pool) {
        return fail(directive, "ifconfig-ipv6-pool", why, why_len,
                    "needs ifconfig-ipv6 (the server's own IPv6 address)");
    }
    if (plan->pool.has_ipv6 && !plan->has_pool) {
        return fail(directive, cfg->net.has_server_ipv6 ? "server-ipv6" : "ifconfig-ipv6-pool", why,
                    why_len, "not implemented yet in ovpnd: an IPv6 pool without an IPv4 pool");
    }
    return 0;
}

/* ovpnd's own checks of the IPv4 range: the server's address is not handed out, and with
 * topology subnet the clients are inside the tun subnet (else nothing routes to them). */
static int check_pool_range(const struct config *cfg, struct topology_plan *plan,
                            const char **directive, char *why, size_t why_len)
{
    const char *name = cfg->net.has_ifconfig_pool ? "ifconfig-pool" : "server";
    uint32_t first = plan->pool.start, last = plan->pool.end;
    char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN], c[INET_ADDRSTRLEN];

    if (plan->pool.type == IP_POOL_NET30) {
        first &= ~3u;
        last |= 3u;
    }
    if (plan->local >= first && plan->local <= last) {
        return fail(directive, name, why, why_len,
                    "the pool %s - %s holds the server's own address %s",
                    ip_str(first, a, sizeof(a)), ip_str(last, b, sizeof(b)),
                    ip_str(plan->local, c, sizeof(c)));
    }
    if (plan->topology == CONFIG_TOPOLOGY_SUBNET) {
        uint32_t mask = plan->remote_netmask, net = plan->local & mask;

        if ((first & mask) != net || (last & mask) != net || first == net ||
            last == (net | ~mask)) {
            return fail(directive, name, why, why_len,
                        "the pool %s - %s is not inside the tun subnet %s/%d (network and "
                        "broadcast addresses excluded)",
                        ip_str(first, a, sizeof(a)), ip_str(last, b, sizeof(b)),
                        ip_str(net, c, sizeof(c)), __builtin_popcount(mask));
        }
    }
    return 0;
}

int topology_plan_make(const struct config *cfg, struct topology_plan *plan, const char **directive,
                       char *why, size_t why_len)
{
    struct ip_pool probe;
    char pool_why[200], a[INET_ADDRSTRLEN];
    int err;

    memset(plan, 0, sizeof(*plan));
    plan->topology = eff_topology(cfg);
    if (cfg->net.has_server_ipv6) {
        /* helper.c: server-ipv6 pushes "tun-ipv6" first (2.6 clients ignore it; clients before
         * 2.4 need it for IPv6 in the tunnel) */
        add_push(plan, "tun-ipv6");
    }
    plan->pool.duplicate_cn = cfg->clients.duplicate_cn;
    if (cfg->net.has_server && !cfg->net.is_tap && cfg->net.server_netbits > TUN_MAX_NETBITS) {
        return fail(directive, "server", why, why_len,
                    "netmask %s leaves too few addresses (/%d at least: 255.255.255.248)",
                    ip_str(cfg->net.server_netmask, a, sizeof(a)), TUN_MAX_NETBITS);
    }
    if (!cfg->net.has_server && (cfg->net.has_server_bridge || cfg->net.server_bridge_dhcp)) {
        expand_server_bridge(cfg, plan);
        err = plan_ipv6(cfg, plan, directive, why, why_len);
        if (err || !plan->has_pool) {
            return err;
        }
        goto check_pool; /* 2.6 checks the bridge's addresses share its subnet (config_net.c) */
    }
    if (cfg->net.has_server) {
        if (!cfg->net.server_nopool && cfg->net.has_ifconfig_pool) {
            return fail(directive, "ifconfig-pool", why, why_len,
                        "server already defines an ifconfig-pool, so you can't also specify "
                        "one explicitly (add 'nopool' to the server line to use your own)");
        }
        if (cfg->net.has_ifconfig) {
            return fail(directive, "ifconfig", why, why_len,
                        "server already sets the tun device's address");
        }
        expand_server(cfg, plan);
    } else if (cfg->net.has_ifconfig) {
        plan->local = cfg->net.ifconfig_local;
        plan->remote_netmask = cfg->net.ifconfig_remote_netmask;
        if (eff_topology(cfg) == CONFIG_TOPOLOGY_SUBNET &&
            (!is_netmask(plan->remote_netmask) || plan->remote_netmask == 0)) {
            return fail(directive, "ifconfig", why, why_len,
                        "the second address must be a netmask with topology subnet");
        }
        if (eff_topology(cfg) != CONFIG_TOPOLOGY_SUBNET && plan->local == plan->remote_netmask) {
            return fail(directive, "ifconfig", why, why_len,
                        "the local and remote addresses must differ");
        }
        plan->push_netmask = plan->remote_netmask;
        plan->pool.type =
            eff_topology(cfg) == CONFIG_TOPOLOGY_NET30 ? IP_POOL_NET30 : IP_POOL_INDIV;
    } else if (cfg->net.is_tap) {
        /* 2.6 takes a tap `mode server` without server, server-bridge or ifconfig (the long
         * form of a bridge): the device is left as opened, and clients get an address from
         * ifconfig-pool if there is one, else none; nothing else is pushed for them */
        plan->pool.type = IP_POOL_INDIV;
    } else {
        return fail(directive, "server", why, why_len,
                    "server is required (e.g. 'server 10.8.0.0 255.255.255.0'), or ifconfig "
                    "with ifconfig-pool");
    }
    if (cfg->net.has_ifconfig_pool) {
        if (cfg->net.ifconfig_pool_netmask && eff_topology(cfg) != CONFIG_TOPOLOGY_SUBNET) {
            return fail(directive, "ifconfig-pool", why, why_len,
                        "the third parameter (netmask) is only valid with topology subnet");
        }
        plan->has_pool = true;
        plan->pool.start = cfg->net.ifconfig_pool_start;
        plan->pool.end = cfg->net.ifconfig_pool_end;
        if (cfg->net.ifconfig_pool_netmask && !cfg->net.has_server) {
            plan->push_netmask = cfg->net.ifconfig_pool_netmask; /* `server` keeps its own */
        }
    }
    if (!plan->has_constraint && cfg->net.has_ifconfig_push_constraint) {
        plan->has_constraint = true;
        plan->constraint_network = cfg->net.ifconfig_push_constraint_network;
        plan->constraint_netmask = cfg->net.ifconfig_push_constraint_netmask;
    }
    err = plan_ipv6(cfg, plan, directive, why, why_len);
    if (err || !plan->has_pool) {
        return err;
    }
    err = check_pool_range(cfg, plan, directive, why, why_len);
    if (err) {
        return err;
    }
check_pool:
    err = ip_pool_init(&probe, &plan->pool, pool_why, sizeof(pool_why), NULL, 0);
    if (err == -EINVAL) {
        return fail(directive,
                    cfg->net.has_server_bridge   ? "server-bridge"
                    : cfg->net.has_ifconfig_pool ? "ifconfig-pool"
                    : cfg->net.has_ifconfig_ipv6_pool && strstr(pool_why, "IPv6")
                        ? "ifconfig-ipv6-pool"
                        : "server",
                    why, why_len, "%s", pool_why);
    }
    ip_pool_clear(&probe);
    return err;
}
