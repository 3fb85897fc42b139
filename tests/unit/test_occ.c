/* tests/unit/test_occ.c: ping/OCC payloads and the OCC options string (sections 4.3, 8.4, 8.5 of
 * docs/openvpn-protocol.md). Every expected options string below was logged by a stock 2.6.14
 * server at verb 7 ("Local Options String" / "Expected Remote Options String") with the
 * configuration named in the case. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "proto/errors.h"
#include "proto/occ.h"

static void ping_magic(void **state)
{
    /* section 8.4, and the plaintext a 2.6.14 client logged for its keepalive */
    static const uint8_t ping[16] = {0x2a, 0x18, 0x7b, 0xf3, 0x64, 0x1e, 0xb4, 0xcb,
                                     0x07, 0xed, 0x2d, 0x0a, 0x98, 0x1f, 0xc7, 0x48};
    uint8_t buf[17];

    (void)state;
    assert_memory_equal(occ_ping_magic, ping, 16);
    assert_true(occ_is_ping(ping, 16));
    memcpy(buf, ping, 16);
    buf[16] = 0;
    assert_false(occ_is_ping(buf, 17)); /* exact length only */
    assert_false(occ_is_ping(buf, 15));
    buf[15] ^= 1;
    assert_false(occ_is_ping(buf, 16));
    assert_false(occ_is_ping(occ_magic, 16));
}

static void occ_messages(void **state)
{
    static const uint8_t exit_msg[17] = {0x28, 0x7f, 0x34, 0x6b, 0xd4, 0xef, 0x7a, 0x81, 0x2d,
                                         0x56, 0xb8, 0xd3, 0xaf, 0xc5, 0x45, 0x9c, 0x06};
    uint8_t buf[32];
    size_t len;
    enum occ_type type;

    (void)state;
    assert_int_equal(occ_parse(exit_msg, sizeof(exit_msg), &type), 0);
    assert_int_equal(type, OCC_EXIT);
    assert_int_equal(occ_write(OCC_EXIT, buf, sizeof(buf), &len), 0);
    assert_int_equal(len, 17);
    assert_memory_equal(buf, exit_msg, 17);

    /* a reply carries the options string after the type */
    memcpy(buf, exit_msg, 16);
    buf[16] = OCC_REPLY;
    memcpy(buf + 17, "V4,x", 5);
    assert_int_equal(occ_parse(buf, 22, &type), 0);
    assert_int_equal(type, OCC_REPLY);
    buf[16] = 7;
    assert_int_equal(occ_parse(buf, 17, &type), -PE_UNSUPPORTED);
    assert_int_equal(occ_parse(buf, 16, &type), -PE_SHORT);
    assert_int_equal(occ_parse(buf, 15, &type), -PE_MALFORMED);
    assert_int_equal(occ_parse(occ_ping_magic, 16, &type), -PE_MALFORMED);
    buf[0] ^= 0x80;
    buf[16] = OCC_EXIT;
    assert_int_equal(occ_parse(buf, 17, &type), -PE_MALFORMED);

    assert_int_equal(occ_write(OCC_REQUEST, buf, 17, &len), 0);
    assert_int_equal(buf[16], 0);
    assert_int_equal(occ_write(OCC_EXIT, buf, 16, &len), -PE_NOSPACE);
    assert_int_equal(occ_write(OCC_REPLY, buf, sizeof(buf), &len), -PE_UNSUPPORTED);
}

struct str_case {
    const char *config; /* what the 2.6.14 server was run with */
    struct occ_options o;
    const char *local, *remote;
};

/* (no designated initializer is given twice: -Woverride-init) */
#define SRV .tun_mtu = 1500, .is_server = true
#define BASE SRV, .keydir = -1

