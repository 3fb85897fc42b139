/* tests/unit/test_comp.c: compression framing and LZ4 / LZO compression, byte layouts from
 * section 7 of the protocol doc (openvpn 2.6 comp.h, compstub.c, comp-lz4.c, lzo.c), checked
 * against the libraries' own decoders; decompression bombs and malformed blocks; the per-client
 * choice (comp_choose) and the pushed options (options.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <lz4.h>
#include <lzo1x.h>

#include "proto/comp.h"
#include "proto/errors.h"
#include "proto/peer_info.h"
#include "tests/unit/alloc_count.h"

static void lzo_stub_prefixes_fa(void **state)
{
    uint8_t buf[8] = {0, 0, 0x45, 0x00, 0x01};
    struct pbuf b = pbuf_make(buf, sizeof(buf), COMP_HEADROOM, 3);

    (void)state;
    assert_int_equal(comp_frame(COMP_FRAMING_LZO_STUB, &b), 0);
    assert_int_equal(b.len, 4);
    assert_ptr_equal(pbuf_ptr(&b), buf + 1);
    assert_int_equal(buf[1], 0xFA);
    assert_int_equal(buf[2], 0x45);
    assert_int_equal(comp_unframe(COMP_FRAMING_LZO_STUB, &b, NULL, 0), 0);
    assert_int_equal(b.len, 3);
    assert_ptr_equal(pbuf_ptr(&b), buf + 2);
}

static void lzo_compressed_and_empty_are_refused(void **state)
{
    uint8_t lzo[] = {0x66, 1, 2, 3};
    struct pbuf b = pbuf_make(lzo, sizeof(lzo), 0, sizeof(lzo));
    struct pbuf empty = pbuf_make(lzo, sizeof(lzo), 0, 0);

    (void)state;
    assert_int_equal(comp_unframe(COMP_FRAMING_LZO_STUB, &b, NULL, 0), -PE_UNSUPPORTED);
    assert_int_equal(b.head, 0); /* unchanged on error */
    assert_int_equal(b.len, sizeof(lzo));
    assert_int_equal(comp_unframe(COMP_FRAMING_LZO_STUB, &empty, NULL, 0), -PE_MALFORMED);
}

static void stub_v2_escapes_only_0x50(void **state)
{
    uint8_t ip[8] = {0, 0, 0x45, 0x00};
    uint8_t esc[8] = {0, 0, 0x50, 0x99};
    struct pbuf b = pbuf_make(ip, sizeof(ip), COMP_HEADROOM, 2);

    (void)state;
    assert_int_equal(comp_frame(COMP_FRAMING_STUB_V2, &b), 0);
    assert_ptr_equal(pbuf_ptr(&b), ip + 2); /* an IP packet goes as it is */
    assert_int_equal(b.len, 2);
    b = pbuf_make(esc, sizeof(esc), COMP_HEADROOM, 2);
    assert_int_equal(comp_frame(COMP_FRAMING_STUB_V2, &b), 0);
    assert_int_equal(b.len, 4);
    assert_memory_equal(pbuf_ptr(&b), ((uint8_t[]){0x50, 0x00, 0x50, 0x99}), 4);
    assert_int_equal(comp_unframe(COMP_FRAMING_STUB_V2, &b, NULL, 0), 0);
    assert_int_equal(b.len, 2);
    assert_int_equal(pbuf_ptr(&b)[0], 0x50);
}

static void stub_v2_compressed_and_truncated(void **state)
{
    uint8_t lz4[] = {0x50, 0x01, 9, 9};
    uint8_t raw[] = {0x45, 0x00};
    struct pbuf b = pbuf_make(lz4, sizeof(lz4), 0, sizeof(lz4));

    (void)state;
    assert_int_equal(comp_unframe(COMP_FRAMING_STUB_V2, &b, NULL, 0), -PE_UNSUPPORTED);
    b = pbuf_make(lz4, sizeof(lz4), 0, 1);
    assert_int_equal(comp_unframe(COMP_FRAMING_STUB_V2, &b, NULL, 0), -PE_MALFORMED);
    b = pbuf_make(raw, sizeof(raw), 0, sizeof(raw));
    assert_int_equal(comp_unframe(COMP_FRAMING_STUB_V2, &b, NULL, 0), 0);
    assert_ptr_equal(pbuf_ptr(&b), raw);
}

