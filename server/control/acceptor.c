/* server/control/acceptor.c: the control-plane thread (see acceptor.h): its loop, inbox (on_async)
 * and tick timer; building, starting, stopping (goodbye to clients) and freeing it. */
#include "server/control/acceptor.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/platform_util.h>

#include "proto/errors.h"
#include "proto/occ.h"
#include "proto/static_key.h"
#include "proto/tls_session.h"
#include "proto/tls_wrap.h"
#include "server/control/acceptor_decide.h"
#include "server/control/admission_decide.h"
#include "server/hooks/auth.h"
#include "server/hooks/hook_env.h"
#include "server/hooks/hooks.h"

#include "server/control/acceptor_internal.h"
#include "server/ops/mgmt.h"
#include "server/ops/status.h"

uint64_t acc_now_ms(struct acceptor *a)
{
    return uv_now(&a->loop);
}

/* Once sessions have ended (heap_trim.h): what they freed goes back to the kernel. */
static void trim_heap(struct acceptor *a, uint64_t now)
{
    struct heap_trim_result r;

    if (heap_trim_run(&a->heap_trim, now, &r)) {
        log_msg(LOG_DEBUG,
                "heap trimmed in %" PRIu64 " us: RSS %ld -> %ld kB (%zu kB free in the heap, "
                "%zu kB in use)",
                r.duration_us, r.rss_before_kb, r.rss_after_kb, r.free_before / 1024,
                r.in_use / 1024);
    }
}

void acc_cs_touch(struct acceptor *a, struct ctl_session *cs)
{
    uint64_t now = acc_now_ms(a);

    if (!timer_heap_is_set(&cs->timer) || cs->timer.due_ms > now) {
        timer_heap_set(&a->sessions.timers, &cs->timer, now);
    }
}

void acc_touch_all(struct acceptor *a)
{
    for (size_t i = 0; i < a->sessions.table_size; i++) {
        for (struct ctl_session *cs = a->sessions.table[i]; cs; cs = cs->hnext) {
            acc_cs_touch(a, cs);
        }
    }
}

static uint64_t earliest(uint64_t x, uint64_t y)
{
    return x < y ? x : y;
}

/* When acc_flush has something to send for cs: ACKs or TLS output it can queue (now), or the
 * next retransmission. A running handshake step owns its TLS output (its end flushes). */
static uint64_t flush_due(const struct ctl_session *cs, uint64_t now)
{
    uint64_t due = UINT64_MAX;

    for (int i = 0; i < 2; i++) {
        const struct key_state *ks = &cs->ks[i];
        size_t out_len = 0;

        if (!ks->in_use) {
            continue;
        }
        if (reliable_has_acks(&ks->rel)) {
            return now;
        }
        if (!ks->job && ks->tls) {
            (void)tls_session_out_peek(ks->tls, &out_len);
            if (out_len > 0 && reliable_can_send(&ks->rel)) {
                return now;
            }
        }
        due = earliest(due, reliable_next_timeout(&ks->rel));
    }
    return due;
}

/* The earliest time the tick's look at cs (visit_session) can do something: the deadlines that
 * visit_session and the functions it calls compare with the clock. UINT64_MAX: nothing until
 * cs changes (acc_cs_touch). */
static uint64_t session_due(struct acceptor *a, struct ctl_session *cs, uint64_t now,
                            uint64_t hand_window_ms)
{
    uint64_t due = UINT64_MAX;
    bool is_negotiating = false;

    if (cs->is_dead) {
        return now;
    }
    if (cs->state == CS_CLOSING) {
        if (!cs->is_peer_live) {
            due = cs->close_at_ms; /* freed then (a live peer: when its worker lets go) */
        }
        if (now < cs->close_at_ms) {
            due = earliest(due, flush_due(cs, now)); /* ACKs and retransmissions meanwhile */
        }
        return due;
    }
    due = flush_due(cs, now);
    for (int i = 0; i < 2; i++) { /* acc_check_key_states: hand-window, client-pending-auth */
        const struct key_state *ks = &cs->ks[i];

        if (!ks->in_use || ks->state != KS_TLS) {
            continue;
        }
        is_negotiating = true;
        due = earliest(due, ks->auth_wait && ks->auth_deadline_ms
                                ? ks->auth_deadline_ms + 1
                                : ks->start_ms + hand_window_ms + 1);
    }
    if (cs->state == CS_ACTIVE) {
        if (cs->reneg.has_old_key) { /* tran-window */
            due = earliest(due, cs->reneg.old_key_expire_ms);
        }
        if (!is_negotiating) { /* reneg-sec */
            due = earliest(due, cs->reneg.next_ms);
        }
        due = earliest(due, acc_token_next_ms(a, cs));
        due = earliest(due, acc_limits_next_ms(a, cs, now));
    }
    return due;
}

