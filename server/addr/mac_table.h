/* server/addr/mac_table.h: which client an Ethernet address belongs to (`dev tap`).
 *
 * With a tap device openvpn 2.6 routes frames by MAC address: it learns the source MAC of each
 * frame a client sends (multi.c multi_learn_addr, mroute.c mroute_extract_addr_ether) and sends
 * a frame read from the device, or with client-to-client one from another client, to the client
 * that owns its destination MAC. A MAC seen from another client moves to it (the newest sender
 * wins, as on a switch); broadcast and multicast sources (the group bit of the first byte, which
 * covers ff:ff:ff:ff:ff:ff) and 00:00:00:00:00:00 are never learned (mroute_learnable_address);
 * a client learns at most max-routes-per-client addresses (route_quota_test). An entry is a MAC
 * in one VLAN (a VID, 0 without vlan-tagging; mroute_copy_ether_to_addr puts it in the address):
 * with vlan-tagging the same MAC in two VLANs is two entries, each with its owner.
 *
 * As with vroute.h, each worker keeps its own table, with no lock: the worker that receives a
 * client's frame (the client's owner) learns on its own table and tells the other workers by
 * message (mac_table_apply); when a client leaves, each worker forgets its MACs
 * (mac_table_forget_peer). Every learn carries a stamp (a monotonic clock, the same on every
 * thread), and a table keeps the newest stamp of each MAC, so that all tables end up agreeing
 * whatever order the messages of two workers arrive in.
 *
 * The table is one array allocated at mac_table_init (open addressing, linear probing, deletion
 * by backward shift), so learning and lookups allocate nothing; its slots are hashed with a
 * random key, so a client cannot pick MACs that collide. The MACs of one client are chained
 * through their slots (a doubly linked list by slot index, from a head per peer_id, kept right
 * when deletion shifts an entry), so forgetting a client costs its own MACs (at most its
 * max-routes-per-client), not a pass over the table. Worker thread only, like the table.
 */
#ifndef SERVER_ADDR_MAC_TABLE_H
#define SERVER_ADDR_MAC_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAC_LEN 6
#define MAC_TABLE_NONE UINT32_MAX /* no owner (the same value as VROUTE_NONE) */
/* Entries one table holds at most, whatever the config. */
#define MAC_TABLE_MAX_ENTRIES (1u << 17)

struct mac_slot;

struct mac_table {
    struct mac_slot *slots; /* n_slots, a power of two, at least twice max_entries */
    size_t n_slots, n_entries, max_entries;
    uint32_t *heads; /* n_heads, by peer_id: the slot of its first MAC, or MAC_TABLE_NONE */
    size_t n_heads;
    uint64_t hash_key; /* random, per table */
};

/* What mac_table_learn() did with a frame's source MAC, and so whether the frame is the
 * sender's to forward. */
enum mac_learn {
    MAC_LEARN_KNOWN = 0, /* the MAC is this client's already: forward */
    MAC_LEARN_NEW,       /* learned for this client now: forward, tell the other workers */
    MAC_LEARN_MOVED,     /* it was another client's and is this one's now (2.6 does the same):
                          * forward, tell the other workers */
    MAC_LEARN_MULTICAST, /* a broadcast or multicast source: never learned, drop */
    MAC_LEARN_ZERO,      /* 00:00:00:00:00:00: never learned, drop */
    MAC_LEARN_SERVER,    /* the server's own tap device's MAC: not learned, drop */
    MAC_LEARN_QUOTA,     /* the client owns `quota` MACs already (max-routes-per-client): drop */
    MAC_LEARN_FULL,      /* the table holds max_entries: drop */
};

/* An empty table for max_entries MACs (1 .. MAC_TABLE_MAX_ENTRIES; more is cut down to that)
 * of clients whose peer_ids are below n_peer_ids (others learn nothing), its slots allocated
 * here (zeroed pages: memory is only used as entries arrive) with 4 bytes per peer_id. hash_key
 * should be random. 0 or -ENOMEM / -EINVAL. Main thread, before the worker starts. */
