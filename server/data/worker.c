/* server/data/worker.c: a data-plane thread: UDP <-> AEAD <-> TUN for the peers it owns. This
 * file holds the thread (init, start, join, post), its inbox (messages from the acceptor and the
 * other workers), its timer (keepalives, timeouts, key switch-over), the peer table
 * (install, forget) and the switch between waking per datagram and polling; the packets
 * themselves go through worker_rx.c (UDP in), worker_tx.c (UDP out) and worker_tun.c (the TUN
 * device). */
#include "server/data/worker.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "proto/comp.h"
#include "proto/data_crypto.h"
#include "proto/occ.h"
#include "proto/pbuf.h"
#include "server/data/worker_internal.h"
#include "server/thread/peer_id.h"

#define WORKER_TICK_MS 1000
#define GSO_LIMIT_TICKS 60 /* ticks a gso_seg_limit lasts (worker_tx.c lowers it) */

void wk_drop(struct worker *w, _Atomic uint64_t *counter, const union udp_addr *from,
             const char *why)
{
    uint32_t n_suppressed = 0;
    char addr[32];

    stat_inc(counter);
    if (!log_ratelimit_allow(&w->rl_drop, uv_now(&w->loop), 10, 10, &n_suppressed)) {
        return;
    }
    if (n_suppressed) {
        log_msg(LOG_WARN, "worker %d: %u similar messages suppressed", w->index, n_suppressed);
    }
    log_msg(LOG_WARN, "worker %d: dropped packet from %s: %s", w->index,
            from ? udp_addr_str(from, addr, sizeof(addr)) : "tun", why);
}

void wk_forget_peer(struct worker *w, struct peer *p, enum gone_reason reason)
{
    const struct worker_env *env = w->env;
    size_t local = peer_id_local(p->peer_id, env->n_workers);
    struct msg *m;

    if (p->conn) { /* a TCP client's session ends with its connection, and the other way round */
        struct tcp_conn *c = p->conn;

        p->conn = NULL;
        wk_tcp_close(w, c, LOG_INFO, "session ended");
    }
    for (unsigned i = 0; i < w->n_tx; i++) { /* queued datagrams still go, uncounted */
        if (w->tx_peer[i] == p) {
            w->tx_peer[i] = NULL;
        }
    }
    if (local < env->max_local_peers && w->by_local[local] == p) {
        w->by_local[local] = NULL;
    }
    if (p->is_installed) {
        atomic_store_explicit(&w->stats.sessions, stat_get(&w->stats.sessions) - 1,
                              memory_order_relaxed);
    }
    if (env->is_tap) {
        wk_tap_forget(w, p->peer_id, true); /* its MACs, here and on every other worker */
        p->n_macs = 0;
        p->n_macs_asked = 0;
    }
    p->is_installed = false;
    m = msg_new(MSG_GONE, p, NULL, 0);
    if (!m) {
        log_msg(LOG_ERR, "worker %d: out of memory reporting peer %u gone", w->index, p->peer_id);
        return;
    }
    m->reason = reason;
    mailbox_post(env->mb, MAILBOX_ACCEPTOR, m);
}

static void on_udp(uv_poll_t *h, int status, int events);

/* Switch between waking for every datagram (the socket's readiness) and polling the socket every
 * moderation_us microseconds (a periodic timerfd), like a NIC's interrupt moderation or NAPI:
 * under load each wakeup then handles a batch, which recvmmsg, UDP GSO and the TCP coalescing
 * for the TUN device need, instead of a datagram or two. */
static void set_polling(struct worker *w, bool on)
{
    struct itimerspec its;

    memset(&its, 0, sizeof(its));
    if (on) {
        its.it_value.tv_nsec = (long)w->moderation_us * 1000;
        its.it_interval = its.it_value;
        if (timerfd_settime(w->moderation_fd, 0, &its, NULL) < 0) {
            w->mod.is_polling = false; /* stay event-driven */
            return;
        }
        uv_poll_stop(&w->udp_poll);
        stat_inc(&w->stats.polling_entered);
    } else {
        timerfd_settime(w->moderation_fd, 0, &its, NULL);
        uv_poll_start(&w->udp_poll, UV_READABLE, on_udp);
    }
}