/* What the tick does for one session that is due: free it after its linger, hand-window,
 * reneg-sec, tran-window, auth-gen-token renewal, inactive and session-timeout, and flush
 * (retransmissions). Returns false when cs was freed. */
static bool visit_session(struct acceptor *a, struct ctl_session *cs, uint64_t now,
                          uint64_t hand_window_ms)
{
    if (cs->is_dead || (cs->state == CS_CLOSING && now >= cs->close_at_ms && !cs->is_peer_live)) {
        acc_cs_free(a, cs);
        return false;
    }
    if (cs->state != CS_CLOSING) {
        acc_check_key_states(a, cs, now, hand_window_ms);
    }
    if (cs->state == CS_ACTIVE) {
        acc_token_tick(a, cs, now);
        acc_limits_tick(a, cs, now);
    }
    if (cs->state != CS_CLOSING || now < cs->close_at_ms) {
        acc_flush(a, cs);
    }
    return true;
}

/* The sessions whose deadline has come, each once per tick, earliest first; each goes back in
 * at its next deadline (at the next tick at the earliest). Work in proportion to what is due,
 * not to the number of sessions. */
static void run_session_timers(struct acceptor *a, uint64_t now, uint64_t hand_window_ms)
{
    struct timer_heap_entry *e;

    while ((e = timer_heap_pop_due(&a->sessions.timers, now)) != NULL) {
        struct ctl_session *cs =
            (struct ctl_session *)((char *)e - offsetof(struct ctl_session, timer));
        uint64_t due;

        if (!visit_session(a, cs, now, hand_window_ms)) {
            continue;
        }
        due = session_due(a, cs, now, hand_window_ms);
        if (due == UINT64_MAX) {
            timer_heap_cancel(&a->sessions.timers, &cs->timer); /* (touched while visited) */
        } else {
            timer_heap_set(&a->sessions.timers, &cs->timer, due > now ? due : now + 1);
        }
    }
}

static void on_tick(uv_timer_t *t)
{
    struct acceptor *a = t->data;
    uint64_t now = acc_now_ms(a);
    uint64_t hand_window_ms = (uint64_t)a->cfg->timers.hand_window_s * 1000;

    auth_tick(a->checks.auth);
    unsigned changed =
        crl_watch_tick(&a->crypto.crl, &a->crypto.tls->conf, &a->crypto.tls_conf_lock, now);

    if (changed & CRL_WATCH_CAPATH) {
        acc_tls_conf_renew(a); /* new CAs and CRLs for new handshakes; sweeps as below */
    } else if (changed & CRL_WATCH_CRL) {
        acc_revoke_sweep(a); /* a revoked client goes now, not at its next renegotiation */
    }
    acc_tls_conf_sweep(a);
    run_session_timers(a, now, hand_window_ms);
    trim_heap(a, now);
    acc_blocks_tick(a, now);
    acc_admission_tick(a, now);
    acc_pk_sign_tick(a, now);
    acc_pk_token_tick(a);
    acc_notify_tick(a, now);
}

static void heap_trim_on_free(struct acceptor *a, struct ctl_session *cs)
{
    (void)cs;
    heap_trim_session_ended(&a->heap_trim, acc_now_ms(a));
}

/* Every feature's part in a session's end, in the order they run (session.c). */
static const struct acc_cleanup acc_cleanups[] = {
    {acc_mgmt_on_close, NULL},               /* >CLIENT:DISCONNECT, before the env goes */
    {acc_hooks_on_close, acc_hooks_on_free}, /* client-disconnect, learn-address delete */
    {NULL, acc_ccd_on_free},
    {NULL, acc_token_on_free},
    {NULL, acc_v2_on_free},
    {NULL, acc_link_on_free},
    {NULL, heap_trim_on_free},
    {NULL, acc_peer_on_free}, /* last: the addresses and the peer-id go */
};

/* The hooks have finished (hooks_on_closed): nothing comes back through the box any more. */
static void close_inbox(void *ctx)
{
    struct acceptor *a = ctx;

    uv_close((uv_handle_t *)&a->async, NULL);
}

