/* server/control/client_hooks.c: the acceptor's calls of the operator's tls-verify,
 * client-disconnect, learn-address and client-crresponse scripts and plugins
 * (server/hooks/hooks.h), and the client's environment they and client-connect get
 * (client_connect.c runs that): what each is told, and what is done with its answer. Acceptor
 * thread only.
 *
 * Where openvpn 2.6 blocks its one thread on these (a tls-verify script runs inside the TLS
 * handshake), ovpnd waits for them without holding up anything else: tls-verify runs once the
 * handshake has finished and the client's key-method-2 message arrived, before it is answered;
 * client-connect and learn-address "add" run before the key-method-2 answer too, so the client
 * gets its keys and PUSH_REPLY only when they have accepted it. All of them count against
 * hand-window. client-disconnect and learn-address "delete" run in the background when the
 * client goes.
 */
#include "server/control/acceptor.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mbedtls/pem.h>
#include <openssl/crypto.h>

#include "server/hooks/auth.h"
#include "server/hooks/hook_env.h"
#include "server/hooks/hooks.h"
#include "server/hooks/openvpn_plugin.h"
#include "server/hooks/plugin.h"
#include "server/hooks/x509_track.h"

#include "server/control/acceptor_internal.h"

#define TEMP_PATH_MAX 512
#define LEARN_MAX 64 /* addresses of one client told to learn-address (its own two + iroutes) */

enum hw_kind { HW_TLS_VERIFY, HW_TLS_FINAL, HW_LEARN, HW_CRRESPONSE };

struct learn_item {
    char addr[72];
    size_t route; /* index into p->routes, or SIZE_MAX for the IPv4 address */
    bool is_update;
};

struct acc_hook_wait {
    struct acceptor *a;
    struct ctl_session *cs;
    enum hw_kind kind;
    acc_hook_cb cb;
    void *ctx;
    struct hook_run *run;
    /* tls-verify: depth runs from n_depths-1 down to 0 */
    int depth, n_depths;
    struct script_env cert_vars[HOOK_CERT_DEPTH_MAX];
    char subject[HOOK_CERT_DEPTH_MAX][HOOK_SUBJECT_MAX];
    const mbedtls_x509_crt *chain[HOOK_CERT_DEPTH_MAX]; /* borrowed from the TLS session/conf */
    char peer_cert_file[TEMP_PATH_MAX]; /* tls-export-cert: the certificate at depth, as PEM */
    /* client-crresponse: the file with the response */
    char script_file[TEMP_PATH_MAX];
    /* learn-address */
    struct learn_item items[LEARN_MAX];
    size_t n_items, next_item;
    bool is_route_unlearned[LEARN_MAX];
};

/* A zeroed wait of kind for cs, answering cb(ctx) (the caller frees it). NULL: no memory. */
static struct acc_hook_wait *hook_wait_new(struct acceptor *a, struct ctl_session *cs,
                                           enum hw_kind kind, acc_hook_cb cb, void *ctx)
{
    struct acc_hook_wait *w = calloc(1, sizeof(*w));

    if (w != NULL) {
        w->a = a;
        w->cs = cs;
        w->kind = kind;
        w->cb = cb;
        w->ctx = ctx;
    }
    return w;
}

bool acc_hooks_any(const struct acceptor *a)
{
    const struct config *cfg = a->cfg;

    return hooks_wanted(a->checks.hooks, OVPN_PLUGIN_TLS_VERIFY, cfg->hooks.tls_verify) ||
           acc_hooks_client_env_wanted(a);
}

bool acc_hooks_client_env_wanted(const struct acceptor *a)
{
    const struct config *cfg = a->cfg;

    return hooks_wanted(a->checks.hooks, OVPN_PLUGIN_CLIENT_CONNECT, cfg->hooks.client_connect) ||
           hooks_wanted(a->checks.hooks, OVPN_PLUGIN_CLIENT_CONNECT_V2, NULL) ||
           hooks_wanted(a->checks.hooks, OVPN_PLUGIN_CLIENT_DISCONNECT,
                        cfg->hooks.client_disconnect) ||
           hooks_wanted(a->checks.hooks, OVPN_PLUGIN_LEARN_ADDRESS, cfg->hooks.learn_address);
}

