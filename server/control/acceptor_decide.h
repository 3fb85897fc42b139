/* server/control/acceptor_decide.h: what the acceptor does with a datagram or a float question,
 * decided apart from its I/O.
 *
 * receive.c receives, unwraps (tls-auth/tls-crypt), parses, counts, logs and answers; the
 * choices (hand a P_DATA_V2 to its worker, which session a control packet belongs to, whether
 * its wrap packet_id is fresh, whether a client reset is answered statelessly, whether an echoed
 * session id is our cookie, whether a new session may be created, whether a session may float
 * to an address) are made here over state and a time passed in: no I/O, no libuv, no logging,
 * no clock reads. tests/fuzz/fuzz_acceptor_decide.c drives the same functions against a model.
 * Acceptor thread only.
 */
#ifndef SERVER_CONTROL_ACCEPTOR_DECIDE_H
#define SERVER_CONTROL_ACCEPTOR_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto/cursor.h"
#include "proto/packet.h"
#include "proto/packet_id.h"
#include "server/data/udp.h"
#include "server/thread/peer_id.h"

#define ACCEPTOR_DECIDE_COOKIE_KEY_LEN 32

enum acceptor_dgram {
    ACCEPTOR_DGRAM_DROP_EMPTY,  /* empty datagram */
    ACCEPTOR_DGRAM_HAND_OVER,   /* P_DATA_V2 (steering missed): post it to worker *worker */
    ACCEPTOR_DGRAM_IGNORE,      /* P_DATA_V2 shorter than its peer_id: dropped, uncounted */
    ACCEPTOR_DGRAM_DATA_V1,     /* P_DATA_V1 (a client without peer-id): to the worker of
                                 * the client at its source address */
    ACCEPTOR_DGRAM_DROP_OPCODE, /* unknown or unsupported opcode */
    ACCEPTOR_DGRAM_CONTROL,     /* unwrap, parse, then acceptor_decide_control() */
};

/* The first look at a datagram of len bytes (buf, read only) with n_workers (>= 1) workers;
 * *worker is set for ACCEPTOR_DGRAM_HAND_OVER: the owner of its peer_id (peer_id_worker()). */
static inline enum acceptor_dgram acceptor_decide_dgram(const uint8_t *buf, size_t len,
                                                        int n_workers, int *worker)
{
    uint8_t op;

    if (len < 1) {
        return ACCEPTOR_DGRAM_DROP_EMPTY;
    }
    op = packet_opcode(buf[0]);
    if (op == P_DATA_V2) {
        if (len < 4) {
            return ACCEPTOR_DGRAM_IGNORE;
        }
        *worker = peer_id_worker(load_be32(buf) & 0xFFFFFFu, n_workers);
        return ACCEPTOR_DGRAM_HAND_OVER;
    }
    if (!packet_is_control(op)) {
        return op == P_DATA_V1 ? ACCEPTOR_DGRAM_DATA_V1 : ACCEPTOR_DGRAM_DROP_OPCODE;
    }
    return ACCEPTOR_DGRAM_CONTROL;
}

/* Whether a session at `remote` whose client session id is peer_sid, dead or not (is_dead), is
 * the one a control packet from `from` with session id sid belongs to. A client that starts a
 * new session keeps its old one until the new one is authenticated, so an address can have two,
 * told apart by the id. */
static inline bool acceptor_decide_session_is(const union udp_addr *remote,
                                              const uint8_t peer_sid[SESSION_ID_LEN], bool is_dead,
                                              const union udp_addr *from,
                                              const uint8_t sid[SESSION_ID_LEN])
{
    return !is_dead && udp_addr_equal(remote, from) && memcmp(peer_sid, sid, SESSION_ID_LEN) == 0;
}

/* Whether the echoed cookie of a control packet was checked (acceptor_decide_cookie_valid()). */
enum acceptor_cookie {
    ACCEPTOR_COOKIE_UNCHECKED = 0,
    ACCEPTOR_COOKIE_VALID,
    ACCEPTOR_COOKIE_INVALID,
};

