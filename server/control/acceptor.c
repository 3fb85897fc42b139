/* server/control/acceptor.c: the control-plane thread (see acceptor.h). */
#include "server/control/acceptor.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <mbedtls/constant_time.h>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/md.h>
#include <mbedtls/sha256.h>
#include <mbedtls/platform_util.h>

#include "proto/cert_check.h"
#include "proto/cursor.h"
#include "proto/errors.h"
#include "proto/kdf.h"
#include "proto/key_method.h"
#include "proto/ncp.h"
#include "proto/occ.h"
#include "proto/packet.h"
#include "proto/packet_id.h"
#include "proto/peer_info.h"
#include "proto/push.h"
#include "proto/reliable.h"
#include "proto/static_key.h"
#include "proto/tls_session.h"
#include "proto/tls_wrap.h"
#include "server/control/acceptor_decide.h"
#include "server/hooks/auth.h"
#include "server/hooks/hook_env.h"
#include "server/hooks/hooks.h"
#include "server/data/peer.h"
#include "server/server.h"
#include "server/addr/pool_persist.h"
#include "server/ops/status.h"
#include "server/data/udp.h"
#include "server/data/worker.h"
#include "server/thread/peer_id.h"

#include "server/control/acceptor_internal.h"

uint64_t acc_now_ms(struct acceptor *a)
{
    return uv_now(&a->loop);
}

void acc_cs_log(struct acceptor *a, struct ctl_session *cs, enum log_level lvl, const char *fmt,
                ...)
{
    char addr[32], text[1024];
    uint32_t n_suppressed = 0;
    va_list ap;

    if (!log_enabled(lvl)) {
        return;
    }
    if (lvl >= LOG_WARN && !log_ratelimit_allow(&cs->rl, acc_now_ms(a), 20, 10, &n_suppressed)) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    log_msg(lvl, "%s%s%s%s: %s", cs->cn[0] ? cs->cn : "", cs->cn[0] ? "/" : "",
            udp_addr_str(&cs->remote, addr, sizeof(addr)),
            n_suppressed ? " (earlier messages suppressed)" : "", text);
}

/* A packet-triggered problem with no session: count it and log at most a few lines. */
static void drop_pkt(struct acceptor *a, uint64_t *counter, const union udp_addr *from,
                     const char *why)
{
    uint32_t n_suppressed = 0;
    char addr[32];

    (*counter)++;
    if (!log_ratelimit_allow(&a->rl, acc_now_ms(a), 20, 10, &n_suppressed)) {
        return;
    }
    if (n_suppressed) {
        log_msg(LOG_WARN, "%u similar messages suppressed", n_suppressed);
    }
    log_msg(LOG_WARN, "%s: dropped packet: %s", udp_addr_str(from, addr, sizeof(addr)), why);
}

/* ---- session table, keyed by the client's address ---- */

static size_t addr_hash(const union udp_addr *s, size_t size)
{
    uint8_t b[18];
    size_t n = udp_addr_bytes(s, b);
    uint64_t k = 0;

    for (size_t i = 0; i < n; i++) { /* FNV-1a, then a multiplicative mix */
        k = (k ^ b[i]) * 0x100000001B3ull;
    }
    k *= 0x9E3779B97F4A7C15ull;
    return (size_t)(k >> 32) & (size_t)(size - 1);
}

static struct ctl_session *table_find(struct acceptor *a, const union udp_addr *from)
{
    struct ctl_session *cs = a->table[addr_hash(from, a->table_size)];

    while (cs && (cs->is_dead || !udp_addr_equal(&cs->remote, from))) {
        cs = cs->hnext;
    }
    return cs;
}

/* The session at from whose client session id is sid, or NULL. A client that starts a new
 * session keeps its old one until the new one is authenticated, so an address can have two. */
static struct ctl_session *table_find_sid(struct acceptor *a, const union udp_addr *from,
                                          const uint8_t sid[SESSION_ID_LEN])
{
    struct ctl_session *cs = a->table[addr_hash(from, a->table_size)];

    while (cs && !acceptor_decide_session_is(&cs->remote, cs->peer_sid, cs->is_dead, from, sid)) {
        cs = cs->hnext;
    }
    return cs;
}

bool acc_same_client(const struct ctl_session *x, const struct ctl_session *y)
{
    /* the same certificate or none on both sides (all zero): another certificate with the same
     * common name is another device (duplicate-cn), as 2.6's cert_hash_compare tells */
    if (memcmp(x->cert_sha256, y->cert_sha256, sizeof(x->cert_sha256)) != 0) {
        return false;
    }
    if (x->has_cn != y->has_cn || (x->has_cn && strcmp(x->cn, y->cn) != 0)) {
        return false;
    }
    if (x->username == NULL || y->username == NULL) {
        return x->has_cn && x->username == y->username;
    }
    return strcmp(x->username, y->username) == 0 && (x->has_cn || x->username[0] != '\0');
}

size_t acc_close_others_at(struct acceptor *a, struct ctl_session *keep, bool only_pending,
                           struct peer **prev)
{
    size_t n = 0;

    for (struct ctl_session *cs = a->table[addr_hash(&keep->remote, a->table_size)]; cs;
         cs = cs->hnext) {
        if (cs == keep || cs->is_dead || cs->state == CS_CLOSING ||
            !udp_addr_equal(&cs->remote, &keep->remote) || (only_pending && cs->peer)) {
            continue;
        }
        if (cs->peer && !acc_same_client(cs, keep)) {
            acc_cs_log(a, keep, LOG_INFO,
                       "the session of another client (%s%s%.128s) at this address and port "
                       "stays",
                       cs->cn, cs->username ? ", username " : "", cs->username ? cs->username : "");
            continue;
        }
        acc_cs_log(a, cs, LOG_INFO,
                   only_pending ? "client started another session: dropping this unfinished one"
                                : "client restarted its session: dropping the old one");
        if (cs->peer) {
            if (cs->peer->pool_index < a->srv->pool.n &&
                a->addr_holder[cs->peer->pool_index] == cs->peer) {
                keep->takeover_index = cs->peer->pool_index;
            }
            if (prev && cs->is_peer_live && !cs->peer->is_slot_handed_over) {
                *prev = cs->peer;
            }
        }
        acc_cs_close(a, cs, 0);
        n += cs->peer != NULL;
    }
    return n;
}

static void table_insert(struct acceptor *a, struct ctl_session *cs)
{
    size_t h = addr_hash(&cs->remote, a->table_size);

    cs->hnext = a->table[h];
    a->table[h] = cs;
    a->n_sessions++;
}

static void table_unlink(struct acceptor *a, struct ctl_session *cs)
{
    struct ctl_session **pp = &a->table[addr_hash(&cs->remote, a->table_size)];

    while (*pp && *pp != cs) {
        pp = &(*pp)->hnext;
    }
    if (*pp) {
        *pp = cs->hnext;
        a->n_sessions--;
    }
}

/* ---- sending ---- */

static int send_control(struct acceptor *a, struct ctl_session *cs, uint8_t key_id, uint8_t opcode,
                        const struct control_acks *acks, uint32_t message_id,
                        const uint8_t *payload, size_t payload_len)
{
    struct control_packet pkt;
    uint8_t plain[CTL_BUF_LEN], wire[CTL_BUF_LEN];
    size_t plain_len, wire_len;
    int err;

    memset(&pkt, 0, sizeof(pkt));
    pkt.opcode = opcode;
    pkt.key_id = key_id;
    memcpy(pkt.session_id, cs->own_sid, SESSION_ID_LEN);
    pkt.acks = *acks;
    memcpy(pkt.acks.remote_session_id, cs->peer_sid, SESSION_ID_LEN);
    pkt.message_id = message_id;
    pkt.payload = payload;
    pkt.payload_len = payload_len;
    err = control_packet_write(&pkt, plain, sizeof(plain), &plain_len);
    err = err ? err
              : tls_wrap_seal(&a->wrap, cs->wrap_tx_id++, cs->wrap_tx_time, plain, plain_len, wire,
                              sizeof(wire), &wire_len);
    if (err) {
        acc_cs_log(a, cs, LOG_ERR, "cannot build control packet: %s", proto_strerror(err));
        return err;
    }
    if (sendto(a->fd, wire, wire_len, 0, &cs->remote.sa, udp_addr_len(&cs->remote)) < 0) {
        acc_cs_log(a, cs, LOG_DEBUG, "sendto: %s", strerror(errno));
    }
    return 0;
}

