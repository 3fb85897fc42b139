/* server/pktpool.h: per-thread pools of MSG_PACKET messages, so handing a packet to another
 * thread does not malloc.
 *
 * A worker that read a packet belonging to another thread (a datagram for a peer_id another
 * worker owns, a control packet for the acceptor, a TUN packet for another worker's client)
 * copies it into a message and posts it (server/peer.h, struct msg). pktpool_msg_new() takes
 * that message from the sending thread's own pool; whoever consumes it calls msg_free(), which
 * gives it back to the pool it came from. Only the owner thread takes from a pool; any thread
 * gives back (a lock-free stack that the owner empties with one atomic exchange, so no ABA).
 * When the pool is empty, or the packet is larger than its slots, pktpool_msg_new() falls back
 * to msg_new() (malloc) and counts it.
 */
#ifndef SERVER_PKTPOOL_H
#define SERVER_PKTPOOL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "server/msgq.h"
#include "server/peer.h"

struct pktpool {
    struct msgq_node *free_local;         /* owner thread only */
    _Atomic(struct msgq_node *) returned; /* pushed by any thread, emptied by the owner */
    uint8_t *block;                       /* every slot, allocated once */
    size_t n_slots, slot_len, data_cap;
    uint64_t n_fallbacks; /* messages that had to be malloc'd (owner thread writes) */
};

/* Allocate n_slots messages with data_cap data bytes each, in one block. pp must be zeroed.
 * Main thread, before the owner starts. 0 or -ENOMEM. */
int pktpool_init(struct pktpool *pp, size_t n_slots, size_t data_cap);

/* Free the block. Only once no thread uses pp or holds one of its messages any more (after all
 * threads are joined and their inboxes drained). Safe on a zeroed pool. */
void pktpool_clear(struct pktpool *pp);

/* A message of type with len bytes of data copied in: a free slot of pp, or (pool empty, or
 * len > data_cap) msg_new()'s malloc. Fields other than type, len and data are zero. Owner
 * thread only. NULL only if the fallback malloc fails. Release with msg_free(). */
struct msg *pktpool_msg_new(struct pktpool *pp, enum msg_type type, const void *data, size_t len);

/* Give m (a slot of m->pool) back to its pool. Any thread; m must not be used afterwards.
 * Called by msg_free(). */
void pktpool_put(struct msg *m);

#endif /* SERVER_PKTPOOL_H */