/* What is known about a parsed control packet when deciding. Borrowed pointers. */
struct acceptor_control_facts {
    const struct control_packet *pkt;
    /* The session the packet belongs to (acceptor_decide_session_is()): its wrap replay
     * window, or NULL when there is none. */
    const struct packet_id_rx *session_wrap_rx;
    bool is_wrapped;  /* tls-auth or tls-crypt is on */
    uint32_t wrap_id; /* the packet_id of its wrapping (with is_wrapped) */
    bool is_stopping; /* the server is shutting down */
    bool is_draining; /* ovpnd-drain on: no new sessions, the existing ones go on */
    /* tls-crypt-v2: the packet carried a WKc that authenticated with the server key (only
     * then may a P_CONTROL_HARD_RESET_CLIENT_V3 or P_CONTROL_WKC_V1 start anything), and its
     * wrap packet_id announced early negotiation (a 2.6 client: it sends the WKc again) */
    bool has_wkc;
    bool is_early_neg;
    enum acceptor_cookie cookie;
    bool has_session_at_addr; /* some live session at the packet's source address */
    size_t n_sessions;
    size_t max_clients;
};

enum acceptor_control {
    ACCEPTOR_CONTROL_SESSION,          /* the session's: commit wrap_id (if wrapped), process */
    ACCEPTOR_CONTROL_DROP_REPLAY,      /* the session's, but its wrap packet_id is not fresh */
    ACCEPTOR_CONTROL_ANSWER_RESET,     /* a client reset: answer statelessly with our cookie
                                        * (when connect-freq-initial allows), store nothing */
    ACCEPTOR_CONTROL_DROP_BAD_RESET,   /* a malformed P_CONTROL_HARD_RESET_CLIENT_V2 */
    ACCEPTOR_CONTROL_IGNORE,           /* shutting down: no new clients */
    ACCEPTOR_CONTROL_DROP_V3,          /* tls-crypt-v2 is not configured */
    ACCEPTOR_CONTROL_DROP_V3_OLD,      /* a tls-crypt-v2 client without early negotiation
                                        * (before 2.6): its Kc would have to be kept before
                                        * its address is proved (2.6 force-cookie refuses it) */
    ACCEPTOR_CONTROL_DROP_NO_SESSION,  /* not a packet that may start a session */
    ACCEPTOR_CONTROL_CHECK_COOKIE,     /* check the echoed cookie, set facts.cookie, ask again */
    ACCEPTOR_CONTROL_DROP_COOKIE,      /* the echoed session id is not our cookie */
    ACCEPTOR_CONTROL_DROP_MAX_CLIENTS, /* max-clients reached; silent, like 2.6 */
    ACCEPTOR_CONTROL_DROP_DRAINING,    /* draining: a new session is not answered, so that the
                                        * client's server-poll-timeout moves it on */
    ACCEPTOR_CONTROL_CREATE,           /* step 3 of the stateless handshake (protocol section
                                        * 3.5): create the session if connect-freq allows */
};

/* A parsed control packet and what is known about it: what to do. Never creates state without
 * a cookie that verified, and only ever asks to check one (ACCEPTOR_CONTROL_CHECK_COOKIE) for a
 * packet that could start a session, so junk costs no HMAC. */
static inline enum acceptor_control acceptor_decide_control(const struct acceptor_control_facts *f)
{
    const struct control_packet *pkt = f->pkt;

    if (f->session_wrap_rx) {
        if (f->is_wrapped && packet_id_rx_check(f->session_wrap_rx, f->wrap_id)) {
            return ACCEPTOR_CONTROL_DROP_REPLAY;
        }
        return ACCEPTOR_CONTROL_SESSION;
    }
    /* No session for this client session id at this address. */
    if (pkt->opcode == P_CONTROL_HARD_RESET_CLIENT_V3) {
        if (!f->has_wkc) {
            return ACCEPTOR_CONTROL_DROP_V3;
        }
        if (!f->is_early_neg) {
            return ACCEPTOR_CONTROL_DROP_V3_OLD;
        }
    }
    if (pkt->opcode == P_CONTROL_HARD_RESET_CLIENT_V2 ||
        pkt->opcode == P_CONTROL_HARD_RESET_CLIENT_V3) {
        if (f->is_stopping) {
            return ACCEPTOR_CONTROL_IGNORE;
        }
        if (f->is_draining) {
            return ACCEPTOR_CONTROL_DROP_DRAINING;
        }
        if (pkt->key_id != 0 || pkt->acks.n_acks != 0 || pkt->message_id != 0 ||
            pkt->payload_len != 0) {
            return ACCEPTOR_CONTROL_DROP_BAD_RESET;
        }
        return ACCEPTOR_CONTROL_ANSWER_RESET;
    }
    if (pkt->opcode == P_CONTROL_WKC_V1 && !f->has_wkc) {
        return ACCEPTOR_CONTROL_DROP_V3;
    }
    if ((pkt->opcode != P_ACK_V1 && pkt->opcode != P_CONTROL_V1 &&
         pkt->opcode != P_CONTROL_WKC_V1) ||
        pkt->key_id != 0) {
        return ACCEPTOR_CONTROL_DROP_NO_SESSION;
    }
    if (pkt->acks.n_acks == 0) {
        return ACCEPTOR_CONTROL_DROP_COOKIE; /* nothing echoed */
    }
    if (f->cookie == ACCEPTOR_COOKIE_UNCHECKED) {
        return ACCEPTOR_CONTROL_CHECK_COOKIE;
    }
    if (f->cookie != ACCEPTOR_COOKIE_VALID) {
        return ACCEPTOR_CONTROL_DROP_COOKIE;
    }
    if (f->is_stopping) {
        return ACCEPTOR_CONTROL_IGNORE;
    }
    if (f->is_draining) { /* answered just before draining began: not created either */
        return ACCEPTOR_CONTROL_DROP_DRAINING;
    }
    /* Like 2.6 ("new incoming connection would exceed maximum number of clients"): say nothing
     * to the client, which keeps retrying until a place is free. */
    if (!f->has_session_at_addr && f->n_sessions >= f->max_clients) {
        return ACCEPTOR_CONTROL_DROP_MAX_CLIENTS;
    }
    return ACCEPTOR_CONTROL_CREATE;
}

