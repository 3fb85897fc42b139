/* server/thread/msgq.h: a lock-free multi-producer single-consumer message queue between threads.
 *
 * Any thread may push; only the thread that owns the queue pops. Nodes are intrusive: embed a
 * struct msgq_node first in a message struct. The pusher hands the message's ownership to the
 * consumer. After pushing, wake the consumer with uv_async_send() on its async handle. The
 * algorithm is D. Vyukov's intrusive MPSC queue (one atomic exchange per push).
 */
#ifndef SERVER_THREAD_MSGQ_H
#define SERVER_THREAD_MSGQ_H

#include <stdatomic.h>
#include <stdbool.h>

struct msgq_node {
    _Atomic(struct msgq_node *) next;
};

struct msgq {
    _Atomic(struct msgq_node *) head; /* producers swap themselves in here */
    struct msgq_node *tail;           /* consumer only */
    struct msgq_node stub;
};

/* Initialise caller-owned q (empty). Cannot fail. */
void msgq_init(struct msgq *q);

/* Append n; any thread. Ownership of the containing message passes to the consumer. */
void msgq_push(struct msgq *q, struct msgq_node *n);

/* Oldest message, or NULL if none is complete yet (a push still in progress is picked up on the
 * next wake-up). Consumer thread only. */
struct msgq_node *msgq_pop(struct msgq *q);

#endif /* SERVER_THREAD_MSGQ_H */
