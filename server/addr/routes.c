/* server/addr/routes.c: the single writer of address ownership (routes.h). */
#include "server/addr/routes.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int routes_init(struct routes *r, struct ip_pool *pool, const struct routes_ops *ops)
{
    r->pool = pool;
    r->ops = *ops;
    /* room for the largest pool (IP_POOL_MAX entries, 256 KiB of owners, pages touched only as
     * entries are used), so that a reload can grow the pool while workers read owner */
    r->n_owner = pool->n > 0 ? IP_POOL_MAX : 0;
    r->owner = calloc(r->n_owner > 0 ? r->n_owner : 1, sizeof(*r->owner));
    r->holder = calloc(r->n_owner > 0 ? r->n_owner : 1, sizeof(*r->holder));
    vroute_table_init(&r->table);
    if (!r->owner || !r->holder) {
        routes_free(r);
        return -ENOMEM;
    }
    return 0;
}

void routes_free(struct routes *r)
{
    free(r->owner);
    free(r->holder);
    r->owner = NULL;
    r->holder = NULL;
    vroute_table_free(&r->table);
}

static void entry_addr(const struct routes *r, size_t idx, uint8_t out[4])
{
    uint32_t be = htonl(ip_pool_addr(r->pool, idx));

    memcpy(out, &be, 4);
}

static void unroute_entry(struct routes *r, size_t idx)
{
    uint8_t a[4];

    atomic_store_explicit(&r->owner[idx], 0, memory_order_release);
    entry_addr(r, idx, a);
    r->ops.steer_del(r->ops.ctx, 4, a);
}

struct peer *routes_holder(const struct routes *r, size_t idx)
{
    return idx < r->pool->n ? r->holder[idx] : NULL;
}

int routes_acquire(struct routes *r, const char *cn, struct peer *p, size_t *idx)
{
    if (ip_pool_acquire(r->pool, cn, idx)) {
        return -ENOSPC;
    }
    r->holder[*idx] = p;
    return 0;
}

int routes_take(struct routes *r, size_t idx, struct peer *p)
{
    if (ip_pool_take(r->pool, idx)) {
        return -EBUSY;
    }
    r->holder[idx] = p;
    return 0;
}

void routes_take_over(struct routes *r, size_t idx, struct peer *p)
{
    unroute_entry(r, idx);
    r->holder[idx] = p;
}

int routes_reserve(struct routes *r, size_t idx)
{
    return ip_pool_reserve(r->pool, idx) ? -EINVAL : 0;
}

int routes_route_entry(struct routes *r, size_t idx, uint32_t peer_id, int worker)
{
    uint8_t a[4];

    if (peer_id == VROUTE_NONE) {
        unroute_entry(r, idx);
        return 0;
    }
    atomic_store_explicit(&r->owner[idx], peer_id + 1, memory_order_release);
    entry_addr(r, idx, a);
    return r->ops.steer_set(r->ops.ctx, 4, a, worker);
}

bool routes_release_entry(struct routes *r, size_t idx, const struct peer *p)
{
    if (idx >= r->pool->n || r->holder[idx] != p) {
        return false;
    }
    r->holder[idx] = NULL;
    unroute_entry(r, idx);
    ip_pool_release(r->pool, idx);
    return true;
}

static bool is_host(const struct vroute_key *key)
{
    return key->plen == (key->family == 4 ? 32 : 128);
}

int routes_add(struct routes *r, const struct vroute_key *key, uint32_t peer_id, int worker)
{
    if (vroute_add(&r->table, key, peer_id)) {
        return -ENOMEM;
    }
    r->ops.announce(r->ops.ctx, key, peer_id, true);
    return is_host(key) ? r->ops.steer_set(r->ops.ctx, key->family, key->addr, worker) : 0;
}

void routes_del(struct routes *r, const struct vroute_key *key, uint32_t peer_id)
{
    if (is_host(key) && vroute_get(&r->table, key) == peer_id) {
        r->ops.steer_del(r->ops.ctx, key->family, key->addr);
    }
    vroute_del(&r->table, key, peer_id);
    r->ops.announce(r->ops.ctx, key, peer_id, false);
}

uint32_t routes_get(const struct routes *r, const struct vroute_key *key)
{
    return vroute_get(&r->table, key);
}