static void stop_everything(struct acceptor *a)
{
    /* Running scripts are killed; the loop ends once their exits are seen. */
    for (size_t i = 0; i < a->sessions.table_size; i++) {
        for (struct ctl_session *cs = a->sessions.table[i]; cs; cs = cs->hnext) {
            acc_auth_abort(&cs->ks[0]);
            acc_auth_abort(&cs->ks[1]);
            if (cs->state != CS_CLOSING && (cs->is_connected || cs->hooks.n_learned > 0)) {
                acc_client_gone(a, cs);
            }
        }
    }
    auth_shutdown(a->checks.auth);
    /* client-disconnect scripts started just now get a few seconds (then they are killed). */
    if (a->checks.hooks != NULL) {
        /* their plugin calls come back through the box: it closes after them */
        hooks_on_closed(a->checks.hooks, close_inbox, a);
        hooks_shutdown(a->checks.hooks, HOOKS_SHUTDOWN_GRACE_MS);
    }
    if (a->fd >= 0) {
        uv_poll_stop(&a->poll);
        uv_close((uv_handle_t *)&a->poll, NULL);
    }
    uv_timer_stop(&a->tick);
    uv_timer_stop(&a->status_timer);
    uv_timer_stop(&a->persist_timer);
    uv_close((uv_handle_t *)&a->tick, NULL);
    uv_close((uv_handle_t *)&a->status_timer, NULL);
    uv_close((uv_handle_t *)&a->persist_timer, NULL);
    if (a->checks.hooks == NULL) {
        close_inbox(a);
    }
    if (!mgmt_is_held(a->mgmt)) { /* 2.6: only a tunnel that came up goes down */
        mgmt_up_down(a->mgmt, "DOWN", (const char *const *)a->updown_env.vars, a->updown_env.n);
    }
    mgmt_close(a->mgmt);
    acc_metrics_stop(a); /* scrapes waiting for this thread give up; its HTTP thread is joined */
}

/* explicit-exit-notify on a server: tell every client to reconnect (2.6 sends "RESTART", or
 * "RESTART,[N]" to make clients try their next remote, when it shuts down). */
static void say_goodbye(struct acceptor *a)
{
    a->is_stopping = true;
    if (a->cfg->clients.explicit_exit_notify <= 0) {
        return;
    }
    for (size_t i = 0; i < a->sessions.table_size; i++) {
        for (struct ctl_session *cs = a->sessions.table[i]; cs; cs = cs->hnext) {
            if (cs->state == CS_ACTIVE) {
                acc_send_message(
                    a, cs, a->cfg->clients.explicit_exit_notify >= 2 ? "RESTART,[N]" : "RESTART");
                acc_flush(a, cs);
            }
        }
    }
}

static void log_stats(struct acceptor *a)
{
    const struct acceptor_stats *s = &a->stats;

    log_msg(LOG_INFO,
            "control: %zu clients, %zu sessions; handshakes ok %" PRIu64 ", failed %" PRIu64
            ", refused %" PRIu64 "; dropped: short %" PRIu64 ", tls-auth/tls-crypt %" PRIu64
            ", replay %" PRIu64 ", malformed %" PRIu64 ", bad cookie %" PRIu64
            ", no session %" PRIu64 ", window %" PRIu64 ", handshake timeout %" PRIu64
            ", connect-freq %" PRIu64 ", connect-freq-initial %" PRIu64
            ", hand-over to a worker behind %" PRIu64 ", tls-crypt-v2 client key %" PRIu64
            ", refused by tls-crypt-v2-verify %" PRIu64
            "; admission: resets not answered (busy) %" PRIu64 ", handshakes too late %" PRIu64
            ", in flight %zu of %zu; TLS handshakes started %" PRIu64 ", finished %" PRIu64,
            a->sessions.n_clients, a->sessions.n_sessions, s->handshakes_ok, s->handshakes_failed,
            s->auth_failed, s->drop_short, s->drop_wrap, s->drop_replay, s->drop_malformed,
            s->drop_cookie, s->drop_no_session, s->drop_window, s->drop_handshake_timeout,
            s->drop_connect_freq, s->drop_connect_freq_initial, s->drop_handover, s->drop_wkc,
            s->drop_v2_refused, s->drop_busy, s->drop_too_late, a->sessions.n_in_flight,
            a->sessions.max_in_flight, s->tls_started, s->tls_done);
}

