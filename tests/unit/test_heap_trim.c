/* tests/unit/test_heap_trim.c: when the acceptor gives free heap back (heap_trim.h), and that
 * the trim does give back what a thread freed in its own arena.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "server/ops/heap_trim.h"

static void heap_trim_nothing_ended_nothing_due(void **state)
{
    struct heap_trim t;

    (void)state;
    heap_trim_init(&t, 1000, 10000);
    assert_false(heap_trim_due(&t, 1000));
    assert_false(heap_trim_due(&t, 1000 + 3600 * 1000)); /* an hour later, nobody left */
    assert_false(heap_trim_run(&t, 1000 + 3600 * 1000, NULL));
}

static void heap_trim_after_quiet(void **state)
{
    struct heap_trim t;

    (void)state;
    heap_trim_init(&t, 0, 10000);
    heap_trim_session_ended(&t, 5000);
    heap_trim_session_ended(&t, 6000);
    assert_false(heap_trim_due(&t, 6000 + HEAP_TRIM_QUIET_MS - 1));
    assert_true(heap_trim_due(&t, 6000 + HEAP_TRIM_QUIET_MS));
}

static void heap_trim_while_sessions_keep_ending(void **state)
{
    struct heap_trim t;
    uint64_t now = 100000;

    (void)state;
    heap_trim_init(&t, 0, 10000);
    /* one session ends every second, never a quiet pause: due a minute after the first */
    for (; now < 100000 + HEAP_TRIM_MAX_DELAY_MS; now += 1000) {
        heap_trim_session_ended(&t, now);
        assert_false(heap_trim_due(&t, now));
    }
    heap_trim_session_ended(&t, now);
    assert_true(heap_trim_due(&t, now));
}

static void heap_trim_worth_only_after_growth(void **state)
{
    struct heap_trim t;

    (void)state;
    heap_trim_init(&t, 0, 10000);
    assert_false(heap_trim_worth(&t, 10000 + HEAP_TRIM_MIN_GROWTH_KB - 1));
    assert_true(heap_trim_worth(&t, 10000 + HEAP_TRIM_MIN_GROWTH_KB));
    assert_true(heap_trim_worth(&t, -1)); /* RSS unknown: trim */
}

/* Due but the RSS hardly grew: no trim, and the ended sessions are forgotten. */
static void heap_trim_skipped_forgets(void **state)
{
    struct heap_trim t;
    long rss = heap_trim_rss_kb();

    (void)state;
    assert_true(rss > 0);
    heap_trim_init(&t, 0, rss + 100000); /* "after the last trim" far above today's RSS */
    heap_trim_session_ended(&t, 1000);
    assert_false(heap_trim_run(&t, 1000 + HEAP_TRIM_QUIET_MS, NULL));
    assert_false(heap_trim_due(&t, 1000 + HEAP_TRIM_QUIET_MS));
    assert_int_equal(t.n_trims, 0);
}

#define CHUNKS 20000
#define CHUNK_LEN 1000

/* In a thread of its own (so in an arena of its own, as the acceptor's): 20 MB in 1 kB chunks,
 * every page written, then all freed but the last, which keeps the heap from shrinking. */
static void *fill_and_free(void *arg)
{
    char **chunks = calloc(CHUNKS, sizeof(*chunks));

    (void)arg;
    if (!chunks) {
        return NULL;
    }
    for (size_t i = 0; i < CHUNKS; i++) {
        chunks[i] = malloc(CHUNK_LEN);
        if (chunks[i]) {
            memset(chunks[i], 0x5a, CHUNK_LEN);
        }
    }
    for (size_t i = 0; i + 1 < CHUNKS; i++) {
        free(chunks[i]);
    }
    return chunks; /* the caller frees the last chunk and the array */
}

static void heap_trim_gives_memory_back(void **state)
{
    struct heap_trim t;
    struct heap_trim_result r;
    pthread_t th;
    void *ret = NULL;
    char **chunks;
    long before;

    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    skip(); /* ASan's allocator keeps its own heap: malloc_trim() is not its business */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    skip();
#endif
#endif
#ifndef __GLIBC__
    skip();
#endif
    before = heap_trim_rss_kb();
    assert_int_equal(pthread_create(&th, NULL, fill_and_free, NULL), 0);
    assert_int_equal(pthread_join(th, &ret), 0);
    chunks = ret;
    assert_non_null(chunks);
    /* freed, yet resident: the arena cannot shrink below the chunk still in use */
    assert_true(heap_trim_rss_kb() - before > 15000);

    heap_trim_init(&t, 0, before);
    heap_trim_session_ended(&t, 0);
    assert_true(heap_trim_run(&t, HEAP_TRIM_QUIET_MS, &r));
    assert_int_equal(t.n_trims, 1);
    assert_true(r.rss_before_kb - r.rss_after_kb > 15000);
    assert_true(heap_trim_rss_kb() - before < 5000);
    assert_true(r.free_before > 15000 * 1024);
    free(chunks[CHUNKS - 1]);
    free(chunks);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(heap_trim_nothing_ended_nothing_due),
        cmocka_unit_test(heap_trim_after_quiet),
        cmocka_unit_test(heap_trim_while_sessions_keep_ending),
        cmocka_unit_test(heap_trim_worth_only_after_growth),
        cmocka_unit_test(heap_trim_skipped_forgets),
        cmocka_unit_test(heap_trim_gives_memory_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
