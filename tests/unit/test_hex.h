/* tests/unit/test_hex.h: hex test vectors to bytes, shared by the unit tests. Include after
 * <cmocka.h>: a malformed vector fails the test. */
#ifndef TESTS_UNIT_TEST_HEX_H
#define TESTS_UNIT_TEST_HEX_H

#include <stddef.h>
#include <stdint.h>

/* Decode hex (blanks ignored, either case) into out (cap bytes); returns the byte count. */
static inline size_t unhex(const char *hex, uint8_t *out, size_t cap)
{
    size_t n = 0;
    int hi = -1;

    for (; *hex != '\0'; hex++) {
        int v;

        if (*hex == ' ') {
            continue;
        }
        if (*hex >= '0' && *hex <= '9') {
            v = *hex - '0';
        } else if (*hex >= 'a' && *hex <= 'f') {
            v = *hex - 'a' + 10;
        } else {
            v = *hex - 'A' + 10;
        }
        if (hi < 0) {
            hi = v;
        } else {
            assert_true(n < cap);
            out[n++] = (uint8_t)(hi << 4 | v);
            hi = -1;
        }
    }
    assert_int_equal(hi, -1);
    return n;
}

#endif /* TESTS_UNIT_TEST_HEX_H */
