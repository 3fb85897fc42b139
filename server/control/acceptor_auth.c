/* server/control/acceptor_auth.c: the acceptor's key method 2: who the client is, its keys, its
 * address and peer-id, refusals, renegotiated keys, and PUSH_REPLY. Acceptor thread only. */
#include "server/control/acceptor.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <mbedtls/constant_time.h>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/md.h>
#include <mbedtls/sha256.h>
#include <mbedtls/platform_util.h>

#include "proto/cert_check.h"
#include "proto/client_name.h"
#include "proto/cursor.h"
#include "proto/errors.h"
#include "proto/kdf.h"
#include "proto/key_method.h"
#include "proto/ncp.h"
#include "proto/occ.h"
#include "proto/packet.h"
#include "proto/packet_id.h"
#include "proto/peer_info.h"
#include "proto/push.h"
#include "proto/reliable.h"
#include "proto/static_key.h"
#include "proto/tls_session.h"
#include "proto/tls_wrap.h"
#include "server/hooks/auth.h"
#include "server/data/peer.h"
#include "server/server.h"
#include "server/ops/status.h"
#include "server/data/udp.h"
#include "server/data/worker.h"
#include "server/thread/peer_id.h"

#include "server/control/acceptor_internal.h"

/* The client reads our key-method-2 message before any control message ("Unknown
 * key_method/flags" otherwise), so a refusal still answers key method 2 first, without keys, as
 * 2.6 does, and then says AUTH_FAILED. */
static void send_empty_key_method2(struct acceptor *a, struct key_state *ks)
{
    struct key_method2 *server = calloc(1, sizeof(*server));
    uint8_t out[1024];
    size_t out_len;

    if (!server) {
        return;
    }
    (void)mbedtls_ctr_drbg_random(&a->drbg, server->random1, sizeof(server->random1));
    (void)mbedtls_ctr_drbg_random(&a->drbg, server->random2, sizeof(server->random2));
    snprintf(server->options, sizeof(server->options), "%s", a->options_string);
    if (key_method2_write(server, false, out, sizeof(out), &out_len) == 0 &&
        tls_session_write(ks->tls, out, out_len) == 0) {
        ks->has_sent_key_method2 = true;
    }
    key_method2_wipe(server);
    free(server);
}

/* The key state a refusal goes on: at a renegotiation the new one once its TLS handshake is
 * done, as a 2.6 client reads control messages only on its newest key state (ssl.c
 * tls_rec_payload) and a 2.6 server sends AUTH_FAILED there; else the primary. */
static struct key_state *refusal_ks(struct ctl_session *cs)
{
    struct key_state *ks = &cs->ks[1 - cs->primary];

    if (cs->peer && ks->in_use && ks->state == KS_TLS && !ks->job && ks->tls->is_handshake_done) {
        return ks;
    }
    return acc_primary_ks(cs);
}

/* Refuse the client: reason goes to the log; the client gets text (NULL: plain AUTH_FAILED). */
static void refuse(struct acceptor *a, struct ctl_session *cs, const char *reason, const char *text)
{
    struct key_state *ks = refusal_ks(cs);

    a->stats.auth_failed++;
    acc_cs_log(a, cs, LOG_WARN, "refused: %s", reason);
    if (ks->in_use && !ks->job && !ks->has_sent_key_method2) {
        send_empty_key_method2(a, ks);
    }
    acc_send_message_on(a, cs, ks, text ? text : "AUTH_FAILED");
    acc_cs_close(a, cs, CLOSE_LINGER_MS);
}

static void auth_failed(struct acceptor *a, struct ctl_session *cs, const char *reason)
{
    refuse(a, cs, reason, NULL);
}

static int pick_peer_slot(struct acceptor *a, struct peer *p)
{
    struct server *srv = a->srv;
    int best = 0;

    for (int i = 1; i < srv->n_workers; i++) {
        if (a->n_worker_peers[i] < a->n_worker_peers[best]) {
            best = i;
        }
    }
    for (size_t local = 0; local < srv->max_local_peers; local++) {
        if (!a->local_used[best][local]) {
            a->local_used[best][local] = true;
            a->n_worker_peers[best]++;
            p->worker = best;
            p->peer_id = peer_id_make(local, best, srv->n_workers);
            return 0;
        }
    }
    return -ENOSPC;
}

/* SHA-256 of the peer certificate's DER (all zero without one): a renegotiation must present
 * the same certificate. */
static void cert_fingerprint(const struct tls_session *tls, uint8_t out[32])
{
    const mbedtls_x509_crt *crt = mbedtls_ssl_get_peer_cert(&tls->ssl);

    memset(out, 0, 32);
    if (crt) {
        (void)mbedtls_sha256_ret(crt->raw.p, crt->raw.len, out, 0);
    }
}

/* Turn a client away without AUTH_FAILED (which makes a 2.6 client give up): like 2.6 when it
 * is full, say nothing, so the client retries later. */
static void turn_away(struct acceptor *a, struct ctl_session *cs, const char *reason)
{
    a->stats.auth_failed++;
    acc_cs_log(a, cs, LOG_WARN, "turned away: %s (the client will retry)", reason);
    acc_cs_close(a, cs, 0);
}

#define REPLACED_TEXT "AUTH_FAILED,replaced by a new connection with the same certificate"

/* Another session with the same common name: with duplicate-cn off, the newer one replaces it
 * (openvpn multi.c: "new connection by client '%s' will cause previous active sessions by this
 * client to be dropped"), and takes over the pool address of a replaced or closing one (a
 * client that restarted from another port, after its EXIT or without one), which 2.6 gives it
 * back once the old instance is gone (pool.c ifconfig_pool_acquire prefers the common name's
 * last entry). Returns how many sessions it closed. */
static size_t drop_duplicate_cn(struct acceptor *a, struct ctl_session *keep)
{
    size_t n = 0;

    for (size_t i = 0; i < a->table_size; i++) {
        for (struct ctl_session *cs = a->table[i]; cs; cs = cs->hnext) {
            /* A client without a common name is nobody's duplicate (2.6 multi_delete_dup
             * skips it: tls_common_name is NULL then). */
            if (cs == keep || cs->is_dead || !keep->has_cn || !cs->has_cn ||
                strcmp(cs->cn, keep->cn) != 0 || (cs->state == CS_TLS && !cs->peer)) {
                continue; /* not authenticated yet: it is replaced when it gets here */
            }
            if (cs->state != CS_CLOSING) { /* connected, or in client-connect/learn-address */
                acc_cs_log(a, cs, LOG_INFO,
                           "new connection by the same common name from another address "
                           "replaces this one (duplicate-cn is off)");
                /* Tell the replaced client, so that it stops instead of reconnecting after its
                 * ping-restart and replacing the new one in turn (2.6 says nothing, and two
                 * devices sharing a certificate take turns). A client that has itself moved on
                 * to a new session drops this: it is for the old session id. */
                if (cs->state == CS_ACTIVE) {
                    /* (not before its key-method 2 reply: the client would take the text for
                     * that and fail its TLS; it stops with its handshake instead) */
                    acc_send_message(a, cs, REPLACED_TEXT);
                }
                acc_cs_close(a, cs, CLOSE_LINGER_MS);
                n++;
            }
            if (cs->peer && keep->takeover_index == SIZE_MAX &&
                cs->peer->pool_index < a->srv->pool.n &&
                a->addr_holder[cs->peer->pool_index] == cs->peer) {
                keep->takeover_index = cs->peer->pool_index;
            }
        }
    }
    return n; /* their slots count until the workers let go of them */
}

