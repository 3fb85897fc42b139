/* proto/reliable.c: the reliability layer of the OpenVPN control channel. */
#include "proto/reliable.h"

#include <stdlib.h>
#include <string.h>

#include "proto/errors.h"

void reliable_init(struct reliable *r, uint32_t first_send_id, uint32_t first_recv_id,
                   uint32_t initial_timeout_ms)
{
    memset(r, 0, sizeof(*r));
    r->next_send_id = first_send_id;
    r->next_recv_id = first_recv_id;
    r->initial_timeout_ms = initial_timeout_ms ? initial_timeout_ms : 2000;
}

void reliable_clear(struct reliable *r)
{
    for (size_t i = 0; i < RELIABLE_N_SEND; i++) {
        free(r->out[i].payload);
        r->out[i].payload = NULL;
        r->out[i].in_use = false;
    }
    for (size_t i = 0; i < RELIABLE_N_RECV; i++) {
        free(r->in[i].payload);
        r->in[i].payload = NULL;
        r->in[i].in_use = false;
    }
    r->n_acks_pending = 0;
}

/* A heap copy of len bytes (at least one byte is allocated, so an empty payload is not NULL). */
static uint8_t *dup_payload(const uint8_t *payload, size_t len)
{
    uint8_t *p = malloc(len ? len : 1);

    if (p && len) {
        memcpy(p, payload, len);
    }
    return p;
}

static const struct reliable_out *oldest_out(const struct reliable *r)
{
    const struct reliable_out *best = NULL;

    for (size_t i = 0; i < RELIABLE_N_SEND; i++) {
        const struct reliable_out *o = &r->out[i];
        if (o->in_use && (!best || o->message_id < best->message_id)) {
            best = o;
        }
    }
    return best;
}

bool reliable_can_send(const struct reliable *r)
{
    const struct reliable_out *oldest = oldest_out(r);
    size_t n_used = 0;

    for (size_t i = 0; i < RELIABLE_N_SEND; i++) {
        n_used += r->out[i].in_use;
    }
    if (n_used >= RELIABLE_N_SEND) {
        return false;
    }
    /* The peer buffers ids up to 12 ahead; 2.6 keeps new ids within 6 of the oldest unacked. */
    return !oldest || r->next_send_id - oldest->message_id < RELIABLE_N_SEND;
}

int reliable_queue(struct reliable *r, uint8_t opcode, const uint8_t *payload, size_t len,
                   uint64_t now_ms, uint32_t *message_id)
{
    struct reliable_out *slot = NULL;

    if (len > RELIABLE_MAX_PAYLOAD) {
        return -PE_NOSPACE;
    }
    if (!reliable_can_send(r)) {
        return -PE_WINDOW;
    }
    for (size_t i = 0; i < RELIABLE_N_SEND && !slot; i++) {
        if (!r->out[i].in_use) {
            slot = &r->out[i];
        }
    }
    slot->payload = dup_payload(payload, len);
    if (!slot->payload) {
        return -PE_NOSPACE;
    }
    slot->payload_len = len;
    slot->in_use = true;
    slot->opcode = opcode;
    slot->message_id = r->next_send_id++;
    slot->next_try_ms = now_ms;
    slot->timeout_ms = r->initial_timeout_ms;
    slot->n_later_acks = 0;
    if (message_id) {
        *message_id = slot->message_id;
    }
    return 0;
}

void reliable_process_acks(struct reliable *r, const struct control_acks *acks, uint64_t now_ms)
{
    for (size_t a = 0; a < acks->n_acks && a < CONTROL_MAX_ACKS; a++) {
        uint32_t id = acks->message_id[a];

        for (size_t i = 0; i < RELIABLE_N_SEND; i++) {
            struct reliable_out *o = &r->out[i];

            if (!o->in_use) {
                continue;
            }
            if (o->message_id == id) {
                free(o->payload);
                o->payload = NULL;
                o->in_use = false;
            } else if (o->message_id < id && ++o->n_later_acks >= RELIABLE_N_ACK_RETRANSMIT) {
                o->n_later_acks = 0;
                o->next_try_ms = now_ms; /* fast retransmit */
            }
        }
    }
}

