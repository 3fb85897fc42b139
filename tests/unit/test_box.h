/* tests/unit/test_box.h: a mailbox box (server/thread/mailbox.h) on a test's own loop, for the
 * modules that answer through one (server/hooks: plugin calls come back as MSG_CALL messages):
 * the loop's wake-up runs them, as the acceptor's inbox does. Header-only, for the unit tests.
 */
#ifndef TESTS_UNIT_TEST_BOX_H
#define TESTS_UNIT_TEST_BOX_H

#include <stdbool.h>

#include <uv.h>

#include "server/thread/mailbox.h"

struct test_box {
    struct mailbox mb;
    uv_async_t wake;
    bool is_closed;
};

#define TEST_BOX_WHO MAILBOX_ACCEPTOR /* the box the module under test is given */

static void test_box_on_wake(uv_async_t *h)
{
    struct test_box *b = h->data;
    struct msg *m;

    while ((m = mailbox_take(&b->mb, TEST_BOX_WHO)) != NULL) {
        if (m->type == MSG_CALL) {
            msg_call_run(m);
        } else {
            msg_free(m);
        }
    }
}

/* A box whose messages loop (initialised) runs. Its handle keeps the loop alive until
 * test_box_close. */
static inline void test_box_open(struct test_box *b, uv_loop_t *loop)
{
    b->is_closed = false;
    assert_int_equal(mailbox_init(&b->mb, 1), 0);
    assert_int_equal(uv_async_init(loop, &b->wake, test_box_on_wake), 0);
    b->wake.data = b;
    mailbox_attach(&b->mb, TEST_BOX_WHO, &b->wake);
}

/* After the module's shutdown, before the loop's last run: what comes back later is discarded. */
static inline void test_box_close(struct test_box *b)
{
    if (!b->is_closed) {
        mailbox_close(&b->mb, TEST_BOX_WHO);
        uv_close((uv_handle_t *)&b->wake, NULL);
        b->is_closed = true;
    }
}

/* After the module is freed (its threads joined), before loop is closed: closes the box if
 * that was not done, lets the loop finish, frees the box. */
static inline void test_box_free(struct test_box *b, uv_loop_t *loop)
{
    struct msg *m;

    test_box_close(b);
    uv_run(loop, UV_RUN_DEFAULT);
    while ((m = mailbox_take(&b->mb, TEST_BOX_WHO)) != NULL) {
        msg_discard(m);
    }
    mailbox_free(&b->mb);
}

#endif /* TESTS_UNIT_TEST_BOX_H */