static void on_async(uv_async_t *h)
{
    struct acceptor *a = h->data;
    struct msg *m;

    while ((m = mailbox_take(a->env->mb, MAILBOX_ACCEPTOR)) != NULL) {
        if (m->type == MSG_CALL) {
            msg_call_run(m); /* a plugin call that returned (server/hooks) */
            continue;
        }
        switch (m->type) {
        case MSG_GONE:
            acc_handle_gone(a, m->peer, m->reason);
            break;
        case MSG_INSTALLED:
            acc_handle_installed(a, m->peer);
            break;
        case MSG_RENEGOTIATE:
            if (m->peer->ctl && m->peer->ctl->state == CS_ACTIVE) {
                m->peer->ctl->reneg.next_ms = 0; /* at the next tick, unless one is running */
                acc_cs_touch(a, m->peer->ctl);
            }
            break;
        case MSG_FLOAT:
            acc_handle_float(a, m->peer, &m->from);
            break;
        case MSG_MAC_NOTE:
            acc_tap_mac_note(a, m->peer, m->data, m->len);
            break;
        case MSG_PACKET:
            if (!mgmt_is_held(a->mgmt)) { /* management-hold: nobody is served yet */
                acc_handle_datagram(a, m->data, m->len, &m->from, m->link);
            }
            break;
        case MSG_LINK_CLOSED:
            acc_link_closed(a, m->link, &m->from);
            break;
        case MSG_STATS:
            log_stats(a);
            break;
        case MSG_RELOAD:
            acc_reload(a);
            acc_touch_all(a); /* its timers may have changed */
            break;
        case MSG_STOP:
            log_stats(a);
            say_goodbye(a);
            stop_everything(a);
            break;
        default:
            break;
        }
        msg_free(m);
    }
}

static void build_options_string(struct acceptor *a)
{
    struct occ_options o;

    occ_options_init(&o);
    o.dev_type = a->cfg->net.is_tap ? "tap" : "tun"; /* tap: 2.6's tun-mtu-extra 32 in link-mtu */
    o.tun_mtu = a->cfg->net.tun_mtu;
    o.fragment = a->cfg->net.fragment > 0;
    o.is_server = true;
    o.tls_auth = a->cfg->tls.tls_wrap_mode == TLS_WRAP_AUTH;
    o.keydir = o.tls_auth ? a->cfg->tls.key_direction : -1;
    o.auth = a->cfg->tls.auth;
    o.cipher = a->cfg->tls.cipher ? a->cfg->tls.cipher : a->cfg->tls.data_ciphers_fallback;
    o.cipher_in_data_ciphers = o.cipher != NULL;
    if (occ_options_string(&o, a->options_string, sizeof(a->options_string))) {
        snprintf(a->options_string, sizeof(a->options_string),
                 "V4,dev-type %s,link-mtu %d,tun-mtu %d,proto UDPv4,auth [null-digest],"
                 "keysize 256,key-method 2,tls-server",
                 a->cfg->net.is_tap ? "tap" : "tun", a->cfg->net.is_tap ? 1581 : 1549,
                 a->cfg->net.tun_mtu);
    }
}

static void release(struct acceptor *a);

/* Close h if uv_*_init made it (a handle still zero from calloc has no loop). */
static void close_if_open(uv_handle_t *h)
{
    if (h->loop && !uv_is_closing(h)) {
        uv_close(h, NULL);
    }
}

/* The control channel's crypto (acceptor_new): the random generator and cookie key, the TLS
 * configuration and its lock, the CRL, auth-gen-token's secret, tls-auth / tls-crypt. 0 or a
 * negative code with the reason in errbuf. */
static int setup_crypto(struct acceptor *a, char *errbuf, size_t errbuf_len)
{
    const struct config *cfg = a->cfg;
    static const char pers[] = "ovpnd acceptor";
    uint8_t key2[STATIC_KEY_LEN];
    int err;

    if (mbedtls_ctr_drbg_seed(&a->crypto.drbg, mbedtls_entropy_func, &a->crypto.entropy,
                              (const unsigned char *)pers, sizeof(pers) - 1) ||
        mbedtls_ctr_drbg_random(&a->crypto.drbg, a->crypto.cookie_key,
                                sizeof(a->crypto.cookie_key))) {
        snprintf(errbuf, errbuf_len, "cannot seed the random generator");
        return -EIO;
    }
    {
        pthread_rwlockattr_t attr;

        pthread_rwlockattr_init(&attr);
        pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
        err = -pthread_rwlock_init(&a->crypto.tls_conf_lock, &attr);
        pthread_rwlockattr_destroy(&attr);
        if (err) {
            snprintf(errbuf, errbuf_len, "cannot create the TLS configuration lock");
            return err;
        }
        a->crypto.has_tls_conf_lock = true;
    }
    /* before the chroot (server.c): its files are seen from outside */
    err = acc_tls_conf_new(a, cfg, cfg->proc.chroot_dir, &a->crypto.tls, &a->crypto.crl, errbuf,
                           errbuf_len);
    if (err) {
        return err;
    }
    err = acc_token_init(a);
    if (err) {
        snprintf(errbuf, errbuf_len, "auth-gen-token: cannot make a random secret");
        return err;
    }
    err = acc_v2_init(a, errbuf, errbuf_len);
    if (err) {
        return err;
    }
    if (cfg->tls.tls_wrap_mode != TLS_WRAP_NONE) {
        err = static_key_parse(cfg->tls.tls_wrap_key.data, cfg->tls.tls_wrap_key.len, key2);
        if (err) {
            snprintf(errbuf, errbuf_len, "%s: not an OpenVPN static key file",
                     cfg->tls.tls_wrap_key.origin ? cfg->tls.tls_wrap_key.origin : "tls key");
            return err;
        }
    } else {
        memset(key2, 0, sizeof(key2));
    }
    /* The key clients share (tls-auth, tls-crypt), NONE without one; with tls-crypt-v2 beside
     * it, each tls-crypt-v2 session has its own Kc instead */
    err = tls_wrap_init(&a->crypto.wrap, (enum tls_wrap_mode)cfg->tls.tls_wrap_mode, key2,
                        cfg->tls.key_direction, cfg->tls.auth, true);
    memcpy(a->crypto.wrap_key2, key2, sizeof(key2)); /* each session's dyn-tls-crypt key */
    mbedtls_platform_zeroize(key2, sizeof(key2));
    if (err) {
        snprintf(errbuf, errbuf_len, "tls-auth/tls-crypt setup failed: %s", proto_strerror(err));
        return err;
    }
    return 0;
}