static size_t max_chunk(const struct acceptor *a)
{
    return TLS_MTU - IPV4_UDP_HDR - tls_wrap_overhead(&a->wrap) -
           control_packet_header_len(CONTROL_SEND_ACK_MAX, true);
}

/* Move pending TLS output of ks into reliable packets and send what is due, with ACKs. */
static void flush_ks(struct acceptor *a, struct ctl_session *cs, struct key_state *ks)
{
    uint64_t now = acc_now_ms(a);
    struct reliable_out *o;
    struct control_acks acks;
    const uint8_t *out;
    size_t out_len;

    for (;;) {
        size_t n;

        if (ks->job) {
            break; /* the running handshake step owns the TLS output */
        }
        out = tls_session_out_peek(ks->tls, &out_len);
        if (!out_len || !reliable_can_send(&ks->rel)) {
            break;
        }
        n = out_len < max_chunk(a) ? out_len : max_chunk(a);
        if (reliable_queue(&ks->rel, P_CONTROL_V1, out, n, now, NULL)) {
            break;
        }
        tls_session_out_consume(ks->tls, n);
    }
    while ((o = reliable_next_due(&ks->rel, now)) != NULL) {
        reliable_take_acks(&ks->rel, &acks, CONTROL_SEND_ACK_MAX);
        send_control(a, cs, ks->key_id, o->opcode, &acks, o->message_id, o->payload,
                     o->payload_len);
        reliable_sent(&ks->rel, o, now);
    }
    while (reliable_has_acks(&ks->rel)) {
        reliable_take_acks(&ks->rel, &acks, CONTROL_MAX_ACKS);
        send_control(a, cs, ks->key_id, P_ACK_V1, &acks, 0, NULL, 0);
    }
}

static void flush(struct acceptor *a, struct ctl_session *cs)
{
    for (int i = 0; i < 2; i++) {
        if (cs->ks[i].in_use) {
            flush_ks(a, cs, &cs->ks[i]);
        }
    }
}

struct key_state *acc_primary_ks(struct ctl_session *cs)
{
    return &cs->ks[cs->primary];
}

void acc_ks_clear(struct key_state *ks)
{
    acc_auth_abort(ks);
    if (ks->in_use) {
        reliable_clear(&ks->rel);
        acc_tls_release(ks);
        ks->in_use = false;
    }
}

static int ks_init(struct acceptor *a, struct key_state *ks, uint8_t key_id, uint32_t first_id)
{
    acc_ks_clear(ks);
    memset(ks, 0, sizeof(*ks));
    ks->tls = malloc(sizeof(*ks->tls));
    if (!ks->tls || tls_session_init(ks->tls, &a->tls)) {
        free(ks->tls);
        ks->tls = NULL;
        return -ENOMEM;
    }
    reliable_init(&ks->rel, first_id, first_id, (uint32_t)a->cfg->tls_timeout_s * 1000u);
    ks->key_id = key_id;
    ks->state = KS_TLS;
    ks->start_ms = acc_now_ms(a);
    ks->in_use = true;
    return 0;
}

/* One control-channel message: text plus its NUL, one TLS record (section 8.1). */
void acc_send_message(struct acceptor *a, struct ctl_session *cs, const char *text)
{
    acc_send_message_on(a, cs, acc_primary_ks(cs), text);
}

void acc_send_message_on(struct acceptor *a, struct ctl_session *cs, struct key_state *ks,
                         const char *text)
{
    size_t len = strlen(text) + 1;

    if (!ks->in_use || ks->job || !ks->tls->is_handshake_done) {
        acc_cs_log(a, cs, LOG_DEBUG, "no TLS session to send '%s' on", text);
        return;
    }
    if (tls_session_write(ks->tls, (const uint8_t *)text, len)) {
        acc_cs_log(a, cs, LOG_WARN, "cannot write control message");
        return;
    }
    acc_cs_log(a, cs, LOG_DEBUG, "SENT CONTROL: '%s'", text);
}

/* ---- session life ---- */

/* Tell every worker about one of p's routes (MSG_ROUTE_ADD / MSG_ROUTE_DEL). */
void acc_route_broadcast(struct acceptor *a, const struct peer *p, const struct vroute_key *key,
                         bool add)
{
    struct server *srv = a->srv;

    /* A client's own IPv6 address also goes into the TUN steering map (iroutes do not). */
    bool is_addr6 = key->family == 6 && key->plen == 128;

    if (add) {
        if (vroute_add(&a->routes, key, p->peer_id)) {
            log_msg(LOG_ERR, "out of memory for the route of peer %u", p->peer_id);
        }
        if (is_addr6 && tun_steer_set6(&srv->tun_steer, key->addr, (uint32_t)p->worker)) {
            log_msg(LOG_WARN, "peer %u: cannot add its IPv6 address to the TUN steering map",
                    p->peer_id);
        }
    } else {
        if (is_addr6 && vroute_get(&a->routes, key) == p->peer_id) {
            tun_steer_del6(&srv->tun_steer, key->addr);
        }
        vroute_del(&a->routes, key, p->peer_id);
    }
    for (int i = 0; i < srv->n_workers && !a->are_workers_stopped; i++) {
        struct msg *m = msg_new(add ? MSG_ROUTE_ADD : MSG_ROUTE_DEL, NULL, key, sizeof(*key));

        if (!m) {
            log_msg(LOG_ERR, "out of memory: worker %d misses a route of peer %u", i, p->peer_id);
            continue;
        }
        m->peer_id = p->peer_id;
        server_post_worker(srv, i, m);
    }
}

void acc_peer_slot_hand_over(struct acceptor *a, struct peer *prev, struct peer *p)
{
    for (size_t i = 0; i < prev->n_routes; i++) {
        acc_route_broadcast(a, prev, &prev->routes[i], false);
    }
    free(prev->routes);
    prev->routes = NULL;
    prev->n_routes = 0;
    prev->is_slot_handed_over = true;
    p->peer_id = prev->peer_id;
    p->worker = prev->worker;
}

static void release_peer_slot(struct acceptor *a, struct peer *p)
{
    struct server *srv = a->srv;
    size_t local = peer_id_local(p->peer_id, srv->n_workers);

    /* A client that reconnected with the same fixed address may hold it already. */
    if (p->pool_index < srv->pool.n && a->addr_holder[p->pool_index] == p) {
        a->addr_holder[p->pool_index] = NULL;
        atomic_store_explicit(&srv->addr_owner[p->pool_index], 0, memory_order_release);
        tun_steer_del(&srv->tun_steer, p->vaddr);
        ip_pool_release(&srv->pool, p->pool_index);
    } else if (p->pool_index == SIZE_MAX && p->vaddr != 0 && !p->is_slot_handed_over) {
        /* an ifconfig-push address outside the pool: routed as a /32 (acceptor_auth.c) */
        struct vroute_key key;
        uint32_t be = htonl(p->vaddr);

        vroute_key_make(&key, 4, (const uint8_t *)&be, 32);
        if (vroute_get(&a->routes, &key) == p->peer_id) {
            tun_steer_del(&srv->tun_steer, p->vaddr);
        }
    }
    for (size_t i = 0; i < p->n_routes; i++) {
        acc_route_broadcast(a, p, &p->routes[i], false);
    }
    free(p->routes);
    p->routes = NULL;
    p->n_routes = 0;
    if (!p->is_slot_handed_over) { /* else the peer-id is the next session's now */
        a->local_used[p->worker][local] = false;
        a->n_worker_peers[p->worker]--;
    }
    a->n_clients--;
}

static void free_peer(struct peer *p)
{
    data_key_clear(&p->key_store[0]);
    data_key_clear(&p->key_store[1]);
    free(p);
}

