/* server/control/receive.c: what arrives on the acceptor's UDP socket: P_DATA_V2 handed to its
 * worker, control packets unwrapped, judged (acceptor_decide.h) and fed to their session and key
 * state, drops counted and logged. Acceptor thread only. */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "proto/errors.h"
#include "proto/packet.h"
#include "proto/packet_id.h"
#include "proto/reliable.h"
#include "proto/tls_crypt_v2.h"
#include "proto/tls_wrap.h"
#include "server/control/acceptor_decide.h"
#include "server/control/admission_decide.h"

#include "server/control/acceptor_internal.h"

void acc_drop_pkt(struct acceptor *a, uint64_t *counter, const union udp_addr *from,
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
            pri->state != KS_ACTIVE || pkt->key_id != acc_next_key_id(pri->key_id)) {
            acc_cs_log(a, cs, LOG_DEBUG, "%s for key_id %u: no such key state, dropped",
                       packet_opcode_name(pkt->opcode), pkt->key_id);
            return;
        }
        ks = acc_start_renegotiation(a, cs, pkt->key_id, false);
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
    if (cs->wrap.v2_verify) {
        /* tls-crypt-v2-verify has not admitted the client key yet: acknowledge, keep the TLS
         * bytes in the reliability layer, start no TLS work */
        acc_flush(a, cs);
        return;
    }
    acc_session_pump(a, cs, ks);
}

void acc_session_pump(struct acceptor *a, struct ctl_session *cs, struct key_state *ks)
{
    uint8_t *payload, *to_free;
    size_t len;

    while (reliable_pop(&ks->rel, &payload, &len, &to_free)) {
        if (cs->state != CS_CLOSING && len > 0 && acc_tls_feed(ks, payload, len)) {
            acc_cs_log(a, cs, LOG_WARN, "too much unread TLS data: closing");
            acc_cs_close(a, cs, 0);
        }
        free(to_free);
    }
    if (cs->state != CS_CLOSING && ks->in_use) {
        acc_drive_tls(a, cs, ks);
    }
    acc_flush(a, cs);
}

/* A control packet, unwrapped into a->plain_buf (plain_len bytes) with wrap packet_id wrap_id;
 * v2: what its tls-crypt-v2 WKc gave, when it carried one and no session had the key; is_dyn:
 * unwrapped with its session's dyn-tls-crypt key, whose packet ids it counts against. */
