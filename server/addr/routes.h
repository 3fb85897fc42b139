/* server/addr/routes.h: who holds each tunnel address, in one place.
 *
 * Which peer a tunnel address belongs to is kept in several structures, each for a reader that
 * needs it fast: the pool's entries (free or taken), the holder of each entry (the acceptor's
 * view: which peer's it is, installed or not), the owner of each entry (a lock-free array the
 * workers read per packet: IPv4 pool addresses), the route table (every IPv6 address, every
 * ifconfig-push address outside the pool and every iroute, copied into each worker by
 * announcements), and the TUN steering map (the kernel's choice of queue for a host address).
 * This module is the only writer of all of them, so a client's arrival, hand-over and departure
 * change them together: IPv4, IPv6 and iroutes through the same calls.
 *
 * Written by the acceptor thread only. Workers read the owner array (routes_pool_owner) at any
 * time and apply announcements to their own table. Side effects on other threads and on the
 * kernel go through the ops the owner of the server wires in (the mailbox, the steering map),
 * so that this folder needs nothing above it.
 */
#ifndef SERVER_ADDR_ROUTES_H
#define SERVER_ADDR_ROUTES_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/addr/pool.h"
#include "server/addr/vroute.h"

struct peer; /* server/data/peer.h: only its pointer is kept, as the holder of an entry */

/* What a change of ownership does outside this module. ctx is passed back; every function
 * is called on the acceptor thread. */
struct routes_ops {
    void *ctx;
    /* every worker's route table: add key for peer_id, or drop it if it is still peer_id's */
    void (*announce)(void *ctx, const struct vroute_key *key, uint32_t peer_id, bool is_add);
    /* the TUN steering map: packets to host address addr (family 4 or 6, network order) go
     * to worker's queue. 0 or a negative errno (the packets are then handed over) */
    int (*steer_set)(void *ctx, int family, const uint8_t *addr, int worker);
    void (*steer_del)(void *ctx, int family, const uint8_t *addr);
};

struct routes {
    struct ip_pool *pool;      /* entries (free or taken): written here after start-up */
    _Atomic uint32_t *owner;   /* by pool entry: peer_id + 1 that packets go to, 0 for none */
    size_t n_owner;            /* IP_POOL_MAX with a pool (it may grow), else 0 */
    struct peer **holder;      /* by pool entry: whose it is (acceptor's view), or NULL */
    struct vroute_table table; /* what was announced: the acceptor's copy of the workers' tables */
    struct routes_ops ops;
};

/* Ownership of pool's entries (pool outlives r) and an empty route table. Main thread, at
 * start-up. 0 or -ENOMEM (r is then safe to free). */
int routes_init(struct routes *r, struct ip_pool *pool, const struct routes_ops *ops);

/* Free r's arrays and table (not the pool). Safe on a zeroed or failed struct, and twice. */
void routes_free(struct routes *r);

/* The peer_id IPv4 address addr (host order) is routed to through the pool, or VROUTE_NONE
 * (outside the pool, or no one installed there). Any thread: one acquire load. */
static inline uint32_t routes_pool_owner(const struct routes *r, uint32_t addr)
{
    size_t idx = ip_pool_index_within(r->pool, addr, r->n_owner);
    uint32_t owner;

    if (idx == SIZE_MAX || idx >= r->n_owner) {
        return VROUTE_NONE;
    }
    owner = atomic_load_explicit(&r->owner[idx], memory_order_acquire);
    return owner == 0 ? VROUTE_NONE : owner - 1;
}

/* Whose pool entry idx is, or NULL (also for an index outside the pool). */
struct peer *routes_holder(const struct routes *r, size_t idx);

/* A dynamic address for p: the pool entry ip_pool_acquire() picks for cn goes to p (*idx).
 * Nothing is routed to it until routes_route_entry(). 0 or -ENOSPC (pool exhausted). */
int routes_acquire(struct routes *r, const char *cn, struct peer *p, size_t *idx);

/* The free entry idx goes to p (an ifconfig-push address inside the pool). 0 or -EBUSY when
 * another client took it from the pool. */
int routes_take(struct routes *r, size_t idx, struct peer *p);

/* Entry idx passes from its holder (a closing session of the same client) to p; the entry stays
 * taken. Nothing routes the address to the old peer-id any more (it may be another client's
 * peer-id before p is installed); routes_route_entry() routes it to p. */
void routes_take_over(struct routes *r, size_t idx, struct peer *p);

/* Keep entry idx out of the dynamic allocation (an ifconfig-push address). 0 or -EINVAL for an
 * index outside the pool. */
int routes_reserve(struct routes *r, size_t idx);

/* Route the address of entry idx (p's: its holder) to peer_id on worker: workers send its
 * packets to that peer, the kernel steers them to that worker's queue. VROUTE_NONE routes it
 * nowhere (learn-address refused it) while p keeps the entry. Returns the steering map's error
 * (0 or a negative errno; the packets are then handed over between workers). */
int routes_route_entry(struct routes *r, size_t idx, uint32_t peer_id, int worker);

/* Give entry idx back if p holds it (not if it was taken over): nothing is routed there, the
 * entry is free. Returns whether it was p's. */
bool routes_release_entry(struct routes *r, size_t idx, const struct peer *p);

/* Route key to peer_id on worker: recorded here, announced to every worker, and a host route
 * (/32, /128) steered to that worker's queue. The newest claim of a prefix wins. 0, -ENOMEM
 * (not recorded: nothing was announced), or the steering map's negative errno (announced and
 * routed; the packets are handed over between workers). */
int routes_add(struct routes *r, const struct vroute_key *key, uint32_t peer_id, int worker);

/* Withdraw key if it is still routed to peer_id (another client that claimed it since keeps
 * it): dropped here, from the steering map, and announced to every worker. */
void routes_del(struct routes *r, const struct vroute_key *key, uint32_t peer_id);

/* The peer_id key (an exact prefix) is routed to now, or VROUTE_NONE. */
uint32_t routes_get(const struct routes *r, const struct vroute_key *key);

#endif /* SERVER_ADDR_ROUTES_H */
