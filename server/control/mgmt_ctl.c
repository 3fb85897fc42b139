/* server/control/mgmt_ctl.c: what management commands do to the sessions, and the >CLIENT
 * notifications. The listener (server/ops/mgmt.c) runs on the acceptor's loop, so these run on
 * the acceptor thread, which owns the sessions: no lock, no message. Facts from openvpn 2.6
 * src/openvpn/multi.c (management_callback_*) and manage.c. */
#include <errno.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/push.h"
#include "server/data/worker_stats.h"
#include "server/hooks/hook_env.h"
#include "server/ops/mgmt.h"

#include "server/control/acceptor_internal.h"

#define KILL_DEFAULT_MSG "RESTART" /* 2.6 send_restart without a message */

/* Tell cs's client kill_msg (2.6: "RESTART", or client-kill's message, e.g. "HALT") and close
 * it, lingering for the ACKs. */
static void kill_session(struct acceptor *a, struct ctl_session *cs, const char *kill_msg,
                         const char *why)
{
    acc_cs_log(a, cs, LOG_INFO, "killed by the management interface (%s)", why);
    acc_send_message(a, cs, kill_msg ? kill_msg : KILL_DEFAULT_MSG);
    acc_flush(a, cs);
    acc_cs_close(a, cs, CLOSE_LINGER_MS);
}

/* Call fn for every connected client; returns how many fn accepted. */
static int each_active(struct acceptor *a,
                       bool (*fn)(struct acceptor *, struct ctl_session *, const void *),
                       const void *arg)
{
    int n = 0;

    for (size_t i = 0; i < a->sessions.table_size; i++) {
        for (struct ctl_session *cs = a->sessions.table[i], *next; cs; cs = next) {
            next = cs->hnext;
            if (cs->state == CS_ACTIVE && cs->peer && fn(a, cs, arg)) {
                n++;
            }
        }
    }
    return n;
}

static int op_status(void *ctx, int version, FILE *out)
{
    return acc_status_print(ctx, version, out);
}

static void op_load_stats(void *ctx, uint64_t *n_clients, uint64_t *bytes_in, uint64_t *bytes_out)
{
    struct acceptor *a = ctx;

    /* 2.6 counts every link byte; ovpnd's workers count the data channel's */
    *n_clients = a->sessions.n_clients;
    *bytes_in = *bytes_out = 0;
    for (int i = 0; i < a->env->n_workers; i++) {
        *bytes_in += stat_get(&a->env->worker_stats[i]->rx_bytes);
        *bytes_out += stat_get(&a->env->worker_stats[i]->tx_bytes);
    }
}

static bool kill_if_cn(struct acceptor *a, struct ctl_session *cs, const void *arg)
{
    if (strcmp(cs->peer->common_name, arg) != 0) {
        return false;
    }
    kill_session(a, cs, NULL, "kill by common name");
    return true;
}

static int op_kill_cn(void *ctx, const char *cn)
{
    return each_active(ctx, kill_if_cn, cn);
}

struct addr_port {
    uint32_t addr;
    uint16_t port;
};

static bool kill_if_addr(struct acceptor *a, struct ctl_session *cs, const void *arg)
{
    const struct addr_port *ap = arg;
    union udp_addr plain;

    udp_addr_plain(&cs->remote, &plain);
    if (plain.sa.sa_family != AF_INET || ntohl(plain.in4.sin_addr.s_addr) != ap->addr ||
        ntohs(plain.in4.sin_port) != ap->port) {
        return false;
    }
    kill_session(a, cs, NULL, "kill by address");
    return true;
}

static int op_kill_addr(void *ctx, uint32_t addr, uint16_t port)
{
    struct addr_port ap = {addr, port};

    return each_active(ctx, kill_if_addr, &ap);
}

struct cid_kill {
    unsigned long cid;
    const char *msg;
};

static bool kill_if_cid(struct acceptor *a, struct ctl_session *cs, const void *arg)
{
    const struct cid_kill *k = arg;

    if (cs->cid != k->cid) {
        return false;
    }
    kill_session(a, cs, k->msg, "client-kill");
    return true;
}

