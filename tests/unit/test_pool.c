/* tests/unit/test_pool.c: the client address pool (server/addr/pool.c) and what `server`,
 * `server-ipv6` and the ifconfig directives expand to per topology (server/config/topology.c).
 *
 * Expected values are those of openvpn 2.6.14: helper.c helper_client_server (subnet: server
 * NET+1, pool NET+2 .. BROADCAST-1; net30/p2p: server NET+1 peer NET+2, pool NET+4 ..
 * BROADCAST-4, or BROADCAST on a /29; server-ipv6: NET+1, pool from NET+0x1000 or NET+2 from
 * /112 on) and pool.c (net30 entries are /30 blocks, block+2 for the client and block+1 for the
 * server end; the allocation order of ifconfig_pool_find; IPv4 and IPv6 sharing the entry
 * index). The /24 subnet case was also seen on the wire: openvpn 2.6.14 with `server 198.19.7.0
 * 255.255.255.0` gave its first two clients 198.19.7.2 and 198.19.7.3.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "server/config/config.h"
#include "server/addr/pool.h"
#include "server/config/topology.h"

#define IP(a, b, c, d)                                                                             \
    ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

static void indiv(struct ip_pool *p, uint32_t start, uint32_t end, bool duplicate_cn)
{
    struct ip_pool_params pp = {.type = IP_POOL_INDIV, .start = start, .end = end};
    char why[200];

    pp.duplicate_cn = duplicate_cn;
    assert_int_equal(ip_pool_init(p, &pp, why, sizeof(why), NULL, 0), 0);
}

static size_t take(struct ip_pool *p, const char *cn)
{
    size_t i = SIZE_MAX;

    assert_int_equal(ip_pool_acquire(p, cn, &i), 0);
    return i;
}

/* A config with only what topology_plan_make reads. */
static void server_cfg(struct config *cfg, int topology, uint32_t net, uint32_t mask)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->net.topology = topology;
    cfg->net.has_server = true;
    cfg->net.server_network = net;
    cfg->net.server_netmask = mask;
}

static void plan_ok(const struct config *cfg, struct topology_plan *plan)
{
    const char *directive = NULL;
    char why[400] = "";

    if (topology_plan_make(cfg, plan, &directive, why, sizeof(why)) != 0) {
        fail_msg("%s: %s", directive, why);
    }
}

static void plan_fails(const struct config *cfg, const char *want_directive, const char *want_why)
{
    struct topology_plan plan;
    const char *directive = NULL;
    char why[400] = "";

    assert_int_equal(topology_plan_make(cfg, &plan, &directive, why, sizeof(why)), -EINVAL);
    assert_string_equal(directive, want_directive);
    if (strncmp(why, want_why, strlen(want_why)) != 0) {
        fail_msg("got '%s', want it to start with '%s'", why, want_why);
    }
}

static void subnet_slash24(void **state)
{
    struct config cfg;
    struct topology_plan plan;
    struct ip_pool p;
    char why[200];

    (void)state;
    server_cfg(&cfg, CONFIG_TOPOLOGY_SUBNET, IP(198, 19, 7, 0), IP(255, 255, 255, 0));
    plan_ok(&cfg, &plan);
    assert_int_equal(plan.local, IP(198, 19, 7, 1));
    assert_int_equal(plan.remote_netmask, IP(255, 255, 255, 0));
    assert_int_equal(plan.pool.start, IP(198, 19, 7, 2));
    assert_int_equal(plan.pool.end, IP(198, 19, 7, 254));
    assert_int_equal(plan.n_push, 2);
    assert_string_equal(plan.push[0], "route-gateway 198.19.7.1");
    assert_string_equal(plan.push[1], "topology subnet");
    assert_false(plan.has_route);
    assert_true(plan.has_constraint);
    assert_int_equal(plan.constraint_network, IP(198, 19, 7, 0));
    assert_int_equal(ip_pool_init(&p, &plan.pool, why, sizeof(why), NULL, 0), 0);
    assert_int_equal(p.n, 253);
    assert_int_equal(ip_pool_addr(&p, take(&p, "a")), IP(198, 19, 7, 2));
    assert_int_equal(ip_pool_addr(&p, take(&p, "b")), IP(198, 19, 7, 3));
    assert_int_equal(ip_pool_index(&p, IP(198, 19, 7, 254)), 252);
    assert_int_equal(ip_pool_index(&p, IP(198, 19, 7, 1)), SIZE_MAX);
    assert_int_equal(ip_pool_index(&p, IP(198, 19, 7, 255)), SIZE_MAX);
    assert_int_equal(ip_pool_peer(&p, 0), 0);
    ip_pool_clear(&p);
}

