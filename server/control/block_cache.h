/* server/control/block_cache.h: blocks of one size that the acceptor gives up and takes again at
 * every connect and every control message of a connected client, kept after use instead of freed.
 *
 * Two kinds of blocks are above the M_MMAP_THRESHOLD of 16 KB that main.c sets (so that the TLS
 * record buffers of idle clients cost only their touched pages): a struct key_method2 (about
 * 17 KB: its username, password and peer-info fields have room for the longest openvpn 2.6
 * accepts; two per connect) and Mbed TLS's two record buffers (about 16.7 KB each; given up once
 * a client is connected and quiet, taken again for each later control message, its EXIT among
 * them). Each one came from a mapping of its own: an mmap, page faults, and an munmap with the TLB
 * shootdown of a multi-threaded process, on the control thread, which made an EXIT burst cost
 * the acceptor about half its time in munmap. Here a block given back (all zero) is kept, up to
 * BLOCK_CACHE_MAX of them, for the next take; once nothing was taken or given for
 * BLOCK_CACHE_IDLE_MS the kept ones are freed, so idle clients cost nothing here.
 *
 * Caller-owned struct, one thread (the acceptor's). Time comes in as ms of the caller's clock.
 */
#ifndef SERVER_CONTROL_BLOCK_CACHE_H
#define SERVER_CONTROL_BLOCK_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define BLOCK_CACHE_MAX 32 /* blocks kept at most, per size: about 550 KB of address space */
#define BLOCK_CACHE_IDLE_MS                                                                        \
    2000 /* without a take or give for this long, the kept ones are freed                          \
          */

struct block_cache {
    size_t block_len;            /* the one size this cache serves */
    void *kept[BLOCK_CACHE_MAX]; /* n_kept of them, all zero */
    size_t n_kept;
    uint64_t last_use_ms;       /* the last take or give */
    uint64_t n_taken, n_reused; /* blocks handed out, and how many of them were kept ones */
};

/* Set up c for blocks of block_len bytes, none kept. Cannot fail. */
void block_cache_init(struct block_cache *c, size_t block_len);

/* A zeroed block of c->block_len bytes: a kept one, else from calloc. NULL if out of memory. The
 * caller owns it; free() may release it, or block_cache_give() keep it. */
void *block_cache_take(struct block_cache *c, uint64_t now_ms);

/* Take back block (c->block_len bytes from malloc, calloc or block_cache_take, ALL ZERO: the
 * caller wiped what it wrote) and keep it, or free it when BLOCK_CACHE_MAX are kept already. NULL
 * is a no-op. */
void block_cache_give(struct block_cache *c, void *block, uint64_t now_ms);

/* Free the kept blocks once none was taken or given for BLOCK_CACHE_IDLE_MS (the acceptor's
 * tick). */
void block_cache_tick(struct block_cache *c, uint64_t now_ms);

/* Free every kept block. Safe on a zeroed struct. */
void block_cache_clear(struct block_cache *c);

#endif /* SERVER_CONTROL_BLOCK_CACHE_H */