/* A datagram wakeup: go polling when bulk data comes in batches (moderation_on_wakeup). */
static void on_udp(uv_poll_t *h, int status, int events)
{
    struct worker *w = h->data;
    struct moderation_batch b = {0, 0};

    (void)events;
    if (status >= 0) {
        wk_udp_drain(w, &b);
    }
    wk_flush_out(w);
    if (w->mod.period_us != 0 && moderation_on_wakeup(&w->mod, &b, uv_hrtime() / 1000u)) {
        set_polling(w, true);
    }
}

/* A polling period ended: drain the socket; back to event-driven when the poll found no bulk
 * datagram (moderation_on_poll). */
static void on_moderation(uv_poll_t *h, int status, int events)
{
    struct worker *w = h->data;
    struct moderation_batch b = {0, 0};
    uint64_t expirations;

    (void)events;
    if (read(w->moderation_fd, &expirations, sizeof(expirations)) < 0 || status < 0 ||
        !w->mod.is_polling) {
        return;
    }
    wk_udp_drain(w, &b);
    wk_flush_out(w);
    if (moderation_on_poll(&w->mod, &b, uv_hrtime() / 1000u)) {
        set_polling(w, false);
    }
}

static void install_peer(struct worker *w, struct peer *p)
{
    const struct worker_env *env = w->env;
    size_t local = peer_id_local(p->peer_id, env->n_workers);
    struct msg *m;

    if (local >= env->max_local_peers ||
        (p->pool_index != SIZE_MAX && p->pool_index >= env->routes->n_owner)) {
        log_msg(LOG_ERR, "worker %d: peer %u out of table range", w->index, p->peer_id);
        wk_forget_peer(w, p, GONE_REMOVED);
        return;
    }
    if (p->link && !wk_tcp_bind_peer(w, p)) {
        wk_forget_peer(w, p, GONE_LINK_CLOSED); /* its connection closed meanwhile */
        return;
    }
    w->by_local[local] = p;
    atomic_store_explicit(&w->stats.sessions, stat_get(&w->stats.sessions) + 1,
                          memory_order_relaxed);
    p->last_rx_ms = p->last_tx_ms = uv_now(&w->loop);
    p->is_installed = true;
    m = msg_new(MSG_INSTALLED, p, NULL, 0);
    if (m) {
        mailbox_post(env->mb, MAILBOX_ACCEPTOR, m);
    }
}

/* A renegotiated key from the acceptor: receive with it at once, send with it once the client
 * does (or after hand-window at the latest, as 2.6's send-key choice does; at once when the
 * current key was retired already), and drop the key before the current one. */
static void install_key(struct worker *w, struct peer *p, const struct data_key *nk)
{
    worker_decide_install_key(p, nk, uv_now(&w->loop));
}

static void on_tick(uv_timer_t *t)
{
    struct worker *w = t->data;
    const struct worker_env *env = w->env;
    uint64_t now = uv_now(&w->loop);

    w->wall_s = (int64_t)time(NULL);
    /* Forget the path-MTU limit on GSO after a while: it is the smallest of every client's,
     * and paths change; a client still behind a small MTU costs one refused send a minute. */
    if (w->gso_seg_limit != SIZE_MAX && ++w->gso_limit_ticks >= GSO_LIMIT_TICKS) {
        w->gso_seg_limit = SIZE_MAX;
    }

    for (size_t i = 0; i < env->max_local_peers; i++) {
        struct peer *p = w->by_local[i];

        if (!p) {
            continue;
        }
        if (p->pending_tx_key &&
            now - p->pending_since_ms >= (uint64_t)env->cfg->timers.hand_window_s * 1000) {
            p->tx_key = p->pending_tx_key;
            p->pending_tx_key = NULL;
            p->is_reneg_requested = false;
        }
        if (p->ping_restart_s > 0 && now - p->last_rx_ms >= (uint64_t)p->ping_restart_s * 1000) {
            log_msg(LOG_INFO, "peer %u %s: no packet for %d s (%s), dropping client", p->peer_id,
                    p->common_name, p->ping_restart_s,
                    env->cfg->timers.is_ping_exit ? "ping-exit" : "ping-restart");
            wk_forget_peer(w, p, GONE_PING_TIMEOUT);
            continue;
        }
        if (p->ping_s > 0 && now - p->last_tx_ms >= (uint64_t)p->ping_s * 1000) {
            uint8_t ping[COMP_HEADROOM + sizeof(occ_ping_magic)];
            struct pbuf b = pbuf_make(ping, sizeof(ping), COMP_HEADROOM, sizeof(occ_ping_magic));

            memcpy(pbuf_ptr(&b), occ_ping_magic, sizeof(occ_ping_magic));
            wk_send_to_peer(w, p, &b);
        }
    }
    if (w->tcp_fd >= 0) {
        wk_tcp_tick(w, now);
    }
    wk_flush_out(w);
}

