/* server/control/mgmt_ctl.c: what management commands do to the sessions, and the >CLIENT
 * notifications. The listener (server/ops/mgmt.c) runs on the acceptor's loop, so these run on
 * the acceptor thread, which owns the sessions: no lock, no message. Facts from openvpn 2.6
 * src/openvpn/multi.c (management_callback_*) and manage.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

    if (cs->peer->peer_id != k->cid) {
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
    e->fn(e->arg, p->peer_id, atomic_load_explicit(&p->bytes_rx, memory_order_relaxed),
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

static void op_hold_release(void *ctx)
{
    struct acceptor *a = ctx;

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
        mgmt_set_connected(a->mgmt, a->env->server_addr, (uint16_t)a->cfg->net.port);
    }
}

/* ">CLIENT:WHAT,CID" and the client's variables as ">CLIENT:ENV,name=value" lines, then
 * ">CLIENT:ENV,END" (2.6 manage.c man_output_env). */
static void notify_client(struct acceptor *a, struct ctl_session *cs, const char *what,
                          const struct script_env *env)
{
    char line[64 + 4096];

    snprintf(line, sizeof(line), ">CLIENT:%s,%u", what, cs->peer->peer_id);
    mgmt_notify(a->mgmt, line);
    for (size_t i = 0; env && i < env->n; i++) {
        snprintf(line, sizeof(line), ">CLIENT:ENV,%s", env->vars[i]);
        mgmt_notify(a->mgmt, line);
    }
    mgmt_notify(a->mgmt, ">CLIENT:ENV,END");
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
    notify_client(a, cs, "ESTABLISHED", cs->hooks.env);
}

void acc_mgmt_on_close(struct acceptor *a, struct ctl_session *cs)
{
    struct script_env env = {0};
    struct peer *p = cs->peer;

    if (!cs->is_connected || !p || !mgmt_has_clients(a->mgmt)) {
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
        notify_client(a, cs, "DISCONNECT", &env);
    } else {
        notify_client(a, cs, "DISCONNECT", NULL);
    }
    script_env_clear(&env);
}
