/* tests/unit/test_peer_slot.c: peer_id allocation (server/thread/peer_slot.h): clients spread
 * over the workers, each worker fills its lowest free slot, a slot that is given back is
 * reused, and a full table says so.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server/thread/peer_id.h"
#include "server/thread/peer_slot.h"

static void spread_and_reuse(void **state)
{
    struct peer_slots s = {0};
    uint32_t id[6];

    (void)state;
    assert_int_equal(peer_slots_init(&s, 3, 2), 0);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(peer_slots_pick(&s, &id[i]), 0);
    }
    /* round robin over the workers while they are equal, lowest slot first */
    for (int i = 0; i < 6; i++) {
        assert_int_equal(peer_id_worker(id[i], 3), i % 3);
        assert_int_equal(peer_id_local(id[i], 3), (size_t)(i / 3));
    }
    uint32_t more;

    assert_int_equal(peer_slots_pick(&s, &more), -ENOSPC);
    /* a client of worker 1 leaves: the next one goes there, into the same slot */
    peer_slots_release(&s, id[1]);
    assert_int_equal(peer_slots_count(&s, 1), 1);
    assert_int_equal(peer_slots_pick(&s, &more), 0);
    assert_int_equal(more, id[1]);
    /* two leave from worker 2: the lower slot is filled first */
    peer_slots_release(&s, id[5]);
    peer_slots_release(&s, id[2]);
    assert_int_equal(peer_slots_pick(&s, &more), 0);
    assert_int_equal(more, id[2]);
    assert_int_equal(peer_slots_pick(&s, &more), 0);
    assert_int_equal(more, id[5]);
    peer_slots_free(&s);
    peer_slots_free(&s);
}

static void least_loaded_worker_first(void **state)
{
    struct peer_slots s = {0};
    uint32_t id[8], next;

    (void)state;
    assert_int_equal(peer_slots_init(&s, 2, 100), 0);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(peer_slots_pick(&s, &id[i]), 0);
    }
    /* worker 0 loses three clients: the next three all go to it */
    peer_slots_release(&s, id[0]);
    peer_slots_release(&s, id[2]);
    peer_slots_release(&s, id[4]);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(peer_slots_pick(&s, &next), 0);
        assert_int_equal(peer_id_worker(next, 2), 0);
    }
    assert_int_equal(peer_slots_count(&s, 0), peer_slots_count(&s, 1));
    peer_slots_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spread_and_reuse),
        cmocka_unit_test(least_loaded_worker_first),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
