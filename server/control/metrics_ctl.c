/* server/control/metrics_ctl.c: what the control thread gives the metrics endpoint
 * (server/ops/metrics.h) and systemd (server/ops/notify.h): the snapshot a scrape asks for, the
 * counters of handshakes, checks and renegotiations, and the STATUS= / WATCHDOG=1 of the tick.
 * Acceptor thread, except acc_metrics_init (main thread, at acceptor_new). */
#include <stdlib.h>
#include <string.h>

#include "server/ops/metrics.h"
#include "server/ops/mgmt.h"
#include "server/ops/notify.h"

#include "server/control/acceptor_internal.h"

#define NOTIFY_STATUS_MIN_MS 1000 /* STATUS= at most once a second, when the count changed */

/* The scrape's copy of this thread's figures (struct metrics_ops snapshot). */
static void op_snapshot(void *ctx, bool with_clients, struct metrics_snapshot *snap)
{
    struct acceptor *a = ctx;
    const struct acceptor_stats *s = &a->stats;
    const struct metrics_drop drops[] = {
        {"short", s->drop_short},
        {"tls_wrap", s->drop_wrap},
        {"replay", s->drop_replay},
        {"malformed", s->drop_malformed},
        {"bad_cookie", s->drop_cookie},
        {"no_session", s->drop_no_session},
        {"window", s->drop_window},
        {"handshake_timeout", s->drop_handshake_timeout},
        {"connect_freq", s->drop_connect_freq},
        {"connect_freq_initial", s->drop_connect_freq_initial},
        {"handover_queue_full", s->drop_handover},
        {"tls_crypt_v2_client_key", s->drop_wkc},
        {"tls_crypt_v2_verify", s->drop_v2_refused},
        {"handshakes_in_flight", s->drop_busy},
        {"handshake_too_late", s->drop_too_late},
        {"draining", s->drop_draining},
    };
    _Static_assert(sizeof(drops) / sizeof(drops[0]) <= METRICS_CONTROL_DROPS_MAX,
                   "room for the control drops");

    snap->n_clients = a->sessions.n_clients;
    snap->n_sessions = a->sessions.n_sessions;
    snap->is_ready = !a->is_stopping && !mgmt_is_held(a->mgmt);
    snap->is_draining = a->is_draining;
    snap->control = a->mx;
    memcpy(snap->control_drops, drops, sizeof(drops));
    snap->n_control_drops = sizeof(drops) / sizeof(drops[0]);
    if (with_clients) {
        /* the status file's rows; when memory is short the scrape has none */
        snap->clients = acc_status_rows(a, &snap->n_client_rows, NULL);
        if (!snap->clients) {
            snap->n_client_rows = 0;
        }
    }
}

int acc_metrics_init(struct acceptor *a, char *errbuf, size_t errbuf_len)
{
    const struct metrics_ops ops = {.ctx = a, .snapshot = op_snapshot};

    if (!a->cfg->metrics.host) {
        return 0;
    }
    return metrics_new(a->cfg, a->env->mb, MAILBOX_ACCEPTOR, a->env->worker_stats,
                       a->env->n_workers, &ops, &a->metrics, errbuf, errbuf_len);
}

void acc_metrics_stop(struct acceptor *a)
{
    metrics_stop(a->metrics);
}

void acc_metrics_auth(struct acceptor *a, enum metrics_auth_method method,
                      enum metrics_auth_result result)
{
    a->mx.auth[method][result]++;
}

void acc_metrics_refused(struct acceptor *a, const struct ctl_session *cs)
{
    if (cs->peer) {
        a->mx.renegotiations_failed++;
    } else {
        metrics_count_handshake(&a->mx, METRICS_HS_REFUSED, 0);
    }
}

void acc_notify_tick(struct acceptor *a, uint64_t now_ms)
{
    uint64_t wd = notify_watchdog_interval_ms();

    if (!notify_is_enabled()) {
        return;
    }
    if (wd > 0 && now_ms >= a->next_watchdog_ms) {
        notify_watchdog();
        a->next_watchdog_ms = now_ms + wd;
    }
    if (now_ms >= a->next_notify_ms && a->sessions.n_clients != a->n_clients_notified) {
        notify_clients(a->sessions.n_clients);
        a->n_clients_notified = a->sessions.n_clients;
        a->next_notify_ms = now_ms + NOTIFY_STATUS_MIN_MS;
    }
}
