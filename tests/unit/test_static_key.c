/* tests/unit/test_static_key.c: parsing "OpenVPN Static key V1" files.
 *
 * ta_key_text is a file written by `openvpn --genkey tls-auth` (OpenVPN 2.6.14); ta_key_bytes
 * is the same hex decoded by xxd, not by the code under test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/errors.h"
#include "proto/static_key.h"

static const char ta_key_text[] = "#\n"
                                  "# 2048 bit OpenVPN static key\n"
                                  "#\n"
                                  "-----BEGIN OpenVPN Static key V1-----\n"
                                  "7dba08cdf3f790bf6109ad9dafbaf99f\n"
                                  "20f8b2dd69dd140413ddd1ce387feed2\n"
                                  "6aa19bea771fe0ca8ceaf4c27725fd41\n"
                                  "7952280ad73c9a891ff2043c32e81572\n"
                                  "825e7be7159fbe1fb2feb6bac1fcbced\n"
                                  "1f6638aacb3ecbc8a75b83340a7bdba6\n"
                                  "da941a91fd058d129e47f2c9bae0b75b\n"
                                  "bc2951dd018e966bb133d6a0df2b4351\n"
                                  "228f99543970ad2af19756b7ef05b601\n"
                                  "233f892213ac0e668b4e2db71eac36ee\n"
                                  "6aff6b7cd2c034095d680022a5c7203d\n"
                                  "985bc780bf964439fbff0626eeb7ddb9\n"
                                  "fb1da6312676ccec81fdf53894eaadd2\n"
                                  "afb92fd6d8906c10ba31965a47f616fc\n"
                                  "35ad878ef1610f213097d8c9ade33732\n"
                                  "b9b7f23d56d973ba011616ffd0c2228b\n"
                                  "-----END OpenVPN Static key V1-----\n";

static const uint8_t ta_key_bytes[STATIC_KEY_LEN] = {
    0x7d, 0xba, 0x08, 0xcd, 0xf3, 0xf7, 0x90, 0xbf, 0x61, 0x09, 0xad, 0x9d, 0xaf, 0xba, 0xf9, 0x9f,
    0x20, 0xf8, 0xb2, 0xdd, 0x69, 0xdd, 0x14, 0x04, 0x13, 0xdd, 0xd1, 0xce, 0x38, 0x7f, 0xee, 0xd2,
    0x6a, 0xa1, 0x9b, 0xea, 0x77, 0x1f, 0xe0, 0xca, 0x8c, 0xea, 0xf4, 0xc2, 0x77, 0x25, 0xfd, 0x41,
    0x79, 0x52, 0x28, 0x0a, 0xd7, 0x3c, 0x9a, 0x89, 0x1f, 0xf2, 0x04, 0x3c, 0x32, 0xe8, 0x15, 0x72,
    0x82, 0x5e, 0x7b, 0xe7, 0x15, 0x9f, 0xbe, 0x1f, 0xb2, 0xfe, 0xb6, 0xba, 0xc1, 0xfc, 0xbc, 0xed,
    0x1f, 0x66, 0x38, 0xaa, 0xcb, 0x3e, 0xcb, 0xc8, 0xa7, 0x5b, 0x83, 0x34, 0x0a, 0x7b, 0xdb, 0xa6,
    0xda, 0x94, 0x1a, 0x91, 0xfd, 0x05, 0x8d, 0x12, 0x9e, 0x47, 0xf2, 0xc9, 0xba, 0xe0, 0xb7, 0x5b,
    0xbc, 0x29, 0x51, 0xdd, 0x01, 0x8e, 0x96, 0x6b, 0xb1, 0x33, 0xd6, 0xa0, 0xdf, 0x2b, 0x43, 0x51,
    0x22, 0x8f, 0x99, 0x54, 0x39, 0x70, 0xad, 0x2a, 0xf1, 0x97, 0x56, 0xb7, 0xef, 0x05, 0xb6, 0x01,
    0x23, 0x3f, 0x89, 0x22, 0x13, 0xac, 0x0e, 0x66, 0x8b, 0x4e, 0x2d, 0xb7, 0x1e, 0xac, 0x36, 0xee,
    0x6a, 0xff, 0x6b, 0x7c, 0xd2, 0xc0, 0x34, 0x09, 0x5d, 0x68, 0x00, 0x22, 0xa5, 0xc7, 0x20, 0x3d,
    0x98, 0x5b, 0xc7, 0x80, 0xbf, 0x96, 0x44, 0x39, 0xfb, 0xff, 0x06, 0x26, 0xee, 0xb7, 0xdd, 0xb9,
    0xfb, 0x1d, 0xa6, 0x31, 0x26, 0x76, 0xcc, 0xec, 0x81, 0xfd, 0xf5, 0x38, 0x94, 0xea, 0xad, 0xd2,
    0xaf, 0xb9, 0x2f, 0xd6, 0xd8, 0x90, 0x6c, 0x10, 0xba, 0x31, 0x96, 0x5a, 0x47, 0xf6, 0x16, 0xfc,
    0x35, 0xad, 0x87, 0x8e, 0xf1, 0x61, 0x0f, 0x21, 0x30, 0x97, 0xd8, 0xc9, 0xad, 0xe3, 0x37, 0x32,
    0xb9, 0xb7, 0xf2, 0x3d, 0x56, 0xd9, 0x73, 0xba, 0x01, 0x16, 0x16, 0xff, 0xd0, 0xc2, 0x22, 0x8b};

#define BEGIN_LINE "-----BEGIN OpenVPN Static key V1-----"
#define END_LINE "-----END OpenVPN Static key V1-----"

/* Parse exactly len bytes from a heap copy without a terminating NUL, so that the sanitizer
 * build catches any read past text_len. key2 is prefilled to show what failure leaves behind. */
