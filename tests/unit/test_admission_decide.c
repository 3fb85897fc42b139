/* tests/unit/test_admission_decide.c: admission control for reconnect storms
 * (server/control/admission_decide.h): the bound on handshakes in flight, which resets are
 * answered, a handshake's deadline from its client's session start, and when a handshake step
 * would come too late to be worth its TLS work.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server/control/admission_decide.h"

static void bound_default_and_configured(void **state)
{
    (void)state;
    assert_int_equal(admission_decide_bound(0, 2), 2 * ADMISSION_PER_THREAD);
    assert_int_equal(admission_decide_bound(0, 4), 4 * ADMISSION_PER_THREAD);
    assert_int_equal(admission_decide_bound(0, 0), ADMISSION_PER_THREAD); /* one thread */
    assert_true(admission_decide_bound(0, 1) >= ADMISSION_MIN);
    assert_int_equal(admission_decide_bound(5, 2), 5); /* the environment's, even below the min */
    assert_int_equal(admission_decide_bound(-3, 2), 2 * ADMISSION_PER_THREAD);
}

static void answer_only_below_the_bound(void **state)
{
    (void)state;
    assert_true(admission_decide_answer(0, 32));
    assert_true(admission_decide_answer(31, 32));
    assert_false(admission_decide_answer(32, 32));
    assert_false(admission_decide_answer(1000, 32)); /* TCP sessions are not refused: above */
}

static void deadline_from_the_server_alone(void **state)
{
    (void)state;
    /* no wrapping: hand-window from the session's creation */
    assert_int_equal(admission_decide_deadline(10000, 60000, false, 0, 1000), 70000);
    /* a wrap time in the future (the client's clock is ahead): the server's own start */
    assert_int_equal(admission_decide_deadline(10000, 60000, true, 1005, 1000), 70000);
    /* a wrap time more than a hand-window ago (clock behind, or a very old session): the same */
    assert_int_equal(admission_decide_deadline(10000, 60000, true, 1000 - 60, 1000), 70000);
    assert_int_equal(admission_decide_deadline(10000, 60000, true, 1000 - 3600, 1000), 70000);
}

static void deadline_from_the_clients_start(void **state)
{
    (void)state;
    /* the client started 30 s ago (its hard reset went unanswered meanwhile): it gives up in
     * about 30 s, plus a second for the truncated seconds */
    assert_int_equal(admission_decide_deadline(100000, 60000, true, 970, 1000), 100000 + 31000);
    /* started this second or the last: the whole hand-window */
    assert_int_equal(admission_decide_deadline(100000, 60000, true, 1000, 1000), 160000);
    assert_int_equal(admission_decide_deadline(100000, 60000, true, 999, 1000), 160000);
    /* 59 s ago: two seconds left (never before the session was created) */
    assert_int_equal(admission_decide_deadline(100000, 60000, true, 941, 1000), 102000);
    /* the acceptor clock near zero: no underflow */
    assert_int_equal(admission_decide_deadline(500, 60000, true, 950, 1000), 500 + 11000);
}

static void too_late(void **state)
{
    (void)state;
    /* past the deadline: always */
    assert_true(admission_decide_too_late(70000, 70000, 0, 2, 3000));
    assert_true(admission_decide_too_late(70001, 70000, 0, 2, 3000));
    /* an idle pool: one step of 3 ms fits in 10 ms, not in 2 ms */
    assert_false(admission_decide_too_late(69990, 70000, 0, 2, 3000));
    assert_true(admission_decide_too_late(69998, 70000, 0, 2, 3000));
    /* 400 steps queued on 2 threads at 5 ms: about 1 s of waiting */
    assert_true(admission_decide_too_late(69500, 70000, 400, 2, 5000));
    assert_false(admission_decide_too_late(68000, 70000, 400, 2, 5000));
    /* the same queue on 4 threads waits half as long */
    assert_false(admission_decide_too_late(68800, 70000, 400, 4, 5000));
    /* zero threads is taken as one */
    assert_true(admission_decide_too_late(68800, 70000, 400, 0, 5000));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bound_default_and_configured),
        cmocka_unit_test(answer_only_below_the_bound),
        cmocka_unit_test(deadline_from_the_server_alone),
        cmocka_unit_test(deadline_from_the_clients_start),
        cmocka_unit_test(too_late),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