static void stop_loop(struct worker *w)
{
    wk_tcp_stop(w);
    if (w->udp_fd >= 0) {
        uv_poll_stop(&w->udp_poll);
        uv_close((uv_handle_t *)&w->udp_poll, NULL);
    }
    uv_poll_stop(&w->tun_poll);
    uv_timer_stop(&w->tick);
    uv_close((uv_handle_t *)&w->tun_poll, NULL);
    if (w->moderation_fd >= 0) {
        uv_poll_stop(&w->moderation_poll);
        uv_close((uv_handle_t *)&w->moderation_poll, NULL);
    }
    uv_close((uv_handle_t *)&w->tick, NULL);
    uv_close((uv_handle_t *)&w->async, NULL);
}

/* Whether m's peer is one this worker carries now, decided without touching the peer, which
 * may be freed already (see peer.h). */
static bool owns(const struct worker *w, const struct msg *m)
{
    size_t local = peer_id_local(m->peer_id, w->env->n_workers);

    return local < w->env->max_local_peers && w->by_local[local] == m->peer;
}

static void on_async(uv_async_t *a)
{
    struct worker *w = a->data;
    struct msg *m;

    while ((m = mailbox_take(w->env->mb, w->index)) != NULL) {

        switch (m->type) {
        case MSG_INSTALL:
            install_peer(w, m->peer);
            break;
        case MSG_NEW_KEY:
            if (owns(w, m) && m->len == sizeof(struct data_key)) {
                struct data_key nk;

                memcpy(&nk, m->data, sizeof(nk));
                install_key(w, m->peer, &nk);
            } else if (m->len == sizeof(struct data_key)) {
                data_key_clear((struct data_key *)(void *)m->data);
            }
            break;
        case MSG_REMOVE:
            if (owns(w, m)) {
                wk_forget_peer(w, m->peer, GONE_REMOVED);
            }
            break;
        case MSG_FLOAT_OK:
        case MSG_FLOAT_NO:
            if (owns(w, m)) {
                wk_float_answered(w, m->peer, &m->from, m->type == MSG_FLOAT_OK);
            }
            break;
        case MSG_KEY_RETIRE:
            if (owns(w, m) && m->len == 1) {
                worker_decide_retire_key(m->peer, m->data[0]);
            }
            break;
        case MSG_PACKET:
            if (m->from_tun && m->is_bcast) {
                wk_tap_bcast_local(w, m->data, m->len, m->peer_id, m->vid);
            } else if (m->from_tun) {
                if (m->len <= WORKER_BUF_LEN - COMP_HEADROOM) {
                    struct pbuf b = pbuf_make(w->rx_bufs[0], WORKER_BUF_LEN, COMP_HEADROOM, m->len);

                    memcpy(pbuf_ptr(&b), m->data, m->len);
                    if (w->env->is_tap) {
                        wk_tap_route_frame(w, &b, m->is_from_client, m->vid);
                    } else {
                        wk_route_tun_packet(w, &b, m->is_from_client);
                    }
                }
            } else if (m->is_data_v1) {
                wk_handle_data_v1(w, m->peer_id, m->data, m->len, &m->from);
            } else {
                wk_handle_datagram(w, m->data, m->len, &m->from);
            }
            break;
        case MSG_ROUTE_ADD:
            if (m->len == sizeof(struct vroute_key) &&
                vroute_add(&w->routes, (const struct vroute_key *)(void *)m->data, m->peer_id)) {
                log_msg(LOG_ERR, "worker %d: out of memory for a route of peer %u", w->index,
                        m->peer_id);
            }
            break;
        case MSG_ROUTE_DEL:
            if (m->len == sizeof(struct vroute_key)) {
                vroute_del(&w->routes, (const struct vroute_key *)(void *)m->data, m->peer_id);
            }
            break;
        case MSG_MAC_LEARN:
            wk_tap_mac_learned(w, m->peer_id, m->data, m->len);
            break;
        case MSG_MAC_ANSWER:
            if (owns(w, m)) {
                wk_tap_mac_answer(w, m->peer, m->data, m->len);
            }
            break;
        case MSG_MAC_FORGET:
            wk_tap_forget(w, m->peer_id, false);
            break;
        case MSG_LINK_SEND:
            wk_tcp_link_send(w, m->link, m->data, m->len);
            break;
        case MSG_LINK_CLOSE:
            wk_tcp_link_close(w, m->link);
            break;
        case MSG_STATS:
            worker_stats_log(&w->stats, w->index);
            break;
        case MSG_STOP:
            worker_stats_log(&w->stats, w->index);
            stop_loop(w);
            break;
        default:
            break;
        }
        msg_free(m);
    }
    wk_flush_out(w);
}

