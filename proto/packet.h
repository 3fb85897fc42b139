/* proto/packet.h: OpenVPN packet header and control-packet body codec.
 *
 * Layouts from ssl_pkt.h (opcodes, key_id bits) and reliable.c (ACK array) of OpenVPN 2.6;
 * see sections 1.2-1.6 of docs/openvpn-protocol.md. Works on unwrapped control packets, i.e.
 * after tls-auth / tls-crypt were removed by proto/tls_wrap.
 */
#ifndef PROTO_PACKET_H
#define PROTO_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SESSION_ID_LEN 8
#define CONTROL_MAX_ACKS 8 /* RELIABLE_ACK_SIZE: more is a malformed packet */
#define P_OPCODE_SHIFT 3
#define P_KEY_ID_MASK 0x07

enum packet_opcode {
    P_CONTROL_HARD_RESET_CLIENT_V1 = 1,
    P_CONTROL_HARD_RESET_SERVER_V1 = 2,
    P_CONTROL_SOFT_RESET_V1 = 3,
    P_CONTROL_V1 = 4,
    P_ACK_V1 = 5,
    P_DATA_V1 = 6,
    P_CONTROL_HARD_RESET_CLIENT_V2 = 7,
    P_CONTROL_HARD_RESET_SERVER_V2 = 8,
    P_DATA_V2 = 9,
    P_CONTROL_HARD_RESET_CLIENT_V3 = 10,
    P_CONTROL_WKC_V1 = 11,
};

/* The peer-id meaning "none" in P_DATA_V2 (mudp.c). */
#define PEER_ID_UNDEF 0xFFFFFFu

static inline uint8_t packet_opcode(uint8_t byte0)
{
    return (uint8_t)(byte0 >> P_OPCODE_SHIFT);
}

static inline uint8_t packet_key_id(uint8_t byte0)
{
    return (uint8_t)(byte0 & P_KEY_ID_MASK);
}

static inline uint8_t packet_byte0(enum packet_opcode op, uint8_t key_id)
{
    return (uint8_t)(((unsigned)op << P_OPCODE_SHIFT) | (key_id & P_KEY_ID_MASK));
}

/* True for opcodes 3..11 except the data opcodes: what a 2.6 server treats as control. */
bool packet_is_control(uint8_t opcode);

/* True for P_DATA_V1 and P_DATA_V2. */
bool packet_is_data(uint8_t opcode);

/* Name of an opcode ("P_CONTROL_V1"), or "P_UNKNOWN". Static string. */
const char *packet_opcode_name(uint8_t opcode);

/* The ACK block of a control packet (reliable.c reliable_ack_parse / reliable_ack_write). */
struct control_acks {
    uint8_t n_acks;
    uint32_t message_id[CONTROL_MAX_ACKS];
    uint8_t remote_session_id[SESSION_ID_LEN]; /* only meaningful when n_acks > 0 */
};

/* An unwrapped control packet. payload points into the parsed buffer (not owned). */
struct control_packet {
    uint8_t opcode;
    uint8_t key_id;
    uint8_t session_id[SESSION_ID_LEN]; /* the sender's own session id */
    struct control_acks acks;
    bool has_message_id; /* false only for P_ACK_V1 */
    uint32_t message_id;
    const uint8_t *payload;
    size_t payload_len;
};

/* Parse an unwrapped control packet: byte0 || session_id || acks || [message_id] || payload.
 * buf is borrowed; out->payload points into it. A P_ACK_V1 must carry at least one ACK and no
 * payload. Returns 0, -PE_SHORT, -PE_MALFORMED (more than 8 ACKs, all-zero session id, trailing
 * bytes after a P_ACK_V1, not a control opcode). */
int control_packet_parse(const uint8_t *buf, size_t len, struct control_packet *out);

/* Serialise pkt into out (cap bytes); writes the message id unless pkt->opcode is P_ACK_V1.
 * Returns 0 or -PE_NOSPACE, -PE_MALFORMED (n_acks > 8). */
int control_packet_write(const struct control_packet *pkt, uint8_t *out, size_t cap,
                         size_t *out_len);

/* Bytes of the unwrapped control header for n ACKs: 1 + 8 + ACK_SIZE(n) + 4 (message id). */
size_t control_packet_header_len(size_t n_acks, bool has_message_id);

/* True if the 8-byte session id is all zero (invalid on receipt, session_id.h). */
bool session_id_is_zero(const uint8_t sid[SESSION_ID_LEN]);

#endif /* PROTO_PACKET_H */
