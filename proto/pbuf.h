/* proto/pbuf.h: a packet inside caller-owned memory, with room in front of it.
 *
 * Bytes that go in front of a packet (the compression framing, comp.h) are written into its
 * headroom instead of moving the packet: data[0 .. head) is free, the packet is
 * data[head .. head + len), and the memory ends at data + cap. The headroom travels with the
 * pointer, so a function that frames a packet it was handed knows how much room there is;
 * pbuf_push refuses to reach in front of data, whatever buffer the packet came from.
 * Header-only; pure functions, any thread. The caller owns the memory and the struct.
 */
#ifndef PROTO_PBUF_H
#define PROTO_PBUF_H

#include <stddef.h>
#include <stdint.h>

#include "proto/errors.h"

struct pbuf {
    uint8_t *data; /* start of the memory, not of the packet */
    size_t cap;    /* bytes at data */
    size_t head;   /* the packet's offset: bytes free in front of it */
    size_t len;    /* packet bytes */
};

/* The packet of len bytes at data + head, in memory of cap bytes at data. head + len must not
 * exceed cap (the caller's own arithmetic, never a length from the wire unchecked); when it
 * does, the packet is cut to what fits. */
static inline struct pbuf pbuf_make(uint8_t *data, size_t cap, size_t head, size_t len)
{
    struct pbuf b = {data, cap, head <= cap ? head : cap, 0};

    b.len = len <= cap - b.head ? len : cap - b.head;
    return b;
}

/* The packet's first byte. */
static inline uint8_t *pbuf_ptr(const struct pbuf *b)
{
    return b->data + b->head;
}

/* Grow the packet by n bytes at its front (taken from the headroom) and return its new first
 * byte; NULL, with nothing changed, when fewer than n bytes of headroom are left. */
static inline uint8_t *pbuf_push(struct pbuf *b, size_t n)
{
    if (n > b->head) {
        return NULL;
    }
    b->head -= n;
    b->len += n;
    return b->data + b->head;
}

/* Drop n bytes from the packet's front (they become headroom). 0, or -PE_SHORT with nothing
 * changed when the packet is shorter than n. */
static inline int pbuf_pull(struct pbuf *b, size_t n)
{
    if (n > b->len) {
        return -PE_SHORT;
    }
    b->head += n;
    b->len -= n;
    return 0;
}

#endif /* PROTO_PBUF_H */
