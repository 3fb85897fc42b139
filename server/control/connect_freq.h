/* server/control/connect_freq.h: openvpn 2.6's two limits on new client sessions (UDP).
 *
 *  - `connect-freq N SECS`: at most N new sessions per SECS seconds. A session is new once the
 *    client has completed the stateless three-way handshake (its first packet after our reset
 *    carried a valid session-id cookie), i.e. when the server would create its state. Counted in
 *    fixed windows that start with the first event after the previous window ended; SECS = 0
 *    means no limit, the default. (otime.c frequency_limit_event_allowed, mudp.c.)
 *  - `connect-freq-initial N SECS`: at most N answers to P_CONTROL_HARD_RESET_CLIENT_V2 per SECS
 *    seconds, so the server cannot be used to reflect traffic at spoofed addresses. A reset whose
 *    client completes the three-way handshake is taken off the count again. A window ends once
 *    more than SECS seconds have passed since it started. Default 100 per 10 s.
 *    (reflect_filter.c reflect_filter_rate_limit_check / _decrease.)
 *
 * Pure: time comes in as whole seconds of a monotonic clock. Caller-owned structs, one thread
 * (the acceptor).
 */
#ifndef SERVER_CONTROL_CONNECT_FREQ_H
#define SERVER_CONTROL_CONNECT_FREQ_H

#include <stdbool.h>
#include <stdint.h>

struct connect_freq {
    int64_t max;      /* N */
    int64_t per_s;    /* SECS; 0: no limit */
    int64_t start_s;  /* start of the current window */
    int64_t n;        /* events counted in it, allowed or not */
    bool has_started; /* a window is running */
};

/* Set up f for `connect-freq max per_s` (both >= 0). Cannot fail. */
void connect_freq_init(struct connect_freq *f, int64_t max, int64_t per_s);

/* A new session is about to be created at now_s: true if the limit allows it. Counts it either
 * way, as 2.6 does. */
bool connect_freq_allow(struct connect_freq *f, int64_t now_s);

struct connect_freq_initial {
    int64_t max;      /* N */
    int64_t per_s;    /* SECS */
    int64_t start_s;  /* start of the current period */
    int64_t n;        /* resets counted in it (minus completed handshakes) */
    bool has_started; /* a period is running */
    bool has_warned;  /* the "limit exceeded" line was logged in this period */
};

/* Set up r for `connect-freq-initial max per_s` (both >= 0). Cannot fail. */
void connect_freq_initial_init(struct connect_freq_initial *r, int64_t max, int64_t per_s);

/* A valid client hard reset arrived at now_s: true if we may answer it. *is_first_refusal is set
 * on the first refusal of a period (the caller logs once per period, like 2.6); when this call
 * started a new period, *n_dropped_before gets how many resets the previous period refused, else
 * 0. */
bool connect_freq_initial_allow(struct connect_freq_initial *r, int64_t now_s,
                                bool *is_first_refusal, int64_t *n_dropped_before);

/* A client completed the three-way handshake: its reset no longer counts. */
void connect_freq_initial_forgive(struct connect_freq_initial *r);

/* Seconds until the current period of r ends, at now_s (0 when it has). */
int64_t connect_freq_initial_left_s(const struct connect_freq_initial *r, int64_t now_s);

#endif /* SERVER_CONTROL_CONNECT_FREQ_H */
