/* tests/unit/test_comp.c: stub compression framing, byte layouts from section 7 of the
 * protocol doc (openvpn 2.6 comp.h / compstub.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/comp.h"
#include "proto/errors.h"

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
    assert_int_equal(comp_unframe(COMP_FRAMING_LZO_STUB, &b), 0);
    assert_int_equal(b.len, 3);
    assert_ptr_equal(pbuf_ptr(&b), buf + 2);
}

static void lzo_compressed_and_empty_are_refused(void **state)
{
    uint8_t lzo[] = {0x66, 1, 2, 3};
    struct pbuf b = pbuf_make(lzo, sizeof(lzo), 0, sizeof(lzo));
    struct pbuf empty = pbuf_make(lzo, sizeof(lzo), 0, 0);

    (void)state;
    assert_int_equal(comp_unframe(COMP_FRAMING_LZO_STUB, &b), -PE_UNSUPPORTED);
    assert_int_equal(b.head, 0); /* unchanged on error */
    assert_int_equal(b.len, sizeof(lzo));
    assert_int_equal(comp_unframe(COMP_FRAMING_LZO_STUB, &empty), -PE_MALFORMED);
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
    assert_int_equal(comp_unframe(COMP_FRAMING_STUB_V2, &b), 0);
    assert_int_equal(b.len, 2);
    assert_int_equal(pbuf_ptr(&b)[0], 0x50);
}

static void stub_v2_compressed_and_truncated(void **state)
{
    uint8_t lz4[] = {0x50, 0x01, 9, 9};
    uint8_t raw[] = {0x45, 0x00};
    struct pbuf b = pbuf_make(lz4, sizeof(lz4), 0, sizeof(lz4));

    (void)state;
    assert_int_equal(comp_unframe(COMP_FRAMING_STUB_V2, &b), -PE_UNSUPPORTED);
    b = pbuf_make(lz4, sizeof(lz4), 0, 1);
    assert_int_equal(comp_unframe(COMP_FRAMING_STUB_V2, &b), -PE_MALFORMED);
    b = pbuf_make(raw, sizeof(raw), 0, sizeof(raw));
    assert_int_equal(comp_unframe(COMP_FRAMING_STUB_V2, &b), 0);
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
    assert_int_equal(comp_framing_for_push("compress lz4-v2"), COMP_FRAMING_NONE);
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
