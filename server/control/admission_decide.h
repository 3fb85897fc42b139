/* server/control/admission_decide.h: admission control for reconnect storms, decided apart from
 * the acceptor's I/O.
 *
 * After a server restart or a network outage every client sends its hard reset at once. TLS
 * handshakes cost the server CPU (tls_step.c runs them on the thread pool), so serving all of
 * them at the same time makes each one slow: past hand-window they all time out, the clients
 * start over, and the work spent on them is lost. Instead the acceptor keeps a bound on the
 * handshakes in flight (a session created, its first TLS handshake not finished): a client's
 * hard reset is answered (with the stateless cookie, cookie.c) only while there is room, so a
 * refusal costs nothing; the client sends its reset again with its reliability layer's backoff
 * (2 s, then doubling, as openvpn 2.6's reliable.c) and is answered once others have finished.
 * And a handshake that can no longer finish within its hand-window gets no more TLS work.
 *
 * Pure functions over numbers passed in: no clock, no I/O. Acceptor thread (any thread: they
 * read nothing else).
 */
#ifndef SERVER_CONTROL_ADMISSION_DECIDE_H
#define SERVER_CONTROL_ADMISSION_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Handshakes in flight per TLS thread by default (admission_decide_bound). A handshake spends
 * most of its time waiting for the client (round trips, the client's own public-key work), not
 * on our threads, so several per thread keep the pool busy; beyond that they only queue. Chosen
 * by measuring the storm's handshake rate (docs/benchmarks.md, "Reconnect storm"). */
#define ADMISSION_PER_THREAD 16
#define ADMISSION_MIN 8

/* The bound on handshakes in flight: `configured` when > 0 (OVPND_HANDSHAKES_IN_FLIGHT), else
 * ADMISSION_PER_THREAD per TLS thread (n_threads, at least 1), at least ADMISSION_MIN. */
static inline size_t admission_decide_bound(long configured, long n_threads)
{
    size_t n;

    if (configured > 0) {
        return (size_t)configured;
    }
    n = (size_t)(n_threads > 0 ? n_threads : 1) * ADMISSION_PER_THREAD;
    return n < ADMISSION_MIN ? ADMISSION_MIN : n;
}

/* Whether a new client's hard reset is answered now: only while fewer than bound handshakes are
 * in flight. A refused reset is dropped unanswered and the client sends it again. */
static inline bool admission_decide_answer(size_t n_in_flight, size_t bound)
{
    return n_in_flight < bound;
}

/* The deadline (acceptor clock, ms) of a first handshake created at created_ms, whose client
 * gives up hand_window_ms after it started its session. The client's start is known from the
 * time in the packet_id of its tls-auth / tls-crypt wrapping (openvpn 2.6 sets it when the
 * session sends its first packet, the hard reset): wrap_time_s, in wall-clock seconds, read
 * when the session was created at wall-clock now_s. It is believed only when it lies within
 * the last hand-window (a client whose clock is off by more is judged by the server's own
 * start); it is rounded up a second for its truncation. Without a wrapping (has_wrap_time
 * false) the deadline is created_ms + hand_window_ms. */
static inline uint64_t admission_decide_deadline(uint64_t created_ms, uint64_t hand_window_ms,
                                                 bool has_wrap_time, int64_t wrap_time_s,
                                                 int64_t now_s)
{
    uint64_t deadline = created_ms + hand_window_ms;

    if (has_wrap_time && wrap_time_s <= now_s &&
        (uint64_t)(now_s - wrap_time_s) * 1000u < hand_window_ms) {
        uint64_t ago_ms =
            (uint64_t)(now_s - wrap_time_s - 1 > 0 ? now_s - wrap_time_s - 1 : 0) * 1000u;

        if (ago_ms < created_ms + hand_window_ms) {
            deadline = created_ms + hand_window_ms - ago_ms;
        }
    }
    return deadline;
}

/* Whether a handshake step about to be queued would come too late: it waits behind n_queued
 * steps already queued or running on n_threads TLS threads (each about step_us microseconds,
 * the measured average) and takes its own step_us, and then the handshake still needs the
 * client's answer. When now_ms plus that exceeds deadline_ms, the client will have given up
 * (hand-window) before the handshake can finish: no more TLS work is spent on it. */
static inline bool admission_decide_too_late(uint64_t now_ms, uint64_t deadline_ms, size_t n_queued,
                                             long n_threads, uint64_t step_us)
{
    uint64_t threads = (uint64_t)(n_threads > 0 ? n_threads : 1);
    uint64_t wait_ms = ((uint64_t)n_queued / threads + 1) * step_us / 1000u;

    return now_ms >= deadline_ms || wait_ms > deadline_ms - now_ms;
}

#endif /* SERVER_CONTROL_ADMISSION_DECIDE_H */
