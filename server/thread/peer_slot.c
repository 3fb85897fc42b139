/* server/thread/peer_slot.c: peer_id allocation over the workers (peer_slot.h). */
#include "server/thread/peer_slot.h"

#include <errno.h>
#include <stdlib.h>

#include "server/thread/peer_id.h"

int peer_slots_init(struct peer_slots *s, int n_workers, size_t max_local)
{
    s->n_workers = n_workers;
    s->max_local = max_local;
    s->is_used = calloc((size_t)n_workers * max_local, sizeof(*s->is_used));
    s->n_used = calloc((size_t)n_workers, sizeof(*s->n_used));
    s->lowest_free = calloc((size_t)n_workers, sizeof(*s->lowest_free));
    if (!s->is_used || !s->n_used || !s->lowest_free) {
        peer_slots_free(s);
        return -ENOMEM;
    }
    return 0;
}

void peer_slots_free(struct peer_slots *s)
{
    free(s->is_used);
    free(s->n_used);
    free(s->lowest_free);
    s->is_used = NULL;
    s->n_used = s->lowest_free = NULL;
}

int peer_slots_pick(struct peer_slots *s, uint32_t *peer_id)
{
    int best = 0;

    for (int i = 1; i < s->n_workers; i++) {
        if (s->n_used[i] < s->n_used[best]) {
            best = i;
        }
    }
    return peer_slots_pick_on(s, best, peer_id);
}

int peer_slots_pick_on(struct peer_slots *s, int best, uint32_t *peer_id)
{
    bool *used = &s->is_used[(size_t)best * s->max_local];

    for (size_t local = s->lowest_free[best]; local < s->max_local; local++) {
        if (!used[local]) {
            used[local] = true;
            s->n_used[best]++;
            s->lowest_free[best] = local + 1;
            *peer_id = peer_id_make(local, best, s->n_workers);
            return 0;
        }
    }
    return -ENOSPC;
}

void peer_slots_release(struct peer_slots *s, uint32_t peer_id)
{
    int worker = peer_id_worker(peer_id, s->n_workers);
    size_t local = peer_id_local(peer_id, s->n_workers);

    s->is_used[(size_t)worker * s->max_local + local] = false;
    s->n_used[worker]--;
    if (local < s->lowest_free[worker]) {
        s->lowest_free[worker] = local;
    }
}

size_t peer_slots_count(const struct peer_slots *s, int worker)
{
    return s->n_used[worker];
}