/* A payload whose framing does not fit in front of it is refused, and nothing is written:
 * the buffers are heap blocks of exactly their size, so a write in front of one is an ASan
 * report (the worker once framed a packet decrypted at offset 0 of its buffer). */
static void framing_never_writes_outside_the_buffer(void **state)
{
    static const uint8_t ip[] = {0x45, 0x00, 0x00, 0x14};
    uint8_t *buf = malloc(sizeof(ip)), *esc = malloc(1 + sizeof(ip));
    struct pbuf b;

    (void)state;
    assert_non_null(buf);
    assert_non_null(esc);
    memcpy(buf, ip, sizeof(ip));
    b = pbuf_make(buf, sizeof(ip), 0, sizeof(ip));
    assert_int_equal(comp_frame(COMP_FRAMING_LZO_STUB, &b), -PE_NOSPACE);
    assert_int_equal(b.head, 0);
    assert_int_equal(b.len, sizeof(ip));
    assert_int_equal(comp_frame(COMP_FRAMING_NONE, &b), 0);
    assert_int_equal(comp_frame(COMP_FRAMING_STUB_V2, &b), 0); /* nothing to add for 0x45 */
    assert_memory_equal(buf, ip, sizeof(ip));
    /* stub-v2 needs 2 bytes in front of a payload starting 0x50: 1 is not enough */
    esc[0] = 0xEE;
    esc[1] = 0x50;
    b = pbuf_make(esc, 1 + sizeof(ip), 1, sizeof(ip));
    assert_int_equal(comp_frame(COMP_FRAMING_STUB_V2, &b), -PE_NOSPACE);
    assert_int_equal(esc[0], 0xEE);
    assert_int_equal(b.head, 1);
    /* pbuf_make keeps the packet inside the memory */
    b = pbuf_make(buf, sizeof(ip), 3, 10);
    assert_int_equal(b.head + b.len, sizeof(ip));
    b = pbuf_make(buf, sizeof(ip), 9, 1);
    assert_int_equal(b.head, sizeof(ip));
    assert_int_equal(b.len, 0);
    free(esc);
    free(buf);
}

static void framing_from_push(void **state)
{
    (void)state;
    assert_int_equal(comp_framing_for_push("compress stub-v2"), COMP_FRAMING_STUB_V2);
    assert_int_equal(comp_framing_for_push("comp-lzo no"), COMP_FRAMING_LZO_STUB);
    assert_int_equal(comp_framing_for_push(NULL), COMP_FRAMING_NONE);
    assert_int_equal(comp_framing_for_push("compress lz4-v2"), COMP_FRAMING_LZ4_V2);
    assert_int_equal(comp_framing_for_push("route 198.19.0.0 255.255.0.0"), COMP_FRAMING_NONE);
}

/* --- compression ------------------------------------------------------------------------- */

#define OUT_CAP (COMP_HEADROOM + 2048 + COMP_TAILROOM) /* what a worker decompresses into */

static uint8_t work_out[COMP_WORK_OUT_LEN(2048)];
static uint64_t lzo_wrkmem[LZO1X_1_15_MEM_COMPRESS / sizeof(uint64_t) + 1];
static const struct comp_work work = {work_out, sizeof(work_out), 2048, lzo_wrkmem};

/* An IPv4-looking payload of len bytes that compresses well (text), or not at all (random). */
static void payload_fill(uint8_t *p, size_t len, bool is_random)
{
    uint32_t x = 2463534242u;

    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = is_random ? (uint8_t)x : (uint8_t)("compressible text, "[i % 19]);
    }
    p[0] = 0x45;
}

static struct comp_peer peer_with(enum comp_framing f)
{
    struct comp_peer cp = {.framing = f, .is_compress = true};

    return cp;
}

