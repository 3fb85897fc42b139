/* server/control/assign.c: a client's tunnel addresses and routes: client-config-dir
 * ifconfig-push and iroutes, the pool, giving them back. Acceptor thread only. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/cursor.h"
#include "server/data/peer.h"

#include "server/control/acceptor_internal.h"

int acc_load_ccd(struct acceptor *a, struct ctl_session *cs)
{
    struct ccd *c = calloc(1, sizeof(*c));
    char err[600], reason[700];
    bool found = false;
    int rc;

    if (!c) {
        acc_auth_failed(a, cs, "out of memory");
        return -1;
    }
    rc = ccd_load(c, a->cfg->net.client_config_dir, cs->client.cn, &found, err, sizeof(err));
    if (rc) {
        ccd_free(c);
        free(c);
        snprintf(reason, sizeof(reason), "client-config-dir: %s",
                 rc == -ENOMEM ? "out of memory" : err);
        acc_auth_failed(a, cs, reason);
        return -1;
    }
    if (a->cfg->net.ccd_exclusive && (!found || c->is_default)) {
        ccd_free(c);
        free(c);
        acc_auth_failed(a, cs, "ccd-exclusive: no client-config-dir file for this common name");
        return -1;
    }
    if (c->is_disabled) {
        snprintf(reason, sizeof(reason), "disabled by 'disable' in %s", c->path);
        ccd_free(c);
        free(c);
        acc_auth_failed(a, cs, reason);
        return -1;
    }
    if (found) {
        acc_cs_log(a, cs, LOG_DEBUG, "using client-config-dir file %s", c->path);
        cs->ccd = c;
    } else {
        free(c);
    }
    return 0;
}

static int add_peer_route(struct peer *p, const struct vroute_key *key)
{
    struct vroute_key *grown = realloc(p->routes, (p->n_routes + 1) * sizeof(*grown));

    if (!grown) {
        return -ENOMEM;
    }
    p->routes = grown;
    p->routes[p->n_routes++] = *key;
    return 0;
}

static bool in_prefix(const uint8_t *addr, const uint8_t *net, int plen)
{
    struct vroute_key a_key, n_key;

    vroute_key_make(&a_key, 6, addr, plen);
    vroute_key_make(&n_key, 6, net, plen);
    return memcmp(a_key.addr, n_key.addr, 16) == 0;
}

/* The checks openvpn 2.6 makes (or that ovpnd adds) on a client-config-dir `ifconfig-push
 * LOCAL REMOTE_NETMASK`, by topology. 0, or -1 with the reason in why. */
static int check_ifconfig_push(struct acceptor *a, const struct ccd *c, char *why, size_t why_len)
{
    const struct topology_plan *plan = a->env->plan;
    uint32_t local = c->ifconfig_local, rn = c->ifconfig_netmask;
    char l[INET_ADDRSTRLEN], r[INET_ADDRSTRLEN], n[INET_ADDRSTRLEN], m[INET_ADDRSTRLEN];
    struct in_addr in;

    in.s_addr = htonl(local);
    inet_ntop(AF_INET, &in, l, sizeof(l));
    in.s_addr = htonl(rn);
    inet_ntop(AF_INET, &in, r, sizeof(r));
    if (plan->topology == CONFIG_TOPOLOGY_SUBNET) {
        uint32_t mask = plan->remote_netmask, net = plan->local & mask;

        if (((~rn) & (~rn + 1)) != 0) { /* the host part must be 0...01...1 */
            snprintf(why, why_len,
                     "%s:%d: ifconfig-push: '%s' is not a valid netmask (topology "
                     "subnet)",
                     c->path, c->ifconfig_push_line, r);
            return -1;
        }
        /* ovpnd: only addresses of the tun subnet can be reached */
        if ((local & mask) != net || local == net || local == (net | ~mask)) {
            snprintf(why, why_len,
                     "%s:%d: ifconfig-push: %s is not a client address of the server's subnet",
                     c->path, c->ifconfig_push_line, l);
            return -1;
        }
    } else if (local == rn) {
        snprintf(why, why_len, "%s:%d: ifconfig-push: the local and remote addresses must differ",
                 c->path, c->ifconfig_push_line);
        return -1;
    }
    if (local == plan->local || local == 0) {
        snprintf(why, why_len, "%s:%d: ifconfig-push: %s is the server's own address", c->path,
                 c->ifconfig_push_line, l);
        return -1;
    }
    /* multi.c ifconfig_push_constraint_satisfied; 2.6 only logs a violation ("JYFIXME -- this
     * should cause the connection to fail"), ovpnd refuses the client. */
    if (plan->has_constraint && (local & plan->constraint_netmask) != plan->constraint_network) {
        in.s_addr = htonl(plan->constraint_network);
        inet_ntop(AF_INET, &in, n, sizeof(n));
        in.s_addr = htonl(plan->constraint_netmask);
        inet_ntop(AF_INET, &in, m, sizeof(m));
        snprintf(why, why_len,
                 "%s:%d: ifconfig-push: %s violates the tunnel network/netmask constraint (%s/%s)",
                 c->path, c->ifconfig_push_line, l, n, m);
        return -1;
    }
    return 0;
}

