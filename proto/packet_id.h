/* proto/packet_id.h: replay protection for incoming data-channel packet ids.
 *
 * Semantics of OpenVPN 2.6 packet_id.c (packet_id_test / packet_id_add) for the short-form ids
 * of the AEAD data channel, i.e. `--replay-window n` without the time part (section 6.6 of
 * docs/openvpn-protocol.md):
 *   - id 0 is never valid;
 *   - an id above the highest accepted one is always accepted, however large the jump;
 *   - a lower id is accepted when highest - id < window and it was not accepted before;
 *   - window 0 is the strict mode 2.6 uses without backtracking: only highest + 1, except that
 *     the very first id may be any non-zero value (2.6 accepts any id while nothing was seen).
 * The `t` (seconds) part of --replay-window is not implemented: ids are never expired by age.
 *
 * One struct per key_id and direction, owned by one thread (the worker owning the peer); no
 * locks, no allocation.
 */
#ifndef PROTO_PACKET_ID_H
#define PROTO_PACKET_ID_H

#include <stdint.h>

#define PACKET_ID_WINDOW_MAX 1024 /* bits kept; larger configured windows are clamped */
_Static_assert(PACKET_ID_WINDOW_MAX % 64 == 0, "the window is kept as 64-bit words");

struct packet_id_rx {
    uint32_t highest; /* highest accepted id; 0 until the first packet is committed */
    uint32_t window;  /* 0..PACKET_ID_WINDOW_MAX */
    /* Bit (id % PACKET_ID_WINDOW_MAX) is set when id was accepted; valid for ids in
     * (highest - PACKET_ID_WINDOW_MAX, highest]. */
    uint64_t seen[PACKET_ID_WINDOW_MAX / 64];
};

/* Reset rx for a new key. window is the configured --replay-window n (2.6 default 64); values
 * above PACKET_ID_WINDOW_MAX are clamped to it; 0 selects the strict mode above. Caller owns the
 * storage (normally embedded in struct data_key). Cannot fail. */
void packet_id_rx_init(struct packet_id_rx *rx, uint32_t window);

/* Would id be accepted? Changes nothing; call before decrypting. Returns 0, -PE_MALFORMED for
 * id 0, -PE_REPLAY for an id already accepted, -PE_TOO_OLD for an id at or below
 * highest - window. In strict mode (window 0) an id <= highest gives -PE_REPLAY and an id above
 * highest + 1 (a gap) gives -PE_MALFORMED. */
int packet_id_rx_check(const struct packet_id_rx *rx, uint32_t id);

/* Remember id as accepted. Call only after packet_id_rx_check(rx, id) returned 0 and the packet
 * authenticated, never before. An id that check would reject is ignored. */
void packet_id_rx_commit(struct packet_id_rx *rx, uint32_t id);

#endif /* PROTO_PACKET_ID_H */
