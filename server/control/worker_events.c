/* server/control/worker_events.c: what workers report about a peer: gone (MSG_GONE), installed
 * (MSG_INSTALLED), and a float to another address, allowed or refused. Acceptor thread only. */
#include "proto/peer_info.h"
#include "server/control/acceptor_decide.h"
#include "server/data/peer.h"

#include "server/control/acceptor_internal.h"

void acc_handle_gone(struct acceptor *a, struct peer *p, enum gone_reason reason)
{
    struct ctl_session *cs = p->ctl;

    if (!cs) {
        /* The control session already went: free what remains. */
        acc_release_peer_slot(a, p);
        acc_free_peer(p);
        return;
    }
    cs->is_peer_live = false;
    acc_cs_touch(a, cs); /* a closing session is freed once its linger is over */
    if (reason == GONE_PING_TIMEOUT || reason == GONE_EXIT || reason == GONE_LINK_CLOSED) {
        acc_cs_log(a, cs, LOG_INFO, "client disconnected (%s)",
                   reason == GONE_EXIT          ? "explicit exit notify"
                   : reason == GONE_LINK_CLOSED ? "TCP connection closed"
                                                : "ping-restart timeout");
        acc_cs_close(a, cs, reason == GONE_EXIT ? CLOSE_LINGER_MS : 0);
    }
    /* The address and peer-id are free once the session itself goes (acc_cs_free). */
}

void acc_handle_installed(struct acceptor *a, struct peer *p)
{
    struct ctl_session *cs = p->ctl;

    if (!cs || cs->state != CS_ACTIVE) {
        return;
    }
    cs->is_installed = true;
    acc_cs_touch(a, cs);
    if (cs->client.pi.iv_proto & IV_PROTO_REQUEST_PUSH || cs->push.is_requested) {
        acc_send_push_reply(a, cs);
        acc_flush(a, cs);
    }
}

void acc_handle_float(struct acceptor *a, struct peer *p, const union udp_addr *to)
{
    struct ctl_session *cs = p->ctl, *stranger = NULL;
    /* a TCP client's session is its connection: it never floats */
    bool is_live = cs && cs->state == CS_ACTIVE && cs->peer == p && !cs->link, is_ok = false;
    size_t n_other = 0, n_same = 0;
    struct msg *m;
    char addr[64];

    if (is_live) {
        stranger = acc_sessions_at(a, to, cs, &n_other, &n_same);
    }
    switch (acceptor_decide_float(is_live, n_other, n_same)) {
    case ACCEPTOR_FLOAT_OK:
        is_ok = true;
        break;
    case ACCEPTOR_FLOAT_OK_CLOSE_OTHER:
        for (struct ctl_session *o = a->sessions.table[acc_addr_hash(to, a->sessions.table_size)];
             o; o = o->hnext) {
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
                       udp_addr_str(to, addr, sizeof(addr)),
                       stranger->client.cn[0] ? stranger->client.cn : "?");
        }
        break;
    }
    if (is_ok && !udp_addr_equal(&cs->remote, to)) {
        acc_table_unlink(a, cs);
        cs->remote = *to;
        acc_table_insert(a, cs);
    }
    m = msg_new(is_ok ? MSG_FLOAT_OK : MSG_FLOAT_NO, p, NULL, 0);
    if (m) {
        m->peer_id = p->peer_id;
        m->from = *to;
        mailbox_post(a->env->mb, p->worker, m);
    }
}
