/* server/addr/pool.c: the dynamic client address pool; see pool.h. */
#include "server/addr/pool.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#define WORD_BITS 64u
#define NO_ENTRY UINT32_MAX

struct ip_pool_entry {
    char *common_name;   /* owned; NULL when the entry remembers nobody */
    uint32_t prev, next; /* links of the released list */
    bool in_use;
    bool is_fixed;
    bool is_reserved; /* only ip_pool_take hands it out (see ip_pool_reserve) */
    bool in_lru;
};

struct ip_pool_cn {
    UT_hash_handle hh;
    uint32_t index;
    char cn[]; /* the key */
};

static void bit_set(uint64_t *w, size_t i, bool on)
{
    if (on) {
        w[i / WORD_BITS] |= (uint64_t)1 << (i % WORD_BITS);
    } else {
        w[i / WORD_BITS] &= ~((uint64_t)1 << (i % WORD_BITS));
    }
}

/* Lowest set bit at or above from among n bits, or n. */
static size_t lowest_set(const uint64_t *w, size_t n, size_t from)
{
    for (size_t k = from / WORD_BITS; k * WORD_BITS < n; k++) {
        uint64_t bits = w[k];

        if (k == from / WORD_BITS) {
            bits &= ~(uint64_t)0 << (from % WORD_BITS);
        }
        if (bits != 0) {
            size_t i = k * WORD_BITS + (size_t)__builtin_ctzll(bits);
            return i < n ? i : n;
        }
    }
    return n;
}

static uint32_t low32(const uint8_t a[16])
{
    return (uint32_t)a[12] << 24 | (uint32_t)a[13] << 16 | (uint32_t)a[14] << 8 | a[15];
}

/* openvpn pool.c ifconfig_pool_init: the IPv6 range starts at base (its host part, as far as it
 * lies in the last 32 bits, moved off zero) and holds 2^(128-bits) - host addresses from /112
 * on, IP_POOL_MAX below. */
static size_t ipv6_size(struct ip_pool *p, const struct ip_pool_params *pp)
{
    uint32_t host = low32(pp->ipv6_base);

    memcpy(p->base6, pp->ipv6_base, 16);
    if (128 - pp->ipv6_bits < 32) {
        host &= ((uint32_t)1 << (128 - pp->ipv6_bits)) - 1;
    }
    if (host == 0) {
        host++;
        p->base6[15]++;
    }
    if (pp->ipv6_bits >= 112) {
        uint32_t room = (uint32_t)1 << (128 - pp->ipv6_bits);

        return room > host ? room - host : 0;
    }
    return IP_POOL_MAX;
}

