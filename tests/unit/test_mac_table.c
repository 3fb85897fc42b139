/* tests/unit/test_mac_table.c: the MAC table of dev tap (server/addr/mac_table.h) and its
 * learning decision, against what openvpn 2.6 does (multi.c multi_learn_addr,
 * mroute.c mroute_learnable_address): broadcast, multicast and zero source MACs are never
 * learned; a MAC another client had moves to the newest sender (in 2.6 too: any client can take
 * over another's MAC, as on a switch without port security); the route quota bounds how many a
 * client learns; tables of several workers agree whatever order the announcements come in; a
 * client that leaves takes its MACs along and nothing else, through its own chain of slots
 * (whatever moves and deletion shifts did to them); asking first (learn-address) changes nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "server/addr/mac_table.h"

static const uint8_t mac_a[6] = {0x02, 0x00, 0x5e, 0x00, 0x00, 0x0a};
static const uint8_t mac_b[6] = {0x02, 0x00, 0x5e, 0x00, 0x00, 0x0b};
static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const uint8_t mcast[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb};  /* 224.0.0.251 */
static const uint8_t mcast6[6] = {0x33, 0x33, 0x00, 0x00, 0x00, 0x01}; /* ff02::1 */
static const uint8_t zero[6] = {0};
static const uint8_t server[6] = {0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee};

/* One learn of mac from peer_id owning n_owned MACs with quota 256, at stamp. */
static enum mac_learn learn(struct mac_table *t, const uint8_t *mac, uint32_t peer_id,
                            uint32_t n_owned, uint64_t stamp, uint32_t *prev)
{
    bool needs_announce;
    uint32_t p;

    return mac_table_learn(t, mac, 0, peer_id, n_owned, 256, server, &stamp, prev ? prev : &p,
                           &needs_announce);
}

static void group_and_zero_sources_are_never_learned(void **state)
{
    struct mac_table t;

    (void)state;
    assert_int_equal(mac_table_init(&t, 64, 32, 0x1234), 0);
    assert_int_equal(learn(&t, bcast, 1, 0, 1, NULL), MAC_LEARN_MULTICAST);
    assert_int_equal(learn(&t, mcast, 1, 0, 2, NULL), MAC_LEARN_MULTICAST);
    assert_int_equal(learn(&t, mcast6, 1, 0, 3, NULL), MAC_LEARN_MULTICAST);
    assert_int_equal(learn(&t, zero, 1, 0, 4, NULL), MAC_LEARN_ZERO);
    /* the tap device's own MAC (ovpnd's addition: 2.6 would let a client take it) */
    assert_int_equal(learn(&t, server, 1, 0, 5, NULL), MAC_LEARN_SERVER);
    assert_int_equal(t.n_entries, 0);
    assert_int_equal(mac_table_lookup(&t, bcast, 0), MAC_TABLE_NONE);
    /* nor from another worker's message */
    uint32_t replaced;
    assert_false(mac_table_apply(&t, bcast, 0, 7, 10, &replaced));
    assert_int_equal(mac_table_lookup(&t, bcast, 0), MAC_TABLE_NONE);
    mac_table_free(&t);
}

static void learn_then_known(void **state)
{
    struct mac_table t;
    uint64_t stamp = 100;
    uint32_t prev;
    bool needs;

    (void)state;
    assert_int_equal(mac_table_init(&t, 64, 32, 99), 0);
    assert_int_equal(mac_table_learn(&t, mac_a, 0, 4, 0, 256, NULL, &stamp, &prev, &needs),
                     MAC_LEARN_NEW);
    assert_true(needs);
    assert_int_equal(prev, MAC_TABLE_NONE);
    assert_int_equal(mac_table_lookup(&t, mac_a, 0), 4);
    assert_int_equal(mac_table_lookup(&t, mac_b, 0), MAC_TABLE_NONE);
    /* the announcement went out: the next frame needs none */
    mac_table_announced(&t, mac_a, 0, true);
    stamp = 200;
    assert_int_equal(mac_table_learn(&t, mac_a, 0, 4, 1, 256, NULL, &stamp, &prev, &needs),
                     MAC_LEARN_KNOWN);
    assert_false(needs);
    assert_int_equal(stamp, 100); /* the entry's own stamp */
    /* an announcement that could not be posted is tried again at the next frame */
    mac_table_announced(&t, mac_a, 0, false);
    assert_int_equal(mac_table_learn(&t, mac_a, 0, 4, 1, 256, NULL, &stamp, &prev, &needs),
                     MAC_LEARN_KNOWN);
    assert_true(needs);
    mac_table_free(&t);
}

