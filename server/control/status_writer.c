/* server/control/status_writer.c: the periodic writers that read the sessions: the status file
 * (server/ops/status.h), its text made and written on the thread pool from a copy of the rows,
 * and ifconfig-pool-persist. Acceptor thread only, except the status job's work. */
#include <errno.h>
#include <stdatomic.h>
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
    err = status_print(mem, version, OVPND_TITLE, time(NULL), rows, n, workers, n_workers);
    if (fclose(mem) != 0 && !err) {
        err = -EIO;
    }
    if (!err && (ftruncate(fd, 0) < 0 || pwrite(fd, text, len, 0) != (ssize_t)len)) {
        err = -errno;
    }
    free(text);
    return err;
}

/* One client's row (borrowing p->routes for the iroutes, cs->macs for the MACs). */
static void fill_row(const struct acceptor *a, const struct ctl_session *cs,
                     struct status_client *r)
{
    const struct peer *p = cs->peer;

    snprintf(r->common_name, sizeof(r->common_name), "%s", p->common_name);
    /* As 2.6 tls_username: the username the check accepted, UNDEF without one. */
    snprintf(r->username, sizeof(r->username), "%s",
             cs->client.username ? cs->client.username : "");
    {
        union udp_addr plain; /* cs->remote: p->remote is the worker's */

        memset(&r->real, 0, sizeof(r->real));
        udp_addr_plain(&cs->remote, &plain);
        memcpy(&r->real, &plain, udp_addr_len(&plain));
    }
    r->virt_addr = p->vaddr;
    memset(&r->virt_addr6, 0, sizeof(r->virt_addr6));
    if (p->has_vaddr6) {
        memcpy(&r->virt_addr6, p->vaddr6, 16);
    }
    r->iroutes = p->routes;
    r->n_iroutes = p->n_routes;
    r->is_tap = a->cfg->net.is_tap;
    r->macs = cs->macs.list;
    r->n_macs = cs->macs.n;
    r->bytes_rx = atomic_load_explicit(&p->bytes_rx, memory_order_relaxed);
    r->bytes_tx = atomic_load_explicit(&p->bytes_tx, memory_order_relaxed);
    r->connected_since = p->connected_since;
    r->last_ref = (time_t)atomic_load_explicit(&p->last_ref_s, memory_order_relaxed);
    r->client_id = cs->cid;
    r->peer_id = p->peer_id;
    snprintf(r->cipher, sizeof(r->cipher), "%s", p->cipher);
}

/* Whether cs has a row: a connected client. */
static bool has_row(const struct ctl_session *cs)
{
    return cs->state == CS_ACTIVE && cs->peer;
}

/* The workers' rows (TUN_MAX_QUEUES entries); returns how many. */
static size_t worker_rows(struct acceptor *a, struct status_worker *workers)
{
    int i;

    for (i = 0; i < a->env->n_workers && i < TUN_MAX_QUEUES; i++) {
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
    return (size_t)i;
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
            if (!has_row(cs) || n >= a->sessions.n_clients) {
                continue;
            }
            fill_row(a, cs, &rows[n++]);
        }
    }
    if (workers) {
        (void)worker_rows(a, workers);
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
    err = status_print(out, version, OVPND_TITLE, time(NULL), rows, n, workers,
                       (size_t)a->env->n_workers);
    free(rows);
    return err;
}

/* A copy of what the status file shows at one moment, written on the thread pool: the control
 * thread only copies the rows (into buffers kept from one write to the next, so that no large
 * allocation comes and goes every period), the text is made and written off it. */
