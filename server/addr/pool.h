/* server/addr/pool.h: the dynamic client address pool (`ifconfig-pool`, `ifconfig-ipv6-pool`, or
 * the pool that `server` / `server-ipv6` set up), with openvpn 2.6's allocation rules (pool.c).
 *
 * The pool is a list of n entries. Entry i stands for one IPv4 address (type IP_POOL_INDIV:
 * start + i; type IP_POOL_NET30: the /30 block (start & ~3) + 4i, of which block+2 is the
 * client's address and block+1 the server end pushed as its peer) and, when the pool has IPv6,
 * for the IPv6 address base6 + i: both families share the entry index, as in openvpn 2.6 (the
 * "unified pool": n is the smaller of the two sizes).
 *
 * Which free entry a client gets (openvpn 2.6 pool.c ifconfig_pool_find):
 *   - with duplicate_cn: the lowest free entry, and no common name is remembered;
 *   - otherwise the entry this common name had before (it was released, or read from the
 *     ifconfig-pool-persist file), when it is free; else the lowest entry never handed out;
 *     else the entry released longest ago. Entries read from a persist file with SECONDS 0
 *     ("fixed") go only to their own common name.
 * A released entry keeps its common name, so a client that reconnects gets its old address back
 * while nobody else took it. A reserved entry (ip_pool_reserve: an address a client-config-dir
 * file names) is never handed out by these rules, only taken by ip_pool_take.
 *
 * Addresses are host byte order for IPv4, network order for IPv6. Caller-owned struct; not
 * thread-safe: only the acceptor thread changes it after start-up. type, base and base6 are
 * fixed after ip_pool_init() and may be read by any thread (workers map addresses to indices
 * with ip_pool_index_within); n4, n6 and n change when a reload resizes the pool
 * (ip_pool_resize), on the acceptor thread.
 */
#ifndef SERVER_ADDR_POOL_H
#define SERVER_ADDR_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IP_POOL_MIN_NETBITS 16 /* openvpn pool.h IFCONFIG_POOL_MIN_NETBITS */
#define IP_POOL_MAX_NETBITS 29 /* openvpn helper.c: largest prefix `server` takes with dev tun */
#define IP_POOL_MAX 65536      /* openvpn pool.h IFCONFIG_POOL_MAX: entries at most */

enum ip_pool_type {
    IP_POOL_INDIV, /* one address per client: topology subnet and p2p */
    IP_POOL_NET30, /* one /30 block per client: topology net30 */
};

struct ip_pool_params {
    enum ip_pool_type type;
    uint32_t start, end;   /* IPv4 range, inclusive (`ifconfig-pool START END`) */
    bool has_ipv6;         /* `ifconfig-ipv6-pool` or `server-ipv6` */
    uint8_t ipv6_base[16]; /* first IPv6 address of the pool */
    int ipv6_bits;         /* its prefix length, 64..124 */
    bool duplicate_cn;     /* lowest free entry first, no common names kept */
};

struct ip_pool_entry;
struct ip_pool_cn;

struct ip_pool {
    enum ip_pool_type type;
    bool has_ipv6;
    bool duplicate_cn;
    uint32_t base;     /* INDIV: the address of entry 0; NET30: the block of entry 0 */
    uint8_t base6[16]; /* the IPv6 address of entry 0 */
    size_t n4, n6;     /* the sizes of the IPv4 and IPv6 ranges (n6 0 without IPv6) */
    size_t n;          /* entries: n4, or the smaller of n4 and n6 */

    /* acceptor thread only */
    size_t n_used;
    struct ip_pool_entry *entries; /* n of them */
    uint64_t *free_bits;           /* bit i: entry i is not in use */
    uint64_t *fresh_bits;          /* bit i: free, never handed out or read, not fixed */
    size_t free_hint, fresh_hint;  /* no set bit below these */
    uint32_t lru_head, lru_tail;   /* released entries, released longest ago first */
    struct ip_pool_cn *by_cn;      /* common name -> entry that last had it */
};

/* Set up p from pp. Returns 0; -EINVAL with a reason in why (why_len bytes) for a range openvpn
 * refuses: start after end, more than IP_POOL_MAX addresses (pool.c
 * ifconfig_pool_verify_range), fewer than 2 entries ("IPv4 pool size is too small (1), must be
 * at least 2", as openvpn's ifconfig_pool_init); or -ENOMEM. On error p needs no
 * ip_pool_clear (it is left zeroed). When both families are there and their sizes differ, *note
 * (may be NULL) is set to openvpn's remark about which one limits the pool (a warning when IPv6
 * is the smaller), else to "". */
int ip_pool_init(struct ip_pool *p, const struct ip_pool_params *pp, char *why, size_t why_len,
                 char *note, size_t note_len);