static void remove_file(char *path)
{
    if (path[0] != '\0') {
        unlink(path);
        path[0] = '\0';
    }
}

void acc_hook_wait_cancel(struct acc_hook_wait *w)
{
    if (w == NULL) {
        return;
    }
    hook_run_cancel(w->run);
    for (int i = 0; i < HOOK_CERT_DEPTH_MAX; i++) {
        script_env_clear(&w->cert_vars[i]);
    }
    remove_file(w->peer_cert_file);
    remove_file(w->script_file);
    free(w);
}

/* Report and free w: the callback may free the session's wait that owns w's pointer. */
static void hw_finish(struct acc_hook_wait *w, bool is_ok, const char *why)
{
    acc_hook_cb cb = w->cb;
    void *ctx = w->ctx;
    char text[600];

    snprintf(text, sizeof(text), "%s", why ? why : "");
    w->run = NULL; /* finished: hooks frees it */
    acc_hook_wait_cancel(w);
    cb(ctx, is_ok, text);
}

/* ---- tls-verify ---- */

static int start_tls_verify_depth(struct acc_hook_wait *w);

static void on_tls_verify(void *ctx, const struct hook_result *res)
{
    struct acc_hook_wait *w = ctx;
    char why[600];

    remove_file(w->peer_cert_file); /* as 2.6: removed once the depth is verified */

    w->run = NULL;
    if (!res->is_ok) {
        snprintf(why, sizeof(why), "tls-verify refused the certificate at depth %d (%.200s): %s",
                 w->depth, w->subject[w->depth], res->why);
        hw_finish(w, false, why);
        return;
    }
    acc_cs_log(w->a, w->cs, LOG_DEBUG, "tls-verify accepted depth %d: %s", w->depth,
               w->subject[w->depth]);
    w->depth--;
    if (w->depth < 0) {
        hw_finish(w, true, NULL);
        return;
    }
    if (start_tls_verify_depth(w) != 0) {
        hw_finish(w, false, "cannot run tls-verify");
    }
}

/* tls-export-cert DIR (2.6 ssl_verify.c verify_cert): the certificate at w->depth written as
 * PEM to a new mode-0600 file in DIR, named in $peer_cert for tls-verify and removed when that
 * depth is done. Returns 0 or -errno (2.6 refuses the client then). */
static int export_cert(struct acc_hook_wait *w)
{
    const mbedtls_x509_crt *crt = w->chain[w->depth];
    unsigned char pem[8192];
    size_t olen = 0;
    int fd, err = 0;

    if (mbedtls_pem_write_buffer("-----BEGIN CERTIFICATE-----\n", "-----END CERTIFICATE-----\n",
                                 crt->raw.p, crt->raw.len, pem, sizeof(pem), &olen) != 0 ||
        olen == 0) {
        return -EINVAL;
    }
    if ((size_t)snprintf(w->peer_cert_file, sizeof(w->peer_cert_file), "%s/pef-XXXXXX",
                         w->a->cfg->cert.tls_export_cert_dir) >= sizeof(w->peer_cert_file)) {
        w->peer_cert_file[0] = '\0';
        return -ENAMETOOLONG;
    }
    fd = mkstemp(w->peer_cert_file);
    if (fd < 0) {
        err = -errno;
        w->peer_cert_file[0] = '\0';
        return err;
    }
    if (write(fd, pem, olen - 1) != (ssize_t)(olen - 1)) { /* olen counts the NUL */
        err = -EIO;
    }
    if (close(fd) != 0 && err == 0) {
        err = -EIO;
    }
    return err;
}

/* The environment at depth d, as 2.6 has it then: what the certificates from the top down to d
 * set, the untrusted address, and common_name at depth 0 (ssl_verify.c verify_cert). */
