/* tests/unit/test_fragment.c: openvpn's data-channel fragmentation (`fragment N`): the 4-byte
 * header's layout (openvpn 2.6 fragment.h), the payload size per datagram (mss.c
 * frame_calculate_fragment), how a payload is cut (optimal_fragment_size), and reassembly in
 * order, out of order, with duplicates, missing pieces, the window of 25 packets and the 10 s
 * time to live; hostile pieces are refused without writing outside the buffers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/errors.h"
#include "proto/fragment.h"
#include "tests/unit/alloc_count.h"

#define MAX_LEN 2048
#define HEAD 2
#define TAIL 1

/* A datagram's payload: header then body, in a buffer of its own. */
struct dgram {
    uint8_t buf[FRAGMENT_HEADER_LEN + MAX_LEN + 64];
    struct pbuf b;
};

static void make_dgram(struct dgram *d, enum fragment_type type, uint8_t seq, uint8_t id,
                       uint16_t size, const uint8_t *body, size_t len)
{
    struct fragment_header h = {type, seq, id, size};

    assert_true(len <= MAX_LEN + 64);
    fragment_header_write(&h, d->buf);
    memcpy(d->buf + FRAGMENT_HEADER_LEN, body, len);
    d->b = pbuf_make(d->buf, sizeof(d->buf), 0, FRAGMENT_HEADER_LEN + len);
}

static int rx(struct fragment *f, enum fragment_type type, uint8_t seq, uint8_t id, uint16_t size,
              const uint8_t *body, size_t len, uint64_t now_ms, struct pbuf *out)
{
    static struct dgram d;
    int rc;

    make_dgram(&d, type, seq, id, size, body, len);
    rc = fragment_rx(f, &d.b, now_ms, NULL);
    if (out) {
        *out = d.b;
    }
    return rc;
}

static uint8_t payload[MAX_LEN];

static void fill_payload(void)
{
    for (size_t i = 0; i < sizeof(payload); i++) {
        payload[i] = (uint8_t)(i * 7 + 3);
    }
}

static struct fragment *new_f(void)
{
    struct fragment *f = fragment_new(MAX_LEN, HEAD, TAIL, 0, 972);

    assert_non_null(f);
    return f;
}

/* 2.6 fragment.h: type in bits 0..1, seq_id 2..9, frag_id 10..14, size/4 in 15..28 (last
 * piece only); big-endian on the wire. */
static void header_layout(void **state)
{
    static const uint8_t whole[4] = {0, 0, 0, 0};
    static const uint8_t not_last[4] = {0x00, 0x00, 0x0C, 0x15}; /* seq 5, id 3 */
    static const uint8_t last[4] = {0x00, 0x7D, 0x7F, 0xFE};     /* seq 255, id 31, size 1000 */
    struct fragment_header h = {FRAGMENT_WHOLE, 0, 0, 0};
    uint8_t out[4];

    (void)state;
    fragment_header_write(&h, out);
    assert_memory_equal(out, whole, 4);
    h = (struct fragment_header){FRAGMENT_NOT_LAST, 5, 3, 1000}; /* size not written */
    fragment_header_write(&h, out);
    assert_memory_equal(out, not_last, 4);
    h = (struct fragment_header){FRAGMENT_LAST, 255, 31, 1000};
    fragment_header_write(&h, out);
    assert_memory_equal(out, last, 4);

    fragment_header_read(last, &h);
    assert_int_equal(h.type, FRAGMENT_LAST);
    assert_int_equal(h.seq_id, 255);
    assert_int_equal(h.frag_id, 31);
    assert_int_equal(h.size, 1000);
    fragment_header_read(not_last, &h);
    assert_int_equal(h.type, FRAGMENT_NOT_LAST);
    assert_int_equal(h.seq_id, 5);
    assert_int_equal(h.frag_id, 3);
    assert_int_equal(h.size, 0);
}

