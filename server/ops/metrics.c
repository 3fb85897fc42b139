/* server/ops/metrics.c: the Prometheus endpoint (see metrics.h): the HTTP side on
 * libmicrohttpd's thread, the snapshot request to the control thread, and the text rendering.
 * Names and units follow Prometheus' conventions (prometheus.io/docs/practices/naming):
 * the ovpnd_ prefix, _total on counters, seconds and bytes as base units. */
#include "server/ops/metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>
#include <uv.h>

#include "proto/data_crypto.h"
#include "server/config/config.h"
#include "server/data/worker_stats.h"
#include "server/log/log.h"
#include "server/thread/mailbox.h"

const uint32_t metrics_hs_bucket_ms[METRICS_HS_BUCKETS] = {
    5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000,
};

#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct metrics {
    bool is_per_client; /* metrics-per-client (copied: the config may be replaced later) */
    struct mailbox *mb;
    int owner;
    const struct worker_stats *const *ws;
    int n_workers;
    struct metrics_ops ops;
    time_t start_time;
    struct MHD_Daemon *daemon;
    pthread_mutex_t lock; /* guards is_stopping and every request's is_done / n_refs */
    pthread_cond_t cond;
    bool is_stopping;
    struct log_ratelimit rl; /* HTTP thread only */
};

/* One scrape's request for a snapshot: referenced by the HTTP thread while it waits and by
 * the MSG_CALL until it has run or been discarded; the last to let go frees it. */
struct snapshot_req {
    struct metrics *m;
    bool with_clients; /* per-client rows wanted (a scrape with metrics-per-client) */
    int n_refs;
    bool is_done, is_ok;
    struct metrics_snapshot snap;
};

void metrics_count_handshake(struct metrics_control *c, enum metrics_handshake hs,
                             uint64_t duration_ms)
{
    c->handshakes[hs]++;
    if (hs != METRICS_HS_OK) {
        return;
    }
    for (int i = 0; i < METRICS_HS_BUCKETS; i++) {
        if (duration_ms <= metrics_hs_bucket_ms[i]) {
            c->hs_bucket[i]++;
            break;
        }
    }
    c->hs_count++;
    c->hs_sum_ms += duration_ms;
}

/* ---- rendering ---- */

static void family(FILE *out, const char *name, const char *type, const char *help)
{
    fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0 when it is not one (overlong
 * forms, surrogates and code points past U+10FFFF count as invalid, RFC 3629). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t len;
    uint32_t cp;

    if (s[0] < 0x80) {
        return 1;
    }
    if (s[0] >= 0xC2 && s[0] <= 0xDF) {
        len = 2, cp = s[0] & 0x1Fu;
    } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        len = 3, cp = s[0] & 0x0Fu;
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        len = 4, cp = s[0] & 0x07u;
    } else {
        return 0;
    }
    if (n < len) {
        return 0;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            return 0;
        }
        cp = cp << 6 | (s[i] & 0x3Fu);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))) {
        return 0;
    }
    return len;
}

/* A label value as the text format wants it: \\, \" and \n escaped; other control characters
 * and bytes that are not UTF-8 as '?' (a common name is whatever the certificate says). At most
 * max bytes of s are read. */
static void label_value(FILE *out, const char *s, size_t max)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strnlen(s, max);

    for (size_t i = 0; i < n;) {
        size_t len = utf8_len(p + i, n - i);

        if (len == 0) {
            fputc('?', out);
            i++;
        } else if (p[i] == '\\' || p[i] == '"') {
            fputc('\\', out);
            fputc(p[i++], out);
        } else if (p[i] == '\n') {
            fputs("\\n", out);
            i++;
        } else if (p[i] < 0x20 || p[i] == 0x7F) {
            fputc('?', out);
            i++;
        } else {
            fwrite(p + i, 1, len, out);
            i += len;
        }
    }
}

struct worker_counter {
    const char *label; /* label value (reason or op) */
    size_t offset;     /* of an _Atomic uint64_t in struct worker_stats */
};

#define WS(label, field)                                                                           \
    {                                                                                              \
        label, offsetof(struct worker_stats, field)                                                \
    }