/* Read the client's client-config-dir file into cs->ccd. Returns 0, or -1 after refusing the
 * client (bad file, `disable`, ccd-exclusive without a file). */
static int load_ccd(struct acceptor *a, struct ctl_session *cs)
{
    struct ccd *c = calloc(1, sizeof(*c));
    char err[600], reason[700];
    bool found = false;
    int rc;

    if (!c) {
        auth_failed(a, cs, "out of memory");
        return -1;
    }
    rc = ccd_load(c, a->cfg->client_config_dir, cs->cn, &found, err, sizeof(err));
    if (rc) {
        ccd_free(c);
        free(c);
        snprintf(reason, sizeof(reason), "client-config-dir: %s",
                 rc == -ENOMEM ? "out of memory" : err);
        auth_failed(a, cs, reason);
        return -1;
    }
    if (a->cfg->ccd_exclusive && (!found || c->is_default)) {
        ccd_free(c);
        free(c);
        auth_failed(a, cs, "ccd-exclusive: no client-config-dir file for this common name");
        return -1;
    }
    if (c->is_disabled) {
        snprintf(reason, sizeof(reason), "disabled by 'disable' in %s", c->path);
        ccd_free(c);
        free(c);
        auth_failed(a, cs, reason);
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

struct peer *acc_peer_by_id(struct acceptor *a, uint32_t peer_id)
{
    for (size_t h = 0; h < a->table_size; h++) {
        for (struct ctl_session *cs = a->table[h]; cs; cs = cs->hnext) {
            /* a handed-over peer shares its peer-id with the session that took it */
            if (cs->peer && cs->peer->peer_id == peer_id && !cs->peer->is_slot_handed_over) {
                return cs->peer;
            }
        }
    }
    return NULL;
}

/* The checks openvpn 2.6 makes (or that ovpnd adds) on a client-config-dir `ifconfig-push
 * LOCAL REMOTE_NETMASK`, by topology. 0, or -1 with the reason in why. */
static int check_ifconfig_push(struct acceptor *a, const struct ccd *c, char *why, size_t why_len)
{
    const struct topology_plan *plan = &a->srv->plan;
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

/* Pool entry idx passes from a closing session's peer to p. Nothing may route the address to
 * the old peer-id any more: it can be another client's before p is installed (the old peer's
 * release leaves an entry it no longer holds alone); install_finish routes it to p. */
static void take_over_entry(struct acceptor *a, size_t idx, struct peer *p)
{
    struct server *srv = a->srv;

    atomic_store_explicit(&srv->addr_owner[idx], 0, memory_order_release);
    tun_steer_del(&srv->tun_steer, ip_pool_addr(&srv->pool, idx));
    a->addr_holder[idx] = p;
}

/* A client-config-dir `ifconfig-push` address for p: inside the pool it takes that entry; outside
 * it is routed as a /32 (added to p's routes). 0 or -1 with the reason in why. */
static int assign_static4(struct acceptor *a, const struct ccd *c, struct peer *p, char *why,
                          size_t why_len)
{
    struct server *srv = a->srv;
    uint32_t local = c->ifconfig_local, be = htonl(local), other;
    size_t idx = ip_pool_file_index(&srv->pool, local); /* net30: the block holding local */
    char l[INET_ADDRSTRLEN];
    struct peer *holder = NULL;
    struct vroute_key key;

    inet_ntop(AF_INET, &be, l, sizeof(l));
    if (check_ifconfig_push(a, c, why, why_len)) {
        return -1;
    }
    if (idx != SIZE_MAX && srv->pool.type == IP_POOL_NET30 &&
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
        ip_pool_reserve(&srv->pool, idx);
        holder = a->addr_holder[idx];
        if (holder && holder->ctl && holder->ctl->state != CS_CLOSING) {
            snprintf(why, why_len, "%s: ifconfig-push %s is the address of client '%s'", c->path, l,
                     holder->common_name);
            return -1;
        }
        if (holder) {
            /* The same laptop reconnecting before its old session is gone: take the address
             * over; release_peer_slot() leaves it alone for the old one. */
            take_over_entry(a, idx, p);
        } else if (ip_pool_take(&srv->pool, idx)) {
            snprintf(why, why_len, "%s: ifconfig-push %s is not free", c->path, l);
            return -1;
        }
        p->vaddr = local;
        p->pool_index = idx;
        a->addr_holder[idx] = p;
        if (local == ip_pool_addr(&srv->pool, idx)) {
            return 0; /* routed through the entry */
        }
        /* net30 with the pair the other way round (the HOWTO's "ifconfig-push .1 .2"): the
         * block is reserved, the address routed on its own */
    } else {
        vroute_key_make(&key, 4, (const uint8_t *)&be, 32);
        other = vroute_get(&a->routes, &key);
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
            a->addr_holder[p->pool_index] = NULL;
            ip_pool_release(&srv->pool, p->pool_index);
        }
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    return 0;
}

/* Give back what assign_addresses took in the pool. */
static void unassign(struct acceptor *a, struct peer *p)
{
    if (p->pool_index < a->srv->pool.n && a->addr_holder[p->pool_index] == p) {
        /* p is not installed yet: nothing routes through the entry */
        atomic_store_explicit(&a->srv->addr_owner[p->pool_index], 0, memory_order_release);
        a->addr_holder[p->pool_index] = NULL;
        ip_pool_release(&a->srv->pool, p->pool_index);
    }
}

uint32_t acc_ifconfig_peer(struct acceptor *a, const struct ctl_session *cs)
{
    const struct server *srv = a->srv;
    const struct peer *p = cs->peer;

    /* multi.c multi_select_virtual_addr: subnet "ADDRESS NETMASK", net30 "BLOCK+2 BLOCK+1",
     * p2p "ADDRESS SERVER"; an ifconfig-push pair as written */
    if (cs->ccd && cs->ccd->has_ifconfig_push) {
        return cs->ccd->ifconfig_netmask;
    }
    if (srv->plan.topology == CONFIG_TOPOLOGY_SUBNET) {
        return srv->plan.push_netmask;
    }
    if (srv->plan.topology == CONFIG_TOPOLOGY_NET30) {
        return p && p->pool_index < srv->pool.n ? ip_pool_peer(&srv->pool, p->pool_index) : 0;
    }
    return srv->plan.local;
}

/* p's tunnel addresses and routes: IPv4 from ifconfig-push or the pool, IPv6 from
 * ifconfig-ipv6-push or the pool (the same entry as IPv4), iroutes from the client-config-dir
 * file. Returns 0; 1 to turn the client away quietly (pool exhausted: it retries, as with 2.6);
 * -1 to refuse it. why (why_len bytes) gets the reason for the log. */
static int assign_addresses(struct acceptor *a, struct ctl_session *cs, struct peer *p, char *why,
                            size_t why_len)
{
    struct server *srv = a->srv;
    const struct ccd *c = cs->ccd;
    struct vroute_key key;
    char text[80];
    size_t idx;

    if (c && c->has_ifconfig_push) {
        if (assign_static4(a, c, p, why, why_len)) {
            return -1;
        }
    } else if (srv->pool.n == 0) {
        snprintf(why, why_len, "no address: no pool (server nopool) and no ifconfig-push");
        return -1;
    } else if (cs->takeover_index < srv->pool.n && a->addr_holder[cs->takeover_index] &&
               a->addr_holder[cs->takeover_index]->ctl &&
               a->addr_holder[cs->takeover_index]->ctl->state == CS_CLOSING) {
        /* The client's previous session at this address, closing now: its address (the pool
         * entry stays taken; release_peer_slot() leaves it alone for the old one). */
        idx = cs->takeover_index;
        p->pool_index = idx;
        p->vaddr = ip_pool_addr(&srv->pool, idx);
        take_over_entry(a, idx, p);
    } else if (ip_pool_acquire(&srv->pool, cs->cn, &idx)) {
        snprintf(why, why_len, "address pool exhausted");
        return 1;
    } else {
        p->pool_index = idx;
        p->vaddr = ip_pool_addr(&srv->pool, idx);
        a->addr_holder[idx] = p;
    }
    if (srv->has_ipv6) {
        if (c && c->has_ifconfig_ipv6_push) {
            const struct peer *holder;
            uint32_t other;

            if (!in_prefix(c->ifconfig_ipv6, srv->server_addr6, srv->ipv6_bits)) {
                snprintf(why, why_len,
                         "%s: ifconfig-ipv6-push %s is outside the server's IPv6 network", c->path,
                         server_prefix_str(6, c->ifconfig_ipv6, 128, text, sizeof(text)));
                goto refuse;
            }
            /* inside the IPv6 pool: keep its entry out of the dynamic allocation, as for IPv4 */
            (void)ip_pool_reserve(&srv->pool, ip_pool_index6(&srv->pool, c->ifconfig_ipv6));
            vroute_key_make(&key, 6, c->ifconfig_ipv6, 128);
            other = vroute_get(&a->routes, &key);
            holder = other == VROUTE_NONE ? NULL : acc_peer_by_id(a, other);
            /* a closing session's address (the same client reconnecting) is taken over, as
             * assign_static4() does for IPv4 */
            if ((holder && holder->ctl && holder->ctl->state != CS_CLOSING) ||
                memcmp(c->ifconfig_ipv6, srv->server_addr6, 16) == 0) {
                snprintf(why, why_len, "%s: ifconfig-ipv6-push %s is taken", c->path,
                         server_prefix_str(6, c->ifconfig_ipv6, 128, text, sizeof(text)));
                goto refuse;
            }
            memcpy(p->vaddr6, c->ifconfig_ipv6, 16);
            p->has_vaddr6 = true;
        } else if (srv->pool.has_ipv6 && p->pool_index != SIZE_MAX) {
            ip_pool_addr6(&srv->pool, p->pool_index, p->vaddr6);
            p->has_vaddr6 = true;
        } else if (srv->pool.has_ipv6) {
            /* multi.c multi_select_virtual_addr: no pool entry, so no pool IPv6 address */
            acc_cs_log(a, cs, LOG_INFO,
                       "ifconfig-push is used for IPv4 outside the pool, so no IPv6 address "
                       "comes from the IPv6 pool: use ifconfig-ipv6-push for IPv6");
        }
        if (p->has_vaddr6) {
            vroute_key_make(&key, 6, p->vaddr6, 128);
            if (add_peer_route(p, &key)) {
                snprintf(why, why_len, "out of memory");
                goto refuse;
            }
        }
    }
    for (size_t i = 0; c && i < c->n_iroutes; i++) {
        if (c->iroutes[i].family == 6 && !srv->has_ipv6) {
            snprintf(why, why_len, "%s: iroute-ipv6 %s needs an IPv6 address on the server",
                     c->path, vroute_key_str(&c->iroutes[i], text, sizeof(text)));
            goto refuse;
        }
        if (add_peer_route(p, &c->iroutes[i])) {
            snprintf(why, why_len, "out of memory");
            goto refuse;
        }
    }
    return 0;
refuse:
    unassign(a, p);
    return -1;
}

/* When to renegotiate a key that started at start_ms: reneg-sec minus up to 10 % jitter, as a
 * 2.6 server does (init.c do_init_crypto_tls), so that clients do not all rekey at once. */
static uint64_t reneg_deadline(struct acceptor *a, uint64_t start_ms)
{
    uint64_t period_ms = (uint64_t)a->cfg->reneg_sec * 1000;
    uint32_t r = 0;

    if (a->cfg->reneg_sec <= 0) {
        return UINT64_MAX;
    }
    (void)mbedtls_ctr_drbg_random(&a->drbg, (unsigned char *)&r, sizeof(r));
    return start_ms + period_ms - (period_ms / 10 ? r % (period_ms / 10) : 0);
}

/* Our half of key method 2 on ks: fresh randoms, data keys for ks->key_id into *key, and the
 * reply message written into ks's TLS session. Keys come from the TLS exporter when the client
 * announced IV_PROTO_TLS_KEY_EXPORT (we then push tls-ekm), else from the OpenVPN PRF over both
 * sides' randoms and the session ids (ssl.c generate_key_expansion). Returns NULL or a reason. */
static const char *answer_key_method2(struct acceptor *a, struct ctl_session *cs,
                                      struct key_state *ks, const struct key_method2 *client,
                                      enum data_cipher cipher, struct data_key *key)
{
    struct key_method2 *server = calloc(1, sizeof(*server));
    uint8_t block[KEY_BLOCK_LEN], out[1024];
    bool use_ekm = (cs->pi.iv_proto & IV_PROTO_TLS_KEY_EXPORT) != 0;
    const char *why = NULL;
    size_t out_len;
    int err;

    if (!server) {
        return "out of memory";
    }
    if (mbedtls_ctr_drbg_random(&a->drbg, server->random1, sizeof(server->random1)) ||
        mbedtls_ctr_drbg_random(&a->drbg, server->random2, sizeof(server->random2))) {
        why = "random generator failed";
        goto out;
    }
    snprintf(server->options, sizeof(server->options), "%s", a->options_string);
    if (use_ekm) {
        err = tls_session_export(ks->tls, EKM_LABEL_DATA, block, KEY_BLOCK_LEN);
    } else {
        err = kdf_openvpn_prf(client->pre_master, client->random1, server->random1, client->random2,
                              server->random2, cs->peer_sid, cs->own_sid, block);
    }
    err =
        err ? err
            : data_key_init(key, cipher, ks->key_id, block, true, (uint32_t)a->cfg->replay_window);
    mbedtls_platform_zeroize(block, sizeof(block));
    if (err) {
        why = "data channel key setup failed";
        goto out;
    }
    err = key_method2_write(server, false, out, sizeof(out), &out_len);
    if (err || tls_session_write(ks->tls, out, out_len)) {
        data_key_clear(key);
        why = "cannot write the key-method 2 reply";
    } else {
        ks->has_sent_key_method2 = true;
    }
out:
    key_method2_wipe(server);
    free(server);
    return why;
}

/* A renegotiation (key_id > 0) passed its checks and sent key method 2: new keys for the
 * worker (section 10). */
static void rekey(struct acceptor *a, struct ctl_session *cs, struct key_state *ks,
                  const struct key_method2 *client)
{
    struct peer *p = cs->peer;
    enum data_cipher cipher;
    struct data_key key;
    const char *why;
    struct msg *m;

    memset(&key, 0, sizeof(key));
    if (data_cipher_from_name(p->cipher, &cipher)) {
        acc_reneg_failed(a, cs, ks, "data cipher lost");
        return;
    }
    why = answer_key_method2(a, cs, ks, client, cipher, &key);
    if (why) {
        acc_reneg_failed(a, cs, ks, why);
        return;
    }
    m = msg_new(MSG_NEW_KEY, p, &key, sizeof(key)); /* the worker owns the key from here on */
    if (!m) {
        data_key_clear(&key);
        acc_reneg_failed(a, cs, ks, "out of memory");
        return;
    }
    m->peer_id = p->peer_id;
    server_post_worker(a->srv, p->worker, m);
    ks->state = KS_ACTIVE;
    cs->primary = (int)(ks - cs->ks);
    cs->next_reneg_ms = reneg_deadline(a, ks->start_ms);
    acc_cs_log(a, cs, LOG_INFO, "renegotiation done: data channel key_id %u", ks->key_id);
}

/* The client is authenticated (certificate, and username/password when configured): give it
 * an address and a peer-id. It is then cs->peer, not yet live in a worker: cs_free returns what
 * it holds. Returns false after refusing the client. */
static bool install_prepare(struct acceptor *a, struct ctl_session *cs,
                            const struct key_method2 *client)
{
    enum data_cipher cipher;
    struct peer *p = NULL, *prev = NULL;
    size_t n_replaced = 0;
    char why_buf[700];

    if (data_cipher_from_name(cs->cipher_name, &cipher)) {
        auth_failed(a, cs, "data cipher lost");
        return false;
    }
    /* the session this client had before at this address (kept until now: acceptor.c) */
    n_replaced = acc_close_others_at(a, cs, false, &prev);
    if (!a->cfg->duplicate_cn) {
        n_replaced += drop_duplicate_cn(a, cs);
    }
    if (a->n_clients - n_replaced >= (size_t)a->cfg->max_clients) {
        turn_away(a, cs, "max-clients reached");
        return false;
    }
    if (a->cfg->client_config_dir && load_ccd(a, cs)) {
        return false;
    }
    p = calloc(1, sizeof(*p));
    if (!p) {
        auth_failed(a, cs, "out of memory");
        return false;
    }
    p->pool_index = SIZE_MAX;
    switch (assign_addresses(a, cs, p, why_buf, sizeof(why_buf))) {
    case 0:
        break;
    case 1:
        free(p->routes);
        free(p);
        turn_away(a, cs, why_buf);
        return false;
    default:
        free(p->routes);
        free(p);
        auth_failed(a, cs, why_buf);
        return false;
    }
    if (prev) {
        acc_peer_slot_hand_over(a, prev, p); /* its routes go before p's are announced */
    } else if (pick_peer_slot(a, p)) {
        unassign(a, p);
        free(p->routes);
        free(p);
        auth_failed(a, cs, "no free peer-id");
        return false;
    }
    a->n_clients++;
    cs->peer = p; /* from here on cs_free() returns the address and the peer-id */
    p->ctl = cs;
    p->remote = cs->remote;
    p->connected_since = time(NULL);
    atomic_store_explicit(&p->last_ref_s, (int64_t)p->connected_since, memory_order_relaxed);
    p->use_data_v2 = (cs->pi.iv_proto & IV_PROTO_DATA_V2) != 0;
    /* A client configured with compression gets a stub framing pushed (2.6 "compress
     * migrate"); ovpnd itself never compresses. */
    cs->comp_push = push_compress_migrate(&cs->pi, client->options);
    p->framing = comp_framing_for_push(cs->comp_push);
    snprintf(p->common_name, sizeof(p->common_name), "%s", cs->cn);
    snprintf(p->cipher, sizeof(p->cipher), "%s", cs->cipher_name);
    return true;
}

/* client-connect changed the client's addresses or iroutes: give back what it held and assign
 * again from the merged client-config-dir and client-connect outputs. Returns false after
 * refusing the client. */
static bool reassign_addresses(struct acceptor *a, struct ctl_session *cs)
{
    struct peer *p = cs->peer;
    char why_buf[700];
    int rc;

    unassign(a, p);
    free(p->routes);
    p->routes = NULL;
    p->n_routes = 0;
    p->has_vaddr6 = false;
    rc = assign_addresses(a, cs, p, why_buf, sizeof(why_buf));
    if (rc == 0) {
        return true;
    }
    p->pool_index = SIZE_MAX; /* holds no address now */
    if (rc == 1) {
        turn_away(a, cs, why_buf);
    } else {
        auth_failed(a, cs, why_buf);
    }
    return false;
}

/* Everything accepted the client: answer key method 2 and install it in a worker. */
static void install_finish(struct acceptor *a, struct ctl_session *cs, struct key_state *ks,
                           const struct key_method2 *client)
{
    struct server *srv = a->srv;
    struct peer *p = cs->peer;
    enum data_cipher cipher;
    const char *why;

    if (data_cipher_from_name(cs->cipher_name, &cipher)) {
        auth_failed(a, cs, "data cipher lost");
        return;
    }
    why = answer_key_method2(a, cs, ks, client, cipher, &p->key_store[0]);
    if (why) {
        auth_failed(a, cs, why);
        return;
    }
    p->keys[0] = &p->key_store[0];
    p->tx_key = &p->key_store[0];
    ks->state = KS_ACTIVE;
    cs->state = CS_ACTIVE;
    cs->is_connected = true;
    cs->next_reneg_ms = reneg_deadline(a, ks->start_ms);
    cs->is_peer_live = true;
    if (p->pool_index != SIZE_MAX) {
        /* unlearned: nothing routed to it, not even to a closing session it took the
         * address from (with the same peer-id after a hand-over) */
        atomic_store_explicit(&srv->addr_owner[p->pool_index],
                              cs->is_vaddr_unlearned ? 0 : p->peer_id + 1, memory_order_release);
    }
    for (size_t i = 0; i < p->n_routes; i++) {
        acc_route_broadcast(a, p, &p->routes[i], true);
    }
    if (cs->is_vaddr_unlearned) {
        tun_steer_del(&srv->tun_steer, p->vaddr);
    } else if (tun_steer_set(&srv->tun_steer, p->vaddr, (uint32_t)p->worker)) {
        acc_cs_log(a, cs, LOG_WARN,
                   "cannot add %s to the TUN steering map: its worker gets the "
                   "packets handed over",
                   cs->cn);
    }
    {
        struct msg *m = msg_new(MSG_INSTALL, p, NULL, 0);

        if (!m) {
            cs->is_peer_live = false;
            auth_failed(a, cs, "out of memory");
            return;
        }
        server_post_worker(srv, p->worker, m);
    }
    a->stats.handshakes_ok++;
    {
        char vaddr[INET_ADDRSTRLEN];
        struct in_addr in = {.s_addr = htonl(p->vaddr)};

        inet_ntop(AF_INET, &in, vaddr, sizeof(vaddr));
        acc_cs_log(a, cs, LOG_INFO, "client connected: peer-id %u, address %s, cipher %s, keys %s",
                   p->peer_id, vaddr, cs->cipher_name,
                   (cs->pi.iv_proto & IV_PROTO_TLS_KEY_EXPORT) ? "tls-ekm" : "openvpn-prf");
    }
    /* PUSH_REPLY waits for the worker's MSG_INSTALLED: the client starts sending data as soon
     * as it has the reply, and the worker must know the peer-id by then. */
}

/* ---- the checks before the key-method-2 answer, off the loop ---- */

#define TLS_USERNAME_LEN 64 /* openvpn ssl_verify.h: longest CN from username-as-common-name */

/* What a key state waits for, in this order (each skipped when nothing is configured for it):
 * tls-verify, the username/password check, then at a renegotiation the new keys; at the first
 * negotiation an address and peer-id, client-connect, learn-address "add", and the install in
 * a worker. All of it counts against hand-window. */
enum wait_stage {
    WAIT_TLS_VERIFY,
    WAIT_AUTH,
    WAIT_REKEY,
    WAIT_PREPARE,
    WAIT_CLIENT_CONNECT,
    WAIT_LEARN,
    WAIT_INSTALL,
};

struct auth_wait {
    struct acceptor *a;
    struct ctl_session *cs;
    struct key_state *ks;
    struct key_method2 *client; /* owned; wiped when freed */
    enum wait_stage stage;
    struct auth_req *req;     /* the username/password check in progress */
    struct acc_hook_wait *hw; /* the scripts/plugins in progress */
    bool has_cert;            /* the client presented a certificate in ks's handshake */
    bool is_user_pass_ok;     /* a username/password check accepted it for ks */
};

static void auth_wait_free(struct auth_wait *w)
{
    w->ks->auth_wait = NULL;
    auth_cancel(w->req);
    acc_hook_wait_cancel(w->hw);
    if (w->client) {
        key_method2_wipe(w->client);
        free(w->client);
    }
    free(w);
}

void acc_auth_abort(struct key_state *ks)
{
    if (ks->auth_wait) {
        auth_wait_free(ks->auth_wait);
    }
}

/* Refuse after a failed username/password check: AUTH_FAILED[,reason] without a trailing
 * newline, the session closed. At a renegotiation the whole session goes, as the client's
 * credentials are no longer good. */
static void refuse_auth(struct acceptor *a, struct ctl_session *cs, const char *log_reason,
                        const char *client_reason)
{
    char text[300];

    auth_failed_message(client_reason, text, sizeof(text));
    refuse(a, cs, log_reason, text);
}

static const char *const stage_names[] = {
    "tls-verify",     "username/password check", "renegotiation", "address assignment",
    "client-connect", "learn-address",           "install",
};

void acc_auth_timeout(struct acceptor *a, struct ctl_session *cs, struct key_state *ks)
{
    struct auth_wait *w = ks->auth_wait;
    char why[300];

    /* The stage has moved on to the next one when its step was started. */
    enum wait_stage st = w && w->stage > WAIT_TLS_VERIFY ? w->stage - 1 : WAIT_TLS_VERIFY;

    if (w && w->req) {
        snprintf(why, sizeof(why),
                 "username '%.128s': check did not finish within hand-window (%d s)",
                 w->client ? w->client->username : "", a->cfg->hand_window_s);
    } else {
        if (st == WAIT_REKEY || st == WAIT_PREPARE) {
            st = WAIT_CLIENT_CONNECT; /* PREPARE and REKEY are never waited for */
        }
        snprintf(why, sizeof(why), "%s did not finish within hand-window (%d s)", stage_names[st],
                 a->cfg->hand_window_s);
    }
    acc_auth_abort(ks);
    refuse_auth(a, cs, why, NULL);
}

static void run_checks(struct auth_wait *w);
static bool start_auth(struct auth_wait *w);

/* A step of scripts/plugins finished. */
static void hook_step_done(void *ctx, bool is_ok, const char *why)
{
    struct auth_wait *w = ctx;

    w->hw = NULL;
    if (w->cs->state == CS_CLOSING) {
        auth_wait_free(w);
        return;
    }
    if (!is_ok) {
        struct acceptor *a = w->a;
        struct ctl_session *cs = w->cs;

        auth_wait_free(w);
        auth_failed(a, cs, why);
        return;
    }
    run_checks(w);
}

/* Start (or skip) the scripts/plugins of one stage. Returns true when w waits for them, false
 * when w is done with them (skipped) or was freed after a refusal (*is_gone). */
static bool start_hook_step(struct auth_wait *w, int rc, const char *what, bool *is_gone)
{
    char why[128];

    if (rc == 0) {
        return true;
    }
    if (rc < 0) {
        struct acceptor *a = w->a;
        struct ctl_session *cs = w->cs;

        snprintf(why, sizeof(why), "cannot run %s: %s", what, strerror(-rc));
        auth_wait_free(w);
        auth_failed(a, cs, why);
        *is_gone = true;
    }
    return false;
}

/* Before ks gets keys: a client without a certificate only after a username/password check
 * accepted it for this key (server/hooks/auth.h auth_admits). Returns false after refusing it (w is
 * freed then). */
static bool admitted(struct auth_wait *w)
{
    struct acceptor *a = w->a;
    struct ctl_session *cs = w->cs;
    const char *why = NULL;

    if (auth_admits(a->cfg, w->has_cert, w->is_user_pass_ok, &why)) {
        return true;
    }
    auth_wait_free(w);
    auth_failed(a, cs, why);
    return false;
}

static void run_checks(struct auth_wait *w)
{
    struct acceptor *a = w->a;
    struct ctl_session *cs = w->cs;
    struct key_state *ks = w->ks;
    bool is_gone = false;

    for (;;) {
        if (cs->state == CS_CLOSING) {
            auth_wait_free(w);
            return;
        }
        switch (w->stage) {
        case WAIT_TLS_VERIFY:
            w->stage = WAIT_AUTH;
            if (start_hook_step(w, acc_tls_verify_start(a, cs, ks, hook_step_done, w, &w->hw),
                                "tls-verify", &is_gone) ||
                is_gone) {
                return;
            }
            break;
        case WAIT_AUTH:
            w->stage = cs->peer ? WAIT_REKEY : WAIT_PREPARE;
            if (auth_is_configured(a->auth)) {
                if (!start_auth(w)) {
                    auth_wait_free(w);
                }
                return; /* run_checks goes on from auth_done (or auth_succeeded) */
            }
            if (w->client->username[0] || w->client->password[0]) {
                acc_cs_log(a, cs, LOG_DEBUG,
                           "client sent a username/password; no auth-user-pass-verify is "
                           "configured, so it is ignored");
            }
            break;
        case WAIT_REKEY:
            if (!admitted(w)) {
                return;
            }
            ks->auth_wait = NULL; /* w is done; a failed rekey clears ks, which would free w */
            rekey(a, cs, ks, w->client);
            if (ks->in_use && ks->state == KS_ACTIVE && cs->state == CS_ACTIVE) {
                acc_token_after_rekey(a, cs); /* the token renewed by this check */
            }
            auth_wait_free(w);
            return;
        case WAIT_PREPARE:
            if (!admitted(w)) {
                return;
            }
            /* who it is, for the sessions it may replace (install_prepare) */
            cs->has_cn = w->has_cert || (a->cfg->username_as_common_name && cs->cn[0] != '\0');
            if (!install_prepare(a, cs, w->client)) {
                auth_wait_free(w);
                return;
            }
            w->stage = WAIT_CLIENT_CONNECT;
            break;
        case WAIT_CLIENT_CONNECT:
            w->stage = WAIT_LEARN;
            if (start_hook_step(w,
                                acc_client_connect_start(a, cs, w->client->peer_info,
                                                         hook_step_done, w, &w->hw),
                                "client-connect", &is_gone) ||
                is_gone) {
                return;
            }
            break;
        case WAIT_LEARN:
            w->stage = WAIT_INSTALL;
            if (cs->needs_reassign) {
                cs->needs_reassign = false;
                if (!reassign_addresses(a, cs) ||
                    acc_client_env_build(a, cs, w->client->peer_info) != 0) {
                    if (cs->state != CS_CLOSING) {
                        auth_failed(a, cs, "out of memory");
                    }
                    auth_wait_free(w);
                    return;
                }
            }
            if (start_hook_step(w, acc_learn_start(a, cs, hook_step_done, w, &w->hw),
                                "learn-address", &is_gone) ||
                is_gone) {
                return;
            }
            break;
        case WAIT_INSTALL:
            install_finish(a, cs, ks, w->client);
            auth_wait_free(w);
            return;
        }
    }
}

/* The username/password check succeeded (is_by_token: by its auth-gen-token token, already
 * logged): renew the token, then the next checks. */
static void auth_succeeded(struct auth_wait *w, bool is_by_token)
{
    struct acceptor *a = w->a;
    struct ctl_session *cs = w->cs;
    struct key_method2 *client = w->client;

    w->is_user_pass_ok = true;
    acc_token_on_success(a, cs, client);
    if (cs->peer) {
        if (!is_by_token) {
            acc_cs_log(a, cs, LOG_INFO, "username '%.128s' authenticated again", client->username);
        }
        run_checks(w);
        return;
    }
    if (!is_by_token) {
        acc_cs_log(a, cs, LOG_INFO, "username '%.128s' authenticated", client->username);
    }
    cs->username = strdup(client->username);
    if (!cs->username) {
        auth_wait_free(w);
        auth_failed(a, cs, "out of memory");
        return;
    }
    if (a->cfg->username_as_common_name) {
        snprintf(cs->cn, sizeof(cs->cn), "%.*s", (int)sizeof(cs->cn) - 1, client->username);
    }
    run_checks(w);
}

static void auth_done(void *ctx, bool is_ok, const char *client_reason, const char *log_reason)
{
    struct auth_wait *w = ctx;
    struct acceptor *a = w->a;
    struct ctl_session *cs = w->cs;
    struct key_method2 *client = w->client;
    char why[400];

    w->req = NULL; /* finished: auth frees it */
    if (cs->state == CS_CLOSING) {
        auth_wait_free(w);
        return;
    }
    if (!is_ok) {
        snprintf(why, sizeof(why), "username '%.128s': %s%s", client->username, log_reason,
                 cs->peer ? " (at renegotiation)" : "");
        if (client_reason == NULL || client_reason[0] == '\0') {
            client_reason = acc_token_client_reason(cs);
        }
        auth_wait_free(w);
        refuse_auth(a, cs, why, client_reason);
        return;
    }
    auth_succeeded(w, false);
}

/* Check the client's username and password. Returns true when w is taken care of: the check
 * started (w waits until the answer), or an auth-gen-token token was accepted at once and the
 * checks went on; false when the client was refused at once (the caller frees w). */
static bool start_auth(struct auth_wait *w)
{
    struct acceptor *a = w->a;
    struct ctl_session *cs = w->cs;
    struct key_method2 *client = w->client;
    struct auth_client who;
    struct acc_token_env tenv;
    const char *token_reason;
    char token_why[400];
    int err;

    if (client->username_too_long || client->password_too_long) {
        auth_failed(a, cs, "username or password too long");
        return false;
    }
    if (!client->username[0] && !a->cfg->auth_user_pass_optional) {
        /* ssl_verify.c: "peer provided a blank username". */
        auth_failed(a, cs, "no username sent (is auth-user-pass in the client's profile?)");
        return false;
    }
    if (a->cfg->username_as_common_name && strlen(client->username) >= TLS_USERNAME_LEN) {
        /* ssl_verify.c ssl_verify_username_length: a CN is at most 64 characters. */
        auth_failed(a, cs, "username too long to become the common name");
        return false;
    }
    if (cs->username && strcmp(cs->username, client->username) != 0) {
        /* As 2.6: "username attempted to change ... tunnel disabled". */
        auth_failed(a, cs, "username changed at renegotiation");
        return false;
    }
    switch (acc_token_check(a, cs, client, &tenv, &token_reason, token_why, sizeof(token_why))) {
    case AUTH_TOKEN_REFUSED:
        refuse_auth(a, cs, token_why, token_reason);
        return false;
    case AUTH_TOKEN_ACCEPTED:
        auth_succeeded(w, true);
        return true;
    default:
        break;
    }
    memset(&who, 0, sizeof(who));
    who.common_name = cs->cn;
    who.username = client->username;
    who.password = client->password;
    who.remote = cs->remote;
    who.peer_info = client->peer_info;
    who.session_id = tenv.is_set ? tenv.session_id : NULL;
    who.session_state = tenv.is_set ? tenv.session_state : NULL;
    err = auth_start(a->auth, &who, auth_done, w, &w->req);
    if (err) {
        char why[128];

        snprintf(why, sizeof(why), "cannot run auth-user-pass-verify: %s", strerror(-err));
        auth_failed(a, cs, why);
        return false;
    }
    acc_cs_log(a, cs, LOG_DEBUG, "checking username '%.128s'", client->username);
    return true;
}

/* ks received the client's key-method-2 message (client, which w takes over): run the checks.
 * ks waits (ks->auth_wait) while any of them runs. */
static void begin_checks(struct acceptor *a, struct ctl_session *cs, struct key_state *ks,
                         struct key_method2 *client)
{
    struct auth_wait *w = calloc(1, sizeof(*w));

    if (!w) {
        key_method2_wipe(client);
        free(client);
        auth_failed(a, cs, "out of memory");
        return;
    }
    w->a = a;
    w->cs = cs;
    w->ks = ks;
    w->client = client;
    w->stage = WAIT_TLS_VERIFY;
    /* The handshake is over: no step on the thread pool holds ks->tls any more. */
    w->has_cert = mbedtls_ssl_get_peer_cert(&ks->tls->ssl) != NULL;
    ks->auth_wait = w;
    run_checks(w);
}

/* Who the client is from its certificate: CN (or "UNDEF" when verify-client-cert lets it come
 * without one), and the checks on the certificate. Returns false when it was refused. */
static bool check_certificate(struct acceptor *a, struct ctl_session *cs, struct key_state *ks)
{
    const mbedtls_x509_crt *crt = mbedtls_ssl_get_peer_cert(&ks->tls->ssl);
    uint32_t flags = mbedtls_ssl_get_verify_result(&ks->tls->ssl);
    int err;

    if (!crt) {
        if (a->cfg->verify_client_cert == CONFIG_VERIFY_REQUIRE) {
            auth_failed(a, cs, "no client certificate");
            return false;
        }
        snprintf(cs->cn, sizeof(cs->cn), "UNDEF"); /* as 2.6 names a client without one */
        return true;
    }
    if (flags != 0) {
        /* verify-client-cert optional: a certificate that is sent must still verify (2.6 with
         * OpenSSL fails the handshake then; mbed TLS reports it here). */
        char info[256];

        mbedtls_x509_crt_verify_info(info, sizeof(info), "", flags);
        info[strcspn(info, "\n")] = '\0';
        snprintf(cs->cn, sizeof(cs->cn), "UNDEF");
        refuse(a, cs, "client certificate verification failed", NULL);
        acc_cs_log(a, cs, LOG_INFO, "certificate problem: %s", info);
        return false;
    }
    err = tls_session_peer_cn(ks->tls, cs->cn, sizeof(cs->cn));
    if (err || !cs->cn[0]) {
        /* A CN cut at a NUL byte or at a length limit could be another client's name
         * (proto/client_name.h). */
        char why[200] = "the client certificate has no common name (CN)";

        if (err == -PE_MALFORMED) {
            snprintf(why, sizeof(why),
                     "the client certificate's common name (CN '%s') holds a NUL byte",
                     ks->tls->verify_cn);
        } else if (err == -PE_NOSPACE) {
            /* its first CLIENT_NAME_CN_MAX bytes, cut where a UTF-8 character starts */
            const char *cn = ks->tls->verify_cn;
            size_t n = strnlen(cn, CLIENT_NAME_CN_MAX);

            while (n > 0 && ((unsigned char)cn[n] & 0xC0) == 0x80) {
                n--;
            }
            snprintf(why, sizeof(why),
                     "the client certificate's common name (CN '%.*s...') is longer than %d "
                     "bytes",
                     (int)n, cn, CLIENT_NAME_CN_MAX);
        }
        snprintf(cs->cn, sizeof(cs->cn), "UNDEF");
        auth_failed(a, cs, why);
        return false;
    }
    if (a->cfg->remote_cert_tls_client) {
        const char *bad = NULL;

        if (cert_check_remote_tls_client(crt, &bad)) {
            auth_failed(a, cs, bad);
            return false;
        }
    }
    return true;
}

/* A renegotiation's certificate: the first negotiation's (the same DER; a client without one
 * stays without), which must still verify: the CRL may have been reloaded, the certificate may
 * have expired. With verify-client-cert require a failed verification has ended the TLS
 * handshake already; with optional the TLS library reports it here, and check_certificate would
 * have refused it at the first negotiation. The rest of check_certificate (common name,
 * remote-cert-tls) depends on the certificate alone. Returns false when the client was
 * refused. */
static bool recheck_certificate(struct acceptor *a, struct ctl_session *cs, struct key_state *ks)
{
    const mbedtls_x509_crt *crt = mbedtls_ssl_get_peer_cert(&ks->tls->ssl);
    uint32_t flags = mbedtls_ssl_get_verify_result(&ks->tls->ssl);
    char cn[PEER_CN_MAX] = "", info[256], why[PEER_CN_MAX + 128];
    uint8_t fp[32];

    cert_fingerprint(ks->tls, fp);
    if (memcmp(fp, cs->cert_sha256, sizeof(fp)) != 0) {
        /* As 2.6: "client-provided SSL certs unexpectedly changed during mid-session reauth". */
        tls_session_peer_cn(ks->tls, cn, sizeof(cn));
        snprintf(why, sizeof(why), "renegotiation with a different client certificate (CN '%.64s')",
                 cn);
        auth_failed(a, cs, why);
        return false;
    }
    if (crt && flags != 0) {
        mbedtls_x509_crt_verify_info(info, sizeof(info), "", flags);
        info[strcspn(info, "\n")] = '\0';
        snprintf(why, sizeof(why), "client certificate verification failed at renegotiation: %s",
                 info);
        auth_failed(a, cs, why);
        return false;
    }
    return true;
}

/* The client's key-method-2 message arrived on ks: authenticate, choose, answer, install. */
void acc_handle_key_method2(struct acceptor *a, struct ctl_session *cs, struct key_state *ks,
                            const uint8_t *msg, size_t len)
{
    struct key_method2 *client = calloc(1, sizeof(*client));
    enum data_cipher cipher;
    int err;

    if (!client) {
        acc_cs_log(a, cs, LOG_ERR, "out of memory");
        acc_cs_close(a, cs, 0);
        return;
    }
    err = key_method2_parse(msg, len, true, client);
    if (err) {
        acc_cs_log(a, cs, LOG_WARN, "bad key-method 2 message: %s", proto_strerror(err));
        if (ks->key_id == 0) {
            acc_cs_close(a, cs, 0);
        } else {
            acc_reneg_failed(a, cs, ks, "bad key-method 2 message");
        }
        goto out;
    }
    /* As 2.6 verify_user_pass: control characters in the username and password are '_' before
     * any check, log line, script, plugin or file sees them (a newline would be a line of its
     * own in the via-file file and the status file). */
    client_name_remap(client->username);
    client_name_remap(client->password);
    if (cs->peer) {
        if (!recheck_certificate(a, cs, ks)) {
            goto out;
        }
        begin_checks(a, cs, ks, client); /* takes client */
        return;
    }
    peer_info_parse(client->peer_info, strnlen(client->peer_info, sizeof(client->peer_info)),
                    &cs->pi);
    if (!check_certificate(a, cs, ks)) {
        goto out;
    }
    cert_fingerprint(ks->tls, cs->cert_sha256);
    acc_cs_log(a, cs, LOG_INFO, "TLS handshake done, peer info: IV_VER=%s IV_PLAT=%s IV_PROTO=%u",
               cs->pi.version, cs->pi.platform, (unsigned)cs->pi.iv_proto);
    if (ncp_select(a->cfg->data_ciphers, &cs->pi, client->options, a->cfg->data_ciphers_fallback,
                   cs->cipher_name, sizeof(cs->cipher_name)) ||
        data_cipher_from_name(cs->cipher_name, &cipher)) {
        char reason[600];

        snprintf(reason, sizeof(reason),
                 "no shared data cipher (client offers '%s', server has '%s')", cs->pi.ciphers,
                 a->cfg->data_ciphers);
        refuse(a, cs, reason,
               "AUTH_FAILED,Data channel cipher negotiation failed (no shared cipher)");
        goto out;
    }
    begin_checks(a, cs, ks, client); /* takes client */
    return;
out:
    key_method2_wipe(client);
    free(client);
}

static int emit_push(void *ctx, const char *msg, size_t len)
{
    struct ctl_session *cs = ctx;

    (void)len;
    return tls_session_write(acc_primary_ks(cs)->tls, (const uint8_t *)msg, strlen(msg) + 1);
}

#define PUSH_DNS_MAX 64 /* dhcp-option lines made from `dns` options for one client */

void acc_send_push_reply(struct acceptor *a, struct ctl_session *cs)
{
    struct server *srv = a->srv;
    struct config *cfg = a->cfg;
    struct peer *p = cs->peer;
    size_t n_global = cfg->push.n_items + 4;
    size_t cap = n_global + (cs->ccd ? cs->ccd->n_push_ops : 0) + 1 + 16 + PUSH_DNS_MAX;
    const char **global = calloc(n_global, sizeof(*global));
    const char **opts = calloc(cap, sizeof(*opts));
    char derived[4][64], per_client[16][256], (*dns)[256] = calloc(PUSH_DNS_MAX, sizeof(*dns));
    struct push_client_params pp;
    size_t n = 0, n_client = 0, n_dns = 0, g = 0;
    bool no_ifconfig = false, no_ifconfig_ipv6 = false;
    bool knows_dns = push_client_knows_dns(cs->pi.iv_proto);
    int err;

    if (!global || !opts || !dns) {
        acc_cs_log(a, cs, LOG_ERR, "cannot build PUSH_REPLY: out of memory");
        goto out;
    }
    /* 2.6 order (push.c, helper.c): the configured push lines, then route-gateway, topology,
     * ping, ping-restart: together the global push list, which a client-config-dir file may
     * change; then the compression stub and the per-client options. */
    for (size_t i = 0; i < cfg->push.n_items; i++) {
        global[g++] = cfg->push.items[i];
    }
    for (size_t i = 0; i < srv->plan.n_push; i++) {
        global[g++] = srv->plan.push[i]; /* route-gateway or route, topology (topology.h) */
    }
    if (cfg->keepalive_ping_s > 0) {
        snprintf(derived[2], sizeof(derived[2]), "ping %d", cfg->keepalive_ping_s);
        global[g++] = derived[2];
    }
    if (cfg->keepalive_restart_s > 0) {
        snprintf(derived[3], sizeof(derived[3]), "ping-restart %d", cfg->keepalive_restart_s);
        global[g++] = derived[3];
    }
    err = ccd_push_list(cs->ccd, global, g, opts, cap - 17 - PUSH_DNS_MAX, &n, &no_ifconfig,
                        &no_ifconfig_ipv6);
    if (err) {
        acc_cs_log(a, cs, LOG_ERR, "cannot build PUSH_REPLY: too many options");
        goto out;
    }
    if (!knows_dns) {
        /* Each `dns` option gives way to its dhcp-option equivalents (none for some forms),
         * in its place. There is room: opts has PUSH_DNS_MAX slots beyond this list. */
        const char **orig = calloc(n, sizeof(*orig));
        size_t kept = 0;

        if (!orig) {
            acc_cs_log(a, cs, LOG_ERR, "cannot build PUSH_REPLY: out of memory");
            goto out;
        }
        memcpy(orig, opts, n * sizeof(*orig));
        for (size_t i = 0; i < n; i++) {
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
        n = kept;
    }
    if (cs->comp_push) {
        opts[n++] = cs->comp_push; /* 2.6 appends it to the global part */
    }
    memset(&pp, 0, sizeof(pp));
    pp.iv_proto = cs->pi.iv_proto;
    pp.has_iv_mtu = cs->pi.mtu > 0;
    pp.peer_id = p->peer_id;
    pp.cipher = p->cipher;
    pp.ncp = peer_info_supports_ncp(&cs->pi);
    pp.use_ekm = true; /* keys were derived with EKM exactly when the client announced it */
    pp.cc_exit = true;
    pp.dyn_tls_crypt = false; /* renegotiation with dynamic tls-crypt keys is not implemented */
    pp.tun_mtu = cfg->tun_mtu;
    pp.auth_token = acc_token_for_push(a, cs);
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
        pp.ifconfig_ipv6_netbits = (unsigned)(from_ccd ? c->ifconfig_ipv6_bits : srv->ipv6_bits);
        memcpy(pp.ifconfig_ipv6_remote,
               from_ccd && c->has_ifconfig_ipv6_remote ? c->ifconfig_ipv6_remote
                                                       : srv->server_addr6,
               16);
    }
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
    cs->is_pushed = true;
    cs->push_sent_ms = acc_now_ms(a);
    acc_cs_log(a, cs, LOG_DEBUG, "PUSH_REPLY sent (%zu options)", n);
out:
    free(global);
    free(opts);
    free(dns);
}
