/* tests/unit/test_vroute.c: the virtual route table (server/addr/vroute.h): longest-prefix match
 * across IPv4 and IPv6 as openvpn's mroute does, the newest claim of a prefix wins, and a client
 * that leaves removes only the routes that are still its own.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "server/addr/vroute.h"

static struct vroute_key key4(const char *text, int plen)
{
    struct vroute_key k;
    uint8_t a[4];

    assert_int_equal(inet_pton(AF_INET, text, a), 1);
    assert_int_equal(vroute_key_make(&k, 4, a, plen), 0);
    return k;
}

static struct vroute_key key6(const char *text, int plen)
{
    struct vroute_key k;
    uint8_t a[16];

    assert_int_equal(inet_pton(AF_INET6, text, a), 1);
    assert_int_equal(vroute_key_make(&k, 6, a, plen), 0);
    return k;
}

static uint32_t find4(const struct vroute_table *t, const char *text)
{
    uint8_t a[4];

    assert_int_equal(inet_pton(AF_INET, text, a), 1);
    return vroute_lookup(t, 4, a);
}

static uint32_t find6(const struct vroute_table *t, const char *text)
{
    uint8_t a[16];

    assert_int_equal(inet_pton(AF_INET6, text, a), 1);
    return vroute_lookup(t, 6, a);
}

static void longest_prefix_wins(void **state)
{
    struct vroute_table t;
    struct vroute_key k;

    (void)state;
    vroute_table_init(&t);
    k = key4("198.19.0.0", 16);
    assert_int_equal(vroute_add(&t, &k, 1), 0);
    k = key4("198.19.8.0", 24);
    assert_int_equal(vroute_add(&t, &k, 2), 0);
    k = key4("198.19.8.7", 32);
    assert_int_equal(vroute_add(&t, &k, 3), 0);
    k = key6("2001:db8::", 64);
    assert_int_equal(vroute_add(&t, &k, 4), 0);
    k = key6("2001:db8::1000", 128);
    assert_int_equal(vroute_add(&t, &k, 5), 0);

    assert_int_equal(find4(&t, "198.19.200.1"), 1);
    assert_int_equal(find4(&t, "198.19.8.1"), 2);
    assert_int_equal(find4(&t, "198.19.8.7"), 3);
    assert_int_equal(find4(&t, "198.18.0.1"), VROUTE_NONE);
    assert_int_equal(find6(&t, "2001:db8::1"), 4);
    assert_int_equal(find6(&t, "2001:db8::1000"), 5);
    assert_int_equal(find6(&t, "2001:db8:1::1"), VROUTE_NONE);
    /* the families do not mix: ::c613:807 holds the bytes of 198.19.8.7 */
    assert_int_equal(find6(&t, "::c613:807"), VROUTE_NONE);
    assert_int_equal(t.n_entries, 5);
    vroute_table_free(&t);
}

static void host_bits_are_cleared(void **state)
{
    struct vroute_table t;
    struct vroute_key k = key4("198.19.8.77", 24), same = key4("198.19.8.0", 24);
    char buf[64];

    (void)state;
    assert_memory_equal(&k, &same, sizeof(k));
    assert_string_equal(vroute_key_str(&k, buf, sizeof(buf)), "198.19.8.0/24");
    vroute_table_init(&t);
    assert_int_equal(vroute_add(&t, &k, 9), 0);
    assert_int_equal(vroute_get(&t, &same), 9);
    vroute_table_free(&t);
}

static void bad_keys_are_refused(void **state)
{
    struct vroute_key k;
    uint8_t a[16] = {0};

    (void)state;
    assert_int_not_equal(vroute_key_make(&k, 4, a, 33), 0);
    assert_int_not_equal(vroute_key_make(&k, 6, a, 129), 0);
    assert_int_not_equal(vroute_key_make(&k, 5, a, 8), 0);
    assert_int_not_equal(vroute_key_make(&k, 4, a, -1), 0);
}

static void newest_claim_and_own_delete(void **state)
{
    struct vroute_table t;
    struct vroute_key k = key4("198.19.8.0", 24);

    (void)state;
    vroute_table_init(&t);
    assert_int_equal(vroute_add(&t, &k, 1), 0);
    assert_int_equal(vroute_add(&t, &k, 2), 0); /* a second client claims the same iroute */
    assert_int_equal(t.n_entries, 1);
    assert_int_equal(find4(&t, "198.19.8.1"), 2);
    vroute_del(&t, &k, 1); /* the first one leaves: the route is not its own any more */
    assert_int_equal(find4(&t, "198.19.8.1"), 2);
    vroute_del(&t, &k, 2);
    assert_int_equal(find4(&t, "198.19.8.1"), VROUTE_NONE);
    assert_int_equal(t.n_entries, 0);
    /* after the last route of a length goes, lookups of it find nothing (no stale counts) */
    assert_int_equal(t.n_by_plen[0][24], 0);
    vroute_table_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(longest_prefix_wins),
        cmocka_unit_test(host_bits_are_cleared),
        cmocka_unit_test(bad_keys_are_refused),
        cmocka_unit_test(newest_claim_and_own_delete),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