/* Every reason worker_stats_dropped() sums: their total is the status file's "dropped". */
static const struct worker_counter drop_reasons[] = {
    WS("short", drop_short),
    WS("unknown_peer_id", drop_unknown_peer),
    WS("no_key", drop_no_key),
    WS("authentication", drop_auth),
    WS("replay", drop_replay),
    WS("bad_source", drop_bad_source),
    WS("not_ip", drop_not_ip),
    WS("no_route", drop_no_route),
    WS("send_error", drop_send),
    WS("compressed", drop_compressed),
    WS("ipv6_link_local", drop_link_local),
    WS("tun_read_error", drop_tun_read),
    WS("tun_write_error", drop_tun_write),
    WS("tun_multicast", drop_tun_multicast),
    WS("float", drop_float),
    WS("handover_queue_full", drop_handover),
    WS("compression_malformed", drop_comp_malformed),
    WS("fragment", drop_frag),
    WS("tcp_queue_limit", drop_tcp_queue),
    WS("vlan", drop_vlan),
};

static const struct worker_counter tun_errors[] = {
    WS("read", drop_tun_read),
    WS("write", drop_tun_write),
};

static const struct worker_counter udp_errors[] = {
    WS("receive", udp_recv_errors),
    WS("send", drop_send),
};

static uint64_t ws_get(const struct worker_stats *s, size_t offset)
{
    return stat_get((const _Atomic uint64_t *)((const char *)s + offset));
}

/* One series per worker of the counter at offset. */
static void per_worker(FILE *out, const char *name, const char *type, const char *help,
                       const struct worker_stats *const *ws, int n_workers, size_t offset)
{
    family(out, name, type, help);
    for (int i = 0; i < n_workers; i++) {
        fprintf(out, "%s{worker=\"%d\"} %" PRIu64 "\n", name, i, ws_get(ws[i], offset));
    }
}

/* One series per worker and label value of table (label name key). */
static void per_worker_by(FILE *out, const char *name, const char *help, const char *key,
                          const struct worker_stats *const *ws, int n_workers,
                          const struct worker_counter *table, size_t n)
{
    family(out, name, "counter", help);
    for (int i = 0; i < n_workers; i++) {
        for (size_t k = 0; k < n; k++) {
            fprintf(out, "%s{worker=\"%d\",%s=\"%s\"} %" PRIu64 "\n", name, i, key, table[k].label,
                    ws_get(ws[i], table[k].offset));
        }
    }
}

static void render_workers(FILE *out, const struct worker_stats *const *ws, int n)
{
    per_worker(out, "ovpnd_worker_sessions", "gauge",
               "Clients whose data channel this worker carries now.", ws, n,
               offsetof(struct worker_stats, sessions));
    per_worker(out, "ovpnd_worker_receive_packets_total", "counter",
               "Data-channel packets received from clients and decrypted.", ws, n,
               offsetof(struct worker_stats, rx_packets));
    per_worker(out, "ovpnd_worker_transmit_packets_total", "counter",
               "Data-channel packets sent to clients.", ws, n,
               offsetof(struct worker_stats, tx_packets));
    per_worker(out, "ovpnd_worker_receive_bytes_total", "counter",
               "Link bytes (encrypted payloads) of the packets received; the sum of its "
               "clients' Bytes Received in the status file.",
               ws, n, offsetof(struct worker_stats, rx_bytes));
    per_worker(out, "ovpnd_worker_transmit_bytes_total", "counter",
               "Link bytes (encrypted payloads) of the packets sent.", ws, n,
               offsetof(struct worker_stats, tx_bytes));
    per_worker(out, "ovpnd_worker_handed_over_packets_total", "counter",
               "Packets that reached this worker but belong to another.", ws, n,
               offsetof(struct worker_stats, handed_over));
    per_worker(out, "ovpnd_worker_client_to_client_packets_total", "counter",
               "Packets forwarded from one client to another (client-to-client).", ws, n,
               offsetof(struct worker_stats, client_to_client));
    per_worker_by(out, "ovpnd_worker_dropped_packets_total",
                  "Packets dropped, by reason; the sum is the status file's dropped.", "reason", ws,
                  n, drop_reasons, sizeof(drop_reasons) / sizeof(drop_reasons[0]));
    per_worker_by(out, "ovpnd_tun_errors_total",
                  "TUN device reads refused (bad offload header, too long) and writes that "
                  "failed.",
                  "op", ws, n, tun_errors, sizeof(tun_errors) / sizeof(tun_errors[0]));
    per_worker_by(out, "ovpnd_udp_errors_total",
                  "Failed receive calls on the worker's UDP socket, and packets the kernel "
                  "refused to send (UDP, or a TCP client's connection).",
                  "op", ws, n, udp_errors, sizeof(udp_errors) / sizeof(udp_errors[0]));
}