static void handle_control(struct acceptor *a, const union udp_addr *from, uint64_t link,
                           uint32_t wrap_id, size_t plain_len, struct acc_v2_packet *v2,
                           bool is_dyn)
{
    struct acceptor_control_facts facts = {0};
    enum acceptor_control verdict;
    struct control_packet pkt;
    struct ctl_session *cs;
    int err;

    err = control_packet_parse(a->plain_buf, plain_len, &pkt);
    if (err) {
        acc_drop_pkt(a, &a->stats.drop_malformed, from, proto_strerror(err));
        return;
    }
    cs = acc_table_find_sid(a, from, link, pkt.session_id);
    if (cs != NULL && a->rx_local.family != 0) {
        cs->local = a->rx_local; /* multihome: answer from where the client sends to */
    }
    facts.pkt = &pkt;
    facts.session_wrap_rx = cs ? (is_dyn ? &cs->wrap.dyn_rx : &cs->wrap.rx) : NULL;
    facts.is_wrapped = is_dyn || a->crypto.wrap.mode != TLS_WRAP_NONE || a->crypto.is_tls_crypt_v2;
    facts.has_wkc = v2 != NULL;
    facts.is_early_neg = tls_crypt_v2_is_early_neg(wrap_id);
    facts.wrap_id = wrap_id;
    facts.is_stopping = a->is_stopping;
    facts.is_draining = a->is_draining;
    facts.has_session_at_addr = acc_table_find(a, from, link) != NULL;
    facts.n_sessions = a->sessions.n_sessions;
    facts.max_clients = (size_t)a->cfg->clients.max_clients;
    verdict = acceptor_decide_control(&facts);
    if (link && verdict == ACCEPTOR_CONTROL_ANSWER_RESET) {
        /* TCP: no cookie round trip, the connection proved the address */
        acc_tcp_session_start(a, &pkt, from, link, wrap_id, v2 ? &v2->wrap : NULL,
                              v2 ? v2->metadata : NULL, v2 ? v2->md_len : 0);
        return;
    }
    if (link && verdict == ACCEPTOR_CONTROL_CHECK_COOKIE) {
        verdict = ACCEPTOR_CONTROL_DROP_NO_SESSION; /* a session starts with a reset there */
    }
    if (verdict == ACCEPTOR_CONTROL_CHECK_COOKIE) { /* only for a packet that may start one */
        facts.cookie =
            acceptor_decide_cookie_valid(a->crypto.cookie_key, &pkt, from, (int64_t)time(NULL),
                                         a->cfg->timers.hand_window_s)
                ? ACCEPTOR_COOKIE_VALID
                : ACCEPTOR_COOKIE_INVALID;
        verdict = acceptor_decide_control(&facts);
    }
    switch (verdict) {
    case ACCEPTOR_CONTROL_SESSION:
        if (facts.is_wrapped) {
            packet_id_rx_commit(is_dyn ? &cs->wrap.dyn_rx : &cs->wrap.rx, wrap_id);
        }
        process_session_packet(a, cs, &pkt);
        return;
    case ACCEPTOR_CONTROL_DROP_REPLAY:
        a->stats.drop_replay++;
        return;
    case ACCEPTOR_CONTROL_ANSWER_RESET:
        if (!admission_decide_answer(a->sessions.n_in_flight, a->sessions.max_in_flight)) {
            /* a storm: the client sends its reset again (backoff) and is answered once
             * handshakes in flight have finished; nothing is kept, no TLS work */
            acc_drop_pkt(a, &a->stats.drop_busy, from,
                         "hard reset not answered yet: handshakes in flight at their bound");
            return;
        }
        acc_answer_hard_reset(a, &pkt, from, v2 ? &v2->wrap : NULL);
        return;
    case ACCEPTOR_CONTROL_DROP_BAD_RESET:
        acc_drop_pkt(a, &a->stats.drop_malformed, from, "malformed client hard reset");
        return;
    case ACCEPTOR_CONTROL_IGNORE:
        return;
    case ACCEPTOR_CONTROL_DROP_V3:
        acc_drop_pkt(a, &a->stats.drop_malformed, from,
                     "tls-crypt-v2 packet, but tls-crypt-v2 is not configured");
        return;
    case ACCEPTOR_CONTROL_DROP_V3_OLD:
        acc_drop_pkt(a, &a->stats.drop_wkc, from,
                     "tls-crypt-v2 client without early negotiation (before openvpn 2.6): not "
                     "supported, its key would have to be kept before its address is proved");
        return;
    case ACCEPTOR_CONTROL_DROP_NO_SESSION:
        acc_drop_pkt(a, &a->stats.drop_no_session, from, "control packet for no known session");
        return;
    case ACCEPTOR_CONTROL_CHECK_COOKIE: /* not after a check */
        return;
    case ACCEPTOR_CONTROL_DROP_COOKIE:
        acc_drop_pkt(a, &a->stats.drop_cookie, from, "session id cookie did not verify");
        return;
    case ACCEPTOR_CONTROL_DROP_DRAINING:
        /* Silent, as for max-clients: the client's server-poll-timeout (or hand-window) sends
         * it to its next remote, and an edge that withdrew this node sends it elsewhere. */
        acc_drop_pkt(a, &a->stats.drop_draining, from, "draining: new connection not answered");
        return;
    case ACCEPTOR_CONTROL_DROP_MAX_CLIENTS:
        /* Like 2.6: say nothing, the client retries until a place is free. */
        acc_drop_pkt(a, &a->stats.drop_no_session, from, "max-clients reached: connection ignored");
        return;
    case ACCEPTOR_CONTROL_CREATE:
        break;
    }
    /* connect-freq counts clients that completed the three-way handshake; those no longer
     * count against connect-freq-initial (mudp.c multi_get_create_instance_udp). */
    if (!connect_freq_allow(&a->cf, (int64_t)(acc_now_ms(a) / 1000))) {
        acc_drop_pkt(a, &a->stats.drop_connect_freq, from,
                     "new connection would exceed the connect-freq limit");
        return;
    }
    connect_freq_initial_forgive(&a->cf_initial);
    cs = acc_session_create(a, &pkt, from, link);
    if (!cs) {
        log_msg(LOG_ERR, "out of memory creating a session");
        return;
    }
    if (v2) {
        /* Kc goes with the session for the rest of it (renegotiations included). */
        cs->wrap.kc = v2->wrap;
        cs->wrap.has_kc = true;
        err = acc_v2_verify_start(a, cs, v2->metadata, v2->md_len);
        if (err < 0) {
            acc_cs_log(a, cs, LOG_WARN, "tls-crypt-v2-verify could not start: %s", strerror(-err));
            acc_cs_close(a, cs, 0);
            return;
        }
    }
    /* A new session from an address that has one: the client restarted, or someone replayed
     * or forged its packets (without tls-auth/tls-crypt anyone on the path can). Like 2.6's
     * untrusted session (ssl.c TM_UNTRUSTED), the authenticated session keeps working until
     * the new one is authenticated too (acc_install_prepare drops it then); an unfinished one is
     * replaced at once. */
    acc_close_others_at(a, cs, true, NULL);
    packet_id_rx_commit(&cs->wrap.rx, wrap_id);
    process_session_packet(a, cs, &pkt);
}