/* Plugins, scripts and their environment (acceptor_new, on the main thread before privileges
 * are dropped). 0 or a negative code with the reason in errbuf. */
static int setup_checks(struct acceptor *a, char *errbuf, size_t errbuf_len)
{
    const struct acceptor_env *env = a->env;
    struct config *cfg = a->cfg;
    int err;

    /* Plugins are opened here: on the main thread, before privileges are dropped. */
    err = auth_new(&a->loop, env->mb, MAILBOX_ACCEPTOR, cfg, &a->checks.auth, errbuf, errbuf_len);
    if (err) {
        /* (a refused config, such as a plugin that does not load: nothing is on the loop yet) */
        return err;
    }
    err = hooks_new(&a->loop, env->mb, MAILBOX_ACCEPTOR, auth_plugins(a->checks.auth),
                    &a->checks.hooks);
    if (err) {
        snprintf(errbuf, errbuf_len, "hooks: %s", uv_strerror(err));
        return err;
    }
    {
        struct hook_server hs;

        memset(&hs, 0, sizeof(hs));
        hs.dev = env->dev_name;
        hs.tun_mtu = cfg->net.tun_mtu;
        hs.local = env->plan->local;
        hs.remote_netmask = env->plan->remote_netmask;
        hs.is_p2p = env->plan->topology != CONFIG_TOPOLOGY_SUBNET;
        hs.has_ipv6 = env->has_ipv6;
        memcpy(hs.local6, env->server_addr6, 16);
        hs.ipv6_bits = env->ipv6_bits;
        hs.port = cfg->net.port;
        hs.start_time = time(NULL);
        hs.pid = (long)getpid();
        err = hook_env_global(&a->checks.global_env, cfg, &hs);
        if (err) {
            snprintf(errbuf, errbuf_len, "script environment: %s", strerror(-err));
            return err;
        }
        auth_set_global_env(a->checks.auth, &a->checks.global_env);
    }
    acc_auth_init(a);
    return 0;
}

/* Admission control (admission_decide.h): the TLS threads (server.c sets UV_THREADPOOL_SIZE
 * before the acceptor starts) and the bound on handshakes in flight, OVPND_HANDSHAKES_IN_FLIGHT
 * from the environment or the default. */
static void setup_admission(struct acceptor *a)
{
    const char *threads = getenv("UV_THREADPOOL_SIZE");
    const char *bound = getenv("OVPND_HANDSHAKES_IN_FLIGHT");

    a->crypto.n_tls_threads = threads ? strtol(threads, NULL, 10) : 4; /* libuv's default */
    if (a->crypto.n_tls_threads < 1) {
        a->crypto.n_tls_threads = 1;
    }
    a->crypto.step_us = ADMISSION_HS_US_DEFAULT / 2; /* until steps are measured */
    a->crypto.hs_us = ADMISSION_HS_US_DEFAULT;
    a->sessions.configured_in_flight = bound ? strtol(bound, NULL, 10) : 0;
    acc_admission_tick(a, acc_now_ms(a));
    log_msg(LOG_INFO, "admission control: at most %zu TLS handshakes in flight%s",
            a->sessions.max_in_flight,
            a->sessions.configured_in_flight > 0
                ? " (OVPND_HANDSHAKES_IN_FLIGHT)"
                : " (to begin with: it follows the handshake rate)");
}

/* The loop's handles and timers (acceptor_new), with the acceptor's mailbox box. 0 or a
 * negative code. */
