/* server/control/tap_macs.c: what the acceptor knows of the MAC addresses of dev tap clients,
 * and learn-address for them.
 *
 * openvpn 2.6 learns no address of a tap client at connect; it learns each source MAC a client
 * sends from (multi.c multi_learn_addr, from multi_process_incoming_link), calling learn-address
 * "add MAC@VID CN" (or "update" when the MAC was another client's) first: when that fails, the
 * MAC is not learned and the frame is dropped. When the client has gone, its MACs get "delete
 * MAC@VID" without a common name (multi_reap_range). The status file and the management
 * interface's `status` list the MACs as the routing table (multi_print_status).
 *
 * Here the workers learn MACs (server/data/worker_tap.c) and report each one they learn
 * (MSG_MAC_NOTE); with learn-address they ask first and drop the MAC's frames until it
 * answered (MSG_MAC_ANSWER), so a script never holds up a worker. A session keeps its MACs in
 * cs->macs (at most its max-routes-per-client quota of them). Acceptor thread only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/addr/mac_table.h"
#include "server/hooks/openvpn_plugin.h"

#include "server/control/acceptor_internal.h"

struct acc_mac_wait {
    struct acc_mac_wait *next; /* in cs->macs.waits */
    struct acceptor *a;
    struct ctl_session *cs;
    struct peer *p; /* cs->peer when asked */
    struct hook_run *run;
    struct msg *reply; /* MSG_MAC_ANSWER, made ahead so that answering cannot fail */
    struct mac_note note;
    char addr[ACC_MAC_STR_MAX];
};

const char *acc_mac_str(const struct status_mac *m, char *buf, size_t buf_len)
{
    snprintf(buf, buf_len, "%02x:%02x:%02x:%02x:%02x:%02x@%u", m->mac[0], m->mac[1], m->mac[2],
             m->mac[3], m->mac[4], m->mac[5], (unsigned)m->vid);
    return buf;
}

static bool is_learn_wanted(const struct acceptor *a)
{
    return hooks_wanted(a->checks.hooks, OVPN_PLUGIN_LEARN_ADDRESS, a->cfg->hooks.learn_address);
}

/* Whether cs is the live session of p: what a worker says about p still concerns it. */
static bool is_live(const struct ctl_session *cs, const struct peer *p)
{
    return cs != NULL && cs->state == CS_ACTIVE && cs->peer == p && cs->is_peer_live;
}

/* Index of m in cs's list, or SIZE_MAX. */
static size_t find_mac(const struct ctl_session *cs, const struct status_mac *m)
{
    for (size_t i = 0; i < cs->macs.n; i++) {
        if (memcmp(cs->macs.list[i].mac, m->mac, MAC_LEN) == 0 && cs->macs.list[i].vid == m->vid) {
            return i;
        }
    }
    return SIZE_MAX;
}

/* The MAC of n is cs's now: listed for it, and no longer for the client that had it. */
static void took(struct acceptor *a, struct ctl_session *cs, const struct mac_note *n)
{
    struct status_mac m = {.vid = n->vid};
    struct peer *prev = n->prev_owner == MAC_TABLE_NONE || n->prev_owner == cs->peer->peer_id
                            ? NULL
                            : acc_peer_by_id(a, n->prev_owner);
    size_t i;

    memcpy(m.mac, n->mac, MAC_LEN);
    if (prev != NULL && prev->ctl != NULL && prev->ctl != cs &&
        (i = find_mac(prev->ctl, &m)) != SIZE_MAX) {
        /* 2.6 replaces the route: the client that had it gets no "delete" for it */
        prev->ctl->macs.list[i] = prev->ctl->macs.list[--prev->ctl->macs.n];
    }
    if (find_mac(cs, &m) != SIZE_MAX) {
        return;
    }
    if (cs->macs.n == cs->macs.cap) {
        size_t cap = cs->macs.cap ? 2 * cs->macs.cap : 4;
        struct status_mac *grown = realloc(cs->macs.list, cap * sizeof(*grown));

        if (grown == NULL) {
            acc_cs_log(a, cs, LOG_WARN, "out of memory: a MAC of the client is not listed");
            return;
        }
        cs->macs.list = grown;
        cs->macs.cap = cap;
    }
    cs->macs.list[cs->macs.n++] = m;
}

