/* server/addr/mac_table.c: Ethernet addresses of tap clients (see mac_table.h). */
#include "server/addr/mac_table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A slot's key: the 48-bit MAC, this bit, and the 12-bit VID above it; 0 is an empty slot. */
#define USED (1ull << 48)
#define VID_SHIFT 49

struct mac_slot {
    uint64_t key;
    uint64_t stamp; /* when its owner learned it (the learning worker's monotonic clock) */
    uint32_t peer_id;
    uint32_t prev, next; /* the slots of peer_id's other MACs (its chain), or MAC_TABLE_NONE */
    bool is_announced;   /* the other workers were told (only meaningful for this worker's own) */
};

static uint64_t key_of(const uint8_t *mac, uint16_t vid)
{
    uint64_t k = 0;

    for (int i = 0; i < MAC_LEN; i++) {
        k = k << 8 | mac[i];
    }
    return k | USED | (uint64_t)(vid & 0x0FFF) << VID_SHIFT;
}

/* splitmix64's finaliser over the key mixed with the table's random key */
static size_t home_of(const struct mac_table *t, uint64_t key)
{
    uint64_t x = key ^ t->hash_key;

    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return (size_t)x & (t->n_slots - 1);
}

int mac_table_init(struct mac_table *t, size_t max_entries, size_t n_peer_ids, uint64_t hash_key)
{
    size_t n = 16;

    memset(t, 0, sizeof(*t));
    if (max_entries == 0 || n_peer_ids == 0 || n_peer_ids > UINT32_MAX) {
        return -EINVAL;
    }
    if (max_entries > MAC_TABLE_MAX_ENTRIES) {
        max_entries = MAC_TABLE_MAX_ENTRIES;
    }
    while (n < 2 * max_entries) {
        n *= 2;
    }
    t->slots = calloc(n, sizeof(*t->slots));
    t->heads = malloc(n_peer_ids * sizeof(*t->heads));
    if (!t->slots || !t->heads) {
        mac_table_free(t);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n_peer_ids; i++) {
        t->heads[i] = MAC_TABLE_NONE;
    }
    t->n_heads = n_peer_ids;
    t->n_slots = n;
    t->max_entries = max_entries;
    t->hash_key = hash_key;
    return 0;
}

void mac_table_free(struct mac_table *t)
{
    free(t->slots);
    free(t->heads);
    memset(t, 0, sizeof(*t));
}

/* The slot holding key, or (when absent) SIZE_MAX with *empty the first empty slot of its
 * probe sequence. The table is never full (at most half its slots are used). */
static size_t find(const struct mac_table *t, uint64_t key, size_t *empty)
{
    size_t mask = t->n_slots - 1;

    for (size_t i = home_of(t, key);; i = (i + 1) & mask) {
        if (t->slots[i].key == key) {
            return i;
        }
        if (t->slots[i].key == 0) {
            *empty = i;
            return SIZE_MAX;
        }
    }
}

uint32_t mac_table_lookup(const struct mac_table *t, const uint8_t *mac, uint16_t vid)
{
    size_t empty, i;

    if (t->n_entries == 0) {
        return MAC_TABLE_NONE;
    }
    i = find(t, key_of(mac, vid), &empty);
    return i == SIZE_MAX ? MAC_TABLE_NONE : t->slots[i].peer_id;
}

/* Slot i (holding a MAC of its peer_id) joins the head of that peer's chain. */
static void chain_link(struct mac_table *t, size_t i)
{
    struct mac_slot *s = &t->slots[i];

    s->prev = MAC_TABLE_NONE;
    s->next = t->heads[s->peer_id];
    if (s->next != MAC_TABLE_NONE) {
        t->slots[s->next].prev = (uint32_t)i;
    }
    t->heads[s->peer_id] = (uint32_t)i;
}

/* Slot i leaves its peer's chain. */
static void chain_unlink(struct mac_table *t, size_t i)
{
    const struct mac_slot *s = &t->slots[i];

    if (s->prev != MAC_TABLE_NONE) {
        t->slots[s->prev].next = s->next;
    } else {
        t->heads[s->peer_id] = s->next;
    }
    if (s->next != MAC_TABLE_NONE) {
        t->slots[s->next].prev = s->prev;
    }
}

/* The entry of slot from moves to slot to (deletion's backward shift): its chain follows. */
static void relocate(struct mac_table *t, size_t from, size_t to)
{
    struct mac_slot *s = &t->slots[to];

    *s = t->slots[from];
    if (s->prev != MAC_TABLE_NONE) {
        t->slots[s->prev].next = (uint32_t)to;
    } else {
        t->heads[s->peer_id] = (uint32_t)to;
    }
    if (s->next != MAC_TABLE_NONE) {
        t->slots[s->next].prev = (uint32_t)to;
    }
}

/* Slot i's MAC is peer_id's now (it had another owner). */
static void change_owner(struct mac_table *t, size_t i, uint32_t peer_id)
{
    chain_unlink(t, i);
    t->slots[i].peer_id = peer_id;
    chain_link(t, i);
}

static void put(struct mac_table *t, size_t i, uint64_t key, uint32_t peer_id, uint64_t stamp,
                bool is_announced)
{
    t->slots[i] =
        (struct mac_slot){key, stamp, peer_id, MAC_TABLE_NONE, MAC_TABLE_NONE, is_announced};
    chain_link(t, i);
    t->n_entries++;
}