/* A client-config-dir `ifconfig-push` address for p: inside the pool it takes that entry; outside
 * it is routed as a /32 (added to p's routes). 0 or -1 with the reason in why. */
static int assign_static4(struct acceptor *a, const struct ccd *c, struct peer *p, char *why,
                          size_t why_len)
{
    const struct acceptor_env *env = a->env;
    uint32_t local = c->ifconfig_local, be = htonl(local), other;
    size_t idx = ip_pool_file_index(env->pool, local); /* net30: the block holding local */
    char l[INET_ADDRSTRLEN];
    struct peer *holder = NULL;
    struct vroute_key key;

    inet_ntop(AF_INET, &be, l, sizeof(l));
    if (check_ifconfig_push(a, c, why, why_len)) {
        return -1;
    }
    if (idx != SIZE_MAX && env->pool->type == IP_POOL_NET30 &&
        ((local & 3u) == 0 || (local & 3u) == 3)) {
        snprintf(why, why_len,
                 "%s:%d: ifconfig-push: %s is the first or last address of a /30 block of the "
                 "pool",
                 c->path, c->ifconfig_push_line, l);
        return -1;
    }
    p->pool_index = SIZE_MAX;
    if (idx != SIZE_MAX) {
        /* Inside the pool: the entry is kept out of the dynamic allocation from now on (a file
         * added since start-up, or a client-connect output; server.c reserves those of the
         * files there at start-up), and is this client's while it stays. A client that got it
         * from the pool before is not moved: this one is refused. */
        (void)routes_reserve(env->routes, idx);
        holder = routes_holder(env->routes, idx);
        if (holder && holder->ctl && holder->ctl->state != CS_CLOSING) {
            snprintf(why, why_len, "%s: ifconfig-push %s is the address of client '%s'", c->path, l,
                     holder->common_name);
            return -1;
        }
        if (holder) {
            /* The same laptop reconnecting before its old session is gone: take the address
             * over; acc_release_peer_slot() leaves it alone for the old one. Nothing routes
             * it to the old peer-id any more; acc_install_finish routes it to p. */
            routes_take_over(env->routes, idx, p);
        } else if (routes_take(env->routes, idx, p)) {
            snprintf(why, why_len, "%s: ifconfig-push %s is not free", c->path, l);
            return -1;
        }
        p->vaddr = local;
        p->pool_index = idx;
        if (local == ip_pool_addr(env->pool, idx)) {
            return 0; /* routed through the entry */
        }
        /* net30 with the pair the other way round (the HOWTO's "ifconfig-push .1 .2"): the
         * block is reserved, the address routed on its own */
    } else {
        vroute_key_make(&key, 4, (const uint8_t *)&be, 32);
        other = routes_get(env->routes, &key);
        holder = other == VROUTE_NONE ? NULL : acc_peer_by_id(a, other);
        if (holder && holder->ctl && holder->ctl->state != CS_CLOSING) {
            snprintf(why, why_len, "%s: ifconfig-push %s is the address of client '%s'", c->path, l,
                     holder->common_name);
            return -1;
        }
        p->vaddr = local;
    }
    vroute_key_make(&key, 4, (const uint8_t *)&be, 32);
    if (add_peer_route(p, &key)) {
        if (p->pool_index != SIZE_MAX) {
            (void)routes_release_entry(env->routes, p->pool_index, p);
        }
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    return 0;
}

void acc_unassign(struct acceptor *a, struct peer *p)
{
    if (p->pool_index != SIZE_MAX) {
        (void)routes_release_entry(a->env->routes, p->pool_index, p);
    }
}

uint32_t acc_ifconfig_peer(struct acceptor *a, const struct ctl_session *cs)
{
    const struct acceptor_env *env = a->env;
    const struct peer *p = cs->peer;

    /* multi.c multi_select_virtual_addr: subnet "ADDRESS NETMASK", net30 "BLOCK+2 BLOCK+1",
     * p2p "ADDRESS SERVER"; an ifconfig-push pair as written */
    if (cs->ccd && cs->ccd->has_ifconfig_push) {
        return cs->ccd->ifconfig_netmask;
    }
    if (env->plan->topology == CONFIG_TOPOLOGY_SUBNET) {
        return env->plan->push_netmask;
    }
    if (env->plan->topology == CONFIG_TOPOLOGY_NET30) {
        return p && p->pool_index < env->pool->n ? ip_pool_peer(env->pool, p->pool_index) : 0;
    }
    return env->plan->local;
}

int acc_assign_addresses(struct acceptor *a, struct ctl_session *cs, struct peer *p, char *why,
                         size_t why_len)
{
    const struct acceptor_env *env = a->env;
    const struct ccd *c = cs->ccd;
    struct peer *prev;
    struct vroute_key key;
    char text[80];
    size_t idx;

    if (c && c->has_ifconfig_push) {
        if (assign_static4(a, c, p, why, why_len)) {
            return -1;
        }
    } else if (env->pool->n == 0 && a->cfg->net.is_tap) {
        /* dev tap without a pool (`server-bridge`, `server nopool`): as 2.6, the client gets
         * no ifconfig and takes its address by itself (DHCP over the bridge); frames go by MAC */
        p->vaddr = 0;
    } else if (env->pool->n == 0) {
        snprintf(why, why_len, "no address: no pool (server nopool) and no ifconfig-push");
        return -1;
    } else if ((prev = routes_holder(env->routes, cs->takeover_index)) != NULL && prev->ctl &&
               prev->ctl->state == CS_CLOSING) {
        /* The client's previous session at this address, closing now: its address (the pool
         * entry stays taken; acc_release_peer_slot() leaves it alone for the old one). */
        idx = cs->takeover_index;
        p->pool_index = idx;
        p->vaddr = ip_pool_addr(env->pool, idx);
        routes_take_over(env->routes, idx, p);
    } else if (routes_acquire(env->routes, cs->client.cn, p, &idx)) {
        snprintf(why, why_len, "address pool exhausted");
        return 1;
    } else {
        p->pool_index = idx;
        p->vaddr = ip_pool_addr(env->pool, idx);
    }
    if (env->has_ipv6) {
        if (c && c->has_ifconfig_ipv6_push) {
            const struct peer *holder;
            uint32_t other;

            if (!in_prefix(c->ifconfig_ipv6, env->server_addr6, env->ipv6_bits)) {
                snprintf(why, why_len,
                         "%s: ifconfig-ipv6-push %s is outside the server's IPv6 network", c->path,
                         vroute_prefix_str(6, c->ifconfig_ipv6, 128, text, sizeof(text)));
                goto acc_refuse;
            }
            /* inside the IPv6 pool: keep its entry out of the dynamic allocation, as for IPv4 */
            (void)routes_reserve(env->routes, ip_pool_index6(env->pool, c->ifconfig_ipv6));
            vroute_key_make(&key, 6, c->ifconfig_ipv6, 128);
            other = routes_get(env->routes, &key);
            holder = other == VROUTE_NONE ? NULL : acc_peer_by_id(a, other);
            /* a closing session's address (the same client reconnecting) is taken over, as
             * assign_static4() does for IPv4 */
            if ((holder && holder->ctl && holder->ctl->state != CS_CLOSING) ||
                memcmp(c->ifconfig_ipv6, env->server_addr6, 16) == 0) {
                snprintf(why, why_len, "%s: ifconfig-ipv6-push %s is taken", c->path,
                         vroute_prefix_str(6, c->ifconfig_ipv6, 128, text, sizeof(text)));
                goto acc_refuse;
            }
            memcpy(p->vaddr6, c->ifconfig_ipv6, 16);
            p->has_vaddr6 = true;
        } else if (env->pool->has_ipv6 && p->pool_index != SIZE_MAX) {
            ip_pool_addr6(env->pool, p->pool_index, p->vaddr6);
            p->has_vaddr6 = true;
        } else if (env->pool->has_ipv6) {
            /* multi.c multi_select_virtual_addr: no pool entry, so no pool IPv6 address */
            acc_cs_log(a, cs, LOG_INFO,
                       "ifconfig-push is used for IPv4 outside the pool, so no IPv6 address "
                       "comes from the IPv6 pool: use ifconfig-ipv6-push for IPv6");
        }
        if (p->has_vaddr6) {
            vroute_key_make(&key, 6, p->vaddr6, 128);
            if (add_peer_route(p, &key)) {
                snprintf(why, why_len, "out of memory");
                goto acc_refuse;
            }
        }
    }
    /* 2.6 multi.c route_quota_test: the client's own addresses count as learned routes */
    int max_routes = c && c->has_max_routes ? c->max_routes : a->cfg->clients.max_routes_per_client;
    int n_learned = 1 + (p->has_vaddr6 ? 1 : 0);

    for (size_t i = 0; c && i < c->n_iroutes; i++) {
        if (n_learned >= max_routes) {
            acc_cs_log(a, cs, LOG_WARN,
                       "route quota (%d) exceeded (see max-routes-per-client): iroute %s and "
                       "%zu more are not routed",
                       max_routes, vroute_key_str(&c->iroutes[i], text, sizeof(text)),
                       c->n_iroutes - i - 1);
            break;
        }
        n_learned++;
        if (c->iroutes[i].family == 6 && !env->has_ipv6) {
            snprintf(why, why_len, "%s: iroute-ipv6 %s needs an IPv6 address on the server",
                     c->path, vroute_key_str(&c->iroutes[i], text, sizeof(text)));
            goto acc_refuse;
        }
        if (add_peer_route(p, &c->iroutes[i])) {
            snprintf(why, why_len, "out of memory");
            goto acc_refuse;
        }
    }
    /* dev tap: the quota is the MACs' alone, as 2.6 learns no address of a tap client (multi.c
     * multi_client_connect_late_setup, multi_add_iroutes: tun only) */
    if (a->cfg->net.is_tap) {
        n_learned = 0;
    }
    p->mac_quota = max_routes > n_learned ? (uint32_t)(max_routes - n_learned) : 0;
    return 0;
acc_refuse:
    acc_unassign(a, p);
    return -1;
}

bool acc_reassign_addresses(struct acceptor *a, struct ctl_session *cs)
{
    struct peer *p = cs->peer;
    char why_buf[700];
    int rc;

    acc_unassign(a, p);
    free(p->routes);
    p->routes = NULL;
    p->n_routes = 0;
    p->has_vaddr6 = false;
    rc = acc_assign_addresses(a, cs, p, why_buf, sizeof(why_buf));
    if (rc == 0) {
        return true;
    }
    p->pool_index = SIZE_MAX; /* holds no address now */
    if (rc == 1) {
        acc_turn_away(a, cs, why_buf);
    } else {
        acc_auth_failed(a, cs, why_buf);
    }
    return false;
}

void acc_ccd_on_free(struct acceptor *a, struct ctl_session *cs)
{
    (void)a;
    if (cs->ccd) {
        ccd_free(cs->ccd);
        free(cs->ccd);
        cs->ccd = NULL;
    }
}
