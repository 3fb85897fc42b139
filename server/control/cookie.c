/* server/control/cookie.c: the stateless answer to a client's hard reset (HMAC cookie as our
 * session id, nothing stored) under connect-freq-initial. Acceptor thread only. */
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "proto/packet.h"
#include "server/control/acceptor_decide.h"

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