static const struct str_case str_cases[] = {
    {"defaults (tls-crypt)",
     {BASE},
     "V4,dev-type tun,link-mtu 1541,tun-mtu 1500,proto UDPv4,auth SHA1,keysize 128,key-method 2,"
     "tls-server",
     "V4,dev-type tun,link-mtu 1541,tun-mtu 1500,proto UDPv4,auth SHA1,keysize 128,key-method 2,"
     "tls-client"},
    {"data-ciphers-fallback AES-256-GCM",
     {BASE, .cipher = "AES-256-GCM", .cipher_in_data_ciphers = true},
     "V4,dev-type tun,link-mtu 1549,tun-mtu 1500,proto UDPv4,cipher AES-256-GCM,auth "
     "[null-digest],keysize 256,key-method 2,tls-server",
     "V4,dev-type tun,link-mtu 1549,tun-mtu 1500,proto UDPv4,cipher AES-256-GCM,auth "
     "[null-digest],keysize 256,key-method 2,tls-client"},
    {"data-ciphers-fallback CHACHA20-POLY1305",
     {BASE, .cipher = "CHACHA20-POLY1305", .cipher_in_data_ciphers = true},
     "V4,dev-type tun,link-mtu 1534,tun-mtu 1500,proto UDPv4,cipher CHACHA20-POLY1305,auth "
     "[null-digest],keysize 256,key-method 2,tls-server",
     NULL},
    {"data-ciphers-fallback AES-256-CBC (not in data-ciphers)",
     {BASE, .cipher = "AES-256-CBC"},
     "V4,dev-type tun,link-mtu 1557,tun-mtu 1500,proto UDPv4,auth SHA1,keysize 256,key-method 2,"
     "tls-server",
     NULL},
    {"data-ciphers-fallback AES-128-CBC, auth SHA256",
     {BASE, .cipher = "AES-128-CBC", .auth = "SHA256"},
     "V4,dev-type tun,link-mtu 1569,tun-mtu 1500,proto UDPv4,auth SHA256,keysize 128,key-method 2,"
     "tls-server",
     NULL},
    {"tls-auth ta.key 0",
     {SRV, .keydir = 0, .tls_auth = true},
     "V4,dev-type tun,link-mtu 1541,tun-mtu 1500,proto UDPv4,keydir 0,auth SHA1,keysize 128,"
     "tls-auth,key-method 2,tls-server",
     "V4,dev-type tun,link-mtu 1541,tun-mtu 1500,proto UDPv4,keydir 1,auth SHA1,keysize 128,"
     "tls-auth,key-method 2,tls-client"},
    {"proto tcp4-server",
     {BASE, .is_tcp = true},
     "V4,dev-type tun,link-mtu 1543,tun-mtu 1500,proto TCPv4_SERVER,auth SHA1,keysize 128,"
     "key-method 2,tls-server",
     "V4,dev-type tun,link-mtu 1543,tun-mtu 1500,proto TCPv4_CLIENT,auth SHA1,keysize 128,"
     "key-method 2,tls-client"},
    {"comp-lzo no",
     {BASE, .comp = true, .comp_v1_framing = true},
     "V4,dev-type tun,link-mtu 1542,tun-mtu 1500,proto UDPv4,comp-lzo,auth SHA1,keysize 128,"
     "key-method 2,tls-server",
     NULL},
    {"compress lz4 (allow-compression yes)",
     {BASE, .comp = true, .comp_v1_framing = true},
     "V4,dev-type tun,link-mtu 1542,tun-mtu 1500,proto UDPv4,comp-lzo,auth SHA1,keysize 128,"
     "key-method 2,tls-server",
     NULL},
    {"compress stub-v2 / lz4-v2",
     {BASE, .comp = true},
     "V4,dev-type tun,link-mtu 1541,tun-mtu 1500,proto UDPv4,comp-lzo,auth SHA1,keysize 128,"
     "key-method 2,tls-server",
     NULL},
    {"fragment 1000 (captured from the stock 2.6 client at verb 7)",
     {BASE, .fragment = true},
     "V4,dev-type tun,link-mtu 1545,tun-mtu 1500,proto UDPv4,mtu-dynamic,auth SHA1,keysize 128,"
     "key-method 2,tls-server",
     "V4,dev-type tun,link-mtu 1545,tun-mtu 1500,proto UDPv4,mtu-dynamic,auth SHA1,keysize 128,"
     "key-method 2,tls-client"},
    {"dev tap",
     {BASE, .dev_type = "tap"},
     "V4,dev-type tap,link-mtu 1573,tun-mtu 1500,proto UDPv4,auth SHA1,keysize 128,key-method 2,"
     "tls-server",
     NULL},
    {"client side: `client`, dev null (sent in its key-method-2 message)",
     {.tun_mtu = 1500, .keydir = -1, .dev_type = "null"},
     "V4,dev-type null,link-mtu 1541,tun-mtu 1500,proto UDPv4,auth SHA1,keysize 128,key-method 2,"
     "tls-client",
     NULL},
};