static void net30_blocks(void **state)
{
    struct config cfg;
    struct topology_plan plan;
    struct ip_pool p;
    char why[200];

    (void)state;
    server_cfg(&cfg, CONFIG_TOPOLOGY_NET30, IP(198, 19, 8, 0), IP(255, 255, 255, 0));
    plan_ok(&cfg, &plan);
    assert_int_equal(plan.local, IP(198, 19, 8, 1));
    assert_int_equal(plan.remote_netmask, IP(198, 19, 8, 2)); /* ifconfig NETWORK+1 NETWORK+2 */
    assert_int_equal(plan.pool.type, IP_POOL_NET30);
    assert_int_equal(plan.pool.start, IP(198, 19, 8, 4));
    assert_int_equal(plan.pool.end, IP(198, 19, 8, 251));
    assert_true(plan.has_route);
    assert_int_equal(plan.route_network, IP(198, 19, 8, 0));
    assert_int_equal(plan.route_netmask, IP(255, 255, 255, 0));
    assert_int_equal(plan.n_push, 2);
    assert_string_equal(plan.push[0], "route 198.19.8.1");
    assert_string_equal(plan.push[1], "topology net30");
    assert_false(plan.has_constraint); /* 2.6 sets it only for subnet */
    assert_int_equal(ip_pool_init(&p, &plan.pool, why, sizeof(why), NULL, 0), 0);
    assert_int_equal(p.n, 62); /* .4/30 .. .248/30 */
    assert_int_equal(take(&p, "a"), 0);
    assert_int_equal(ip_pool_addr(&p, 0), IP(198, 19, 8, 6));
    assert_int_equal(ip_pool_peer(&p, 0), IP(198, 19, 8, 5));
    assert_int_equal(ip_pool_file_addr(&p, 0), IP(198, 19, 8, 4));
    assert_int_equal(take(&p, "b"), 1);
    assert_int_equal(ip_pool_addr(&p, 1), IP(198, 19, 8, 10));
    assert_int_equal(ip_pool_peer(&p, 1), IP(198, 19, 8, 9));
    assert_int_equal(ip_pool_addr(&p, 61), IP(198, 19, 8, 250));
    /* only the client's address routes to the entry; any address of the block names it in the
     * persist file */
    assert_int_equal(ip_pool_index(&p, IP(198, 19, 8, 10)), 1);
    assert_int_equal(ip_pool_index(&p, IP(198, 19, 8, 9)), SIZE_MAX);
    assert_int_equal(ip_pool_index(&p, IP(198, 19, 8, 8)), SIZE_MAX);
    assert_int_equal(ip_pool_file_index(&p, IP(198, 19, 8, 8)), 1);
    assert_int_equal(ip_pool_file_index(&p, IP(198, 19, 8, 11)), 1);
    assert_int_equal(ip_pool_file_index(&p, IP(198, 19, 8, 3)), SIZE_MAX);
    assert_int_equal(ip_pool_file_index(&p, IP(198, 19, 8, 252)), SIZE_MAX);
    ip_pool_clear(&p);

    /* with client-to-client the whole network is pushed instead of the server's address */
    cfg.net.client_to_client = true;
    plan_ok(&cfg, &plan);
    assert_string_equal(plan.push[0], "route 198.19.8.0 255.255.255.0");
    /* a /29 leaves one block: 2.6 stops with this message */
    server_cfg(&cfg, CONFIG_TOPOLOGY_NET30, IP(198, 19, 8, 8), IP(255, 255, 255, 248));
    plan_fails(&cfg, "server", "IPv4 pool size is too small (1), must be at least 2");
}

