/* server/control/session.c: the acceptor's sessions: the table keyed by the client's address,
 * creating, closing and freeing a session, its key states, and sending its control packets
 * (reliability, ACKs, control-channel messages). Acceptor thread only. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "proto/errors.h"
#include "proto/packet.h"
#include "proto/packet_id.h"
#include "proto/reliable.h"
#include "proto/tls_session.h"
#include "proto/tls_wrap.h"
#include "server/control/acceptor_decide.h"
#include "server/control/admission_decide.h"
#include "server/data/peer.h"
#include "server/data/tcp.h"
#include "server/hooks/plugin.h"

#include "server/control/acceptor_internal.h"

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
    log_msg(lvl, "%s%s%s%s: %s", cs->client.cn[0] ? cs->client.cn : "", cs->client.cn[0] ? "/" : "",
            udp_addr_str(&cs->remote, addr, sizeof(addr)),
            n_suppressed ? " (earlier messages suppressed)" : "", text);
}

size_t acc_addr_hash(const union udp_addr *s, size_t size)
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

struct ctl_session *acc_table_find(struct acceptor *a, const union udp_addr *from, uint64_t link)
{
    struct ctl_session *cs = a->sessions.table[acc_addr_hash(from, a->sessions.table_size)];

    while (cs && (cs->is_dead || cs->link != link || !udp_addr_equal(&cs->remote, from))) {
        cs = cs->hnext;
    }
    return cs;
}

struct ctl_session *acc_table_find_sid(struct acceptor *a, const union udp_addr *from,
                                       uint64_t link, const uint8_t sid[SESSION_ID_LEN])
{
    struct ctl_session *cs = a->sessions.table[acc_addr_hash(from, a->sessions.table_size)];

    while (cs && (cs->link != link ||
                  !acceptor_decide_session_is(&cs->remote, cs->peer_sid, cs->is_dead, from, sid))) {
        cs = cs->hnext;
    }
    return cs;
}

bool acc_same_client(const struct ctl_session *x, const struct ctl_session *y)
{
    /* the same certificate or none on both sides (all zero): another certificate with the same
     * common name is another device (duplicate-cn), as 2.6's cert_hash_compare tells */
    if (memcmp(x->client.cert_sha256, y->client.cert_sha256, sizeof(x->client.cert_sha256)) != 0) {
        return false;
    }
    if (x->client.has_cn != y->client.has_cn ||
        (x->client.has_cn && strcmp(x->client.cn, y->client.cn) != 0)) {
        return false;
    }
    if (x->client.username == NULL || y->client.username == NULL) {
        return x->client.has_cn && x->client.username == y->client.username;
    }
    return strcmp(x->client.username, y->client.username) == 0 &&
           (x->client.has_cn || x->client.username[0] != '\0');
}

size_t acc_close_others_at(struct acceptor *a, struct ctl_session *keep, bool only_pending,
                           struct peer **prev)
{
    size_t n = 0;

