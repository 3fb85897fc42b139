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

#include "proto/pbuf.h"

enum comp_framing {
    COMP_FRAMING_NONE = 0, /* no framing byte at all (no compression option) */
    COMP_FRAMING_LZO_STUB, /* "comp-lzo no": 0xFA before every payload */
    COMP_FRAMING_STUB_V2,  /* "compress stub-v2": 0x50 0x00 only before payloads starting 0x50 */
};

#define COMP_HEADROOM 2 /* the most bytes comp_frame puts in front of a payload */

/* The framing a pushed compression option selects: "compress stub-v2" or "comp-lzo no";
 * NULL or anything else is COMP_FRAMING_NONE. */
enum comp_framing comp_framing_for_push(const char *pushed);

/* Frame the payload in b for sending, in place: the framing bytes (COMP_HEADROOM at most) go
 * into b's headroom and b then holds the framed packet. Returns 0, or -PE_NOSPACE when b's
 * headroom is smaller than the bytes this framing needs in front of this payload (b
 * unchanged, nothing written): give every buffer that may be framed COMP_HEADROOM bytes of
 * headroom, whichever framing its destination uses. */
int comp_frame(enum comp_framing f, struct pbuf *b);

/* Strip the framing of a received, decrypted payload, in place: b then holds the payload (the
 * framing bytes become headroom). Returns 0, -PE_UNSUPPORTED (a compressed payload: LZO 0x66,
 * LZ4-v2 0x50 0x01, ...), or -PE_MALFORMED (framing missing or truncated); b is unchanged on
 * error. */
int comp_unframe(enum comp_framing f, struct pbuf *b);

#endif /* PROTO_COMP_H */
