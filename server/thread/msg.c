/* server/thread/msg.c: messages between threads, from the heap or a per-thread pool. */
#include "server/thread/msg.h"

#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

struct msg *msg_new(enum msg_type type, struct peer *peer, const void *data, size_t len)
{
    struct msg *m = calloc(1, sizeof(*m) + len);

    if (!m) {
        return NULL;
    }
    m->type = type;
    m->peer = peer;
    m->len = len;
    if (data && len) {
        memcpy(m->data, data, len);
    }
    return m;
}

struct msg *msg_call_new(void (*run)(void *arg), void (*discard)(void *arg), void *arg)
{
    struct msg_call call = {run, discard, arg};

    return msg_new(MSG_CALL, NULL, &call, sizeof(call));
}

void msg_call_run(struct msg *m)
{
    struct msg_call call;

    memcpy(&call, m->data, sizeof(call));
    msg_free(m);
    call.run(call.arg);
}

void msg_discard(struct msg *m)
{
    if (m && m->type == MSG_CALL && m->len == sizeof(struct msg_call)) {
        struct msg_call call;

        memcpy(&call, m->data, sizeof(call));
        call.discard(call.arg);
    }
    msg_free(m);
}

void msg_free(struct msg *m)
{
    if (!m) {
        return;
    }
    if (m->pool) {
        msg_pool_put(m);
    } else {
        free(m);
    }
}

int msg_pool_init(struct msg_pool *pp, size_t n_slots, size_t data_cap)
{
    size_t slot_len = sizeof(struct msg) + data_cap;

    slot_len = (slot_len + alignof(max_align_t) - 1) / alignof(max_align_t) * alignof(max_align_t);
    pp->block = calloc(n_slots, slot_len);
    if (!pp->block) {
        return -ENOMEM;
    }
    pp->n_slots = n_slots;
    pp->slot_len = slot_len;
    pp->data_cap = data_cap;
    pp->n_used = 0;
    pp->free_local = NULL;
    atomic_init(&pp->returned, NULL);
    return 0;
}

void msg_pool_clear(struct msg_pool *pp)
{
    free(pp->block);
    memset(pp, 0, sizeof(*pp));
}

struct msg *msg_pool_take(struct msg_pool *pp, enum msg_type type, const void *data, size_t len)
{
    struct msgq_node *n;
    struct msg *m;

    if (len > pp->data_cap) {
        pp->n_refused++;
        return NULL;
    }
    if (!pp->free_local) {
        /* everything given back since the last time, in one exchange */
        pp->free_local = atomic_exchange_explicit(&pp->returned, NULL, memory_order_acquire);
    }
    n = pp->free_local;
    if (n) {
        pp->free_local = atomic_load_explicit(&n->next, memory_order_relaxed);
    } else if (pp->n_used < pp->n_slots) {
        n = (struct msgq_node *)(void *)(pp->block + pp->n_used++ * pp->slot_len);
    } else {
        pp->n_refused++; /* everything is handed over and not consumed yet */
        return NULL;
    }
    m = (struct msg *)n;
    memset(m, 0, sizeof(*m));
    m->type = type;
    m->pool = pp;
    m->len = len;
    if (data && len) {
        memcpy(m->data, data, len);
    }
    return m;
}

void msg_pool_put(struct msg *m)
{
    struct msg_pool *pp = m->pool;
    struct msgq_node *head = atomic_load_explicit(&pp->returned, memory_order_relaxed);

    do {
        atomic_store_explicit(&m->node.next, head, memory_order_relaxed);
    } while (!atomic_compare_exchange_weak_explicit(&pp->returned, &head, &m->node,
                                                    memory_order_release, memory_order_relaxed));
}
