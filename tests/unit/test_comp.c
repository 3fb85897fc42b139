/* tests/unit/test_comp.c: stub compression framing, byte layouts from section 7 of the
 * protocol doc (openvpn 2.6 comp.h / compstub.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "proto/comp.h"
#include "proto/errors.h"

static void lzo_stub_prefixes_fa(void **state)
{
    uint8_t buf[8] = {0, 0, 0x45, 0x00, 0x01};
    uint8_t *out;
    size_t len;

    (void)state;
    comp_frame(COMP_FRAMING_LZO_STUB, buf + COMP_HEADROOM, 3, &out, &len);
    assert_int_equal(len, 4);
    assert_ptr_equal(out, buf + 1);
    assert_int_equal(out[0], 0xFA);
    assert_int_equal(out[1], 0x45);
    assert_int_equal(comp_unframe(COMP_FRAMING_LZO_STUB, out, len, &out, &len), 0);
    assert_int_equal(len, 3);
    assert_int_equal(out[0], 0x45);
}

static void lzo_compressed_and_empty_are_refused(void **state)
{
    uint8_t lzo[] = {0x66, 1, 2, 3};
    uint8_t *out;
    size_t len;

    (void)state;
    assert_int_equal(comp_unframe(COMP_FRAMING_LZO_STUB, lzo, sizeof(lzo), &out, &len),
                     -PE_UNSUPPORTED);
    assert_int_equal(comp_unframe(COMP_FRAMING_LZO_STUB, lzo, 0, &out, &len), -PE_MALFORMED);
}

static void stub_v2_escapes_only_0x50(void **state)
{
    uint8_t ip[8] = {0, 0, 0x45, 0x00};
    uint8_t esc[8] = {0, 0, 0x50, 0x99};
    uint8_t *out;
    size_t len;

    (void)state;
    comp_frame(COMP_FRAMING_STUB_V2, ip + COMP_HEADROOM, 2, &out, &len);
    assert_ptr_equal(out, ip + 2); /* an IP packet goes as it is */
    assert_int_equal(len, 2);
    comp_frame(COMP_FRAMING_STUB_V2, esc + COMP_HEADROOM, 2, &out, &len);
    assert_int_equal(len, 4);
    assert_memory_equal(out, ((uint8_t[]){0x50, 0x00, 0x50, 0x99}), 4);
    assert_int_equal(comp_unframe(COMP_FRAMING_STUB_V2, out, len, &out, &len), 0);
    assert_int_equal(len, 2);
    assert_int_equal(out[0], 0x50);
}

static void stub_v2_compressed_and_truncated(void **state)
{
    uint8_t lz4[] = {0x50, 0x01, 9, 9};
    uint8_t raw[] = {0x45, 0x00};
    uint8_t *out;
    size_t len;

    (void)state;
    assert_int_equal(comp_unframe(COMP_FRAMING_STUB_V2, lz4, sizeof(lz4), &out, &len),
                     -PE_UNSUPPORTED);
    assert_int_equal(comp_unframe(COMP_FRAMING_STUB_V2, lz4, 1, &out, &len), -PE_MALFORMED);
    assert_int_equal(comp_unframe(COMP_FRAMING_STUB_V2, raw, sizeof(raw), &out, &len), 0);
    assert_ptr_equal(out, raw);
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
        cmocka_unit_test(framing_from_push),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
