/* server/control/block_cache.c: blocks of one size kept for the next take (block_cache.h). */
#include "server/control/block_cache.h"

#include <stdlib.h>

void block_cache_init(struct block_cache *c, size_t block_len)
{
    c->block_len = block_len;
    c->n_kept = 0;
    c->last_use_ms = 0;
    c->n_taken = c->n_reused = 0;
}

void *block_cache_take(struct block_cache *c, uint64_t now_ms)
{
    c->last_use_ms = now_ms;
    c->n_taken++;
    if (c->n_kept > 0) {
        c->n_reused++;
        return c->kept[--c->n_kept];
    }
    return calloc(1, c->block_len);
}

void block_cache_give(struct block_cache *c, void *block, uint64_t now_ms)
{
    if (!block) {
        return;
    }
    c->last_use_ms = now_ms;
    if (c->n_kept < BLOCK_CACHE_MAX) {
        c->kept[c->n_kept++] = block;
        return;
    }
    free(block);
}

void block_cache_tick(struct block_cache *c, uint64_t now_ms)
{
    if (c->n_kept > 0 && now_ms - c->last_use_ms >= BLOCK_CACHE_IDLE_MS) {
        block_cache_clear(c);
    }
}

void block_cache_clear(struct block_cache *c)
{
    while (c->n_kept > 0) {
        free(c->kept[--c->n_kept]);
    }
}