static const char *const hs_names[METRICS_HS_N] = {"ok", "tls_error", "timeout", "refused"};
static const char *const auth_method_names[METRICS_AUTH_METHOD_N] = {
    "certificate", "tls_verify", "user_pass", "auth_token", "management"};
static const char *const auth_result_names[METRICS_AUTH_RESULT_N] = {"ok", "refused", "timeout",
                                                                     "error"};

static void render_control(FILE *out, const struct metrics_snapshot *s)
{
    const struct metrics_control *c = &s->control;
    uint64_t cumulative = 0;

    family(out, "ovpnd_clients_connected", "gauge", "Clients connected now.");
    fprintf(out, "ovpnd_clients_connected %" PRIu64 "\n", s->n_clients);
    family(out, "ovpnd_control_sessions", "gauge",
           "Sessions of the control channel: connected clients and negotiations under way.");
    fprintf(out, "ovpnd_control_sessions %" PRIu64 "\n", s->n_sessions);
    family(out, "ovpnd_draining", "gauge",
           "1 while the server drains (ovpnd-drain on): connected clients stay, new ones are not "
           "answered.");
    fprintf(out, "ovpnd_draining %d\n", s->is_draining ? 1 : 0);
    family(out, "ovpnd_handshakes_total", "counter",
           "First negotiations of a session, by result: ok (connected), tls_error, timeout "
           "(hand-window), refused (after TLS: authentication, max-clients, addresses).");
    for (int i = 0; i < METRICS_HS_N; i++) {
        fprintf(out, "ovpnd_handshakes_total{result=\"%s\"} %" PRIu64 "\n", hs_names[i],
                c->handshakes[i]);
    }
    family(out, "ovpnd_handshake_duration_seconds", "histogram",
           "Time from a session's start to its client's connection, for the handshakes that "
           "succeeded.");
    for (int i = 0; i < METRICS_HS_BUCKETS; i++) {
        cumulative += c->hs_bucket[i];
        fprintf(out, "ovpnd_handshake_duration_seconds_bucket{le=\"%g\"} %" PRIu64 "\n",
                metrics_hs_bucket_ms[i] / 1000.0, cumulative);
    }
    fprintf(out, "ovpnd_handshake_duration_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n", c->hs_count);
    fprintf(out, "ovpnd_handshake_duration_seconds_sum %.3f\n", c->hs_sum_ms / 1000.0);
    fprintf(out, "ovpnd_handshake_duration_seconds_count %" PRIu64 "\n", c->hs_count);
    family(out, "ovpnd_auth_results_total", "counter",
           "Client checks, by method and result (first negotiations and renegotiations).");
    for (int m = 0; m < METRICS_AUTH_METHOD_N; m++) {
        for (int r = 0; r < METRICS_AUTH_RESULT_N; r++) {
            fprintf(out, "ovpnd_auth_results_total{method=\"%s\",result=\"%s\"} %" PRIu64 "\n",
                    auth_method_names[m], auth_result_names[r], c->auth[m][r]);
        }
    }
    family(out, "ovpnd_renegotiations_total", "counter",
           "Key renegotiations of connected clients, by result (a failed one ends the session).");
    fprintf(out, "ovpnd_renegotiations_total{result=\"ok\"} %" PRIu64 "\n", c->renegotiations_ok);
    fprintf(out, "ovpnd_renegotiations_total{result=\"failed\"} %" PRIu64 "\n",
            c->renegotiations_failed);
    family(out, "ovpnd_control_dropped_packets_total", "counter",
           "Packets the control channel dropped, by reason.");
    for (size_t i = 0; i < s->n_control_drops; i++) {
        fprintf(out, "ovpnd_control_dropped_packets_total{reason=\"%s\"} %" PRIu64 "\n",
                s->control_drops[i].reason, s->control_drops[i].n);
    }
}

static void client_series(FILE *out, const char *name, const struct status_client *c)
{
    fputs(name, out);
    fputs("{common_name=\"", out);
    label_value(out, c->common_name[0] ? c->common_name : "UNDEF", sizeof(c->common_name));
    fprintf(out, "\",peer_id=\"%" PRIu32 "\"} ", c->peer_id);
}