static int start_tls_verify_depth(struct acc_hook_wait *w)
{
    struct acceptor *a = w->a;
    struct script_env env = {0};
    char depth[16], *args[3];
    struct hook_req req;
    int err = hook_env_append(&env, &a->checks.global_env);

    for (int d = w->n_depths - 1; d >= w->depth && err == 0; d--) {
        err = hook_env_append(&env, &w->cert_vars[d]);
    }
    err = err ? err : hook_env_addr(&env, "untrusted", &w->cs->remote);
    if (err == 0 && w->depth == 0) {
        err = script_env_add(&env, "common_name", w->cs->client.cn);
    }
    if (err == 0 && a->cfg->cert.tls_export_cert_dir) {
        err = export_cert(w);
        err = err ? err : script_env_add(&env, "peer_cert", w->peer_cert_file);
    }
    snprintf(depth, sizeof(depth), "%d", w->depth);
    args[0] = depth;
    args[1] = w->subject[w->depth];
    args[2] = NULL;
    memset(&req, 0, sizeof(req));
    req.what = "tls-verify";
    req.types[0] = OVPN_PLUGIN_TLS_VERIFY;
    req.n_types = 1;
    req.type_argv[0] = args;
    req.script = a->cfg->hooks.tls_verify;
    req.script_args = args;
    req.script_type = "tls-verify";
    req.env = &env;
    req.client = w->cs->hooks.plugin_client;
    err = err ? err : hook_run_start(a->checks.hooks, &req, on_tls_verify, w, &w->run);
    script_env_clear(&env);
    return err;
}

int acc_tls_verify_start(struct acceptor *a, struct ctl_session *cs, struct key_state *ks,
                         acc_hook_cb cb, void *ctx, struct acc_hook_wait **out)
{
    const mbedtls_x509_crt *chain[HOOK_CERT_DEPTH_MAX];
    const mbedtls_x509_crt *leaf = mbedtls_ssl_get_peer_cert(&ks->tls->ssl);
    /* the CAs of the configuration this handshake verified with: it lives as long as the session
     * (a reload or a capath change retires, but does not free, a configuration in use) */
    size_t n = hook_cert_chain(leaf, &ks->tls->conf->ca, chain, HOOK_CERT_DEPTH_MAX);
    bool wants_tls_verify =
        hooks_wanted(a->checks.hooks, OVPN_PLUGIN_TLS_VERIFY, a->cfg->hooks.tls_verify);
    struct acc_hook_wait *w;
    int err = 0;

    if (!acc_hooks_any(a) || (cs->hooks.tls_env != NULL && !wants_tls_verify)) {
        return 1;
    }
    w = hook_wait_new(a, cs, HW_TLS_VERIFY, cb, ctx);
    if (w == NULL) {
        return -ENOMEM;
    }
    w->n_depths = (int)n;
    for (size_t d = 0; d < n && err == 0; d++) {
        w->chain[d] = chain[d];
        if (a->cfg->cert.n_x509_track > 0) { /* x509-track: its variables instead (2.6) */
            err = x509_track_env(&w->cert_vars[d], (int)d, chain[d], a->cfg->cert.x509_track,
                                 a->cfg->cert.n_x509_track);
            err = err ? err : hook_env_cert_info(&w->cert_vars[d], (int)d, chain[d]);
        } else {
            err = hook_env_cert(&w->cert_vars[d], (int)d, chain[d]);
        }
        err = err ? err : hook_cert_subject(chain[d], w->subject[d], HOOK_SUBJECT_MAX);
    }
    if (err == 0 && cs->hooks.tls_env == NULL) {
        /* What later scripts see of the certificates (2.6 keeps them in the client's env). */
        cs->hooks.tls_env = calloc(1, sizeof(*cs->hooks.tls_env));
        err = cs->hooks.tls_env == NULL ? -ENOMEM : 0;
        for (int d = w->n_depths - 1; d >= 0 && err == 0; d--) {
            err = hook_env_append(cs->hooks.tls_env, &w->cert_vars[d]);
        }
    }
    if (err == 0 && (!wants_tls_verify || n == 0)) {
        acc_hook_wait_cancel(w); /* no tls-verify (or no certificate): nothing to run */
        return 1;
    }
    w->depth = w->n_depths - 1;
    err = err ? err : start_tls_verify_depth(w);
    if (err) {
        acc_hook_wait_cancel(w);
        return err;
    }
    *out = w;
    return 0;
}