/* Client 5 sends with client 4's MAC. 2.6 moves the MAC to the sender and forwards the frame as
 * the sender's (multi_learn_addr replaces the route; the frame is then client 5's: it is not
 * sent back to 5 as a broadcast, and client 4 is not its sender). Frames for that MAC go to 5
 * from then on, until 4 sends again. The frame is never attributed to the MAC's former owner:
 * the owner the table reports after the learn is the sender. */
static void spoofed_source_moves_to_the_sender(void **state)
{
    struct mac_table t;
    uint32_t prev;

    (void)state;
    assert_int_equal(mac_table_init(&t, 64, 32, 7), 0);
    assert_int_equal(learn(&t, mac_a, 4, 0, 10, NULL), MAC_LEARN_NEW);
    assert_int_equal(learn(&t, mac_a, 5, 0, 20, &prev), MAC_LEARN_MOVED);
    assert_int_equal(prev, 4); /* the caller takes one off client 4's count */
    assert_int_equal(mac_table_lookup(&t, mac_a, 0), 5);
    assert_int_equal(t.n_entries, 1);
    /* the owner sends again: it moves back */
    assert_int_equal(learn(&t, mac_a, 4, 0, 30, &prev), MAC_LEARN_MOVED);
    assert_int_equal(prev, 5);
    assert_int_equal(mac_table_lookup(&t, mac_a, 0), 4);
    mac_table_free(&t);
}

/* 2.6 route_quota_test: a client with max-routes-per-client addresses learns no more; a frame
 * from a new MAC is dropped (its learn fails, so the owner is not the sender). A MAC it owns
 * already still passes. */
static void quota_bounds_a_client(void **state)
{
    struct mac_table t;
    uint64_t stamp = 1;
    uint32_t prev;
    bool needs;

    (void)state;
    assert_int_equal(mac_table_init(&t, 64, 32, 7), 0);
    assert_int_equal(mac_table_learn(&t, mac_a, 0, 4, 0, 1, NULL, &stamp, &prev, &needs),
                     MAC_LEARN_NEW);
    assert_int_equal(mac_table_learn(&t, mac_b, 0, 4, 1, 1, NULL, &stamp, &prev, &needs),
                     MAC_LEARN_QUOTA);
    assert_int_equal(mac_table_learn(&t, mac_a, 0, 4, 1, 1, NULL, &stamp, &prev, &needs),
                     MAC_LEARN_KNOWN);
    /* nor can it take another client's MAC beyond its quota */
    assert_int_equal(mac_table_learn(&t, mac_b, 0, 9, 0, 1, NULL, &stamp, &prev, &needs),
                     MAC_LEARN_NEW);
    assert_int_equal(mac_table_learn(&t, mac_b, 0, 4, 1, 1, NULL, &stamp, &prev, &needs),
                     MAC_LEARN_QUOTA);
    assert_int_equal(mac_table_lookup(&t, mac_b, 0), 9);
    mac_table_free(&t);
}

static void full_table_refuses_new_macs(void **state)
{
    struct mac_table t;
    uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0};

    (void)state;
    assert_int_equal(mac_table_init(&t, 20, 32, 3), 0);
    for (int i = 1; i <= 20; i++) {
        mac[5] = (uint8_t)i;
        assert_int_equal(learn(&t, mac, 1, 0, (uint64_t)i, NULL), MAC_LEARN_NEW);
    }
    mac[5] = 21;
    assert_int_equal(learn(&t, mac, 1, 0, 21, NULL), MAC_LEARN_FULL);
    assert_int_equal(mac_table_lookup(&t, mac, 0), MAC_TABLE_NONE);
    mac[5] = 7;
    assert_int_equal(mac_table_lookup(&t, mac, 0), 1);
    mac_table_free(&t);
}