static void p2p_single_addresses(void **state)
{
    struct config cfg;
    struct topology_plan plan;
    struct ip_pool p;
    char why[200];

    (void)state;
    server_cfg(&cfg, CONFIG_TOPOLOGY_P2P, IP(198, 19, 9, 0), IP(255, 255, 255, 0));
    plan_ok(&cfg, &plan);
    assert_int_equal(plan.local, IP(198, 19, 9, 1));
    assert_int_equal(plan.remote_netmask, IP(198, 19, 9, 2));
    assert_int_equal(plan.pool.type, IP_POOL_INDIV);
    assert_int_equal(plan.pool.start, IP(198, 19, 9, 4));
    assert_int_equal(plan.pool.end, IP(198, 19, 9, 251));
    assert_int_equal(plan.n_push, 1); /* no route push without client-to-client */
    assert_string_equal(plan.push[0], "topology p2p");
    assert_int_equal(ip_pool_init(&p, &plan.pool, why, sizeof(why), NULL, 0), 0);
    assert_int_equal(p.n, 248);
    assert_int_equal(ip_pool_addr(&p, take(&p, "a")), IP(198, 19, 9, 4));
    ip_pool_clear(&p);
    /* a /29 keeps its broadcast address in the pool (pool_end_reserve 0) */
    server_cfg(&cfg, CONFIG_TOPOLOGY_P2P, IP(198, 19, 9, 8), IP(255, 255, 255, 248));
    plan_ok(&cfg, &plan);
    assert_int_equal(plan.pool.start, IP(198, 19, 9, 12));
    assert_int_equal(plan.pool.end, IP(198, 19, 9, 15));
}

static void ifconfig_pool_with_server(void **state)
{
    struct config cfg;
    struct topology_plan plan;

    (void)state;
    server_cfg(&cfg, CONFIG_TOPOLOGY_SUBNET, IP(198, 19, 10, 0), IP(255, 255, 255, 0));
    cfg.net.has_ifconfig_pool = true;
    cfg.net.ifconfig_pool_start = IP(198, 19, 10, 100);
    cfg.net.ifconfig_pool_end = IP(198, 19, 10, 149);
    plan_fails(&cfg, "ifconfig-pool", "server already defines an ifconfig-pool");
    cfg.net.server_nopool = true;
    plan_ok(&cfg, &plan);
    assert_int_equal(plan.pool.start, IP(198, 19, 10, 100));
    assert_int_equal(plan.pool.end, IP(198, 19, 10, 149));
    assert_int_equal(plan.push_netmask, IP(255, 255, 255, 0));
    assert_string_equal(plan.push[0], "route-gateway 198.19.10.1");
    /* ovpnd refuses ranges that reach outside the subnet or hold the server's address */
    cfg.net.ifconfig_pool_end = IP(198, 19, 11, 10);
    plan_fails(&cfg, "ifconfig-pool", "the pool 198.19.10.100 - 198.19.11.10 is not inside");
    cfg.net.ifconfig_pool_start = IP(198, 19, 10, 1);
    cfg.net.ifconfig_pool_end = IP(198, 19, 10, 20);
    plan_fails(&cfg, "ifconfig-pool", "the pool 198.19.10.1 - 198.19.10.20 holds the server's");
    cfg.net.ifconfig_pool_start = IP(198, 19, 10, 20);
    cfg.net.ifconfig_pool_end = IP(198, 19, 10, 149);
    cfg.net.ifconfig_pool_netmask = IP(255, 255, 255, 0);
    cfg.net.topology = CONFIG_TOPOLOGY_NET30;
    plan_fails(&cfg, "ifconfig-pool", "the third parameter (netmask) is only valid");
    /* the long form: ifconfig + ifconfig-pool without server; nothing is pushed for them */
    cfg.net.has_server = false;
    cfg.net.topology = CONFIG_TOPOLOGY_SUBNET;
    cfg.net.has_ifconfig = true;
    cfg.net.ifconfig_local = IP(198, 19, 10, 1);
    cfg.net.ifconfig_remote_netmask = IP(255, 255, 255, 0);
    cfg.net.ifconfig_pool_netmask = IP(255, 255, 255, 128);
    plan_ok(&cfg, &plan);
    assert_int_equal(plan.n_push, 0);
    assert_int_equal(plan.push_netmask, IP(255, 255, 255, 128));
    cfg.net.has_ifconfig = false;
    plan_fails(&cfg, "server", "server is required");
}