static void render_clients(FILE *out, const struct metrics_snapshot *s)
{
    family(out, "ovpnd_client_receive_bytes_total", "counter",
           "Link bytes received from a connected client (its status file row).");
    for (size_t i = 0; i < s->n_client_rows; i++) {
        client_series(out, "ovpnd_client_receive_bytes_total", &s->clients[i]);
        fprintf(out, "%" PRIu64 "\n", s->clients[i].bytes_rx);
    }
    family(out, "ovpnd_client_transmit_bytes_total", "counter",
           "Link bytes sent to a connected client.");
    for (size_t i = 0; i < s->n_client_rows; i++) {
        client_series(out, "ovpnd_client_transmit_bytes_total", &s->clients[i]);
        fprintf(out, "%" PRIu64 "\n", s->clients[i].bytes_tx);
    }
    family(out, "ovpnd_client_connected_since_seconds", "gauge",
           "When a connected client connected, in seconds since the Unix epoch.");
    for (size_t i = 0; i < s->n_client_rows; i++) {
        client_series(out, "ovpnd_client_connected_since_seconds", &s->clients[i]);
        fprintf(out, "%lld\n", (long long)s->clients[i].connected_since);
    }
}

int metrics_render(FILE *out, const struct metrics_snapshot *snap,
                   const struct worker_stats *const *ws, int n_workers, bool per_client,
                   time_t start_time)
{
    family(out, "ovpnd_build_info", "gauge", "The running build: version and data-channel crypto.");
    fprintf(out, "ovpnd_build_info{version=\"%s\",data_crypto=\"%s\"} 1\n", OVPND_VERSION,
            data_aead_backend_name(data_crypto_default_backend()));
    family(out, "ovpnd_start_time_seconds", "gauge",
           "When the server started, in seconds since the Unix epoch.");
    fprintf(out, "ovpnd_start_time_seconds %lld\n", (long long)start_time);
    render_control(out, snap);
    render_workers(out, ws, n_workers);
    if (per_client) {
        render_clients(out, snap);
    }
    return ferror(out) ? -EIO : 0;
}

/* ---- the snapshot request (control thread side) ---- */

static void req_release_locked(struct snapshot_req *r)
{
    if (--r->n_refs == 0) {
        free(r->snap.clients);
        free(r);
    }
}

/* MSG_CALL run on the owner's thread. */
static void req_run(void *arg)
{
    struct snapshot_req *r = arg;
    struct metrics *m = r->m;

    m->ops.snapshot(m->ops.ctx, r->with_clients, &r->snap);
    pthread_mutex_lock(&m->lock);
    r->is_done = r->is_ok = true;
    pthread_cond_broadcast(&m->cond);
    req_release_locked(r);
    pthread_mutex_unlock(&m->lock);
}

/* MSG_CALL discarded: the owner has stopped. */
static void req_discard(void *arg)
{
    struct snapshot_req *r = arg;
    struct metrics *m = r->m;

    pthread_mutex_lock(&m->lock);
    r->is_done = true;
    pthread_cond_broadcast(&m->cond);
    req_release_locked(r);
    pthread_mutex_unlock(&m->lock);
}

unsigned metrics_health(const struct metrics_snapshot *snap, const char **text)
{
    if (!snap->is_ready) {
        *text = "not ready\n";
        return METRICS_HTTP_UNAVAILABLE;
    }
    if (snap->is_draining) {
        *text = "draining\n";
        return METRICS_HTTP_UNAVAILABLE;
    }
    *text = "serving\n";
    return METRICS_HTTP_OK;
}

/* The exposition text, or with is_health the /health body (malloc'd, *len bytes; *status
 * METRICS_HTTP_OK or metrics_health()'s), or NULL with *status the HTTP error to answer. */
