/* server/control/timer_heap.h: a min-heap of deadlines, one entry per timed object, so that a
 * periodic tick does work in proportion to what is due instead of looking at every object (the
 * acceptor keeps one entry per session: its next deadline, acceptor.c).
 *
 * Intrusive: the caller embeds a struct timer_heap_entry in each object and gets back from the
 * entry with container_of-style arithmetic. Setting, moving and cancelling an entry cost
 * O(log n); looking at the earliest one O(1). Entries with equal deadlines come out in no
 * particular order. Pure: deadlines are plain numbers (ms of the caller's clock); one thread (the
 * caller's) owns a heap and its entries.
 */
#ifndef SERVER_CONTROL_TIMER_HEAP_H
#define SERVER_CONTROL_TIMER_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TIMER_HEAP_NONE SIZE_MAX /* timer_heap_entry index: not in a heap */

struct timer_heap_entry {
    uint64_t due_ms; /* its deadline while in a heap */
    size_t index;    /* its place in the heap's array, TIMER_HEAP_NONE when not in one */
};

struct timer_heap {
    struct timer_heap_entry **items; /* n_items used of cap_items, items[0] the earliest */
    size_t n_items;
    size_t cap_items;
};

/* An empty heap (caller-owned storage). Cannot fail. */
void timer_heap_init(struct timer_heap *h);

/* Free the array (the entries are the caller's; they are left as they are). */
void timer_heap_free(struct timer_heap *h);

/* A fresh entry, in no heap (call before its first timer_heap_set). */
void timer_heap_entry_init(struct timer_heap_entry *e);

/* Make room for n entries in all (more never hurts: the array only grows). 0 or -ENOMEM. Call
 * it when an object that will own an entry is made, so that timer_heap_set cannot fail later. */
int timer_heap_reserve(struct timer_heap *h, size_t n);

/* Put e in the heap with deadline due_ms, or move it there if it is in already. The heap must
 * have room (timer_heap_reserve) when e is not in it yet. */
void timer_heap_set(struct timer_heap *h, struct timer_heap_entry *e, uint64_t due_ms);

/* Take e out of the heap; no-op when it is not in one. */
void timer_heap_cancel(struct timer_heap *h, struct timer_heap_entry *e);

/* The entry with the earliest deadline, or NULL when the heap is empty. It stays in. */
struct timer_heap_entry *timer_heap_peek(const struct timer_heap *h);

/* Take out and return the entry with the earliest deadline if that deadline is at or before
 * now_ms, else NULL. */
struct timer_heap_entry *timer_heap_pop_due(struct timer_heap *h, uint64_t now_ms);

/* Whether e is in a heap. */
static inline bool timer_heap_is_set(const struct timer_heap_entry *e)
{
    return e->index != TIMER_HEAP_NONE;
}

#endif /* SERVER_CONTROL_TIMER_HEAP_H */