static int setup_loop(struct acceptor *a)
{
    const struct acceptor_env *env = a->env;
    const struct config *cfg = a->cfg;
    int err;

    err = uv_async_init(&a->loop, &a->async, on_async);
    /* no UDP socket when the server listens on TCP only */
    err = err || a->fd < 0 ? err : uv_poll_init(&a->loop, &a->poll, a->fd);
    err = err ? err : uv_timer_init(&a->loop, &a->tick);
    err = err ? err : uv_timer_init(&a->loop, &a->status_timer);
    err = err ? err : uv_timer_init(&a->loop, &a->persist_timer);
    if (err) {
        return err;
    }
    mailbox_attach(env->mb, MAILBOX_ACCEPTOR, &a->async);
    setup_admission(a);
    a->async.data = a->poll.data = a->tick.data = a->status_timer.data = a;
    a->persist_timer.data = a;
    heap_trim_init(&a->heap_trim, acc_now_ms(a), heap_trim_rss_kb());
    acc_blocks_init(a);
    err = err ? err : uv_timer_start(&a->tick, on_tick, ACCEPTOR_TICK_MS, ACCEPTOR_TICK_MS);
    if (!err && cfg->status.status_file && !a->is_status_off) {
        uint64_t ms =
            (uint64_t)(cfg->status.status_interval_s > 0 ? cfg->status.status_interval_s : 60) *
            1000;

        err = uv_timer_start(&a->status_timer, acc_on_status_timer, 0, ms);
    }
    if (!err && env->is_pool_persisted) {
        uint64_t ms = (uint64_t)cfg->net.ifconfig_pool_persist_s * 1000;

        err = uv_timer_start(&a->persist_timer, acc_on_persist_timer, ms, ms);
    }
    return err;
}

int acceptor_test_config(struct config *cfg, char *errbuf, size_t errbuf_len)
{
    struct acceptor *a = calloc(1, sizeof(*a));
    int err;

    if (!a) {
        return -ENOMEM;
    }
    a->cfg = cfg;
    a->status_fd = -1;
    mbedtls_entropy_init(&a->crypto.entropy);
    mbedtls_ctr_drbg_init(&a->crypto.drbg);
    if (cfg->status.status_file) {
        /* what start-up will warn about (it starts all the same) */
        err = status_probe_file(cfg->status.status_file, O_WRONLY);
        if (err == -ELOOP && (cfg->proc.user || cfg->proc.group || cfg->proc.chroot_dir)) {
            snprintf(errbuf, errbuf_len, "status: cannot open %s: %s", cfg->status.status_file,
                     strerror(ELOOP));
            release(a);
            return err;
        }
        if (err) {
            status_warn_unopened("status", cfg->status.status_file, O_WRONLY, err,
                                 cfg->proc.chroot_dir == NULL);
        }
    }
    if (cfg->net.ifconfig_pool_persist && !cfg->clients.duplicate_cn) {
        int oflags = cfg->net.ifconfig_pool_persist_s > 0 ? O_RDWR : O_RDONLY;

        err = status_probe_file(cfg->net.ifconfig_pool_persist, oflags);
        if (err == -ELOOP) {
            snprintf(errbuf, errbuf_len, "ifconfig-pool-persist: cannot open %s: %s",
                     cfg->net.ifconfig_pool_persist, strerror(ELOOP));
            release(a);
            return err;
        }
        if (err) {
            status_warn_unopened("ifconfig-pool-persist", cfg->net.ifconfig_pool_persist, oflags,
                                 err, cfg->proc.chroot_dir == NULL);
        }
    }
    if (cfg->pkcs11.n_providers > 0) {
        /* the providers and the certificate; the PIN and the key at start-up */
        err = acc_pk_token_check(cfg, errbuf, errbuf_len);
    } else if (acc_mgmt_startup_pending(cfg)) {
        /* no management client to ask here: what it would give is checked when it gives it */
        log_msg(LOG_INFO, "%s%s%s: not checked (no management client to ask at --test-config)",
                cfg->mgmt.external_cert ? "the certificate (management-external-cert)" : "",
                cfg->mgmt.external_cert && cfg->tls.is_key_locked ? " and " : "",
                cfg->tls.is_key_locked
                    ? "the encrypted key and its password (management-query-passwords)"
                    : "");
        err = 0;
    } else {
        err = setup_crypto(a, errbuf, errbuf_len);
    }
    if (err == 0) {
        /* The loop and mailbox are only kept for calls, and none is made: opening the plugins
         * and asking what they handle is all that happens. */
        err = auth_new(&a->loop, NULL, MAILBOX_ACCEPTOR, cfg, &a->checks.auth, errbuf, errbuf_len);
    }
    release(a); /* closes the plugins, wipes the keys */
    return err;
}