static bool op_kill_cid(void *ctx, unsigned long cid, const char *kill_msg)
{
    struct cid_kill k = {cid, kill_msg};

    return each_active(ctx, kill_if_cid, &k) > 0;
}

struct each_arg {
    void (*fn)(void *arg, unsigned long cid, uint64_t bytes_in, uint64_t bytes_out);
    void *arg;
};

static bool report_one(struct acceptor *a, struct ctl_session *cs, const void *arg)
{
    const struct each_arg *e = arg;
    struct peer *p = cs->peer;

    (void)a;
    e->fn(e->arg, cs->cid, atomic_load_explicit(&p->bytes_rx, memory_order_relaxed),
          atomic_load_explicit(&p->bytes_tx, memory_order_relaxed));
    return true;
}

static void op_each_client(void *ctx,
                           void (*fn)(void *arg, unsigned long cid, uint64_t bytes_in,
                                      uint64_t bytes_out),
                           void *arg)
{
    struct each_arg e = {fn, arg};

    each_active(ctx, report_one, &e);
}

struct ctl_session *acc_mgmt_find_cid(struct acceptor *a, unsigned long cid)
{
    struct ctl_session *cs = acc_find_cid(a, cid);

    return cs && cs->state != CS_CLOSING && !cs->is_dead ? cs : NULL;
}

static struct key_state *find_kid(struct ctl_session *cs, unsigned kid)
{
    for (int i = 0; i < 2; i++) {
        if (cs->ks[i].in_use && cs->ks[i].kid == kid) {
            return &cs->ks[i];
        }
    }
    return NULL;
}

static bool op_client_auth(void *ctx, unsigned long cid, unsigned kid, bool is_auth,
                           const char *reason, const char *client_reason, const char *config)
{
    struct acceptor *a = ctx;
    struct ctl_session *cs = acc_mgmt_find_cid(a, cid);
    struct key_state *ks = cs ? find_kid(cs, kid) : NULL;

    return ks && acc_mgmt_answer(a, cs, ks, is_auth, reason, client_reason, config);
}

static bool op_client_pending_auth(void *ctx, unsigned long cid, unsigned kid, const char *extra,
                                   unsigned timeout_s)
{
    struct acceptor *a = ctx;
    struct ctl_session *cs = acc_mgmt_find_cid(a, cid);
    struct key_state *ks = cs ? find_kid(cs, kid) : NULL;

    return ks && acc_auth_pending(a, cs, ks, extra, timeout_s);
}

static bool op_drain(void *ctx, int set, uint64_t *n_clients)
{
    struct acceptor *a = ctx;

    if (set >= 0 && a->is_draining != (set > 0)) {
        a->is_draining = set > 0;
        log_msg(LOG_INFO,
                a->is_draining ? "draining: new clients are not answered, %zu connected stay"
                               : "draining ended: new clients are answered again (%zu connected)",
                a->sessions.n_clients);
    }
    *n_clients = a->sessions.n_clients;
    return a->is_draining;
}

static bool op_pk_sig(void *ctx, const char *b64)
{
    return acc_pk_sign_answer(ctx, b64);
}

static void op_hold_release(void *ctx)
{
    struct acceptor *a = ctx;

    if (a->mgmt_startup.is_waiting) {
        return; /* start-up goes on from its wait (mgmt_startup.c) */
    }
    acc_mgmt_started(a);
}

int acc_mgmt_init(struct acceptor *a, char *errbuf, size_t errbuf_len)
{
    const struct mgmt_ops ops = {
        .ctx = a,
        .status = op_status,
        .load_stats = op_load_stats,
        .kill_cn = op_kill_cn,
        .kill_addr = op_kill_addr,
        .kill_cid = op_kill_cid,
        .each_client = op_each_client,
        .hold_release = op_hold_release,
        .drain = op_drain,
        .client_auth = op_client_auth,
        .client_pending_auth = op_client_pending_auth,
        .pk_sig = op_pk_sig,
    };

    if (!a->cfg->mgmt.addr) {
        return 0;
    }
    return mgmt_new(&a->loop, a->cfg, &ops, &a->mgmt, errbuf, errbuf_len);
}