/* ---- TLS_FINAL ---- */

static void on_tls_final(void *ctx, const struct hook_result *res)
{
    struct acc_hook_wait *w = ctx;
    char why[600];

    w->run = NULL;
    snprintf(why, sizeof(why), "TLS_FINAL: %s", res->why);
    hw_finish(w, res->is_ok, res->is_ok ? NULL : why);
}

/* 2.6 ssl.c, export_user_keying_material: the material in lower-case hex; left out (with a
 * warning) when the export fails. */
static int env_add_ekm(struct acceptor *a, struct ctl_session *cs, const struct key_state *ks,
                       struct script_env *env)
{
    size_t len = (size_t)a->cfg->tls.ekm_len;
    uint8_t *ekm = malloc(len);
    char *hex = malloc(2 * len + 1);
    int err = 0;

    if (ekm == NULL || hex == NULL) {
        err = -ENOMEM;
    } else if (tls_session_export(ks->tls, a->cfg->tls.ekm_label, ekm, len) != 0) {
        acc_cs_log(a, cs, LOG_WARN, "Export keying material failed!");
    } else {
        for (size_t i = 0; i < len; i++) {
            snprintf(hex + 2 * i, 3, "%02x", ekm[i]);
        }
        err = script_env_add(env, "exported_keying_material", hex);
    }
    if (ekm != NULL) {
        OPENSSL_cleanse(ekm, len);
    }
    if (hex != NULL) {
        OPENSSL_cleanse(hex, 2 * len + 1);
    }
    free(ekm);
    free(hex);
    return err;
}

int acc_tls_final_start(struct acceptor *a, struct ctl_session *cs, const struct key_state *ks,
                        const char *username, acc_hook_cb cb, void *ctx, struct acc_hook_wait **out)
{
    struct script_env env = {0};
    struct acc_hook_wait *w;
    struct hook_req req;
    int err;

    if (!hooks_wanted(a->checks.hooks, OVPN_PLUGIN_TLS_FINAL, NULL)) {
        return 1;
    }
    w = hook_wait_new(a, cs, HW_TLS_FINAL, cb, ctx);
    if (w == NULL) {
        return -ENOMEM;
    }
    /* what 2.6's session environment holds by then (ssl.c key_method_2_read) */
    err = hook_env_append(&env, &a->checks.global_env);
    if (err == 0 && cs->hooks.tls_env != NULL) {
        err = hook_env_append(&env, cs->hooks.tls_env);
    }
    err = err ? err : hook_env_addr(&env, "untrusted", &cs->remote);
    err = err ? err : script_env_add(&env, "common_name", cs->client.cn);
    if (err == 0 && username != NULL && username[0] != '\0') {
        err = script_env_add(&env, "username", username);
    }
    if (err == 0 && a->cfg->tls.ekm_label != NULL) {
        err = env_add_ekm(a, cs, ks, &env);
    }
    memset(&req, 0, sizeof(req));
    req.what = "TLS_FINAL";
    req.types[0] = OVPN_PLUGIN_TLS_FINAL;
    req.n_types = 1;
    req.env = &env;
    req.client = cs->hooks.plugin_client;
    err = err ? err : hook_run_start(a->checks.hooks, &req, on_tls_final, w, &w->run);
    script_env_clear(&env);
    if (err) {
        acc_hook_wait_cancel(w);
        return err;
    }
    *out = w;
    return 0;
}

/* ---- the client's environment ---- */