static int parse_exact(const char *text, size_t len, uint8_t key2[STATIC_KEY_LEN])
{
    char *copy = malloc(len > 0 ? len : 1);
    int err;

    assert_non_null(copy);
    memcpy(copy, text, len);
    memset(key2, 0xa5, STATIC_KEY_LEN);
    err = static_key_parse(copy, len, key2);
    free(copy);
    return err;
}

static void assert_all_zero(const uint8_t *p, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        assert_int_equal(p[i], 0);
    }
}

/* Build a key file around hex_body (the lines between BEGIN and END). */
static char *make_file(const char *before, const char *hex_body, const char *after)
{
    size_t len = strlen(before) + strlen(BEGIN_LINE) + strlen(hex_body) + strlen(END_LINE) +
                 strlen(after) + 8;
    char *text = malloc(len);

    assert_non_null(text);
    snprintf(text, len, "%s%s\n%s%s\n%s", before, BEGIN_LINE, hex_body, END_LINE, after);
    return text;
}

/* n_bytes of key as hex, 16 bytes per line, from ta_key_bytes repeated. */
static char *hex_lines(size_t n_bytes)
{
    char *s = malloc(n_bytes * 2 + n_bytes / 16 + 2);
    size_t pos = 0;

    assert_non_null(s);
    for (size_t i = 0; i < n_bytes; i++) {
        static const char digits[] = "0123456789abcdef";
        uint8_t b = ta_key_bytes[i % STATIC_KEY_LEN];

        s[pos++] = digits[b >> 4];
        s[pos++] = digits[b & 15];
        if (i % 16 == 15 || i + 1 == n_bytes) {
            s[pos++] = '\n';
        }
    }
    s[pos] = '\0';
    return s;
}

static void parses_real_genkey_file(void **state)
{
    uint8_t key2[STATIC_KEY_LEN];

    (void)state;
    assert_int_equal(parse_exact(ta_key_text, strlen(ta_key_text), key2), 0);
    assert_memory_equal(key2, ta_key_bytes, STATIC_KEY_LEN);
}

static void parses_without_trailing_newline(void **state)
{
    uint8_t key2[STATIC_KEY_LEN];

    (void)state;
    /* an inline <tls-auth> block often ends right after the END line */
    assert_int_equal(parse_exact(ta_key_text, strlen(ta_key_text) - 1, key2), 0);
    assert_memory_equal(key2, ta_key_bytes, STATIC_KEY_LEN);
}

static void tolerates_crlf_blanks_comments_and_uppercase(void **state)
{
    uint8_t key2[STATIC_KEY_LEN];
    char *hex = hex_lines(STATIC_KEY_LEN);
    size_t n = strlen(hex), pos = 0;
    char *body = malloc(n * 3 + 64), *text;

    (void)state;
    assert_non_null(body);
    /* every line CRLF-terminated and indented, digits upper case, blanks inside a line, and a
     * comment line and an empty line in the middle of the data */
    for (size_t i = 0; i < n; i++) {
        if (i == 66) { /* start of the third line */
            pos += (size_t)sprintf(body + pos, "# a comment\r\n\r\n");
        }
        if (i == 0 || hex[i - 1] == '\n') {
            pos += (size_t)sprintf(body + pos, "  \t");
        }
        if (hex[i] == '\n') {
            body[pos++] = ' ';
            body[pos++] = '\r';
        } else if (i % 8 == 4) {
            body[pos++] = ' ';
        }
        body[pos++] = (hex[i] >= 'a' && hex[i] <= 'f') ? (char)(hex[i] - 'a' + 'A') : hex[i];
    }
    body[pos] = '\0';
    text = make_file("# header comment\r\nsome text openvpn ignores too\r\n   ", body,
                     "trailing text after the END line\r\n");
    assert_int_equal(parse_exact(text, strlen(text), key2), 0);
    assert_memory_equal(key2, ta_key_bytes, STATIC_KEY_LEN);
    free(text);
    free(body);
    free(hex);
}

