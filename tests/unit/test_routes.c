/* tests/unit/test_routes.c: address ownership (server/addr/routes.h). What a user sees of it:
 * packets to a client's tunnel address reach that client (the owner array the workers read,
 * the routes announced to every worker, the kernel's steering map), and nothing of a client
 * that left or handed its address over still routes anywhere. The side effects are recorded
 * by fake ops and checked against the state after each step.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "server/addr/routes.h"

#define MAX_STEER 16

/* The kernel's steering map and the workers' tables as the ops leave them. */
struct fake {
    struct {
        int family;
        uint8_t addr[16];
        int worker;
    } steer[MAX_STEER];
    int n_steer;
    struct vroute_table worker_table; /* one worker's copy, built from announcements only */
    int n_announced;
};

static int steer_find(struct fake *f, int family, const uint8_t *addr)
{
    for (int i = 0; i < f->n_steer; i++) {
        if (f->steer[i].family == family &&
            memcmp(f->steer[i].addr, addr, family == 4 ? 4 : 16) == 0) {
            return i;
        }
    }
    return -1;
}

static int fake_steer_set(void *ctx, int family, const uint8_t *addr, int worker)
{
    struct fake *f = ctx;
    int i = steer_find(f, family, addr);

    if (i < 0) {
        assert_true(f->n_steer < MAX_STEER);
        i = f->n_steer++;
    }
    f->steer[i].family = family;
    memcpy(f->steer[i].addr, addr, family == 4 ? 4 : 16);
    f->steer[i].worker = worker;
    return 0;
}

static void fake_steer_del(void *ctx, int family, const uint8_t *addr)
{
    struct fake *f = ctx;
    int i = steer_find(f, family, addr);

    if (i >= 0) {
        f->steer[i] = f->steer[--f->n_steer];
    }
}

static void fake_announce(void *ctx, const struct vroute_key *key, uint32_t peer_id, bool is_add)
{
    struct fake *f = ctx;

    f->n_announced++;
    if (is_add) {
        assert_int_equal(vroute_add(&f->worker_table, key, peer_id), 0);
    } else {
        vroute_del(&f->worker_table, key, peer_id);
    }
}

/* Where the kernel steers addr: a worker index, or -1 when it is not in the map. */
static int steered4(struct fake *f, const char *text)
{
    uint8_t a[4];

    assert_int_equal(inet_pton(AF_INET, text, a), 1);
    int i = steer_find(f, 4, a);

    return i < 0 ? -1 : f->steer[i].worker;
}

static uint32_t ip4(const char *text)
{
    struct in_addr in;

    assert_int_equal(inet_pton(AF_INET, text, &in), 1);
    return ntohl(in.s_addr);
}

static struct vroute_key key(int family, const char *text, int plen)
{
    struct vroute_key k;
    uint8_t a[16];

    assert_int_equal(inet_pton(family == 4 ? AF_INET : AF_INET6, text, a), 1);
    assert_int_equal(vroute_key_make(&k, family, a, plen), 0);
    return k;
}

/* What a worker does per packet: the pool's owner array first, then its own table. */
static uint32_t worker_route4(const struct routes *r, struct fake *f, const char *text)
{
    uint32_t owner = routes_pool_owner(r, ip4(text));
    uint8_t a[4];

    if (owner != VROUTE_NONE) {
        return owner;
    }
    assert_int_equal(inet_pton(AF_INET, text, a), 1);
    return vroute_lookup(&f->worker_table, 4, a);
}

struct fixture {
    struct ip_pool pool;
    struct fake fake;
    struct routes r;
};