void acc_mgmt_started(struct acceptor *a)
{
    if (mgmt_is_held(a->mgmt)) {
        log_msg(LOG_INFO, "Need hold release from management interface, waiting...");
        return;
    }
    if (a->fd >= 0 && !uv_is_active((uv_handle_t *)&a->poll)) {
        uv_poll_start(&a->poll, UV_READABLE, acc_on_udp);
    }
    if (a->mgmt) {
        mgmt_up_down(a->mgmt, "UP", (const char *const *)a->updown_env.vars, a->updown_env.n);
        mgmt_set_connected(a->mgmt, a->env->server_addr, (uint16_t)a->cfg->net.port);
    }
}

/* ">CLIENT:WHAT,CID" and the client's variables as ">CLIENT:ENV,name=value" lines, then
 * ">CLIENT:ENV,END" (2.6 manage.c man_output_env); n_clients < 0: no n_clients line. */
static void notify_client(struct acceptor *a, struct ctl_session *cs, const char *what,
                          long n_clients, const char *peer_info, const struct script_env *env)
{
    char head[96];

    snprintf(head, sizeof(head), ">CLIENT:%s,%lu", what, cs->cid);
    mgmt_notify_client(a->mgmt, head, n_clients, peer_info,
                       env ? (const char *const *)env->vars : NULL, env ? env->n : 0);
}

void acc_mgmt_established(struct acceptor *a, struct ctl_session *cs)
{
    if (!mgmt_has_clients(a->mgmt) || !cs->peer) {
        return;
    }
    if (!cs->hooks.env) {
        /* no script wanted the client's variables: make them now, as client-connect gets them */
        acc_client_env_build(a, cs, "");
    }
    notify_client(a, cs, "ESTABLISHED", (long)a->sessions.n_clients, NULL, cs->hooks.env);
}

void acc_mgmt_on_close(struct acceptor *a, struct ctl_session *cs)
{
    struct script_env env = {0};
    struct peer *p = cs->peer;

    /* 2.6 manage.c management_notify_client_close: only after a >CLIENT:CONNECT */
    if (!cs->is_mgmt_asked || !cs->is_connected || !p || !mgmt_has_clients(a->mgmt)) {
        return;
    }
    if (!cs->hooks.env) {
        acc_client_env_build(a, cs, "");
    }
    /* the variables client-disconnect gets */
    if (cs->hooks.env && hook_env_append(&env, cs->hooks.env) == 0 &&
        hook_env_disconnect(&env, atomic_load_explicit(&p->bytes_rx, memory_order_relaxed),
                            atomic_load_explicit(&p->bytes_tx, memory_order_relaxed),
                            (int64_t)(time(NULL) - p->connected_since)) == 0) {
        notify_client(a, cs, "DISCONNECT", -1, NULL, &env);
    } else {
        notify_client(a, cs, "DISCONNECT", -1, NULL, NULL);
    }
    script_env_clear(&env);
}

/* The variables an auth-user-pass-verify script gets, as 2.6 gives them to >CLIENT:CONNECT
 * (the session's env when verify_user_pass runs, with $password set for the call). */
static int ask_env(struct acceptor *a, struct ctl_session *cs, const struct key_method2 *client,
                   struct script_env *env)
{
    int err = hook_env_append(env, &a->checks.global_env);

    if (err == 0 && cs->hooks.tls_env) {
        err = hook_env_append(env, cs->hooks.tls_env);
    }
    err = err ? err : script_env_add(env, "common_name", cs->client.cn);
    err = err ? err : hook_env_addr(env, "untrusted", &cs->remote);
    err = err ? err : hook_env_peer_info(env, client->peer_info);
    err = err ? err : script_env_add(env, "username", client->username);
    return err ? err : script_env_add(env, "password", client->password);
}

