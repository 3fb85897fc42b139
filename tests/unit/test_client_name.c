/* tests/unit/test_client_name.c: client-chosen names as openvpn 2.6 lets them through
 * (proto/client_name.c): control characters become '_' (ssl_verify.c string_mod_remap_name,
 * buffer.c char_class CC_PRINT), and a certificate's CN is refused when it holds a NUL byte or
 * is longer than 64 bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "proto/client_name.h"
#include "proto/errors.h"

static void remap_control_characters(void **state)
{
    char s[] = "a\tb\nc\rd\x7f"
               "e\x01\x1f";

    (void)state;
    client_name_remap(s);
    assert_string_equal(s, "a_b_c_d_e__");
}

static void remap_keeps_printable_and_utf8(void **state)
{
    /* punctuation that files must quote, and UTF-8 (bytes >= 0x80, C1 range included) */
    char s[] = "odd, \"quoted\" \\client\\ 'x' #1;\xc3\xa9\xc4\x81\xe2\x82\xac";
    char want[sizeof(s)];

    (void)state;
    memcpy(want, s, sizeof(s));
    client_name_remap(s);
    assert_string_equal(s, want);
}

static void remap_every_byte(void **state)
{
    (void)state;
    for (unsigned b = 1; b < 256; b++) {
        char s[2] = {(char)b, '\0'};

        client_name_remap(s);
        if (b < 0x20 || b == 0x7f) {
            assert_int_equal(s[0], '_');
        } else {
            assert_int_equal((unsigned char)s[0], b);
        }
    }
}

static void cn_plain_and_remapped(void **state)
{
    static const uint8_t nl[] = "nl\tline\nclient2,198.19.0.9,";
    char cn[256];

    (void)state;
    assert_int_equal(client_name_from_cn((const uint8_t *)"client1", 7, cn, sizeof(cn)), 0);
    assert_string_equal(cn, "client1");
    assert_int_equal(client_name_from_cn(nl, sizeof(nl) - 1, cn, sizeof(cn)), 0);
    assert_string_equal(cn, "nl_line_client2,198.19.0.9,");
    assert_int_equal(client_name_from_cn((const uint8_t *)"", 0, cn, sizeof(cn)), 0);
    assert_string_equal(cn, "");
}

static void cn_with_nul_is_refused(void **state)
{
    static const uint8_t val[] = {'c', 'l', 'i', 'e', 'n', 't', '1', 0, 'e', 'v', 'i', 'l'};
    static const uint8_t last[] = {'a', 0};
    char cn[256];

    (void)state;
    memset(cn, 'x', sizeof(cn));
    assert_int_equal(client_name_from_cn(val, sizeof(val), cn, sizeof(cn)), -PE_MALFORMED);
    assert_string_equal(cn, "");
    assert_int_equal(client_name_from_cn(last, sizeof(last), cn, sizeof(cn)), -PE_MALFORMED);
    assert_int_equal(client_name_from_cn(last, 1, cn, sizeof(cn)), 0);
    assert_string_equal(cn, "a");
}

static void cn_length_limit(void **state)
{
    uint8_t val[CLIENT_NAME_CN_MAX + 1];
    char cn[256];

    (void)state;
    memset(val, 'a', sizeof(val));
    assert_int_equal(client_name_from_cn(val, CLIENT_NAME_CN_MAX, cn, sizeof(cn)), 0);
    assert_int_equal(strlen(cn), CLIENT_NAME_CN_MAX);
    assert_int_equal(client_name_from_cn(val, CLIENT_NAME_CN_MAX + 1, cn, sizeof(cn)), -PE_NOSPACE);
    assert_string_equal(cn, "");
    /* a buffer too small is an error, never a cut name */
    assert_int_equal(client_name_from_cn(val, 10, cn, 10), -PE_NOSPACE);
    assert_string_equal(cn, "");
    assert_int_equal(client_name_from_cn(val, 9, cn, 10), 0);
    assert_int_equal(client_name_from_cn(val, 1, cn, 0), -PE_NOSPACE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(remap_control_characters),
        cmocka_unit_test(remap_keeps_printable_and_utf8),
        cmocka_unit_test(remap_every_byte),
        cmocka_unit_test(cn_plain_and_remapped),
        cmocka_unit_test(cn_with_nul_is_refused),
        cmocka_unit_test(cn_length_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