/* Compress len bytes for framing f (the framed result in *framed), decompress it back. */
static void roundtrip(enum comp_framing f, size_t len, const uint8_t **framed, size_t *framed_len)
{
    static uint8_t in[COMP_HEADROOM + 2048 + COMP_TAILROOM], copy[2048], framed_copy[2048];
    uint8_t *out = malloc(OUT_CAP);
    struct comp_peer cp = peer_with(f);
    struct pbuf b = pbuf_make(in, sizeof(in), COMP_HEADROOM, len);

    assert_non_null(out);
    payload_fill(in + COMP_HEADROOM, len, false);
    memcpy(copy, in + COMP_HEADROOM, len);
    assert_int_equal(comp_compress(&cp, &b, &work, 0), 1);
    assert_true(b.data == work_out);
    assert_true(b.len < len);
    memcpy(framed_copy, pbuf_ptr(&b), b.len); /* unframing may move bytes back in place */
    *framed = framed_copy;
    *framed_len = b.len;
    assert_int_equal(comp_unframe(f, &b, out, OUT_CAP), 0);
    assert_true(b.data == out);
    assert_int_equal(b.len, len);
    assert_memory_equal(pbuf_ptr(&b), copy, len);
    free(out);
}

static void lz4_v2_compressed_is_50_01_and_a_plain_lz4_block(void **state)
{
    uint8_t check[1400], block[1400];
    const uint8_t *framed;
    size_t n;

    (void)state;
    roundtrip(COMP_FRAMING_LZ4_V2, 1400, &framed, &n);
    assert_int_equal(framed[0], 0x50);
    assert_int_equal(framed[1], 0x01);
    memcpy(block, framed + 2, n - 2);
    assert_int_equal(
        LZ4_decompress_safe((const char *)block, (char *)check, (int)(n - 2), (int)sizeof(check)),
        1400);
    payload_fill(block, 1400, false);
    assert_memory_equal(check, block, 1400);
}

static void lz4_compressed_is_0x69_swapped(void **state)
{
    uint8_t check[1000], block[1000], want[1000];
    const uint8_t *framed;
    size_t n;

    (void)state;
    roundtrip(COMP_FRAMING_LZ4, 1000, &framed, &n);
    assert_int_equal(framed[0], 0x69);
    /* undo the swap by hand: the block's first byte travels last */
    block[0] = framed[n - 1];
    memcpy(block + 1, framed + 1, n - 2);
    assert_int_equal(
        LZ4_decompress_safe((const char *)block, (char *)check, (int)(n - 1), (int)sizeof(check)),
        1000);
    payload_fill(want, 1000, false);
    assert_memory_equal(check, want, 1000);
}

static void lzo_compressed_is_0x66_and_an_lzo1x_block(void **state)
{
    uint8_t check[1200], want[1200];
    const uint8_t *framed;
    lzo_uint out_len = sizeof(check);
    size_t n;

    (void)state;
    roundtrip(COMP_FRAMING_LZO, 1200, &framed, &n);
    assert_int_equal(framed[0], 0x66);
    assert_int_equal(lzo1x_decompress_safe(framed + 1, n - 1, check, &out_len, NULL), LZO_E_OK);
    assert_int_equal(out_len, 1200);
    payload_fill(want, 1200, false);
    assert_memory_equal(check, want, 1200);
}

/* Random data, short packets and a client not to compress for go out uncompressed, framed as
 * the stub: 0xFB swapped (lz4), nothing (lz4-v2, not 0x50), 0xFA (lzo). */
