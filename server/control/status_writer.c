/* server/control/status_writer.c: the periodic writers that read the sessions: the status file
 * (server/ops/status.h) and ifconfig-pool-persist. Acceptor thread only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server/addr/pool_persist.h"
#include "server/control/acceptor_decide.h"
#include "server/data/peer.h"
#include "server/data/tun.h"
#include "server/data/worker_stats.h"
#include "server/ops/status.h"

#include "server/control/acceptor_internal.h"

/* With `user`/`group` the file was opened before privileges were dropped (as openvpn does), so
 * it is rewritten in place through that descriptor. */
static int status_rewrite_fd(int fd, int version, const struct status_client *rows, size_t n,
                             const struct status_worker *workers, size_t n_workers)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    int err;

    if (!mem) {
        return -errno;
    }
    err =
        status_print(mem, version, "ovpnd " OVPND_VERSION, time(NULL), rows, n, workers, n_workers);
    if (fclose(mem) != 0 && !err) {
        err = -EIO;
    }
    if (!err && (ftruncate(fd, 0) < 0 || pwrite(fd, text, len, 0) != (ssize_t)len)) {
        err = -errno;
    }
    free(text);
    return err;
}

struct status_client *acc_status_rows(struct acceptor *a, size_t *n_out,
                                      struct status_worker *workers)
{
    struct status_client *rows = calloc(a->sessions.n_clients + 1, sizeof(*rows));
    size_t n = 0;

    if (!rows) {
        return NULL;
    }
    for (size_t i = 0; i < a->sessions.table_size; i++) {
        for (struct ctl_session *cs = a->sessions.table[i]; cs; cs = cs->hnext) {
            struct peer *p = cs->peer;
            struct status_client *r;

            if (cs->state != CS_ACTIVE || !p || n >= a->sessions.n_clients) {
                continue;
            }
            r = &rows[n++];
            snprintf(r->common_name, sizeof(r->common_name), "%s", p->common_name);
            /* As 2.6 tls_username: the username the check accepted, UNDEF without one. */
            snprintf(r->username, sizeof(r->username), "%s",
                     cs->client.username ? cs->client.username : "");
            {
                union udp_addr plain; /* cs->remote: p->remote is the worker's */

                udp_addr_plain(&cs->remote, &plain);
                memcpy(&r->real, &plain, udp_addr_len(&plain));
            }
            r->virt_addr = p->vaddr;
            if (p->has_vaddr6) {
                memcpy(&r->virt_addr6, p->vaddr6, 16);
            }
            r->iroutes = p->routes;
            r->n_iroutes = p->n_routes;
            r->bytes_rx = atomic_load_explicit(&p->bytes_rx, memory_order_relaxed);
            r->bytes_tx = atomic_load_explicit(&p->bytes_tx, memory_order_relaxed);
            r->connected_since = p->connected_since;
            r->last_ref = (time_t)atomic_load_explicit(&p->last_ref_s, memory_order_relaxed);
            r->client_id = cs->cid;
            r->peer_id = p->peer_id;
            snprintf(r->cipher, sizeof(r->cipher), "%s", p->cipher);
        }
    }
    for (int i = 0; workers && i < a->env->n_workers && i < TUN_MAX_QUEUES; i++) {
        const struct worker_stats *s = a->env->worker_stats[i];

        /* (the last write, at the stop, comes after the workers let go of every session) */
        workers[i].sessions = a->are_workers_stopped ? 0 : stat_get(&s->sessions);
        workers[i].packets_in = stat_get(&s->rx_packets);
        workers[i].packets_out = stat_get(&s->tx_packets);
        workers[i].bytes_in = stat_get(&s->rx_bytes);
        workers[i].bytes_out = stat_get(&s->tx_bytes);
        workers[i].client_to_client = stat_get(&s->client_to_client);
        workers[i].handed_over = stat_get(&s->handed_over);
        workers[i].dropped = worker_stats_dropped(s);
    }
    *n_out = n;
    return rows;
}

int acc_status_print(struct acceptor *a, int version, FILE *out)
{
    struct status_worker workers[TUN_MAX_QUEUES];
    size_t n = 0;
    struct status_client *rows = acc_status_rows(a, &n, workers);
    int err;

    if (!rows) {
        return -ENOMEM;
    }
    err = status_print(out, version, "ovpnd " OVPND_VERSION, time(NULL), rows, n, workers,
                       (size_t)a->env->n_workers);
    free(rows);
    return err;
}

void acc_write_status(struct acceptor *a)
{
    struct status_worker workers[TUN_MAX_QUEUES];
    struct status_client *rows;
    size_t n = 0;
    int err;

    if (!a->cfg->status.status_file) {
        return;
    }
    rows = acc_status_rows(a, &n, workers);
    if (!rows) {
        return;
    }
    if (a->status_fd >= 0) {
        err = status_rewrite_fd(a->status_fd, a->cfg->status.status_version, rows, n, workers,
                                (size_t)a->env->n_workers);
    } else {
        err = status_write(a->cfg->status.status_file, a->cfg->status.status_version,
                           "ovpnd " OVPND_VERSION, time(NULL), rows, n, workers,
                           (size_t)a->env->n_workers);
    }
    if (err) {
        log_msg(LOG_WARN, "cannot write status file %s: %s", a->cfg->status.status_file,
                strerror(-err));
    }
    free(rows);
}

void acc_on_status_timer(uv_timer_t *t)
{
    acc_write_status(t->data);
}

void acc_write_pool_persist(struct acceptor *a)
{
    const struct acceptor_env *env = a->env;
    int err = pool_persist_write(env->pool, a->cfg->net.ifconfig_pool_persist, env->persist_fd);

    if (err) {
        log_msg(LOG_WARN, "ifconfig-pool-persist: cannot write %s: %s",
                a->cfg->net.ifconfig_pool_persist, strerror(-err));
    }
}

void acc_on_persist_timer(uv_timer_t *t)
{
    acc_write_pool_persist(t->data);
}
