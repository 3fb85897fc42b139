/* tests/unit/test_peer_info.c: peer-info parsing (section 9.1/9.2 of docs/openvpn-protocol.md).
 * The main vector is the peer-info a stock 2.6.14 client sent, as the 2.6.14 server logged it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "proto/peer_info.h"

static const char client_2614[] =
    "IV_VER=2.6.14\nIV_PLAT=linux\nIV_TCPNL=1\nIV_MTU=1600\nIV_NCP=2\n"
    "IV_CIPHERS=AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305\n"
    "IV_PROTO=990\nIV_LZO_STUB=1\nIV_COMP_STUB=1\nIV_COMP_STUBv2=1\n";

static void parse_text(const char *text, struct peer_info *pi)
{
    assert_int_equal(peer_info_parse(text, strlen(text), pi), 0);
}

static void stock_client_2614(void **state)
{
    struct peer_info pi;

    (void)state;
    parse_text(client_2614, &pi);
    assert_string_equal(pi.version, "2.6.14");
    assert_string_equal(pi.platform, "linux");
    assert_int_equal(pi.iv_proto, 990);
    /* 990 = bits 1,2,3,4,6,7,8,9 */
    assert_true(pi.iv_proto & IV_PROTO_DATA_V2);
    assert_true(pi.iv_proto & IV_PROTO_REQUEST_PUSH);
    assert_true(pi.iv_proto & IV_PROTO_TLS_KEY_EXPORT);
    assert_true(pi.iv_proto & IV_PROTO_AUTH_PENDING_KW);
    assert_false(pi.iv_proto & IV_PROTO_NCP_P2P);
    assert_true(pi.iv_proto & IV_PROTO_DNS_OPTION);
    assert_true(pi.iv_proto & IV_PROTO_CC_EXIT_NOTIFY);
    assert_true(pi.iv_proto & IV_PROTO_AUTH_FAIL_TEMP);
    assert_true(pi.iv_proto & IV_PROTO_DYN_TLS_CRYPT);
    assert_false(pi.iv_proto & 1u);
    assert_false(pi.iv_proto & IV_PROTO_DATA_EPOCH);
    assert_int_equal(IV_PROTO_DATA_V2 | IV_PROTO_REQUEST_PUSH | IV_PROTO_TLS_KEY_EXPORT |
                         IV_PROTO_AUTH_PENDING_KW | IV_PROTO_DNS_OPTION | IV_PROTO_CC_EXIT_NOTIFY |
                         IV_PROTO_AUTH_FAIL_TEMP | IV_PROTO_DYN_TLS_CRYPT,
                     990);
    assert_true(pi.has_ciphers);
    assert_string_equal(pi.ciphers, "AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305");
    assert_false(pi.ciphers_truncated);
    assert_int_equal(pi.ncp, 2);
    assert_true(pi.has_mtu);
    assert_int_equal(pi.mtu, 1600);
    assert_true(pi.tcpnl);
    assert_true(pi.lzo_stub);
    assert_true(pi.comp_stub);
    assert_true(pi.comp_stubv2);
    assert_false(pi.lz4);
    assert_false(pi.lz4v2);
    assert_false(pi.lzo);
    assert_string_equal(pi.gui_ver, "");
    assert_true(peer_info_supports_ncp(&pi));
}

/* The extra variables a GUI sets, from a 2.6.14 client with setenv IV_GUI_VER / IV_SSO. */
static void gui_and_sso(void **state)
{
    struct peer_info pi;

    (void)state;
    parse_text("IV_VER=2.6.14\nIV_PROTO=990\nIV_GUI_VER=ovpnd-test 1.0\nIV_SSO=webauth,crtext\n",
               &pi);
    assert_string_equal(pi.gui_ver, "ovpnd-test 1.0");
    assert_string_equal(pi.sso, "webauth,crtext");
}

/* openvpn3 announces bits 1,2,4,7,8,11,12 plus 3 and 9 (section 9.2) and full compression. */
static void openvpn3_style(void **state)
{
    struct peer_info pi;

    (void)state;
    parse_text("IV_VER=3.10\r\nIV_PLAT=android\r\nIV_NCP=2\r\nIV_TCPNL=1\r\nIV_PROTO=7070\r\n"
               "IV_MTU=1600\r\nIV_LZ4=1\r\nIV_LZ4v2=1\r\nIV_LZO=1\r\nIV_BS64DL=1\r\n",
               &pi);
    assert_int_equal(pi.iv_proto, 7070);
    assert_true(pi.iv_proto & IV_PROTO_PUSH_UPDATE);
    assert_true(pi.iv_proto & IV_PROTO_DNS_OPTION_V2);
    assert_false(pi.iv_proto & IV_PROTO_DNS_OPTION);
    assert_string_equal(pi.platform, "android"); /* CR dropped */
    assert_true(pi.lz4 && pi.lz4v2 && pi.lzo);
    assert_false(pi.has_ciphers);
    assert_true(peer_info_supports_ncp(&pi)); /* IV_NCP=2 alone is enough */
    assert_int_equal(pi.mtu, 1600);
}