int mac_table_init(struct mac_table *t, size_t max_entries, size_t n_peer_ids, uint64_t hash_key);

/* Free the slots; safe on a zeroed or failed table, and twice. */
void mac_table_free(struct mac_table *t);

/* Whether mac (6 bytes) is a group address: broadcast or multicast (the I/G bit). */
static inline bool mac_is_multicast(const uint8_t *mac)
{
    return (mac[0] & 1) != 0;
}

/* The peer_id that owns mac in VLAN vid (0..4095; 0 without vlan-tagging), or MAC_TABLE_NONE.
 * No allocation. */
uint32_t mac_table_lookup(const struct mac_table *t, const uint8_t *mac, uint16_t vid);

/* The source MAC mac (in VLAN vid) of a frame from client peer_id, which owns n_owned MACs now
 * (the caller counts them: NEW and MOVED add one to the sender; MOVED takes one from *prev_owner),
 * and may own quota. server_mac (6 bytes, or NULL) is never learned. *stamp (now, a monotonic
 * clock) orders learns across workers; on return it is the stamp the entry has, to be announced (a
 * move is stamped after the learn it replaces). *prev_owner is the owner before the call, or
 * MAC_TABLE_NONE. *needs_announce is set when the other workers must be told (NEW, MOVED, or a
 * KNOWN MAC whose earlier announcement could not be posted: see mac_table_announced). No
 * allocation. */
enum mac_learn mac_table_learn(struct mac_table *t, const uint8_t *mac, uint16_t vid,
                               uint32_t peer_id, uint32_t n_owned, uint32_t quota,
                               const uint8_t *server_mac, uint64_t *stamp, uint32_t *prev_owner,
                               bool *needs_announce);

/* What mac_table_learn() would answer for the same arguments, changing nothing: learn-address
 * is asked about a NEW or MOVED MAC before it is learned. *prev_owner as there. No
 * allocation. */
enum mac_learn mac_table_check(const struct mac_table *t, const uint8_t *mac, uint16_t vid,
                               uint32_t peer_id, uint32_t n_owned, uint32_t quota,
                               const uint8_t *server_mac, uint32_t *prev_owner);

/* Record whether the announcement of mac's (in VLAN vid) current owner reached the other
 * workers (false: a later frame from it tries again). */
void mac_table_announced(struct mac_table *t, const uint8_t *mac, uint16_t vid, bool is_announced);

/* Another worker learned mac in VLAN vid for peer_id at stamp: take it unless this table has a
 * newer learn of mac. Returns true when the table changed; *replaced is the owner it had before, or
 * MAC_TABLE_NONE (the caller adjusts the count of a client of its own that lost it). A full
 * table ignores a new MAC (false). No allocation. */
bool mac_table_apply(struct mac_table *t, const uint8_t *mac, uint16_t vid, uint32_t peer_id,
                     uint64_t stamp, uint32_t *replaced);

/* Forget every MAC of peer_id (the client left). Returns how many. Cost: its MACs (its chain),
 * whatever the table's size. */
size_t mac_table_forget_peer(struct mac_table *t, uint32_t peer_id);

/* What a worker tells the acceptor about one MAC of a client (MSG_MAC_NOTE) and the answer
 * (MSG_MAC_ANSWER): copied into the message's data. */
struct mac_note {
    uint8_t mac[MAC_LEN];
    uint16_t vid;        /* the VLAN the MAC is on: 0 without vlan-tagging */
    uint32_t prev_owner; /* the peer_id that had the MAC before, or MAC_TABLE_NONE */
    bool is_ask;         /* learn-address must accept it before it is learned */
    bool is_ok;          /* MSG_MAC_ANSWER: it accepted */
};

/* "aa:bb:cc:dd:ee:ff" into buf (at least 18 bytes); returns buf. */
const char *mac_str(const uint8_t *mac, char *buf, size_t buf_len);

#endif /* SERVER_ADDR_MAC_TABLE_H */