/* Close what worker_init put on w's loop (it never ran, or has stopped), let the closes finish
 * and close the loop. */
static void close_loop(struct worker *w)
{
    uv_handle_t *handles[] = {(uv_handle_t *)&w->async,           (uv_handle_t *)&w->udp_poll,
                              (uv_handle_t *)&w->tun_poll,        (uv_handle_t *)&w->tick,
                              (uv_handle_t *)&w->moderation_poll, (uv_handle_t *)&w->tcp_poll};

    for (size_t i = 0; i < sizeof(handles) / sizeof(handles[0]); i++) {
        if (handles[i]->loop == &w->loop && !uv_is_closing(handles[i])) {
            uv_close(handles[i], NULL);
        }
    }
    uv_run(&w->loop, UV_RUN_DEFAULT);
    uv_loop_close(&w->loop);
}

/* What w holds besides its loop and its message pool (freed by the server with the others). */
static void release(struct worker *w)
{
    if (w->moderation_fd >= 0) {
        close(w->moderation_fd);
        w->moderation_fd = -1;
    }
    if (w->has_vnet_hdr) {
        tcp_gro_free(&w->gro);
    }
    free(w->tun_buf);
    free(w->comp.lzo_wrkmem);
    w->tun_buf = NULL;
    free(w->by_local);
    w->by_local = NULL;
    vroute_table_free(&w->routes);
    mac_table_free(&w->macs);
    wk_tcp_free(w);
}

/* dev tap: room for every client's quota of MACs (max-routes-per-client each, as 2.6 bounds
 * them), up to MAC_TABLE_MAX_ENTRIES; the pages are used only as MACs are learned. */
static size_t tap_mac_entries(const struct config *cfg)
{
    uint64_t n = (uint64_t)cfg->clients.max_clients * (uint64_t)cfg->clients.max_routes_per_client;

    return n > MAC_TABLE_MAX_ENTRIES ? MAC_TABLE_MAX_ENTRIES : n < 16 ? 16 : (size_t)n;
}

/* The MAC table's hash key: random, so a client cannot choose MACs that collide. */
static uint64_t tap_hash_key(void)
{
    uint64_t key = 0;

    if (getrandom(&key, sizeof(key), 0) != (ssize_t)sizeof(key)) {
        key = uv_hrtime() ^ ((uint64_t)getpid() << 32);
    }
    return key;
}