/* Mark cs for freeing; if its peer is live in a worker, ask the worker to drop it first. */
void acc_cs_close(struct acceptor *a, struct ctl_session *cs, uint64_t linger_ms)
{
    if (cs->state == CS_CLOSING) {
        return;
    }
    if (cs->is_connected || cs->n_learned > 0) {
        acc_client_gone(a, cs); /* client-disconnect, learn-address delete */
    }
    cs->state = CS_CLOSING;
    cs->close_at_ms = acc_now_ms(a) + linger_ms;
    if (cs->peer && cs->is_peer_live) {
        struct msg *m = msg_new(MSG_REMOVE, cs->peer, NULL, 0);

        if (m) {
            m->peer_id = cs->peer->peer_id;
            server_post_worker(a->srv, cs->peer->worker, m);
        }
    }
}

static void cs_free(struct acceptor *a, struct ctl_session *cs)
{
    table_unlink(a, cs);
    acc_ks_clear(&cs->ks[0]);
    acc_ks_clear(&cs->ks[1]);
    if (cs->ccd) {
        ccd_free(cs->ccd);
        free(cs->ccd);
    }
    free(cs->username);
    acc_hooks_session_free(cs);
    auth_token_session_wipe(&cs->at);
    heap_trim_session_ended(&a->heap_trim, acc_now_ms(a));
    if (cs->peer) {
        cs->peer->ctl = NULL;
        if (!cs->is_peer_live) {
            release_peer_slot(a, cs->peer);
            free_peer(cs->peer);
        }
        /* else: freed when the worker's MSG_GONE arrives */
    }
    free(cs);
}

/* connect-freq-initial: may one more client reset be answered now? Logs like 2.6 (mudp.c,
 * reflect_filter.c): once when a period starts refusing, and how many the last one refused. */
static bool initial_reset_allowed(struct acceptor *a)
{
    const struct config *cfg = a->cfg;
    int64_t now_s = (int64_t)(acc_now_ms(a) / 1000), n_dropped = 0;
    bool is_first_refusal = false;
    bool ok = connect_freq_initial_allow(&a->cf_initial, now_s, &is_first_refusal, &n_dropped);

    if (n_dropped > 0) {
        log_msg(LOG_INFO,
                "dropped %" PRId64 " initial handshake packets due to "
                "connect-freq-initial %d %d",
                n_dropped, cfg->connect_freq_initial_max, cfg->connect_freq_initial_per_s);
    }
    if (is_first_refusal) {
        log_msg(LOG_WARN,
                "connect-freq-initial %d %d rate limit exceeded, dropping initial "
                "handshake packets for the next %" PRId64 " seconds",
                cfg->connect_freq_initial_max, cfg->connect_freq_initial_per_s,
                connect_freq_initial_left_s(&a->cf_initial, now_s));
    }
    if (!ok) {
        a->stats.drop_connect_freq_initial++;
    }
    return ok;
}

/* Step 2 of the stateless handshake (section 3.5): answer a well-formed client reset
 * (acceptor_decide_control()), store nothing. */
static void answer_hard_reset(struct acceptor *a, const struct control_packet *pkt,
                              const union udp_addr *from)
{
    struct ctl_session tmp;
    struct control_acks acks = {.n_acks = 1};

    if (!initial_reset_allowed(a)) {
        return;
    }
    memset(&tmp, 0, sizeof(tmp));
    tmp.remote = *from;
    acceptor_decide_cookie_sid(
        a->cookie_key, from, pkt->session_id,
        acceptor_decide_cookie_slot((int64_t)time(NULL), a->cfg->hand_window_s), tmp.own_sid);
    memcpy(tmp.peer_sid, pkt->session_id, SESSION_ID_LEN);
    tmp.wrap_tx_id = 1;
    tmp.wrap_tx_time = (uint32_t)time(NULL);
    acks.message_id[0] = 0;
    send_control(a, &tmp, 0, P_CONTROL_HARD_RESET_SERVER_V2, &acks, 0, NULL, 0);
}

static struct ctl_session *session_create(struct acceptor *a, const struct control_packet *pkt,
                                          const union udp_addr *from)
{
    struct ctl_session *cs = calloc(1, sizeof(*cs));

    if (!cs) {
        return NULL;
    }
    cs->remote = *from;
    cs->takeover_index = SIZE_MAX;
    memcpy(cs->own_sid, pkt->acks.remote_session_id, SESSION_ID_LEN);
    memcpy(cs->peer_sid, pkt->session_id, SESSION_ID_LEN);
    cs->wrap_tx_id = 2; /* 1 went out with the stateless reset */
    cs->wrap_tx_time = (uint32_t)time(NULL);
    packet_id_rx_init(&cs->wrap_rx, 64);
    /* The stateless reset exchange used message id 0 in both directions. */
    if (ks_init(a, &cs->ks[0], 0, 1)) {
        free(cs);
        return NULL;
    }
    cs->state = CS_TLS;
    cs->created_ms = acc_now_ms(a);
    table_insert(a, cs);
    return cs;
}

/* ---- authentication, keys, push ---- */

static void handle_control_message(struct acceptor *a, struct ctl_session *cs, const char *msg)
{
    switch (control_msg_classify(msg, strlen(msg))) {
    case CONTROL_MSG_PUSH_REQUEST:
        if (cs->state != CS_ACTIVE || !cs->is_installed) {
            cs->is_push_requested = true;
        } else if (!cs->is_pushed || acc_now_ms(a) - cs->push_sent_ms >= PUSH_REPEAT_IGNORE_MS) {
            acc_send_push_reply(a, cs);
        }
        break;
    case CONTROL_MSG_EXIT:
        acc_cs_log(a, cs, LOG_INFO, "client sent EXIT (explicit-exit-notify)");
        acc_cs_close(a, cs, CLOSE_LINGER_MS);
        break;
    default:
        acc_cs_log(a, cs, LOG_DEBUG, "ignored control message '%.64s'", msg);
        break;
    }
}

void acc_reneg_failed(struct acceptor *a, struct ctl_session *cs, struct key_state *ks,
                      const char *why)
{
    acc_cs_log(a, cs, LOG_INFO,
               "renegotiation of key_id %u failed (%s): session closed (RESTART sent on key_id %u)",
               ks->key_id, why, acc_primary_ks(cs)->key_id);
    acc_ks_clear(ks);
    acc_send_message(a, cs, "RESTART");
    acc_cs_close(a, cs, CLOSE_LINGER_MS);
    flush(a, cs);
}

/* A negotiation or TLS session that failed (why: for the log). The first negotiation, or the
 * active key's TLS session (closed or broken by the peer), ends the whole session as in 2.6; so
 * does a renegotiation (acc_reneg_failed: unlike 2.6, which keeps the old key). */
static void ks_fail(struct acceptor *a, struct ctl_session *cs, struct key_state *ks,
                    const char *why)
{
    if ((ks->key_id == 0 && !cs->peer) || ks == acc_primary_ks(cs)) {
        acc_cs_close(a, cs, 0);
        return;
    }
    acc_reneg_failed(a, cs, ks, why);
}

/* Read what ks's finished TLS session decrypted: the key-method-2 message, then control
 * messages. */
static void read_tls_app_data(struct acceptor *a, struct ctl_session *cs, struct key_state *ks)
{
    int ret;

    for (;;) {
        size_t n;

        ret = tls_session_read(ks->tls, a->app_buf, sizeof(a->app_buf) - 1, &n);
        if (ret) {
            acc_cs_log(a, cs, LOG_INFO, "key_id %u: TLS session closed by the peer", ks->key_id);
            ks_fail(a, cs, ks, "TLS session closed by the peer");
            return;
        }
        if (n == 0) {
            return;
        }
        if (ks->state == KS_TLS && ks->auth_wait) {
            /* Nothing is expected while the credentials are checked. */
            acc_cs_log(a, cs, LOG_DEBUG, "data during authentication ignored");
            mbedtls_platform_zeroize(a->app_buf, n);
            continue;
        }
        if (ks->state == KS_TLS) {
            acc_handle_key_method2(a, cs, ks, a->app_buf, n);
            /* The key-method-2 message in clear: pre_master, password. */
            mbedtls_platform_zeroize(a->app_buf, n);
            if (!ks->in_use || cs->state == CS_CLOSING) {
                return;
            }
            continue;
        }
        /* NUL-separated text messages (section 8.1); ones with control characters are
         * dropped, as 2.6 does. */
        for (size_t off = 0; off < n;) {
            char msg[CONTROL_MSG_MAX];
            size_t consumed = 0, msg_len;

            if (control_msg_next(a->app_buf + off, n - off, &consumed, msg, sizeof(msg),
                                 &msg_len) == 0 &&
                msg_len > 0) {
                handle_control_message(a, cs, msg);
            }
            off += consumed ? consumed : n - off;
        }
        mbedtls_platform_zeroize(a->app_buf, n); /* e.g. a challenge response */
    }
}

