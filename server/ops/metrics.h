/* server/ops/metrics.h: the Prometheus endpoint (`metrics HOST PORT`, ovpnd's own): the text
 * exposition format (version 0.0.4) at http://HOST:PORT/metrics, served by libmicrohttpd on a
 * thread of its own, off the data path.
 *
 * Where the figures come from, so that nothing is counted twice and nothing is locked on the
 * per-packet path:
 *   - the workers' counters (server/data/worker_stats.h): read by the HTTP thread with relaxed
 *     loads, the same counters the status file shows;
 *   - the control thread's counters (struct metrics_control, below, kept by the acceptor) and its
 *     client count and per-client rows (the status file's rows, server/ops/status.h): copied by
 *     the control thread itself into a snapshot when a scrape asks for one (a MSG_CALL through
 *     the mailbox), so they are read on the thread that owns them. A control thread that does not
 *     answer within METRICS_SNAPSHOT_WAIT_MS makes the scrape fail with 503.
 *
 * GET (and HEAD) of /metrics and of /health are served; any other path is 404, any other method
 * 405. /health answers for an edge's health check (metrics_health()): 200 while the server takes
 * new clients, 503 while it drains (`ovpnd-drain on`) or is not serving yet (management-hold), or
 * when the control thread does not answer, as a scrape. The
 * listener binds the configured address only. libmicrohttpd bounds what a client can take:
 * METRICS_MAX_CONNECTIONS connections (METRICS_MAX_PER_IP from one address), each closed after
 * METRICS_IDLE_TIMEOUT_S idle seconds, with METRICS_CONN_MEMORY bytes for its request.
 */
#ifndef SERVER_OPS_METRICS_H
#define SERVER_OPS_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "server/ops/status.h"

#define METRICS_MAX_CONNECTIONS 32
#define METRICS_MAX_PER_IP 8
#define METRICS_IDLE_TIMEOUT_S 10
#define METRICS_CONN_MEMORY (32 * 1024)
#define METRICS_SNAPSHOT_WAIT_MS 2000

struct config;
struct mailbox;
struct metrics;
struct worker_stats;

/* The first negotiation of a session, by how it ended (ovpnd_handshakes_total{result}). */
enum metrics_handshake {
    METRICS_HS_OK,        /* the client was connected (installed in its worker) */
    METRICS_HS_TLS_ERROR, /* the TLS handshake failed (bad certificate, alert, protocol) */
    METRICS_HS_TIMEOUT,   /* the TLS handshake did not finish within hand-window */
    METRICS_HS_REFUSED,   /* turned away after TLS: authentication, max-clients, no address */
    METRICS_HS_N,
};

/* What checked a client (ovpnd_auth_results_total{method}). */
enum metrics_auth_method {
    METRICS_AUTH_CERTIFICATE, /* the certificate checks after TLS: CRL, names, key usage */
    METRICS_AUTH_TLS_VERIFY,  /* the tls-verify script or plugin */
    METRICS_AUTH_USER_PASS,   /* auth-user-pass-verify script or plugins */
    METRICS_AUTH_TOKEN,       /* an auth-gen-token token instead of the password */
    METRICS_AUTH_MANAGEMENT,  /* management-client-auth: client-auth / client-deny */
    METRICS_AUTH_METHOD_N,
};

/* How that check ended (ovpnd_auth_results_total{result}). */
enum metrics_auth_result {
    METRICS_AUTH_OK,
    METRICS_AUTH_REFUSED, /* the check said no (or the credentials were unusable) */
    METRICS_AUTH_TIMEOUT, /* no answer within hand-window (or client-pending-auth's timeout) */
    METRICS_AUTH_ERROR,   /* the check could not run (script not started, out of memory) */
    METRICS_AUTH_RESULT_N,
};

/* Upper bounds of ovpnd_handshake_duration_seconds' buckets, in ms (the last, +Inf, implied). */
#define METRICS_HS_BUCKETS 13
extern const uint32_t metrics_hs_bucket_ms[METRICS_HS_BUCKETS];

/* The control thread's counters: kept by the acceptor (plain integers, its thread only) and
 * copied into each snapshot. */