static void uncompressed_when_it_does_not_pay(void **state)
{
    uint8_t buf[COMP_HEADROOM + 1400 + COMP_TAILROOM], orig[1400];
    struct comp_peer cp = peer_with(COMP_FRAMING_LZ4);
    struct pbuf b = pbuf_make(buf, sizeof(buf), COMP_HEADROOM, 1400);

    (void)state;
    payload_fill(buf + COMP_HEADROOM, 1400, true);
    memcpy(orig, buf + COMP_HEADROOM, 1400);
    assert_int_equal(comp_compress(&cp, &b, &work, 0), 0);
    assert_true(b.data == buf && b.len == 1400);
    assert_int_equal(comp_frame(COMP_FRAMING_LZ4, &b), 0);
    assert_int_equal(b.len, 1401);
    assert_int_equal(pbuf_ptr(&b)[0], 0xFB);
    assert_int_equal(pbuf_ptr(&b)[1400], 0x45); /* the first byte, moved to the end */
    assert_memory_equal(pbuf_ptr(&b) + 1, orig + 1, 1399);
    assert_int_equal(comp_unframe(COMP_FRAMING_LZ4, &b, NULL, 0), 0);
    assert_int_equal(b.len, 1400);
    assert_memory_equal(pbuf_ptr(&b), orig, 1400);
    /* below COMP_THRESHOLD: never compressed, even when it would shrink */
    b = pbuf_make(buf, sizeof(buf), COMP_HEADROOM, 99);
    payload_fill(buf + COMP_HEADROOM, 99, false);
    cp.framing = COMP_FRAMING_LZ4_V2;
    assert_int_equal(comp_compress(&cp, &b, &work, 0), 0);
    b = pbuf_make(buf, sizeof(buf), COMP_HEADROOM, 1000);
    cp.is_compress = false; /* allow-compression asym */
    assert_int_equal(comp_compress(&cp, &b, &work, 0), 0);
    cp = peer_with(COMP_FRAMING_LZO);
    b = pbuf_make(buf, sizeof(buf), COMP_HEADROOM, 1400);
    payload_fill(buf + COMP_HEADROOM, 1400, true);
    assert_int_equal(comp_compress(&cp, &b, &work, 0), 0);
    assert_int_equal(comp_frame(COMP_FRAMING_LZO, &b), 0);
    assert_int_equal(pbuf_ptr(&b)[0], 0xFA);
}

/* The swap framing without tailroom moves the payload into the headroom, inside the buffer
 * (exact-size heap blocks: ASan sees any byte outside). */
static void swap_framing_without_tailroom(void **state)
{
    uint8_t *buf = malloc(1 + 4), *tight = malloc(4);
    struct pbuf b;

    (void)state;
    assert_non_null(buf);
    assert_non_null(tight);
    memcpy(buf + 1, (uint8_t[]){0x45, 1, 2, 3}, 4);
    b = pbuf_make(buf, 5, 1, 4);
    assert_int_equal(comp_frame(COMP_FRAMING_STUB, &b), 0);
    assert_int_equal(b.head, 0);
    assert_int_equal(b.len, 5);
    assert_memory_equal(buf, ((uint8_t[]){0xFB, 1, 2, 3, 0x45}), 5);
    memcpy(tight, (uint8_t[]){0x45, 1, 2, 3}, 4);
    b = pbuf_make(tight, 4, 0, 4);
    assert_int_equal(comp_frame(COMP_FRAMING_STUB, &b), -PE_NOSPACE);
    assert_memory_equal(tight, ((uint8_t[]){0x45, 1, 2, 3}), 4);
    free(tight);
    free(buf);
}

/* Whether the bytes of out from the tailroom on (COMP_TAILROOM, then CANARY_LEN more) still
 * hold the canary: the decompressors (liblz4, liblzo2: not instrumented by ASan) wrote nothing
 * past the room they were given. */
#define CANARY_LEN 64
static bool canary_intact(const uint8_t *out)
{
    for (size_t i = OUT_CAP - COMP_TAILROOM; i < OUT_CAP + CANARY_LEN; i++) {
        if (out[i] != 0xA5) {
            return false;
        }
    }
    return true;
}

/* A small block that would decompress to 60000 bytes: refused, nothing written past the room
 * in the output buffer (checked with a canary after it), for each framing that carries
 * compressed data. */
