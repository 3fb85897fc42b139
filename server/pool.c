/* server/pool.c: IPv4 address pool; see pool.h. */
#include "server/pool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define WORD_BITS 64u

/* Number of leading one bits of a contiguous mask, or -1 when the ones are not contiguous. */
static int mask_netbits(uint32_t netmask)
{
    uint32_t host = ~netmask;

    if ((host & (host + 1)) != 0) { /* host part must be 0...01...1 */
        return -1;
    }
    return netmask == 0 ? 0 : __builtin_popcount(netmask);
}

static bool bit_is_set(const struct ip_pool *p, size_t i)
{
    return (p->used[i / WORD_BITS] >> (i % WORD_BITS)) & 1u;
}

int ip_pool_init(struct ip_pool *p, uint32_t network, uint32_t netmask)
{
    int netbits = mask_netbits(netmask);
    uint32_t broadcast;
    size_t n_words;

    memset(p, 0, sizeof(*p));
    if (netbits < IP_POOL_MIN_NETBITS || netbits > IP_POOL_MAX_NETBITS ||
        (network & ~netmask) != 0) {
        return -EINVAL;
    }
    broadcast = network | ~netmask;
    n_words = ((size_t)(broadcast - network) + WORD_BITS - 1) / WORD_BITS;
    p->used = calloc(n_words, sizeof(*p->used));
    if (!p->used) {
        return -ENOMEM;
    }
    p->network = network;
    p->netmask = netmask;
    p->server_addr = network + 1;
    p->first = network + 2;
    p->last = broadcast - 1;
    p->n = (size_t)(p->last - p->first) + 1;
    return 0;
}

void ip_pool_clear(struct ip_pool *p)
{
    free(p->used);
    memset(p, 0, sizeof(*p));
}

/* Lowest free index at or above from, or p->n when there is none. */
static size_t next_free(const struct ip_pool *p, size_t from)
{
    for (size_t w = from / WORD_BITS; w * WORD_BITS < p->n; w++) {
        uint64_t free_bits = ~p->used[w];

        if (w == from / WORD_BITS) {
            free_bits &= ~(uint64_t)0 << (from % WORD_BITS);
        }
        if (free_bits != 0) {
            size_t i = w * WORD_BITS + (size_t)__builtin_ctzll(free_bits);
            return i < p->n ? i : p->n;
        }
    }
    return p->n;
}

static void take(struct ip_pool *p, size_t i)
{
    p->used[i / WORD_BITS] |= (uint64_t)1 << (i % WORD_BITS);
    p->n_used++;
    if (i == p->hint) {
        p->hint = next_free(p, i + 1);
    }
}

int ip_pool_acquire(struct ip_pool *p, uint32_t *addr)
{
    size_t i;

    if (p->n_used >= p->n) {
        return -ENOSPC;
    }
    /* Invariant: every index below hint is taken, so hint is the lowest free one. */
    i = p->hint;
    take(p, i);
    *addr = p->first + (uint32_t)i;
    return 0;
}

int ip_pool_acquire_addr(struct ip_pool *p, uint32_t addr)
{
    size_t i = ip_pool_index(p, addr);

    if (i == SIZE_MAX) {
        return -ERANGE;
    }
    if (bit_is_set(p, i)) {
        return -EEXIST;
    }
    take(p, i);
    return 0;
}

void ip_pool_release(struct ip_pool *p, uint32_t addr)
{
    size_t i = ip_pool_index(p, addr);

    if (i == SIZE_MAX || !bit_is_set(p, i)) {
        return;
    }
    p->used[i / WORD_BITS] &= ~((uint64_t)1 << (i % WORD_BITS));
    p->n_used--;
    if (i < p->hint) {
        p->hint = i;
    }
}

bool ip_pool_contains(const struct ip_pool *p, uint32_t addr)
{
    return p->used != NULL && addr >= p->first && addr <= p->last;
}

bool ip_pool_is_used(const struct ip_pool *p, uint32_t addr)
{
    size_t i = ip_pool_index(p, addr);

    return i != SIZE_MAX && bit_is_set(p, i);
}

size_t ip_pool_index(const struct ip_pool *p, uint32_t addr)
{
    return ip_pool_contains(p, addr) ? (size_t)(addr - p->first) : SIZE_MAX;
}