/* Empty slot i and shift the entries after it that probed past it back (no tombstones). */
static void remove_at(struct mac_table *t, size_t i)
{
    size_t mask = t->n_slots - 1, j = i;

    chain_unlink(t, i);
    for (;;) {
        size_t home;

        j = (j + 1) & mask;
        if (t->slots[j].key == 0) {
            break;
        }
        home = home_of(t, t->slots[j].key);
        /* j stays if its home lies cyclically in (i, j] */
        if (i <= j ? (i < home && home <= j) : (i < home || home <= j)) {
            continue;
        }
        relocate(t, j, i);
        i = j;
    }
    memset(&t->slots[i], 0, sizeof(t->slots[i]));
    t->n_entries--;
}

/* What learning mac for peer_id would do; *i is its slot (SIZE_MAX: absent, *empty the slot
 * it would take). Changes nothing. */
static enum mac_learn classify(const struct mac_table *t, const uint8_t *mac, uint16_t vid,
                               uint32_t peer_id, uint32_t n_owned, uint32_t quota,
                               const uint8_t *server_mac, size_t *i, size_t *empty,
                               uint32_t *prev_owner)
{
    static const uint8_t zero[MAC_LEN];

    *prev_owner = MAC_TABLE_NONE;
    *i = SIZE_MAX;
    if (mac_is_multicast(mac)) {
        return MAC_LEARN_MULTICAST;
    }
    if (memcmp(mac, zero, MAC_LEN) == 0) {
        return MAC_LEARN_ZERO;
    }
    if (server_mac && memcmp(mac, server_mac, MAC_LEN) == 0) {
        return MAC_LEARN_SERVER;
    }
    if (peer_id >= t->n_heads) {
        return MAC_LEARN_FULL; /* not a peer_id the table was made for */
    }
    *i = find(t, key_of(mac, vid), empty);
    if (*i != SIZE_MAX) {
        *prev_owner = t->slots[*i].peer_id;
        if (*prev_owner == peer_id) {
            return MAC_LEARN_KNOWN;
        }
        return n_owned >= quota ? MAC_LEARN_QUOTA : MAC_LEARN_MOVED;
    }
    if (n_owned >= quota) {
        return MAC_LEARN_QUOTA;
    }
    return t->n_entries >= t->max_entries ? MAC_LEARN_FULL : MAC_LEARN_NEW;
}

enum mac_learn mac_table_check(const struct mac_table *t, const uint8_t *mac, uint16_t vid,
                               uint32_t peer_id, uint32_t n_owned, uint32_t quota,
                               const uint8_t *server_mac, uint32_t *prev_owner)
{
    size_t i, empty = 0;

    return classify(t, mac, vid, peer_id, n_owned, quota, server_mac, &i, &empty, prev_owner);
}

enum mac_learn mac_table_learn(struct mac_table *t, const uint8_t *mac, uint16_t vid,
                               uint32_t peer_id, uint32_t n_owned, uint32_t quota,
                               const uint8_t *server_mac, uint64_t *stamp, uint32_t *prev_owner,
                               bool *needs_announce)
{
    size_t empty = 0, i;
    struct mac_slot *s;
    enum mac_learn r =
        classify(t, mac, vid, peer_id, n_owned, quota, server_mac, &i, &empty, prev_owner);

    *needs_announce = false;
    switch (r) {
    case MAC_LEARN_KNOWN:
        s = &t->slots[i];
        *needs_announce = !s->is_announced;
        *stamp = s->stamp;
        break;
    case MAC_LEARN_MOVED:
        change_owner(t, i, peer_id);
        s = &t->slots[i];
        s->stamp = *stamp > s->stamp ? *stamp : s->stamp + 1; /* newer than what it replaces */
        *stamp = s->stamp;
        s->is_announced = false;
        *needs_announce = true;
        break;
    case MAC_LEARN_NEW:
        put(t, empty, key_of(mac, vid), peer_id, *stamp, false);
        *needs_announce = true;
        break;
    default:
        break;
    }
    return r;
}

void mac_table_announced(struct mac_table *t, const uint8_t *mac, uint16_t vid, bool is_announced)
{
    size_t empty, i = find(t, key_of(mac, vid), &empty);

    if (i != SIZE_MAX) {
        t->slots[i].is_announced = is_announced;
    }
}

bool mac_table_apply(struct mac_table *t, const uint8_t *mac, uint16_t vid, uint32_t peer_id,
                     uint64_t stamp, uint32_t *replaced)
{
    uint64_t key = key_of(mac, vid);
    size_t empty = 0, i;
    struct mac_slot *s;

    *replaced = MAC_TABLE_NONE;
    if (mac_is_multicast(mac) || peer_id >= t->n_heads) {
        return false; /* never learned anywhere: a message saying so is not trusted either */
    }
    i = find(t, key, &empty);
    if (i == SIZE_MAX) {
        if (t->n_entries >= t->max_entries) {
            return false;
        }
        put(t, empty, key, peer_id, stamp, true);
        return true;
    }
    s = &t->slots[i];
    /* the newer learn wins; a tie (two workers in the same nanosecond) goes to the higher id,
     * the same choice on every worker */
    if (s->stamp > stamp || (s->stamp == stamp && s->peer_id >= peer_id)) {
        return false;
    }
    *replaced = s->peer_id;
    if (*replaced != peer_id) {
        change_owner(t, i, peer_id);
    }
    s->stamp = stamp;
    s->is_announced = true;
    return *replaced != peer_id;
}

size_t mac_table_forget_peer(struct mac_table *t, uint32_t peer_id)
{
    size_t n = 0;

    if (peer_id >= t->n_heads) {
        return 0;
    }
    /* removing the head makes its next the head (entries the removal shifts keep their chain) */
    while (t->heads[peer_id] != MAC_TABLE_NONE) {
        remove_at(t, t->heads[peer_id]);
        n++;
    }
    return n;
}

const char *mac_str(const uint8_t *mac, char *buf, size_t buf_len)
{
    snprintf(buf, buf_len, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
             mac[5]);
    return buf;
}