static void decompression_bomb_is_refused(void **state)
{
    static uint8_t zeros[60000], bomb[2 + 1024];
    uint8_t *out = malloc(OUT_CAP + CANARY_LEN);
    lzo_uint lzo_len = 0;
    struct pbuf b;
    int n;

    (void)state;
    assert_non_null(out);
    memset(out, 0xA5, OUT_CAP + CANARY_LEN);
    n = LZ4_compress_default((const char *)zeros, (char *)bomb + 2, (int)sizeof(zeros), 1024);
    assert_true(n > 0 && n < 1024);
    bomb[0] = 0x50;
    bomb[1] = 0x01;
    b = pbuf_make(bomb, sizeof(bomb), 0, (size_t)n + 2);
    assert_int_equal(comp_unframe(COMP_FRAMING_LZ4_V2, &b, out, OUT_CAP), -PE_MALFORMED);
    assert_true(canary_intact(out));
    /* the same block, swap-framed as "compress lz4" sends it */
    bomb[1] = 0x69;
    bomb[(size_t)n + 2] = bomb[2];
    b = pbuf_make(bomb, sizeof(bomb), 1, (size_t)n + 2);
    assert_int_equal(comp_unframe(COMP_FRAMING_LZ4, &b, out, OUT_CAP), -PE_MALFORMED);
    assert_true(canary_intact(out));
    /* and as LZO */
    assert_int_equal(lzo1x_1_15_compress(zeros, sizeof(zeros), bomb + 1, &lzo_len, lzo_wrkmem),
                     LZO_E_OK);
    assert_true(lzo_len < 1000);
    bomb[0] = 0x66;
    b = pbuf_make(bomb, sizeof(bomb), 0, lzo_len + 1);
    assert_int_equal(comp_unframe(COMP_FRAMING_LZO, &b, out, OUT_CAP), -PE_MALFORMED);
    assert_true(canary_intact(out));
    /* exactly the room is fine, one byte more is not */
    n = LZ4_compress_default((const char *)zeros, (char *)bomb + 2, 2048, 1024);
    bomb[0] = 0x50;
    bomb[1] = 0x01;
    b = pbuf_make(bomb, sizeof(bomb), 0, (size_t)n + 2);
    assert_int_equal(comp_unframe(COMP_FRAMING_LZ4_V2, &b, out, OUT_CAP), 0);
    assert_int_equal(b.len, 2048);
    assert_true(canary_intact(out));
    n = LZ4_compress_default((const char *)zeros, (char *)bomb + 2, 2049, 1024);
    b = pbuf_make(bomb, sizeof(bomb), 0, (size_t)n + 2);
    assert_int_equal(comp_unframe(COMP_FRAMING_LZ4_V2, &b, out, OUT_CAP), -PE_MALFORMED);
    assert_true(canary_intact(out));
    free(out);
}

static void malformed_blocks_are_refused(void **state)
{
    /* a match 65535 bytes back, before the start of the output */
    static const uint8_t far_match[] = {0x50, 0x01, 0x00, 0xFF, 0xFF};
    /* a literal run longer than the input */
    static const uint8_t long_literals[] = {0x50, 0x01, 0xF0, 0x20, 'a', 'b'};
    static const uint8_t empty_block[] = {0x50, 0x01};
    static const uint8_t unknown_v2[] = {0x50, 0x07, 1, 2};
    static const uint8_t lzo_v2[] = {0x50, 0x02, 1, 2};
    static const uint8_t bad_lzo_byte[] = {0x42, 1, 2};
    uint8_t buf[64], *out = malloc(OUT_CAP);
    uint8_t text[300];
    lzo_uint lzo_len = 0;
    struct pbuf b;

    (void)state;
    assert_non_null(out);
#define UNFRAME(f, bytes, len)                                                                     \
    (memcpy(buf, bytes, len), b = pbuf_make(buf, sizeof(buf), 0, len),                             \
     comp_unframe(f, &b, out, OUT_CAP))
    assert_int_equal(UNFRAME(COMP_FRAMING_LZ4_V2, far_match, sizeof(far_match)), -PE_MALFORMED);
    assert_int_equal(UNFRAME(COMP_FRAMING_LZ4_V2, long_literals, sizeof(long_literals)),
                     -PE_MALFORMED);
    assert_int_equal(UNFRAME(COMP_FRAMING_LZ4_V2, empty_block, sizeof(empty_block)), -PE_MALFORMED);
    assert_int_equal(UNFRAME(COMP_FRAMING_LZ4_V2, unknown_v2, sizeof(unknown_v2)), -PE_MALFORMED);
    assert_int_equal(UNFRAME(COMP_FRAMING_LZ4_V2, lzo_v2, sizeof(lzo_v2)), -PE_UNSUPPORTED);
    assert_int_equal(UNFRAME(COMP_FRAMING_LZO, bad_lzo_byte, sizeof(bad_lzo_byte)), -PE_MALFORMED);
    assert_int_equal(UNFRAME(COMP_FRAMING_LZ4, bad_lzo_byte, sizeof(bad_lzo_byte)), -PE_MALFORMED);
    assert_int_equal(UNFRAME(COMP_FRAMING_LZ4, ((uint8_t[]){0xFB}), 1), -PE_MALFORMED);
    /* a valid LZO block cut short */
    payload_fill(text, sizeof(text), false);
    assert_int_equal(lzo1x_1_15_compress(text, sizeof(text), buf + 1, &lzo_len, lzo_wrkmem),
                     LZO_E_OK);
    buf[0] = 0x66;
    b = pbuf_make(buf, sizeof(buf), 0, lzo_len / 2);
    assert_int_equal(comp_unframe(COMP_FRAMING_LZO, &b, out, OUT_CAP), -PE_MALFORMED);
#undef UNFRAME
    free(out);
}

