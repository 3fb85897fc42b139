/* tests/unit/test_moderation.c: when a worker polls its UDP socket instead of waking for each
 * datagram (server/data/moderation.h). Time is passed in; nothing here is timed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "server/data/moderation.h"

#define PERIOD_US 400

/* A batch of n_long datagrams of 1400 bytes and n_short of 90 (a TCP ACK or a ping, sealed). */
static struct moderation_batch batch(const struct moderation *m, unsigned n_long, unsigned n_short)
{
    struct moderation_batch b = {0, 0};

    for (unsigned i = 0; i < n_long; i++) {
        moderation_count(m, &b, 1400);
    }
    for (unsigned i = 0; i < n_short; i++) {
        moderation_count(m, &b, 90);
    }
    return b;
}

static void counts_bulk_by_length(void **state)
{
    struct moderation m;
    struct moderation_batch b = {0, 0};

    (void)state;
    moderation_init(&m, PERIOD_US, MODERATION_BULK_LEN);
    moderation_count(&m, &b, MODERATION_BULK_LEN - 1);
    moderation_count(&m, &b, MODERATION_BULK_LEN);
    moderation_count(&m, &b, 0);
    assert_int_equal(b.n, 3);
    assert_int_equal(b.n_bulk, 1);
}

/* A download: the client sends only ACKs, many per wakeup; they must never wait for a poll. */
static void short_datagrams_never_poll(void **state)
{
    struct moderation m;
    struct moderation_batch b;
    uint64_t now = 1000000;

    (void)state;
    moderation_init(&m, PERIOD_US, MODERATION_BULK_LEN);
    for (int i = 0; i < 1000; i++, now += 50) {
        b = batch(&m, 0, 32);
        assert_false(moderation_on_wakeup(&m, &b, now));
    }
    assert_false(m.is_polling);
}

/* An upload: batches of long datagrams start polling, and it goes on while polls find them. */
static void bulk_batches_poll_until_they_stop(void **state)
{
    struct moderation m;
    struct moderation_batch b;
    uint64_t now = 1000000;

    (void)state;
    moderation_init(&m, PERIOD_US, MODERATION_BULK_LEN);
    b = batch(&m, MODERATION_MIN_BULK, 1);
    assert_true(moderation_on_wakeup(&m, &b, now));
    assert_true(m.is_polling);
    for (int i = 0; i < 100; i++) {
        now += PERIOD_US;
        b = batch(&m, 16, 2);
        assert_false(moderation_on_poll(&m, &b, now));
        assert_true(m.is_polling);
    }
    /* it slows down to one long datagram per period: still polling (no switch per datagram) */
    now += PERIOD_US;
    b = batch(&m, 1, 0);
    assert_false(moderation_on_poll(&m, &b, now));
    assert_true(m.is_polling);
    /* the bulk stream ends: a poll finds only an ACK and a ping, so back to waking at once */
    now += PERIOD_US;
    b = batch(&m, 0, 2);
    assert_true(moderation_on_poll(&m, &b, now));
    assert_false(m.is_polling);
    /* a ping on its own then does not start polling */
    now += 20000;
    b = batch(&m, 0, 1);
    assert_false(moderation_on_wakeup(&m, &b, now));
}

/* A single long datagram polls only when another came less than two periods before. */
static void single_bulk_datagrams_poll_only_when_frequent(void **state)
{
    struct moderation m;
    struct moderation_batch b;
    uint64_t now = 1000000;

    (void)state;
    moderation_init(&m, PERIOD_US, MODERATION_BULK_LEN);
    /* a video call: one long datagram every 20 ms */
    for (int i = 0; i < 50; i++, now += 20000) {
        b = batch(&m, 1, 0);
        assert_false(moderation_on_wakeup(&m, &b, now));
    }
    /* a stream of one long datagram every 100 us */
    b = batch(&m, 1, 0);
    assert_false(moderation_on_wakeup(&m, &b, now));
    now += 100;
    b = batch(&m, 1, 0);
    assert_true(moderation_on_wakeup(&m, &b, now));
    /* short datagrams in between do not count as bulk that came recently */
    moderation_init(&m, PERIOD_US, MODERATION_BULK_LEN);
    b = batch(&m, 1, 0);
    assert_false(moderation_on_wakeup(&m, &b, now));
    b = batch(&m, 0, 5);
    assert_false(moderation_on_wakeup(&m, &b, now + PERIOD_US));
    b = batch(&m, 1, 0);
    assert_false(moderation_on_wakeup(&m, &b, now + 2 * PERIOD_US));
}

/* Period 0 (OVPND_MODERATION_US=0) never polls; bulk length 0 counts every datagram. */
static void off_and_count_everything(void **state)
{
    struct moderation m;
    struct moderation_batch b;

    (void)state;
    moderation_init(&m, 0, MODERATION_BULK_LEN);
    b = batch(&m, 64, 0);
    assert_false(moderation_on_wakeup(&m, &b, 1000000));
    assert_false(moderation_on_poll(&m, &b, 1000400));
    moderation_init(&m, PERIOD_US, 0);
    b = batch(&m, 0, 2);
    assert_int_equal(b.n_bulk, 2);
    assert_true(moderation_on_wakeup(&m, &b, 1000000));
    /* polling already: another wakeup changes nothing */
    assert_false(moderation_on_wakeup(&m, &b, 1000001));
    assert_true(m.is_polling);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(counts_bulk_by_length),
        cmocka_unit_test(short_datagrams_never_poll),
        cmocka_unit_test(bulk_batches_poll_until_they_stop),
        cmocka_unit_test(single_bulk_datagrams_poll_only_when_frequent),
        cmocka_unit_test(off_and_count_everything),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