int ip_pool_init(struct ip_pool *p, const struct ip_pool_params *pp, char *why, size_t why_len,
                 char *note, size_t note_len)
{
    size_t n_words;
    char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];
    struct in_addr in;

    memset(p, 0, sizeof(*p));
    if (note && note_len) {
        note[0] = '\0';
    }
    in.s_addr = htonl(pp->start);
    inet_ntop(AF_INET, &in, a, sizeof(a));
    in.s_addr = htonl(pp->end);
    inet_ntop(AF_INET, &in, b, sizeof(b));
    if (pp->start > pp->end) {
        snprintf(why, why_len, "start IP [%s] is greater than end IP [%s]", a, b);
        return -EINVAL;
    }
    if (pp->end - pp->start >= IP_POOL_MAX) {
        snprintf(why, why_len, "address range is too large [%s -> %s] (%d addresses at most)", a, b,
                 IP_POOL_MAX);
        return -EINVAL;
    }
    p->type = pp->type;
    p->duplicate_cn = pp->duplicate_cn;
    if (pp->type == IP_POOL_NET30) {
        p->base = pp->start & ~3u;
        p->n4 = (size_t)((((uint64_t)(pp->end | 3u) + 1) - p->base) >> 2);
    } else {
        p->base = pp->start;
        p->n4 = (size_t)(pp->end - pp->start) + 1;
    }
    if (p->n4 < 2) {
        snprintf(why, why_len, "IPv4 pool size is too small (%zu), must be at least 2", p->n4);
        memset(p, 0, sizeof(*p));
        return -EINVAL;
    }
    p->n = p->n4;
    if (pp->has_ipv6) {
        p->has_ipv6 = true;
        p->n6 = ipv6_size(p, pp);
        if (p->n6 < 2) {
            snprintf(why, why_len, "IPv6 pool size is too small (%zu), must be at least 2", p->n6);
            memset(p, 0, sizeof(*p));
            return -EINVAL;
        }
        if (p->n6 < p->n) {
            p->n = p->n6;
            if (note && note_len) {
                snprintf(note, note_len,
                         "IPv4 pool size is %zu, IPv6 pool size is %zu: the IPv6 pool size "
                         "limits the number of clients that can be served from the pool (likely "
                         "a mistake: check the configuration)",
                         p->n4, p->n6);
            }
        } else if (p->n6 > p->n && note && note_len) {
            snprintf(note, note_len,
                     "IPv4 pool size is %zu, IPv6 pool size is %zu: the IPv4 pool size limits the "
                     "number of clients that can be served from the pool",
                     p->n4, p->n6);
        }
    }
    n_words = (p->n + WORD_BITS - 1) / WORD_BITS;
    p->entries = calloc(p->n, sizeof(*p->entries));
    p->free_bits = calloc(n_words, sizeof(*p->free_bits));
    p->fresh_bits = calloc(n_words, sizeof(*p->fresh_bits));
    if (!p->entries || !p->free_bits || !p->fresh_bits) {
        free(p->entries);
        free(p->free_bits);
        free(p->fresh_bits);
        memset(p, 0, sizeof(*p));
        return -ENOMEM;
    }
    for (size_t i = 0; i < p->n; i++) {
        bit_set(p->free_bits, i, true);
        bit_set(p->fresh_bits, i, true);
        p->entries[i].prev = p->entries[i].next = NO_ENTRY;
    }
    p->lru_head = p->lru_tail = NO_ENTRY;
    return 0;
}

static void forget_cn(struct ip_pool *p, size_t i)
{
    struct ip_pool_entry *e = &p->entries[i];
    struct ip_pool_cn *node = NULL;

    if (!e->common_name) {
        return;
    }
    HASH_FIND_STR(p->by_cn, e->common_name, node);
    if (node && node->index == i) {
        HASH_DEL(p->by_cn, node);
        free(node);
    }
    free(e->common_name);
    e->common_name = NULL;
}

/* 0 or -ENOMEM (then the entry remembers nobody). */
static int remember_cn(struct ip_pool *p, size_t i, const char *cn)
{
    struct ip_pool_entry *e = &p->entries[i];
    size_t len = strlen(cn);
    struct ip_pool_cn *node = NULL;

    forget_cn(p, i);
    e->common_name = strdup(cn);
    if (!e->common_name) {
        return -ENOMEM;
    }
    HASH_FIND_STR(p->by_cn, cn, node);
    if (node) {
        node->index = (uint32_t)i; /* the newest holder of a name wins */
        return 0;
    }
    node = malloc(sizeof(*node) + len + 1);
    if (!node) {
        free(e->common_name);
        e->common_name = NULL;
        return -ENOMEM;
    }
    node->index = (uint32_t)i;
    memcpy(node->cn, cn, len + 1);
    HASH_ADD_KEYPTR(hh, p->by_cn, node->cn, len, node);
    return 0;
}

void ip_pool_clear(struct ip_pool *p)
{
    struct ip_pool_cn *node, *tmp;

    HASH_ITER(hh, p->by_cn, node, tmp)
    {
        HASH_DEL(p->by_cn, node);
        free(node);
    }
    for (size_t i = 0; p->entries && i < p->n; i++) {
        free(p->entries[i].common_name);
    }
    free(p->entries);
    free(p->free_bits);
    free(p->fresh_bits);
    memset(p, 0, sizeof(*p));
}