struct acc_status_job {
    uv_work_t req;
    struct acceptor *a;
    struct status_client *rows; /* n_rows of cap_rows */
    size_t n_rows, cap_rows;
    struct vroute_key *iroutes; /* the rows' iroutes point here: n_iroutes of cap_iroutes */
    size_t n_iroutes, cap_iroutes;
    struct status_mac *macs; /* the rows' MACs (dev tap) point here: n_macs of cap_macs */
    size_t n_macs, cap_macs;
    struct status_worker workers[TUN_MAX_QUEUES];
    size_t n_workers;
    time_t now;
    int version;
    const char *path; /* the config's (kept until the acceptor is freed, reloads included) */
    int fd;           /* a->status_fd */
    int err;
    bool is_running; /* on the thread pool: the control thread leaves the job alone */
    bool is_due;     /* the timer fired meanwhile: write again once this write is done */
};

/* Grow *buf (of *cap elements of size each) to at least n; shrink it when it is four times too
 * big. 0 or -ENOMEM (*buf unchanged). */
static int fit(void **buf, size_t *cap, size_t n, size_t size)
{
    size_t want = n < 64 ? 64 : n;
    void *grown;

    if (*cap >= n && *cap / 4 <= want) {
        return 0;
    }
    if (*cap < n) {
        want += want / 4; /* room for the clients that keep coming */
    }
    grown = realloc(*buf, want * size);
    if (!grown) {
        return *cap >= n ? 0 : -ENOMEM;
    }
    *buf = grown;
    *cap = want;
    return 0;
}

/* Copy the connected clients' rows, their iroutes and the workers' rows into job. 0 or
 * -ENOMEM. Acceptor thread, while the job is not running. */
static int snapshot(struct acceptor *a, struct acc_status_job *job)
{
    size_t n = 0, n_routes = 0, n_macs = 0;

    for (size_t i = 0; i < a->sessions.table_size; i++) {
        for (struct ctl_session *cs = a->sessions.table[i]; cs; cs = cs->hnext) {
            if (has_row(cs)) {
                n++;
                n_routes += cs->peer->n_routes;
                n_macs += cs->macs.n;
            }
        }
    }
    if (fit((void **)&job->rows, &job->cap_rows, n, sizeof(*job->rows)) ||
        fit((void **)&job->iroutes, &job->cap_iroutes, n_routes, sizeof(*job->iroutes)) ||
        fit((void **)&job->macs, &job->cap_macs, n_macs, sizeof(*job->macs))) {
        return -ENOMEM;
    }
    job->n_rows = job->n_iroutes = job->n_macs = 0;
    for (size_t i = 0; i < a->sessions.table_size; i++) {
        for (struct ctl_session *cs = a->sessions.table[i]; cs; cs = cs->hnext) {
            struct status_client *r;

            if (!has_row(cs) || job->n_rows >= n) {
                continue;
            }
            r = &job->rows[job->n_rows++];
            fill_row(a, cs, r);
            /* the worker may free p->routes before the text is made: a copy goes with it */
            if (r->n_iroutes > 0) {
                memcpy(&job->iroutes[job->n_iroutes], r->iroutes,
                       r->n_iroutes * sizeof(*r->iroutes));
                r->iroutes = &job->iroutes[job->n_iroutes];
                job->n_iroutes += r->n_iroutes;
            } else {
                r->iroutes = NULL;
            }
            if (r->n_macs > 0 && job->n_macs + r->n_macs <= n_macs) {
                memcpy(&job->macs[job->n_macs], r->macs, r->n_macs * sizeof(*r->macs));
                r->macs = &job->macs[job->n_macs];
                job->n_macs += r->n_macs;
            } else {
                r->macs = NULL;
                r->n_macs = 0;
            }
        }
    }
    job->n_workers = worker_rows(a, job->workers);
    job->now = time(NULL);
    job->version = a->cfg->status.status_version;
    job->path = a->cfg->status.status_file;
    job->fd = a->status_fd;
    return 0;
}

/* Write the job's copy to the status file (any thread). 0 or -errno. */
static int write_job(const struct acc_status_job *job)
{
    if (job->fd >= 0) {
        return status_rewrite_fd(job->fd, job->version, job->rows, job->n_rows, job->workers,
                                 job->n_workers);
    }
    return status_write(job->path, job->version, OVPND_TITLE, job->now, job->rows, job->n_rows,
                        job->workers, job->n_workers);
}

