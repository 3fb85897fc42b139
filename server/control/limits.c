/* server/control/limits.c: the time limits of a connected client, `inactive N [BYTES]` and
 * `session-timeout N`, from the config or the client's client-config-dir file (openvpn 2.6
 * forward.c check_inactivity_timeout and check_session_timeout, options.c), and
 * `stale-routes-check N [T]` (multi.c check_stale_routes). The worker counts the client's
 * tunnel traffic (peer.h last_ref_s, tun_bytes); the acceptor's tick compares. */
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "server/addr/routes.h"
#include "server/config/ccd.h"
#include "server/data/peer.h"

#include "server/control/acceptor_internal.h"

void acc_limits_start(struct acceptor *a, struct ctl_session *cs)
{
    const struct config_clients *cc = &a->cfg->clients;
    const struct ccd *c = cs->ccd;
    struct cs_limits *l = &cs->limits;
    uint64_t now = acc_now_ms(a);
    int session_s = c && c->has_session_timeout ? c->session_timeout_s : cc->session_timeout_s;

    l->inactive_s = c && c->has_inactive ? c->inactive_s : cc->inactive_s;
    l->inactive_bytes = c && c->has_inactive ? c->inactive_bytes : cc->inactive_bytes;
    l->session_end_ms = session_s > 0 ? now + (uint64_t)session_s * 1000 : 0;
    l->window_end_ms = now + (uint64_t)l->inactive_s * 1000;
    l->window_mark =
        cs->peer ? atomic_load_explicit(&cs->peer->tun_bytes, memory_order_relaxed) : 0;
    l->stale_check_ms = now + (uint64_t)cc->stale_routes_interval_s * 1000;
    l->is_unrouted = false;
    acc_cs_touch(a, cs);
}

/* stale-routes-check: 2.6 deletes each route of its table nobody looked up for N seconds, and
 * runs learn-address "delete" for it; a client's address is looked up for each packet to or
 * from it, so an idle client loses its routes (until it connects again). ovpnd keeps one time
 * per client (the worker's last_ref_s, packets routed either way): when it is N seconds old,
 * the client's addresses and iroutes are routed nowhere any more, while its session stays. */
static void check_stale(struct acceptor *a, struct ctl_session *cs, uint64_t now_ms)
{
    const struct config_clients *cc = &a->cfg->clients;
    struct cs_limits *l = &cs->limits;
    struct peer *p = cs->peer;
    int64_t last;

    if (now_ms < l->stale_check_ms) {
        return;
    }
    l->stale_check_ms = now_ms + (uint64_t)cc->stale_routes_interval_s * 1000;
    last = atomic_load_explicit(&p->last_ref_s, memory_order_relaxed);
    if ((int64_t)time(NULL) - last < cc->stale_routes_s) {
        return;
    }
    acc_cs_log(a, cs, LOG_INFO,
               "stale-routes-check: no traffic for %d s, its addresses are no longer routed",
               cc->stale_routes_s);
    if (p->pool_index != SIZE_MAX && routes_holder(a->env->routes, p->pool_index) == p) {
        (void)routes_route_entry(a->env->routes, p->pool_index, VROUTE_NONE, p->worker);
    }
    for (size_t i = 0; i < p->n_routes; i++) {
        routes_del(a->env->routes, &p->routes[i], p->peer_id);
    }
    acc_hooks_unlearn(a, cs);
    l->is_unrouted = true;
}

/* Whether cs moved too little in its last inactive_s seconds: without BYTES no tunnel packet
 * since then (the worker's last_ref_s, a second's resolution); with BYTES fewer than that many
 * in each window of inactive_s seconds (2.6 resets its timer whenever BYTES have been counted). */
static bool is_inactive(struct ctl_session *cs, uint64_t now_ms)
{
    struct cs_limits *l = &cs->limits;
    const struct peer *p = cs->peer;
    uint64_t bytes;

    if (l->inactive_bytes == 0) {
        int64_t last = atomic_load_explicit(&p->last_ref_s, memory_order_relaxed);

        return (int64_t)time(NULL) - last >= l->inactive_s;
    }
    if (now_ms < l->window_end_ms) {
        return false;
    }
    bytes = atomic_load_explicit(&p->tun_bytes, memory_order_relaxed);
    if (bytes - l->window_mark < l->inactive_bytes) {
        return true;
    }
    l->window_mark = bytes;
    l->window_end_ms = now_ms + (uint64_t)l->inactive_s * 1000;
    return false;
}

uint64_t acc_limits_next_ms(const struct acceptor *a, const struct ctl_session *cs, uint64_t now_ms)
{
    const struct cs_limits *l = &cs->limits;
    uint64_t next = UINT64_MAX;

    if (!cs->peer || !cs->is_connected) {
        return next;
    }
    if (l->session_end_ms) {
        next = l->session_end_ms;
    }
    if (l->inactive_s > 0 && l->inactive_bytes > 0 && l->window_end_ms < next) {
        next = l->window_end_ms;
    } else if (l->inactive_s > 0 && l->inactive_bytes == 0) {
        /* the worker's last_ref_s is wall-clock seconds and moves on its own: look again a
         * second before it can run out by the wall clock, then at every tick until it has */
        int64_t last = atomic_load_explicit(&cs->peer->last_ref_s, memory_order_relaxed);
        int64_t left_s = last + l->inactive_s - (int64_t)time(NULL);
        uint64_t at = left_s <= 1 ? now_ms : now_ms + (uint64_t)(left_s - 1) * 1000;

        next = at < next ? at : next;
    }
    if (a->cfg->clients.stale_routes_s > 0 && !l->is_unrouted && l->stale_check_ms < next) {
        next = l->stale_check_ms;
    }
    return next;
}

void acc_limits_tick(struct acceptor *a, struct ctl_session *cs, uint64_t now_ms)
{
    struct cs_limits *l = &cs->limits;

    if (!cs->peer || !cs->is_connected) {
        return;
    }
    if (l->session_end_ms && now_ms >= l->session_end_ms) {
        acc_cs_log(a, cs, LOG_INFO, "session-timeout: connected for its time, disconnected");
        acc_cs_close(a, cs, 0);
        return;
    }
    if (l->inactive_s > 0 && is_inactive(cs, now_ms)) {
        acc_cs_log(a, cs, LOG_INFO, "inactivity timeout (inactive %d%s), disconnected",
                   l->inactive_s, l->inactive_bytes ? " with a byte minimum" : "");
        acc_cs_close(a, cs, 0);
        return;
    }
    if (a->cfg->clients.stale_routes_s > 0 && !l->is_unrouted) {
        check_stale(a, cs, now_ms);
    }
}