static void lru_unlink(struct ip_pool *p, size_t i)
{
    struct ip_pool_entry *e = &p->entries[i];

    if (!e->in_lru) {
        return;
    }
    if (e->prev != NO_ENTRY) {
        p->entries[e->prev].next = e->next;
    } else {
        p->lru_head = e->next;
    }
    if (e->next != NO_ENTRY) {
        p->entries[e->next].prev = e->prev;
    } else {
        p->lru_tail = e->prev;
    }
    e->prev = e->next = NO_ENTRY;
    e->in_lru = false;
}

static void lru_append(struct ip_pool *p, size_t i)
{
    struct ip_pool_entry *e = &p->entries[i];

    e->prev = p->lru_tail;
    e->next = NO_ENTRY;
    if (p->lru_tail != NO_ENTRY) {
        p->entries[p->lru_tail].next = (uint32_t)i;
    } else {
        p->lru_head = (uint32_t)i;
    }
    p->lru_tail = (uint32_t)i;
    e->in_lru = true;
}

/* Mark free entry i in use, out of the fresh set and the released list. */
static void mark_used(struct ip_pool *p, size_t i)
{
    p->entries[i].in_use = true;
    bit_set(p->free_bits, i, false);
    bit_set(p->fresh_bits, i, false);
    lru_unlink(p, i);
    p->n_used++;
}

static size_t find_entry(struct ip_pool *p, const char *cn)
{
    size_t i;

    if (p->duplicate_cn) {
        i = lowest_set(p->free_bits, p->n, p->free_hint);
        p->free_hint = i;
        return i;
    }
    if (cn) {
        struct ip_pool_cn *node = NULL;

        HASH_FIND_STR(p->by_cn, cn, node);
        if (node && !p->entries[node->index].in_use && !p->entries[node->index].is_reserved) {
            return node->index;
        }
    }
    i = lowest_set(p->fresh_bits, p->n, p->fresh_hint);
    p->fresh_hint = i;
    if (i < p->n) {
        return i;
    }
    return p->lru_head != NO_ENTRY ? p->lru_head : p->n;
}

int ip_pool_acquire(struct ip_pool *p, const char *cn, size_t *index)
{
    size_t i;

    if (p->n_used >= p->n) {
        return -ENOSPC;
    }
    i = find_entry(p, cn);
    if (i >= p->n) {
        return -ENOSPC; /* what is left is fixed for other common names */
    }
    mark_used(p, i);
    if (p->duplicate_cn || !cn || remember_cn(p, i, cn)) {
        forget_cn(p, i);
    }
    *index = i;
    return 0;
}

int ip_pool_take(struct ip_pool *p, size_t index)
{
    if (index >= p->n) {
        return -ERANGE;
    }
    if (p->entries[index].in_use) {
        return -EEXIST;
    }
    mark_used(p, index);
    forget_cn(p, index);
    return 0;
}

void ip_pool_release(struct ip_pool *p, size_t index)
{
    struct ip_pool_entry *e;

    if (index >= p->n || !p->entries[index].in_use) {
        return;
    }
    e = &p->entries[index];
    e->in_use = false;
    p->n_used--;
    if (e->is_reserved) {
        forget_cn(p, index); /* nobody but ip_pool_take gets it again */
        return;
    }
    bit_set(p->free_bits, index, true);
    if (index < p->free_hint) {
        p->free_hint = index;
    }
    if (!e->is_fixed) {
        lru_append(p, index);
    }
}

