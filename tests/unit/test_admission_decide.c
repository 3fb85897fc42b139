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

static void rate(void **state)
{
    (void)state;
    /* the floor: half of 2 threads at 5 ms a handshake (400/s) */
    assert_int_equal(admission_decide_rate(0, 0, 2, 5000, false), 200);
    assert_int_equal(admission_decide_rate(0, 0, 2, 0, false),
                     2 * 1000000 / ADMISSION_HS_US_DEFAULT / 2);
    assert_int_equal(admission_decide_rate(0, 0, 0, 5000, false), 100); /* zero threads is one */
    /* a second with more finished: taken at once */
    assert_int_equal(admission_decide_rate(200, 350, 2, 5000, false), 350);
    /* quieter seconds: decays by 1/16 a second down to the floor */
    assert_int_equal(admission_decide_rate(320, 10, 2, 5000, false), 300);
    assert_int_equal(admission_decide_rate(300, 290, 2, 5000, false), 290);
    {
        uint64_t r = 1000;

        for (int i = 0; i < 200; i++) {
            r = admission_decide_rate(r, 0, 2, 5000, false);
        }
        assert_int_equal(r, 200);
    }
    /* a costlier handshake lowers the floor, not a rate shown */
    assert_int_equal(admission_decide_rate(0, 0, 2, 20000, false), 50);
    assert_int_equal(admission_decide_rate(160, 0, 2, 20000, false), 150);
    /* handshakes ran out of time: half the rate, or what finished, without the floor */
    assert_int_equal(admission_decide_rate(400, 30, 2, 5000, true), 200);
    assert_int_equal(admission_decide_rate(40, 30, 2, 5000, true), 30);
    assert_int_equal(admission_decide_rate(10, 0, 2, 5000, true), 5);
    assert_int_equal(admission_decide_bound(0, admission_decide_rate(10, 0, 2, 5000, true), 60000),
                     75);
}

static void bound_default_and_configured(void **state)
{
    (void)state;
    /* 200 handshakes a second for a quarter of a 60 s hand-window */
    assert_int_equal(admission_decide_bound(0, 200, 60000), 3000);
    /* a 5 s hand-window: 1.25 s of handshakes */
    assert_int_equal(admission_decide_bound(0, 200, 5000), 250);
    assert_int_equal(admission_decide_bound(0, 145, 60000), 2175);
    /* clamped */
    assert_int_equal(admission_decide_bound(0, 10, 1000), ADMISSION_MIN);
    assert_int_equal(admission_decide_bound(0, 0, 60000), ADMISSION_MIN);
    assert_int_equal(admission_decide_bound(0, 1000000, 3600000), ADMISSION_MAX);
    /* the environment's, even below the minimum; a bad one is ignored */
    assert_int_equal(admission_decide_bound(5, 200, 60000), 5);
    assert_int_equal(admission_decide_bound(-3, 200, 5000), 250);
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
        cmocka_unit_test(rate),
        cmocka_unit_test(bound_default_and_configured),
        cmocka_unit_test(answer_only_below_the_bound),
        cmocka_unit_test(deadline_from_the_server_alone),
        cmocka_unit_test(deadline_from_the_clients_start),
        cmocka_unit_test(too_late),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