int acc_client_env_build(struct acceptor *a, struct ctl_session *cs, const char *peer_info)
{
    const struct acceptor_env *ae = a->env;
    struct peer *p = cs->peer;
    const struct ccd *c = cs->ccd;
    struct script_env *env = cs->hooks.env;
    struct hook_client hc;
    int err;

    if (env == NULL) {
        env = cs->hooks.env = calloc(1, sizeof(*env));
        if (env == NULL) {
            return -ENOMEM;
        }
    }
    script_env_clear(env);
    memset(&hc, 0, sizeof(hc));
    hc.common_name = cs->client.cn;
    hc.username = cs->client.username;
    hc.remote = cs->remote;
    hc.is_p2p = ae->plan->topology != CONFIG_TOPOLOGY_SUBNET;
    hc.vaddr = p->vaddr;
    hc.vaddr_netmask = acc_ifconfig_peer(a, cs);
    hc.has_ipv6 = p->has_vaddr6;
    if (p->has_vaddr6) {
        bool from_ccd = c && c->has_ifconfig_ipv6_push;

        memcpy(hc.vaddr6, p->vaddr6, 16);
        memcpy(hc.remote_addr6,
               from_ccd && c->has_ifconfig_ipv6_remote ? c->ifconfig_ipv6_remote : ae->server_addr6,
               16);
        hc.vaddr6_bits = from_ccd ? c->ifconfig_ipv6_bits : ae->ipv6_bits;
    }
    hc.connected_since = p->connected_since;
    err = hook_env_append(env, &a->checks.global_env);
    if (err == 0 && cs->hooks.tls_env != NULL) {
        err = hook_env_append(env, cs->hooks.tls_env);
    }
    err = err ? err : hook_env_peer_info(env, peer_info);
    err = err ? err : acc_token_env_add(a, cs, env);
    return err ? err : hook_env_client(env, &hc);
}

/* ---- learn-address ---- */

static int start_learn_item(struct acc_hook_wait *w);

/* An ifconfig-push address outside the pool is routed as a /32 among p's routes
 * (assign.c); learn-address handles it as the client's address. */
static bool is_vaddr_route(const struct peer *p, const struct vroute_key *k)
{
    uint32_t be = htonl(p->vaddr);

    return k->family == 4 && k->plen == 32 && memcmp(k->addr, &be, 4) == 0;
}

static void on_learn(void *ctx, const struct hook_result *res)
{
    struct acc_hook_wait *w = ctx;
    struct ctl_session *cs = w->cs;
    struct learn_item *it = &w->items[w->next_item];
    char **grown;

    w->run = NULL;
    if (res->is_ok) {
        grown = realloc(cs->hooks.learned, (cs->hooks.n_learned + 1) * sizeof(*grown));
        if (grown != NULL) {
            cs->hooks.learned = grown;
            cs->hooks.learned[cs->hooks.n_learned] = strdup(it->addr);
            if (cs->hooks.learned[cs->hooks.n_learned] != NULL) {
                cs->hooks.n_learned++;
            }
        }
    } else {
        /* As 2.6 (multi.c multi_learn_addr): the address is not learned, so packets to it are
         * dropped; the client stays. */
        acc_cs_log(w->a, cs, LOG_WARN, "learn-address refused %s: %s; packets to it are dropped",
                   it->addr, res->why);
        if (it->route == SIZE_MAX) {
            cs->hooks.is_vaddr_unlearned = true;
        } else {
            w->is_route_unlearned[it->route] = true;
        }
    }
    w->next_item++;
    if (w->next_item < w->n_items) {
        int err = start_learn_item(w);

        if (err == 0) {
            return;
        }
        /* What cannot be asked is not learned either. */
        for (; w->next_item < w->n_items; w->next_item++) {
            it = &w->items[w->next_item];
            acc_cs_log(w->a, cs, LOG_WARN, "cannot run learn-address for %s: %s", it->addr,
                       strerror(-err));
            if (it->route == SIZE_MAX) {
                cs->hooks.is_vaddr_unlearned = true;
            } else {
                w->is_route_unlearned[it->route] = true;
            }
        }
    }
    if (cs->peer != NULL) {
        /* Routes that were not learned are never announced to the workers. */
        struct peer *p = cs->peer;
        size_t kept = 0;

        for (size_t i = 0; i < p->n_routes; i++) {
            if (is_vaddr_route(p, &p->routes[i]) ? !cs->hooks.is_vaddr_unlearned
                                                 : i >= LEARN_MAX || !w->is_route_unlearned[i]) {
                p->routes[kept++] = p->routes[i];
            }
        }
        p->n_routes = kept;
    }
    hw_finish(w, true, NULL);
}

