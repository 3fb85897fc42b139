/* server/control/connect_freq.c: connect-freq and connect-freq-initial (see connect_freq.h). */
#include "server/control/connect_freq.h"

#include <string.h>

void connect_freq_init(struct connect_freq *f, int64_t max, int64_t per_s)
{
    memset(f, 0, sizeof(*f));
    f->max = max;
    f->per_s = per_s;
}

bool connect_freq_allow(struct connect_freq *f, int64_t now_s)
{
    if (f->per_s <= 0) {
        return true;
    }
    if (!f->has_started || now_s >= f->start_s + f->per_s) {
        f->start_s = now_s;
        f->n = 0;
        f->has_started = true;
    }
    return ++f->n <= f->max;
}

void connect_freq_initial_init(struct connect_freq_initial *r, int64_t max, int64_t per_s)
{
    memset(r, 0, sizeof(*r));
    r->max = max;
    r->per_s = per_s;
}

bool connect_freq_initial_allow(struct connect_freq_initial *r, int64_t now_s,
                                bool *is_first_refusal, int64_t *n_dropped_before)
{
    *is_first_refusal = false;
    *n_dropped_before = 0;
    if (!r->has_started || now_s > r->start_s + r->per_s) {
        *n_dropped_before = r->has_started && r->n > r->max ? r->n - r->max : 0;
        r->start_s = now_s;
        r->n = 0;
        r->has_warned = false;
        r->has_started = true;
    }
    r->n++;
    if (r->n <= r->max) {
        return true;
    }
    if (!r->has_warned) {
        r->has_warned = true;
        *is_first_refusal = true;
    }
    return false;
}

void connect_freq_initial_forgive(struct connect_freq_initial *r)
{
    if (r->n > 0) {
        r->n--;
    }
}

int64_t connect_freq_initial_left_s(const struct connect_freq_initial *r, int64_t now_s)
{
    int64_t end = r->start_s + r->per_s;

    return r->has_started && end > now_s ? end - now_s : 0;
}
