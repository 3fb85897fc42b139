/* tests/unit/test_mailbox.c: the boxes threads post to (server/thread/mailbox.h), with real
 * threads and libuv loops: every message posted by any thread reaches the box it was addressed
 * to exactly once and wakes that box's loop; a broadcast reaches every worker once. Also run
 * under ThreadSanitizer by `scripts/test.sh --tsan`.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <uv.h>

#include "server/thread/mailbox.h"

#define N_WORKERS 3
#define N_BOXES (N_WORKERS + 1)
#define N_PRODUCERS 3
#define N_PER_PRODUCER 20000
#define N_BROADCASTS 100

/* A thread that owns a box: its loop wakes on its async handle and counts what it takes. */
struct owner {
    struct mailbox *mb;
    int who; /* MAILBOX_ACCEPTOR or a worker index */
    uv_loop_t loop;
    uv_async_t wake;
    uv_thread_t thread;
    size_t expected, n_taken, n_misrouted, n_broadcast;
};

static void on_wake(uv_async_t *h)
{
    struct owner *o = h->data;
    struct msg *m;

    while ((m = mailbox_take(o->mb, o->who)) != NULL) {
        if (m->type == MSG_ROUTE_ADD) {
            o->n_broadcast++;
        } else if ((int)m->peer_id != o->who) {
            o->n_misrouted++;
        }
        o->n_taken++;
        msg_free(m);
    }
    if (o->n_taken == o->expected) {
        uv_close((uv_handle_t *)&o->wake, NULL);
    }
}

static void owner_run(void *arg)
{
    struct owner *o = arg;

    uv_run(&o->loop, UV_RUN_DEFAULT);
}

struct producer {
    pthread_t thread;
    struct mailbox *mb;
    int index;
};

static void *produce(void *arg)
{
    struct producer *p = arg;

    for (int i = 0; i < N_PER_PRODUCER; i++) {
        int to = (i + p->index) % N_BOXES - 1; /* -1 is the acceptor */
        struct msg *m = msg_new(MSG_STATS, NULL, NULL, 0);

        assert_non_null(m);
        m->peer_id = (uint32_t)to; /* the test's record of where it was sent */
        mailbox_post(p->mb, to, m);
    }
    if (p->index == 0) {
        for (int i = 0; i < N_BROADCASTS; i++) {
            assert_int_equal(mailbox_post_workers(p->mb, MSG_ROUTE_ADD, 5, "k", 1), 0);
        }
    }
    return NULL;
}

static void every_message_reaches_its_box_once(void **state)
{
    struct mailbox mb = {0};
    struct owner owners[N_BOXES];
    struct producer prod[N_PRODUCERS];
    size_t per_box = (size_t)N_PRODUCERS * N_PER_PRODUCER / N_BOXES;

    (void)state;
    _Static_assert(N_PER_PRODUCER % N_BOXES == 0, "each producer sends to every box evenly");
    assert_int_equal(mailbox_init(&mb, N_WORKERS), 0);
    for (int i = 0; i < N_BOXES; i++) {
        struct owner *o = &owners[i];

        memset(o, 0, sizeof(*o));
        o->mb = &mb;
        o->who = i - 1;
        o->expected = per_box + (o->who == MAILBOX_ACCEPTOR ? 0 : N_BROADCASTS);
        assert_int_equal(uv_loop_init(&o->loop), 0);
        assert_int_equal(uv_async_init(&o->loop, &o->wake, on_wake), 0);
        o->wake.data = o;
        mailbox_attach(&mb, o->who, &o->wake);
    }
    for (int i = 0; i < N_BOXES; i++) {
        assert_int_equal(uv_thread_create(&owners[i].thread, owner_run, &owners[i]), 0);
    }
    for (int i = 0; i < N_PRODUCERS; i++) {
        prod[i].mb = &mb;
        prod[i].index = i;
        assert_int_equal(pthread_create(&prod[i].thread, NULL, produce, &prod[i]), 0);
    }
    for (int i = 0; i < N_PRODUCERS; i++) {
        pthread_join(prod[i].thread, NULL);
    }
    /* each loop ends once it has taken all it was sent (a lost message hangs here: the test
     * times out) */
    for (int i = 0; i < N_BOXES; i++) {
        uv_thread_join(&owners[i].thread);
    }
    for (int i = 0; i < N_BOXES; i++) {
        struct owner *o = &owners[i];

        assert_int_equal(o->n_taken, o->expected);
        assert_int_equal(o->n_misrouted, 0);
        assert_int_equal(o->n_broadcast, o->who == MAILBOX_ACCEPTOR ? 0 : N_BROADCASTS);
        assert_null(mailbox_take(&mb, o->who)); /* nothing more than was sent */
        assert_int_equal(uv_loop_close(&o->loop), 0);
    }
    mailbox_free(&mb);
    mailbox_free(&mb);
}

/* A box whose owner stopped takes nothing more: the message is released (ASan's leak check
 * would name it otherwise) and the owner's handle, gone with its loop, is not touched. */
static void closed_box_releases_posts(void **state)
{
    struct mailbox mb = {0};
    struct msg *m = msg_new(MSG_STATS, NULL, NULL, 0);

    (void)state;
    assert_non_null(m);
    assert_int_equal(mailbox_init(&mb, 1), 0);
    mailbox_close(&mb, 0); /* never attached: a post would wake a NULL handle */
    mailbox_post(&mb, 0, m);
    assert_null(mailbox_take(&mb, 0));
    mailbox_free(&mb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_message_reaches_its_box_once),
        cmocka_unit_test(closed_box_releases_posts),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
