/* tests/unit/test_connect_freq.c: connect-freq and connect-freq-initial counting, as openvpn
 * 2.6.14 does it (otime.c frequency_limit_event_allowed: a window of SECS seconds that starts
 * with the first event after the last one ended, `now >= start + SECS`; reflect_filter.c: a
 * period that ends once `now > start + SECS`, completed handshakes taken off the count).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server/config/config.h"
#include "server/control/connect_freq.h"

static void connect_freq_zero_seconds_is_no_limit(void **state)
{
    struct connect_freq f;

    (void)state;
    connect_freq_init(&f, 0, 0); /* the default */
    for (int i = 0; i < 1000; i++) {
        assert_true(connect_freq_allow(&f, 100));
    }
}

static void connect_freq_window(void **state)
{
    struct connect_freq f;

    (void)state;
    connect_freq_init(&f, 3, 10);
    assert_true(connect_freq_allow(&f, 100));
    assert_true(connect_freq_allow(&f, 101));
    assert_true(connect_freq_allow(&f, 105));
    assert_false(connect_freq_allow(&f, 105));
    assert_false(connect_freq_allow(&f, 109)); /* refusals count too; still the same window */
    assert_true(connect_freq_allow(&f, 110));  /* now >= start + SECS: a new window */
    assert_true(connect_freq_allow(&f, 111));
    assert_true(connect_freq_allow(&f, 119));
    assert_false(connect_freq_allow(&f, 119));
}

static void connect_freq_zero_count_refuses_all(void **state)
{
    struct connect_freq f;

    (void)state;
    connect_freq_init(&f, 0, 5);
    assert_false(connect_freq_allow(&f, 1));
    assert_false(connect_freq_allow(&f, 7));
}

static void initial_default_period(void **state)
{
    struct connect_freq_initial r;
    bool first;
    int64_t dropped;

    (void)state;
    connect_freq_initial_init(&r, CONFIG_CONNECT_FREQ_INITIAL_MAX_DEFAULT,
                              CONFIG_CONNECT_FREQ_INITIAL_PER_DEFAULT);
    for (int i = 0; i < 100; i++) {
        assert_true(connect_freq_initial_allow(&r, 1000, &first, &dropped));
        assert_false(first);
    }
    assert_false(connect_freq_initial_allow(&r, 1000, &first, &dropped));
    assert_true(first); /* logged once per period */
    assert_int_equal(connect_freq_initial_left_s(&r, 1000), 10);
    assert_false(connect_freq_initial_allow(&r, 1004, &first, &dropped));
    assert_false(first);
    assert_int_equal(connect_freq_initial_left_s(&r, 1004), 6);
    assert_false(connect_freq_initial_allow(&r, 1010, &first, &dropped)); /* not yet: > needed */
    assert_int_equal(dropped, 0);
    assert_true(connect_freq_initial_allow(&r, 1011, &first, &dropped));
    assert_int_equal(dropped, 3); /* the last period refused three */
    assert_true(connect_freq_initial_allow(&r, 1011, &first, &dropped));
    assert_int_equal(dropped, 0);
}

static void initial_completed_handshakes_do_not_count(void **state)
{
    struct connect_freq_initial r;
    bool first;
    int64_t dropped;

    (void)state;
    connect_freq_initial_init(&r, 2, 10);
    assert_true(connect_freq_initial_allow(&r, 50, &first, &dropped));
    assert_true(connect_freq_initial_allow(&r, 50, &first, &dropped));
    connect_freq_initial_forgive(&r); /* one client completed the three-way handshake */
    assert_true(connect_freq_initial_allow(&r, 51, &first, &dropped));
    assert_false(connect_freq_initial_allow(&r, 51, &first, &dropped));
    connect_freq_initial_forgive(&r);
    connect_freq_initial_forgive(&r);
    connect_freq_initial_forgive(&r);
    connect_freq_initial_forgive(&r); /* never below zero */
    assert_true(connect_freq_initial_allow(&r, 52, &first, &dropped));
    assert_true(connect_freq_initial_allow(&r, 52, &first, &dropped));
    assert_false(connect_freq_initial_allow(&r, 52, &first, &dropped));
}

static void initial_zero_refuses_all(void **state)
{
    struct connect_freq_initial r;
    bool first;
    int64_t dropped;

    (void)state;
    connect_freq_initial_init(&r, 0, 10);
    assert_false(connect_freq_initial_allow(&r, 5, &first, &dropped));
    assert_true(first);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(connect_freq_zero_seconds_is_no_limit),
        cmocka_unit_test(connect_freq_window),
        cmocka_unit_test(connect_freq_zero_count_refuses_all),
        cmocka_unit_test(initial_default_period),
        cmocka_unit_test(initial_completed_handshakes_do_not_count),
        cmocka_unit_test(initial_zero_refuses_all),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
