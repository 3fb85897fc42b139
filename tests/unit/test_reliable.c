/* tests/unit/test_reliable.c: windows, ACKs, reordering and retransmission of the control
 * channel's reliability layer (rules of openvpn 2.6 reliable.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/errors.h"
#include "proto/reliable.h"

static void out_of_order_delivery_is_in_order(void **state)
{
    struct reliable r;
    uint8_t *p, *f;
    size_t len;
    const uint8_t a = 'a', b = 'b', c = 'c';

    (void)state;
    reliable_init(&r, 0, 1, 2000);
    assert_int_equal(reliable_receive(&r, 3, &c, 1), 0);
    assert_int_equal(reliable_receive(&r, 2, &b, 1), 0);
    assert_false(reliable_pop(&r, &p, &len, &f)); /* 1 missing */
    assert_int_equal(reliable_receive(&r, 1, &a, 1), 0);
    for (uint8_t want = 'a'; want <= 'c'; want++) {
        assert_true(reliable_pop(&r, &p, &len, &f));
        assert_int_equal(len, 1);
        assert_int_equal(p[0], want);
        free(f);
    }
    assert_false(reliable_pop(&r, &p, &len, &f));
    reliable_clear(&r);
}

static void duplicates_are_acked_again(void **state)
{
    struct reliable r;
    struct control_acks acks;
    uint8_t *p, *f;
    size_t len;
    const uint8_t x = 'x';

    (void)state;
    reliable_init(&r, 0, 1, 2000);
    assert_int_equal(reliable_receive(&r, 1, &x, 1), 0);
    reliable_take_acks(&r, &acks, CONTROL_MAX_ACKS);
    assert_int_equal(acks.n_acks, 1);
    assert_true(reliable_pop(&r, &p, &len, &f));
    free(f);
    /* Already delivered: dropped but ACKed, or the peer keeps resending it. */
    assert_int_equal(reliable_receive(&r, 1, &x, 1), 1);
    reliable_take_acks(&r, &acks, CONTROL_MAX_ACKS);
    assert_int_equal(acks.n_acks, 1);
    assert_int_equal(acks.message_id[0], 1);
    /* Buffered but not delivered: same. */
    assert_int_equal(reliable_receive(&r, 3, &x, 1), 0);
    assert_int_equal(reliable_receive(&r, 3, &x, 1), 1);
    reliable_take_acks(&r, &acks, CONTROL_MAX_ACKS);
    assert_int_equal(acks.n_acks, 1); /* queued once */
    reliable_clear(&r);
}

static void receive_window_edge(void **state)
{
    struct reliable r;
    const uint8_t x = 'x';

    (void)state;
    reliable_init(&r, 0, 5, 2000);
    assert_int_equal(reliable_receive(&r, 5 + RELIABLE_N_RECV - 1, &x, 1), 0);
    assert_int_equal(reliable_receive(&r, 5 + RELIABLE_N_RECV, &x, 1), -PE_WINDOW);
    assert_int_equal(reliable_receive(&r, 0xFFFFFFFFu, &x, 1), -PE_WINDOW);
    reliable_clear(&r);
}

static void send_window_and_acks(void **state)
{
    struct reliable r;
    struct control_acks acks = {.n_acks = 1};
    const uint8_t x = 'x';
    uint32_t id;

    (void)state;
    reliable_init(&r, 1, 1, 2000);
    for (int i = 0; i < RELIABLE_N_SEND; i++) {
        assert_true(reliable_can_send(&r));
        assert_int_equal(reliable_queue(&r, 4, &x, 1, 0, &id), 0);
        assert_int_equal(id, (uint32_t)(1 + i));
    }
    assert_false(reliable_can_send(&r));
    assert_int_equal(reliable_queue(&r, 4, &x, 1, 0, &id), -PE_WINDOW);
    /* ACK the newest: a slot frees, but id 7 would run 6 ahead of the oldest unacked (1). */
    acks.message_id[0] = 6;
    reliable_process_acks(&r, &acks, 0);
    assert_false(reliable_can_send(&r));
    acks.message_id[0] = 1;
    reliable_process_acks(&r, &acks, 0);
    assert_true(reliable_can_send(&r));
    assert_false(reliable_all_acked(&r));
    for (uint32_t m = 2; m <= 5; m++) {
        acks.message_id[0] = m;
        reliable_process_acks(&r, &acks, 0);
    }
    assert_true(reliable_all_acked(&r));
    reliable_clear(&r);
}

static void retransmit_backoff_doubles(void **state)
{
    struct reliable r;
    struct reliable_out *o;
    const uint8_t x = 'x';

    (void)state;
    reliable_init(&r, 0, 0, 2000);
    assert_int_equal(reliable_queue(&r, 4, &x, 1, 1000, NULL), 0);
    o = reliable_next_due(&r, 1000);
    assert_non_null(o);
    reliable_sent(&r, o, 1000);
    assert_null(reliable_next_due(&r, 2999));
    assert_non_null(reliable_next_due(&r, 3000)); /* 2 s */
    reliable_sent(&r, o, 3000);
    assert_null(reliable_next_due(&r, 6999));
    assert_non_null(reliable_next_due(&r, 7000)); /* then 4 s */
    reliable_sent(&r, o, 7000);
    assert_int_equal(reliable_next_timeout(&r), 15000); /* then 8 s */
    reliable_clear(&r);
}

static void three_later_acks_trigger_fast_retransmit(void **state)
{
    struct reliable r;
    struct control_acks acks = {.n_acks = 1};
    const uint8_t x = 'x';

    (void)state;
    reliable_init(&r, 0, 0, 2000);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(reliable_queue(&r, 4, &x, 1, 0, NULL), 0);
    }
    while (reliable_next_due(&r, 0)) {
        reliable_sent(&r, reliable_next_due(&r, 0), 0);
    }
    for (uint32_t m = 1; m <= 3; m++) {
        acks.message_id[0] = m;
        reliable_process_acks(&r, &acks, 100);
    }
    /* Id 0 is due long before its 2 s timeout. */
    assert_non_null(reliable_next_due(&r, 100));
    assert_int_equal(reliable_next_due(&r, 100)->message_id, 0);
    reliable_clear(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(out_of_order_delivery_is_in_order),
        cmocka_unit_test(duplicates_are_acked_again),
        cmocka_unit_test(receive_window_edge),
        cmocka_unit_test(send_window_and_acks),
        cmocka_unit_test(retransmit_backoff_doubles),
        cmocka_unit_test(three_later_acks_trigger_fast_retransmit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