void acc_tls_stepped(struct acceptor *a, struct ctl_session *cs, struct key_state *ks, int ret,
                     const char *err)
{
    if (cs->state == CS_CLOSING) {
        return;
    }
    if (ret == -PE_WANT_IO) {
        flush(a, cs);
        return;
    }
    if (ret) {
        a->stats.handshakes_failed++;
        if (ks->key_id == 0) {
            acc_cs_log(a, cs, LOG_WARN, "%s", err);
        } else {
            acc_cs_log(a, cs, LOG_WARN, "renegotiation (key_id %u): %s", ks->key_id, err);
        }
        flush_ks(a, cs, ks); /* deliver the TLS alert */
        ks_fail(a, cs, ks, "TLS handshake failed");
        return;
    }
    read_tls_app_data(a, cs, ks);
    if (cs->state != CS_CLOSING) {
        flush(a, cs);
    }
}

/* Run TLS on ks with what arrived: a handshake step (on the thread pool; acc_tls_stepped goes
 * on), or, once the handshake is done, read application data. */
static void drive_tls(struct acceptor *a, struct ctl_session *cs, struct key_state *ks)
{
    if (ks->job) {
        return; /* the running step's end looks at what arrived meanwhile */
    }
    if (!ks->tls->is_handshake_done) {
        acc_tls_step(a, cs, ks);
        return;
    }
    read_tls_app_data(a, cs, ks);
}

/* key_id after k: 1..7, wrapping to 1, never back to 0 (ssl.c key_state_init). */
static uint8_t next_key_id(uint8_t k)
{
    return (uint8_t)(k % 7 + 1);
}

/* tran-window: tell cs's worker to drop the old data key (no-op without one). Returns 0, or
 * -ENOMEM when the message cannot be made (has_old_key stays set; the key lives on until the
 * caller gets it retired or ends the session). */
static int retire_old_key(struct acceptor *a, struct ctl_session *cs)
{
    struct peer *p = cs->peer;
    struct msg *m;

    if (!cs->has_old_key) {
        return 0;
    }
    if (!p || !cs->is_peer_live || a->are_workers_stopped) {
        cs->has_old_key = false;
        return 0;
    }
    m = msg_new(MSG_KEY_RETIRE, p, &cs->old_key_id, 1);
    if (!m) {
        return -ENOMEM;
    }
    cs->has_old_key = false;
    m->peer_id = p->peer_id;
    server_post_worker(a->srv, p->worker, m);
    acc_cs_log(a, cs, LOG_DEBUG, "data channel key_id %u retired (tran-window)", cs->old_key_id);
    return 0;
}

/* Start a renegotiation with key_id in the slot that is not the primary one. We are the TLS
 * server either way: the peer's SOFT_RESET (or ours) is followed by its ClientHello. The key
 * this one replaces lives tran-window seconds from now (2.6 ssl.c key_state_soft_reset); the
 * one before it, if still there, goes now (2.6 drops its lame duck key at each soft reset). */
static struct key_state *start_renegotiation(struct acceptor *a, struct ctl_session *cs,
                                             uint8_t key_id, bool we_initiate)
{
    struct key_state *ks = &cs->ks[1 - cs->primary];

    if (ks_init(a, ks, key_id, 0)) {
        return NULL;
    }
    if (reliable_queue(&ks->rel, P_CONTROL_SOFT_RESET_V1, NULL, 0, acc_now_ms(a), NULL) ||
        retire_old_key(a, cs)) {
        acc_ks_clear(ks);
        return NULL;
    }
    cs->has_old_key = true;
    cs->old_key_id = acc_primary_ks(cs)->key_id;
    cs->old_key_expire_ms = acc_now_ms(a) + (uint64_t)a->cfg->tran_window_s * 1000;
    acc_cs_log(a, cs, LOG_INFO, "%s renegotiation of key_id %u",
               we_initiate ? "starting" : "client started", key_id);
    return ks;
}

static struct key_state *find_ks(struct ctl_session *cs, uint8_t key_id)
{
    for (int i = 0; i < 2; i++) {
        if (cs->ks[i].in_use && cs->ks[i].key_id == key_id) {
            return &cs->ks[i];
        }
    }
    return NULL;
}

static void process_session_packet(struct acceptor *a, struct ctl_session *cs,
                                   const struct control_packet *pkt)
{
    uint64_t now = acc_now_ms(a);
    struct key_state *ks = find_ks(cs, pkt->key_id);
    uint8_t *payload, *to_free;
    size_t len;
    int ret;

    if (pkt->acks.n_acks > 0 &&
        memcmp(pkt->acks.remote_session_id, cs->own_sid, SESSION_ID_LEN) != 0) {
        acc_cs_log(a, cs, LOG_DEBUG, "ACK for another session id: dropped");
        return;
    }
    if (!ks) {
        struct key_state *pri = acc_primary_ks(cs);

        /* Only a SOFT_RESET for exactly the next key_id opens a new key state (ssl.c:
         * "key IDs out of sync" otherwise). */
        if (pkt->opcode != P_CONTROL_SOFT_RESET_V1 || cs->state != CS_ACTIVE ||
            pri->state != KS_ACTIVE || pkt->key_id != next_key_id(pri->key_id)) {
            acc_cs_log(a, cs, LOG_DEBUG, "%s for key_id %u: no such key state, dropped",
                       packet_opcode_name(pkt->opcode), pkt->key_id);
            return;
        }
        ks = start_renegotiation(a, cs, pkt->key_id, false);
        if (!ks) {
            return;
        }
    }
    if (pkt->acks.n_acks > 0) {
        reliable_process_acks(&ks->rel, &pkt->acks, now);
    }
    if (pkt->has_message_id) {
        ret = reliable_receive(&ks->rel, pkt->message_id, pkt->payload, pkt->payload_len);
        if (ret < 0) {
            a->stats.drop_window++;
        }
    }
    while (reliable_pop(&ks->rel, &payload, &len, &to_free)) {
        if (cs->state != CS_CLOSING && len > 0 && acc_tls_feed(ks, payload, len)) {
            acc_cs_log(a, cs, LOG_WARN, "too much unread TLS data: closing");
            acc_cs_close(a, cs, 0);
        }
        free(to_free);
    }
    if (cs->state != CS_CLOSING && ks->in_use) {
        drive_tls(a, cs, ks);
    }
    flush(a, cs);
}