int acc_learn_run(struct acceptor *a, const char *op, const char *addr, const char *cn,
                  const struct script_env *client_env, struct plugin_client *client,
                  hook_done_cb done, void *ctx, struct hook_run **run, const char *ctx_name)
{
    char *args[4] = {(char *)(uintptr_t)op, (char *)(uintptr_t)addr, (char *)(uintptr_t)cn, NULL};
    struct script_env env = {0};
    struct hook_req req;
    int err = 0;

    if (client_env != NULL) {
        err = hook_env_append(&env, client_env);
    } /* else "delete": 2.6 passes a fresh environment, script_type alone */
    memset(&req, 0, sizeof(req));
    req.what = "learn-address";
    req.types[0] = OVPN_PLUGIN_LEARN_ADDRESS;
    req.n_types = 1;
    req.type_argv[0] = args;
    req.script = a->cfg->hooks.learn_address;
    req.script_args = args;
    req.script_type = "learn-address";
    req.env = &env;
    req.is_script_after_failure = true;
    req.is_serial = true;
    req.client = client; /* "delete" (NULL) as 2.6 runs it: with the server's contexts */
    if (err == 0) {
        err = done ? hook_run_start(a->checks.hooks, &req, done, ctx, run)
                   : hook_run_detached(a->checks.hooks, &req, ctx_name);
    }
    script_env_clear(&env);
    return err;
}

static int learn_run(struct acceptor *a, const char *op, const char *addr, const char *cn,
                     const struct script_env *client_env, struct acc_hook_wait *w,
                     const char *ctx_name)
{
    return acc_learn_run(a, op, addr, cn, client_env, w ? w->cs->hooks.plugin_client : NULL,
                         w ? on_learn : NULL, w, w ? &w->run : NULL, ctx_name);
}

static int start_learn_item(struct acc_hook_wait *w)
{
    return learn_run(w->a, w->items[w->next_item].is_update ? "update" : "add",
                     w->items[w->next_item].addr, w->cs->client.cn, w->cs->hooks.env, w, NULL);
}

int acc_learn_start(struct acceptor *a, struct ctl_session *cs, acc_hook_cb cb, void *ctx,
                    struct acc_hook_wait **out)
{
    struct peer *p = cs->peer;
    struct acc_hook_wait *w;
    int err;

    if (!hooks_wanted(a->checks.hooks, OVPN_PLUGIN_LEARN_ADDRESS, a->cfg->hooks.learn_address) ||
        p == NULL || a->cfg->net.is_tap) {
        /* with dev tap 2.6 learns no address at connect, only the MACs the client sends from
         * (multi.c multi_client_connect_late_setup): tap_macs.c */
        return 1;
    }
    w = hook_wait_new(a, cs, HW_LEARN, cb, ctx);
    if (w == NULL) {
        return -ENOMEM;
    }
    if (p->vaddr != 0) { /* (a tap client without a pool has no address) */
        struct in_addr in = {.s_addr = htonl(p->vaddr)};
        struct learn_item *it = &w->items[w->n_items++];

        inet_ntop(AF_INET, &in, it->addr, sizeof(it->addr));
        it->route = SIZE_MAX;
        /* "add": an address is only ever taken over from a closing session, whose "delete"
         * has run (2.6 likewise deletes the old instance's routes before the new one learns) */
        it->is_update = false;
    }
    for (size_t i = 0; i < p->n_routes && w->n_items < LEARN_MAX; i++) {
        const struct vroute_key *k = &p->routes[i];
        struct learn_item *it;

        if (is_vaddr_route(p, k)) {
            continue; /* the client's own address, learned above */
        }
        it = &w->items[w->n_items++];

        if (k->family == 6 && k->plen == 128) {
            inet_ntop(AF_INET6, k->addr, it->addr, sizeof(it->addr)); /* a host: no /128 */
        } else {
            vroute_key_str(k, it->addr, sizeof(it->addr));
        }
        it->route = i;
        /* "update" when another client that stays routes it now (an iroute claimed twice) */
        {
            uint32_t other = routes_get(a->env->routes, k);
            const struct peer *holder =
                other == VROUTE_NONE || other == p->peer_id ? NULL : acc_peer_by_id(a, other);

            it->is_update = holder && holder->ctl && holder->ctl->state != CS_CLOSING;
        }
    }
    if (w->n_items == 0) {
        acc_hook_wait_cancel(w);
        return 1; /* nothing to learn */
    }
    err = start_learn_item(w);
    if (err) {
        acc_hook_wait_cancel(w);
        return err;
    }
    *out = w;
    return 0;
}