static void numbers_like_sscanf(void **state)
{
    static const struct {
        const char *text;
        uint32_t iv_proto;
    } cases[] = {
        {"IV_PROTO=2", 2},
        {"IV_PROTO=990abc", 990},
        {"IV_PROTO= 6", 6},
        {"IV_PROTO=+6", 6},
        {"IV_PROTO=-5", 0},
        {"IV_PROTO=0", 0},
        {"IV_PROTO=abc", 0},
        {"IV_PROTO=", 0},
        {"IV_PROTO=2147483647", 2147483647u},
        {"IV_PROTO=2147483648", 0},
        {"IV_PROTO=99999999999999999999", 0},
    };
    struct peer_info pi;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        parse_text(cases[i].text, &pi);
        assert_int_equal(pi.iv_proto, cases[i].iv_proto);
    }
    parse_text("IV_MTU=abc\nIV_NCP=x", &pi);
    assert_false(pi.has_mtu);
    assert_int_equal(pi.ncp, 0);
    parse_text("IV_MTU=-1\nIV_NCP=-2", &pi);
    assert_true(pi.has_mtu);
    assert_int_equal(pi.mtu, -1);
    assert_int_equal(pi.ncp, -2);
    assert_false(peer_info_supports_ncp(&pi));
}

static void odd_content_is_tolerated(void **state)
{
    static const char junk[] = "\x01\x02garbage\n=\n==\nIV_PLAT\n\nNOEQUALS\nIV_VER=1\x7f\x1b[2J\n"
                               "UV_X=IV_PROTO=990\nIV_PROTO=2\nIV_PROTO=990\nIV_LZ4=yes\n"
                               "IV_COMP_STUBv2=1 \niv_plat=lower\nIV_PLAT=linux";
    struct peer_info pi;

    (void)state;
    parse_text(junk, &pi);
    assert_string_equal(pi.version, "1??[2J"); /* control characters masked */
    assert_int_equal(pi.iv_proto, 2);          /* first IV_PROTO line; UV_X does not count */
    assert_false(pi.lz4);                      /* only "1" means yes */
    assert_false(pi.comp_stubv2);
    assert_string_equal(pi.platform, "linux"); /* names are case-sensitive; last line w/o \n */

    /* stops at an embedded NUL, never reads past len */
    static const char with_nul[] = "IV_VER=2.6\0IV_PROTO=990\n";
    assert_int_equal(peer_info_parse(with_nul, sizeof(with_nul), &pi), 0);
    assert_string_equal(pi.version, "2.6");
    assert_int_equal(pi.iv_proto, 0);
    assert_int_equal(peer_info_parse("IV_PROTO=990", 10, &pi), 0); /* "IV_PROTO=9" */
    assert_int_equal(pi.iv_proto, 9);

    assert_int_equal(peer_info_parse(NULL, 0, &pi), 0);
    assert_int_equal(pi.iv_proto, 0);
    assert_false(peer_info_supports_ncp(&pi));
    assert_false(peer_info_supports_ncp(NULL));
}

static void long_values_are_bounded(void **state)
{
    static char text[2048];
    struct peer_info pi;
    size_t n = 0;

    (void)state;
    memcpy(text, "IV_VER=", 7);
    n = 7;
    memset(text + n, 'v', 100);
    n += 100;
    memcpy(text + n, "\nIV_CIPHERS=", 12);
    n += 12;
    /* 30 x "AES-256-GCM:" = 360 characters */
    for (int i = 0; i < 30; i++) {
        memcpy(text + n, "AES-256-GCM:", 12);
        n += 12;
    }
    memcpy(text + n, "CHACHA20-POLY1305\n", 18);
    n += 18;
    assert_int_equal(peer_info_parse(text, n, &pi), 0);
    assert_int_equal(strlen(pi.version), sizeof(pi.version) - 1);
    assert_true(pi.has_ciphers);
    assert_true(pi.ciphers_truncated);
    size_t cl = strlen(pi.ciphers);
    assert_true(cl < sizeof(pi.ciphers));
    /* cut at a separator: only whole names remain */
    assert_int_equal(cl % 12, 11);
    assert_memory_equal(pi.ciphers + cl - 11, "AES-256-GCM", 11);

    parse_text("IV_CIPHERS=\n", &pi); /* present but empty: still an NCP client */
    assert_true(pi.has_ciphers);
    assert_string_equal(pi.ciphers, "");
    assert_true(peer_info_supports_ncp(&pi));
}

/* peer_info_value: a name at the start of a line only, the first one, '\r' dropped, cut to the
 * buffer. */
static void value_lookup(void **state)
{
    const char *text = "UV_X=IV_SSO=no\nIV_SSO=webauth,crtext\r\nIV_SSO=second\nIV_SSOX=1\n";
    char out[8];
    char big[64];

    (void)state;
    assert_true(peer_info_value(text, "IV_SSO", big, sizeof(big)));
    assert_string_equal(big, "webauth,crtext");
    assert_true(peer_info_value(text, "IV_SSO", out, sizeof(out)));
    assert_string_equal(out, "webauth");
    assert_false(peer_info_value(text, "IV_GUI_VER", big, sizeof(big)));
    assert_string_equal(big, "");
    assert_false(peer_info_value(NULL, "IV_SSO", big, sizeof(big)));
    assert_true(peer_info_value("IV_SSO=", "IV_SSO", big, sizeof(big)));
    assert_string_equal(big, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stock_client_2614),
        cmocka_unit_test(gui_and_sso),
        cmocka_unit_test(openvpn3_style),
        cmocka_unit_test(numbers_like_sscanf),
        cmocka_unit_test(odd_content_is_tolerated),
        cmocka_unit_test(long_values_are_bounded),
        cmocka_unit_test(value_lookup),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