int ip_pool_reserve(struct ip_pool *p, size_t index)
{
    struct ip_pool_entry *e;

    if (index >= p->n) {
        return -ERANGE;
    }
    e = &p->entries[index];
    if (e->is_reserved) {
        return 0;
    }
    e->is_reserved = true;
    bit_set(p->fresh_bits, index, false);
    lru_unlink(p, index);
    if (!e->in_use) {
        bit_set(p->free_bits, index, false);
        forget_cn(p, index);
    }
    return 0;
}

bool ip_pool_is_reserved(const struct ip_pool *p, size_t index)
{
    return index < p->n && p->entries[index].is_reserved;
}

int ip_pool_set(struct ip_pool *p, size_t index, const char *cn, bool is_fixed)
{
    struct ip_pool_entry *e;

    if (index >= p->n) {
        return -ERANGE;
    }
    e = &p->entries[index];
    if (e->in_use || e->is_reserved) {
        return -EEXIST;
    }
    if (remember_cn(p, index, cn)) {
        return -ENOMEM;
    }
    bit_set(p->fresh_bits, index, false);
    lru_unlink(p, index);
    e->is_fixed = is_fixed;
    if (!is_fixed) {
        lru_append(p, index);
    }
    return 0;
}

const char *ip_pool_cn(const struct ip_pool *p, size_t index)
{
    return index < p->n ? p->entries[index].common_name : NULL;
}

bool ip_pool_is_used(const struct ip_pool *p, size_t index)
{
    return index < p->n && p->entries[index].in_use;
}

uint32_t ip_pool_file_addr(const struct ip_pool *p, size_t index)
{
    return p->type == IP_POOL_NET30 ? p->base + ((uint32_t)index << 2) : p->base + (uint32_t)index;
}

uint32_t ip_pool_addr(const struct ip_pool *p, size_t index)
{
    return ip_pool_file_addr(p, index) + (p->type == IP_POOL_NET30 ? 2 : 0);
}

uint32_t ip_pool_peer(const struct ip_pool *p, size_t index)
{
    return p->type == IP_POOL_NET30 ? ip_pool_file_addr(p, index) + 1 : 0;
}

size_t ip_pool_file_index(const struct ip_pool *p, uint32_t addr)
{
    size_t i;

    if (p->n == 0 || addr < p->base) {
        return SIZE_MAX;
    }
    i = p->type == IP_POOL_NET30 ? (size_t)((addr - p->base) >> 2) : (size_t)(addr - p->base);
    return i < p->n ? i : SIZE_MAX;
}

size_t ip_pool_index(const struct ip_pool *p, uint32_t addr)
{
    size_t i = ip_pool_file_index(p, addr);

    if (i != SIZE_MAX && p->type == IP_POOL_NET30 && ((addr - p->base) & 3u) != 2) {
        return SIZE_MAX;
    }
    return i;
}

size_t ip_pool_index_within(const struct ip_pool *p, uint32_t addr, size_t n_max)
{
    size_t i;

    if (n_max == 0 || addr < p->base) {
        return SIZE_MAX;
    }
    if (p->type == IP_POOL_NET30) {
        if (((addr - p->base) & 3u) != 2) {
            return SIZE_MAX;
        }
        i = (size_t)((addr - p->base) >> 2);
    } else {
        i = (size_t)(addr - p->base);
    }
    return i < n_max ? i : SIZE_MAX;
}

/* Shrink p to n entries: refused when an entry at n or above is in use; the others there leave
 * the released list and forget their names. */
static int shrink(struct ip_pool *p, const struct ip_pool *probe, char *why, size_t why_len)
{
    size_t n = probe->n;
    struct in_addr in;
    char a[INET_ADDRSTRLEN];

    for (size_t i = n; i < p->n; i++) {
        if (p->entries[i].in_use) {
            in.s_addr = htonl(ip_pool_addr(p, i));
            inet_ntop(AF_INET, &in, a, sizeof(a));
            snprintf(why, why_len, "a client holds %s, beyond the new end", a);
            return -EBUSY;
        }
    }
    for (size_t i = n; i < p->n; i++) {
        lru_unlink(p, i);
        forget_cn(p, i);
        p->entries[i].is_fixed = p->entries[i].is_reserved = false;
        bit_set(p->free_bits, i, false);
        bit_set(p->fresh_bits, i, false);
    }
    p->free_hint = p->free_hint < n ? p->free_hint : n;
    p->fresh_hint = p->fresh_hint < n ? p->fresh_hint : n;
    p->n4 = probe->n4;
    p->n6 = probe->n6;
    p->n = n;
    return 0;
}