static void bad_hex_is_malformed(void **state)
{
    uint8_t key2[STATIC_KEY_LEN];
    char *text = strdup(ta_key_text);
    char *p;

    (void)state;
    assert_non_null(text);
    p = strstr(text, "7dba08cd");
    assert_non_null(p);
    p[2] = 'g';
    assert_int_equal(parse_exact(text, strlen(text), key2), -PE_MALFORMED);
    assert_all_zero(key2, STATIC_KEY_LEN);

    p[2] = '\0'; /* a NUL inside the data */
    assert_int_equal(parse_exact(text, strlen(ta_key_text), key2), -PE_MALFORMED);
    assert_all_zero(key2, STATIC_KEY_LEN);
    free(text);
}

static void truncated_file_is_malformed(void **state)
{
    uint8_t key2[STATIC_KEY_LEN];
    const char *end = strstr(ta_key_text, END_LINE);
    size_t full = strlen(ta_key_text);

    (void)state;
    assert_non_null(end);
    /* cut anywhere before the END line is complete: no END line */
    for (size_t cut = 0; cut < (size_t)(end - ta_key_text) + strlen(END_LINE); cut += 7) {
        assert_int_equal(parse_exact(ta_key_text, cut, key2), -PE_MALFORMED);
        assert_all_zero(key2, STATIC_KEY_LEN);
    }
    assert_int_equal(parse_exact(ta_key_text, full - 2, key2), -PE_MALFORMED);
    assert_int_equal(parse_exact("", 0, key2), -PE_MALFORMED);
}

static void wrong_byte_counts_are_malformed(void **state)
{
    static const size_t counts[] = {0, 1, 128, 255, 257, 512};
    uint8_t key2[STATIC_KEY_LEN];

    (void)state;
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
        char *hex = hex_lines(counts[i]);
        char *text = make_file("", hex, "");

        assert_int_equal(parse_exact(text, strlen(text), key2), -PE_MALFORMED);
        assert_all_zero(key2, STATIC_KEY_LEN);
        free(text);
        free(hex);
    }
    {
        char *hex = hex_lines(STATIC_KEY_LEN);
        char *text;

        hex[strlen(hex) - 2] = '\n'; /* drop the very last digit: odd count */
        hex[strlen(hex) - 1] = '\0';
        text = make_file("", hex, "");
        assert_int_equal(parse_exact(text, strlen(text), key2), -PE_MALFORMED);
        free(text);
        free(hex);
    }
}

static void missing_begin_or_end_is_malformed(void **state)
{
    uint8_t key2[STATIC_KEY_LEN];
    char *hex = hex_lines(STATIC_KEY_LEN);
    char *no_begin = malloc(strlen(hex) + 64), *no_end = malloc(strlen(hex) + 64);
    char *misspelt = strdup(ta_key_text);

    (void)state;
    assert_non_null(no_begin);
    assert_non_null(no_end);
    assert_non_null(misspelt);
    sprintf(no_begin, "%s%s\n", hex, END_LINE);
    sprintf(no_end, "%s\n%s", BEGIN_LINE, hex);
    assert_int_equal(parse_exact(no_begin, strlen(no_begin), key2), -PE_MALFORMED);
    assert_int_equal(parse_exact(no_end, strlen(no_end), key2), -PE_MALFORMED);
    /* "V2" header: a different format, not ours */
    strstr(misspelt, "Static key V1")[12] = '2';
    assert_int_equal(parse_exact(misspelt, strlen(misspelt), key2), -PE_MALFORMED);
    free(misspelt);
    free(no_end);
    free(no_begin);
    free(hex);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_real_genkey_file),
        cmocka_unit_test(parses_without_trailing_newline),
        cmocka_unit_test(tolerates_crlf_blanks_comments_and_uppercase),
        cmocka_unit_test(bad_hex_is_malformed),
        cmocka_unit_test(truncated_file_is_malformed),
        cmocka_unit_test(wrong_byte_counts_are_malformed),
        cmocka_unit_test(missing_begin_or_end_is_malformed),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