static void handle_datagram(struct acceptor *a, const uint8_t *buf, size_t len,
                            const union udp_addr *from)
{
    struct acceptor_control_facts facts = {0};
    enum acceptor_control verdict;
    struct control_packet pkt;
    struct ctl_session *cs;
    uint32_t wrap_id, wrap_time;
    size_t plain_len;
    struct msg *m;
    int err, worker = 0;

    switch (acceptor_decide_dgram(buf, len, a->srv->n_workers, &worker)) {
    case ACCEPTOR_DGRAM_DROP_EMPTY:
        drop_pkt(a, &a->stats.drop_short, from, "empty datagram");
        return;
    case ACCEPTOR_DGRAM_HAND_OVER:
        /* Steering missed (no cBPF): hand it to the owning worker. */
        m = msg_pool_take(&a->pool, MSG_PACKET, buf, len);
        if (!m) {
            drop_pkt(a, &a->stats.drop_handover, from,
                     "P_DATA_V2 not handed over: its worker is behind");
            return;
        }
        m->from = *from;
        server_post_worker(a->srv, worker, m);
        return;
    case ACCEPTOR_DGRAM_IGNORE:
        return;
    case ACCEPTOR_DGRAM_DROP_DATA_V1:
        drop_pkt(a, &a->stats.drop_malformed, from,
                 "P_DATA_V1 (clients without peer-id) is not supported");
        return;
    case ACCEPTOR_DGRAM_DROP_OPCODE:
        drop_pkt(a, &a->stats.drop_malformed, from, "unknown or unsupported opcode");
        return;
    case ACCEPTOR_DGRAM_CONTROL:
        break;
    }
    err = tls_wrap_open(&a->wrap, buf, len, a->plain_buf, sizeof(a->plain_buf), &plain_len,
                        &wrap_id, &wrap_time);
    if (err) {
        drop_pkt(a, &a->stats.drop_wrap, from,
                 err == -PE_AUTH ? "tls-auth/tls-crypt authentication failed (wrong key or "
                                   "key-direction?)"
                                 : proto_strerror(err));
        return;
    }
    err = control_packet_parse(a->plain_buf, plain_len, &pkt);
    if (err) {
        drop_pkt(a, &a->stats.drop_malformed, from, proto_strerror(err));
        return;
    }
    cs = table_find_sid(a, from, pkt.session_id);
    facts.pkt = &pkt;
    facts.session_wrap_rx = cs ? &cs->wrap_rx : NULL;
    facts.is_wrapped = a->wrap.mode != TLS_WRAP_NONE;
    facts.wrap_id = wrap_id;
    facts.is_stopping = a->is_stopping;
    facts.has_session_at_addr = table_find(a, from) != NULL;
    facts.n_sessions = a->n_sessions;
    facts.max_clients = (size_t)a->cfg->max_clients;
    verdict = acceptor_decide_control(&facts);
    if (verdict == ACCEPTOR_CONTROL_CHECK_COOKIE) { /* only for a packet that may start one */
        facts.cookie = acceptor_decide_cookie_valid(a->cookie_key, &pkt, from, (int64_t)time(NULL),
                                                    a->cfg->hand_window_s)
                           ? ACCEPTOR_COOKIE_VALID
                           : ACCEPTOR_COOKIE_INVALID;
        verdict = acceptor_decide_control(&facts);
    }
    switch (verdict) {
    case ACCEPTOR_CONTROL_SESSION:
        if (facts.is_wrapped) {
            packet_id_rx_commit(&cs->wrap_rx, wrap_id);
        }
        process_session_packet(a, cs, &pkt);
        return;
    case ACCEPTOR_CONTROL_DROP_REPLAY:
        a->stats.drop_replay++;
        return;
    case ACCEPTOR_CONTROL_ANSWER_RESET:
        answer_hard_reset(a, &pkt, from);
        return;
    case ACCEPTOR_CONTROL_DROP_BAD_RESET:
        drop_pkt(a, &a->stats.drop_malformed, from, "malformed P_CONTROL_HARD_RESET_CLIENT_V2");
        return;
    case ACCEPTOR_CONTROL_IGNORE:
        return;
    case ACCEPTOR_CONTROL_DROP_V3:
        drop_pkt(a, &a->stats.drop_malformed, from, "tls-crypt-v2 is not supported");
        return;
    case ACCEPTOR_CONTROL_DROP_NO_SESSION:
        drop_pkt(a, &a->stats.drop_no_session, from, "control packet for no known session");
        return;
    case ACCEPTOR_CONTROL_CHECK_COOKIE: /* not after a check */
        return;
    case ACCEPTOR_CONTROL_DROP_COOKIE:
        drop_pkt(a, &a->stats.drop_cookie, from, "session id cookie did not verify");
        return;
    case ACCEPTOR_CONTROL_DROP_MAX_CLIENTS:
        /* Like 2.6: say nothing, the client retries until a place is free. */
        drop_pkt(a, &a->stats.drop_no_session, from, "max-clients reached: connection ignored");
        return;
    case ACCEPTOR_CONTROL_CREATE:
        break;
    }
    /* connect-freq counts clients that completed the three-way handshake; those no longer
     * count against connect-freq-initial (mudp.c multi_get_create_instance_udp). */
    if (!connect_freq_allow(&a->cf, (int64_t)(acc_now_ms(a) / 1000))) {
        drop_pkt(a, &a->stats.drop_connect_freq, from,
                 "new connection would exceed the connect-freq limit");
        return;
    }
    connect_freq_initial_forgive(&a->cf_initial);
    cs = session_create(a, &pkt, from);
    if (!cs) {
        log_msg(LOG_ERR, "out of memory creating a session");
        return;
    }
    /* A new session from an address that has one: the client restarted, or someone replayed
     * or forged its packets (without tls-auth/tls-crypt anyone on the path can). Like 2.6's
     * untrusted session (ssl.c TM_UNTRUSTED), the authenticated session keeps working until
     * the new one is authenticated too (install_prepare drops it then); an unfinished one is
     * replaced at once. */
    acc_close_others_at(a, cs, true, NULL);
    packet_id_rx_commit(&cs->wrap_rx, wrap_id);
    process_session_packet(a, cs, &pkt);
}

static void on_udp(uv_poll_t *h, int status, int events)
{
    struct acceptor *a = h->data;

    (void)events;
    if (status < 0) {
        return;
    }
    for (int i = 0; i < 64; i++) {
        union udp_addr from;
        socklen_t flen = sizeof(from);
        ssize_t n = recvfrom(a->fd, a->rx_buf, sizeof(a->rx_buf), MSG_DONTWAIT,
                             (struct sockaddr *)&from, &flen);

        if (n < 0) {
            return;
        }
        handle_datagram(a, a->rx_buf, (size_t)n, &from);
    }
}

/* ---- timers, inbox, status ---- */

