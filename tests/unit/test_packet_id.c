/* tests/unit/test_packet_id.c: replay window edges, checked against openvpn 2.6 packet_id.c rules
 * (section 6.6 of docs/openvpn-protocol.md) and against a naive model that remembers every id. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/errors.h"
#include "proto/packet_id.h"

/* check, and on success commit, as the data path does */
static int accept_id(struct packet_id_rx *rx, uint32_t id)
{
    int err = packet_id_rx_check(rx, id);

    if (err == 0) {
        packet_id_rx_commit(rx, id);
    }
    return err;
}

static void id_zero_is_malformed(void **state)
{
    struct packet_id_rx rx;

    (void)state;
    packet_id_rx_init(&rx, 64);
    assert_int_equal(packet_id_rx_check(&rx, 0), -PE_MALFORMED);
    assert_int_equal(accept_id(&rx, 1), 0);
    assert_int_equal(packet_id_rx_check(&rx, 0), -PE_MALFORMED);
    packet_id_rx_init(&rx, 0);
    assert_int_equal(packet_id_rx_check(&rx, 0), -PE_MALFORMED);
}

static void first_id_may_be_anything(void **state)
{
    struct packet_id_rx rx;

    (void)state;
    packet_id_rx_init(&rx, 64);
    assert_int_equal(accept_id(&rx, 123456), 0);
    assert_int_equal(rx.highest, 123456);
    packet_id_rx_init(&rx, 0);
    assert_int_equal(accept_id(&rx, 77), 0);
    assert_int_equal(accept_id(&rx, 78), 0);
}

static void duplicate_in_window_is_replay(void **state)
{
    struct packet_id_rx rx;

    (void)state;
    packet_id_rx_init(&rx, 64);
    for (uint32_t id = 1; id <= 10; id++) {
        assert_int_equal(accept_id(&rx, id), 0);
    }
    assert_int_equal(packet_id_rx_check(&rx, 10), -PE_REPLAY); /* the highest itself */
    assert_int_equal(packet_id_rx_check(&rx, 5), -PE_REPLAY);
    assert_int_equal(packet_id_rx_check(&rx, 1), -PE_REPLAY);
    assert_int_equal(packet_id_rx_check(&rx, 11), 0);
}

static void reordered_ids_accepted_once(void **state)
{
    static const uint32_t order[] = {1, 3, 2, 6, 4, 5, 9, 7, 8};
    struct packet_id_rx rx;

    (void)state;
    packet_id_rx_init(&rx, 64);
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        assert_int_equal(accept_id(&rx, order[i]), 0);
    }
    for (uint32_t id = 1; id <= 9; id++) {
        assert_int_equal(packet_id_rx_check(&rx, id), -PE_REPLAY);
    }
}

static void window_edges(void **state)
{
    static const uint32_t windows[] = {1, 2, 63, 64, 65, 100, 512, 1024};
    struct packet_id_rx rx;

    (void)state;
    for (size_t i = 0; i < sizeof(windows) / sizeof(windows[0]); i++) {
        uint32_t w = windows[i], top = 100000;

        packet_id_rx_init(&rx, w);
        assert_int_equal(accept_id(&rx, top), 0);
        /* window - 1 back is the oldest accepted id; window back is too old */
        assert_int_equal(packet_id_rx_check(&rx, top - w), -PE_TOO_OLD);
        assert_int_equal(packet_id_rx_check(&rx, top - w - 1), -PE_TOO_OLD);
        assert_int_equal(packet_id_rx_check(&rx, 1), -PE_TOO_OLD);
        if (w > 1) {
            assert_int_equal(accept_id(&rx, top - (w - 1)), 0);
            assert_int_equal(packet_id_rx_check(&rx, top - (w - 1)), -PE_REPLAY);
        }
        assert_int_equal(packet_id_rx_check(&rx, top), -PE_REPLAY);
    }
}

static void window_one_is_strictly_increasing(void **state)
{
    struct packet_id_rx rx;

    (void)state;
    packet_id_rx_init(&rx, 1);
    assert_int_equal(accept_id(&rx, 5), 0);
    assert_int_equal(packet_id_rx_check(&rx, 4), -PE_TOO_OLD);
    assert_int_equal(packet_id_rx_check(&rx, 5), -PE_REPLAY);
    assert_int_equal(accept_id(&rx, 9), 0); /* gaps are fine with a window */
}

static void large_jump_forgets_old_ids(void **state)
{
    struct packet_id_rx rx;

    (void)state;
    packet_id_rx_init(&rx, 64);
    for (uint32_t id = 1; id <= 10; id++) {
        assert_int_equal(accept_id(&rx, id), 0);
    }
    assert_int_equal(accept_id(&rx, 10 + 5000), 0);
    assert_int_equal(packet_id_rx_check(&rx, 10), -PE_TOO_OLD);
    assert_int_equal(packet_id_rx_check(&rx, 5010 - 63), 0);
    assert_int_equal(packet_id_rx_check(&rx, 5010 - 64), -PE_TOO_OLD);
    assert_int_equal(accept_id(&rx, UINT32_MAX), 0); /* any jump upwards is accepted */
    assert_int_equal(packet_id_rx_check(&rx, UINT32_MAX), -PE_REPLAY);
    assert_int_equal(packet_id_rx_check(&rx, UINT32_MAX - 1), 0);
    assert_int_equal(packet_id_rx_check(&rx, 5010), -PE_TOO_OLD);
}

/* The bitmap is reused modulo its size: a jump must not make old bits look like new ids, and
 * must not forget ids that are still inside the window. */