/* Two workers learn the same MAC for two clients at about the same time; each tells the other,
 * the messages cross. The newer learn wins on both, in either order. */
static void workers_agree_on_the_newest_learn(void **state)
{
    struct mac_table w1, w2;
    uint64_t s1 = 1000, s2 = 2000;
    uint32_t prev, replaced;
    bool needs;

    (void)state;
    assert_int_equal(mac_table_init(&w1, 64, 32, 1), 0);
    assert_int_equal(mac_table_init(&w2, 64, 32, 2), 0);
    assert_int_equal(mac_table_learn(&w1, mac_a, 0, 10, 0, 256, NULL, &s1, &prev, &needs),
                     MAC_LEARN_NEW);
    assert_int_equal(mac_table_learn(&w2, mac_a, 0, 21, 0, 256, NULL, &s2, &prev, &needs),
                     MAC_LEARN_NEW);
    /* w1 hears of w2's newer learn: takes it, and its own client 10 lost the MAC */
    assert_true(mac_table_apply(&w1, mac_a, 0, 21, s2, &replaced));
    assert_int_equal(replaced, 10);
    /* w2 hears of w1's older one: keeps its own */
    assert_false(mac_table_apply(&w2, mac_a, 0, 10, s1, &replaced));
    assert_int_equal(mac_table_lookup(&w1, mac_a, 0), 21);
    assert_int_equal(mac_table_lookup(&w2, mac_a, 0), 21);
    /* a move is stamped after what it replaces even if the mover's clock reads less */
    uint64_t s3 = 1500;
    assert_int_equal(mac_table_learn(&w1, mac_a, 0, 10, 0, 256, NULL, &s3, &prev, &needs),
                     MAC_LEARN_MOVED);
    assert_true(s3 > s2);
    assert_true(mac_table_apply(&w2, mac_a, 0, 10, s3, &replaced));
    assert_int_equal(mac_table_lookup(&w2, mac_a, 0), 10);
    mac_table_free(&w1);
    mac_table_free(&w2);
}

/* A client that leaves takes its MACs along, and only its own, even when entries of others sit
 * in the same probe chains (a tiny table forces collisions). */
static void forget_peer_removes_only_its_macs(void **state)
{
    struct mac_table t;
    uint8_t mac[6] = {0x02, 0x10, 0, 0, 0, 0};

    (void)state;
    assert_int_equal(mac_table_init(&t, 200, 32, 42), 0);
    for (int i = 0; i < 200; i++) {
        mac[4] = (uint8_t)(i >> 8);
        mac[5] = (uint8_t)i;
        assert_int_equal(learn(&t, mac, (uint32_t)(i % 3), 0, (uint64_t)i + 1, NULL),
                         MAC_LEARN_NEW);
    }
    assert_int_equal(mac_table_forget_peer(&t, 1), 67);
    assert_int_equal(t.n_entries, 133);
    for (int i = 0; i < 200; i++) {
        mac[4] = (uint8_t)(i >> 8);
        mac[5] = (uint8_t)i;
        assert_int_equal(mac_table_lookup(&t, mac, 0),
                         i % 3 == 1 ? MAC_TABLE_NONE : (uint32_t)(i % 3));
    }
    assert_int_equal(mac_table_forget_peer(&t, 1), 0);
    assert_int_equal(mac_table_forget_peer(&t, 0) + mac_table_forget_peer(&t, 2), 133);
    assert_int_equal(t.n_entries, 0);
    mac_table_free(&t);
}

