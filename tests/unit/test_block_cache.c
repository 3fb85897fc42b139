/* tests/unit/test_block_cache.c: the acceptor's kept blocks (server/control/block_cache.h): a
 * block given back comes out again for the next take, zero; no more than BLOCK_CACHE_MAX are
 * kept; once takes and gives stop they are all freed (ASan's leak check sees any that is not). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "server/control/block_cache.h"

#define LEN 17000

static bool is_zero(const void *p, size_t len)
{
    const uint8_t *b = p;

    for (size_t i = 0; i < len; i++) {
        if (b[i] != 0) {
            return false;
        }
    }
    return true;
}

/* The memory given back is what the next take returns; a fresh one is zero too. */
static void reused(void **state)
{
    struct block_cache c;
    void *b, *again, *other;

    (void)state;
    memset(&c, 0xEE, sizeof(c));
    block_cache_init(&c, LEN);
    b = block_cache_take(&c, 1000);
    assert_non_null(b);
    assert_true(is_zero(b, LEN));
    block_cache_give(&c, b, 1001);
    assert_int_equal(c.n_kept, 1);
    again = block_cache_take(&c, 1002);
    assert_ptr_equal(again, b);
    other = block_cache_take(&c, 1003); /* none kept: a new one */
    assert_non_null(other);
    assert_ptr_not_equal(other, b);
    assert_true(is_zero(other, LEN));
    assert_int_equal(c.n_taken, 3);
    assert_int_equal(c.n_reused, 1);
    block_cache_give(&c, again, 1004);
    free(other);                      /* a taken block may also be freed */
    block_cache_give(&c, NULL, 1005); /* a no-op */
    assert_int_equal(c.n_kept, 1);
    block_cache_clear(&c);
    assert_int_equal(c.n_kept, 0);
}

/* A burst keeps at most BLOCK_CACHE_MAX; the rest are freed at once. A block from plain calloc
 * (Mbed TLS's first record buffers) is taken too. */
static void bounded(void **state)
{
    void *b[BLOCK_CACHE_MAX + 5];
    struct block_cache c;
    size_t n = sizeof(b) / sizeof(b[0]);

    (void)state;
    block_cache_init(&c, LEN);
    for (size_t i = 0; i < n; i++) {
        b[i] = i % 2 ? calloc(1, LEN) : block_cache_take(&c, 10);
        assert_non_null(b[i]);
    }
    for (size_t i = 0; i < n; i++) {
        block_cache_give(&c, b[i], 20);
    }
    assert_int_equal(c.n_kept, BLOCK_CACHE_MAX);
    block_cache_clear(&c);
}

/* Kept while takes and gives come (each one restarts the idle time), freed once they stop. */
static void freed_when_idle(void **state)
{
    struct block_cache c;

    (void)state;
    block_cache_init(&c, LEN);
    block_cache_give(&c, block_cache_take(&c, 5000), 5000);
    block_cache_tick(&c, 5000 + BLOCK_CACHE_IDLE_MS - 1);
    assert_int_equal(c.n_kept, 1);
    block_cache_give(&c, block_cache_take(&c, 5000 + BLOCK_CACHE_IDLE_MS),
                     5000 + BLOCK_CACHE_IDLE_MS);
    block_cache_tick(&c, 5000 + 2 * BLOCK_CACHE_IDLE_MS - 1);
    assert_int_equal(c.n_kept, 1);
    block_cache_tick(&c, 5000 + 2 * BLOCK_CACHE_IDLE_MS);
    assert_int_equal(c.n_kept, 0);
    block_cache_tick(&c, 5000 + 3 * BLOCK_CACHE_IDLE_MS); /* nothing kept: nothing to do */
    block_cache_clear(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reused),
        cmocka_unit_test(bounded),
        cmocka_unit_test(freed_when_idle),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