static void ipv6_pools(void **state)
{
    struct config cfg;
    struct topology_plan plan;
    struct ip_pool p;
    uint8_t a6[16], want[16];
    char why[200], note[300];

    (void)state;
    server_cfg(&cfg, CONFIG_TOPOLOGY_SUBNET, IP(198, 19, 11, 0), IP(255, 255, 255, 0));
    cfg.net.has_server_ipv6 = true;
    inet_pton(AF_INET6, "2001:2:0:11::", cfg.net.server_ipv6_network);
    cfg.net.server_ipv6_bits = 64;
    plan_ok(&cfg, &plan);
    inet_pton(AF_INET6, "2001:2:0:11::1", want);
    assert_memory_equal(plan.local6, want, 16);
    inet_pton(AF_INET6, "2001:2:0:11::1000", want);
    assert_memory_equal(plan.pool.ipv6_base, want, 16);
    assert_int_equal(ip_pool_init(&p, &plan.pool, why, sizeof(why), note, sizeof(note)), 0);
    assert_int_equal(p.n, 253); /* the IPv4 side is the smaller */
    assert_non_null(strstr(note, "IPv4 pool size limits"));
    ip_pool_addr6(&p, 5, a6);
    inet_pton(AF_INET6, "2001:2:0:11::1005", want);
    assert_memory_equal(a6, want, 16);
    assert_int_equal(ip_pool_index6(&p, want), 5);
    inet_pton(AF_INET6, "2001:2:0:11::fff", want);
    assert_int_equal(ip_pool_index6(&p, want), SIZE_MAX);
    ip_pool_clear(&p);

    /* ifconfig-ipv6-pool needs ifconfig-ipv6, not server-ipv6 (2.6) */
    cfg.net.has_ifconfig_ipv6_pool = true;
    inet_pton(AF_INET6, "2001:2:0:11::", cfg.net.ifconfig_ipv6_pool_base);
    cfg.net.ifconfig_ipv6_pool_bits = 124;
    plan_fails(&cfg, "ifconfig-ipv6-pool", "server-ipv6 already defines an ifconfig-ipv6-pool");
    cfg.net.has_server_ipv6 = false;
    plan_fails(&cfg, "ifconfig-ipv6-pool", "needs ifconfig-ipv6");
    cfg.net.has_ifconfig_ipv6 = true;
    inet_pton(AF_INET6, "2001:2:0:11::1", cfg.net.ifconfig_ipv6_local);
    cfg.net.ifconfig_ipv6_bits = 64;
    plan_ok(&cfg, &plan);
    assert_int_equal(plan.ipv6_bits, 64);
    /* a base whose host part is zero starts at ::1; a /124 then holds 15 addresses, fewer than
     * the 253 IPv4 ones: the IPv6 side limits the pool, with 2.6's warning */
    assert_int_equal(ip_pool_init(&p, &plan.pool, why, sizeof(why), note, sizeof(note)), 0);
    assert_int_equal(p.n6, 15);
    assert_int_equal(p.n, 15);
    assert_non_null(strstr(note, "IPv6 pool size limits"));
    ip_pool_addr6(&p, 0, a6);
    inet_pton(AF_INET6, "2001:2:0:11::1", want);
    assert_memory_equal(a6, want, 16);
    ip_pool_clear(&p);
}

/* openvpn 2.6 pool.c ifconfig_pool_find: an entry never handed out before one that was
 * released, the one released longest ago first, and a common name gets its own entry back. */
