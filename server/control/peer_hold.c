/* server/control/peer_hold.c: what a client's peer holds while it lives: its peer-id slot
 * (server/thread/peer_slot.h), its pool address and its routes (server/addr/routes.h, the one
 * writer of address ownership). Picking a slot, routing it all at install, handing the slot to
 * the same client's next session, and giving everything back. Acceptor thread only. */
#include <errno.h>
#include <stdlib.h>

#include "server/addr/routes.h"
#include "server/data/peer.h"
#include "server/data/tcp.h"
#include "server/thread/peer_id.h"
#include "server/thread/peer_slot.h"

#include "server/control/acceptor_internal.h"

/* peer_id's entry in a->sessions.by_peer_id (the slot layout of peer_slot.h). */
static struct peer **holder_of(struct acceptor *a, uint32_t peer_id)
{
    int worker = peer_id_worker(peer_id, a->env->n_workers);
    size_t local = peer_id_local(peer_id, a->env->n_workers);

    if (worker < 0 || worker >= a->env->n_workers || local >= a->env->max_local_peers) {
        return NULL;
    }
    return &a->sessions.by_peer_id[(size_t)worker * a->env->max_local_peers + local];
}

struct peer *acc_peer_by_id(struct acceptor *a, uint32_t peer_id)
{
    struct peer **h = holder_of(a, peer_id);

    return h ? *h : NULL;
}

int acc_pick_peer_slot(struct acceptor *a, struct peer *p)
{
    uint32_t peer_id;

    /* a TCP client's data channel goes to the worker that holds its connection */
    if (p->link ? peer_slots_pick_on(&a->sessions.slots, tcp_link_worker(p->link), &peer_id)
                : peer_slots_pick(&a->sessions.slots, &peer_id)) {
        return -ENOSPC;
    }
    p->peer_id = peer_id;
    p->worker = peer_id_worker(peer_id, a->env->n_workers);
    *holder_of(a, peer_id) = p; /* a slot peer_slots gave out is in range */
    return 0;
}

static void withdraw_routes(struct acceptor *a, struct peer *p)
{
    for (size_t i = 0; i < p->n_routes; i++) {
        routes_del(a->env->routes, &p->routes[i], p->peer_id);
    }
    free(p->routes);
    p->routes = NULL;
    p->n_routes = 0;
}

int acc_route_peer(struct acceptor *a, struct peer *p, bool is_vaddr_unlearned)
{
    struct routes *r = a->env->routes;
    int err = 0, e;

    if (p->pool_index != SIZE_MAX) {
        /* unlearned: nothing routed to it, not even to a closing session it took the
         * address from (with the same peer-id after a hand-over) */
        err = routes_route_entry(r, p->pool_index, is_vaddr_unlearned ? VROUTE_NONE : p->peer_id,
                                 p->worker);
    }
    for (size_t i = 0; i < p->n_routes; i++) {
        e = routes_add(r, &p->routes[i], p->peer_id, p->worker);
        if (e == -ENOMEM) {
            log_msg(LOG_ERR, "out of memory for the route of peer %u", p->peer_id);
        } else if (e) {
            err = e;
        }
    }
    return err;
}

void acc_peer_slot_hand_over(struct acceptor *a, struct peer *prev, struct peer *p)
{
    withdraw_routes(a, prev);
    prev->is_slot_handed_over = true;
    p->peer_id = prev->peer_id;
    p->worker = prev->worker;
    *holder_of(a, p->peer_id) = p;
}

void acc_release_peer_slot(struct acceptor *a, struct peer *p)
{
    /* A client that reconnected with the same fixed address may hold it already: then the
     * entry is left to it. An ifconfig-push address outside the pool is one of the routes. */
    if (p->pool_index != SIZE_MAX) {
        (void)routes_release_entry(a->env->routes, p->pool_index, p);
    }
    withdraw_routes(a, p);
    if (!p->is_slot_handed_over) { /* else the peer-id is the next session's now */
        struct peer **h = holder_of(a, p->peer_id);

        if (*h == p) {
            *h = NULL;
        }
        peer_slots_release(&a->sessions.slots, p->peer_id);
    }
    a->sessions.n_clients--;
}

void acc_peer_on_free(struct acceptor *a, struct ctl_session *cs)
{
    if (cs->peer) {
        cs->peer->ctl = NULL;
        if (!cs->is_peer_live) {
            acc_release_peer_slot(a, cs->peer);
            acc_free_peer(cs->peer);
        }
        /* else: freed when the worker's MSG_GONE arrives (worker_events.c) */
    }
}
