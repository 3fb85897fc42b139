/* server/data/moderation.c: adaptive interrupt moderation decisions (moderation.h). */
#include "server/data/moderation.h"

#include <string.h>

void moderation_init(struct moderation *m, uint32_t period_us, uint32_t bulk_len)
{
    memset(m, 0, sizeof(*m));
    m->period_us = period_us;
    m->bulk_len = bulk_len;
}

bool moderation_on_wakeup(struct moderation *m, const struct moderation_batch *b, uint64_t now_us)
{
    bool is_recent;

    if (m->period_us == 0 || m->is_polling || b->n_bulk == 0) {
        return false;
    }
    is_recent = m->last_bulk_us != 0 && now_us - m->last_bulk_us < 2 * (uint64_t)m->period_us;
    m->last_bulk_us = now_us;
    if (b->n_bulk >= MODERATION_MIN_BULK || is_recent) {
        m->is_polling = true;
        return true;
    }
    return false;
}

bool moderation_on_poll(struct moderation *m, const struct moderation_batch *b, uint64_t now_us)
{
    if (!m->is_polling) {
        return false;
    }
    if (b->n_bulk > 0) {
        m->last_bulk_us = now_us;
        return false;
    }
    m->is_polling = false;
    return true;
}