/* The cookie time slot at now_s (wall-clock seconds) for hand-window hand_window_s: slots last
 * half the hand-window (at least a second), and a cookie is good for its slot, the two before
 * and the one after (acceptor_decide_cookie_valid()), so for between 1 and 1.5 hand-windows. */
int64_t acceptor_decide_cookie_slot(int64_t now_s, int hand_window_s);

/* Our session id for a client reset from `from` with client session id client_sid in time slot
 * `slot`: the first SESSION_ID_LEN bytes of HMAC-SHA256 under key (ACCEPTOR_DECIDE_COOKIE_KEY_LEN
 * bytes, the server's secret, made at start) over slot, address and client_sid, into out. The
 * client echoes it in its next packet's ACK, so its return address is proved without any state
 * stored for it (the stateless handshake, protocol section 3.5). */
void acceptor_decide_cookie_sid(const uint8_t key[ACCEPTOR_DECIDE_COOKIE_KEY_LEN],
                                const union udp_addr *from,
                                const uint8_t client_sid[SESSION_ID_LEN], int64_t slot,
                                uint8_t out[SESSION_ID_LEN]);

/* Whether pkt (from `from`) echoes, as the remote session id of its ACK, the cookie we would
 * have sent to its session id in the slot of now_s, the two before or the one after
 * (acceptor_decide_cookie_slot()). False when it acknowledges nothing. Constant time in the
 * cookie. */
bool acceptor_decide_cookie_valid(const uint8_t key[ACCEPTOR_DECIDE_COOKIE_KEY_LEN],
                                  const struct control_packet *pkt, const union udp_addr *from,
                                  int64_t now_s, int hand_window_s);

enum acceptor_float {
    ACCEPTOR_FLOAT_NO,             /* refuse: not a live session of this peer, or the address
                                    * is another client's */
    ACCEPTOR_FLOAT_OK,             /* nobody else there: move the session */
    ACCEPTOR_FLOAT_OK_CLOSE_OTHER, /* only the same client's earlier sessions are there: close
                                    * them all, then move */
};

/* A worker asks whether a peer may float to an address (worker_events.c acc_handle_float). is_live:
 * the peer's control session is active and still this peer's; n_other: the other live sessions
 * at the address (in their handshake included), every one of them; n_same: how many of those
 * authenticated with the same client certificate and common name. As openvpn 2.6
 * multi_process_float, but without a certificate never the same client. */
static inline enum acceptor_float acceptor_decide_float(bool is_live, size_t n_other, size_t n_same)
{
    if (!is_live) {
        return ACCEPTOR_FLOAT_NO;
    }
    if (n_other == 0) {
        return ACCEPTOR_FLOAT_OK;
    }
    return n_same == n_other ? ACCEPTOR_FLOAT_OK_CLOSE_OTHER : ACCEPTOR_FLOAT_NO;
}

#endif /* SERVER_CONTROL_ACCEPTOR_DECIDE_H */
