/* server/thread/peer_id.h: the layout of a peer_id, the only place that knows it.
 *
 * A client's peer_id (the 24-bit id in each P_DATA_V2 header, pushed as `peer-id`) names the
 * worker thread that owns its data channel, so that any thread, and the kernel's reuseport
 * steering program (server/data/udp.c, tested to agree in tests/unit/test_peer_id.c), can find
 * the owner from the packet alone: worker = peer_id % n_workers, and the worker keeps the peer
 * in slot local = peer_id / n_workers of its table. Pure arithmetic; any thread.
 */
#ifndef SERVER_THREAD_PEER_ID_H
#define SERVER_THREAD_PEER_ID_H

#include <stddef.h>
#include <stdint.h>

/* The peer_id of slot local of worker (0 <= worker < n_workers, n_workers >= 1). The caller
 * keeps local * n_workers + worker below 0xFFFFFF (server.c checks the table size at start). */
static inline uint32_t peer_id_make(size_t local, int worker, int n_workers)
{
    return (uint32_t)(local * (size_t)n_workers + (size_t)worker);
}

/* The worker that owns peer_id (n_workers >= 1). */
static inline int peer_id_worker(uint32_t peer_id, int n_workers)
{
    return (int)(peer_id % (uint32_t)n_workers);
}

/* The slot of peer_id in its worker's table (n_workers >= 1). */
static inline size_t peer_id_local(uint32_t peer_id, int n_workers)
{
    return peer_id / (uint32_t)n_workers;
}

#endif /* SERVER_THREAD_PEER_ID_H */