static void jump_keeps_bits_still_in_window(void **state)
{
    struct packet_id_rx rx;

    (void)state;
    packet_id_rx_init(&rx, PACKET_ID_WINDOW_MAX);
    for (uint32_t id = 1; id <= 10; id++) {
        assert_int_equal(accept_id(&rx, id), 0);
    }
    assert_int_equal(accept_id(&rx, 1030), 0); /* slot of id 6 is reused by 1030 */
    assert_int_equal(packet_id_rx_check(&rx, 6), -PE_TOO_OLD);
    for (uint32_t id = 7; id <= 10; id++) {
        assert_int_equal(packet_id_rx_check(&rx, id), -PE_REPLAY);
    }
    for (uint32_t id = 11; id < 1030; id++) {
        assert_int_equal(packet_id_rx_check(&rx, id), 0);
    }
    assert_int_equal(accept_id(&rx, 1030 + PACKET_ID_WINDOW_MAX), 0); /* whole bitmap */
    assert_int_equal(packet_id_rx_check(&rx, 1030), -PE_TOO_OLD);
    for (uint32_t id = 1031; id < 1030 + PACKET_ID_WINDOW_MAX; id++) {
        assert_int_equal(packet_id_rx_check(&rx, id), 0);
    }
}

static void window_zero_is_strict(void **state)
{
    struct packet_id_rx rx;

    (void)state;
    packet_id_rx_init(&rx, 0);
    assert_int_equal(accept_id(&rx, 1), 0);
    assert_int_equal(accept_id(&rx, 2), 0);
    assert_int_equal(packet_id_rx_check(&rx, 2), -PE_REPLAY);
    assert_int_equal(packet_id_rx_check(&rx, 1), -PE_REPLAY);
    assert_int_equal(packet_id_rx_check(&rx, 4), -PE_MALFORMED); /* gap */
    assert_int_equal(packet_id_rx_check(&rx, 3), 0);
    packet_id_rx_commit(&rx, 4); /* a rejected id is not remembered */
    assert_int_equal(rx.highest, 2);
    assert_int_equal(accept_id(&rx, 3), 0);
}

static void window_is_clamped(void **state)
{
    struct packet_id_rx rx;

    (void)state;
    packet_id_rx_init(&rx, 65536);
    assert_int_equal(rx.window, PACKET_ID_WINDOW_MAX);
    assert_int_equal(accept_id(&rx, 100000), 0);
    assert_int_equal(packet_id_rx_check(&rx, 100000 - PACKET_ID_WINDOW_MAX), -PE_TOO_OLD);
    assert_int_equal(packet_id_rx_check(&rx, 100000 - PACKET_ID_WINDOW_MAX + 1), 0);
}

static void check_changes_nothing(void **state)
{
    struct packet_id_rx rx, copy;

    (void)state;
    packet_id_rx_init(&rx, 64);
    assert_int_equal(accept_id(&rx, 50), 0);
    memcpy(&copy, &rx, sizeof(rx));
    assert_int_equal(packet_id_rx_check(&rx, 40), 0);
    assert_int_equal(packet_id_rx_check(&rx, 500), 0);
    assert_int_equal(packet_id_rx_check(&rx, 50), -PE_REPLAY);
    assert_memory_equal(&copy, &rx, sizeof(rx));
    packet_id_rx_commit(&rx, 50); /* replay: ignored */
    packet_id_rx_commit(&rx, 0);  /* invalid: ignored */
    assert_memory_equal(&copy, &rx, sizeof(rx));
}

/* Naive model of the 2.6 rules: remember every accepted id. */
struct model {
    uint32_t window, highest;
    uint8_t *seen; /* indexed by id, ids stay below model_ids */
};

static int model_accept(struct model *m, uint32_t id)
{
    if (id == 0) {
        return -PE_MALFORMED;
    }
    if (id > m->highest) {
        m->highest = id;
        m->seen[id] = 1;
        return 0;
    }
    if (m->highest - id >= m->window) {
        return -PE_TOO_OLD;
    }
    if (m->seen[id]) {
        return -PE_REPLAY;
    }
    m->seen[id] = 1;
    return 0;
}

static void random_sequences_match_model(void **state)
{
    enum { model_ids = 40000, n_steps = 30000 };
    static const uint32_t windows[] = {1, 17, 64, 300, 1024};
    struct packet_id_rx rx;

    (void)state;
    srand(12345);
    for (size_t w = 0; w < sizeof(windows) / sizeof(windows[0]); w++) {
        struct model m = {windows[w], 0, calloc(model_ids, 1)};
        uint32_t next = 1;

        assert_non_null(m.seen);
        packet_id_rx_init(&rx, windows[w]);
        for (int i = 0; i < n_steps && next < model_ids - 3000; i++) {
            int r = rand() % 100;
            uint32_t id;

            if (r < 60) {
                id = next++;
            } else if (r < 65) {
                next += (uint32_t)(rand() % 2000); /* jump */
                id = next++;
            } else {
                uint32_t back = (uint32_t)(rand() % (int)(windows[w] + 40));
                id = back < next ? next - back : 0;
            }
            assert_int_equal(accept_id(&rx, id), model_accept(&m, id));
        }
        free(m.seen);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(id_zero_is_malformed),
        cmocka_unit_test(first_id_may_be_anything),
        cmocka_unit_test(duplicate_in_window_is_replay),
        cmocka_unit_test(reordered_ids_accepted_once),
        cmocka_unit_test(window_edges),
        cmocka_unit_test(window_one_is_strictly_increasing),
        cmocka_unit_test(large_jump_forgets_old_ids),
        cmocka_unit_test(jump_keeps_bits_still_in_window),
        cmocka_unit_test(window_zero_is_strict),
        cmocka_unit_test(window_is_clamped),
        cmocka_unit_test(check_changes_nothing),
        cmocka_unit_test(random_sequences_match_model),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