/* Compressed payloads where the framing is a stub (allow-compression no, or the client was
 * pushed a stub) or no scratch memory is given: refused as not accepted. */
static void compressed_refused_by_stubs(void **state)
{
    uint8_t v2[] = {0x50, 0x01, 0x10, 'a'}, swap[] = {0x69, 'a', 0x10}, lzo[] = {0x66, 1};
    uint8_t out[OUT_CAP];
    struct pbuf b;

    (void)state;
    b = pbuf_make(v2, sizeof(v2), 0, sizeof(v2));
    assert_int_equal(comp_unframe(COMP_FRAMING_STUB_V2, &b, out, sizeof(out)), -PE_UNSUPPORTED);
    assert_int_equal(comp_unframe(COMP_FRAMING_LZ4_V2, &b, NULL, 0), -PE_UNSUPPORTED);
    assert_int_equal(comp_unframe(COMP_FRAMING_LZ4_V2, &b, out, sizeof(out)), 0);
    assert_int_equal(b.len, 1);
    assert_int_equal(pbuf_ptr(&b)[0], 'a');
    b = pbuf_make(swap, sizeof(swap), 0, sizeof(swap));
    assert_int_equal(comp_unframe(COMP_FRAMING_STUB, &b, out, sizeof(out)), -PE_UNSUPPORTED);
    b = pbuf_make(lzo, sizeof(lzo), 0, sizeof(lzo));
    assert_int_equal(comp_unframe(COMP_FRAMING_LZO_STUB, &b, out, sizeof(out)), -PE_UNSUPPORTED);
}

static void options_as_2_6_reads_them(void **state)
{
    static const struct {
        const char *option;
        bool is_comp;
        enum comp_framing f;
    } cases[] = {
        {"comp-lzo", true, COMP_FRAMING_LZO},
        {"comp-lzo yes", true, COMP_FRAMING_LZO},
        {"comp-lzo adaptive", true, COMP_FRAMING_LZO},
        {"comp-lzo no", true, COMP_FRAMING_LZO_STUB},
        {"compress", true, COMP_FRAMING_STUB},
        {"compress stub", true, COMP_FRAMING_STUB},
        {"compress stub-v2", true, COMP_FRAMING_STUB_V2},
        {"compress migrate", true, COMP_FRAMING_NONE},
        {"compress lzo", true, COMP_FRAMING_LZO},
        {"compress lz4", true, COMP_FRAMING_LZ4},
        {"compress  lz4-v2", true, COMP_FRAMING_LZ4_V2},
        {"compress snappy", false, COMP_FRAMING_NONE},
        {"compress lz4 extra", false, COMP_FRAMING_NONE},
        {"comp-lzo maybe", false, COMP_FRAMING_NONE},
        {"compression lz4", false, COMP_FRAMING_NONE},
        {"route 198.19.0.0 255.255.0.0", false, COMP_FRAMING_NONE},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        enum comp_framing f = COMP_FRAMING_NONE;

        assert_int_equal(comp_option_parse(cases[i].option, &f), cases[i].is_comp);
        assert_int_equal(f, cases[i].f);
    }
}

