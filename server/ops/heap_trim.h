/* server/ops/heap_trim.h: give the heap's free memory back to the kernel after clients leave.
 *
 * glibc's malloc serves each thread from an arena of its own (the control thread's, the TLS
 * handshake threads') and gives a freed chunk back to the kernel only when it is big enough
 * for a mapping of its own (main.c: 16 KB and up) or when it ends a heap with nothing in use
 * above it. What a burst of handshakes and sessions allocated below 16 KB stays resident after
 * they end, in holes the next burst only partly reuses: 14 rounds of 1,000 clients that came
 * and went left the server 2.6 times its size after the first round, with no more memory in
 * use than after the first. malloc_trim() hands every free page of every arena back
 * (MADV_DONTNEED). The acceptor calls it once sessions have stopped ending for
 * HEAP_TRIM_QUIET_MS, or HEAP_TRIM_MAX_DELAY_MS after the first of them ended while they keep
 * ending, and only when the RSS has grown by HEAP_TRIM_MIN_GROWTH_KB since the last trim: a
 * trim costs a madvise() call per free chunk, measured 50-90 ms on two busy cores after 1,000
 * sessions ended (10-16 MB given back), which a server whose clients come and go one at a time
 * must not pay every few seconds. While no session ends nothing is checked at all.
 *
 * Caller-owned struct, one thread (the acceptor). Times are ms of a monotonic clock. Without
 * glibc, heap_trim_run() only reports.
 */
#ifndef SERVER_OPS_HEAP_TRIM_H
#define SERVER_OPS_HEAP_TRIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HEAP_TRIM_QUIET_MS 2000      /* no session ended for this long: trim */
#define HEAP_TRIM_MAX_DELAY_MS 60000 /* sessions keep ending: trim this long after the first */
#define HEAP_TRIM_MIN_GROWTH_KB 1024 /* RSS grown at least this much since the last trim */

struct heap_trim {
    uint64_t n_ended;      /* sessions freed since the last trim */
    uint64_t first_end_ms; /* when the oldest of them was freed */
    uint64_t last_end_ms;  /* when the newest of them was freed */
    long rss_after_kb;     /* RSS after the last trim (at start-up: then), -1 unknown */
    uint64_t n_trims;      /* trims run so far */
};

/* Set up t at now_ms, with the process's RSS then (kB, -1 unknown), as if a trim had just run.
 * Cannot fail. */
void heap_trim_init(struct heap_trim *t, uint64_t now_ms, long rss_kb);

/* A session's state was freed at now_ms. */
void heap_trim_session_ended(struct heap_trim *t, uint64_t now_ms);

/* Whether a trim is due at now_ms: some session ended since the last trim, and either none for
 * HEAP_TRIM_QUIET_MS or the first of them HEAP_TRIM_MAX_DELAY_MS ago. Pure. */
bool heap_trim_due(const struct heap_trim *t, uint64_t now_ms);

/* Whether a due trim is worth its cost at RSS rss_kb (kB, -1 unknown: yes): the RSS has grown by
 * HEAP_TRIM_MIN_GROWTH_KB since the last trim. Pure. */
bool heap_trim_worth(const struct heap_trim *t, long rss_kb);

/* The process's resident set in kB (/proc/self/statm), -1 when it cannot be read. */
long heap_trim_rss_kb(void);

/* What one trim did, for the log. Sizes in bytes, time in microseconds. */
struct heap_trim_result {
    size_t free_before; /* free bytes kept by malloc before the trim (resident or not) */
    size_t in_use;      /* bytes allocated and not freed, mmapped chunks included */
    long rss_before_kb; /* the process's resident set before and after (/proc/self/statm); */
    long rss_after_kb;  /* -1 when unknown */
    uint64_t duration_us;
};

/* If heap_trim_due(t, now_ms) and heap_trim_worth() at the current RSS: malloc_trim(0) on every
 * arena, count it, fill *res (may be NULL) and return true. Due but not worth it: forget the
 * sessions that ended (the next one to end starts the wait again) and return false; not due:
 * return false and touch nothing. Runs on the calling thread and holds each arena's lock while
 * it walks it (tens of ms, see above); threads that allocate meanwhile wait, and on the
 * per-packet path nothing allocates. */
bool heap_trim_run(struct heap_trim *t, uint64_t now_ms, struct heap_trim_result *res);

#endif