static void allocation_order(void **state)
{
    struct ip_pool p;

    (void)state;
    indiv(&p, IP(198, 19, 12, 10), IP(198, 19, 12, 14), false);
    assert_int_equal(take(&p, "alice"), 0);
    assert_int_equal(take(&p, "bob"), 1);
    assert_int_equal(take(&p, "carol"), 2);
    ip_pool_release(&p, 1); /* bob leaves, then alice */
    ip_pool_release(&p, 0);
    assert_string_equal(ip_pool_cn(&p, 0), "alice");
    assert_int_equal(take(&p, "dave"), 3);  /* fresh entries first */
    assert_int_equal(take(&p, "alice"), 0); /* her own entry back */
    assert_int_equal(take(&p, "erin"), 4);
    assert_int_equal(take(&p, "frank"), 1); /* nothing fresh: bob's, released longest ago */
    assert_string_equal(ip_pool_cn(&p, 1), "frank");
    assert_int_equal(p.n_used, 5);
    size_t i = 0;
    assert_int_equal(ip_pool_acquire(&p, "gina", &i), -ENOSPC);
    /* bob comes back: his entry went to frank, so he gets the one released longest ago */
    ip_pool_release(&p, 2);
    ip_pool_release(&p, 3);
    assert_int_equal(take(&p, "bob"), 2);
    assert_int_equal(take(&p, "dave"), 3);
    /* a specific entry (an ifconfig-push address inside the pool) remembers nobody */
    ip_pool_release(&p, 4);
    assert_int_equal(ip_pool_take(&p, 4), 0);
    assert_int_equal(ip_pool_take(&p, 4), -EEXIST);
    assert_int_equal(ip_pool_take(&p, 5), -ERANGE);
    assert_null(ip_pool_cn(&p, 4));
    /* releasing twice or out of range changes nothing */
    ip_pool_release(&p, 4);
    ip_pool_release(&p, 4);
    ip_pool_release(&p, 99);
    assert_int_equal(p.n_used, 4);
    ip_pool_clear(&p);
}

static void duplicate_cn_takes_lowest(void **state)
{
    struct ip_pool p;

    (void)state;
    indiv(&p, IP(198, 19, 13, 2), IP(198, 19, 13, 254), true);
    for (size_t i = 0; i < 200; i++) {
        assert_int_equal(take(&p, "loadgen"), i);
        assert_null(ip_pool_cn(&p, i));
    }
    ip_pool_release(&p, 150);
    ip_pool_release(&p, 20);
    assert_int_equal(take(&p, "loadgen"), 20);
    assert_int_equal(take(&p, "loadgen"), 150);
    assert_int_equal(take(&p, "loadgen"), 200);
    ip_pool_clear(&p);
}

/* Entries read from the persist file: they count as released at start-up (after the fresh
 * ones), and with SECONDS 0 ("fixed") go to nobody else. */
static void persisted_entries(void **state)
{
    struct ip_pool p;
    size_t i = 0;

    (void)state;
    indiv(&p, IP(198, 19, 14, 2), IP(198, 19, 14, 5), false);
    assert_int_equal(ip_pool_set(&p, 0, "alice", false), 0);
    assert_int_equal(ip_pool_set(&p, 2, "bob", true), 0);
    assert_int_equal(ip_pool_set(&p, 9, "carol", false), -ERANGE);
    assert_int_equal(take(&p, "bob"), 2);
    assert_int_equal(take(&p, "x"), 1);
    assert_int_equal(take(&p, "y"), 3);
    assert_int_equal(take(&p, "z"), 0); /* alice's, not fixed */
    assert_int_equal(ip_pool_acquire(&p, "w", &i), -ENOSPC);
    ip_pool_release(&p, 2);
    assert_int_equal(ip_pool_acquire(&p, "w", &i), -ENOSPC); /* bob's is fixed */
    assert_int_equal(take(&p, "bob"), 2);
    assert_int_equal(ip_pool_set(&p, 2, "carol", false), -EEXIST);
    ip_pool_clear(&p);
}

/* Entries that client-config-dir files push (ip_pool_reserve): never handed out by
 * ip_pool_acquire, not to the common name they remember, not with duplicate-cn, not once released;
 * only ip_pool_take gives them out. */
