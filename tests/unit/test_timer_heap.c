/* tests/unit/test_timer_heap.c: the acceptor's deadline heap (server/control/timer_heap.h):
 * entries come out earliest first, moving and cancelling keep the order, and a heap the size of
 * a large server (50,000 sessions) stays consistent through a mix of all three. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "server/control/timer_heap.h"

struct item {
    int id;
    struct timer_heap_entry e;
};

static struct item *item_of(struct timer_heap_entry *e)
{
    return (struct item *)((char *)e - offsetof(struct item, e));
}

/* Small deterministic generator (no libc rand: the same sequence everywhere). */
static uint64_t next_rand(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* Every parent's deadline is at most its children's, and each entry knows its place. */
static void assert_heap_ok(const struct timer_heap *h)
{
    for (size_t i = 0; i < h->n_items; i++) {
        assert_int_equal(h->items[i]->index, i);
        if (i > 0) {
            assert_true(h->items[(i - 1) / 2]->due_ms <= h->items[i]->due_ms);
        }
    }
}

static void empty_heap_has_nothing_due(void **state)
{
    struct timer_heap h;

    (void)state;
    timer_heap_init(&h);
    assert_null(timer_heap_peek(&h));
    assert_null(timer_heap_pop_due(&h, UINT64_MAX));
    timer_heap_free(&h);
}

static void pops_in_deadline_order_and_only_when_due(void **state)
{
    static const uint64_t due[] = {500, 100, 300, 100, 900, 0, 700};
    struct item it[7];
    struct timer_heap h;
    uint64_t last = 0;

    (void)state;
    timer_heap_init(&h);
    assert_int_equal(timer_heap_reserve(&h, 7), 0);
    for (int i = 0; i < 7; i++) {
        it[i].id = i;
        timer_heap_entry_init(&it[i].e);
        assert_false(timer_heap_is_set(&it[i].e));
        timer_heap_set(&h, &it[i].e, due[i]);
        assert_true(timer_heap_is_set(&it[i].e));
    }
    assert_heap_ok(&h);
    /* at 300 only the four entries due at or before 300 come out */
    for (int n = 0; n < 4; n++) {
        struct timer_heap_entry *e = timer_heap_pop_due(&h, 300);

        assert_non_null(e);
        assert_true(e->due_ms >= last && e->due_ms <= 300);
        assert_false(timer_heap_is_set(e));
        last = e->due_ms;
    }
    assert_null(timer_heap_pop_due(&h, 300));
    assert_int_equal(timer_heap_peek(&h)->due_ms, 500);
    assert_int_equal(item_of(timer_heap_pop_due(&h, 1000))->id, 0);
    assert_int_equal(item_of(timer_heap_pop_due(&h, 1000))->id, 6);
    assert_int_equal(item_of(timer_heap_pop_due(&h, 1000))->id, 4);
    assert_null(timer_heap_pop_due(&h, UINT64_MAX));
    timer_heap_free(&h);
}

static void move_and_cancel(void **state)
{
    struct item it[5];
    struct timer_heap h;

    (void)state;
    timer_heap_init(&h);
    assert_int_equal(timer_heap_reserve(&h, 5), 0);
    for (int i = 0; i < 5; i++) {
        it[i].id = i;
        timer_heap_entry_init(&it[i].e);
        timer_heap_set(&h, &it[i].e, 1000 + (uint64_t)i * 100); /* 1000 .. 1400 */
    }
    timer_heap_set(&h, &it[4].e, 10);   /* earlier: moves to the front */
    timer_heap_set(&h, &it[0].e, 5000); /* later: moves to the back */
    timer_heap_cancel(&h, &it[2].e);
    timer_heap_cancel(&h, &it[2].e); /* twice: no-op */
    assert_false(timer_heap_is_set(&it[2].e));
    assert_int_equal(h.n_items, 4);
    assert_heap_ok(&h);
    assert_int_equal(item_of(timer_heap_pop_due(&h, UINT64_MAX))->id, 4);
    assert_int_equal(item_of(timer_heap_pop_due(&h, UINT64_MAX))->id, 1);
    assert_int_equal(item_of(timer_heap_pop_due(&h, UINT64_MAX))->id, 3);
    assert_int_equal(item_of(timer_heap_pop_due(&h, UINT64_MAX))->id, 0);
    assert_null(timer_heap_peek(&h));
    /* a cancelled entry goes back in like a new one */
    timer_heap_set(&h, &it[2].e, 7);
    assert_int_equal(item_of(timer_heap_peek(&h))->id, 2);
    timer_heap_free(&h);
    assert_false(timer_heap_is_set(&it[2].e)); /* freeing the heap leaves its entries out */
}

/* 50,000 entries (a large server's sessions) set, moved and cancelled at random: whatever is
 * left comes out in deadline order, each entry once, none that was cancelled. */
static void many_sessions(void **state)
{
    enum { N = 50000 };
    struct item *it = calloc(N, sizeof(*it));
    bool *is_in = calloc(N, sizeof(*is_in));
    struct timer_heap h;
    uint64_t seed = 42, last = 0;
    size_t n_in = 0, n_out = 0;

    (void)state;
    assert_non_null(it);
    assert_non_null(is_in);
    timer_heap_init(&h);
    assert_int_equal(timer_heap_reserve(&h, N), 0);
    for (int i = 0; i < N; i++) {
        it[i].id = i;
        timer_heap_entry_init(&it[i].e);
        timer_heap_set(&h, &it[i].e, next_rand(&seed) % 3600000);
        is_in[i] = true;
    }
    for (int k = 0; k < 4 * N; k++) {
        int i = (int)(next_rand(&seed) % N);

        if (next_rand(&seed) % 4 == 0) {
            timer_heap_cancel(&h, &it[i].e);
            is_in[i] = false;
        } else {
            timer_heap_set(&h, &it[i].e, next_rand(&seed) % 3600000);
            is_in[i] = true;
        }
    }
    assert_heap_ok(&h);
    for (int i = 0; i < N; i++) {
        n_in += is_in[i];
        assert_int_equal(timer_heap_is_set(&it[i].e), is_in[i]);
    }
    assert_int_equal(h.n_items, n_in);
    for (struct timer_heap_entry *e; (e = timer_heap_pop_due(&h, UINT64_MAX)) != NULL;) {
        struct item *x = item_of(e);

        assert_true(e->due_ms >= last);
        assert_true(is_in[x->id]);
        is_in[x->id] = false; /* each once */
        last = e->due_ms;
        n_out++;
    }
    assert_int_equal(n_out, n_in);
    timer_heap_free(&h);
    free(is_in);
    free(it);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_heap_has_nothing_due),
        cmocka_unit_test(pops_in_deadline_order_and_only_when_due),
        cmocka_unit_test(move_and_cancel),
        cmocka_unit_test(many_sessions),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