int ip_pool_resize(struct ip_pool *p, const struct ip_pool_params *pp, char *why, size_t why_len)
{
    struct ip_pool probe;
    size_t n_words, old_words = (p->n + WORD_BITS - 1) / WORD_BITS;
    struct ip_pool_entry *entries;
    uint64_t *free_bits, *fresh_bits;
    int err;

    if (pp->type != p->type || pp->has_ipv6 != p->has_ipv6 || pp->duplicate_cn != p->duplicate_cn) {
        snprintf(why, why_len, "the pool's type changed");
        return -EINVAL;
    }
    err = ip_pool_init(&probe, pp, why, why_len, NULL, 0); /* the checks and sizes of init */
    if (err) {
        return err;
    }
    if (probe.base != p->base || memcmp(probe.base6, p->base6, 16) != 0) {
        snprintf(why, why_len, "the pool does not start where it did");
        ip_pool_clear(&probe);
        return -EINVAL;
    }
    if (probe.n <= p->n) {
        err = probe.n < p->n ? shrink(p, &probe, why, why_len) : 0;
        ip_pool_clear(&probe);
        return err;
    }
    n_words = (probe.n + WORD_BITS - 1) / WORD_BITS;
    entries = realloc(p->entries, probe.n * sizeof(*entries));
    if (entries) {
        p->entries = entries;
    }
    free_bits = realloc(p->free_bits, n_words * sizeof(*free_bits));
    if (free_bits) {
        p->free_bits = free_bits;
    }
    fresh_bits = realloc(p->fresh_bits, n_words * sizeof(*fresh_bits));
    if (fresh_bits) {
        p->fresh_bits = fresh_bits;
    }
    if (!entries || !free_bits || !fresh_bits) {
        ip_pool_clear(&probe); /* (the arrays kept are large enough for the old n) */
        return -ENOMEM;
    }
    for (size_t k = old_words; k < n_words; k++) {
        p->free_bits[k] = p->fresh_bits[k] = 0;
    }
    for (size_t i = p->n; i < probe.n; i++) {
        memset(&p->entries[i], 0, sizeof(p->entries[i]));
        p->entries[i].prev = p->entries[i].next = NO_ENTRY;
        bit_set(p->free_bits, i, true);
        bit_set(p->fresh_bits, i, true);
    }
    p->n4 = probe.n4;
    p->n6 = probe.n6;
    p->n = probe.n;
    ip_pool_clear(&probe);
    return 0;
}

void ip_pool_addr6(const struct ip_pool *p, size_t index, uint8_t out[16])
{
    uint64_t n = index;
    unsigned carry = 0;

    for (int i = 15; i >= 0; i--) {
        unsigned sum = p->base6[i] + (unsigned)(n & 0xFF) + carry;

        out[i] = (uint8_t)sum;
        carry = sum >> 8;
        n >>= 8;
    }
}

size_t ip_pool_index6(const struct ip_pool *p, const uint8_t addr[16])
{
    uint32_t d;

    if (!p->has_ipv6 || memcmp(addr, p->base6, 12) != 0) {
        return SIZE_MAX;
    }
    d = low32(addr) - low32(p->base6);
    /* openvpn takes the difference as a signed int: addresses below the base are out */
    if (d > INT32_MAX || d >= p->n) {
        return SIZE_MAX;
    }
    return d;
}
