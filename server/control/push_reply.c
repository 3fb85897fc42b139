/* server/control/push_reply.c: the PUSH_REPLY sent to a client: the configured push lines, then
 * the global and per-client options, split with push-continuation. Acceptor thread only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/base64.h>

#include "proto/cursor.h"
#include "proto/errors.h"
#include "proto/peer_info.h"
#include "proto/push.h"
#include "proto/tls_session.h"
#include "server/data/peer.h"

#include "server/control/acceptor_internal.h"

static int emit_push(void *ctx, const char *msg, size_t len)
{
    struct ctl_session *cs = ctx;

    (void)len;
    return tls_session_write(acc_primary_ks(cs)->tls, (const uint8_t *)msg, strlen(msg) + 1);
}

#define PUSH_DNS_MAX 64 /* dhcp-option lines made from `dns` options for one client */

/* The global push list, in 2.6's order (push.c, helper.c): the configured push lines, then
 * tun-ipv6, route-gateway, topology, ping, ping-restart. global has room for push.n_items +
 * TOPOLOGY_PUSH_MAX + 2 entries;
 * derived (4 strings of 64 bytes) holds the texts made here. Returns how many were set. */
static size_t global_push_list(const struct acceptor *a, const char **global, char derived[4][64])
{
    const struct acceptor_env *env = a->env;
    const struct config *cfg = a->cfg;
    size_t g = 0;

    for (size_t i = 0; i < cfg->net.push.n_items; i++) {
        global[g++] = cfg->net.push.items[i];
    }
    for (size_t i = 0; i < env->plan->n_push; i++) {
        global[g++] = env->plan->push[i]; /* tun-ipv6, route-gateway or route, topology */
    }
    if (cfg->timers.keepalive_ping_s > 0) {
        snprintf(derived[2], sizeof(derived[2]), "ping %d", cfg->timers.keepalive_ping_s);
        global[g++] = derived[2];
    }
    if (cfg->timers.keepalive_restart_s > 0) {
        snprintf(derived[3], sizeof(derived[3]), "ping-restart %d",
                 cfg->timers.keepalive_restart_s);
        global[g++] = derived[3];
    }
    return g;
}

/* For a client that does not know the `dns` option (push_client_knows_dns): each `dns` option of
 * opts (*n entries) gives way to its dhcp-option equivalents (none for some forms), in its place,
 * made into dns (PUSH_DNS_MAX strings of 256 bytes). opts has PUSH_DNS_MAX slots beyond *n.
 * 0 or -ENOMEM. */
static int dns_as_dhcp_options(const char **opts, size_t *n, char (*dns)[256])
{
    const char **orig = calloc(*n, sizeof(*orig));
    size_t kept = 0, n_dns = 0;

    if (!orig) {
        return -ENOMEM;
    }
    memcpy(orig, opts, *n * sizeof(*orig));
    for (size_t i = 0; i < *n; i++) {
        size_t made = 0;

        if (strncmp(orig[i], "dns ", 4) != 0) {
            opts[kept++] = orig[i];
            continue;
        }
        if (n_dns < PUSH_DNS_MAX &&
            push_dns_as_dhcp_option(orig[i], dns + n_dns, PUSH_DNS_MAX - n_dns, &made) == 0) {
            for (size_t j = 0; j < made; j++) {
                opts[kept++] = dns[n_dns + j];
            }
            n_dns += made;
        }
    }
    free(orig);
    *n = kept;
    return 0;
}

/* cs's username after override-username in base64 for auth-token-user, into user_b64
 * (user_b64_len bytes, NUL-terminated): true when there is one to push. A username whose base64
 * would not fit in an option line is not pushed, as 2.7 skips one of USER_PASS_LEN or more. */
static bool override_user_b64(struct acceptor *a, struct ctl_session *cs, char *user_b64,
                              size_t user_b64_len)
{
    size_t len = 0;

    if (!cs->client.orig_username) {
        return false;
    }
    if (mbedtls_base64_encode((unsigned char *)user_b64, user_b64_len, &len,
                              (const unsigned char *)cs->client.username,
                              strlen(cs->client.username)) != 0) {
        acc_cs_log(a, cs, LOG_WARN,
                   "override-username: the username is too long for auth-token-user; not pushed");
        return false;
    }
    return true;
}

/* What the per-client options of cs's push reply are made from (proto/push.h); user_b64 (200
 * bytes) holds auth-token-user's text. */
static void client_push_params(struct acceptor *a, struct ctl_session *cs, bool no_ifconfig,
                               bool no_ifconfig_ipv6, char user_b64[200],
                               struct push_client_params *out)
{
    const struct acceptor_env *env = a->env;
    const struct config *cfg = a->cfg;
    const struct peer *p = cs->peer;
    struct push_client_params pp;

