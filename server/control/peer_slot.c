/* server/control/peer_slot.c: a peer's peer-id slot and who holds its addresses: picking a
 * slot, handing it to the same client's next session, releasing it with its address and routes,
 * and broadcasting route changes to the workers. Acceptor thread only. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>

#include "server/data/peer.h"
#include "server/server.h"
#include "server/thread/peer_id.h"

#include "server/control/acceptor_internal.h"

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

void acc_release_peer_slot(struct acceptor *a, struct peer *p)
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
        /* an ifconfig-push address outside the pool: routed as a /32 (assign.c) */
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

int acc_pick_peer_slot(struct acceptor *a, struct peer *p)
{
    struct server *srv = a->srv;
    int best = 0;

    for (int i = 1; i < srv->n_workers; i++) {
        if (a->n_worker_peers[i] < a->n_worker_peers[best]) {
            best = i;
        }
    }
    for (size_t local = 0; local < srv->max_local_peers; local++) {
        if (!a->local_used[best][local]) {
            a->local_used[best][local] = true;
            a->n_worker_peers[best]++;
            p->worker = best;
            p->peer_id = peer_id_make(local, best, srv->n_workers);
            return 0;
        }
    }
    return -ENOSPC;
}