int acceptor_new(const struct acceptor_env *env, struct acceptor **out, char *errbuf,
                 size_t errbuf_len)
{
    struct acceptor *a = calloc(1, sizeof(*a));
    struct config *cfg = env->cfg;
    bool has_loop = false;
    int err;

    if (!a) {
        return -ENOMEM;
    }
    a->env = env;
    a->cfg = cfg;
    a->cleanups = acc_cleanups;
    a->n_cleanups = sizeof(acc_cleanups) / sizeof(acc_cleanups[0]);
    a->fd = env->udp_fd;
    a->status_fd = -1;
    a->persist_err = env->persist_err; /* (logged at start-up) */
    a->n_clients_notified = SIZE_MAX;  /* the first tick tells systemd the count */
    /* first, so that release() may free them whatever fails below */
    mbedtls_entropy_init(&a->crypto.entropy);
    mbedtls_ctr_drbg_init(&a->crypto.drbg);
    if (cfg->status.status_file && (cfg->proc.user || cfg->proc.group || cfg->proc.chroot_dir)) {
        /* (as root: not through a symbolic link someone left there) */
        a->status_fd =
            open(cfg->status.status_file, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (a->status_fd < 0 && errno == ELOOP) { /* a symbolic link there: never followed */
            err = -ELOOP;
            snprintf(errbuf, errbuf_len, "status: cannot open %s: %s", cfg->status.status_file,
                     strerror(ELOOP));
            goto fail;
        }
        if (a->status_fd < 0) {
            /* not a reason to stop (openvpn 2.6 starts too): written by its path at each
             * write, unless a chroot makes that path name another file */
            a->status_err = -errno;
            a->is_status_off = cfg->proc.chroot_dir != NULL;
            status_warn_unopened("status", cfg->status.status_file, O_WRONLY, a->status_err,
                                 !a->is_status_off);
        }
    } else if (cfg->status.status_file) {
        a->status_err = status_probe_file(cfg->status.status_file, O_WRONLY);
        if (a->status_err) {
            status_warn_unopened("status", cfg->status.status_file, O_WRONLY, a->status_err, true);
        }
    }
    if (msg_pool_init(&a->pool, ACCEPTOR_POOL_MSGS, CTL_BUF_LEN)) {
        err = -ENOMEM;
        goto fail;
    }
    connect_freq_init(&a->cf, cfg->clients.connect_freq_max, cfg->clients.connect_freq_per_s);
    connect_freq_initial_init(&a->cf_initial, cfg->clients.connect_freq_initial_max,
                              cfg->clients.connect_freq_initial_per_s);
    a->sessions.table_size = 1024;
    while (a->sessions.table_size < (size_t)cfg->clients.max_clients * 2) {
        a->sessions.table_size *= 2;
    }
    a->sessions.table = calloc(a->sessions.table_size, sizeof(*a->sessions.table));
    a->sessions.by_cn = calloc(a->sessions.table_size, sizeof(*a->sessions.by_cn));
    a->sessions.by_cid = calloc(a->sessions.table_size, sizeof(*a->sessions.by_cid));
    a->sessions.by_peer_id =
        calloc((size_t)env->n_workers * env->max_local_peers, sizeof(*a->sessions.by_peer_id));
    timer_heap_init(&a->sessions.timers);
    if (!a->sessions.table || !a->sessions.by_cn || !a->sessions.by_cid ||
        !a->sessions.by_peer_id ||
        peer_slots_init(&a->sessions.slots, env->n_workers, env->max_local_peers)) {
        err = -ENOMEM;
        goto fail;
    }
    err = uv_loop_init(&a->loop);
    if (err) {
        goto fail;
    }
    has_loop = true;
    /* management first: it may have to give what the TLS configuration is built from */
    err = acc_mgmt_init(a, errbuf, errbuf_len);
    err = err ? err : acc_mgmt_startup(a, errbuf, errbuf_len);
    err = err ? err : setup_crypto(a, errbuf, errbuf_len);
    if (err) {
        goto fail;
    }
    build_options_string(a);
    err = setup_checks(a, errbuf, errbuf_len);
    if (err) {
        goto fail;
    }
    err = setup_loop(a);
    err = err ? err : acc_metrics_init(a, errbuf, errbuf_len);
    if (err) {
        goto fail;
    }
    *out = a;
    return 0;

fail:
    if (has_loop) {
        /* Nothing has run on the loop: close what is on it, let the closes finish, close it. */
        if (a->checks.auth) {
            auth_shutdown(a->checks.auth);
        }
        hooks_shutdown(a->checks.hooks, 0); /* no script runs yet: its handles close at once */
        close_if_open((uv_handle_t *)&a->async);
        close_if_open((uv_handle_t *)&a->poll);
        close_if_open((uv_handle_t *)&a->tick);
        close_if_open((uv_handle_t *)&a->status_timer);
        close_if_open((uv_handle_t *)&a->persist_timer);
        mgmt_close(a->mgmt);
        uv_run(&a->loop, UV_RUN_DEFAULT);
        uv_loop_close(&a->loop);
    }
    release(a);
    return err;
}

static void acceptor_main(void *arg)
{
    struct acceptor *a = arg;

    pthread_setname_np(pthread_self(), "ovpnd-acceptor"); /* for top -H, ps -L, debuggers */
    acc_mgmt_started(a); /* reads the UDP socket from now on, unless management-hold holds */
    uv_run(&a->loop, UV_RUN_DEFAULT);
}

int acceptor_start(struct acceptor *a)
{
    return uv_thread_create(&a->thread, acceptor_main, a);
}

void acceptor_stop(struct acceptor *a)
{
    struct msg *m = msg_new(MSG_STOP, NULL, NULL, 0);

    if (m) {
        mailbox_post(a->env->mb, MAILBOX_ACCEPTOR, m);
    }
    uv_thread_join(&a->thread);
}

struct plugin_set *acceptor_plugins(const struct acceptor *a)
{
    return auth_plugins(a->checks.auth);
}

int acceptor_set_updown_env(struct acceptor *a, const struct script_env *env)
{
    script_env_clear(&a->updown_env);
    return hook_env_append(&a->updown_env, env);
}

void acceptor_free(struct acceptor *a)
{
    struct msg *m;

    a->are_workers_stopped = true;
    mailbox_close(a->env->mb, MAILBOX_ACCEPTOR);
    while ((m = mailbox_take(a->env->mb, MAILBOX_ACCEPTOR)) != NULL) {
        /* late MSG_GONE reports (their peers are freed with their sessions below), plugin calls
         * that returned too late */
        msg_discard(m);
    }
    uv_loop_close(&a->loop);
    for (size_t i = 0; i < a->sessions.table_size; i++) {
        struct ctl_session *cs = a->sessions.table[i], *next;

        for (; cs; cs = next) {
            next = cs->hnext;
            cs->is_peer_live = false; /* workers are stopped by now */
            acc_cs_free(a, cs);
        }
    }
    if (a->cfg->status.status_file && !a->is_status_off) {
        acc_write_status(a);
    }
    if (a->env->is_pool_persisted) {
        acc_write_pool_persist(a);
    }
    release(a);
}

/* What acceptor_free releases once the loop is closed and the sessions are gone; also the end of
 * acceptor_new's failure path, at whatever point it failed: what was not set up yet is still zero
 * from calloc (status_fd -1, the random generator initialised first), which each step accepts. */
static void release(struct acceptor *a)
{
    if (a->status_fd >= 0) {
        close(a->status_fd);
    }
    auth_free(a->checks.auth); /* joins the plugin threads */
    hooks_free(a->checks.hooks);
    script_env_clear(&a->checks.global_env);
    script_env_clear(&a->updown_env);
    tls_wrap_wipe(&a->crypto.wrap);
    mbedtls_platform_zeroize(a->crypto.wrap_key2, sizeof(a->crypto.wrap_key2));
    acc_v2_clear(a);
    acc_tls_conf_free(a->crypto.tls);
    while (a->crypto.retired) {
        struct acc_tls_conf *t = a->crypto.retired;

        a->crypto.retired = t->next_retired;
        acc_tls_conf_free(t);
    }
    acc_reload_free(a);
    acc_status_job_free(a);
    acc_pk_sign_free(a);
    acc_pk_token_free(a);
    acc_mgmt_startup_free(a);
    auth_token_ctx_wipe(&a->checks.token);
    if (a->crypto.has_tls_conf_lock) {
        pthread_rwlock_destroy(&a->crypto.tls_conf_lock);
    }
    mbedtls_ctr_drbg_free(&a->crypto.drbg);
    mbedtls_entropy_free(&a->crypto.entropy);
    peer_slots_free(&a->sessions.slots);
    timer_heap_free(&a->sessions.timers);
    free(a->sessions.table);
    free(a->sessions.by_cn);
    free(a->sessions.by_cid);
    free(a->sessions.by_peer_id);
    /* every worker is joined and its inbox drained: no message of the pool is left in use */
    msg_pool_clear(&a->pool);
    acc_blocks_clear(a);
    mgmt_free(a->mgmt);
    metrics_free(a->metrics); /* its requests left in the box were discarded by now */
    free(a);
}