int worker_init(struct worker *w, const struct worker_env *env, int i, int udp_fd, int tun_fd)
{
    bool has_loop = false;
    int err = -ENOMEM;

    memset(w, 0, sizeof(*w));
    w->index = i;
    w->env = env;
    w->udp_fd = udp_fd;
    w->tun_fd = tun_fd;
    /* OVPND_UDP_GSO=off: one datagram per send, as without kernel support (for comparison). */
    w->is_gso_ok = env->udp_gso;
    w->gso_seg_limit = SIZE_MAX;
    w->wall_s = (int64_t)time(NULL);
    /* without a UDP socket (TCP only) there is nothing to poll */
    w->moderation_us = udp_fd >= 0 ? env->moderation_us : 0;
    moderation_init(&w->mod, w->moderation_us, env->moderation_bulk_len);
    w->moderation_fd = -1;
    w->tcp_fd = -1;
    vroute_table_init(&w->routes);
    w->by_local = calloc(env->max_local_peers, sizeof(*w->by_local));
    if (!w->by_local || msg_pool_init(&w->pool, WORKER_POOL_MSGS, WORKER_BUF_LEN)) {
        goto fail;
    }
    w->comp.out = w->comp_tx;
    w->comp.out_cap = sizeof(w->comp_tx);
    w->comp.max_in = WORKER_BUF_LEN;
    if (env->cfg->net.comp.allow == COMP_ALLOW_YES) {
        if (comp_library_init()) {
            goto fail;
        }
        w->comp.lzo_wrkmem = malloc(comp_lzo_wrkmem_len());
        if (!w->comp.lzo_wrkmem) {
            goto fail;
        }
    }
    if (env->is_tap &&
        mac_table_init(&w->macs, tap_mac_entries(env->cfg),
                       env->max_local_peers * (size_t)env->n_workers, tap_hash_key())) {
        goto fail;
    }
    if (env->has_vnet_hdr) {
        w->tun_buf = malloc(COMP_HEADROOM + TUN_READ_LEN);
        if (!w->tun_buf || tcp_gro_init(&w->gro, wk_tun_write_offload, w)) {
            goto fail;
        }
        w->has_vnet_hdr = true;
    }
    err = uv_loop_init(&w->loop);
    if (err) {
        goto fail;
    }
    has_loop = true;
    err = uv_async_init(&w->loop, &w->async, on_async);
    err = err || udp_fd < 0 ? err : uv_poll_init(&w->loop, &w->udp_poll, w->udp_fd);
    err = err ? err : uv_poll_init(&w->loop, &w->tun_poll, w->tun_fd);
    err = err ? err : uv_timer_init(&w->loop, &w->tick);
    if (err) {
        goto fail;
    }
    w->async.data = w->udp_poll.data = w->tun_poll.data = w->tick.data = w;
    if (w->moderation_us > 0) {
        w->moderation_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        if (w->moderation_fd < 0) {
            err = -errno;
            goto fail;
        }
        err = uv_poll_init(&w->loop, &w->moderation_poll, w->moderation_fd);
        w->moderation_poll.data = w;
        err = err ? err : uv_poll_start(&w->moderation_poll, UV_READABLE, on_moderation);
    }
    err = err || udp_fd < 0 ? err : uv_poll_start(&w->udp_poll, UV_READABLE, on_udp);
    err = err ? err : uv_poll_start(&w->tun_poll, UV_READABLE, wk_on_tun);
    err = err ? err : uv_timer_start(&w->tick, on_tick, WORKER_TICK_MS, WORKER_TICK_MS);
    if (err) {
        goto fail;
    }
    mailbox_attach(env->mb, i, &w->async);
    return 0;

fail:
    if (has_loop) {
        close_loop(w);
    }
    release(w);
    return err;
}

void worker_discard(struct worker *w)
{
    close_loop(w);
    release(w);
}

static void worker_main(void *arg)
{
    struct worker *w = arg;
    char name[16]; /* the kernel keeps 15 characters */

    snprintf(name, sizeof(name), "ovpnd-worker-%d", w->index);
    pthread_setname_np(pthread_self(), name); /* for top -H, ps -L, debuggers */
    uv_run(&w->loop, UV_RUN_DEFAULT);
}

int worker_start(struct worker *w)
{
    return uv_thread_create(&w->thread, worker_main, w);
}

void worker_join(struct worker *w)
{
    struct msg *m;

    uv_thread_join(&w->thread);
    /* Messages that arrived after MSG_STOP: nothing will act on them any more, nor on those
     * posted from now on (released by the mailbox). */
    mailbox_close(w->env->mb, w->index);
    while ((m = mailbox_take(w->env->mb, w->index)) != NULL) {

        if (m->type == MSG_NEW_KEY && m->len == sizeof(struct data_key)) {
            data_key_clear((struct data_key *)(void *)m->data);
        }
        msg_discard(m);
    }
    uv_loop_close(&w->loop);
    release(w);
}
