/* server/addr/vroute.h: which client a tunnel address or subnet belongs to.
 *
 * The table maps prefixes (IPv4 or IPv6 network + prefix length) to the peer_id of the client
 * they route to: each client's own IPv6 address (/128), and the subnets behind it (`iroute`,
 * `iroute-ipv6`). A lookup is a longest-prefix match, done as openvpn's multi.c does with its
 * mroute helper: one exact-match hash probe per prefix length in use, longest first. IPv4
 * addresses of the `server` pool are not here: server.h's addr_owner array serves them.
 *
 * Each worker keeps its own table, changed only by messages from the acceptor (MSG_ROUTE_ADD /
 * MSG_ROUTE_DEL), and the acceptor keeps one to find collisions: no table is shared between
 * threads, so nothing locks. vroute_lookup() allocates nothing; vroute_add() allocates one entry.
 */
#ifndef SERVER_ADDR_VROUTE_H
#define SERVER_ADDR_VROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VROUTE_NONE UINT32_MAX /* vroute_lookup(): no route */

/* A prefix: family 4 or 6, plen 0..32 or 0..128, addr in network byte order (4 or 16 bytes
 * used, the rest zero; bits past plen zero). Compare with vroute_key_make() output only. */
struct vroute_key {
    uint8_t family;
    uint8_t plen;
    uint8_t addr[16];
};

struct vroute_entry;

struct vroute_table {
    struct vroute_entry *head;  /* uthash table */
    uint32_t n_by_plen[2][129]; /* [family 4 -> 0, 6 -> 1][plen]: entries with that length */
    size_t n_entries;
};

/* Build a key from family (4 or 6), an address (4 or 16 bytes, network order) and a prefix
 * length, clearing the host bits. -EINVAL for a bad family or plen. */
int vroute_key_make(struct vroute_key *key, int family, const uint8_t *addr, int plen);

/* "ADDR/PLEN" for family 4 or 6 (addr in network order) into buf (buf_len bytes; INET6_ADDRSTRLEN
 * + 4 is enough); returns buf. */
const char *vroute_prefix_str(int family, const uint8_t *addr, int plen, char *buf, size_t buf_len);

/* Format "198.19.1.0/24" or "2001:db8::/64" into buf (at least 64 bytes). Returns buf. */
const char *vroute_key_str(const struct vroute_key *key, char *buf, size_t buf_len);

void vroute_table_init(struct vroute_table *t);

/* Free every entry. The table may be used again after vroute_table_init(). */
void vroute_table_free(struct vroute_table *t);

/* Route key to peer_id, replacing any route of that exact prefix (openvpn: the newest client
 * to claim an iroute gets it). 0 or -ENOMEM. */
int vroute_add(struct vroute_table *t, const struct vroute_key *key, uint32_t peer_id);

/* Remove the route of key if it still points to peer_id (a later client may own it now). */
void vroute_del(struct vroute_table *t, const struct vroute_key *key, uint32_t peer_id);

/* The peer_id of the exact prefix key, or VROUTE_NONE. */
uint32_t vroute_get(const struct vroute_table *t, const struct vroute_key *key);

/* The peer_id whose route holds addr (family 4: 4 bytes, 6: 16 bytes, network order) with the
 * longest prefix, or VROUTE_NONE. No allocation; cost: one hash probe per prefix length used. */
uint32_t vroute_lookup(const struct vroute_table *t, int family, const uint8_t *addr);

#endif /* SERVER_ADDR_VROUTE_H */
