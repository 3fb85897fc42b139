/* server/thread/peer_slot.h: which peer_ids are in use, and which worker gets the next client.
 *
 * A peer_id names its worker and its slot in that worker's table (server/thread/peer_id.h). A new
 * client goes to the worker with the fewest clients (the lowest index among equals) and takes
 * the lowest free slot there, so peer_ids stay small and are reused as clients leave, as
 * openvpn 2.6 reuses its lowest free instance. Acceptor thread only (no lock).
 */
#ifndef SERVER_THREAD_PEER_SLOT_H
#define SERVER_THREAD_PEER_SLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct peer_slots {
    int n_workers;
    size_t max_local;    /* slots per worker */
    bool *is_used;       /* [worker * max_local + local] */
    size_t *n_used;      /* by worker */
    size_t *lowest_free; /* by worker: no slot below it is free */
};

/* n_workers (>= 1) workers of max_local slots each, all free. The caller keeps
 * max_local * n_workers within the peer-id space (server.c). 0 or -ENOMEM (then safe to free). */
int peer_slots_init(struct peer_slots *s, int n_workers, size_t max_local);

/* Free what init allocated. Safe on a zeroed or failed struct, and twice. */
void peer_slots_free(struct peer_slots *s);

/* Take a slot for a new client: *peer_id gets its id (its worker is peer_id_worker()). 0, or
 * -ENOSPC when every slot of the least loaded worker (so of all) is taken. */
int peer_slots_pick(struct peer_slots *s, uint32_t *peer_id);

/* Take a slot of worker (0 <= worker < n_workers) for a new client whose connection that worker
 * holds already (a TCP client): *peer_id gets its id. 0, or -ENOSPC when that worker's slots are
 * all taken. */
int peer_slots_pick_on(struct peer_slots *s, int worker, uint32_t *peer_id);

/* Give peer_id's slot back (it must be taken). */
void peer_slots_release(struct peer_slots *s, uint32_t peer_id);

/* How many slots of worker are taken. */
size_t peer_slots_count(const struct peer_slots *s, int worker);

#endif /* SERVER_THREAD_PEER_SLOT_H */