static void reserved_entries(void **state)
{
    struct ip_pool p;
    size_t i = 0;

    (void)state;
    indiv(&p, IP(198, 19, 15, 2), IP(198, 19, 15, 5), false);
    assert_int_equal(ip_pool_set(&p, 1, "alice", false), 0); /* from a persist file */
    assert_int_equal(ip_pool_reserve(&p, 0), 0);
    assert_int_equal(ip_pool_reserve(&p, 1), 0);
    assert_int_equal(ip_pool_reserve(&p, 1), 0); /* twice is once */
    assert_int_equal(ip_pool_reserve(&p, 4), -ERANGE);
    assert_true(ip_pool_is_reserved(&p, 1));
    assert_false(ip_pool_is_reserved(&p, 2));
    assert_null(ip_pool_cn(&p, 1)); /* a free reserved entry forgets its name */
    assert_int_equal(ip_pool_set(&p, 1, "alice", false), -EEXIST);
    assert_int_equal(take(&p, "alice"), 2); /* not her old entry 1, nor the lowest (0) */
    assert_int_equal(take(&p, "bob"), 3);
    assert_int_equal(ip_pool_acquire(&p, "carol", &i), -ENOSPC);
    assert_int_equal(ip_pool_take(&p, 0), 0); /* its client-config-dir client */
    assert_int_equal(ip_pool_take(&p, 0), -EEXIST);
    ip_pool_release(&p, 0);
    ip_pool_release(&p, 2); /* released: alice's again, not reserved */
    assert_int_equal(ip_pool_acquire(&p, "carol", &i), 0);
    assert_int_equal(i, 2);
    assert_int_equal(ip_pool_acquire(&p, "dave", &i), -ENOSPC); /* 0 and 1 stay kept */
    /* An entry in use when it becomes reserved stays with its holder, then is kept. */
    assert_int_equal(ip_pool_reserve(&p, 3), 0);
    assert_true(ip_pool_is_used(&p, 3));
    assert_string_equal(ip_pool_cn(&p, 3), "bob");
    ip_pool_release(&p, 3);
    assert_null(ip_pool_cn(&p, 3));
    assert_int_equal(ip_pool_acquire(&p, "bob", &i), -ENOSPC);
    assert_int_equal(p.n_used, 1);
    ip_pool_clear(&p);

    /* duplicate-cn: the lowest free entry that is not reserved */
    indiv(&p, IP(198, 19, 15, 2), IP(198, 19, 15, 5), true);
    assert_int_equal(ip_pool_reserve(&p, 0), 0);
    assert_int_equal(take(&p, "loadgen"), 1);
    assert_int_equal(ip_pool_take(&p, 0), 0);
    ip_pool_release(&p, 0);
    ip_pool_release(&p, 1);
    assert_int_equal(take(&p, "loadgen"), 1);
    ip_pool_clear(&p);
}

/* A reload's resize (ip_pool_resize): the entries keep their holders and names, the new ones go
 * out once the old range is used up (they are fresh: before any released entry); a shrink below
 * a held entry and a range that starts elsewhere are refused and change nothing. */