static void choose_per_client(void **state)
{
    struct peer_info all = {.lz4 = true, .lz4v2 = true, .lzo = true, .comp_stubv2 = true};
    struct peer_info stubs = {.comp_stub = true, .comp_stubv2 = true};
    struct peer_info old = {.comp_stub = true};
    struct comp_config none = {0}, lz4v2 = {.alg = COMP_FRAMING_LZ4_V2};
    struct comp_config lz4v2_yes = {.alg = COMP_FRAMING_LZ4_V2, .allow = COMP_ALLOW_YES};
    struct comp_config lzo_yes = {
        .alg = COMP_FRAMING_LZO, .allow = COMP_ALLOW_YES, .is_adaptive = true};
    struct comp_config asym = {.allow = COMP_ALLOW_ASYM};
    struct comp_peer cp;
    const char *push;

    (void)state;
    /* nothing configured: 2.6 "compress migrate" for clients with compression */
    comp_choose(&none, &stubs, true, NULL, &cp, &push);
    assert_string_equal(push, "compress stub-v2");
    assert_int_equal(cp.framing, COMP_FRAMING_STUB_V2);
    assert_false(cp.is_compress);
    comp_choose(&none, &old, true, NULL, &cp, &push);
    assert_string_equal(push, "comp-lzo no");
    assert_int_equal(cp.framing, COMP_FRAMING_LZO_STUB);
    comp_choose(&none, &all, false, NULL, &cp, &push);
    assert_null(push);
    assert_int_equal(cp.framing, COMP_FRAMING_NONE);
    /* compress lz4-v2: asym by default, compression with allow-compression yes, towards
     * clients that announced it only */
    comp_choose(&lz4v2, &all, true, NULL, &cp, &push);
    assert_null(push);
    assert_int_equal(cp.framing, COMP_FRAMING_LZ4_V2);
    assert_false(cp.is_compress);
    comp_choose(&lz4v2_yes, &all, true, NULL, &cp, &push);
    assert_int_equal(cp.framing, COMP_FRAMING_LZ4_V2);
    assert_true(cp.is_compress);
    comp_choose(&lz4v2_yes, &stubs, true, NULL, &cp, &push);
    assert_int_equal(cp.framing, COMP_FRAMING_LZ4_V2);
    assert_false(cp.is_compress);
    comp_choose(&lz4v2_yes, &all, false, NULL, &cp, &push); /* no compression in its config */
    assert_int_equal(cp.framing, COMP_FRAMING_NONE);
    assert_false(cp.is_compress);
    comp_choose(&lzo_yes, &all, true, NULL, &cp, &push);
    assert_int_equal(cp.framing, COMP_FRAMING_LZO);
    assert_true(cp.is_compress);
    assert_true(cp.is_adaptive);
    /* a pushed option decides the framing; no migrate option is added */
    comp_choose(&asym, &all, true, "compress lz4", &cp, &push);
    assert_null(push);
    assert_int_equal(cp.framing, COMP_FRAMING_LZ4);
    assert_false(cp.is_compress);
    comp_choose(&none, &all, false, "compress lz4-v2", &cp, &push);
    assert_int_equal(cp.framing, COMP_FRAMING_STUB_V2); /* allow-compression no (default) */
    comp_choose(&lz4v2_yes, &all, true, "compress stub-v2", &cp, &push);
    assert_int_equal(cp.framing, COMP_FRAMING_STUB_V2);
    assert_false(cp.is_compress);
    comp_choose(&lz4v2_yes, NULL, true, NULL, &cp, &push);
    assert_false(cp.is_compress);
}

