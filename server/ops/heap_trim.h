/* server/ops/heap_trim.h: give the heap's free memory back to the kernel after clients leave.
 *
 * glibc's malloc keeps what a thread freed in that thread's arena (the acceptor's, and one per
 * TLS handshake thread), and returns it to the kernel only from the top of a heap, past the
 * last chunk still in use. A burst of handshakes and sessions that then end leaves most of
 * their memory resident but free, in holes the next burst only partly reuses: 14 rounds of
 * 1,000 clients that came and went left the server 2.4 times its size after the first round.
 * malloc_trim() hands every free page in every arena back (MADV_DONTNEED), so the acceptor
 * calls it once the sessions that ended have stopped ending for a while (HEAP_TRIM_QUIET_MS),
 * or at the latest HEAP_TRIM_MAX_DELAY_MS after the previous trim while they keep ending.
 * No trim while no session ended: a server whose clients stay pays nothing.
 *
 * Caller-owned struct, one thread (the acceptor). Times are ms of a monotonic clock. Without
 * glibc, heap_trim_run() only reports.
 */
#ifndef SERVER_HEAP_TRIM_H
#define SERVER_HEAP_TRIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HEAP_TRIM_QUIET_MS 2000      /* no session ended for this long: trim */
#define HEAP_TRIM_MAX_DELAY_MS 60000 /* sessions keep ending: trim this long after the last */

struct heap_trim {
    uint64_t n_ended;      /* sessions freed since the last trim */
    uint64_t last_end_ms;  /* when the newest of them was freed */
    uint64_t last_trim_ms; /* when the last trim ran (start-up counts as one) */
    uint64_t n_trims;      /* trims run so far */
};

/* Set up t at now_ms (as if a trim had just run). Cannot fail. */
void heap_trim_init(struct heap_trim *t, uint64_t now_ms);

/* A session's state was freed at now_ms. */
void heap_trim_session_ended(struct heap_trim *t, uint64_t now_ms);

/* Whether a trim is due at now_ms: some session ended since the last trim, and either none for
 * HEAP_TRIM_QUIET_MS or the last trim is HEAP_TRIM_MAX_DELAY_MS old. Pure. */
bool heap_trim_due(const struct heap_trim *t, uint64_t now_ms);

/* What one trim did, for the log. Sizes in bytes, time in microseconds. */
struct heap_trim_result {
    size_t free_before; /* free bytes kept by malloc before the trim (resident or not) */
    size_t in_use;      /* bytes allocated and not freed, mmapped chunks included */
    long rss_before_kb; /* the process's resident set before and after (/proc/self/statm); */
    long rss_after_kb;  /* -1 when unknown */
    uint64_t duration_us;
};

/* If heap_trim_due(t, now_ms): malloc_trim(0) on every arena, count it, fill *res (may be
 * NULL) and return true; else return false and touch nothing. Runs on the calling thread and
 * holds each arena's lock while it walks it (about a millisecond for tens of MB of free heap);
 * threads that allocate meanwhile wait, which only the control plane does. */
bool heap_trim_run(struct heap_trim *t, uint64_t now_ms, struct heap_trim_result *res);

#endif