/* mss.c frame_calculate_fragment, worked by hand for `fragment 1000`. */
static void max_payload_as_openvpn(void **state)
{
    (void)state;
    /* AES-256-GCM, P_DATA_V2: 1000 - 4 (opcode, peer-id) - 20 (packet id, tag) - 4 */
    assert_int_equal(fragment_max_payload(1000, false, 28, 4, 20, 0), 972);
    /* `fragment 1000 mtu` over IPv4: 28 bytes less; IPv6: 48 */
    assert_int_equal(fragment_max_payload(1000, true, 28, 4, 20, 0), 944);
    assert_int_equal(fragment_max_payload(1000, true, 48, 4, 20, 0), 924);
    /* P_DATA_V1: a 1-byte header */
    assert_int_equal(fragment_max_payload(1000, false, 28, 1, 20, 0), 975);
    /* AES-256-CBC with SHA1, V2: 1000 - 4 - (16 IV + 20 HMAC) = 960, whole blocks 960, - 1
     * padding - 4 fragment header - 4 packet id */
    assert_int_equal(fragment_max_payload(1000, false, 28, 4, 36, 16), 951);
    /* SHA256: 1000 - 4 - 48 = 948 -> 944 - 1 - 4 - 4 */
    assert_int_equal(fragment_max_payload(1000, false, 28, 4, 48, 16), 935);
    /* an overhead larger than the value: never below 4 */
    assert_int_equal(fragment_max_payload(68, true, 48, 4, 80, 16), 4);
}