/* Tell w->p's worker learn-address's answer. */
static void answer(struct acceptor *a, struct acc_mac_wait *w, bool is_ok)
{
    struct mac_note *n = (struct mac_note *)(void *)w->reply->data;

    n->is_ok = is_ok;
    w->reply->peer_id = w->p->peer_id;
    mailbox_post(a->env->mb, w->p->worker, w->reply);
    w->reply = NULL;
}

static void unlink_wait(struct acc_mac_wait *w)
{
    for (struct acc_mac_wait **pp = &w->cs->macs.waits; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == w) {
            *pp = w->next;
            return;
        }
    }
}

static void on_learned(void *ctx, const struct hook_result *res)
{
    struct acc_mac_wait *w = ctx;
    struct acceptor *a = w->a;
    struct ctl_session *cs = w->cs;

    unlink_wait(w);
    if (!is_live(cs, w->p)) {
        if (res->is_ok) {
            /* the client went while the script ran: what it accepted is deleted at once */
            (void)acc_learn_run(a, "delete", w->addr, NULL, NULL, NULL, NULL, NULL, NULL,
                                cs->client.cn);
        }
    } else if (res->is_ok) {
        took(a, cs, &w->note);
        answer(a, w, true);
    } else {
        /* as 2.6: not learned, its frames are dropped; the client stays */
        acc_cs_log(a, cs, LOG_WARN, "learn-address refused %s: %s; frames from it are dropped",
                   w->addr, res->why);
        answer(a, w, false);
    }
    msg_free(w->reply);
    free(w);
}

void acc_tap_mac_note(struct acceptor *a, struct peer *p, const uint8_t *data, size_t len)
{
    struct ctl_session *cs = p->ctl;
    struct status_mac m;
    struct acc_mac_wait *w;
    int err;

    if (len != sizeof(struct mac_note) || !is_live(cs, p)) {
        return;
    }
    w = calloc(1, sizeof(*w));
    if (w == NULL) {
        log_msg(LOG_ERR, "out of memory for a MAC of peer %u", p->peer_id);
        return;
    }
    memcpy(&w->note, data, sizeof(w->note));
    if (!w->note.is_ask) {
        took(a, cs, &w->note);
        free(w);
        return;
    }
    memcpy(m.mac, w->note.mac, MAC_LEN);
    m.vid = w->note.vid;
    acc_mac_str(&m, w->addr, sizeof(w->addr));
    w->a = a;
    w->cs = cs;
    w->p = p;
    w->reply = msg_new(MSG_MAC_ANSWER, p, &w->note, sizeof(w->note));
    if (w->reply == NULL) {
        free(w);
        return; /* the worker asks again after WORKER_MAC_ASK_MS */
    }
    err = acc_learn_run(a, w->note.prev_owner == MAC_TABLE_NONE ? "add" : "update", w->addr,
                        cs->client.cn, cs->hooks.env, cs->hooks.plugin_client, on_learned, w,
                        &w->run, NULL);
    if (err) {
        /* what cannot be asked is not learned either */
        acc_cs_log(a, cs, LOG_WARN, "cannot run learn-address for %s: %s", w->addr, strerror(-err));
        answer(a, w, false);
        free(w);
        return;
    }
    w->next = cs->macs.waits;
    cs->macs.waits = w;
}

void acc_tap_macs_unlearn(struct acceptor *a, struct ctl_session *cs)
{
    char addr[ACC_MAC_STR_MAX];
    int err;

    for (size_t i = 0; i < cs->macs.n && is_learn_wanted(a); i++) {
        acc_mac_str(&cs->macs.list[i], addr, sizeof(addr));
        err = acc_learn_run(a, "delete", addr, NULL, NULL, NULL, NULL, NULL, NULL, cs->client.cn);
        if (err) {
            log_msg(LOG_WARN, "%s: cannot run learn-address delete %s: %s", cs->client.cn, addr,
                    strerror(-err));
        }
    }
    cs->macs.n = 0;
}

void acc_tap_macs_free(struct ctl_session *cs)
{
    while (cs->macs.waits != NULL) {
        struct acc_mac_wait *w = cs->macs.waits;

        cs->macs.waits = w->next;
        hook_run_cancel(w->run);
        msg_free(w->reply);
        free(w);
    }
    free(cs->macs.list);
    memset(&cs->macs, 0, sizeof(cs->macs));
}