    for (struct ctl_session *cs =
             a->sessions.table[acc_addr_hash(&keep->remote, a->sessions.table_size)];
         cs; cs = cs->hnext) {
        if (cs == keep || cs->is_dead || cs->state == CS_CLOSING || cs->link != keep->link ||
            !udp_addr_equal(&cs->remote, &keep->remote) || (only_pending && cs->peer)) {
            continue;
        }
        if (cs->peer && !acc_same_client(cs, keep)) {
            acc_cs_log(a, keep, LOG_INFO,
                       "the session of another client (%s%s%.128s) at this address and port "
                       "stays",
                       cs->client.cn, cs->client.username ? ", username " : "",
                       cs->client.username ? cs->client.username : "");
            continue;
        }
        acc_cs_log(a, cs, LOG_INFO,
                   only_pending ? "client started another session: dropping this unfinished one"
                                : "client restarted its session: dropping the old one");
        if (cs->peer) {
            if (routes_holder(a->env->routes, cs->peer->pool_index) == cs->peer) {
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

void acc_table_insert(struct acceptor *a, struct ctl_session *cs)
{
    size_t h = acc_addr_hash(&cs->remote, a->sessions.table_size);

    cs->hnext = a->sessions.table[h];
    a->sessions.table[h] = cs;
    a->sessions.n_sessions++;
}

size_t acc_cn_hash(const char *cn, size_t size)
{
    uint64_t k = 0xCBF29CE484222325ull;

    for (const unsigned char *c = (const unsigned char *)cn; *c; c++) { /* FNV-1a */
        k = (k ^ *c) * 0x100000001B3ull;
    }
    k *= 0x9E3779B97F4A7C15ull;
    return (size_t)(k >> 32) & (size_t)(size - 1);
}

void acc_cn_index_add(struct acceptor *a, struct ctl_session *cs)
{
    size_t h;

    if (cs->cn_pprev || !cs->client.has_cn) {
        return;
    }
    h = acc_cn_hash(cs->client.cn, a->sessions.table_size);
    cs->cn_next = a->sessions.by_cn[h];
    if (cs->cn_next) {
        cs->cn_next->cn_pprev = &cs->cn_next;
    }
    a->sessions.by_cn[h] = cs;
    cs->cn_pprev = &a->sessions.by_cn[h];
}

static void cn_index_unlink(struct ctl_session *cs)
{
    if (!cs->cn_pprev) {
        return;
    }
    *cs->cn_pprev = cs->cn_next;
    if (cs->cn_next) {
        cs->cn_next->cn_pprev = cs->cn_pprev;
    }
    cs->cn_next = NULL;
    cs->cn_pprev = NULL;
}

void acc_cn_rename(struct acceptor *a, struct ctl_session *cs, const char *cn)
{
    bool was_indexed = cs->cn_pprev != NULL;

    cn_index_unlink(cs);
    snprintf(cs->client.cn, sizeof(cs->client.cn), "%s", cn);
    cs->client.has_cn = cn[0] != '\0';
    if (cs->peer) {
        snprintf(cs->peer->common_name, sizeof(cs->peer->common_name), "%s", cn);
    }
    if (was_indexed) {
        acc_cn_index_add(a, cs);
    }
}

void acc_table_unlink(struct acceptor *a, struct ctl_session *cs)
{
    struct ctl_session **pp =
        &a->sessions.table[acc_addr_hash(&cs->remote, a->sessions.table_size)];

    while (*pp && *pp != cs) {
        pp = &(*pp)->hnext;
    }
    if (*pp) {
        *pp = cs->hnext;
        a->sessions.n_sessions--;
    }
}

int acc_send_control(struct acceptor *a, struct ctl_session *cs, uint8_t key_id, uint8_t opcode,
                     const struct control_acks *acks, uint32_t message_id, const uint8_t *payload,
                     size_t payload_len)
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
    if (!err && key_id > 0 && cs->wrap.has_dyn) {
        /* dyn-tls-crypt: a renegotiation's packets (2.6 ssl_pkt.h tls_session_get_tls_wrap) */
        err = tls_wrap_seal(&cs->wrap.dyn, cs->wrap.dyn_tx_id++, cs->wrap.dyn_tx_time, plain,
                            plain_len, wire, sizeof(wire), &wire_len);
    } else if (!err) {
        err = tls_wrap_seal(acc_cs_wrap(a, cs), cs->wrap.tx_id++, cs->wrap.tx_time, plain,
                            plain_len, wire, sizeof(wire), &wire_len);
    }
    if (err) {
        acc_cs_log(a, cs, LOG_ERR, "cannot build control packet: %s", proto_strerror(err));
        return err;
    }
    if (cs->link) {
        /* a TCP client: its worker writes it to the connection (allocated: the control channel
         * is not the per-packet path, and over TCP nothing would send a lost reset again) */
        struct msg *m = msg_new(MSG_LINK_SEND, NULL, wire, wire_len);

        if (!m) {
            acc_cs_log(a, cs, LOG_ERR, "out of memory sending a control packet");
            return 0;
        }
        m->link = cs->link;
        mailbox_post(a->env->mb, tcp_link_worker(cs->link), m);
        return 0;
    }
    {
        union {
            struct cmsghdr align;
            uint8_t buf[UDP_PKTINFO_SPACE];
        } ctrl;
        struct iovec iov = {wire, wire_len};
        struct msghdr mh = {.msg_name = &cs->remote,
                            .msg_namelen = udp_addr_len(&cs->remote),
                            .msg_iov = &iov,
                            .msg_iovlen = 1,
                            .msg_control = ctrl.buf};

        /* multihome: from the address the client sends to (2.6 socket.c link_socket_write) */
        mh.msg_controllen = udp_pktinfo_write(&cs->local, ctrl.buf, sizeof(ctrl.buf));
        if (mh.msg_controllen == 0) {
            mh.msg_control = NULL;
        }
        if (sendmsg(a->fd, &mh, 0) < 0) {
            acc_cs_log(a, cs, LOG_DEBUG, "sendmsg: %s", strerror(errno));
        }
    }
    return 0;
}

/* The TLS bytes one control packet of cs on ks carries, within tls-mtu with its wrapping. */
static size_t max_chunk(const struct acceptor *a, const struct ctl_session *cs,
                        const struct key_state *ks)
{
    size_t overhead = tls_wrap_overhead(&a->crypto.wrap);

    /* with tls-crypt-v2 beside tls-auth or tls-crypt, the larger of the two for every session;
     * a renegotiation with dyn-tls-crypt is tls-crypt wrapped whatever the first handshake was */
    if ((a->crypto.is_tls_crypt_v2 || (ks->key_id > 0 && cs->wrap.has_dyn)) &&
        overhead < TLS_CRYPT_OVERHEAD) {
        overhead = TLS_CRYPT_OVERHEAD;
    }

    return (size_t)a->cfg->net.tls_mtu - IPV4_UDP_HDR - overhead -
           control_packet_header_len(CONTROL_SEND_ACK_MAX, true);
}

void acc_flush_ks(struct acceptor *a, struct ctl_session *cs, struct key_state *ks)
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
        n = out_len < max_chunk(a, cs, ks) ? out_len : max_chunk(a, cs, ks);
        if (reliable_queue(&ks->rel, P_CONTROL_V1, out, n, now, NULL)) {
            break;
        }
        tls_session_out_consume(ks->tls, n);
    }
    if (!ks->job && ks->state == KS_ACTIVE && cs->push.is_sent && !ks->auth_wait) {
        /* Connected and quiet: the control channel may say nothing more for an hour, so the
         * TLS session's record buffers go back (8 KiB of resident memory per client; a later
         * message takes new ones, see tls_session_release_buffers). Not earlier: key method 2
         * and the push exchange would each pay for new buffers. */
        tls_session_release_buffers(ks->tls);
        /* Every check on the certificate has run (what later checks need, the certificate's
         * fingerprint, serial and issuer and the scripts' variables, was copied into cs), and
         * a renegotiation brings a certificate of its own. */
        tls_session_release_peer_cert(ks->tls);
    }
    while ((o = reliable_next_due(&ks->rel, now)) != NULL) {
        reliable_take_acks(&ks->rel, &acks, CONTROL_SEND_ACK_MAX);
        acc_send_control(a, cs, ks->key_id, o->opcode, &acks, o->message_id, o->payload,
                         o->payload_len);
        reliable_sent(&ks->rel, o, now);
    }
    while (reliable_has_acks(&ks->rel)) {
        reliable_take_acks(&ks->rel, &acks, CONTROL_MAX_ACKS);
        acc_send_control(a, cs, ks->key_id, P_ACK_V1, &acks, 0, NULL, 0);
    }
    acc_cs_touch(a, cs); /* its next retransmission, or what is left to queue */
}

void acc_flush(struct acceptor *a, struct ctl_session *cs)
{
    for (int i = 0; i < 2; i++) {
        if (cs->ks[i].in_use) {
            acc_flush_ks(a, cs, &cs->ks[i]);
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

struct key_method2 *acc_km2_take(struct acceptor *a)
{
    return block_cache_take(&a->km2_blocks, acc_now_ms(a));
}

void acc_km2_give(struct acceptor *a, struct key_method2 *km)
{
    if (km) {
        key_method2_wipe(km);
        block_cache_give(&a->km2_blocks, km, acc_now_ms(a));
    }
}

/* The record buffers of every key state's TLS session (tls_buf_hooks, ctx: the acceptor). */
static void *tls_buf_take(void *ctx, size_t len)
{
    struct acceptor *a = ctx;

    if (len == a->tls_in_blocks.block_len) {
        return block_cache_take(&a->tls_in_blocks, acc_now_ms(a));
    }
    if (len == a->tls_out_blocks.block_len) {
        return block_cache_take(&a->tls_out_blocks, acc_now_ms(a));
    }
    return calloc(1, len);
}

static void tls_buf_give(void *ctx, void *block, size_t len)
{
    struct acceptor *a = ctx;

    if (len == a->tls_in_blocks.block_len) {
        block_cache_give(&a->tls_in_blocks, block, acc_now_ms(a));
    } else if (len == a->tls_out_blocks.block_len) {
        block_cache_give(&a->tls_out_blocks, block, acc_now_ms(a));
    } else {
        free(block);
    }
}

void acc_blocks_init(struct acceptor *a)
{
    block_cache_init(&a->km2_blocks, sizeof(struct key_method2));
    block_cache_init(&a->tls_in_blocks, tls_session_buf_len(true));
    block_cache_init(&a->tls_out_blocks, tls_session_buf_len(false));
    a->tls_bufs = (struct tls_buf_hooks){.take = tls_buf_take, .give = tls_buf_give, .ctx = a};
}

void acc_blocks_tick(struct acceptor *a, uint64_t now)
{
    block_cache_tick(&a->km2_blocks, now);
    block_cache_tick(&a->tls_in_blocks, now);
    block_cache_tick(&a->tls_out_blocks, now);
}

void acc_blocks_clear(struct acceptor *a)
{
    block_cache_clear(&a->km2_blocks);
    block_cache_clear(&a->tls_in_blocks);
    block_cache_clear(&a->tls_out_blocks);
}

int acc_ks_init(struct acceptor *a, struct key_state *ks, uint8_t key_id, uint32_t first_id)
{
    acc_ks_clear(ks);
    memset(ks, 0, sizeof(*ks));
    ks->tls = malloc(sizeof(*ks->tls));
    if (!ks->tls || tls_session_init(ks->tls, &a->crypto.tls->conf)) {
        free(ks->tls);
        ks->tls = NULL;
        return -ENOMEM;
    }
    a->crypto.tls->n_sessions++; /* acc_tls_conf_put when the session is cleared */
    /* (a session is released and taken back on this thread only: after its handshake, which
     * is the only part that runs on the thread pool, and cleared here or in job_done) */
    ks->tls->buf_hooks = &a->tls_bufs;
    reliable_init(&ks->rel, first_id, first_id, (uint32_t)a->cfg->timers.tls_timeout_s * 1000u);
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
    acc_cs_touch(a, cs); /* queued and sent at the next tick, unless flushed before */
    acc_cs_log(a, cs, LOG_DEBUG, "SENT CONTROL: '%s'", text);
}

void acc_free_peer(struct peer *p)
{
    data_key_clear(&p->key_store[0]);
    data_key_clear(&p->key_store[1]);
    fragment_free(p->frag);
    free(p);
}

/* Mark cs for freeing; if its peer is live in a worker, ask the worker to drop it first. */
void acc_cs_close(struct acceptor *a, struct ctl_session *cs, uint64_t linger_ms)
{
    if (cs->state == CS_CLOSING) {
        return;
    }
    acc_hs_landed(a, cs);
    for (size_t i = 0; i < a->n_cleanups; i++) {
        if (a->cleanups[i].on_close) {
            a->cleanups[i].on_close(a, cs);
        }
    }
    cs->state = CS_CLOSING;
    cs->close_at_ms = acc_now_ms(a) + linger_ms;
    acc_cs_touch(a, cs);
    if (cs->peer && cs->is_peer_live) {
        struct msg *m = msg_new(MSG_REMOVE, cs->peer, NULL, 0);

        if (m) {
            m->peer_id = cs->peer->peer_id;
            mailbox_post(a->env->mb, cs->peer->worker, m);
        }
    }
}

void acc_hs_landed(struct acceptor *a, struct ctl_session *cs)
{
    if (cs->is_in_flight) {
        cs->is_in_flight = false;
        a->sessions.n_in_flight--;
    }
}

static struct ctl_session **cid_bucket(struct acceptor *a, unsigned long cid)
{
    return &a->sessions.by_cid[cid & (a->sessions.table_size - 1)];
}

struct ctl_session *acc_find_cid(struct acceptor *a, unsigned long cid)
{
    for (struct ctl_session *cs = *cid_bucket(a, cid); cs; cs = cs->cid_next) {
        if (cs->cid == cid) {
            return cs;
        }
    }
    return NULL;
}

static void cid_index_unlink(struct acceptor *a, struct ctl_session *cs)
{
    struct ctl_session **pp = cid_bucket(a, cs->cid);

    while (*pp && *pp != cs) {
        pp = &(*pp)->cid_next;
    }
    if (*pp) {
        *pp = cs->cid_next;
    }
}

void acc_cs_free(struct acceptor *a, struct ctl_session *cs)
{
    acc_hs_landed(a, cs);
    acc_table_unlink(a, cs);
    cn_index_unlink(cs);
    cid_index_unlink(a, cs);
    acc_ks_clear(&cs->ks[0]);
    acc_ks_clear(&cs->ks[1]);
    free(cs->client.username);
    free(cs->client.orig_username);
    tls_wrap_wipe(&cs->wrap.dyn);
    for (size_t i = 0; i < a->n_cleanups; i++) {
        if (a->cleanups[i].on_free) {
            a->cleanups[i].on_free(a, cs);
        }
    }
    /* last: what ran above may have touched it */
    timer_heap_cancel(&a->sessions.timers, &cs->timer);
    free(cs);
}

struct ctl_session *acc_session_create(struct acceptor *a, const struct control_packet *pkt,
                                       const union udp_addr *from, uint64_t link)
{
    struct ctl_session *cs = calloc(1, sizeof(*cs));

    if (!cs) {
        return NULL;
    }
    timer_heap_entry_init(&cs->timer);
    if (timer_heap_reserve(&a->sessions.timers, a->sessions.n_sessions + 1) != 0) {
        free(cs);
        return NULL;
    }
    cs->remote = *from;
    cs->local = a->rx_local;
    cs->link = link;
    cs->cid = a->sessions.next_cid++;
    cs->next_kid = 1; /* as a 2.6 server numbers them: its first negotiation's key is 1 */
    cs->takeover_index = SIZE_MAX;
    memcpy(cs->own_sid, pkt->acks.remote_session_id, SESSION_ID_LEN);
    memcpy(cs->peer_sid, pkt->session_id, SESSION_ID_LEN);
    cs->wrap.tx_id = 2; /* 1 went out with the stateless reset */
    cs->wrap.tx_time = (uint32_t)time(NULL);
    packet_id_rx_init(&cs->wrap.rx, 64);
    packet_id_rx_init(&cs->wrap.dyn_rx, 64);
    /* The stateless reset exchange used message id 0 in both directions. */
    if (acc_ks_init(a, &cs->ks[0], 0, 1)) {
        free(cs);
        return NULL;
    }
    /* 2.6 makes the plugins' per-client contexts with the instance (multi_create_instance) */
    if (plugin_client_new(acceptor_plugins(a), &cs->hooks.plugin_client) != 0) {
        acc_ks_clear(&cs->ks[0]);
        free(cs);
        return NULL;
    }
    cs->state = CS_TLS;
    cs->created_ms = acc_now_ms(a);
    cs->hs_deadline_ms = admission_decide_deadline(
        cs->created_ms, (uint64_t)a->cfg->timers.hand_window_s * 1000u, a->rx_wrap_time != 0,
        (int64_t)a->rx_wrap_time, (int64_t)time(NULL));
    cs->is_in_flight = true;
    a->sessions.n_in_flight++;
    cs->cid_next = *cid_bucket(a, cs->cid);
    *cid_bucket(a, cs->cid) = cs;
    acc_table_insert(a, cs);
    acc_cs_touch(a, cs);
    return cs;
}

/* Whether o authenticated as the same client as cs: both with a certificate, the same one
 * (openvpn 2.6 compares the certificate hashes, cert_hash_compare), and the same common name. */
static bool is_same_client(const struct ctl_session *cs, const struct ctl_session *o)
{
    static const uint8_t none[sizeof(cs->client.cert_sha256)];

    return o->peer && memcmp(cs->client.cert_sha256, none, sizeof(none)) != 0 &&
           memcmp(cs->client.cert_sha256, o->client.cert_sha256, sizeof(none)) == 0 &&
           strcmp(cs->client.cn, o->client.cn) == 0;
}

void acc_link_closed(struct acceptor *a, uint64_t link, const union udp_addr *from)
{
    /* A TCP session never floats: its sessions are at the connection's address. */
    for (struct ctl_session *cs = a->sessions.table[acc_addr_hash(from, a->sessions.table_size)];
         cs; cs = cs->hnext) {
        if (cs->link == link && !cs->is_dead && cs->state != CS_CLOSING) {
            acc_cs_log(a, cs, LOG_INFO, "TCP connection closed: session ends");
            acc_cs_close(a, cs, 0);
        }
    }
}

void acc_link_on_free(struct acceptor *a, struct ctl_session *cs)
{
    struct ctl_session *o = cs->link ? acc_table_find(a, &cs->remote, cs->link) : NULL;
    struct msg *m;

    if (!cs->link || (o && o != cs) || a->are_workers_stopped) {
        return;
    }
    m = msg_new(MSG_LINK_CLOSE, NULL, NULL, 0);
    if (m) {
        m->link = cs->link;
        mailbox_post(a->env->mb, tcp_link_worker(cs->link), m);
    }
}

struct ctl_session *acc_sessions_at(struct acceptor *a, const union udp_addr *to,
                                    const struct ctl_session *cs, size_t *n_other, size_t *n_same)
{
    struct ctl_session *stranger = NULL;

    *n_other = *n_same = 0;
    for (struct ctl_session *o = a->sessions.table[acc_addr_hash(to, a->sessions.table_size)]; o;
         o = o->hnext) {
        if (o == cs || o->is_dead || o->state == CS_CLOSING || o->link != 0 ||
            !udp_addr_equal(&o->remote, to)) {
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
