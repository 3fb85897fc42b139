/* proto/fragment.c: openvpn's data-channel fragmentation (`fragment N`). Wire facts from openvpn
 * 2.6 fragment.h / fragment.c (header layout, the window of 25 packets, optimal_fragment_size,
 * the 10 s time to live) and mss.c (frame_calculate_fragment); the code is this project's. */
#include "proto/fragment.h"

#include <stdlib.h>
#include <string.h>

#include "proto/cursor.h"
#include "proto/errors.h"

#define TYPE_MASK 0x3u
#define SEQ_SHIFT 2
#define SEQ_MASK 0xFFu
#define ID_SHIFT 10
#define ID_MASK 0x1Fu
#define SIZE_SHIFT 15
#define SIZE_MASK 0x3FFFu
#define ROUND 4u /* piece sizes are multiples of this */
#define ALL_PIECES 0xFFFFFFFFu

/* One packet under reassembly. Its bytes are at slot_mem(f, i) + f->head. */
struct slot {
    bool is_used;
    uint8_t last_id;   /* valid when has_last */
    bool has_last;     /* the last piece came: its id and the packet's length are known */
    bool has_not_last; /* a piece that is not the last came... */
    uint8_t max_id;    /* ...and this is the highest id of those */
    uint16_t size;     /* the packet's piece size */
    uint32_t map;      /* bit n: piece n is here (the last piece sets itself and all above) */
    size_t len;        /* with has_last: the packet's length */
    uint64_t stamp_ms; /* when its latest piece came */
};

struct fragment {
    size_t max_len, head, tail, stride, max_payload;
    uint8_t tx_seq_id;
    uint8_t seq_id; /* the newest seq_id in the window... */
    unsigned index; /* ...and its slot */
    struct slot slots[FRAGMENT_N_SLOTS];
    uint8_t mem[]; /* FRAGMENT_N_SLOTS * stride */
};

void fragment_header_write(const struct fragment_header *h, uint8_t out[FRAGMENT_HEADER_LEN])
{
    uint32_t v = ((uint32_t)h->type & TYPE_MASK) | ((uint32_t)h->seq_id << SEQ_SHIFT) |
                 (((uint32_t)h->frag_id & ID_MASK) << ID_SHIFT);

    if (h->type == FRAGMENT_LAST) {
        v |= (((uint32_t)h->size / ROUND) & SIZE_MASK) << SIZE_SHIFT;
    }
    store_be32(out, v);
}

void fragment_header_read(const uint8_t in[FRAGMENT_HEADER_LEN], struct fragment_header *h)
{
    uint32_t v = load_be32(in);

    h->type = (enum fragment_type)(v & TYPE_MASK);
    h->seq_id = (uint8_t)((v >> SEQ_SHIFT) & SEQ_MASK);
    h->frag_id = (uint8_t)((v >> ID_SHIFT) & ID_MASK);
    h->size = h->type == FRAGMENT_LAST ? (uint16_t)(((v >> SIZE_SHIFT) & SIZE_MASK) * ROUND) : 0;
}

size_t fragment_max_payload(int fragment, bool mtu, size_t ip_udp_len, size_t header_len,
                            size_t crypto_len, size_t cbc_block)
{
    long room = (long)fragment - (long)header_len - (long)crypto_len;

    if (mtu) {
        room -= (long)ip_udp_len;
    }
    if (cbc_block > 0) {
        room -= room % (long)cbc_block; /* whole blocks, and one byte of them is padding */
        room -= 1;
    }
    room -= FRAGMENT_HEADER_LEN;
    if (cbc_block > 0) {
        room -= 4; /* each piece carries its own packet id inside the encryption */
    }
    if (room > FRAGMENT_SIZE_MAX) {
        room = FRAGMENT_SIZE_MAX;
    }
    return room < (long)ROUND ? ROUND : (size_t)room;
}

int fragment_plan(size_t len, size_t max_payload, size_t *piece_len, unsigned *n_pieces)
{
    size_t aligned = max_payload & ~(size_t)(ROUND - 1), size, div, mod;

    if (len <= max_payload) {
        *piece_len = len;
        *n_pieces = 1;
        return 0;
    }
    if (aligned == 0) {
        return -PE_NOSPACE;
    }
    /* Same number of pieces, but a smaller piece size when that makes the last piece about as
     * long as the others (2.6 optimal_fragment_size, same arithmetic). */
    div = len / aligned;
    mod = len % aligned;
    size = aligned;
    if (div > 0 && mod > 0 && mod < aligned * 3 / 4) {
        size_t alt = (max_payload - (max_payload - mod) / (div + 1) + ROUND - 1) & ~(size_t)3;

        size = alt < aligned ? alt : aligned;
    }
    if (size == 0 || len > size * FRAGMENT_MAX_PIECES) {
        return -PE_NOSPACE;
    }
    *piece_len = size;
    *n_pieces = (unsigned)((len + size - 1) / size);
    return 0;
}

struct fragment *fragment_new(size_t max_len, size_t head, size_t tail, uint8_t first_seq_id,
                              size_t max_payload)
{
    struct fragment *f;
    size_t stride = head + max_len + tail;

    if (max_len == 0 || max_len > 65535 || head > 4096 || tail > 4096) {
        return NULL;
    }
    f = calloc(1, sizeof(*f) + FRAGMENT_N_SLOTS * stride);
    if (!f) {
        return NULL;
    }
    f->max_len = max_len;
    f->head = head;
    f->tail = tail;
    f->stride = stride;
    f->max_payload = max_payload;
    f->tx_seq_id = first_seq_id;
    return f;
}