static void plan_as_openvpn(void **state)
{
    size_t piece;
    unsigned n;

    (void)state;
    assert_int_equal(fragment_plan(972, 972, &piece, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(piece, 972);
    /* 1400 for 972: two pieces of 700 rather than 972 + 428 */
    assert_int_equal(fragment_plan(1400, 972, &piece, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(piece, 700);
    /* 973: 488 + 485 */
    assert_int_equal(fragment_plan(973, 972, &piece, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(piece, 488);
    /* 1900 for 972: the rest (928) is more than 3/4 of a piece: 972 + 928 */
    assert_int_equal(fragment_plan(1900, 972, &piece, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(piece, 972);
    /* an odd max_payload is rounded down to a multiple of 4 */
    assert_int_equal(fragment_plan(2000, 99, &piece, &n), 0);
    assert_int_equal(piece % 4, 0);
    assert_true(piece <= 99);
    assert_true(piece * n >= 2000);
    /* more than 32 pieces: refused, as 2.6 */
    assert_int_equal(fragment_plan(32 * 40, 40, &piece, &n), 0);
    assert_int_equal(n, 32);
    assert_int_equal(fragment_plan(32 * 40 + 1, 40, &piece, &n), -PE_NOSPACE);
}

static void whole_packet_passes(void **state)
{
    struct fragment *f = new_f();
    struct pbuf b;

    (void)state;
    fill_payload();
    assert_int_equal(rx(f, FRAGMENT_WHOLE, 0, 0, 0, payload, 100, 0, &b), 0);
    assert_int_equal(b.len, 100);
    assert_memory_equal(pbuf_ptr(&b), payload, 100);
    /* an empty whole packet is a valid (empty) payload */
    assert_int_equal(rx(f, FRAGMENT_WHOLE, 0, 0, 0, payload, 0, 0, &b), 0);
    assert_int_equal(b.len, 0);
    /* a whole packet carrying a seq_id or frag_id is refused */
    assert_int_equal(rx(f, FRAGMENT_WHOLE, 1, 0, 0, payload, 10, 0, NULL), -PE_MALFORMED);
    assert_int_equal(rx(f, FRAGMENT_WHOLE, 0, 2, 0, payload, 10, 0, NULL), -PE_MALFORMED);
    assert_int_equal(rx(f, FRAGMENT_TEST, 0, 0, 0, payload, 10, 0, NULL), -PE_MALFORMED);
    /* shorter than the header */
    {
        uint8_t three[3] = {0};
        struct pbuf s = pbuf_make(three, 3, 0, 3);

        assert_int_equal(fragment_rx(f, &s, 0, NULL), -PE_SHORT);
    }
    fragment_free(f);
}

/* Send len bytes of payload as seq through fragment_plan, pieces in the order given by order[]
 * (indexes into the pieces; n_order entries), and check what comes out. */
static void send_pieces(struct fragment *f, uint8_t seq, size_t len, size_t max_payload,
                        const unsigned *order, unsigned n_order, uint64_t now_ms)
{
    size_t piece;
    unsigned n;
    struct pbuf b;

    assert_int_equal(fragment_plan(len, max_payload, &piece, &n), 0);
    for (unsigned k = 0; k < n_order; k++) {
        unsigned i = order[k];
        bool is_last = i == n - 1;
        size_t off = i * piece, plen = is_last ? len - off : piece;
        int rc = rx(f, is_last ? FRAGMENT_LAST : FRAGMENT_NOT_LAST, seq, (uint8_t)i,
                    (uint16_t)piece, payload + off, plen, now_ms, &b);

        if (k + 1 < n_order) {
            assert_int_equal(rc, 1);
            continue;
        }
        assert_int_equal(rc, 0);
        assert_int_equal(b.len, len);
        assert_memory_equal(pbuf_ptr(&b), payload, len);
        /* the reassembled packet has the head and tail room asked for */
        assert_int_equal(b.head, HEAD);
        assert_true(b.cap >= b.head + b.len + TAIL);
    }
}

static void reassembly_in_and_out_of_order(void **state)
{
    static const unsigned in_order[] = {0, 1, 2};
    static const unsigned reversed[] = {2, 1, 0};
    static const unsigned mixed[] = {1, 2, 0};
    static const unsigned two[] = {1, 0};
    struct fragment *f = new_f();

    (void)state;
    fill_payload();
    send_pieces(f, 1, 2000, 700, in_order, 3, 0);
    send_pieces(f, 2, 2000, 700, reversed, 3, 0);
    send_pieces(f, 3, 2000, 700, mixed, 3, 0);
    send_pieces(f, 4, 1400, 972, two, 2, 0);
    /* 32 pieces of 40: the most a packet may have */
    {
        unsigned order[32];

        for (unsigned i = 0; i < 32; i++) {
            order[i] = (i * 7) % 32;
        }
        send_pieces(f, 5, 32 * 40, 40, order, 32, 0);
    }
    fragment_free(f);
}

/* Two packets interleaved, a duplicate piece, and a packet with a piece missing that never
 * completes and is abandoned when the window moves 25 seq_ids on. */
static void duplicates_interleaving_and_missing(void **state)
{
    struct fragment *f = new_f();
    struct fragment_rx_info info;
    struct dgram d;
    struct pbuf b;

    (void)state;
    fill_payload();
    assert_int_equal(rx(f, FRAGMENT_NOT_LAST, 10, 0, 0, payload, 500, 0, NULL), 1);
    assert_int_equal(rx(f, FRAGMENT_NOT_LAST, 11, 0, 0, payload + 100, 500, 0, NULL), 1);
    /* a duplicate of seq 10's first piece with other bytes: the first copy stays */
    assert_int_equal(rx(f, FRAGMENT_NOT_LAST, 10, 0, 0, payload + 7, 500, 0, NULL), 1);
    assert_int_equal(rx(f, FRAGMENT_LAST, 11, 1, 500, payload + 600, 20, 0, &b), 0);
    assert_int_equal(b.len, 520);
    assert_memory_equal(pbuf_ptr(&b), payload + 100, 500);
    assert_memory_equal(pbuf_ptr(&b) + 500, payload + 600, 20);
    /* a duplicate after completion starts a new packet (seq ids wrap) and waits */
    assert_int_equal(rx(f, FRAGMENT_LAST, 11, 1, 500, payload + 600, 20, 0, NULL), 1);
    assert_int_equal(rx(f, FRAGMENT_LAST, 10, 1, 500, payload + 500, 20, 0, &b), 0);
    assert_int_equal(b.len, 520);
    assert_memory_equal(pbuf_ptr(&b), payload, 520);

    /* seq 12 misses its first piece; seq 36 (24 on) keeps it, 37 pushes it (and seq 11's
     * lone last piece) out */
    assert_int_equal(rx(f, FRAGMENT_LAST, 12, 1, 500, payload, 20, 0, NULL), 1);
    make_dgram(&d, FRAGMENT_NOT_LAST, 36, 0, 0, payload, 8);
    assert_int_equal(fragment_rx(f, &d.b, 0, &info), 1);
    assert_true(info.is_piece);
    assert_int_equal(info.n_abandoned, 1); /* seq 11's: 36 moved the window past it */
    make_dgram(&d, FRAGMENT_NOT_LAST, 37, 0, 0, payload, 8);
    assert_int_equal(fragment_rx(f, &d.b, 0, &info), 1);
    assert_int_equal(info.n_abandoned, 1); /* seq 12's */
    /* its missing piece now starts a new packet, which does not complete */
    assert_int_equal(rx(f, FRAGMENT_NOT_LAST, 12, 0, 0, payload, 500, 0, NULL), 1);
    fragment_free(f);
}

/* A seq_id 25 or more away from the newest starts the window afresh (2.6
 * fragment_list_get_buf), also across the wrap from 255 to 0. */
static void window_wraps_and_resets(void **state)
{
    struct fragment *f = new_f();
    struct fragment_rx_info info;
    struct dgram d;
    struct pbuf b;

    (void)state;
    fill_payload();
    assert_int_equal(rx(f, FRAGMENT_NOT_LAST, 250, 0, 0, payload, 100, 0, NULL), 1);
    assert_int_equal(rx(f, FRAGMENT_NOT_LAST, 5, 0, 0, payload, 100, 0, NULL), 1); /* 11 on */
    assert_int_equal(rx(f, FRAGMENT_LAST, 250, 1, 100, payload + 100, 4, 0, &b), 0);
    assert_int_equal(b.len, 104);
    make_dgram(&d, FRAGMENT_NOT_LAST, 100, 0, 0, payload, 100); /* far away: all dropped */
    assert_int_equal(fragment_rx(f, &d.b, 0, &info), 1);
    assert_int_equal(info.n_abandoned, 1);                 /* seq 5's first piece */
    make_dgram(&d, FRAGMENT_LAST, 76, 1, 100, payload, 4); /* 24 behind 100: a slot of its own */
    assert_int_equal(fragment_rx(f, &d.b, 0, &info), 1);
    assert_int_equal(info.n_abandoned, 0);
    assert_int_equal(rx(f, FRAGMENT_NOT_LAST, 76, 0, 0, payload, 100, 0, &b), 0);
    assert_int_equal(b.len, 104);
    make_dgram(&d, FRAGMENT_LAST, 75, 1, 100, payload, 4); /* 25 behind: starts afresh */
    assert_int_equal(fragment_rx(f, &d.b, 0, &info), 1);
    assert_int_equal(info.n_abandoned, 1); /* seq 100's */
    fragment_free(f);
}

/* Pieces of one packet more than 10 s apart do not make a packet (2.6 FRAG_TTL_SEC). */
static void time_to_live(void **state)
{
    struct fragment *f = new_f();
    struct fragment_rx_info info;
    struct dgram d;
    struct pbuf b;

    (void)state;
    fill_payload();
    assert_int_equal(rx(f, FRAGMENT_NOT_LAST, 1, 0, 0, payload, 100, 1000, NULL), 1);
    /* 9.999 s later: still joins */
    assert_int_equal(rx(f, FRAGMENT_LAST, 1, 1, 100, payload + 100, 10, 10999, &b), 0);
    assert_int_equal(b.len, 110);
    assert_int_equal(rx(f, FRAGMENT_NOT_LAST, 2, 0, 0, payload, 100, 20000, NULL), 1);
    make_dgram(&d, FRAGMENT_LAST, 2, 1, 100, payload + 100, 10);
    assert_int_equal(fragment_rx(f, &d.b, 30000, &info), 1); /* 10 s: the first piece is gone */
    assert_int_equal(info.n_abandoned, 1);
    /* the time counts from the latest piece */
    assert_int_equal(rx(f, FRAGMENT_NOT_LAST, 3, 0, 0, payload, 100, 40000, NULL), 1);
    assert_int_equal(rx(f, FRAGMENT_NOT_LAST, 3, 1, 0, payload + 100, 100, 48000, NULL), 1);
    assert_int_equal(rx(f, FRAGMENT_LAST, 3, 2, 100, payload + 200, 1, 56000, &b), 0);
    assert_int_equal(b.len, 201);
    assert_memory_equal(pbuf_ptr(&b), payload, 201);
    fragment_free(f);
}

/* Pieces no sender makes: refused, nothing written outside the buffers, the packet under
 * reassembly untouched. */
static void hostile_pieces(void **state)
{
    struct fragment *f = fragment_new(1000, HEAD, TAIL, 0, 500);
    struct pbuf b;

    (void)state;
    assert_non_null(f);
    fill_payload();
    /* sizes: 0, not a multiple of 4, a last piece longer than its size */
    assert_int_equal(rx(f, FRAGMENT_NOT_LAST, 1, 0, 0, payload, 0, 0, NULL), -PE_MALFORMED);
    assert_int_equal(rx(f, FRAGMENT_LAST, 1, 0, 0, payload, 0, 0, NULL), -PE_MALFORMED);
    assert_int_equal(rx(f, FRAGMENT_NOT_LAST, 1, 0, 0, payload, 101, 0, NULL), -PE_MALFORMED);
    assert_int_equal(rx(f, FRAGMENT_LAST, 1, 1, 100, payload, 101, 0, NULL), -PE_MALFORMED);
    /* past the buffer: piece 31 of 100 bytes in a 1000-byte buffer, the largest size field */
    assert_int_equal(rx(f, FRAGMENT_NOT_LAST, 1, 31, 0, payload, 100, 0, NULL), -PE_NOSPACE);
    assert_int_equal(rx(f, FRAGMENT_LAST, 1, 1, FRAGMENT_SIZE_MAX, payload, 4, 0, NULL),
                     -PE_NOSPACE);
    assert_int_equal(rx(f, FRAGMENT_NOT_LAST, 1, 9, 0, payload, 100, 0, NULL), 1); /* 900..999 */
    assert_int_equal(rx(f, FRAGMENT_NOT_LAST, 1, 10, 0, payload, 100, 0, NULL), -PE_NOSPACE);
    /* the last piece is 2; one after it, or a last piece before a piece already here, or a
     * second last piece elsewhere, is refused */
    assert_int_equal(rx(f, FRAGMENT_LAST, 2, 2, 100, payload + 200, 50, 0, NULL), 1);
    assert_int_equal(rx(f, FRAGMENT_NOT_LAST, 2, 3, 0, payload, 100, 0, NULL), -PE_MALFORMED);
    assert_int_equal(rx(f, FRAGMENT_NOT_LAST, 2, 2, 0, payload, 100, 0, NULL), -PE_MALFORMED);
    assert_int_equal(rx(f, FRAGMENT_LAST, 2, 1, 100, payload, 50, 0, NULL), -PE_MALFORMED);
    assert_int_equal(rx(f, FRAGMENT_LAST, 2, 2, 100, payload, 40, 0, NULL), -PE_MALFORMED);
    assert_int_equal(rx(f, FRAGMENT_NOT_LAST, 3, 4, 0, payload, 100, 0, NULL), 1);
    assert_int_equal(rx(f, FRAGMENT_LAST, 3, 4, 100, payload, 50, 0, NULL), -PE_MALFORMED);
    assert_int_equal(rx(f, FRAGMENT_LAST, 3, 3, 100, payload, 50, 0, NULL), -PE_MALFORMED);
    /* seq 2 still completes with the right pieces */
    assert_int_equal(rx(f, FRAGMENT_NOT_LAST, 2, 0, 0, payload, 100, 0, NULL), 1);
    assert_int_equal(rx(f, FRAGMENT_NOT_LAST, 2, 1, 0, payload + 100, 100, 0, &b), 0);
    assert_int_equal(b.len, 250);
    assert_memory_equal(pbuf_ptr(&b), payload, 250);
    /* a piece with another size restarts its seq_id's packet, as in 2.6 */
    assert_int_equal(rx(f, FRAGMENT_NOT_LAST, 4, 0, 0, payload, 100, 0, NULL), 1);
    assert_int_equal(rx(f, FRAGMENT_NOT_LAST, 4, 1, 0, payload, 96, 0, NULL), 1);
    assert_int_equal(rx(f, FRAGMENT_LAST, 4, 1, 100, payload + 100, 4, 0, NULL), 1);
    fragment_free(f);
}

/* A payload cut by fragment_plan and put back by fragment_rx, for many lengths; the receive
 * path allocates nothing. */
static void roundtrip_allocates_nothing(void **state)
{
    struct fragment *tx = fragment_new(MAX_LEN, HEAD, TAIL, 200, 972);
    struct fragment *f = new_f();
    unsigned long before;
    struct dgram d;

    (void)state;
    assert_non_null(tx);
    fill_payload();
    before = n_allocs;
    for (size_t len = 1; len <= MAX_LEN; len += 37) {
        size_t piece;
        unsigned n;
        uint8_t seq = fragment_next_seq_id(tx);
        int rc = 1;

        assert_int_equal(fragment_plan(len, fragment_max_payload_of(tx), &piece, &n), 0);
        for (unsigned i = 0; i < n; i++) {
            size_t off = i * piece, plen = i + 1 == n ? len - off : piece;

            assert_true(plen <= 972);
            make_dgram(&d,
                       n == 1       ? FRAGMENT_WHOLE
                       : i + 1 == n ? FRAGMENT_LAST
                                    : FRAGMENT_NOT_LAST,
                       n == 1 ? 0 : seq, n == 1 ? 0 : (uint8_t)i, (uint16_t)piece, payload + off,
                       plen);
            rc = fragment_rx(f, &d.b, 0, NULL);
            assert_int_equal(rc, i + 1 == n ? 0 : 1);
        }
        assert_int_equal(d.b.len, len);
        assert_memory_equal(pbuf_ptr(&d.b), payload, len);
    }
    assert_int_equal(n_allocs - before, 0);
    fragment_free(tx);
    fragment_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(header_layout),
        cmocka_unit_test(max_payload_as_openvpn),
        cmocka_unit_test(plan_as_openvpn),
        cmocka_unit_test(whole_packet_passes),
        cmocka_unit_test(reassembly_in_and_out_of_order),
        cmocka_unit_test(duplicates_interleaving_and_missing),
        cmocka_unit_test(window_wraps_and_resets),
        cmocka_unit_test(time_to_live),
        cmocka_unit_test(hostile_pieces),
        cmocka_unit_test(roundtrip_allocates_nothing),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