/* 2.6 lzo.c adaptive compression: when a 2 s sample saved less than 5 %, LZO pauses for 60 s. */
static void adaptive_lzo_pauses_when_it_does_not_pay(void **state)
{
    uint8_t buf[COMP_HEADROOM + 1400 + COMP_TAILROOM];
    struct comp_peer cp = peer_with(COMP_FRAMING_LZO);
    struct pbuf b;
    uint64_t t = 10000;

    (void)state;
    cp.is_adaptive = true;
    for (int i = 0; i < 10; i++, t += 300) {
        b = pbuf_make(buf, sizeof(buf), COMP_HEADROOM, 1400);
        payload_fill(buf + COMP_HEADROOM, 1400, true);
        assert_int_equal(comp_compress(&cp, &b, &work, t), 0);
    }
    assert_true(cp.ac_is_paused);
    b = pbuf_make(buf, sizeof(buf), COMP_HEADROOM, 1400);
    payload_fill(buf + COMP_HEADROOM, 1400, false);
    assert_int_equal(comp_compress(&cp, &b, &work, t), 0); /* paused: not even tried */
    t += 60000;
    assert_int_equal(comp_compress(&cp, &b, &work, t), 1); /* the pause is over */
    assert_false(cp.ac_is_paused);
}

/* n_allocs (alloc_count.h) does not see liblz4 and liblzo2, which are shared libraries: the
 * LZ4 block functions used keep their state on the stack (LZ4_HEAPMODE 0, Debian's build), the
 * LZO ones take the caller's work memory. */

/* Compress, frame and unframe (with decompression) for every framing: no allocation. */
static void per_packet_path_allocates_nothing(void **state)
{
    static uint8_t buf[COMP_HEADROOM + 1400 + COMP_TAILROOM], out[OUT_CAP];
    unsigned long before;

    (void)state;
    before = n_allocs;
    for (int f = COMP_FRAMING_NONE; f <= COMP_FRAMING_LZ4_V2; f++) {
        for (int is_random = 0; is_random < 2; is_random++) {
            struct comp_peer cp = peer_with((enum comp_framing)f);
            struct pbuf b = pbuf_make(buf, sizeof(buf), COMP_HEADROOM, 1400);

            cp.is_adaptive = f == COMP_FRAMING_LZO;
            payload_fill(buf + COMP_HEADROOM, 1400, is_random != 0);
            if (comp_compress(&cp, &b, &work, 1000) == 0) {
                assert_int_equal(comp_frame((enum comp_framing)f, &b), 0);
            }
            assert_int_equal(comp_unframe((enum comp_framing)f, &b, out, sizeof(out)), 0);
            assert_int_equal(b.len, 1400);
        }
    }
    assert_int_equal(n_allocs - before, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lzo_stub_prefixes_fa),
        cmocka_unit_test(lzo_compressed_and_empty_are_refused),
        cmocka_unit_test(stub_v2_escapes_only_0x50),
        cmocka_unit_test(stub_v2_compressed_and_truncated),
        cmocka_unit_test(framing_never_writes_outside_the_buffer),
        cmocka_unit_test(framing_from_push),
        cmocka_unit_test(lz4_v2_compressed_is_50_01_and_a_plain_lz4_block),
        cmocka_unit_test(lz4_compressed_is_0x69_swapped),
        cmocka_unit_test(lzo_compressed_is_0x66_and_an_lzo1x_block),
        cmocka_unit_test(uncompressed_when_it_does_not_pay),
        cmocka_unit_test(swap_framing_without_tailroom),
        cmocka_unit_test(decompression_bomb_is_refused),
        cmocka_unit_test(malformed_blocks_are_refused),
        cmocka_unit_test(compressed_refused_by_stubs),
        cmocka_unit_test(options_as_2_6_reads_them),
        cmocka_unit_test(choose_per_client),
        cmocka_unit_test(adaptive_lzo_pauses_when_it_does_not_pay),
        cmocka_unit_test(per_packet_path_allocates_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