/* mac_table_check answers what mac_table_learn would, and leaves the table as it was. */
static void check_changes_nothing(void **state)
{
    struct mac_table t;
    uint32_t prev;

    (void)state;
    assert_int_equal(mac_table_init(&t, 2, 32, 5), 0);
    assert_int_equal(mac_table_check(&t, mac_a, 0, 1, 0, 256, server, &prev), MAC_LEARN_NEW);
    assert_int_equal(prev, MAC_TABLE_NONE);
    assert_int_equal(t.n_entries, 0);
    assert_int_equal(mac_table_lookup(&t, mac_a, 0), MAC_TABLE_NONE);
    assert_int_equal(learn(&t, mac_a, 1, 0, 1, NULL), MAC_LEARN_NEW);
    assert_int_equal(mac_table_check(&t, mac_a, 0, 1, 1, 256, server, &prev), MAC_LEARN_KNOWN);
    assert_int_equal(mac_table_check(&t, mac_a, 0, 2, 0, 256, server, &prev), MAC_LEARN_MOVED);
    assert_int_equal(prev, 1);
    assert_int_equal(mac_table_lookup(&t, mac_a, 0), 1);
    assert_int_equal(mac_table_check(&t, mac_a, 0, 2, 3, 3, server, &prev), MAC_LEARN_QUOTA);
    assert_int_equal(mac_table_check(&t, bcast, 0, 2, 0, 256, server, &prev), MAC_LEARN_MULTICAST);
    assert_int_equal(mac_table_check(&t, server, 0, 2, 0, 256, server, &prev), MAC_LEARN_SERVER);
    assert_int_equal(learn(&t, mac_b, 2, 0, 2, NULL), MAC_LEARN_NEW);
    uint8_t c[6] = {0x02, 0, 0, 0, 0, 0x0c};
    assert_int_equal(mac_table_check(&t, c, 0, 3, 0, 256, server, &prev), MAC_LEARN_FULL);
    assert_int_equal(t.n_entries, 2);
    mac_table_free(&t);
}

/* A peer_id the table was not made for learns nothing, here or by message. */
static void peer_id_beyond_the_table_learns_nothing(void **state)
{
    struct mac_table t;
    uint32_t replaced;

    (void)state;
    assert_int_equal(mac_table_init(&t, 64, 4, 5), 0);
    assert_int_equal(learn(&t, mac_a, 4, 0, 1, NULL), MAC_LEARN_FULL);
    assert_false(mac_table_apply(&t, mac_a, 0, 9, 1, &replaced));
    assert_int_equal(t.n_entries, 0);
    assert_int_equal(mac_table_forget_peer(&t, 9), 0);
    assert_int_equal(learn(&t, mac_a, 3, 0, 1, NULL), MAC_LEARN_NEW);
    mac_table_free(&t);
}

/* Learns, moves (by the client itself and by other workers' messages) and departures in a
 * random order, on a table small enough that probe sequences run into each other and deletion
 * shifts entries: after every step the table says what a plain map of MAC to owner says, and
 * forgetting a client removes exactly the MACs that map gives it. */
static void forget_follows_moves_and_shifts(void **state)
{
    enum { N_MACS = 96, N_PEERS = 6 };
    uint32_t owner[N_MACS];
    struct mac_table t;
    uint64_t rnd = 0x9e3779b97f4a7c15ull, stamp = 1;

    (void)state;
    assert_int_equal(mac_table_init(&t, N_MACS, N_PEERS, 77), 0);
    assert_int_equal(t.n_slots, 256);
    for (int i = 0; i < N_MACS; i++) {
        owner[i] = MAC_TABLE_NONE;
    }
    for (int step = 0; step < 20000; step++) {
        uint8_t mac[6] = {0x02, 0x42, 0, 0, 0, 0};
        uint32_t peer, replaced, prev;
        int m;

        rnd ^= rnd << 13;
        rnd ^= rnd >> 7;
        rnd ^= rnd << 17;
        m = (int)(rnd % N_MACS);
        peer = (uint32_t)((rnd >> 20) % N_PEERS);
        mac[5] = (uint8_t)m;
        switch ((rnd >> 40) % 8) {
        case 0: { /* the client leaves */
            size_t n_model = 0;

            for (int i = 0; i < N_MACS; i++) {
                if (owner[i] == peer) {
                    owner[i] = MAC_TABLE_NONE;
                    n_model++;
                }
            }
            assert_int_equal(mac_table_forget_peer(&t, peer), n_model);
            break;
        }
        case 1: /* another worker's learn, newer than anything here */
            mac_table_apply(&t, mac, 0, peer, ++stamp, &replaced);
            owner[m] = peer;
            break;
        default: /* the client's own frame */
            assert_int_not_equal(learn(&t, mac, peer, 0, ++stamp, &prev), MAC_LEARN_FULL);
            owner[m] = peer;
            break;
        }
        if (step % 97 == 0 || (rnd >> 40) % 8 == 0) {
            size_t n = 0;

            for (int i = 0; i < N_MACS; i++) {
                mac[5] = (uint8_t)i;
                assert_int_equal(mac_table_lookup(&t, mac, 0), owner[i]);
                n += owner[i] != MAC_TABLE_NONE;
            }
            assert_int_equal(t.n_entries, n);
        }
    }
    for (uint32_t p = 0; p < N_PEERS; p++) {
        mac_table_forget_peer(&t, p);
    }
    assert_int_equal(t.n_entries, 0);
    mac_table_free(&t);
}