static int setup(void **state)
{
    static struct fixture fx;
    struct ip_pool_params pp = {.type = IP_POOL_INDIV};
    char why[200];

    memset(&fx, 0, sizeof(fx));
    pp.start = ip4("198.19.0.2");
    pp.end = ip4("198.19.0.9");
    assert_int_equal(ip_pool_init(&fx.pool, &pp, why, sizeof(why), NULL, 0), 0);
    vroute_table_init(&fx.fake.worker_table);
    struct routes_ops ops = {.ctx = &fx.fake,
                             .announce = fake_announce,
                             .steer_set = fake_steer_set,
                             .steer_del = fake_steer_del};
    assert_int_equal(routes_init(&fx.r, &fx.pool, &ops), 0);
    *state = &fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;

    routes_free(&fx->r);
    routes_free(&fx->r); /* twice is safe */
    vroute_table_free(&fx->fake.worker_table);
    ip_pool_clear(&fx->pool);
    return 0;
}

/* Two distinct peers; only their addresses matter to routes. */
static struct peer *const PEER_A = (struct peer *)(uintptr_t)0x1000;
static struct peer *const PEER_B = (struct peer *)(uintptr_t)0x2000;

static void pool_address_is_routed_once_installed(void **state)
{
    struct fixture *fx = *state;
    size_t idx;

    assert_int_equal(routes_acquire(&fx->r, "alice", PEER_A, &idx), 0);
    assert_ptr_equal(routes_holder(&fx->r, idx), PEER_A);
    const char *addr = "198.19.0.2";

    assert_int_equal(ip_pool_addr(&fx->pool, idx), ip4(addr));
    /* held, not installed: nothing routes there yet */
    assert_int_equal(worker_route4(&fx->r, &fx->fake, addr), VROUTE_NONE);
    assert_int_equal(steered4(&fx->fake, addr), -1);

    assert_int_equal(routes_route_entry(&fx->r, idx, 7, 1), 0);
    assert_int_equal(worker_route4(&fx->r, &fx->fake, addr), 7);
    assert_int_equal(steered4(&fx->fake, addr), 1);

    /* another peer's release of the entry changes nothing */
    assert_false(routes_release_entry(&fx->r, idx, PEER_B));
    assert_int_equal(worker_route4(&fx->r, &fx->fake, addr), 7);

    /* the holder's release: no route, no steering, the entry free again */
    assert_true(routes_release_entry(&fx->r, idx, PEER_A));
    assert_null(routes_holder(&fx->r, idx));
    assert_int_equal(worker_route4(&fx->r, &fx->fake, addr), VROUTE_NONE);
    assert_int_equal(steered4(&fx->fake, addr), -1);
    assert_false(ip_pool_is_used(&fx->pool, idx));
    assert_int_equal(fx->fake.n_announced, 0); /* pool addresses need no announcement */
}

static void take_over_leaves_the_old_peer_nothing(void **state)
{
    struct fixture *fx = *state;
    size_t idx;

    assert_int_equal(routes_acquire(&fx->r, "alice", PEER_A, &idx), 0);
    assert_int_equal(routes_route_entry(&fx->r, idx, 3, 0), 0);
    /* the same client reconnects while its old session closes: the address passes over */
    routes_take_over(&fx->r, idx, PEER_B);
    assert_ptr_equal(routes_holder(&fx->r, idx), PEER_B);
    assert_int_equal(routes_pool_owner(&fx->r, ip4("198.19.0.2")), VROUTE_NONE);
    assert_int_equal(steered4(&fx->fake, "198.19.0.2"), -1);
    /* the old session goes: the entry stays the new one's */
    assert_false(routes_release_entry(&fx->r, idx, PEER_A));
    assert_true(ip_pool_is_used(&fx->pool, idx));
    assert_int_equal(routes_route_entry(&fx->r, idx, 4, 1), 0);
    assert_int_equal(routes_pool_owner(&fx->r, ip4("198.19.0.2")), 4);
    assert_int_equal(steered4(&fx->fake, "198.19.0.2"), 1);
    /* learn-address refused it: the holder keeps the entry, nothing routes there */
    assert_int_equal(routes_route_entry(&fx->r, idx, VROUTE_NONE, 1), 0);
    assert_int_equal(routes_pool_owner(&fx->r, ip4("198.19.0.2")), VROUTE_NONE);
    assert_int_equal(steered4(&fx->fake, "198.19.0.2"), -1);
    assert_ptr_equal(routes_holder(&fx->r, idx), PEER_B);
}

