/* proto/packet.c: OpenVPN packet header and control-packet body codec. */
#include "proto/packet.h"

#include "proto/cursor.h"
#include "proto/errors.h"

bool packet_is_control(uint8_t opcode)
{
    return opcode >= P_CONTROL_SOFT_RESET_V1 && opcode <= P_CONTROL_WKC_V1 &&
           !packet_is_data(opcode);
}

bool packet_is_data(uint8_t opcode)
{
    return opcode == P_DATA_V1 || opcode == P_DATA_V2;
}

const char *packet_opcode_name(uint8_t opcode)
{
    switch (opcode) {
    case P_CONTROL_HARD_RESET_CLIENT_V1:
        return "P_CONTROL_HARD_RESET_CLIENT_V1";
    case P_CONTROL_HARD_RESET_SERVER_V1:
        return "P_CONTROL_HARD_RESET_SERVER_V1";
    case P_CONTROL_SOFT_RESET_V1:
        return "P_CONTROL_SOFT_RESET_V1";
    case P_CONTROL_V1:
        return "P_CONTROL_V1";
    case P_ACK_V1:
        return "P_ACK_V1";
    case P_DATA_V1:
        return "P_DATA_V1";
    case P_CONTROL_HARD_RESET_CLIENT_V2:
        return "P_CONTROL_HARD_RESET_CLIENT_V2";
    case P_CONTROL_HARD_RESET_SERVER_V2:
        return "P_CONTROL_HARD_RESET_SERVER_V2";
    case P_DATA_V2:
        return "P_DATA_V2";
    case P_CONTROL_HARD_RESET_CLIENT_V3:
        return "P_CONTROL_HARD_RESET_CLIENT_V3";
    case P_CONTROL_WKC_V1:
        return "P_CONTROL_WKC_V1";
    default:
        return "P_UNKNOWN";
    }
}

bool session_id_is_zero(const uint8_t sid[SESSION_ID_LEN])
{
    uint8_t acc = 0;

    for (size_t i = 0; i < SESSION_ID_LEN; i++) {
        acc |= sid[i];
    }
    return acc == 0;
}

size_t control_packet_header_len(size_t n_acks, bool has_message_id)
{
    return 1 + SESSION_ID_LEN + 1 + 4 * n_acks + (n_acks ? SESSION_ID_LEN : 0) +
           (has_message_id ? 4 : 0);
}

static int acks_parse(struct cursor *c, struct control_acks *acks)
{
    uint8_t n;
    int err = cur_u8(c, &n);

    if (err) {
        return err;
    }
    if (n > CONTROL_MAX_ACKS) { /* bound the count before using it */
        return -PE_MALFORMED;
    }
    for (uint8_t i = 0; i < n; i++) {
        err = cur_be32(c, &acks->message_id[i]);
        if (err) {
            return err;
        }
    }
    acks->n_acks = n;
    return n > 0 ? cur_read(c, acks->remote_session_id, SESSION_ID_LEN) : 0;
}

int control_packet_parse(const uint8_t *buf, size_t len, struct control_packet *out)
{
    struct cursor c = cur_make(buf, len);
    uint8_t b0;
    int err;

    err = cur_u8(&c, &b0);
    if (err) {
        return err;
    }
    out->opcode = packet_opcode(b0);
    out->key_id = packet_key_id(b0);
    if (!packet_is_control(out->opcode)) {
        return -PE_MALFORMED;
    }
    err = cur_read(&c, out->session_id, SESSION_ID_LEN);
    if (err) {
        return err;
    }
    if (session_id_is_zero(out->session_id)) {
        return -PE_MALFORMED;
    }
    err = acks_parse(&c, &out->acks);
    if (err) {
        return err;
    }
    if (out->opcode == P_ACK_V1) {
        out->has_message_id = false;
        out->message_id = 0;
        out->payload = c.p;
        out->payload_len = 0;
        /* An ACK packet carries ACKs and nothing else. */
        return (out->acks.n_acks == 0 || c.left != 0) ? -PE_MALFORMED : 0;
    }
    out->has_message_id = true;
    err = cur_be32(&c, &out->message_id);
    if (err) {
        return err;
    }
    out->payload = c.p;
    out->payload_len = c.left;
    return 0;
}

int control_packet_write(const struct control_packet *pkt, uint8_t *out, size_t cap,
                         size_t *out_len)
{
    struct wbuf w = wbuf_make(out, cap);
    bool has_mid = pkt->opcode != P_ACK_V1;
    int err;

    if (pkt->acks.n_acks > CONTROL_MAX_ACKS) {
        return -PE_MALFORMED;
    }
    if (control_packet_header_len(pkt->acks.n_acks, has_mid) + pkt->payload_len > cap) {
        return -PE_NOSPACE;
    }
    err = wbuf_u8(&w, packet_byte0((enum packet_opcode)pkt->opcode, pkt->key_id));
    err = err ? err : wbuf_put(&w, pkt->session_id, SESSION_ID_LEN);
    err = err ? err : wbuf_u8(&w, pkt->acks.n_acks);
    for (uint8_t i = 0; !err && i < pkt->acks.n_acks; i++) {
        err = wbuf_be32(&w, pkt->acks.message_id[i]);
    }
    if (!err && pkt->acks.n_acks > 0) {
        err = wbuf_put(&w, pkt->acks.remote_session_id, SESSION_ID_LEN);
    }
    if (!err && has_mid) {
        err = wbuf_be32(&w, pkt->message_id);
        err = err ? err : wbuf_put(&w, pkt->payload, pkt->payload_len);
    }
    if (err) {
        return err;
    }
    *out_len = w.len;
    return 0;
}
