/* tests/bench/loadgen_client.h: one simulated OpenVPN 2.6 client of the load generator.
 *
 * The client side of docs/openvpn-protocol.md sections 1-9 on one UDP socket of its own:
 * P_CONTROL_HARD_RESET_CLIENT_V2 wrapped with tls-crypt or tls-auth, the reliability layer, a
 * TLS 1.2 handshake with the client certificate, key-method 2 with 2.6.14's peer-info,
 * PUSH_REQUEST/PUSH_REPLY, data keys from TLS-EKM or the OpenVPN PRF, P_DATA_V2 with the pushed
 * peer-id, keepalive pings, and at the end the EXIT control message (cc-exit) or OCC_EXIT.
 * Renegotiation (P_CONTROL_SOFT_RESET_V1) is not implemented: such packets are counted and
 * ignored. Every function runs on the owning worker's thread.
 */
#ifndef TESTS_BENCH_LOADGEN_CLIENT_H
#define TESTS_BENCH_LOADGEN_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "proto/data_crypto.h"
#include "proto/kdf.h"
#include "proto/packet.h"
#include "proto/packet_id.h"
#include "proto/reliable.h"
#include "proto/tls_session.h"
#include "tests/bench/loadgen_push.h"

struct loadgen_worker;

enum loadgen_client_state {
    LOADGEN_CLIENT_IDLE = 0,   /* not started */
    LOADGEN_CLIENT_RESET,      /* hard reset sent, waiting for the server's */
    LOADGEN_CLIENT_TLS,        /* TLS handshake */
    LOADGEN_CLIENT_KEY_METHOD, /* our key-method-2 message sent, waiting for the server's */
    LOADGEN_CLIENT_PUSH,       /* waiting for the (whole) PUSH_REPLY */
    LOADGEN_CLIENT_CONNECTED,  /* data channel up */
    LOADGEN_CLIENT_EXITING,    /* EXIT sent, waiting for its ACK */
    LOADGEN_CLIENT_DONE,       /* left cleanly */
    LOADGEN_CLIENT_FAILED,
    LOADGEN_CLIENT_RETRY_WAIT, /* --retry: a failed attempt, waiting connect-retry to start over */
};

/* Counters of one client, summed up in the report. */
struct loadgen_client_stats {
    uint64_t sent;          /* echo requests sent */
    uint64_t echoed;        /* echo replies received */
    uint64_t echoed_steady; /* of those, received in the steady phase */
    uint64_t rtt_sum_us;    /* sum of echo round trips */
    uint64_t push_replies;  /* PUSH_REPLY messages received */
    uint64_t push_requests; /* PUSH_REQUEST messages sent */
    uint64_t pings_rx, pings_tx;
    uint64_t retransmits;  /* reliable control packets sent more than once */
    uint64_t drops;        /* received packets that failed a check */
    uint64_t early_data;   /* data packets that came before our keys (dropped, as 2.6 does) */
    uint64_t other_rx;     /* authentic tunnel packets that are not our echo replies */
    uint64_t echo_answers; /* echo requests to our tunnel address, answered */
    uint64_t send_errors;
    uint64_t soft_resets_ignored;
    uint64_t restarts;     /* --retry: sessions started over after hand-window */
    uint64_t resets_sent;  /* hard resets sent, retransmissions and restarts included */
    uint64_t forged;       /* --lz4-v2-forge: bad compressed payloads sent */
    uint64_t decompressed; /* --lz4-v2-forge: compressed payloads received and decompressed */
};

struct loadgen_client {
    struct loadgen_worker *w;
    size_t index; /* global client number, 0-based */
    enum loadgen_client_state state;
    bool has_socket, has_timer, was_connected, is_data_running;
    bool is_busy; /* in the worker's busy list: ticked every tick (loadgen_worker.c) */
    uv_udp_t udp;
    uv_tcp_t tcp; /* --proto tcp: instead of udp */
    uv_connect_t connect_req;
    bool is_tcp_connected;
    uint8_t *tcp_rx; /* --proto tcp: the start of a packet whose end has not arrived */
    size_t tcp_rx_len;
    uv_timer_t data_timer;
    uint8_t own_sid[SESSION_ID_LEN];
    uint8_t peer_sid[SESSION_ID_LEN];
    bool has_peer_sid;
    uint32_t wrap_tx_id, wrap_tx_time;
    struct packet_id_rx wrap_rx;
    struct reliable rel;
    struct tls_session tls;
    bool has_tls;
    /* key-method-2 secrets, kept until the data keys are derived */
    uint8_t pre_master[KDF_PRE_MASTER_LEN];
    uint8_t random1[KDF_RANDOM_LEN], random2[KDF_RANDOM_LEN];
    uint8_t server_random1[KDF_RANDOM_LEN], server_random2[KDF_RANDOM_LEN];
    struct loadgen_push push;
    struct data_key key;
    uint32_t tun_addr, gateway; /* host order */
    uint16_t icmp_seq;
    uint64_t data_sent_in_run; /* echo requests sent since data_start_ms (rate keeping) */
    uint64_t start_ms, connected_ms, km_done_ms, push_request_ms, exit_ms, data_start_ms;
    uint64_t exit_acked_ms; /* when the server acknowledged its EXIT (0: not, or not sent) */
    uint64_t last_tx_ms, last_rx_ms;
    /* --retry: when the current attempt (session) started, when the next one starts
     * (RETRY_WAIT), and how many attempts failed in a row (connect-retry's backoff) */
    uint64_t attempt_ms, retry_at_ms;
    unsigned n_failed_attempts;
    struct loadgen_client_stats st;
    const char *fail_reason; /* static string, NULL unless FAILED */
    char fail_detail[160];
};

/* Prepare c (caller-owned, zeroed) as client number index of worker w. Cannot fail. */
void loadgen_client_init(struct loadgen_client *c, struct loadgen_worker *w, size_t index);

/* Open the client's socket (bound to its source address, connected to the server) and send the
 * hard reset. On failure the client ends FAILED (it was counted as settled). */
void loadgen_client_start(struct loadgen_client *c, uint64_t now_ms);

/* Periodic work: retransmissions, hand-window, PUSH_REQUEST timing, keepalive, ping-restart,
 * and the exit once the run reaches LOADGEN_PHASE_EXIT. */
void loadgen_client_tick(struct loadgen_client *c, uint64_t now_ms);

/* True once the client will do nothing more: DONE or FAILED. */
bool loadgen_client_is_final(const struct loadgen_client *c);

/* True for a connected client with nothing outstanding (no control packet unacknowledged, no
 * ACK or TLS output waiting) before the run's exit phase: its tick only times keepalives and
 * ping-restart, whole seconds, so the worker ticks it less often and does not look at it in
 * between (loadgen_worker.c); a control packet received puts it back in the worker's busy list
 * (loadgen_worker_wake). */
bool loadgen_client_is_quiet(const struct loadgen_client *c);

/* Mark a client that never started as failed ("not started"); no-op otherwise. */
void loadgen_client_abandon(struct loadgen_client *c);

/* Close the client's handles (uv_close; the worker counts the close callbacks) and free its TLS
 * and reliability state. */
void loadgen_client_close(struct loadgen_client *c);

/* Human-readable state name. Static string. */
const char *loadgen_client_state_name(enum loadgen_client_state s);

#endif /* TESTS_BENCH_LOADGEN_CLIENT_H */