static void take_needs_a_free_entry(void **state)
{
    struct fixture *fx = *state;
    size_t idx;

    assert_int_equal(routes_reserve(&fx->r, 5), 0);
    assert_int_equal(routes_acquire(&fx->r, "alice", PEER_A, &idx), 0);
    assert_int_not_equal(idx, 5); /* reserved entries are not handed out dynamically */
    assert_int_equal(routes_take(&fx->r, 5, PEER_B), 0);
    assert_ptr_equal(routes_holder(&fx->r, 5), PEER_B);
    assert_int_equal(routes_take(&fx->r, idx, PEER_B), -EBUSY);
    assert_ptr_equal(routes_holder(&fx->r, idx), PEER_A);
    assert_int_equal(routes_reserve(&fx->r, 1000), -EINVAL);
    assert_null(routes_holder(&fx->r, 1000));
}

static void routes_reach_every_table_and_leave_with_their_owner(void **state)
{
    struct fixture *fx = *state;
    struct vroute_key own6 = key(6, "fd00:198:19::1000", 128);
    struct vroute_key iroute = key(4, "198.19.8.0", 24);
    struct vroute_key push4 = key(4, "198.19.200.5", 32); /* ifconfig-push outside the pool */
    uint8_t a6[16];

    assert_int_equal(routes_add(&fx->r, &own6, 9, 1), 0);
    assert_int_equal(routes_add(&fx->r, &iroute, 9, 1), 0);
    assert_int_equal(routes_add(&fx->r, &push4, 9, 1), 0);
    assert_int_equal(routes_get(&fx->r, &iroute), 9);
    assert_int_equal(worker_route4(&fx->r, &fx->fake, "198.19.8.77"), 9);
    assert_int_equal(worker_route4(&fx->r, &fx->fake, "198.19.200.5"), 9);
    /* host routes are steered to the owner's worker; a network is not */
    assert_int_equal(steered4(&fx->fake, "198.19.200.5"), 1);
    assert_int_equal(steered4(&fx->fake, "198.19.8.0"), -1);
    assert_int_equal(inet_pton(AF_INET6, "fd00:198:19::1000", a6), 1);
    assert_true(steer_find(&fx->fake, 6, a6) >= 0);

    /* another client claims the iroute (the newest claim wins); the first one's withdrawal
     * leaves it to the second, in the acceptor's table and the workers' */
    assert_int_equal(routes_add(&fx->r, &iroute, 12, 0), 0);
    routes_del(&fx->r, &iroute, 9);
    assert_int_equal(routes_get(&fx->r, &iroute), 12);
    assert_int_equal(worker_route4(&fx->r, &fx->fake, "198.19.8.77"), 12);

    /* the same for a host address: a later claimant keeps its steering */
    assert_int_equal(routes_add(&fx->r, &push4, 12, 0), 0);
    routes_del(&fx->r, &push4, 9);
    assert_int_equal(steered4(&fx->fake, "198.19.200.5"), 0);
    assert_int_equal(worker_route4(&fx->r, &fx->fake, "198.19.200.5"), 12);

    routes_del(&fx->r, &own6, 9);
    assert_int_equal(routes_get(&fx->r, &own6), VROUTE_NONE);
    assert_int_equal(vroute_lookup(&fx->fake.worker_table, 6, a6), VROUTE_NONE);
    assert_true(steer_find(&fx->fake, 6, a6) < 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(pool_address_is_routed_once_installed, setup, teardown),
        cmocka_unit_test_setup_teardown(take_over_leaves_the_old_peer_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(take_needs_a_free_entry, setup, teardown),
        cmocka_unit_test_setup_teardown(routes_reach_every_table_and_leave_with_their_owner, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
