/* server/control/admission_decide.h: admission control for reconnect storms, decided apart from
 * the acceptor's I/O.
 *
 * After a server restart or a network outage every client sends its hard reset at once. TLS
 * handshakes cost the server CPU (tls_step.c runs them on the thread pool), so serving all of
 * them at the same time makes each one slow: past hand-window they all time out, the clients
 * start over, and the work spent on them is lost. Instead the acceptor keeps a bound on the
 * handshakes in flight (a session created, its client not yet connected): a client's
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

/* The bound on handshakes in flight, unless configured: as many as the server finishes in a
 * quarter of the hand-window at its handshake rate (Little's law: bound = rate x time in
 * flight). Then a client admitted late in its hand-window (after resets that went unanswered)
 * still connects, and the work admitted at one wave of retransmitted resets (2.6 clients send
 * theirs again after 2, 6, 14 and 30 s) lasts until about the next one, so the TLS threads do
 * not run dry between them. The rate is what the server showed it can do: the highest number
 * of first handshakes finished in one second lately (decaying by 1/16 a second), and never less
 * than half what its TLS threads could do at the measured TLS cost of a handshake, so that a
 * storm after a quiet time is not throttled while the rate is learnt. */
#define ADMISSION_MIN 16
#define ADMISSION_MAX 100000
#define ADMISSION_HS_US_DEFAULT 10000 /* a handshake's TLS work until one is measured: 10 ms */

/* The handshake rate (per second) the bound is made from, once a second: the larger of
 * finished_last_s (first negotiations completed in the last second), the previous rate decayed
 * by 1/16, and half of n_threads (at least 1) TLS threads' rate at hs_us microseconds of TLS
 * work a handshake (ADMISSION_HS_US_DEFAULT when 0). But when handshakes in flight ran out of
 * time in the last second (had_timeouts: hand-window, or dropped as too late), more were
 * admitted than finish in time (the clients, or the machine, are slower than the TLS threads
 * alone would say): then the larger of finished_last_s and half the previous rate, without the
 * floor. */
static inline uint64_t admission_decide_rate(uint64_t prev_rate, uint64_t finished_last_s,
                                             long n_threads, uint64_t hs_us, bool had_timeouts)
{
    uint64_t threads = (uint64_t)(n_threads > 0 ? n_threads : 1);
    uint64_t floor = threads * 1000000u / (hs_us ? hs_us : ADMISSION_HS_US_DEFAULT) / 2;
    uint64_t r = had_timeouts ? prev_rate / 2 : prev_rate - prev_rate / 16;

    r = finished_last_s > r ? finished_last_s : r;
    return had_timeouts || r > floor ? r : floor;
}

/* The bound: `configured` when > 0 (OVPND_HANDSHAKES_IN_FLIGHT); else rate (handshakes a
 * second, admission_decide_rate) times a quarter of hand_window_ms, within [ADMISSION_MIN,
 * ADMISSION_MAX]. */
static inline size_t admission_decide_bound(long configured, uint64_t rate, uint64_t hand_window_ms)
{
    uint64_t n;

    if (configured > 0) {
        return (size_t)configured;
    }
    n = rate * hand_window_ms / 4000u;
    return (size_t)(n < ADMISSION_MIN ? ADMISSION_MIN : n > ADMISSION_MAX ? ADMISSION_MAX : n);
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
