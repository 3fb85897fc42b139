/* tests/unit/test_msgq.c: the multi-producer single-consumer queue (server/thread/msgq.h) with
 * real threads: every message pushed is popped exactly once, and each producer's messages come
 * out in the order it pushed them (FIFO per producer), however the pushes interleave. Also run
 * under ThreadSanitizer by `scripts/test.sh --tsan`.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "server/thread/msgq.h"

#define N_PRODUCERS 4
#define N_PER_PRODUCER 50000

struct item {
    struct msgq_node node; /* first: popped nodes are cast back */
    int producer;
    int seq;
};

struct producer {
    pthread_t thread;
    struct msgq *q;
    struct item *items; /* N_PER_PRODUCER, owned by the test */
    int index;
};

static void *produce(void *arg)
{
    struct producer *p = arg;

    for (int i = 0; i < N_PER_PRODUCER; i++) {
        p->items[i].producer = p->index;
        p->items[i].seq = i;
        msgq_push(p->q, &p->items[i].node);
        if (i % 1024 == 0) {
            sched_yield(); /* let the others in between, so pushes interleave */
        }
    }
    return NULL;
}

static void empty_queue_pops_nothing(void **state)
{
    struct msgq q;
    struct item a = {.seq = 1}, b = {.seq = 2};

    (void)state;
    msgq_init(&q);
    assert_null(msgq_pop(&q));
    msgq_push(&q, &a.node);
    msgq_push(&q, &b.node);
    assert_ptr_equal(msgq_pop(&q), &a.node);
    assert_ptr_equal(msgq_pop(&q), &b.node);
    assert_null(msgq_pop(&q));
    /* usable again after running empty */
    msgq_push(&q, &a.node);
    assert_ptr_equal(msgq_pop(&q), &a.node);
    assert_null(msgq_pop(&q));
}

static void producers_under_threads(void **state)
{
    struct msgq q;
    struct producer prod[N_PRODUCERS];
    int next_seq[N_PRODUCERS] = {0};
    size_t n_popped = 0;

    (void)state;
    msgq_init(&q);
    for (int i = 0; i < N_PRODUCERS; i++) {
        prod[i].q = &q;
        prod[i].index = i;
        prod[i].items = calloc(N_PER_PRODUCER, sizeof(*prod[i].items));
        assert_non_null(prod[i].items);
    }
    for (int i = 0; i < N_PRODUCERS; i++) {
        assert_int_equal(pthread_create(&prod[i].thread, NULL, produce, &prod[i]), 0);
    }
    /* The consumer runs while the producers push: a NULL only means "nothing complete yet". */
    while (n_popped < (size_t)N_PRODUCERS * N_PER_PRODUCER) {
        struct msgq_node *n = msgq_pop(&q);
        struct item *it;

        if (n == NULL) {
            sched_yield();
            continue;
        }
        it = (struct item *)n;
        assert_in_range(it->producer, 0, N_PRODUCERS - 1);
        assert_int_equal(it->seq, next_seq[it->producer]); /* once each, in order */
        next_seq[it->producer]++;
        n_popped++;
    }
    for (int i = 0; i < N_PRODUCERS; i++) {
        assert_int_equal(pthread_join(prod[i].thread, NULL), 0);
        assert_int_equal(next_seq[i], N_PER_PRODUCER);
        free(prod[i].items);
    }
    assert_null(msgq_pop(&q));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_queue_pops_nothing),
        cmocka_unit_test(producers_under_threads),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