/* tls-crypt-v2: every control packet is tls-crypt wrapped with its client's Kc. A packet that
 * carries the WKc (the V3 reset, P_CONTROL_WKC_V1) gives Kc itself, on the stack; any other
 * belongs to a session that has Kc, or is dropped. 2.6 read_control_auth() refuses unwrapped
 * packets the same way ("could not determine wrapping"). */
static void handle_v2_datagram(struct acceptor *a, const uint8_t *buf, size_t len,
                               const union udp_addr *from, uint64_t link)
{
    uint8_t op = packet_opcode(buf[0]);
    bool has_wkc = op == P_CONTROL_HARD_RESET_CLIENT_V3 || op == P_CONTROL_WKC_V1;
    struct ctl_session *cs =
        len >= TLS_WRAP_HEAD_LEN ? acc_table_find_sid(a, from, link, buf + 1) : NULL;
    struct acc_v2_packet v2;
    const struct tls_wrap_ctx *wrap;
    size_t wrapped_len = len, plain_len;
    uint32_t wrap_id, wrap_time;
    const char *why;
    int err;

    if (cs && cs->wrap.has_kc) {
        /* The session's own key; a WKc sent again (retransmitted P_CONTROL_WKC_V1) is only
         * stripped, as 2.6 does once its key is set up. */
        if (has_wkc && tls_crypt_v2_locate_wkc(buf, len, &wrapped_len) != 0) {
            acc_drop_pkt(a, &a->stats.drop_wkc, from, "tls-crypt-v2: malformed WKc length");
            return;
        }
        has_wkc = false;
        wrap = &cs->wrap.kc;
    } else if (has_wkc) {
        why = acc_v2_open_wkc(a, buf, len, &v2);
        if (why) {
            acc_drop_pkt(a, &a->stats.drop_wkc, from, why);
            return;
        }
        wrapped_len = v2.wrapped_len;
        wrap = &v2.wrap;
    } else {
        acc_drop_pkt(a, &a->stats.drop_wkc, from,
                     "tls-crypt-v2: no wrapped client key and no session that has one");
        return;
    }
    err = tls_wrap_open(wrap, buf, wrapped_len, a->plain_buf, sizeof(a->plain_buf), &plain_len,
                        &wrap_id, &wrap_time);
    if (err) {
        acc_drop_pkt(a, &a->stats.drop_wrap, from,
                     err == -PE_AUTH ? "tls-crypt-v2: packet did not authenticate with the client "
                                       "key (its WKc belongs to another packet?)"
                                     : proto_strerror(err));
    } else {
        a->rx_wrap_time = wrap_time;
        handle_control(a, from, link, wrap_id, plain_len, has_wkc ? &v2 : NULL, false);
        a->rx_wrap_time = 0;
    }
    if (has_wkc) {
        acc_v2_packet_wipe(&v2);
    }
}

