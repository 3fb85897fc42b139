/* proto/fragment.h: openvpn's own fragmentation of data-channel payloads (`fragment N`, UDP only).
 *
 * With `fragment N` on both sides, every data-channel payload (after compression, before
 * encryption) starts with a 4-byte header, big-endian (openvpn 2.6 fragment.h/fragment.c):
 *
 *   bits  0..1   type: 0 whole packet, 1 a piece that is not the last, 2 the last piece,
 *                3 (a test type 2.6 never sends; refused)
 *   bits  2..9   seq_id: the packet the pieces belong to (0..255, wraps)
 *   bits 10..14  frag_id: the piece's index in the packet (0..31)
 *   bits 15..28  last piece only: the piece size of the packet divided by 4
 *
 * A whole packet has seq_id and frag_id 0. Every piece but the last is exactly the piece size
 * long (a multiple of 4); the last is at most that long. The receiver keeps FRAGMENT_N_SLOTS
 * packets under reassembly, a window of seq_ids ending at the newest one seen; a piece whose
 * seq_id is FRAGMENT_N_SLOTS or more away from it starts the window afresh. A packet whose
 * pieces have not all come within FRAGMENT_TTL_MS of its latest piece is abandoned.
 *
 * Everything is preallocated by fragment_new() (one block per client, at connect): the
 * per-packet functions neither allocate nor lock, and never write outside that block or the
 * caller's buffers, whatever the pieces say. A struct fragment belongs to one thread (the worker
 * that owns the client).
 */
#ifndef PROTO_FRAGMENT_H
#define PROTO_FRAGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/pbuf.h"

#define FRAGMENT_HEADER_LEN 4
#define FRAGMENT_N_SLOTS 25     /* packets under reassembly at once (2.6 N_FRAG_BUF) */
#define FRAGMENT_MAX_PIECES 32  /* pieces per packet (2.6 MAX_FRAGS) */
#define FRAGMENT_TTL_MS 10000   /* 2.6 FRAG_TTL_SEC */
#define FRAGMENT_MIN 68         /* smallest `fragment N` 2.6 accepts */
#define FRAGMENT_SIZE_MAX 65532 /* largest piece size the header can carry (14 bits, times 4) */

enum fragment_type {
    FRAGMENT_WHOLE = 0,
    FRAGMENT_NOT_LAST = 1,
    FRAGMENT_LAST = 2,
    FRAGMENT_TEST = 3,
};

/* The fields of one header. size is only carried by FRAGMENT_LAST (else 0). */
struct fragment_header {
    enum fragment_type type;
    uint8_t seq_id;
    uint8_t frag_id; /* 0..31 */
    uint16_t size;   /* multiple of 4, at most FRAGMENT_SIZE_MAX */
};

/* Write h into out (4 bytes). frag_id is taken modulo 32, size is rounded down to a multiple of
 * 4 and written only for FRAGMENT_LAST. Cannot fail. Any thread. */
void fragment_header_write(const struct fragment_header *h, uint8_t out[FRAGMENT_HEADER_LEN]);

/* Read the header in in (4 bytes) into *h. Bits 15..30 of a header that is not
 * FRAGMENT_LAST are not interpreted (2.6 leaves them for extensions). Cannot fail. */
void fragment_header_read(const uint8_t in[FRAGMENT_HEADER_LEN], struct fragment_header *h);

/* The largest payload (compression framing included, fragment header not) that goes in one
 * datagram for `fragment fragment` (mtu: `fragment N mtu`), as 2.6 mss.c
 * frame_calculate_fragment works it out for one client: fragment minus the packet header
 * (header_len: 1 for P_DATA_V1, 4 for P_DATA_V2), the crypto overhead crypto_len (AEAD: packet
 * id and tag, 20; CBC: IV and HMAC), with mtu the outer IP and UDP headers (ip_udp_len: 28 for
 * IPv4, 48 for IPv6) and the fragment header; with CBC (cbc_block: the block size, 0 for AEAD)
 * the space is rounded down to whole blocks, one byte of padding and the packet id (4) are
 * taken off. Never below 4 (a fragment value too small for the overhead). Any thread. */
size_t fragment_max_payload(int fragment, bool mtu, size_t ip_udp_len, size_t header_len,
                            size_t crypto_len, size_t cbc_block);

/* How to cut a payload of len bytes for max_payload (fragment_max_payload): sets *piece_len
 * (every piece but the last, a multiple of 4; 2.6 optimal_fragment_size makes the last piece
 * about as long as the others) and *n_pieces. len <= max_payload is sent whole: *n_pieces 1,
 * *piece_len len. Returns 0, or -PE_NOSPACE when it would take more than FRAGMENT_MAX_PIECES
 * pieces (2.6 drops such a packet). Any thread. */
int fragment_plan(size_t len, size_t max_payload, size_t *piece_len, unsigned *n_pieces);

/* One client's fragmentation state: what it sends and what it reassembles. Opaque. */
struct fragment;

/* Allocate the state for a client (once, at connect): FRAGMENT_N_SLOTS reassembly buffers, each
 * with head bytes of room in front of a packet of up to max_len bytes and tail bytes behind it
 * (so that a reassembled packet can be framed again without copying), about
 * FRAGMENT_N_SLOTS * (head + max_len + tail) bytes in all. first_seq_id: the seq_id before the
 * first packet sent in pieces (2.6 picks it at random). NULL when out of memory or max_len is 0
 * or above 65535. Control thread; then owned by the client's worker. */
struct fragment *fragment_new(size_t max_len, size_t head, size_t tail, uint8_t first_seq_id,
                              size_t max_payload);

/* Free f. fragment_free(NULL) is a no-op. */
void fragment_free(struct fragment *f);

/* The max_payload given to fragment_new (what fragment_plan is called with). */
size_t fragment_max_payload_of(const struct fragment *f);

/* The seq_id for the next packet sent in pieces (the previous one plus 1, modulo 256). */
uint8_t fragment_next_seq_id(struct fragment *f);

/* Outcome of fragment_rx() beyond its return value. */
struct fragment_rx_info {
    bool is_piece;        /* the datagram was a piece (types 1 and 2), accepted or not */
    unsigned n_abandoned; /* incomplete packets given up by this call: timed out, pushed out
                           * of the window, or restarted with another piece size */
};

/* A decrypted payload of one datagram, b (its fragment header first), at now_ms (a monotonic
 * clock). Returns:
 *   0: b now describes a whole packet: the datagram's own payload behind the header, or a
 *      packet this piece completed, in f's memory (head bytes of headroom and tail bytes of
 *      tailroom around it); it stays valid until the next call on f;
 *   1: a piece was kept; nothing to deliver yet;
 *  -PE_SHORT: shorter than the header;
 *  -PE_MALFORMED: type 3; a whole packet with a seq_id or frag_id; a piece size of 0 or not a
 *      multiple of 4; a piece longer than its size; a piece after the last piece or a second,
 *      different last piece;
 *  -PE_NOSPACE: the piece would reach past max_len.
 * On an error nothing was written, and the packets under reassembly stay as they were (except
 * those abandoned first, see info). A piece received twice is kept once (1). Never writes
 * outside f's memory; reads only b's bytes. info may be NULL. Owner thread. */
int fragment_rx(struct fragment *f, struct pbuf *b, uint64_t now_ms, struct fragment_rx_info *info);

#endif /* PROTO_FRAGMENT_H */