/* ---- the client goes ---- */

void acc_client_gone(struct acceptor *a, struct ctl_session *cs)
{
    char who[PEER_CN_MAX + 64], addr[UDP_ADDR_STR_MAX];
    int err;

    snprintf(who, sizeof(who), "%s/%s", cs->client.cn,
             udp_addr_str(&cs->remote, addr, sizeof(addr)));
    if (cs->is_connected && !cs->hooks.is_disconnect_done && cs->peer != NULL &&
        hooks_wanted(a->checks.hooks, OVPN_PLUGIN_CLIENT_DISCONNECT,
                     a->cfg->hooks.client_disconnect)) {
        struct peer *p = cs->peer;
        struct script_env env = {0};
        struct hook_req req;

        err = cs->hooks.env ? hook_env_append(&env, cs->hooks.env) : -ENOMEM;
        err = err ? err : hook_env_addr(&env, "trusted", &cs->remote);
        err = err ? err
                  : hook_env_disconnect(&env,
                                        atomic_load_explicit(&p->bytes_rx, memory_order_relaxed),
                                        atomic_load_explicit(&p->bytes_tx, memory_order_relaxed),
                                        (int64_t)(time(NULL) - p->connected_since));
        memset(&req, 0, sizeof(req));
        req.what = "client-disconnect";
        req.types[0] = OVPN_PLUGIN_CLIENT_DISCONNECT;
        req.n_types = 1;
        req.script = a->cfg->hooks.client_disconnect;
        req.script_type = "client-disconnect";
        req.env = &env;
        req.client = cs->hooks.plugin_client;
        err = err ? err : hook_run_detached(a->checks.hooks, &req, who);
        if (err) {
            log_msg(LOG_WARN, "%s: cannot run client-disconnect: %s", who, strerror(-err));
        }
        script_env_clear(&env);
    }
    cs->hooks.is_disconnect_done = true;
    acc_hooks_unlearn(a, cs);
}

void acc_hooks_unlearn(struct acceptor *a, struct ctl_session *cs)
{
    char who[PEER_CN_MAX + 64], addr[UDP_ADDR_STR_MAX];
    int err;

    snprintf(who, sizeof(who), "%s/%s", cs->client.cn,
             udp_addr_str(&cs->remote, addr, sizeof(addr)));
    for (size_t i = 0; i < cs->hooks.n_learned; i++) {
        err = learn_run(a, "delete", cs->hooks.learned[i], NULL, NULL, NULL, who);
        if (err) {
            log_msg(LOG_WARN, "%s: cannot run learn-address delete %s: %s", who,
                    cs->hooks.learned[i], strerror(-err));
        }
        free(cs->hooks.learned[i]);
    }
    free(cs->hooks.learned);
    cs->hooks.learned = NULL;
    cs->hooks.n_learned = 0;
    acc_tap_macs_unlearn(a, cs);
}

/* ---- client-crresponse ---- */

/* Write text into path (created by script_make_temp). 0 or -errno. */
static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    int err = 0;

    if (f == NULL) {
        return -errno;
    }
    if (fputs(text, f) == EOF) {
        err = -EIO;
    }
    if (fclose(f) != 0 && err == 0) {
        err = -errno;
    }
    return err;
}