/* A P_DATA_V1 carries no peer-id: the client is the one whose live session is at its source
 * address (and TCP link), as 2.6 multi_get_create_instance_udp finds it by address. The packet
 * goes to that client's worker, which opens it; a V1 client that moved is not followed (2.6
 * floats only with the peer-id of P_DATA_V2). */
static void forward_data_v1(struct acceptor *a, const uint8_t *buf, size_t len,
                            const union udp_addr *from, uint64_t link)
{
    struct ctl_session *cs = a->sessions.table[acc_addr_hash(from, a->sessions.table_size)];
    struct msg *m;

    for (; cs; cs = cs->hnext) {
        if (!cs->is_dead && cs->is_peer_live && cs->peer && cs->link == link &&
            udp_addr_equal(&cs->remote, from)) {
            break;
        }
    }
    if (!cs) {
        acc_drop_pkt(a, &a->stats.drop_no_session, from,
                     "P_DATA_V1 from an address without a connected client");
        return;
    }
    m = msg_pool_take(&a->pool, MSG_PACKET, buf, len);
    if (!m) {
        acc_drop_pkt(a, &a->stats.drop_handover, from,
                     "P_DATA_V1 not handed over: its worker is behind");
        return;
    }
    m->from = *from;
    m->link = link;
    m->is_data_v1 = true;
    m->peer_id = cs->peer->peer_id;
    mailbox_post(a->env->mb, cs->peer->worker, m);
}

/* With tls-crypt-v2, which key wraps a control packet: a client's own Kc for the packets that
 * carry its WKc and for the sessions that started with one; the key clients share (tls-auth or
 * tls-crypt, when the config has one beside tls-crypt-v2) for the rest. 2.6 read_control_auth()
 * decides the same way (its session's wrap, switched to Kc by a WKc). Without a shared key every
 * packet goes the tls-crypt-v2 way, where one without a WKc and a session is refused. */
static bool uses_client_key(struct acceptor *a, const uint8_t *buf, size_t len,
                            const union udp_addr *from, uint64_t link)
{
    uint8_t op = packet_opcode(buf[0]);
    const struct ctl_session *cs;

    if (a->crypto.wrap.mode == TLS_WRAP_NONE || op == P_CONTROL_HARD_RESET_CLIENT_V3 ||
        op == P_CONTROL_WKC_V1) {
        return true;
    }
    cs = len >= TLS_WRAP_HEAD_LEN ? acc_table_find_sid(a, from, link, buf + 1) : NULL;
    return cs != NULL && cs->wrap.has_kc;
}

/* Unwrap a control packet with wrap and handle it (handle_control, is_dyn as there); one that
 * does not open is dropped, counted and logged with auth_fail (the reason when it did not
 * authenticate). */
static void open_and_handle(struct acceptor *a, const struct tls_wrap_ctx *wrap, const uint8_t *buf,
                            size_t len, const union udp_addr *from, uint64_t link,
                            const char *auth_fail, bool is_dyn)
{
    uint32_t wrap_id, wrap_time;
    size_t plain_len;
    int err = tls_wrap_open(wrap, buf, len, a->plain_buf, sizeof(a->plain_buf), &plain_len,
                            &wrap_id, &wrap_time);

    if (err) {
        acc_drop_pkt(a, &a->stats.drop_wrap, from,
                     err == -PE_AUTH ? auth_fail : proto_strerror(err));
        return;
    }
    a->rx_wrap_time = wrap_time; /* 0 without tls-auth / tls-crypt */
    handle_control(a, from, link, wrap_id, plain_len, NULL, is_dyn);
    a->rx_wrap_time = 0;
}

