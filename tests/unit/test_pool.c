/* tests/unit/test_pool.c: the IPv4 address pool of `server NET MASK`, topology subnet.
 *
 * Expected bounds are those openvpn 2.6.14 computes (helper.c helper_client_server): server
 * NET+1, ifconfig-pool NET+2 .. (NET | ~MASK) - 1, and `--server` with `dev tun` refused
 * outside /16../29. The /24 case was also seen on the wire: openvpn 2.6.14 with
 * `server 198.19.7.0 255.255.255.0` gave its first two clients 198.19.7.2 and 198.19.7.3.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server/pool.h"

#define IP(a, b, c, d)                                                                             \
    ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

static void slash24_bounds(void **state)
{
    struct ip_pool p;
    uint32_t a;

    (void)state;
    assert_int_equal(ip_pool_init(&p, IP(198, 19, 7, 0), IP(255, 255, 255, 0)), 0);
    assert_int_equal(p.server_addr, IP(198, 19, 7, 1));
    assert_int_equal(p.first, IP(198, 19, 7, 2));
    assert_int_equal(p.last, IP(198, 19, 7, 254));
    assert_int_equal(p.n, 253);
    assert_false(ip_pool_contains(&p, IP(198, 19, 7, 0)));
    assert_false(ip_pool_contains(&p, IP(198, 19, 7, 1)));
    assert_true(ip_pool_contains(&p, IP(198, 19, 7, 2)));
    assert_true(ip_pool_contains(&p, IP(198, 19, 7, 254)));
    assert_false(ip_pool_contains(&p, IP(198, 19, 7, 255)));
    assert_false(ip_pool_contains(&p, IP(198, 19, 8, 2)));
    assert_int_equal(ip_pool_acquire(&p, &a), 0);
    assert_int_equal(a, IP(198, 19, 7, 2));
    assert_int_equal(ip_pool_acquire(&p, &a), 0);
    assert_int_equal(a, IP(198, 19, 7, 3));
    assert_int_equal(p.n_used, 2);
    ip_pool_clear(&p);
}

static void slash29_bounds_and_exhaustion(void **state)
{
    static const uint32_t want[] = {IP(198, 19, 0, 10), IP(198, 19, 0, 11), IP(198, 19, 0, 12),
                                    IP(198, 19, 0, 13), IP(198, 19, 0, 14)};
    struct ip_pool p;
    uint32_t a;

    (void)state;
    assert_int_equal(ip_pool_init(&p, IP(198, 19, 0, 8), IP(255, 255, 255, 248)), 0);
    assert_int_equal(p.server_addr, IP(198, 19, 0, 9));
    assert_int_equal(p.first, IP(198, 19, 0, 10));
    assert_int_equal(p.last, IP(198, 19, 0, 14));
    assert_int_equal(p.n, 5);
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        assert_int_equal(ip_pool_acquire(&p, &a), 0);
        assert_int_equal(a, want[i]);
        assert_int_equal(ip_pool_index(&p, a), i);
    }
    a = 0;
    assert_int_equal(ip_pool_acquire(&p, &a), -ENOSPC);
    assert_int_equal(a, 0);
    assert_int_equal(p.n_used, 5);
    ip_pool_clear(&p);
}

static void slash16_is_the_largest(void **state)
{
    struct ip_pool p;
    uint32_t a = 0;

    (void)state;
    assert_int_equal(ip_pool_init(&p, IP(198, 19, 0, 0), IP(255, 255, 0, 0)), 0);
    assert_int_equal(p.first, IP(198, 19, 0, 2));
    assert_int_equal(p.last, IP(198, 19, 255, 254));
    assert_int_equal(p.n, 65533);
    /* fill all but the last, then the last one, then nothing */
    for (size_t i = 0; i < p.n; i++) {
        assert_int_equal(ip_pool_acquire(&p, &a), 0);
    }
    assert_int_equal(a, IP(198, 19, 255, 254));
    assert_int_equal(ip_pool_acquire(&p, &a), -ENOSPC);
    ip_pool_release(&p, IP(198, 19, 128, 0));
    assert_int_equal(ip_pool_acquire(&p, &a), 0);
    assert_int_equal(a, IP(198, 19, 128, 0));
    ip_pool_clear(&p);
}

static void rejected_masks(void **state)
{
    static const struct {
        uint32_t net, mask;
    } bad[] = {
        {IP(198, 19, 0, 0), IP(255, 255, 255, 252)},  /* /30: openvpn refuses it with dev tun */
        {IP(198, 19, 0, 0), IP(255, 255, 255, 254)},  /* /31 */
        {IP(198, 19, 0, 0), IP(255, 255, 255, 255)},  /* /32 */
        {IP(198, 18, 0, 0), IP(255, 254, 0, 0)},      /* /15: more than 2^16 hosts */
        {0, 0},                                       /* /0 */
        {IP(198, 19, 0, 0), IP(255, 255, 0, 255)},    /* holes in the mask */
        {IP(198, 19, 0, 0), IP(0, 255, 255, 255)},    /* ones at the wrong end */
        {IP(198, 19, 0, 1), IP(255, 255, 255, 0)},    /* host bits set in the network */
        {IP(198, 19, 0, 16), IP(255, 255, 255, 224)}, /* ditto */
    };
    struct ip_pool p;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(ip_pool_init(&p, bad[i].net, bad[i].mask), -EINVAL);
        assert_null(p.used);
        ip_pool_clear(&p); /* harmless on a failed init */
    }
}

