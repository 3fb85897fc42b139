/* server/thread/pktpool.h: per-thread pools of MSG_PACKET messages, so handing a packet to another
 * thread neither mallocs nor queues without bound.
 *
 * A thread that read a packet belonging to another thread (a datagram for a peer_id another
 * worker owns, a control packet for the acceptor, a TUN packet for another worker's client)
 * copies it into a message and posts it (server/data/peer.h, struct msg). pktpool_msg_new() takes
 * that message from the sending thread's own pool; whoever consumes it calls msg_free(), which
 * gives it back to the pool it came from. Only the owner thread takes from a pool; any thread
 * gives back (a lock-free stack that the owner empties with one atomic exchange, so no ABA).
 * When the pool is empty (its n_slots messages are all handed over and not consumed yet: the
 * receiver is behind) pktpool_msg_new() gives nothing and counts it: the caller drops the
 * packet. So the packets a thread has handed over and not seen consumed, and the memory they
 * take, never exceed its pool, whatever arrives (a flood with kernel steering off).
 */
#ifndef SERVER_THREAD_PKTPOOL_H
#define SERVER_THREAD_PKTPOOL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "server/thread/msgq.h"
#include "server/data/peer.h"

struct pktpool {
    struct msgq_node *free_local;         /* owner thread only */
    _Atomic(struct msgq_node *) returned; /* pushed by any thread, emptied by the owner */
    uint8_t *block;                       /* every slot, allocated once */
    size_t n_slots, slot_len, data_cap;
    size_t n_used;      /* slots [0, n_used) have been handed out at least once: the others have
                         * not been touched (their pages cost no memory until a burst needs them) */
    uint64_t n_refused; /* messages not given: pool empty or packet too long (owner writes) */
};

/* Allocate n_slots messages with data_cap data bytes each, in one block. pp must be zeroed.
 * Main thread, before the owner starts. 0 or -ENOMEM. */
int pktpool_init(struct pktpool *pp, size_t n_slots, size_t data_cap);

/* Free the block. Only once no thread uses pp or holds one of its messages any more (after all
 * threads are joined and their inboxes drained). Safe on a zeroed pool. */
void pktpool_clear(struct pktpool *pp);

/* A message of type with len bytes of data copied in (data may be NULL when len is 0): a free
 * slot of pp. Fields other than type, pool, len and data are zero. Owner thread only. NULL,
 * counted in n_refused, when the pool is empty or len > data_cap: the caller drops what it
 * wanted to hand over. Release with msg_free(), from any thread. Never allocates. */
struct msg *pktpool_msg_new(struct pktpool *pp, enum msg_type type, const void *data, size_t len);

/* Give m (a slot of m->pool) back to its pool. Any thread; m must not be used afterwards.
 * Called by msg_free(). */
void pktpool_put(struct msg *m);

#endif /* SERVER_THREAD_PKTPOOL_H */