static void queue_ack(struct reliable *r, uint32_t id)
{
    for (size_t i = 0; i < r->n_acks_pending; i++) {
        if (r->acks_pending[i] == id) {
            return;
        }
    }
    if (r->n_acks_pending < CONTROL_MAX_ACKS) {
        r->acks_pending[r->n_acks_pending++] = id;
    }
    /* Full: the peer retransmits and we ACK then. */
}

int reliable_receive(struct reliable *r, uint32_t message_id, const uint8_t *payload, size_t len)
{
    struct reliable_in *slot;

    if (message_id - r->next_recv_id >= RELIABLE_N_RECV && message_id >= r->next_recv_id) {
        return -PE_WINDOW; /* too far ahead: no buffer, no ACK */
    }
    if (len > RELIABLE_MAX_PAYLOAD) {
        return -PE_NOSPACE;
    }
    if (message_id < r->next_recv_id) {
        queue_ack(r, message_id); /* already delivered: re-ACK so the peer stops resending */
        return 1;
    }
    slot = &r->in[message_id % RELIABLE_N_RECV];
    if (slot->in_use) {
        queue_ack(r, message_id);
        return 1;
    }
    slot->payload = dup_payload(payload, len);
    if (!slot->payload) {
        return -PE_NOSPACE;
    }
    slot->payload_len = len;
    slot->message_id = message_id;
    slot->in_use = true;
    queue_ack(r, message_id);
    return 0;
}

bool reliable_pop(struct reliable *r, uint8_t **payload, size_t *len, uint8_t **to_free)
{
    struct reliable_in *slot = &r->in[r->next_recv_id % RELIABLE_N_RECV];

    if (!slot->in_use || slot->message_id != r->next_recv_id) {
        return false;
    }
    *payload = slot->payload;
    *len = slot->payload_len;
    *to_free = slot->payload; /* the caller frees it once consumed */
    slot->payload = NULL;
    slot->in_use = false;
    r->next_recv_id++;
    return true;
}

struct reliable_out *reliable_next_due(struct reliable *r, uint64_t now_ms)
{
    struct reliable_out *best = NULL;

    for (size_t i = 0; i < RELIABLE_N_SEND; i++) {
        struct reliable_out *o = &r->out[i];
        if (o->in_use && o->next_try_ms <= now_ms && (!best || o->message_id < best->message_id)) {
            best = o;
        }
    }
    return best;
}

void reliable_sent(struct reliable *r, struct reliable_out *o, uint64_t now_ms)
{
    (void)r;
    o->next_try_ms = now_ms + o->timeout_ms;
    o->timeout_ms =
        o->timeout_ms >= RELIABLE_MAX_TIMEOUT_MS / 2 ? RELIABLE_MAX_TIMEOUT_MS : o->timeout_ms * 2;
}

void reliable_schedule_now(struct reliable *r, uint64_t now_ms)
{
    for (size_t i = 0; i < RELIABLE_N_SEND; i++) {
        if (r->out[i].in_use) {
            r->out[i].next_try_ms = now_ms;
        }
    }
}

uint64_t reliable_next_timeout(const struct reliable *r)
{
    uint64_t t = UINT64_MAX;

    for (size_t i = 0; i < RELIABLE_N_SEND; i++) {
        if (r->out[i].in_use && r->out[i].next_try_ms < t) {
            t = r->out[i].next_try_ms;
        }
    }
    return t;
}

void reliable_take_acks(struct reliable *r, struct control_acks *acks, size_t max)
{
    size_t n = r->n_acks_pending < max ? r->n_acks_pending : max;

    if (n > CONTROL_MAX_ACKS) {
        n = CONTROL_MAX_ACKS;
    }
    for (size_t i = 0; i < n; i++) {
        acks->message_id[i] = r->acks_pending[i];
    }
    acks->n_acks = (uint8_t)n;
    memmove(r->acks_pending, r->acks_pending + n, (r->n_acks_pending - n) * sizeof(uint32_t));
    r->n_acks_pending = (uint8_t)(r->n_acks_pending - n);
}

bool reliable_has_acks(const struct reliable *r)
{
    return r->n_acks_pending > 0;
}

bool reliable_all_acked(const struct reliable *r)
{
    for (size_t i = 0; i < RELIABLE_N_SEND; i++) {
        if (r->out[i].in_use) {
            return false;
        }
    }
    return true;
}
