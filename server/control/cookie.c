/* server/control/cookie.c: the answer to a client's hard reset under connect-freq-initial: over
 * UDP stateless (HMAC cookie as our session id, nothing stored), over TCP from a new session.
 * Acceptor thread only. */
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include <mbedtls/ctr_drbg.h>

#include "proto/packet.h"
#include "server/control/acceptor_decide.h"
#include "server/data/tcp.h"

#include "server/control/acceptor_internal.h"

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
                n_dropped, cfg->clients.connect_freq_initial_max,
                cfg->clients.connect_freq_initial_per_s);
    }
    if (is_first_refusal) {
        log_msg(LOG_WARN,
                "connect-freq-initial %d %d rate limit exceeded, dropping initial "
                "handshake packets for the next %" PRId64 " seconds",
                cfg->clients.connect_freq_initial_max, cfg->clients.connect_freq_initial_per_s,
                connect_freq_initial_left_s(&a->cf_initial, now_s));
    }
    if (!ok) {
        a->stats.drop_connect_freq_initial++;
    }
    return ok;
}

void acc_answer_hard_reset(struct acceptor *a, const struct control_packet *pkt,
                           const union udp_addr *from, const struct tls_wrap_ctx *kc_wrap)
{
    struct ctl_session tmp;
    struct control_acks acks = {.n_acks = 1};
    uint8_t tlv[TLS_CRYPT_V2_EARLY_NEG_TLV_LEN];

    if (!initial_reset_allowed(a)) {
        return;
    }
    memset(&tmp, 0, sizeof(tmp));
    tmp.remote = *from;
    tmp.local = a->rx_local;
    acceptor_decide_cookie_sid(
        a->crypto.cookie_key, from, pkt->session_id,
        acceptor_decide_cookie_slot((int64_t)time(NULL), a->cfg->timers.hand_window_s),
        tmp.own_sid);
    memcpy(tmp.peer_sid, pkt->session_id, SESSION_ID_LEN);
    tmp.wrap.tx_id = 1;
    tmp.wrap.tx_time = (uint32_t)time(NULL);
    acks.message_id[0] = 0;
    if (kc_wrap) {
        /* Nothing of the client is kept: it sends its WKc again in P_CONTROL_WKC_V1. */
        tmp.wrap.kc = *kc_wrap;
        tmp.wrap.has_kc = true;
        tls_crypt_v2_early_neg_tlv(tlv);
        acc_send_control(a, &tmp, 0, P_CONTROL_HARD_RESET_SERVER_V2, &acks, 0, tlv, sizeof(tlv));
        tls_wrap_wipe(&tmp.wrap.kc);
        return;
    }
    acc_send_control(a, &tmp, 0, P_CONTROL_HARD_RESET_SERVER_V2, &acks, 0, NULL, 0);
}

/* Turn a TCP client away before it has a session: close its connection (2.6 closes the
 * instance it made at accept). */
static void close_link(struct acceptor *a, uint64_t link)
{
    struct msg *m = msg_new(MSG_LINK_CLOSE, NULL, NULL, 0);

    if (m) {
        m->link = link;
        mailbox_post(a->env->mb, tcp_link_worker(link), m);
    }
}

void acc_tcp_session_start(struct acceptor *a, const struct control_packet *pkt,
                           const union udp_addr *from, uint64_t link, uint32_t wrap_id,
                           const struct tls_wrap_ctx *kc_wrap, const uint8_t *md, size_t md_len)
{
    struct control_acks acks = {.n_acks = 1};
    struct control_packet first = *pkt;
    struct ctl_session *cs;
    int err;

    /* 2.6 applies connect-freq and connect-freq-initial to UDP only (it refuses connect-freq
     * with TCP at start-up); here they bound TCP handshakes the same way. */
    if (!initial_reset_allowed(a)) {
        close_link(a, link);
        return;
    }
    if (!acc_table_find(a, from, link) &&
        a->sessions.n_sessions >= (size_t)a->cfg->clients.max_clients) {
        /* 2.6 multi_create_instance: "new incoming connection would exceed maximum number of
         * clients", and the connection goes */
        acc_drop_pkt(a, &a->stats.drop_no_session, from, "max-clients reached: connection closed");
        close_link(a, link);
        return;
    }
    if (!connect_freq_allow(&a->cf, (int64_t)(acc_now_ms(a) / 1000))) {
        acc_drop_pkt(a, &a->stats.drop_connect_freq, from,
                     "new connection would exceed the connect-freq limit");
        close_link(a, link);
        return;
    }
    connect_freq_initial_forgive(&a->cf_initial);
    /* our session id: random (no cookie to carry) */
    (void)mbedtls_ctr_drbg_random(&a->crypto.drbg, first.acks.remote_session_id, SESSION_ID_LEN);
    cs = acc_session_create(a, &first, from, link);
    if (!cs) {
        log_msg(LOG_ERR, "out of memory creating a session");
        close_link(a, link);
        return;
    }
    cs->wrap.tx_id = 1;
    if (kc_wrap) {
        /* Kc goes with the session for the rest of it; without the early-negotiation TLV in
         * the answer the client does not send its WKc again */
        cs->wrap.kc = *kc_wrap;
        cs->wrap.has_kc = true;
        err = acc_v2_verify_start(a, cs, md, md_len);
        if (err < 0) {
            acc_cs_log(a, cs, LOG_WARN, "tls-crypt-v2-verify could not start: %s", strerror(-err));
            acc_cs_close(a, cs, 0);
            return;
        }
    }
    acc_close_others_at(a, cs, true, NULL);
    packet_id_rx_commit(&cs->wrap.rx, wrap_id);
    /* The answer, from the session: its message id 0 acknowledges the client's 0, as the
     * stateless answer does over UDP; the session's reliability layer starts at 1 both ways. */
    acks.message_id[0] = 0;
    acc_send_control(a, cs, 0, P_CONTROL_HARD_RESET_SERVER_V2, &acks, 0, NULL, 0);
}
