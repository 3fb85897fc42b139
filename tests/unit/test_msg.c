/* tests/unit/test_msg.c: per-thread pools of MSG_PACKET messages (server/thread/msg.h).
 *
 * What a worker relies on: a handed-over packet's message comes from its own pool (no malloc),
 * msg_free() from any thread returns it, an empty pool or a packet larger than a slot gives
 * nothing and counts it (the hand-over is bounded by the pool), and messages given back by
 * several threads at once are all found again (a lost or doubled slot would show as a refusal
 * or as a slot handed out twice).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "server/data/peer.h"
#include "server/thread/msg.h"

#define N_SLOTS 64
#define CAP 2048

static bool is_slot(const struct msg_pool *pp, const struct msg *m)
{
    const uint8_t *p = (const uint8_t *)m;

    return m->pool == pp && p >= pp->block && p < pp->block + pp->n_slots * pp->slot_len &&
           (size_t)(p - pp->block) % pp->slot_len == 0;
}

static void slots_then_refusal(void **state)
{
    static uint8_t pkt[CAP + 1];
    struct msg_pool pp = {0};
    struct msg *m[N_SLOTS], *extra, *big;

    (void)state;
    for (size_t i = 0; i < sizeof(pkt); i++) {
        pkt[i] = (uint8_t)(i * 31 + 7);
    }
    assert_int_equal(msg_pool_init(&pp, N_SLOTS, CAP), 0);
    for (int i = 0; i < N_SLOTS; i++) {
        m[i] = msg_pool_take(&pp, MSG_PACKET, pkt, (size_t)(100 + i));
        assert_non_null(m[i]);
        assert_true(is_slot(&pp, m[i]));
        assert_int_equal(m[i]->type, MSG_PACKET);
        assert_int_equal(m[i]->len, 100 + i);
        assert_memory_equal(m[i]->data, pkt, 100 + i);
        assert_null(m[i]->peer);
        assert_false(m[i]->from_tun);
        for (int j = 0; j < i; j++) {
            assert_ptr_not_equal(m[i], m[j]);
        }
        m[i]->from_tun = true; /* must not leak into the slot's next use */
    }
    assert_int_equal(pp.n_refused, 0);
    extra = msg_pool_take(&pp, MSG_PACKET, pkt, 60); /* pool empty: nothing */
    assert_null(extra);
    assert_int_equal(pp.n_refused, 1);
    msg_free(m[0]); /* one back: one more can be taken */
    m[0] = msg_pool_take(&pp, MSG_PACKET, pkt, 60);
    assert_true(is_slot(&pp, m[0]));
    big = msg_pool_take(&pp, MSG_PACKET, pkt, CAP + 1); /* larger than a slot: nothing */
    assert_null(big);
    assert_int_equal(pp.n_refused, 2);
    msg_free(NULL);

    /* given back, the same slots come out again, cleared */
    for (int i = 0; i < N_SLOTS; i++) {
        msg_free(m[i]);
    }
    for (int i = 0; i < N_SLOTS; i++) {
        m[i] = msg_pool_take(&pp, MSG_PACKET, pkt, CAP);
        assert_true(is_slot(&pp, m[i]));
        assert_false(m[i]->from_tun);
        assert_int_equal(m[i]->len, CAP);
    }
    assert_int_equal(pp.n_refused, 2);
    for (int i = 0; i < N_SLOTS; i++) {
        msg_free(m[i]);
    }
    msg_pool_clear(&pp);
    assert_null(pp.block);
    msg_pool_clear(&pp); /* twice, and on a zeroed pool: no-op */
}

/* Four threads give messages back at once while the owner keeps taking them. */
#define N_THREADS 4
#define ROUNDS 2000

struct returner {
    pthread_t thread;
    struct msg *batch[N_SLOTS];
    size_t n;
    pthread_mutex_t mu; /* test scaffolding only: hands batches to the thread */
    pthread_cond_t cv;
    bool has_batch, stop;
};

static void *returner_main(void *arg)
{
    struct returner *r = arg;

    pthread_mutex_lock(&r->mu);
    for (;;) {
        while (!r->has_batch && !r->stop) {
            pthread_cond_wait(&r->cv, &r->mu);
        }
        if (r->has_batch) {
            for (size_t i = 0; i < r->n; i++) {
                msg_free(r->batch[i]);
            }
            r->has_batch = false;
            pthread_cond_broadcast(&r->cv);
        } else {
            break;
        }
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

static void concurrent_returns(void **state)
{
    static struct returner rs[N_THREADS];
    struct msg_pool pp = {0};
    uint8_t pkt[64] = {1, 2, 3};
    unsigned long n_taken = 0;

    (void)state;
    assert_int_equal(msg_pool_init(&pp, N_SLOTS, CAP), 0);
    for (int t = 0; t < N_THREADS; t++) {
        pthread_mutex_init(&rs[t].mu, NULL);
        pthread_cond_init(&rs[t].cv, NULL);
        rs[t].has_batch = rs[t].stop = false;
        assert_int_equal(pthread_create(&rs[t].thread, NULL, returner_main, &rs[t]), 0);
    }
    for (int round = 0; round < ROUNDS; round++) {
        int t = round % N_THREADS;
        struct returner *r = &rs[t];

        pthread_mutex_lock(&r->mu);
        while (r->has_batch) { /* the previous batch of this thread is back */
            pthread_cond_wait(&r->cv, &r->mu);
        }
        pthread_mutex_unlock(&r->mu);
        /* at most N_SLOTS / N_THREADS out per thread: the pool never runs dry */
        r->n = N_SLOTS / N_THREADS;
        for (size_t i = 0; i < r->n; i++) {
            r->batch[i] = msg_pool_take(&pp, MSG_PACKET, pkt, sizeof(pkt));
            assert_true(is_slot(&pp, r->batch[i]));
            assert_memory_equal(r->batch[i]->data, pkt, sizeof(pkt));
            n_taken++;
        }
        pthread_mutex_lock(&r->mu);
        r->has_batch = true;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
    }
    for (int t = 0; t < N_THREADS; t++) {
        pthread_mutex_lock(&rs[t].mu);
        rs[t].stop = true;
        pthread_cond_broadcast(&rs[t].cv);
        pthread_mutex_unlock(&rs[t].mu);
        pthread_join(rs[t].thread, NULL);
    }
    assert_int_equal(n_taken, (unsigned long)ROUNDS * (N_SLOTS / N_THREADS));
    assert_int_equal(pp.n_refused, 0);
    /* every slot is back exactly once: all N_SLOTS come out distinct, then the pool is dry */
    {
        struct msg *all[N_SLOTS], *extra;

        for (int i = 0; i < N_SLOTS; i++) {
            all[i] = msg_pool_take(&pp, MSG_PACKET, pkt, 1);
            assert_true(is_slot(&pp, all[i]));
            for (int j = 0; j < i; j++) {
                assert_ptr_not_equal(all[i], all[j]);
            }
        }
        extra = msg_pool_take(&pp, MSG_PACKET, pkt, 1);
        assert_null(extra);
        assert_int_equal(pp.n_refused, 1);
        for (int i = 0; i < N_SLOTS; i++) {
            msg_free(all[i]);
        }
    }
    msg_pool_clear(&pp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slots_then_refusal),
        cmocka_unit_test(concurrent_returns),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