static void resize_keeps_entries(void **state)
{
    struct ip_pool_params pp = {.type = IP_POOL_INDIV, .start = IP(198, 19, 0, 2)};
    struct ip_pool p;
    char why[200];
    size_t i = 0;

    (void)state;
    indiv(&p, IP(198, 19, 0, 2), IP(198, 19, 0, 4), false);
    assert_int_equal(take(&p, "alice"), 0);
    assert_int_equal(take(&p, "bob"), 1);
    assert_int_equal(take(&p, "carol"), 2);
    ip_pool_release(&p, 1);
    assert_int_equal(ip_pool_acquire(&p, "dave", &i), 0); /* bob's, nothing fresh left */
    assert_int_equal(i, 1);
    pp.end = IP(198, 19, 1, 254);
    assert_int_equal(ip_pool_resize(&p, &pp, why, sizeof(why)), 0);
    assert_int_equal(p.n, 509);
    assert_int_equal(p.n_used, 3);
    assert_true(ip_pool_is_used(&p, 0) && ip_pool_is_used(&p, 2));
    assert_string_equal(ip_pool_cn(&p, 0), "alice");
    assert_int_equal(take(&p, "erin"), 3);
    assert_int_equal(ip_pool_addr(&p, 3), IP(198, 19, 0, 5));
    assert_int_equal(ip_pool_index(&p, IP(198, 19, 1, 10)), 264);
    assert_int_equal(ip_pool_take(&p, 264), 0);
    assert_int_equal(ip_pool_index_within(&p, IP(198, 19, 1, 10), 65536), 264);
    assert_int_equal(ip_pool_index_within(&p, IP(198, 19, 1, 10), 0), SIZE_MAX);
    pp.end = IP(198, 19, 0, 200); /* smaller, but 198.19.1.10 is held */
    assert_int_equal(ip_pool_resize(&p, &pp, why, sizeof(why)), -EBUSY);
    assert_string_equal(why, "a client holds 198.19.1.10, beyond the new end");
    assert_int_equal(p.n, 509);
    pp.start = IP(198, 19, 0, 3); /* starts elsewhere */
    pp.end = IP(198, 19, 3, 254);
    assert_int_equal(ip_pool_resize(&p, &pp, why, sizeof(why)), -EINVAL);
    assert_int_equal(p.n, 509);
    ip_pool_release(&p, 264); /* it leaves: now the pool may shrink */
    ip_pool_release(&p, 3);   /* erin leaves too: her entry stays, with her name */
    pp.start = IP(198, 19, 0, 2);
    pp.end = IP(198, 19, 0, 200);
    assert_int_equal(ip_pool_resize(&p, &pp, why, sizeof(why)), 0);
    assert_int_equal(p.n, 199);
    assert_int_equal(ip_pool_index(&p, IP(198, 19, 1, 10)), SIZE_MAX);
    assert_string_equal(ip_pool_cn(&p, 3), "erin");
    assert_int_equal(take(&p, "fred"), 4); /* the lowest fresh one */
    assert_int_equal(p.n_used, 4);
    /* and grows again: the entries beyond come back fresh */
    pp.end = IP(198, 19, 1, 254);
    assert_int_equal(ip_pool_resize(&p, &pp, why, sizeof(why)), 0);
    assert_int_equal(ip_pool_take(&p, 264), 0);
    assert_null(ip_pool_cn(&p, 264));
    ip_pool_clear(&p);
}

static void range_limits(void **state)
{
    struct ip_pool_params pp = {.type = IP_POOL_INDIV};
    struct ip_pool p;
    char why[200];

    (void)state;
    pp.start = IP(198, 19, 0, 10);
    pp.end = IP(198, 19, 0, 9);
    assert_int_equal(ip_pool_init(&p, &pp, why, sizeof(why), NULL, 0), -EINVAL);
    assert_string_equal(why, "start IP [198.19.0.10] is greater than end IP [198.19.0.9]");
    pp.start = IP(198, 18, 0, 0);
    pp.end = IP(198, 19, 0, 0);
    assert_int_equal(ip_pool_init(&p, &pp, why, sizeof(why), NULL, 0), -EINVAL);
    assert_null(p.entries);
    pp.end = IP(198, 18, 255, 255); /* 65536 addresses: the most */
    assert_int_equal(ip_pool_init(&p, &pp, why, sizeof(why), NULL, 0), 0);
    assert_int_equal(p.n, 65536);
    for (size_t i = 0; i < p.n; i++) {
        assert_int_equal(take(&p, NULL), i);
    }
    size_t i = 0;
    assert_int_equal(ip_pool_acquire(&p, NULL, &i), -ENOSPC);
    ip_pool_release(&p, 40000);
    assert_int_equal(take(&p, NULL), 40000);
    ip_pool_clear(&p);
    ip_pool_clear(&p); /* harmless twice */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(subnet_slash24),
        cmocka_unit_test(net30_blocks),
        cmocka_unit_test(p2p_single_addresses),
        cmocka_unit_test(ifconfig_pool_with_server),
        cmocka_unit_test(ipv6_pools),
        cmocka_unit_test(allocation_order),
        cmocka_unit_test(duplicate_cn_takes_lowest),
        cmocka_unit_test(persisted_entries),
        cmocka_unit_test(reserved_entries),
        cmocka_unit_test(range_limits),
        cmocka_unit_test(resize_keeps_entries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