/* Log a write's result when it differs from the last one (a->status_err): a failing file is
 * named once, not at every interval, and again when it is written after all. Acceptor thread. */
static void log_write_error(const struct acc_status_job *job, int err)
{
    struct acceptor *a = job->a;

    if (err && err != a->status_err) {
        log_msg(LOG_WARN, "cannot write status file %s: %s (tried again at each write)", job->path,
                strerror(-err));
    } else if (!err && a->status_err) {
        log_msg(LOG_INFO, "status file %s written", job->path);
    }
    a->status_err = err;
}

static void job_work(uv_work_t *req)
{
    struct acc_status_job *job = req->data;

    job->err = write_job(job);
}

static void start_job(struct acceptor *a);

static void job_done(uv_work_t *req, int status)
{
    struct acc_status_job *job = req->data;
    struct acceptor *a = job->a;

    job->is_running = false;
    if (status == 0) {
        log_write_error(job, job->err);
    }
    if (job->is_due && !a->is_stopping) {
        job->is_due = false;
        start_job(a);
    }
}

/* The status job, made at its first use. NULL when memory is short. */
static struct acc_status_job *status_job(struct acceptor *a)
{
    if (!a->status_job) {
        a->status_job = calloc(1, sizeof(*a->status_job));
        if (a->status_job) {
            a->status_job->a = a;
            a->status_job->req.data = a->status_job;
        }
    }
    return a->status_job;
}

/* Copy the rows and hand the job to the thread pool (written here when the pool refuses). */
static void start_job(struct acceptor *a)
{
    struct acc_status_job *job = status_job(a);

    if (!job) {
        return;
    }
    if (job->is_running) {
        job->is_due = true;
        return;
    }
    if (snapshot(a, job)) {
        log_msg(LOG_WARN, "cannot write status file %s: out of memory", job->path);
        return;
    }
    if (uv_queue_work(&a->loop, &job->req, job_work, job_done) == 0) {
        job->is_running = true;
        return;
    }
    log_write_error(job, write_job(job));
}

void acc_write_status(struct acceptor *a)
{
    struct acc_status_job *job;

    if (!a->cfg->status.status_file || a->is_status_off) {
        return;
    }
    job = status_job(a);
    if (!job || job->is_running) {
        return; /* (the loop has ended by the last write: nothing runs then) */
    }
    if (snapshot(a, job)) {
        log_msg(LOG_WARN, "cannot write status file %s: out of memory", a->cfg->status.status_file);
        return;
    }
    log_write_error(job, write_job(job));
}

void acc_status_job_free(struct acceptor *a)
{
    if (a->status_job) {
        free(a->status_job->rows);
        free(a->status_job->iroutes);
        free(a->status_job->macs);
        free(a->status_job);
        a->status_job = NULL;
    }
}

void acc_on_status_timer(uv_timer_t *t)
{
    struct acceptor *a = t->data;

    if (a->cfg->status.status_file && !a->is_status_off && !a->is_stopping) {
        start_job(a);
    }
}

void acc_write_pool_persist(struct acceptor *a)
{
    const struct acceptor_env *env = a->env;
    int err = pool_persist_write(env->pool, a->cfg->net.ifconfig_pool_persist, env->persist_fd);

    /* as the status file: a failing file is named once, and again once it is written */
    if (err && err != a->persist_err) {
        log_msg(LOG_WARN, "ifconfig-pool-persist: cannot write %s: %s (tried again at each write)",
                a->cfg->net.ifconfig_pool_persist, strerror(-err));
    } else if (!err && a->persist_err) {
        log_msg(LOG_INFO, "ifconfig-pool-persist: %s written", a->cfg->net.ifconfig_pool_persist);
    }
    a->persist_err = err;
}

void acc_on_persist_timer(uv_timer_t *t)
{
    acc_write_pool_persist(t->data);
}