static char *scrape(struct metrics *m, bool is_health, size_t *len, unsigned *status)
{
    struct snapshot_req *r = calloc(1, sizeof(*r));
    struct msg *msg = r ? msg_call_new(req_run, req_discard, r) : NULL;
    struct timespec deadline;
    char *text = NULL;
    FILE *out;
    int err;

    *status = MHD_HTTP_INTERNAL_SERVER_ERROR;
    if (!msg) {
        free(r);
        return NULL;
    }
    r->m = m;
    r->with_clients = m->is_per_client && !is_health;
    r->n_refs = 2;
    mailbox_post(m->mb, m->owner, msg);
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += METRICS_SNAPSHOT_WAIT_MS / 1000;
    deadline.tv_nsec += (METRICS_SNAPSHOT_WAIT_MS % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&m->lock);
    while (!r->is_done && !m->is_stopping) {
        if (pthread_cond_timedwait(&m->cond, &m->lock, &deadline) == ETIMEDOUT) {
            break;
        }
    }
    if (!r->is_ok) {
        *status = MHD_HTTP_SERVICE_UNAVAILABLE;
        req_release_locked(r);
        pthread_mutex_unlock(&m->lock);
        return NULL;
    }
    pthread_mutex_unlock(&m->lock); /* done: the control thread no longer touches r->snap */
    if (is_health) {
        const char *body;

        *status = metrics_health(&r->snap, &body);
        text = strdup(body);
        *len = strlen(body);
    } else if ((out = open_memstream(&text, len)) != NULL) {
        *status = MHD_HTTP_OK;
        err = metrics_render(out, &r->snap, m->ws, m->n_workers, m->is_per_client, m->start_time);
        if (fclose(out) != 0 || err) {
            free(text);
            text = NULL;
        }
    }
    if (!text) {
        *status = MHD_HTTP_INTERNAL_SERVER_ERROR;
    }
    pthread_mutex_lock(&m->lock);
    req_release_locked(r);
    pthread_mutex_unlock(&m->lock);
    return text;
}

/* ---- HTTP (libmicrohttpd's thread) ---- */

static void log_request(struct metrics *m, struct MHD_Connection *conn, const char *method,
                        const char *url, unsigned status)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    char addr[INET6_ADDRSTRLEN + 8] = "?";
    char safe_method[24], safe_url[96];

    if (ci && ci->client_addr) {
        const struct sockaddr *sa = ci->client_addr;

        if (sa->sa_family == AF_INET) {
            inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, addr,
                      sizeof(addr));
        } else if (sa->sa_family == AF_INET6) {
            inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, addr,
                      sizeof(addr));
        }
    }
    /* (the log turns control characters into '?'; the lengths are cut here) */
    snprintf(safe_method, sizeof(safe_method), "%s", method);
    snprintf(safe_url, sizeof(safe_url), "%s", url);
    log_msg_ratelimited(&m->rl, uv_hrtime() / 1000000, 5, 60,
                        status == MHD_HTTP_SERVICE_UNAVAILABLE ? LOG_WARN : LOG_DEBUG,
                        "metrics: %s %s from %s: %u%s", safe_method, safe_url, addr, status,
                        status == MHD_HTTP_SERVICE_UNAVAILABLE
                            ? " (the control thread did not answer in time)"
                            : "");
}

static enum MHD_Result answer(struct MHD_Connection *conn, unsigned status, char *body, size_t len,
                              bool is_metrics)
{
    static const char *const texts[] = {"not found\n", "method not allowed\n",
                                        "temporarily unavailable\n", "internal error\n"};
    struct MHD_Response *resp;
    enum MHD_Result ret;

    if (!body) {
        const char *t = status == MHD_HTTP_NOT_FOUND             ? texts[0]
                        : status == MHD_HTTP_METHOD_NOT_ALLOWED  ? texts[1]
                        : status == MHD_HTTP_SERVICE_UNAVAILABLE ? texts[2]
                                                                 : texts[3];

        resp = MHD_create_response_from_buffer(strlen(t), (void *)(uintptr_t)t,
                                               MHD_RESPMEM_PERSISTENT);
    } else {
        resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    }
    if (!resp) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                            is_metrics ? CONTENT_TYPE : "text/plain; charset=utf-8");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    }
    ret = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **state)
{
    struct metrics *m = cls;
    unsigned status;
    size_t len = 0;
    char *text;

    (void)version;
    (void)upload_data;
    (void)upload_data_size;
    (void)state;
    bool is_health = strcmp(url, "/health") == 0;

    if (strcmp(url, "/metrics") != 0 && !is_health) {
        log_request(m, conn, method, url, MHD_HTTP_NOT_FOUND);
        return answer(conn, MHD_HTTP_NOT_FOUND, NULL, 0, false);
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
        log_request(m, conn, method, url, MHD_HTTP_METHOD_NOT_ALLOWED);
        return answer(conn, MHD_HTTP_METHOD_NOT_ALLOWED, NULL, 0, false);
    }
    text = scrape(m, is_health, &len, &status);
    if (!text) {
        log_request(m, conn, method, url, status);
        return answer(conn, status, NULL, 0, false);
    }
    return answer(conn, status, text, len, !is_health);
}

