/* server/pool.h: the IPv4 address pool of `server NETWORK NETMASK` with `dev tun` and
 * `topology subnet`.
 *
 * Matches openvpn 2.6 (helper.c helper_client_server, topology subnet branch): the server's tun
 * address is NETWORK+1 and the pool runs from NETWORK+2 to the broadcast address minus 1. Like
 * openvpn with `dev tun`, only prefixes /16 to /29 are accepted (helper.c refuses fewer than 16
 * netbits, IFCONFIG_POOL_MIN_NETBITS, and more than 29), so a pool holds 5 to 65533 addresses.
 * Addresses are handed out lowest first.
 *
 * All addresses are IPv4 in host byte order. Caller-owned struct; not thread-safe: only the
 * thread that assigns addresses (the acceptor) may use it.
 */
#ifndef SERVER_POOL_H
#define SERVER_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IP_POOL_MIN_NETBITS 16 /* openvpn pool.h IFCONFIG_POOL_MIN_NETBITS */
#define IP_POOL_MAX_NETBITS 29 /* openvpn helper.c: largest prefix `server` takes with dev tun */

struct ip_pool {
    uint32_t network;     /* NETWORK, host bits zero */
    uint32_t netmask;     /* e.g. 0xffffff00 */
    uint32_t server_addr; /* NETWORK+1: the server's own tun address, never handed out */
    uint32_t first;       /* NETWORK+2 */
    uint32_t last;        /* broadcast - 1 */
    uint64_t *used;       /* bit i set: first+i is taken; owned, freed by ip_pool_clear */
    size_t n;             /* last - first + 1 */
    size_t n_used;
    size_t hint; /* every index below it is taken: where the lowest-free search starts */
};

/* Set up p for NETWORK/NETMASK. Returns 0, -EINVAL when the mask is not contiguous, is shorter
 * than /16 or longer than /29, or NETWORK has host bits set (openvpn refuses the same `server`
 * lines), or -ENOMEM. On error p needs no ip_pool_clear (it is left zeroed). */
int ip_pool_init(struct ip_pool *p, uint32_t network, uint32_t netmask);

/* Free what ip_pool_init allocated and zero p. Safe on a zeroed or already cleared pool. */
void ip_pool_clear(struct ip_pool *p);

/* Take the lowest free address into *addr. Returns 0 or -ENOSPC when all are taken. */
int ip_pool_acquire(struct ip_pool *p, uint32_t *addr);

/* Take addr itself (a ccd `ifconfig-push` inside the pool, or a client keeping its address).
 * Returns 0, -ERANGE when addr is outside first..last (this includes the network, server and
 * broadcast addresses), or -EEXIST when it is already taken. */
int ip_pool_acquire_addr(struct ip_pool *p, uint32_t addr);

/* Give addr back. An address outside the pool or not taken is ignored. */
void ip_pool_release(struct ip_pool *p, uint32_t addr);

/* Whether addr lies in first..last (taken or not). */
bool ip_pool_contains(const struct ip_pool *p, uint32_t addr);

/* Whether addr lies in the pool and is taken. */
bool ip_pool_is_used(const struct ip_pool *p, uint32_t addr);

/* addr - first, 0 .. n-1, to index the caller's per-address arrays; SIZE_MAX when addr is not
 * in the pool. */
size_t ip_pool_index(const struct ip_pool *p, uint32_t addr);

#endif /* SERVER_POOL_H */