void fragment_free(struct fragment *f)
{
    free(f);
}

size_t fragment_max_payload_of(const struct fragment *f)
{
    return f->max_payload;
}

uint8_t fragment_next_seq_id(struct fragment *f)
{
    return ++f->tx_seq_id; /* uint8_t: wraps at 256, as 2.6 N_SEQ_ID */
}

static void drop_slot(struct slot *s, struct fragment_rx_info *info)
{
    if (s->is_used) {
        info->n_abandoned++;
    }
    s->is_used = false;
}

/* The slot for seq_id, sliding the window as 2.6 fragment_list_get_buf does: a seq_id up to 24
 * ahead of the newest moves the window on (the slots it passes are emptied); one 25 or more
 * away in either direction starts it afresh; one up to 24 behind gets its own slot. */
static struct slot *slot_for(struct fragment *f, uint8_t seq_id, struct fragment_rx_info *info)
{
    int diff = (int)(int8_t)(uint8_t)(seq_id - f->seq_id); /* -128..127, modulo 256 */

    if (diff >= FRAGMENT_N_SLOTS || diff <= -FRAGMENT_N_SLOTS) {
        for (unsigned i = 0; i < FRAGMENT_N_SLOTS; i++) {
            drop_slot(&f->slots[i], info);
        }
        f->index = 0;
        f->seq_id = seq_id;
        diff = 0;
    }
    for (; diff > 0; diff--) {
        f->index = (f->index + 1) % FRAGMENT_N_SLOTS;
        f->seq_id++;
        drop_slot(&f->slots[f->index], info);
    }
    return &f->slots[(f->index + FRAGMENT_N_SLOTS - (unsigned)-diff) % FRAGMENT_N_SLOTS];
}

int fragment_rx(struct fragment *f, struct pbuf *b, uint64_t now_ms, struct fragment_rx_info *info)
{
    struct fragment_rx_info dummy;
    struct fragment_header h;
    struct slot *s;
    size_t len, offset, size;
    uint8_t *mem;

    if (!info) {
        info = &dummy;
    }
    info->is_piece = false;
    info->n_abandoned = 0;
    if (b->len < FRAGMENT_HEADER_LEN) {
        return -PE_SHORT;
    }
    fragment_header_read(pbuf_ptr(b), &h);
    if (h.type == FRAGMENT_WHOLE) {
        /* 2.6 refuses a whole packet with a seq_id (it tests only its low six bits); both fields
         * are 0 from every sender */
        if (h.seq_id != 0 || h.frag_id != 0) {
            return -PE_MALFORMED;
        }
        return pbuf_pull(b, FRAGMENT_HEADER_LEN);
    }
    if (h.type == FRAGMENT_TEST) {
        return -PE_MALFORMED; /* 2.6: "FRAG_TEST not implemented" */
    }
    info->is_piece = true;
    len = b->len - FRAGMENT_HEADER_LEN;
    /* a piece that is not the last is as long as the piece size; the last one says it */
    size = h.type == FRAGMENT_LAST ? h.size : len;
    if (size == 0 || size % ROUND != 0 || len > size) {
        return -PE_MALFORMED;
    }
    offset = (size_t)h.frag_id * size;
    if (offset + len > f->max_len) {
        return -PE_NOSPACE;
    }
    s = slot_for(f, h.seq_id, info);
    if (s->is_used && now_ms - s->stamp_ms >= FRAGMENT_TTL_MS) {
        drop_slot(s, info); /* its pieces came too long ago (2.6 reaps after FRAG_TTL_SEC) */
    }
    if (s->is_used && s->size != size) {
        drop_slot(s, info); /* another packet with this seq_id, as 2.6 decides it */
    }
    if (!s->is_used) {
        memset(s, 0, sizeof(*s));
        s->is_used = true;
        s->size = (uint16_t)size;
    }
    if (h.type == FRAGMENT_LAST) {
        if ((s->has_last && (s->last_id != h.frag_id || s->len != offset + len)) ||
            (s->has_not_last && s->max_id >= h.frag_id)) {
            return -PE_MALFORMED;
        }
    } else if (s->has_last && h.frag_id >= s->last_id) {
        return -PE_MALFORMED;
    }
    s->stamp_ms = now_ms;
    if (s->map & (1u << h.frag_id)) {
        return 1; /* a duplicate: the copy already here stays */
    }
    mem = f->mem + (size_t)(s - f->slots) * f->stride + f->head;
    memcpy(mem + offset, pbuf_ptr(b) + FRAGMENT_HEADER_LEN, len);
    if (h.type == FRAGMENT_LAST) {
        s->has_last = true;
        s->last_id = h.frag_id;
        s->len = offset + len;
        s->map |= ALL_PIECES << h.frag_id;
    } else {
        s->map |= 1u << h.frag_id;
        s->has_not_last = true;
        if (h.frag_id > s->max_id) {
            s->max_id = h.frag_id;
        }
    }
    if (s->map != ALL_PIECES) {
        return 1;
    }
    s->is_used = false;
    *b = pbuf_make(mem - f->head, f->stride, f->head, s->len);
    return 0;
}