/* With vlan-tagging an entry is a MAC in one VLAN (2.6 mroute addresses carry the VID): the same
 * MAC in two VLANs belongs to two clients, a learn in one VLAN moves nothing in another, and a
 * lookup in a VLAN without it finds no one. */
static void the_vid_is_part_of_the_key(void **state)
{
    struct mac_table t;
    uint32_t prev = 0, replaced = 0;
    uint64_t stamp = 100;
    bool needs = false;

    (void)state;
    assert_int_equal(mac_table_init(&t, 16, 32, 0x1234), 0);
    assert_int_equal(mac_table_learn(&t, mac_a, 10, 4, 0, 256, NULL, &stamp, &prev, &needs),
                     MAC_LEARN_NEW);
    stamp = 200;
    assert_int_equal(mac_table_learn(&t, mac_a, 20, 5, 0, 256, NULL, &stamp, &prev, &needs),
                     MAC_LEARN_NEW); /* not MOVED: another VLAN */
    assert_int_equal(prev, MAC_TABLE_NONE);
    assert_int_equal(mac_table_lookup(&t, mac_a, 10), 4);
    assert_int_equal(mac_table_lookup(&t, mac_a, 20), 5);
    assert_int_equal(mac_table_lookup(&t, mac_a, 30), MAC_TABLE_NONE);
    assert_int_equal(mac_table_lookup(&t, mac_a, 0), MAC_TABLE_NONE);
    /* VIDs differing only in high bits are still different VLANs */
    assert_int_equal(mac_table_lookup(&t, mac_a, 10 | 0x800), MAC_TABLE_NONE);
    /* another worker's learn of the MAC in VLAN 20 leaves VLAN 10's entry alone */
    assert_true(mac_table_apply(&t, mac_a, 20, 6, 300, &replaced));
    assert_int_equal(replaced, 5);
    assert_int_equal(mac_table_lookup(&t, mac_a, 10), 4);
    assert_int_equal(mac_table_lookup(&t, mac_a, 20), 6);
    assert_int_equal(mac_table_forget_peer(&t, 4), 1);
    assert_int_equal(mac_table_lookup(&t, mac_a, 20), 6);
    assert_int_equal(t.n_entries, 1);
    mac_table_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(group_and_zero_sources_are_never_learned),
        cmocka_unit_test(learn_then_known),
        cmocka_unit_test(spoofed_source_moves_to_the_sender),
        cmocka_unit_test(quota_bounds_a_client),
        cmocka_unit_test(full_table_refuses_new_macs),
        cmocka_unit_test(workers_agree_on_the_newest_learn),
        cmocka_unit_test(forget_peer_removes_only_its_macs),
        cmocka_unit_test(check_changes_nothing),
        cmocka_unit_test(peer_id_beyond_the_table_learns_nothing),
        cmocka_unit_test(forget_follows_moves_and_shifts),
        cmocka_unit_test(the_vid_is_part_of_the_key),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
