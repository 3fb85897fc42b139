/* proto/reliable.h: the reliability layer of the OpenVPN control channel.
 *
 * One struct reliable per key_state (key_id) and session. Message ids, windows, ACK rules and
 * the retransmit backoff follow OpenVPN 2.6 reliable.c / ssl.c (section 2 of
 * docs/openvpn-protocol.md): a send window of 6 packets, a receive window of 12, individual
 * (not cumulative) ACKs, duplicates re-ACKed, timeout doubling after every retransmission and a
 * fast retransmit once 3 ACKs for later ids arrived. Pure: time comes in as now_ms.
 * Owned by one thread (the acceptor that runs the session's control channel).
 */
#ifndef PROTO_RELIABLE_H
#define PROTO_RELIABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/packet.h"

#define RELIABLE_N_SEND 6           /* TLS_RELIABLE_N_SEND_BUFFERS */
#define RELIABLE_N_RECV 12          /* TLS_RELIABLE_N_REC_BUFFERS */
#define RELIABLE_N_ACK_RETRANSMIT 3 /* N_ACK_RETRANSMIT */
#define RELIABLE_MAX_PAYLOAD 2048   /* a 2.6 peer never sends more than 1600 bytes of payload */
#define RELIABLE_MAX_TIMEOUT_MS (64u * 1000u)

/* An outgoing reliable packet waiting for its ACK. payload is owned (heap). */
struct reliable_out {
    bool in_use;
    uint8_t opcode;
    uint32_t message_id;
    uint64_t next_try_ms;
    uint32_t timeout_ms;
    uint8_t n_later_acks;
    uint8_t *payload;
    size_t payload_len;
};

/* A received packet waiting for its turn. payload is owned (heap). */
struct reliable_in {
    bool in_use;
    uint32_t message_id;
    uint8_t *payload;
    size_t payload_len;
};

struct reliable {
    struct reliable_out out[RELIABLE_N_SEND];
    uint32_t next_send_id;
    struct reliable_in in[RELIABLE_N_RECV];
    uint32_t next_recv_id;
    uint32_t acks_pending[CONTROL_MAX_ACKS];
    uint8_t n_acks_pending;
    uint32_t initial_timeout_ms; /* --tls-timeout, 2000 by default */
};

/* Set up caller-owned r. first_send_id / first_recv_id are the next message ids in each
 * direction (0 for a fresh key_state; 1 after the stateless reset exchange). Cannot fail. */
void reliable_init(struct reliable *r, uint32_t first_send_id, uint32_t first_recv_id,
                   uint32_t initial_timeout_ms);

/* Free every buffered payload. r can be re-initialised afterwards. */
void reliable_clear(struct reliable *r);

/* True if one more reliable packet may be queued now (window rule of reliable_can_send). */
bool reliable_can_send(const struct reliable *r);

/* Queue a reliable packet of the given opcode; the payload is copied. Assigns the next message
 * id (returned in *message_id if not NULL) and makes it due at now_ms. Returns 0,
 * -PE_WINDOW (window full: call reliable_can_send first), -PE_NOSPACE (len > RELIABLE_MAX_PAYLOAD
 * or out of memory). */
int reliable_queue(struct reliable *r, uint8_t opcode, const uint8_t *payload, size_t len,
                   uint64_t now_ms, uint32_t *message_id);

/* Apply the ACKs of a received packet (the caller checked remote_session_id). Acked packets are
 * freed; older packets count a later ACK and become due at now_ms after 3 of them. */
void reliable_process_acks(struct reliable *r, const struct control_acks *acks, uint64_t now_ms);

/* Offer a received reliable packet. Queues an ACK for it unless it is beyond the window.
 * Returns 0 (stored), 1 (duplicate or already delivered: ACK queued, payload dropped),
 * -PE_WINDOW (beyond the receive window: dropped without ACK), -PE_NOSPACE (too big / no memory).
 */
int reliable_receive(struct reliable *r, uint32_t message_id, const uint8_t *payload, size_t len);

/* Next in-order payload, if it arrived. On true, *payload (owned by r until the next call of
 * reliable_pop or reliable_clear) holds it and next_recv_id advanced. */
bool reliable_pop(struct reliable *r, uint8_t **payload, size_t *len, uint8_t **to_free);

/* The oldest-id packet that is due at now_ms, or NULL. After sending it call reliable_sent(). */
struct reliable_out *reliable_next_due(struct reliable *r, uint64_t now_ms);

/* Record that o was (re)sent at now_ms: schedule the next try and double the timeout. */
void reliable_sent(struct reliable *r, struct reliable_out *o, uint64_t now_ms);

/* Make every outstanding packet due now (2.6 does this when a peer's first packet arrives). */
void reliable_schedule_now(struct reliable *r, uint64_t now_ms);

/* Earliest time anything is due (UINT64_MAX when nothing is outstanding). */
uint64_t reliable_next_timeout(const struct reliable *r);

/* Move up to max pending ACKs into acks (n_acks set; remote_session_id left to the caller).
 * max is CONTROL_SEND_ACK_MAX (4) on a reliable packet, CONTROL_MAX_ACKS (8) on P_ACK_V1. */
void reliable_take_acks(struct reliable *r, struct control_acks *acks, size_t max);

/* True if ACKs are waiting to be sent. */
bool reliable_has_acks(const struct reliable *r);

/* True if no sent packet is waiting for its ACK. */
bool reliable_all_acked(const struct reliable *r);

#define CONTROL_SEND_ACK_MAX 4

#endif /* PROTO_RELIABLE_H */