static void on_crresponse(void *ctx, const struct hook_result *res)
{
    struct acc_hook_wait *w = ctx;

    w->cs->hooks.cr_wait = NULL;
    hw_finish(w, res->is_ok, res->why);
}

/* As 2.6 tls_deauthenticate: a failed client-crresponse ends the client's authentication. */
static void crresponse_done(void *ctx, bool is_ok, const char *why)
{
    struct ctl_session *cs = ctx;
    struct acceptor *a = cs->hooks.cr_acceptor;
    char text[700];

    if (is_ok || cs->state == CS_CLOSING) {
        return;
    }
    acc_auth_abort(&cs->ks[0]);
    acc_auth_abort(&cs->ks[1]);
    snprintf(text, sizeof(text), "client-crresponse: %s", why);
    acc_auth_failed(a, cs, text);
}

int acc_crresponse_start(struct acceptor *a, struct ctl_session *cs,
                         const struct script_env *client_env, const char *response)
{
    const struct config *cfg = a->cfg;
    struct script_env env = {0};
    char *script_args[2] = {NULL, NULL};
    struct acc_hook_wait *w;
    struct hook_req req;
    int err;

    if (!hooks_wanted(a->checks.hooks, OVPN_PLUGIN_CLIENT_CRRESPONSE,
                      cfg->hooks.client_crresponse)) {
        return 1;
    }
    if (cs->hooks.cr_wait) {
        acc_cs_log(a, cs, LOG_WARN, "CR response ignored: the previous one is still checked");
        return 1;
    }
    w = hook_wait_new(a, cs, HW_CRRESPONSE, crresponse_done, cs);
    if (w == NULL) {
        return -ENOMEM;
    }
    err = hook_env_append(&env, client_env);
    /* plugins read it from the environment; the script from a file (2.6: it may be secret) */
    err = err ? err : script_env_add(&env, "crresponse", response);
    if (err == 0 && cfg->hooks.client_crresponse != NULL) {
        err = script_make_temp(cfg->hooks.tmp_dir, "cr", w->script_file, TEMP_PATH_MAX);
        err = err ? err : write_file(w->script_file, response);
        script_args[0] = w->script_file;
    }
    memset(&req, 0, sizeof(req));
    req.what = "client-crresponse";
    req.types[0] = OVPN_PLUGIN_CLIENT_CRRESPONSE;
    req.n_types = 1;
    req.script = cfg->hooks.client_crresponse;
    req.script_args = script_args;
    req.script_type = "client-crresponse";
    req.env = &env;
    req.client = cs->hooks.plugin_client;
    req.is_script_after_failure = true;
    err = err ? err : hook_run_start(a->checks.hooks, &req, on_crresponse, w, &w->run);
    script_env_clear(&env);
    if (err) {
        acc_hook_wait_cancel(w);
        return err;
    }
    cs->hooks.cr_acceptor = a;
    cs->hooks.cr_wait = w;
    return 0;
}

void acc_hooks_on_close(struct acceptor *a, struct ctl_session *cs)
{
    if (cs->is_connected || cs->hooks.n_learned > 0 || cs->macs.n > 0) {
        acc_client_gone(a, cs); /* client-disconnect, learn-address delete */
    }
}

void acc_hooks_on_free(struct acceptor *a, struct ctl_session *cs)
{
    (void)a;
    acc_hook_wait_cancel(cs->hooks.cr_wait);
    cs->hooks.cr_wait = NULL;
    acc_tap_macs_free(cs);                        /* its runs are cancelled */
    plugin_client_unref(cs->hooks.plugin_client); /* runs still going hold their own */
    cs->hooks.plugin_client = NULL;
    for (size_t i = 0; i < cs->hooks.n_learned; i++) {
        free(cs->hooks.learned[i]);
    }
    free(cs->hooks.learned);
    if (cs->hooks.tls_env) {
        script_env_clear(cs->hooks.tls_env);
        free(cs->hooks.tls_env);
    }
    if (cs->hooks.env) {
        script_env_clear(cs->hooks.env);
        free(cs->hooks.env);
    }
}