static void release_and_reacquire_lowest(void **state)
{
    struct ip_pool p;
    uint32_t a;

    (void)state;
    assert_int_equal(ip_pool_init(&p, IP(198, 19, 1, 0), IP(255, 255, 255, 0)), 0);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(ip_pool_acquire(&p, &a), 0);
    }
    assert_int_equal(a, IP(198, 19, 1, 11));
    ip_pool_release(&p, IP(198, 19, 1, 7));
    ip_pool_release(&p, IP(198, 19, 1, 4));
    assert_int_equal(p.n_used, 8);
    assert_false(ip_pool_is_used(&p, IP(198, 19, 1, 4)));
    assert_true(ip_pool_is_used(&p, IP(198, 19, 1, 5)));
    assert_int_equal(ip_pool_acquire(&p, &a), 0);
    assert_int_equal(a, IP(198, 19, 1, 4));
    assert_int_equal(ip_pool_acquire(&p, &a), 0);
    assert_int_equal(a, IP(198, 19, 1, 7));
    assert_int_equal(ip_pool_acquire(&p, &a), 0);
    assert_int_equal(a, IP(198, 19, 1, 12));
    /* releasing twice, or addresses outside the pool, changes nothing */
    ip_pool_release(&p, IP(198, 19, 1, 12));
    ip_pool_release(&p, IP(198, 19, 1, 12));
    ip_pool_release(&p, IP(198, 19, 1, 1));
    ip_pool_release(&p, IP(198, 19, 1, 255));
    ip_pool_release(&p, IP(10, 0, 0, 2));
    assert_int_equal(p.n_used, 10);
    assert_int_equal(ip_pool_acquire(&p, &a), 0);
    assert_int_equal(a, IP(198, 19, 1, 12));
    ip_pool_clear(&p);
}

static void specific_address(void **state)
{
    struct ip_pool p;
    uint32_t a;

    (void)state;
    assert_int_equal(ip_pool_init(&p, IP(198, 19, 2, 0), IP(255, 255, 255, 0)), 0);
    assert_int_equal(ip_pool_acquire_addr(&p, IP(198, 19, 2, 2)), 0);
    assert_int_equal(ip_pool_acquire_addr(&p, IP(198, 19, 2, 100)), 0);
    assert_int_equal(ip_pool_acquire_addr(&p, IP(198, 19, 2, 100)), -EEXIST);
    assert_int_equal(ip_pool_acquire_addr(&p, IP(198, 19, 2, 254)), 0);
    assert_int_equal(ip_pool_acquire_addr(&p, IP(198, 19, 2, 0)), -ERANGE);
    assert_int_equal(ip_pool_acquire_addr(&p, IP(198, 19, 2, 1)), -ERANGE);
    assert_int_equal(ip_pool_acquire_addr(&p, IP(198, 19, 2, 255)), -ERANGE);
    assert_int_equal(ip_pool_acquire_addr(&p, IP(198, 19, 3, 5)), -ERANGE);
    assert_int_equal(p.n_used, 3);
    assert_int_equal(ip_pool_index(&p, IP(198, 19, 2, 100)), 98);
    assert_int_equal(ip_pool_index(&p, IP(198, 19, 2, 1)), SIZE_MAX);
    /* the lowest-free search skips the taken ones */
    assert_int_equal(ip_pool_acquire(&p, &a), 0);
    assert_int_equal(a, IP(198, 19, 2, 3));
    ip_pool_release(&p, IP(198, 19, 2, 2));
    assert_int_equal(ip_pool_acquire(&p, &a), 0);
    assert_int_equal(a, IP(198, 19, 2, 2));
    /* taking the one the search would give next moves the search on */
    assert_int_equal(ip_pool_acquire_addr(&p, IP(198, 19, 2, 4)), 0);
    assert_int_equal(ip_pool_acquire(&p, &a), 0);
    assert_int_equal(a, IP(198, 19, 2, 5));
    ip_pool_clear(&p);
}

static void fill_across_word_boundaries(void **state)
{
    struct ip_pool p;
    uint32_t a;

    (void)state;
    assert_int_equal(ip_pool_init(&p, IP(198, 19, 4, 0), IP(255, 255, 254, 0)), 0);
    assert_int_equal(p.n, 509);
    for (size_t i = 0; i < p.n; i++) {
        assert_int_equal(ip_pool_acquire(&p, &a), 0);
        assert_int_equal(a, p.first + (uint32_t)i);
    }
    assert_int_equal(ip_pool_acquire(&p, &a), -ENOSPC);
    /* free every 64th from the top down; they come back lowest first */
    for (int i = 7; i >= 0; i--) {
        ip_pool_release(&p, p.first + (uint32_t)(i * 64));
    }
    for (uint32_t i = 0; i <= 448; i += 64) {
        assert_int_equal(ip_pool_acquire(&p, &a), 0);
        assert_int_equal(a, p.first + i);
    }
    assert_int_equal(ip_pool_acquire(&p, &a), -ENOSPC);
    ip_pool_clear(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slash24_bounds),
        cmocka_unit_test(slash29_bounds_and_exhaustion),
        cmocka_unit_test(slash16_is_the_largest),
        cmocka_unit_test(rejected_masks),
        cmocka_unit_test(release_and_reacquire_lowest),
        cmocka_unit_test(specific_address),
        cmocka_unit_test(fill_across_word_boundaries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