int acc_mgmt_ask(struct acceptor *a, struct ctl_session *cs, const struct key_state *ks,
                 const struct key_method2 *client)
{
    struct script_env env = {0};
    char head[96];
    int err;

    cs->is_mgmt_asked = true;
    if (!mgmt_has_clients(a->mgmt)) {
        /* as 2.6: nobody hears it, and the client waits until its time is up */
        acc_cs_log(a, cs, LOG_WARN,
                   "management-client-auth: no management client is connected to answer for "
                   "username '%.128s'",
                   client->username);
        return 0;
    }
    err = ask_env(a, cs, client, &env);
    if (err == 0) {
        snprintf(head, sizeof(head), ">CLIENT:%s,%lu,%u", cs->peer ? "REAUTH" : "CONNECT", cs->cid,
                 ks->kid);
        mgmt_notify_client(a->mgmt, head, (long)a->sessions.n_clients, client->peer_info,
                           (const char *const *)env.vars, env.n);
    }
    script_env_clear(&env);
    return err;
}

void acc_mgmt_cr_response(struct acceptor *a, struct ctl_session *cs, const struct key_state *ks,
                          const char *response, const struct script_env *env)
{
    char head[64 + CONTROL_MSG_MAX];

    if (!mgmt_has_clients(a->mgmt)) {
        return;
    }
    snprintf(head, sizeof(head), ">CLIENT:CR_RESPONSE,%lu,%u,%s", cs->cid, ks->kid, response);
    mgmt_notify_client(a->mgmt, head, (long)a->sessions.n_clients, NULL,
                       (const char *const *)env->vars, env->n);
}

/* ">CLIENT:ADDRESS,CID,ADDR,PRI": IPv4 subnets as ADDR/NETMASK, IPv6 as ADDR/BITS, hosts
 * without a suffix (2.6 mroute_addr_print_ex with MAPF_SUBNET). */
static void notify_address(struct acceptor *a, struct ctl_session *cs, int family,
                           const uint8_t *addr, int plen, bool is_primary)
{
    char text[INET6_ADDRSTRLEN], mask[INET_ADDRSTRLEN], line[160];
    int host_bits = family == 4 ? 32 : 128;

    inet_ntop(family == 4 ? AF_INET : AF_INET6, addr, text, sizeof(text));
    if (plen >= host_bits) {
        snprintf(line, sizeof(line), ">CLIENT:ADDRESS,%lu,%s,%d", cs->cid, text, is_primary);
    } else if (family == 4) {
        struct in_addr m = {.s_addr = htonl(plen ? ~0u << (32 - plen) : 0)};

        inet_ntop(AF_INET, &m, mask, sizeof(mask));
        snprintf(line, sizeof(line), ">CLIENT:ADDRESS,%lu,%s/%s,%d", cs->cid, text, mask,
                 is_primary);
    } else {
        snprintf(line, sizeof(line), ">CLIENT:ADDRESS,%lu,%s/%d,%d", cs->cid, text, plen,
                 is_primary);
    }
    mgmt_notify(a->mgmt, line);
}

void acc_mgmt_addresses(struct acceptor *a, struct ctl_session *cs)
{
    const struct peer *p = cs->peer;
    uint32_t v4 = p ? htonl(p->vaddr) : 0;

    if (!cs->is_mgmt_asked || !p || !mgmt_has_clients(a->mgmt)) {
        return;
    }
    notify_address(a, cs, 4, (const uint8_t *)&v4, 32, true);
    if (p->has_vaddr6) {
        notify_address(a, cs, 6, p->vaddr6, 128, true);
    }
    for (size_t i = 0; i < p->n_routes; i++) {
        const struct vroute_key *k = &p->routes[i];

        if ((k->family == 4 && k->plen == 32 && memcmp(k->addr, &v4, 4) == 0) ||
            (k->family == 6 && p->has_vaddr6 && k->plen == 128 &&
             memcmp(k->addr, p->vaddr6, 16) == 0)) {
            continue; /* the primary addresses, routed as routes */
        }
        notify_address(a, cs, k->family, k->addr, k->plen, false);
    }
}