    memset(&pp, 0, sizeof(pp));
    pp.iv_proto = cs->client.pi.iv_proto;
    pp.has_iv_mtu = cs->client.pi.mtu > 0;
    pp.peer_id = p->peer_id;
    pp.cipher = p->cipher;
    pp.ncp = peer_info_supports_ncp(&cs->client.pi);
    pp.use_ekm = true; /* keys were derived with EKM exactly when the client announced it */
    pp.cc_exit = true;
    pp.dyn_tls_crypt = cs->wrap.has_dyn; /* install.c start_dyn_tls_crypt */
    pp.tun_mtu = cfg->net.tun_mtu;
    pp.auth_token = acc_token_for_push(a, cs);
    if (pp.auth_token && override_user_b64(a, cs, user_b64, 200)) {
        pp.auth_token_user = user_b64;
    }
    if (!no_ifconfig) {
        /* multi.c multi_select_virtual_addr: subnet "ADDRESS NETMASK", net30 "BLOCK+2 BLOCK+1",
         * p2p "ADDRESS SERVER"; an ifconfig-push pair as written */
        pp.ifconfig_local = p->vaddr;
        pp.ifconfig_netmask = acc_ifconfig_peer(a, cs);
    }
    if (p->has_vaddr6 && !no_ifconfig_ipv6) {
        const struct ccd *c = cs->ccd;
        bool from_ccd = c && c->has_ifconfig_ipv6_push;

        pp.has_ifconfig_ipv6 = true;
        memcpy(pp.ifconfig_ipv6_local, p->vaddr6, 16);
        pp.ifconfig_ipv6_netbits = (unsigned)(from_ccd ? c->ifconfig_ipv6_bits : env->ipv6_bits);
        memcpy(pp.ifconfig_ipv6_remote,
               from_ccd && c->has_ifconfig_ipv6_remote ? c->ifconfig_ipv6_remote
                                                       : env->server_addr6,
               16);
    }
    *out = pp;
}

void acc_send_push_reply(struct acceptor *a, struct ctl_session *cs)
{
    struct config *cfg = a->cfg;
    size_t n_global = cfg->net.push.n_items + TOPOLOGY_PUSH_MAX + 2;
    size_t cap = n_global + (cs->ccd ? cs->ccd->n_push_ops : 0) + 1 + 16 + PUSH_DNS_MAX;
    const char **global = calloc(n_global, sizeof(*global));
    const char **opts = calloc(cap, sizeof(*opts));
    char derived[4][64], per_client[16][256], (*dns)[256] = calloc(PUSH_DNS_MAX, sizeof(*dns));
    char user_b64[200];
    struct push_client_params pp;
    size_t n = 0, n_client = 0, g = 0;
    bool no_ifconfig = false, no_ifconfig_ipv6 = false;
    bool knows_dns = push_client_knows_dns(cs->client.pi.iv_proto);
    int err;

    if (!global || !opts || !dns) {
        acc_cs_log(a, cs, LOG_ERR, "cannot build PUSH_REPLY: out of memory");
        goto out;
    }
    /* 2.6 order (push.c, helper.c): the configured push lines, then route-gateway, topology,
     * ping, ping-restart: together the global push list, which a client-config-dir file may
     * change; then the compression stub and the per-client options. */
    g = global_push_list(a, global, derived);
    err = ccd_push_list(cs->ccd, global, g, opts, cap - 17 - PUSH_DNS_MAX, &n, &no_ifconfig,
                        &no_ifconfig_ipv6);
    if (err) {
        acc_cs_log(a, cs, LOG_ERR, "cannot build PUSH_REPLY: too many options");
        goto out;
    }
    if (!knows_dns && dns_as_dhcp_options(opts, &n, dns)) {
        acc_cs_log(a, cs, LOG_ERR, "cannot build PUSH_REPLY: out of memory");
        goto out;
    }
    if (cs->push.comp) {
        opts[n++] = cs->push.comp; /* 2.6 appends it to the global part */
    }
    client_push_params(a, cs, no_ifconfig, no_ifconfig_ipv6, user_b64, &pp);
    err = push_client_options(&pp, per_client, 16, &n_client);
    if (err) {
        acc_cs_log(a, cs, LOG_ERR, "cannot build per-client push options: %s", proto_strerror(err));
        goto out;
    }
    for (size_t i = 0; i < n_client; i++) {
        opts[n++] = per_client[i];
    }
    err = push_reply_build(opts, n, emit_push, cs);
    if (err) {
        acc_cs_log(a, cs, LOG_ERR, "cannot send PUSH_REPLY: %s", proto_strerror(err));
        goto out;
    }
    cs->push.is_sent = true;
    cs->push.sent_ms = acc_now_ms(a);
    acc_cs_touch(a, cs); /* queued: flushed at the next tick unless the caller flushes */
    acc_cs_log(a, cs, LOG_DEBUG, "PUSH_REPLY sent (%zu options)", n);
out:
    free(global);
    free(opts);
    free(dns);
}
