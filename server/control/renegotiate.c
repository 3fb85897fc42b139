/* server/control/renegotiate.c: key renegotiation of a session: starting one (reneg-sec, or the
 * client's), hand-window, retiring the old data key after tran-window, a failed one. Acceptor
 * thread only. */
#include <errno.h>

#include "proto/packet.h"
#include "proto/reliable.h"
#include "server/data/peer.h"

#include "server/control/acceptor_internal.h"

void acc_reneg_failed(struct acceptor *a, struct ctl_session *cs, struct key_state *ks,
                      const char *why)
{
    acc_cs_log(a, cs, LOG_INFO,
               "renegotiation of key_id %u failed (%s): session closed (RESTART sent on key_id %u)",
               ks->key_id, why, acc_primary_ks(cs)->key_id);
    a->mx.renegotiations_failed++;
    acc_ks_clear(ks);
    acc_send_message(a, cs, "RESTART");
    acc_cs_close(a, cs, CLOSE_LINGER_MS);
    acc_flush(a, cs);
}

uint8_t acc_next_key_id(uint8_t k)
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

    if (!cs->reneg.has_old_key) {
        return 0;
    }
    if (!p || !cs->is_peer_live || a->are_workers_stopped) {
        cs->reneg.has_old_key = false;
        return 0;
    }
    m = msg_new(MSG_KEY_RETIRE, p, &cs->reneg.old_key_id, 1);
    if (!m) {
        return -ENOMEM;
    }
    cs->reneg.has_old_key = false;
    m->peer_id = p->peer_id;
    mailbox_post(a->env->mb, p->worker, m);
    acc_cs_log(a, cs, LOG_DEBUG, "data channel key_id %u retired (tran-window)",
               cs->reneg.old_key_id);
    return 0;
}

struct key_state *acc_start_renegotiation(struct acceptor *a, struct ctl_session *cs,
                                          uint8_t key_id, bool we_initiate)
{
    struct key_state *ks = &cs->ks[1 - cs->primary];

    if (acc_ks_init(a, ks, key_id, 0)) {
        return NULL;
    }
    if (reliable_queue(&ks->rel, P_CONTROL_SOFT_RESET_V1, NULL, 0, acc_now_ms(a), NULL) ||
        retire_old_key(a, cs)) {
        acc_ks_clear(ks);
        return NULL;
    }
    cs->reneg.has_old_key = true;
    cs->reneg.old_key_id = acc_primary_ks(cs)->key_id;
    cs->reneg.old_key_expire_ms = acc_now_ms(a) + (uint64_t)a->cfg->timers.tran_window_s * 1000;
    acc_cs_touch(a, cs); /* its SOFT_RESET goes out, its hand-window runs */
    acc_cs_log(a, cs, LOG_INFO, "%s renegotiation of key_id %u",
               we_initiate ? "starting" : "client started", key_id);
    return ks;
}

void acc_check_key_states(struct acceptor *a, struct ctl_session *cs, uint64_t now,
                          uint64_t hand_window_ms)
{
    bool is_negotiating = false;

    for (int i = 0; i < 2; i++) {
        struct key_state *ks = &cs->ks[i];

        if (!ks->in_use || ks->state != KS_TLS) {
            continue;
        }
        if (ks->auth_wait && (ks->auth_deadline_ms ? now > ks->auth_deadline_ms
                                                   : now - ks->start_ms > hand_window_ms)) {
            a->stats.handshakes_failed++;
            acc_auth_timeout(a, cs, ks);
            if (cs->state == CS_CLOSING) {
                return;
            }
            continue;
        }
        if (now - ks->start_ms > hand_window_ms && !ks->auth_wait) {
            a->stats.handshakes_failed++;
            if (cs->peer) {
                acc_cs_log(a, cs, LOG_WARN,
                           "renegotiation of key_id %u did not finish within %d seconds "
                           "(hand-window)",
                           ks->key_id, a->cfg->timers.hand_window_s);
            } else {
                metrics_count_handshake(&a->mx, METRICS_HS_TIMEOUT, 0);
                /* Half-open sessions can come in floods: one rate limit for all of them. */
                acc_drop_pkt(a, &a->stats.drop_handshake_timeout, &cs->remote,
                             "TLS key negotiation did not finish within hand-window");
            }
            acc_ks_fail(a, cs, ks, "hand-window");
            if (cs->state == CS_CLOSING) {
                return;
            }
            continue;
        }
        is_negotiating = true;
    }
    if (cs->state == CS_ACTIVE && cs->reneg.has_old_key && now >= cs->reneg.old_key_expire_ms &&
        retire_old_key(a, cs)) {
        acc_cs_log(a, cs, LOG_ERR, "out of memory: cannot retire an old data key; session closed");
        acc_cs_close(a, cs, 0);
        return;
    }
    if (cs->state == CS_ACTIVE && !is_negotiating && now >= cs->reneg.next_ms) {
        cs->reneg.next_ms = UINT64_MAX; /* set again when this renegotiation completes */
        if (!acc_start_renegotiation(a, cs, acc_next_key_id(acc_primary_ks(cs)->key_id), true)) {
            /* never renegotiated, the client would never be checked again */
            acc_cs_log(a, cs, LOG_ERR, "cannot start a renegotiation; session closed");
            acc_cs_close(a, cs, 0);
        }
    }
}