/* dyn-tls-crypt: a control packet of a renegotiation (key_id > 0) for a session that uses it is
 * opened with the session's dynamic key only; one wrapped another way is dropped, as 2.6
 * tls_session_get_tls_wrap picks no other key for it. False when the packet is not such a
 * packet (it goes the usual way). */
static bool handle_dyn_datagram(struct acceptor *a, const uint8_t *buf, size_t len,
                                const union udp_addr *from, uint64_t link)
{
    struct ctl_session *cs;

    if (len < TLS_WRAP_HEAD_LEN || packet_key_id(buf[0]) == 0) {
        return false;
    }
    cs = acc_table_find_sid(a, from, link, buf + 1);
    if (!cs || !cs->wrap.has_dyn) {
        return false;
    }
    open_and_handle(a, &cs->wrap.dyn, buf, len, from, link,
                    "dynamic tls-crypt: renegotiation packet did not authenticate with its "
                    "session's key",
                    true);
    return true;
}

void acc_handle_datagram(struct acceptor *a, const uint8_t *buf, size_t len,
                         const union udp_addr *from, uint64_t link)
{
    struct msg *m;
    int worker = 0;

    switch (acceptor_decide_dgram(buf, len, a->env->n_workers, &worker)) {
    case ACCEPTOR_DGRAM_DROP_EMPTY:
        acc_drop_pkt(a, &a->stats.drop_short, from, "empty datagram");
        return;
    case ACCEPTOR_DGRAM_HAND_OVER:
        /* Steering missed (no cBPF): hand it to the owning worker. */
        m = msg_pool_take(&a->pool, MSG_PACKET, buf, len);
        if (!m) {
            acc_drop_pkt(a, &a->stats.drop_handover, from,
                         "P_DATA_V2 not handed over: its worker is behind");
            return;
        }
        m->from = *from;
        mailbox_post(a->env->mb, worker, m);
        return;
    case ACCEPTOR_DGRAM_IGNORE:
        return;
    case ACCEPTOR_DGRAM_DATA_V1:
        forward_data_v1(a, buf, len, from, link);
        return;
    case ACCEPTOR_DGRAM_DROP_OPCODE:
        acc_drop_pkt(a, &a->stats.drop_malformed, from, "unknown or unsupported opcode");
        return;
    case ACCEPTOR_DGRAM_CONTROL:
        break;
    }
    if (handle_dyn_datagram(a, buf, len, from, link)) {
        return;
    }
    if (a->crypto.is_tls_crypt_v2 && uses_client_key(a, buf, len, from, link)) {
        handle_v2_datagram(a, buf, len, from, link);
        return;
    }
    open_and_handle(a, &a->crypto.wrap, buf, len, from, link,
                    "tls-auth/tls-crypt authentication failed (wrong key or key-direction?)",
                    false);
}

void acc_on_udp(uv_poll_t *h, int status, int events)
{
    struct acceptor *a = h->data;

    (void)events;
    if (status < 0) {
        return;
    }
    for (int i = 0; i < 64; i++) {
        union udp_addr from;
        union {
            struct cmsghdr align;
            uint8_t buf[UDP_PKTINFO_SPACE];
        } ctrl;
        struct iovec iov = {a->rx_buf, sizeof(a->rx_buf)};
        struct msghdr mh = {
            .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov, .msg_iovlen = 1};
        ssize_t n;

        if (a->cfg->net.multihome) {
            mh.msg_control = ctrl.buf;
            mh.msg_controllen = sizeof(ctrl.buf);
        }
        n = recvmsg(a->fd, &mh, MSG_DONTWAIT);
        if (n < 0) {
            return;
        }
        if (a->cfg->net.multihome) {
            udp_pktinfo_read(&mh, &a->rx_local);
        }
        acc_handle_datagram(a, a->rx_buf, (size_t)n, &from, 0);
        a->rx_local.family = 0; /* datagrams handed over by workers do not say */
    }
}
