/* proto/cursor.h: bounds-checked reading and writing of network bytes.
 *
 * Every read tests the remaining length before touching memory; nothing is ever cast onto a
 * packet. All integers are big-endian (network order). Reads return 0 or -PE_SHORT; writes
 * return 0 or -PE_NOSPACE. On error nothing is consumed or written.
 */
#ifndef PROTO_CURSOR_H
#define PROTO_CURSOR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto/errors.h"

/* A read-only view of untrusted bytes. The caller owns the memory it points at. */
struct cursor {
    const uint8_t *p;
    size_t left;
};

/* A write position into caller-owned memory of cap bytes; len bytes are used. */
struct wbuf {
    uint8_t *p;
    size_t cap;
    size_t len;
};

static inline struct cursor cur_make(const uint8_t *p, size_t len)
{
    struct cursor c = {p, len};
    return c;
}

static inline int cur_read(struct cursor *c, void *out, size_t n)
{
    if (n > c->left) {
        return -PE_SHORT;
    }
    if (n > 0) {
        memcpy(out, c->p, n);
    }
    c->p += n;
    c->left -= n;
    return 0;
}

static inline int cur_skip(struct cursor *c, size_t n)
{
    if (n > c->left) {
        return -PE_SHORT;
    }
    c->p += n;
    c->left -= n;
    return 0;
}

static inline int cur_u8(struct cursor *c, uint8_t *v)
{
    if (c->left < 1) {
        return -PE_SHORT;
    }
    *v = c->p[0];
    c->p++;
    c->left--;
    return 0;
}

static inline int cur_be16(struct cursor *c, uint16_t *v)
{
    if (c->left < 2) {
        return -PE_SHORT;
    }
    *v = (uint16_t)((unsigned)c->p[0] << 8 | c->p[1]);
    c->p += 2;
    c->left -= 2;
    return 0;
}

static inline int cur_be32(struct cursor *c, uint32_t *v)
{
    if (c->left < 4) {
        return -PE_SHORT;
    }
    *v = (uint32_t)c->p[0] << 24 | (uint32_t)c->p[1] << 16 | (uint32_t)c->p[2] << 8 |
         (uint32_t)c->p[3];
    c->p += 4;
    c->left -= 4;
    return 0;
}

static inline uint32_t load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static inline uint16_t load_be16(const uint8_t *p)
{
    return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

static inline void store_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void store_be16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static inline struct wbuf wbuf_make(uint8_t *p, size_t cap)
{
    struct wbuf w = {p, cap, 0};
    return w;
}

static inline int wbuf_put(struct wbuf *w, const void *data, size_t n)
{
    if (n > w->cap - w->len) {
        return -PE_NOSPACE;
    }
    if (n > 0) {
        memcpy(w->p + w->len, data, n);
    }
    w->len += n;
    return 0;
}

static inline int wbuf_u8(struct wbuf *w, uint8_t v)
{
    return wbuf_put(w, &v, 1);
}

static inline int wbuf_be16(struct wbuf *w, uint16_t v)
{
    uint8_t b[2];
    store_be16(b, v);
    return wbuf_put(w, b, 2);
}

static inline int wbuf_be32(struct wbuf *w, uint32_t v)
{
    uint8_t b[4];
    store_be32(b, v);
    return wbuf_put(w, b, 4);
}

#endif /* PROTO_CURSOR_H */