/* hand-window for negotiations in progress, and reneg-sec for the primary key. */
static void check_key_states(struct acceptor *a, struct ctl_session *cs, uint64_t now,
                             uint64_t hand_window_ms)
{
    bool is_negotiating = false;

    for (int i = 0; i < 2; i++) {
        struct key_state *ks = &cs->ks[i];

        if (!ks->in_use || ks->state != KS_TLS) {
            continue;
        }
        if (now - ks->start_ms > hand_window_ms && ks->auth_wait) {
            a->stats.handshakes_failed++;
            acc_auth_timeout(a, cs, ks);
            if (cs->state == CS_CLOSING) {
                return;
            }
            continue;
        }
        if (now - ks->start_ms > hand_window_ms) {
            a->stats.handshakes_failed++;
            if (cs->peer) {
                acc_cs_log(a, cs, LOG_WARN,
                           "renegotiation of key_id %u did not finish within %d seconds "
                           "(hand-window)",
                           ks->key_id, a->cfg->hand_window_s);
            } else {
                /* Half-open sessions can come in floods: one rate limit for all of them. */
                drop_pkt(a, &a->stats.drop_handshake_timeout, &cs->remote,
                         "TLS key negotiation did not finish within hand-window");
            }
            ks_fail(a, cs, ks, "hand-window");
            if (cs->state == CS_CLOSING) {
                return;
            }
            continue;
        }
        is_negotiating = true;
    }
    if (cs->state == CS_ACTIVE && cs->has_old_key && now >= cs->old_key_expire_ms &&
        retire_old_key(a, cs)) {
        acc_cs_log(a, cs, LOG_ERR, "out of memory: cannot retire an old data key; session closed");
        acc_cs_close(a, cs, 0);
        return;
    }
    if (cs->state == CS_ACTIVE && !is_negotiating && now >= cs->next_reneg_ms) {
        cs->next_reneg_ms = UINT64_MAX; /* set again when this renegotiation completes */
        if (!start_renegotiation(a, cs, next_key_id(acc_primary_ks(cs)->key_id), true)) {
            /* never renegotiated, the client would never be checked again */
            acc_cs_log(a, cs, LOG_ERR, "cannot start a renegotiation; session closed");
            acc_cs_close(a, cs, 0);
        }
    }
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

static void on_tick(uv_timer_t *t)
{
    struct acceptor *a = t->data;
    uint64_t now = acc_now_ms(a);
    uint64_t hand_window_ms = (uint64_t)a->cfg->hand_window_s * 1000;

    auth_tick(a->auth);
    crl_watch_tick(&a->crl, &a->tls, &a->tls_conf_lock, now);
    for (size_t i = 0; i < a->table_size; i++) {
        struct ctl_session *cs = a->table[i], *next;

        for (; cs; cs = next) {
            next = cs->hnext;
            if (cs->is_dead ||
                (cs->state == CS_CLOSING && now >= cs->close_at_ms && !cs->is_peer_live)) {
                cs_free(a, cs);
                continue;
            }
            if (cs->state != CS_CLOSING) {
                check_key_states(a, cs, now, hand_window_ms);
            }
            if (cs->state == CS_ACTIVE) {
                acc_token_tick(a, cs, now);
            }
            if (cs->state != CS_CLOSING || now < cs->close_at_ms) {
                flush(a, cs);
            }
        }
    }
    trim_heap(a, now);
}

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

static void write_status(struct acceptor *a)
{
    struct status_worker workers[TUN_MAX_QUEUES];
    struct status_client *rows;
    size_t n = 0;
    int err;

    if (!a->cfg->status_file) {
        return;
    }
    rows = calloc(a->n_clients + 1, sizeof(*rows));
    if (!rows) {
        return;
    }
    for (size_t i = 0; i < a->table_size; i++) {
        for (struct ctl_session *cs = a->table[i]; cs; cs = cs->hnext) {
            struct peer *p = cs->peer;
            struct status_client *r;

            if (cs->state != CS_ACTIVE || !p || n >= a->n_clients) {
                continue;
            }
            r = &rows[n++];
            snprintf(r->common_name, sizeof(r->common_name), "%s", p->common_name);
            /* As 2.6 tls_username: the username the check accepted, UNDEF without one. */
            snprintf(r->username, sizeof(r->username), "%s", cs->username ? cs->username : "");
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
            r->client_id = p->peer_id;
            r->peer_id = p->peer_id;
            snprintf(r->cipher, sizeof(r->cipher), "%s", p->cipher);
        }
    }
    for (int i = 0; i < a->srv->n_workers && i < TUN_MAX_QUEUES; i++) {
        const struct worker_stats *s = &a->srv->workers[i].stats;

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
    if (a->status_fd >= 0) {
        err = status_rewrite_fd(a->status_fd, a->cfg->status_version, rows, n, workers,
                                (size_t)a->srv->n_workers);
    } else {
        err = status_write(a->cfg->status_file, a->cfg->status_version, "ovpnd " OVPND_VERSION,
                           time(NULL), rows, n, workers, (size_t)a->srv->n_workers);
    }
    if (err) {
        log_msg(LOG_WARN, "cannot write status file %s: %s", a->cfg->status_file, strerror(-err));
    }
    free(rows);
}

static void on_status_timer(uv_timer_t *t)
{
    write_status(t->data);
}

/* ifconfig-pool-persist: the pool's common names to the file (every SECONDS and at the end, as
 * openvpn's multi_ifconfig_pool_persist). A small file, written on this thread like the status
 * file; workers never wait for it. */
static void write_pool_persist(struct acceptor *a)
{
    struct server *srv = a->srv;
    int err = pool_persist_write(&srv->pool, a->cfg->ifconfig_pool_persist, srv->persist_fd);

    if (err) {
        log_msg(LOG_WARN, "ifconfig-pool-persist: cannot write %s: %s",
                a->cfg->ifconfig_pool_persist, strerror(-err));
    }
}

static void on_persist_timer(uv_timer_t *t)
{
    write_pool_persist(t->data);
}

static void handle_gone(struct acceptor *a, struct peer *p, enum gone_reason reason)
{
    struct ctl_session *cs = p->ctl;

    if (!cs) {
        /* The control session already went: free what remains. */
        release_peer_slot(a, p);
        free_peer(p);
        return;
    }
    cs->is_peer_live = false;
    if (reason == GONE_PING_TIMEOUT || reason == GONE_EXIT) {
        acc_cs_log(a, cs, LOG_INFO, "client disconnected (%s)",
                   reason == GONE_EXIT ? "explicit exit notify" : "ping-restart timeout");
        acc_cs_close(a, cs, reason == GONE_EXIT ? CLOSE_LINGER_MS : 0);
    }
    /* The address and peer-id are free once the session itself goes (cs_free). */
}

/* The worker now routes the peer's packets: push its options (at once if the client set
 * IV_PROTO_REQUEST_PUSH, else when its PUSH_REQUEST came or comes). */
static void handle_installed(struct acceptor *a, struct peer *p)
{
    struct ctl_session *cs = p->ctl;

    if (!cs || cs->state != CS_ACTIVE) {
        return;
    }
    cs->is_installed = true;
    if (cs->pi.iv_proto & IV_PROTO_REQUEST_PUSH || cs->is_push_requested) {
        acc_send_push_reply(a, cs);
        flush(a, cs);
    }
}

/* Whether o authenticated as the same client as cs: both with a certificate, the same one
 * (openvpn 2.6 compares the certificate hashes, cert_hash_compare), and the same common name. */
static bool is_same_client(const struct ctl_session *cs, const struct ctl_session *o)
{
    static const uint8_t none[sizeof(cs->cert_sha256)];

    return o->peer && memcmp(cs->cert_sha256, none, sizeof(none)) != 0 &&
           memcmp(cs->cert_sha256, o->cert_sha256, sizeof(none)) == 0 && strcmp(cs->cn, o->cn) == 0;
}

/* The live sessions other than cs at address `to` (one in its handshake included: it too is
 * another client until it says otherwise): how many (*n_other), how many of them are cs's client
 * (*n_same, is_same_client), and the first that is not, or NULL. A closing session no longer
 * counts: its peer is being removed from its worker. An address can hold several (a restarted
 * client's old and new session, another client's behind the same address and port). */
static struct ctl_session *sessions_at(struct acceptor *a, const union udp_addr *to,
                                       const struct ctl_session *cs, size_t *n_other,
                                       size_t *n_same)
{
    struct ctl_session *stranger = NULL;

    *n_other = *n_same = 0;
    for (struct ctl_session *o = a->table[addr_hash(to, a->table_size)]; o; o = o->hnext) {
        if (o == cs || o->is_dead || o->state == CS_CLOSING || !udp_addr_equal(&o->remote, to)) {
            continue;
        }
        (*n_other)++;
        if (is_same_client(cs, o)) {
            (*n_same)++;
        } else if (!stranger) {
            stranger = o;
        }
    }
    return stranger;
}

/* A worker saw p's authenticated data come from `to`, an address its session is not at, and asks
 * whether it may float there. As openvpn 2.6 (multi.c multi_process_float): not onto an address
 * another client's session uses (the datagram may be a copy of the client's, sent by someone on
 * its path from that client's address to take its traffic); sessions of the same client there
 * (its earlier ones, left behind by a restart) are closed and the float goes ahead. Unlike 2.6,
 * sessions without a client certificate are never taken for the same client. The answer goes
 * back to the worker (MSG_FLOAT_OK: the control session has moved too; MSG_FLOAT_NO). The
 * first refusal of a session is logged, the worker counts the datagrams it drops. */
static void handle_float(struct acceptor *a, struct peer *p, const union udp_addr *to)
{
    struct ctl_session *cs = p->ctl, *stranger = NULL;
    bool is_live = cs && cs->state == CS_ACTIVE && cs->peer == p, is_ok = false;
    size_t n_other = 0, n_same = 0;
    struct msg *m;
    char addr[64];

    if (is_live) {
        stranger = sessions_at(a, to, cs, &n_other, &n_same);
    }
    switch (acceptor_decide_float(is_live, n_other, n_same)) {
    case ACCEPTOR_FLOAT_OK:
        is_ok = true;
        break;
    case ACCEPTOR_FLOAT_OK_CLOSE_OTHER:
        for (struct ctl_session *o = a->table[addr_hash(to, a->table_size)]; o; o = o->hnext) {
            if (o != cs && !o->is_dead && o->state != CS_CLOSING &&
                udp_addr_equal(&o->remote, to)) {
                acc_cs_log(a, o, LOG_INFO,
                           "the same client floated here from its session at %s: closing this "
                           "one",
                           udp_addr_str(&cs->remote, addr, sizeof(addr)));
                acc_cs_close(a, o, 0);
            }
        }
        is_ok = true;
        break;
    case ACCEPTOR_FLOAT_NO:
        if (stranger && !cs->is_float_refusal_logged) {
            cs->is_float_refusal_logged = true;
            acc_cs_log(a, cs, LOG_WARN,
                       "float to %s refused: the address is another client's (%s); datagrams "
                       "from there are dropped (said once)",
                       udp_addr_str(to, addr, sizeof(addr)), stranger->cn[0] ? stranger->cn : "?");
        }
        break;
    }
    if (is_ok && !udp_addr_equal(&cs->remote, to)) {
        table_unlink(a, cs);
        cs->remote = *to;
        table_insert(a, cs);
    }
    m = msg_new(is_ok ? MSG_FLOAT_OK : MSG_FLOAT_NO, p, NULL, 0);
    if (m) {
        m->peer_id = p->peer_id;
        m->from = *to;
        server_post_worker(a->srv, p->worker, m);
    }
}

static void stop_everything(struct acceptor *a)
{
    /* Running scripts are killed; the loop ends once their exits are seen. */
    for (size_t i = 0; i < a->table_size; i++) {
        for (struct ctl_session *cs = a->table[i]; cs; cs = cs->hnext) {
            acc_auth_abort(&cs->ks[0]);
            acc_auth_abort(&cs->ks[1]);
            if (cs->state != CS_CLOSING && (cs->is_connected || cs->n_learned > 0)) {
                acc_client_gone(a, cs);
            }
        }
    }
    auth_shutdown(a->auth);
    /* client-disconnect scripts started just now get a few seconds (then they are killed). */
    hooks_shutdown(a->hooks, HOOKS_SHUTDOWN_GRACE_MS);
    uv_poll_stop(&a->poll);
    uv_timer_stop(&a->tick);
    uv_timer_stop(&a->status_timer);
    uv_timer_stop(&a->persist_timer);
    uv_close((uv_handle_t *)&a->poll, NULL);
    uv_close((uv_handle_t *)&a->tick, NULL);
    uv_close((uv_handle_t *)&a->status_timer, NULL);
    uv_close((uv_handle_t *)&a->persist_timer, NULL);
    uv_close((uv_handle_t *)&a->async, NULL);
}

/* explicit-exit-notify on a server: tell every client to reconnect (2.6 sends "RESTART", or
 * "RESTART,[N]" to make clients try their next remote, when it shuts down). */
static void say_goodbye(struct acceptor *a)
{
    a->is_stopping = true;
    if (a->cfg->explicit_exit_notify <= 0) {
        return;
    }
    for (size_t i = 0; i < a->table_size; i++) {
        for (struct ctl_session *cs = a->table[i]; cs; cs = cs->hnext) {
            if (cs->state == CS_ACTIVE) {
                acc_send_message(a, cs,
                                 a->cfg->explicit_exit_notify >= 2 ? "RESTART,[N]" : "RESTART");
                flush(a, cs);
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
            ", hand-over to a worker behind %" PRIu64,
            a->n_clients, a->n_sessions, s->handshakes_ok, s->handshakes_failed, s->auth_failed,
            s->drop_short, s->drop_wrap, s->drop_replay, s->drop_malformed, s->drop_cookie,
            s->drop_no_session, s->drop_window, s->drop_handshake_timeout, s->drop_connect_freq,
            s->drop_connect_freq_initial, s->drop_handover);
}

static void on_async(uv_async_t *h)
{
    struct acceptor *a = h->data;
    struct msgq_node *n;

    while ((n = msgq_pop(&a->inbox)) != NULL) {
        struct msg *m = (struct msg *)n;

        switch (m->type) {
        case MSG_GONE:
            handle_gone(a, m->peer, m->reason);
            break;
        case MSG_INSTALLED:
            handle_installed(a, m->peer);
            break;
        case MSG_RENEGOTIATE:
            if (m->peer->ctl && m->peer->ctl->state == CS_ACTIVE) {
                m->peer->ctl->next_reneg_ms = 0; /* at the next tick, unless one is running */
            }
            break;
        case MSG_FLOAT:
            handle_float(a, m->peer, &m->from);
            break;
        case MSG_PACKET:
            handle_datagram(a, m->data, m->len, &m->from);
            break;
        case MSG_STATS:
            log_stats(a);
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
    o.tun_mtu = a->cfg->tun_mtu;
    o.is_server = true;
    o.tls_auth = a->cfg->tls_wrap_mode == TLS_WRAP_AUTH;
    o.keydir = o.tls_auth ? a->cfg->key_direction : -1;
    o.auth = a->cfg->auth;
    o.cipher = a->cfg->cipher ? a->cfg->cipher : a->cfg->data_ciphers_fallback;
    o.cipher_in_data_ciphers = o.cipher != NULL;
    if (occ_options_string(&o, a->options_string, sizeof(a->options_string))) {
        snprintf(a->options_string, sizeof(a->options_string),
                 "V4,dev-type tun,link-mtu 1549,tun-mtu %d,proto UDPv4,auth [null-digest],"
                 "keysize 256,key-method 2,tls-server",
                 a->cfg->tun_mtu);
    }
}

static void release(struct acceptor *a);

int acceptor_new(struct server *srv, struct acceptor **out, char *errbuf, size_t errbuf_len)
{
    struct acceptor *a = calloc(1, sizeof(*a));
    struct config *cfg = srv->cfg;
    static const char pers[] = "ovpnd acceptor";
    uint8_t key2[STATIC_KEY_LEN];
    int err;

    if (!a) {
        return -ENOMEM;
    }
    a->srv = srv;
    a->cfg = cfg;
    a->fd = srv->udp_fds[0];
    a->status_fd = -1;
    if (cfg->status_file && (cfg->user || cfg->group)) {
        /* (as root: not through a symbolic link someone left there) */
        a->status_fd = open(cfg->status_file, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (a->status_fd < 0) {
            err = -errno;
            snprintf(errbuf, errbuf_len, "status: cannot open %s: %s", cfg->status_file,
                     strerror(-err));
            free(a);
            return err;
        }
    }
    msgq_init(&a->inbox);
    if (msg_pool_init(&a->pool, ACCEPTOR_POOL_MSGS, CTL_BUF_LEN)) {
        return -ENOMEM;
    }
    mbedtls_entropy_init(&a->entropy);
    mbedtls_ctr_drbg_init(&a->drbg);
    if (mbedtls_ctr_drbg_seed(&a->drbg, mbedtls_entropy_func, &a->entropy,
                              (const unsigned char *)pers, sizeof(pers) - 1) ||
        mbedtls_ctr_drbg_random(&a->drbg, a->cookie_key, sizeof(a->cookie_key))) {
        snprintf(errbuf, errbuf_len, "cannot seed the random generator");
        return -EIO;
    }
    {
        pthread_rwlockattr_t attr;

        pthread_rwlockattr_init(&attr);
        pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
        err = -pthread_rwlock_init(&a->tls_conf_lock, &attr);
        pthread_rwlockattr_destroy(&attr);
        if (err) {
            snprintf(errbuf, errbuf_len, "cannot create the TLS configuration lock");
            return err;
        }
        a->has_tls_conf_lock = true;
    }
    err = tls_server_conf_init(&a->tls, (const uint8_t *)cfg->ca.data, cfg->ca.len + 1,
                               (const uint8_t *)cfg->cert.data, cfg->cert.len + 1,
                               (const uint8_t *)cfg->key.data, cfg->key.len + 1,
                               (enum tls_verify_client)cfg->verify_client_cert,
                               mbedtls_ctr_drbg_random, &a->drbg, errbuf, errbuf_len);
    if (err) {
        return err;
    }
    if (cfg->tls_groups) {
        char bad[80];

        err = tls_server_conf_set_groups(&a->tls, cfg->tls_groups, bad, sizeof(bad));
        if (err) {
            snprintf(errbuf, errbuf_len, "tls-groups: unknown group '%s'", bad);
            return err;
        }
    }
    if (cfg->tls_cert_profile) {
        tls_server_conf_set_cert_profile(&a->tls, tls_cert_profile_by_name(cfg->tls_cert_profile));
    }
    if (cfg->tls_cipher) {
        err = tls_server_conf_set_ciphers(&a->tls, cfg->tls_cipher);
        if (err) {
            snprintf(errbuf, errbuf_len, "tls-cipher: no usable cipher suite");
            return err;
        }
    }
    err = crl_watch_init(&a->crl, cfg, &a->tls, errbuf, errbuf_len);
    if (err) {
        return err;
    }
    err = acc_token_init(a);
    if (err) {
        snprintf(errbuf, errbuf_len, "auth-gen-token: cannot make a random secret");
        return err;
    }
    if (cfg->tls_wrap_mode != TLS_WRAP_NONE) {
        err = static_key_parse(cfg->tls_wrap_key.data, cfg->tls_wrap_key.len, key2);
        if (err) {
            snprintf(errbuf, errbuf_len, "%s: not an OpenVPN static key file",
                     cfg->tls_wrap_key.origin ? cfg->tls_wrap_key.origin : "tls key");
            return err;
        }
    } else {
        memset(key2, 0, sizeof(key2));
    }
    err = tls_wrap_init(&a->wrap, (enum tls_wrap_mode)cfg->tls_wrap_mode, key2, cfg->key_direction,
                        cfg->auth, true);
    mbedtls_platform_zeroize(key2, sizeof(key2));
    if (err) {
        snprintf(errbuf, errbuf_len, "tls-auth/tls-crypt setup failed: %s", proto_strerror(err));
        return err;
    }
    build_options_string(a);
    connect_freq_init(&a->cf, cfg->connect_freq_max, cfg->connect_freq_per_s);
    connect_freq_initial_init(&a->cf_initial, cfg->connect_freq_initial_max,
                              cfg->connect_freq_initial_per_s);
    a->table_size = 1024;
    while (a->table_size < (size_t)cfg->max_clients * 2) {
        a->table_size *= 2;
    }
    a->table = calloc(a->table_size, sizeof(*a->table));
    a->local_used = calloc((size_t)srv->n_workers, sizeof(*a->local_used));
    a->n_worker_peers = calloc((size_t)srv->n_workers, sizeof(*a->n_worker_peers));
    a->addr_holder = calloc(srv->n_addr_owner, sizeof(*a->addr_holder));
    vroute_table_init(&a->routes);
    if (!a->table || !a->local_used || !a->n_worker_peers || !a->addr_holder) {
        return -ENOMEM;
    }
    for (int i = 0; i < srv->n_workers; i++) {
        a->local_used[i] = calloc(srv->max_local_peers, sizeof(bool));
        if (!a->local_used[i]) {
            return -ENOMEM;
        }
    }
    err = uv_loop_init(&a->loop);
    if (err) {
        return err;
    }
    /* Plugins are opened here: on the main thread, before privileges are dropped. */
    err = auth_new(&a->loop, cfg, &a->auth, errbuf, errbuf_len);
    if (err) {
        /* (a refused config, such as a plugin that does not load: nothing is on the loop yet) */
        uv_loop_close(&a->loop);
        release(a);
        return err;
    }
    err = hooks_new(&a->loop, auth_plugins(a->auth), &a->hooks);
    if (err) {
        snprintf(errbuf, errbuf_len, "hooks: %s", uv_strerror(err));
        return err;
    }
    {
        struct hook_server hs;

        memset(&hs, 0, sizeof(hs));
        hs.dev = srv->tun.name;
        hs.tun_mtu = cfg->tun_mtu;
        hs.local = srv->plan.local;
        hs.remote_netmask = srv->plan.remote_netmask;
        hs.is_p2p = srv->plan.topology != CONFIG_TOPOLOGY_SUBNET;
        hs.has_ipv6 = srv->has_ipv6;
        memcpy(hs.local6, srv->server_addr6, 16);
        hs.ipv6_bits = srv->ipv6_bits;
        hs.port = cfg->port;
        hs.start_time = time(NULL);
        hs.pid = (long)getpid();
        err = hook_env_global(&a->global_env, cfg, &hs);
        if (err) {
            snprintf(errbuf, errbuf_len, "script environment: %s", strerror(-err));
            return err;
        }
        auth_set_global_env(a->auth, &a->global_env);
    }
    err = uv_async_init(&a->loop, &a->async, on_async);
    err = err ? err : uv_poll_init(&a->loop, &a->poll, a->fd);
    err = err ? err : uv_timer_init(&a->loop, &a->tick);
    err = err ? err : uv_timer_init(&a->loop, &a->status_timer);
    err = err ? err : uv_timer_init(&a->loop, &a->persist_timer);
    if (err) {
        return err;
    }
    a->async.data = a->poll.data = a->tick.data = a->status_timer.data = a;
    a->persist_timer.data = a;
    err = uv_poll_start(&a->poll, UV_READABLE, on_udp);
    heap_trim_init(&a->heap_trim, acc_now_ms(a), heap_trim_rss_kb());
    err = err ? err : uv_timer_start(&a->tick, on_tick, ACCEPTOR_TICK_MS, ACCEPTOR_TICK_MS);
    if (!err && cfg->status_file) {
        uint64_t ms = (uint64_t)(cfg->status_interval_s > 0 ? cfg->status_interval_s : 60) * 1000;

        err = uv_timer_start(&a->status_timer, on_status_timer, 0, ms);
    }
    if (!err && srv->is_pool_persisted) {
        uint64_t ms = (uint64_t)cfg->ifconfig_pool_persist_s * 1000;

        err = uv_timer_start(&a->persist_timer, on_persist_timer, ms, ms);
    }
    *out = a;
    return err;
}

static void acceptor_main(void *arg)
{
    struct acceptor *a = arg;

    pthread_setname_np(pthread_self(), "ovpnd-acceptor"); /* for top -H, ps -L, debuggers */
    uv_run(&a->loop, UV_RUN_DEFAULT);
}

int acceptor_start(struct acceptor *a)
{
    return uv_thread_create(&a->thread, acceptor_main, a);
}

void acceptor_post(struct acceptor *a, struct msg *m)
{
    msgq_push(&a->inbox, &m->node);
    uv_async_send(&a->async);
}

void acceptor_stop(struct acceptor *a)
{
    struct msg *m = msg_new(MSG_STOP, NULL, NULL, 0);

    if (m) {
        acceptor_post(a, m);
    }
    uv_thread_join(&a->thread);
}

void acceptor_free(struct acceptor *a)
{
    struct msgq_node *n;

    a->are_workers_stopped = true;
    while ((n = msgq_pop(&a->inbox)) != NULL) {
        /* late MSG_GONE reports: their peers are freed with their sessions below */
        msg_free((struct msg *)n);
    }
    uv_loop_close(&a->loop);
    for (size_t i = 0; i < a->table_size; i++) {
        struct ctl_session *cs = a->table[i], *next;

        for (; cs; cs = next) {
            next = cs->hnext;
            cs->is_peer_live = false; /* workers are stopped by now */
            cs_free(a, cs);
        }
    }
    if (a->cfg->status_file) {
        write_status(a);
    }
    if (a->srv->is_pool_persisted) {
        write_pool_persist(a);
    }
    release(a);
}

/* What acceptor_free releases once the loop is closed and the sessions are gone; also for an
 * acceptor_new that failed once everything up to the loop was made. */
static void release(struct acceptor *a)
{
    if (a->status_fd >= 0) {
        close(a->status_fd);
    }
    auth_free(a->auth); /* joins the plugin threads */
    hooks_free(a->hooks);
    script_env_clear(&a->global_env);
    tls_wrap_wipe(&a->wrap);
    tls_server_conf_clear(&a->tls);
    auth_token_ctx_wipe(&a->token);
    if (a->has_tls_conf_lock) {
        pthread_rwlock_destroy(&a->tls_conf_lock);
    }
    mbedtls_ctr_drbg_free(&a->drbg);
    mbedtls_entropy_free(&a->entropy);
    for (int i = 0; a->local_used && i < a->srv->n_workers; i++) {
        free(a->local_used[i]);
    }
    free(a->local_used);
    free(a->n_worker_peers);
    free(a->addr_holder);
    vroute_table_free(&a->routes);
    free(a->table);
    /* every worker is joined and its inbox drained: no message of the pool is left in use */
    msg_pool_clear(&a->pool);
    free(a);
}