static void options_strings_match_2614(void **state)
{
    char out[OCC_OPTIONS_STRING_MAX];

    (void)state;
    for (size_t i = 0; i < sizeof(str_cases) / sizeof(str_cases[0]); i++) {
        struct occ_options o = str_cases[i].o;
        int err = occ_options_string(&o, out, sizeof(out));
        if (err || strcmp(out, str_cases[i].local) != 0) {
            fail_msg("%s: got %d '%s'", str_cases[i].config, err, out);
        }
        if (str_cases[i].remote != NULL) {
            o.remote = true;
            err = occ_options_string(&o, out, sizeof(out));
            if (err || strcmp(out, str_cases[i].remote) != 0) {
                fail_msg("%s (remote): got %d '%s'", str_cases[i].config, err, out);
            }
        }
    }
}

static void options_init_is_2614_server_default(void **state)
{
    struct occ_options o;
    char out[OCC_OPTIONS_STRING_MAX];
    unsigned mtu;

    (void)state;
    occ_options_init(&o);
    assert_int_equal(occ_options_string(&o, out, sizeof(out)), 0);
    assert_string_equal(out, str_cases[0].local);
    assert_int_equal(occ_link_mtu(&o, &mtu), 0);
    assert_int_equal(mtu, 1541);
    o.link_mtu = 1400; /* explicit value is used as is */
    assert_int_equal(occ_options_string(&o, out, sizeof(out)), 0);
    assert_non_null(strstr(out, ",link-mtu 1400,"));
}

static void options_string_errors(void **state)
{
    struct occ_options o;
    char out[OCC_OPTIONS_STRING_MAX];

    (void)state;
    occ_options_init(&o);
    for (size_t cap = 0; cap <= strlen(str_cases[0].local); cap++) {
        assert_int_equal(occ_options_string(&o, out, cap), -PE_NOSPACE);
    }
    assert_int_equal(occ_options_string(&o, out, strlen(str_cases[0].local) + 1), 0);
    o.cipher = "AES-256-XTS";
    assert_int_equal(occ_options_string(&o, out, sizeof(out)), -PE_UNSUPPORTED);
    o.cipher = "AES-256-GCM,tls-auth";
    assert_int_equal(occ_options_string(&o, out, sizeof(out)), -PE_MALFORMED);
    o.cipher = "aes-256-cbc"; /* names are upper-cased */
    o.cipher_in_data_ciphers = true;
    o.auth = "sha512";
    assert_int_equal(occ_options_string(&o, out, sizeof(out)), 0);
    assert_non_null(strstr(out, ",cipher AES-256-CBC,auth SHA512,keysize 256,"));
    o.auth = "WHIRLPOOL";
    assert_int_equal(occ_options_string(&o, out, sizeof(out)), -PE_UNSUPPORTED);
}

static void get_option_from_string(void **state)
{
    static const char s[] = "V4,dev-type tun,link-mtu 1557,tun-mtu 1500,proto UDPv4,comp-lzo,"
                            "cipher AES-256-CBC,auth SHA1,keysize 256,key-method 2,tls-client";
    char out[64];

    (void)state;
    assert_true(occ_options_get(s, "cipher", out, sizeof(out)));
    assert_string_equal(out, "AES-256-CBC");
    assert_true(occ_options_get(s, "tun-mtu", out, sizeof(out)));
    assert_string_equal(out, "1500");
    assert_true(occ_options_get(s, "dev-type", out, sizeof(out)));
    assert_string_equal(out, "tun");
    assert_true(occ_options_get(s, "key-method", out, sizeof(out)));
    assert_string_equal(out, "2");
    assert_false(occ_options_get(s, "comp-lzo", out, sizeof(out))); /* no value */
    assert_false(occ_options_get(s, "mtu", out, sizeof(out)));      /* only whole fields */
    assert_false(occ_options_get(s, "cipher", out, 11));            /* does not fit */
    assert_true(occ_options_get(s, "cipher", out, 12));
    assert_false(occ_options_get(NULL, "cipher", out, sizeof(out)));
    assert_false(occ_options_get("V4,cipher ", "cipher", out, sizeof(out)));
    assert_true(occ_options_get("V4,cipher BF-CBC", "cipher", out, sizeof(out))); /* at the end */
    assert_string_equal(out, "BF-CBC");

    assert_true(occ_options_has_comp(s));
    assert_false(occ_options_has_comp(str_cases[0].local));
    assert_false(occ_options_has_comp("V4,comp-lzo")); /* 2.6 looks for ",comp-lzo," */
    assert_false(occ_options_has_comp(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ping_magic),
        cmocka_unit_test(occ_messages),
        cmocka_unit_test(options_strings_match_2614),
        cmocka_unit_test(options_init_is_2614_server_default),
        cmocka_unit_test(options_string_errors),
        cmocka_unit_test(get_option_from_string),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
