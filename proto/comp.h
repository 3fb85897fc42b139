/* proto/comp.h: compression framing of data-channel payloads, without compression.
 *
 * A client whose config has a compression option frames every payload (section 7 of
 * docs/openvpn-protocol.md; comp.h, compstub.c and lzo.c of openvpn 2.6). ovpnd compresses
 * nothing: it pushes a stub framing ("compress stub-v2", else "comp-lzo no", as 2.6's
 * "compress migrate" does) and adds or strips the framing bytes. Compressed payloads from a
 * client (which a client told "stub" never sends) are refused.
 */
#ifndef PROTO_COMP_H
#define PROTO_COMP_H

#include <stddef.h>
#include <stdint.h>

enum comp_framing {
    COMP_FRAMING_NONE = 0, /* no framing byte at all (no compression option) */
    COMP_FRAMING_LZO_STUB, /* "comp-lzo no": 0xFA before every payload */
    COMP_FRAMING_STUB_V2,  /* "compress stub-v2": 0x50 0x00 only before payloads starting 0x50 */
};

#define COMP_HEADROOM 2 /* bytes comp_frame may need in front of the payload */

/* The framing a pushed compression option selects: "compress stub-v2" or "comp-lzo no";
 * NULL or anything else is COMP_FRAMING_NONE. */
enum comp_framing comp_framing_for_push(const char *pushed);

/* Frame a payload for sending. payload must have COMP_HEADROOM writable bytes before it;
 * *out / *out_len receive the framed packet (inside that memory). Cannot fail. */
void comp_frame(enum comp_framing f, uint8_t *payload, size_t len, uint8_t **out, size_t *out_len);

/* Strip the framing of a received, decrypted payload (in place: *out points into buf).
 * Returns 0, -PE_UNSUPPORTED (a compressed payload: LZO 0x66, LZ4-v2 0x50 0x01, ...), or
 * -PE_MALFORMED (framing missing or truncated). */
int comp_unframe(enum comp_framing f, uint8_t *buf, size_t len, uint8_t **out, size_t *out_len);

#endif /* PROTO_COMP_H */
