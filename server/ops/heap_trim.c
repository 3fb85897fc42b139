/* server/ops/heap_trim.c: malloc_trim() after clients leave (heap_trim.h). */
#include "server/ops/heap_trim.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

void heap_trim_init(struct heap_trim *t, uint64_t now_ms, long rss_kb)
{
    t->n_ended = 0;
    t->first_end_ms = now_ms;
    t->last_end_ms = now_ms;
    t->rss_after_kb = rss_kb;
    t->n_trims = 0;
}

void heap_trim_session_ended(struct heap_trim *t, uint64_t now_ms)
{
    if (t->n_ended++ == 0) {
        t->first_end_ms = now_ms;
    }
    t->last_end_ms = now_ms;
}

bool heap_trim_due(const struct heap_trim *t, uint64_t now_ms)
{
    if (t->n_ended == 0) {
        return false;
    }
    return now_ms - t->last_end_ms >= HEAP_TRIM_QUIET_MS ||
           now_ms - t->first_end_ms >= HEAP_TRIM_MAX_DELAY_MS;
}

bool heap_trim_worth(const struct heap_trim *t, long rss_kb)
{
    return rss_kb < 0 || t->rss_after_kb < 0 || rss_kb - t->rss_after_kb >= HEAP_TRIM_MIN_GROWTH_KB;
}

long heap_trim_rss_kb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, resident = -1;

    if (!f) {
        return -1;
    }
    if (fscanf(f, "%ld %ld", &size, &resident) != 2) {
        resident = -1;
    }
    fclose(f);
    return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static uint64_t mono_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

bool heap_trim_run(struct heap_trim *t, uint64_t now_ms, struct heap_trim_result *res)
{
    struct heap_trim_result r = {0};
    uint64_t t0;

    if (!heap_trim_due(t, now_ms)) {
        return false;
    }
    r.rss_before_kb = heap_trim_rss_kb();
    if (!heap_trim_worth(t, r.rss_before_kb)) {
        t->n_ended = 0;
        return false;
    }
    t0 = mono_us();
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 mi = mallinfo2();

    r.free_before = mi.fordblks;
    r.in_use = mi.uordblks + mi.hblkhd;
    malloc_trim(0);
#elif defined(__GLIBC__)
    malloc_trim(0);
#endif
    r.duration_us = mono_us() - t0;
    r.rss_after_kb = heap_trim_rss_kb();
    t->rss_after_kb = r.rss_after_kb;
    t->n_ended = 0;
    t->n_trims++;
    if (res) {
        *res = r;
    }
    return true;
}