/* libmicrohttpd's own messages (a malformed request, a refused connection), rate-limited: a
 * client of the endpoint must not be able to flood the log. */
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    struct metrics *m = cls;
    char line[256];

    vsnprintf(line, sizeof(line), fmt, ap);
    line[strcspn(line, "\n")] = '\0';
    log_msg_ratelimited(&m->rl, uv_hrtime() / 1000000, 5, 60, LOG_DEBUG, "metrics: %s", line);
}

/* The listening socket on HOST:PORT (IPv6: that address only, not the IPv4 side too). */
static int listen_on(const struct config_metrics *c, char *errbuf, size_t errbuf_len)
{
    struct sockaddr_storage ss;
    struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
    socklen_t len;
    int fd, one = 1, err;

    memset(&ss, 0, sizeof(ss));
    if (inet_pton(AF_INET, c->host, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        in4->sin_port = htons((uint16_t)c->port);
        len = sizeof(*in4);
    } else if (inet_pton(AF_INET6, c->host, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)c->port);
        len = sizeof(*in6);
    } else {
        snprintf(errbuf, errbuf_len, "metrics: '%s' is not an address", c->host);
        return -EINVAL;
    }
    fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        err = -errno;
        snprintf(errbuf, errbuf_len, "metrics: socket: %s", strerror(-err));
        return err;
    }
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (ss.ss_family == AF_INET6) {
        (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    }
    if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 16) < 0) {
        err = -errno;
        snprintf(errbuf, errbuf_len, "metrics: cannot listen on %s port %d: %s", c->host, c->port,
                 strerror(-err));
        close(fd);
        return err;
    }
    return fd;
}

int metrics_new(const struct config *cfg, struct mailbox *mb, int owner,
                const struct worker_stats *const *ws, int n_workers, const struct metrics_ops *ops,
                struct metrics **out, char *errbuf, size_t errbuf_len)
{
    struct metrics *m = calloc(1, sizeof(*m));
    int fd;

    if (!m) {
        snprintf(errbuf, errbuf_len, "metrics: out of memory");
        return -ENOMEM;
    }
    m->is_per_client = cfg->metrics.per_client;
    m->mb = mb;
    m->owner = owner;
    m->ws = ws;
    m->n_workers = n_workers;
    m->ops = *ops;
    m->start_time = time(NULL);
    pthread_mutex_init(&m->lock, NULL);
    pthread_cond_init(&m->cond, NULL);
    fd = listen_on(&cfg->metrics, errbuf, errbuf_len);
    if (fd < 0) {
        metrics_free(m);
        return fd;
    }
    m->daemon =
        MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
                             (strchr(cfg->metrics.host, ':') ? MHD_USE_IPv6 : 0),
                         0, NULL, NULL, on_request, m, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
                         MHD_OPTION_CONNECTION_LIMIT, (unsigned)METRICS_MAX_CONNECTIONS,
                         MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)METRICS_MAX_PER_IP,
                         MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)METRICS_IDLE_TIMEOUT_S,
                         MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)METRICS_CONN_MEMORY,
                         MHD_OPTION_STRICT_FOR_CLIENT, (int)1, MHD_OPTION_EXTERNAL_LOGGER,
                         on_mhd_log, m, MHD_OPTION_END);
    if (!m->daemon) {
        snprintf(errbuf, errbuf_len, "metrics: cannot start the HTTP server on %s port %d",
                 cfg->metrics.host, cfg->metrics.port);
        close(fd);
        metrics_free(m);
        return -EIO;
    }
    log_msg(LOG_INFO, "metrics: http://%s%s%s:%d/metrics%s",
            strchr(cfg->metrics.host, ':') ? "[" : "", cfg->metrics.host,
            strchr(cfg->metrics.host, ':') ? "]" : "", cfg->metrics.port,
            cfg->metrics.per_client ? " (with per-client series)" : "");
    *out = m;
    return 0;
}

void metrics_stop(struct metrics *m)
{
    if (!m) {
        return;
    }
    pthread_mutex_lock(&m->lock);
    m->is_stopping = true;
    pthread_cond_broadcast(&m->cond);
    pthread_mutex_unlock(&m->lock);
    if (m->daemon) {
        MHD_stop_daemon(m->daemon); /* joins its thread; closes the listening socket */
        m->daemon = NULL;
    }
}

void metrics_free(struct metrics *m)
{
    if (!m) {
        return;
    }
    metrics_stop(m);
    pthread_cond_destroy(&m->cond);
    pthread_mutex_destroy(&m->lock);
    free(m);
}
