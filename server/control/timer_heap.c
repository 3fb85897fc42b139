/* server/control/timer_heap.c: a binary min-heap of deadlines (see timer_heap.h). */
#include "server/control/timer_heap.h"

#include <errno.h>
#include <stdlib.h>

void timer_heap_init(struct timer_heap *h)
{
    h->items = NULL;
    h->n_items = 0;
    h->cap_items = 0;
}

void timer_heap_free(struct timer_heap *h)
{
    for (size_t i = 0; i < h->n_items; i++) {
        h->items[i]->index = TIMER_HEAP_NONE;
    }
    free(h->items);
    timer_heap_init(h);
}

void timer_heap_entry_init(struct timer_heap_entry *e)
{
    e->due_ms = 0;
    e->index = TIMER_HEAP_NONE;
}

int timer_heap_reserve(struct timer_heap *h, size_t n)
{
    size_t cap = h->cap_items ? h->cap_items : 64;
    struct timer_heap_entry **grown;

    if (n <= h->cap_items) {
        return 0;
    }
    while (cap < n) {
        if (cap > SIZE_MAX / 2 / sizeof(*grown)) {
            return -ENOMEM;
        }
        cap *= 2;
    }
    grown = realloc(h->items, cap * sizeof(*grown));
    if (!grown) {
        return -ENOMEM;
    }
    h->items = grown;
    h->cap_items = cap;
    return 0;
}

static void place(struct timer_heap *h, size_t i, struct timer_heap_entry *e)
{
    h->items[i] = e;
    e->index = i;
}

/* Move e (whose slot is i) towards the root while its deadline is earlier than its parent's. */
static void sift_up(struct timer_heap *h, size_t i, struct timer_heap_entry *e)
{
    while (i > 0) {
        size_t parent = (i - 1) / 2;

        if (h->items[parent]->due_ms <= e->due_ms) {
            break;
        }
        place(h, i, h->items[parent]);
        i = parent;
    }
    place(h, i, e);
}

/* Move e (whose slot is i) towards the leaves while a child's deadline is earlier. */
static void sift_down(struct timer_heap *h, size_t i, struct timer_heap_entry *e)
{
    for (;;) {
        size_t child = 2 * i + 1;

        if (child >= h->n_items) {
            break;
        }
        if (child + 1 < h->n_items && h->items[child + 1]->due_ms < h->items[child]->due_ms) {
            child++;
        }
        if (e->due_ms <= h->items[child]->due_ms) {
            break;
        }
        place(h, i, h->items[child]);
        i = child;
    }
    place(h, i, e);
}

void timer_heap_set(struct timer_heap *h, struct timer_heap_entry *e, uint64_t due_ms)
{
    if (e->index == TIMER_HEAP_NONE) {
        if (h->n_items >= h->cap_items && timer_heap_reserve(h, h->n_items + 1) != 0) {
            return; /* the caller did not reserve: left out rather than written out of bounds */
        }
        e->due_ms = due_ms;
        sift_up(h, h->n_items++, e);
        return;
    }
    if (due_ms < e->due_ms) {
        e->due_ms = due_ms;
        sift_up(h, e->index, e);
    } else if (due_ms > e->due_ms) {
        e->due_ms = due_ms;
        sift_down(h, e->index, e);
    }
}

void timer_heap_cancel(struct timer_heap *h, struct timer_heap_entry *e)
{
    size_t i = e->index;
    struct timer_heap_entry *last;

    if (i == TIMER_HEAP_NONE || i >= h->n_items || h->items[i] != e) {
        return;
    }
    e->index = TIMER_HEAP_NONE;
    last = h->items[--h->n_items];
    if (last == e) {
        return;
    }
    /* the last entry fills the hole, then goes up or down to its place */
    if (i > 0 && last->due_ms < h->items[(i - 1) / 2]->due_ms) {
        sift_up(h, i, last);
    } else {
        sift_down(h, i, last);
    }
}

struct timer_heap_entry *timer_heap_peek(const struct timer_heap *h)
{
    return h->n_items ? h->items[0] : NULL;
}

struct timer_heap_entry *timer_heap_pop_due(struct timer_heap *h, uint64_t now_ms)
{
    struct timer_heap_entry *e = timer_heap_peek(h);

    if (!e || e->due_ms > now_ms) {
        return NULL;
    }
    timer_heap_cancel(h, e);
    return e;
}