struct metrics_control {
    uint64_t handshakes[METRICS_HS_N];
    uint64_t hs_bucket[METRICS_HS_BUCKETS]; /* handshakes per bucket (not cumulative) */
    uint64_t hs_count;                      /* every observed handshake, +Inf included */
    uint64_t hs_sum_ms;
    uint64_t auth[METRICS_AUTH_METHOD_N][METRICS_AUTH_RESULT_N];
    uint64_t renegotiations_ok, renegotiations_failed;
};

/* Count one first negotiation that ended in hs; for METRICS_HS_OK also observe its duration
 * (duration_ms, from the session's start to the client's install). Control thread. */
void metrics_count_handshake(struct metrics_control *c, enum metrics_handshake hs,
                             uint64_t duration_ms);

/* One packet drop counter of the control thread, for ovpnd_control_dropped_packets_total. */
struct metrics_drop {
    const char *reason; /* a static label value */
    uint64_t n;
};

#define METRICS_CONTROL_DROPS_MAX 16

/* What the control thread hands a scrape. Filled by struct metrics_ops snapshot. */
struct metrics_snapshot {
    uint64_t n_clients;  /* clients connected (the status file's rows) */
    uint64_t n_sessions; /* sessions of the control thread, clients and handshakes */
    bool is_ready;       /* serving: start-up is not held by management-hold, not stopping */
    bool is_draining;    /* ovpnd-drain on: new clients are not answered */
    struct metrics_control control;
    struct metrics_drop control_drops[METRICS_CONTROL_DROPS_MAX];
    size_t n_control_drops;
    /* With metrics-per-client: the status file's rows (calloc'd; the metrics module frees them
     * with the snapshot), else NULL and 0. */
    struct status_client *clients;
    size_t n_client_rows;
};

/* What the metrics module asks of the control thread. */
struct metrics_ops {
    void *ctx;
    /* Fill snap (zeroed by the caller); rows of every connected client only when with_clients.
     * Runs on the thread that owns the mailbox box the module was given. */
    void (*snapshot)(void *ctx, bool with_clients, struct metrics_snapshot *snap);
};

/* Render the exposition text of snap and of the n_workers workers' counters ws to out: every
 * family with its HELP and TYPE lines, per-client series only when per_client. Label values are
 * escaped as the format asks (backslash, double quote, line feed) and bytes that are not UTF-8
 * become '?'. Any thread. 0, or -EIO when out reports an error. */
int metrics_render(FILE *out, const struct metrics_snapshot *snap,
                   const struct worker_stats *const *ws, int n_workers, bool per_client,
                   time_t start_time);

#define METRICS_HTTP_OK 200
#define METRICS_HTTP_UNAVAILABLE 503

/* The /health answer for snap: METRICS_HTTP_OK ("serving") while the server takes new clients,
 * METRICS_HTTP_UNAVAILABLE ("draining" or "not ready") otherwise; *text is set to a static body
 * of one line. Any thread. */
unsigned metrics_health(const struct metrics_snapshot *snap, const char **text);

/* Start the endpoint of cfg->metrics (which must be set): binds HOST:PORT now (call before
 * privileges are dropped) and starts libmicrohttpd's thread. Scrapes post a MSG_CALL to box
 * `owner` of mb and wait for ops->snapshot to run there. cfg is read here only; mb, ws
 * (n_workers entries) and ops->ctx outlive the module. Main thread. 0 or -errno with a reason in
 * errbuf. */
int metrics_new(const struct config *cfg, struct mailbox *mb, int owner,
                const struct worker_stats *const *ws, int n_workers, const struct metrics_ops *ops,
                struct metrics **out, char *errbuf, size_t errbuf_len);

/* Stop serving: scrapes waiting for a snapshot give up (503), the listener closes and the
 * HTTP thread is joined. Any thread but the HTTP thread; idempotent; NULL is a no-op. Snapshot
 * requests still in the owner's box are run or discarded as usual afterwards. */
void metrics_stop(struct metrics *m);

/* Free m after metrics_stop, once no snapshot request is left in the owner's box (it is
 * drained or discarded). NULL is a no-op. */
void metrics_free(struct metrics *m);

#endif /* SERVER_OPS_METRICS_H */
