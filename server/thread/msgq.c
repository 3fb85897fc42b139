/* server/thread/msgq.c: lock-free MPSC queue (Vyukov's intrusive algorithm). */
#include "server/thread/msgq.h"

#include <stddef.h>

void msgq_init(struct msgq *q)
{
    atomic_store_explicit(&q->stub.next, NULL, memory_order_relaxed);
    atomic_store_explicit(&q->head, &q->stub, memory_order_relaxed);
    q->tail = &q->stub;
}

void msgq_push(struct msgq *q, struct msgq_node *n)
{
    struct msgq_node *prev;

    atomic_store_explicit(&n->next, NULL, memory_order_relaxed);
    prev = atomic_exchange_explicit(&q->head, n, memory_order_acq_rel);
    atomic_store_explicit(&prev->next, n, memory_order_release);
}

struct msgq_node *msgq_pop(struct msgq *q)
{
    struct msgq_node *tail = q->tail;
    struct msgq_node *next = atomic_load_explicit(&tail->next, memory_order_acquire);

    if (tail == &q->stub) {
        if (!next) {
            return NULL;
        }
        q->tail = next;
        tail = next;
        next = atomic_load_explicit(&next->next, memory_order_acquire);
    }
    if (next) {
        q->tail = next;
        return tail;
    }
    if (tail != atomic_load_explicit(&q->head, memory_order_acquire)) {
        return NULL; /* a producer is between its exchange and its link */
    }
    msgq_push(q, &q->stub);
    next = atomic_load_explicit(&tail->next, memory_order_acquire);
    if (next) {
        q->tail = next;
        return tail;
    }
    return NULL;
}