/* Grow or shrink p to the range of pp (a reload: `server` with a shorter or longer netmask). pp
 * must describe the same pool but for its end: the same type, start, IPv6 base and bits. Entries
 * keep their indices, holders and common names; new ones are free and fresh; a shrink is refused
 * while a client holds an entry beyond the new end (the entries dropped forget their names and
 * reservations). Acceptor thread. Returns 0 (also when the size stays); -EINVAL with why
 * (why_len bytes) when pp is not the same pool or passes IP_POOL_MAX, -EBUSY (with why) for a
 * shrink below a held entry, -ENOMEM; p is unchanged on error. */
int ip_pool_resize(struct ip_pool *p, const struct ip_pool_params *pp, char *why, size_t why_len);

/* Free what ip_pool_init allocated and zero p. Safe on a zeroed or already cleared pool. */
void ip_pool_clear(struct ip_pool *p);

/* Give a client an entry, following the order described at the top; cn is its common name (NULL
 * or ignored with duplicate_cn). The entry remembers cn. Returns 0 with *index set, or -ENOSPC
 * when no entry may go to this client. */
int ip_pool_acquire(struct ip_pool *p, const char *cn, size_t *index);

/* Take entry index itself (a client-config-dir `ifconfig-push` address inside the pool), reserved
 * or not. It remembers no common name. Returns 0, -ERANGE when index >= n, -EEXIST when it is in
 * use. */
int ip_pool_take(struct ip_pool *p, size_t index);

/* Give entry index back. It keeps its common name, for that client's next connection, and joins
 * the end of the released list (unless fixed); a reserved entry forgets its common name and
 * waits for ip_pool_take. A free or out-of-range index is ignored. */
void ip_pool_release(struct ip_pool *p, size_t index);

/* Keep entry index out of the dynamic allocation for good (until ip_pool_clear): ip_pool_acquire
 * never returns it, not even to the common name it remembers, which a free entry forgets; only
 * ip_pool_take gives it out. For the addresses that client-config-dir files push, so that their
 * clients find them free whoever connected first (openvpn 2.6 does not do this: its pool hands
 * such an address out like any other). An entry in use stays with its holder until released.
 * Returns 0 (also when it was reserved already) or -ERANGE when index >= n. */
int ip_pool_reserve(struct ip_pool *p, size_t index);

/* Whether entry index is reserved (false for index >= n). */
bool ip_pool_is_reserved(const struct ip_pool *p, size_t index);

/* Record that common name cn had entry index (a line of the persist file; openvpn pool.c
 * ifconfig_pool_set): the entry is free, belongs to cn, counts as released at start-up, and with
 * is_fixed goes to nobody else. Returns 0, -ERANGE, -EEXIST when the entry is in use or reserved,
 * -ENOMEM. */
int ip_pool_set(struct ip_pool *p, size_t index, const char *cn, bool is_fixed);

/* The common name entry index remembers, or NULL. */
const char *ip_pool_cn(const struct ip_pool *p, size_t index);

/* Whether entry index is in use (false for index >= n). */
bool ip_pool_is_used(const struct ip_pool *p, size_t index);

/* The client's IPv4 address of entry index (NET30: block + 2). index < n. */
uint32_t ip_pool_addr(const struct ip_pool *p, size_t index);

/* NET30: the server end of entry index's block (block + 1), which the client gets as the
 * peer of its `ifconfig`; INDIV: 0. index < n. */
uint32_t ip_pool_peer(const struct ip_pool *p, size_t index);

/* The address that names entry index in the persist file: the address itself (INDIV) or the
 * block (NET30), as openvpn writes it (pool.c ifconfig_pool_handle_to_ip_base). */
uint32_t ip_pool_file_addr(const struct ip_pool *p, size_t index);

/* The entry whose persist-file address covers addr (NET30: any address of the block, as openvpn
 * pool.c ifconfig_pool_ip_base_to_handle), or SIZE_MAX. */
size_t ip_pool_file_index(const struct ip_pool *p, uint32_t addr);

/* The IPv6 address of entry index into out; only when p->has_ipv6. */
void ip_pool_addr6(const struct ip_pool *p, size_t index, uint8_t out[16]);

/* The entry of IPv6 address addr (pool.c ifconfig_pool_ipv6_base_to_handle: the first 96 bits
 * must be base6's), or SIZE_MAX. */
size_t ip_pool_index6(const struct ip_pool *p, const uint8_t addr[16]);

/* The entry whose client address is addr (NET30: only block + 2), or SIZE_MAX. Acceptor
 * thread (reads n). */
size_t ip_pool_index(const struct ip_pool *p, uint32_t addr);

/* The same, for an entry below n_max instead of n: reads only type and base, fixed at init, so
 * any thread may call it while the acceptor grows the pool (the caller's table of n_max entries
 * says whether the entry is in use). */
size_t ip_pool_index_within(const struct ip_pool *p, uint32_t addr, size_t n_max);

#endif /* SERVER_ADDR_POOL_H */
