/* tests/unit/test_key_method.c: the key-method-2 message (section 4.2 of docs/openvpn-protocol.md).
 *
 * The vectors are the plaintext TLS application data that the stock openvpn 2.6.14 client and
 * server exchanged on loopback (tls-crypt, default options), recorded as TLS plaintext. Field
 * offsets in the checks are worked out by hand from the table in section 4.2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/errors.h"
#include "proto/key_method.h"

/* 2.6.14 client, `client` config, no auth-user-pass: 400 bytes. */
static const char client_hex[] = "00000000027caeac3032f67921268df6e938bcb43cde58c85926d7c565d912916"
                                 "9026d4d951e2ee3520035e77e2d1a49"
                                 "af7a7cc39db72ed6a16108da7e70e3adbb83c361ee08f0bd45ee4f45358825879"
                                 "4971027a8d686faaf58d4ed3cc9abc6"
                                 "1eabfe43de7a4359ccd3c348213fe8576cfc93bd07006656342c6465762d74797"
                                 "065206e756c6c2c6c696e6b2d6d7475"
                                 "20313534312c74756e2d6d747520313530302c70726f746f2055445076342c617"
                                 "5746820534841312c6b657973697a65"
                                 "203132382c6b65792d6d6574686f6420322c746c732d636c69656e74000000000"
                                 "000ad49565f5645523d322e362e3134"
                                 "0a49565f504c41543d6c696e75780a49565f5443504e4c3d310a49565f4d54553"
                                 "d313630300a49565f4e43503d320a49"
                                 "565f434950484552533d4145532d3235362d47434d3a4145532d3132382d47434"
                                 "d3a43484143484132302d504f4c5931"
                                 "3330350a49565f50524f544f3d3939300a49565f4c5a4f5f535455423d310a495"
                                 "65f434f4d505f535455423d310a4956"
                                 "5f434f4d505f5354554276323d310a00";

/* The 2.6.14 server's answer to it: 178 bytes. */
static const char server_hex[] =
    "000000000267b4e9ac9c489fde84b2bdf5a059463d01f9b899e8e52939758d48dfa2a90a06cfec675ae97e52e80ce6"
    "b0"
    "f0c10b5d84951c3fd326299d2e86a94b3ae5a57b48006556342c6465762d747970652074756e2c6c696e6b2d6d7475"
    "20"
    "313534312c74756e2d6d747520313530302c70726f746f2055445076342c6175746820534841312c6b657973697a65"
    "20"
    "3132382c6b65792d6d6574686f6420322c746c732d73657276657200000000000000";

/* 2.6.14 client with auth-user-pass (alice / "secret pw"), setenv IV_GUI_VER and IV_SSO. */
static const char client_userpass_hex[] =
    "0000000002e593e456e431dd1df8d85b89762d737f919936ec08aac75b766b5088499e8a771b93209e615c6520bdd3"
    "c1"
    "f2dbdfcd30903b73911e7887341326e3e6db393b49092caa790f31539c27a270fbd57d999daad0f630a94e21a8cec8"
    "b9"
    "e1dfdde027d3e86b63a158feaf118f8f295905d31a006656342c6465762d74797065206e756c6c2c6c696e6b2d6d74"
    "75"
    "20313534312c74756e2d6d747520313530302c70726f746f2055445076342c6175746820534841312c6b657973697a"
    "65"
    "203132382c6b65792d6d6574686f6420322c746c732d636c69656e74000006616c69636500000a7365637265742070"
    "77"
    "0000dd49565f5645523d322e362e31340a49565f504c41543d6c696e75780a49565f5443504e4c3d310a49565f4d54"
    "55"
    "3d313630300a49565f4e43503d320a49565f434950484552533d4145532d3235362d47434d3a4145532d3132382d47"
    "43"
    "4d3a43484143484132302d504f4c59313330350a49565f50524f544f3d3939300a49565f4c5a4f5f535455423d310a"
    "49"
    "565f434f4d505f535455423d310a49565f434f4d505f5354554276323d310a49565f4755495f5645523d6f76706e64"
    "2d"
    "7465737420312e300a49565f53534f3d776562617574682c6372746578740a00";

static const char client_options[] = "V4,dev-type null,link-mtu 1541,tun-mtu 1500,proto UDPv4,"
                                     "auth SHA1,keysize 128,key-method 2,tls-client";
static const char server_options[] = "V4,dev-type tun,link-mtu 1541,tun-mtu 1500,proto UDPv4,"
                                     "auth SHA1,keysize 128,key-method 2,tls-server";
/* as the 2.6.14 server logged it, one "peer info:" line per variable */
static const char client_peer_info[] = "IV_VER=2.6.14\nIV_PLAT=linux\nIV_TCPNL=1\nIV_MTU=1600\n"
                                       "IV_NCP=2\n"
                                       "IV_CIPHERS=AES-256-GCM:AES-128-GCM:CHACHA20-POLY1305\n"
                                       "IV_PROTO=990\nIV_LZO_STUB=1\nIV_COMP_STUB=1\n"
                                       "IV_COMP_STUBv2=1\n";

/* Decode hex into a fresh heap buffer of exactly the right size (so ASan sees over-reads). */
static uint8_t *unhex(const char *hex, size_t *len)
{
    size_t n = strlen(hex) / 2;
    uint8_t *out = malloc(n > 0 ? n : 1);

    assert_non_null(out);
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
        out[i] = (uint8_t)v;
    }
    *len = n;
    return out;
}

static struct key_method2 *new_km(void)
{
    struct key_method2 *km = calloc(1, sizeof(*km));

    assert_non_null(km);
    return km;
}

static void real_client_message_parses(void **state)
{
    size_t len;
    uint8_t *msg = unhex(client_hex, &len);
    struct key_method2 *km = new_km();

    (void)state;
    assert_int_equal(len, 400);
    assert_int_equal(key_method2_parse(msg, len, true, km), 0);
    /* table 4.2: zero(4) method(1) pre_master(48) random1(32) random2(32) then strings at 117 */
    assert_true(km->has_pre_master);
    assert_memory_equal(km->pre_master, msg + 5, 48);
    assert_memory_equal(km->random1, msg + 53, 32);
    assert_memory_equal(km->random2, msg + 85, 32);
    assert_int_equal(msg[117] << 8 | msg[118], sizeof(client_options));
    assert_string_equal(km->options, client_options);
    assert_string_equal(km->username, "");
    assert_string_equal(km->password, "");
    assert_string_equal(km->peer_info, client_peer_info);
    assert_false(km->username_too_long);
    assert_false(km->password_too_long);
    assert_false(km->peer_info_truncated);
    key_method2_wipe(km);
    free(km);
    free(msg);
}

static void real_client_with_credentials_parses(void **state)
{
    size_t len;
    uint8_t *msg = unhex(client_userpass_hex, &len);
    struct key_method2 *km = new_km();

    (void)state;
    assert_int_equal(key_method2_parse(msg, len, true, km), 0);
    assert_string_equal(km->options, client_options);
    assert_string_equal(km->username, "alice");
    assert_string_equal(km->password, "secret pw");
    assert_non_null(strstr(km->peer_info, "\nIV_GUI_VER=ovpnd-test 1.0\n"));
    assert_non_null(strstr(km->peer_info, "\nIV_SSO=webauth,crtext\n"));
    free(km);
    free(msg);
}

static void real_server_message_parses(void **state)
{
    size_t len;
    uint8_t *msg = unhex(server_hex, &len);
    struct key_method2 *km = new_km();

    (void)state;
    assert_int_equal(len, 178);
    assert_int_equal(key_method2_parse(msg, len, false, km), 0);
    assert_false(km->has_pre_master);
    assert_memory_equal(km->random1, msg + 5, 32);
    assert_memory_equal(km->random2, msg + 37, 32);
    assert_string_equal(km->options, server_options);
    assert_string_equal(km->peer_info, "");
    /* the same bytes read as a client message: pre_master eats the randoms, the rest is garbage */
    assert_int_not_equal(key_method2_parse(msg, len, true, km), 0);
    free(km);
    free(msg);
}

/* Our writer must produce the captured bytes given the captured field values. */
static void write_reproduces_captures(void **state)
{
    static const struct {
        const char *hex;
        bool from_client;
    } cases[] = {{client_hex, true}, {server_hex, false}, {client_userpass_hex, true}};
    struct key_method2 *km = new_km();
    uint8_t out[1024];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t len, out_len = 0;
        uint8_t *msg = unhex(cases[i].hex, &len);
        assert_int_equal(key_method2_parse(msg, len, cases[i].from_client, km), 0);
        assert_int_equal(key_method2_write(km, cases[i].from_client, out, sizeof(out), &out_len),
                         0);
        assert_int_equal(out_len, len);
        assert_memory_equal(out, msg, len);
        /* every smaller buffer fails cleanly */
        for (size_t cap = 0; cap < len; cap++) {
            assert_int_equal(key_method2_write(km, cases[i].from_client, out, cap, &out_len),
                             -PE_NOSPACE);
        }
        free(msg);
    }
    free(km);
}

/* Server side: empty username, password and peer-info are 00 00 each, as 2.6 writes them. */
static void server_write_layout(void **state)
{
    struct key_method2 *km = new_km();
    uint8_t out[512];
    size_t out_len;

    (void)state;
    memset(km->random1, 0x11, sizeof(km->random1));
    memset(km->random2, 0x22, sizeof(km->random2));
    strcpy(km->options, "V4");
    assert_int_equal(key_method2_write(km, false, out, sizeof(out), &out_len), 0);
    assert_int_equal(out_len, 4 + 1 + 32 + 32 + 2 + 3 + 2 + 2 + 2);
    assert_memory_equal(out, "\0\0\0\0\x02", 5);
    assert_int_equal(out[5], 0x11);
    assert_int_equal(out[68], 0x22);
    assert_memory_equal(out + 69, "\x00\x03V4\0\0\0\0\0\0\0", 11);
    free(km);
}

static void truncated_message_never_parses(void **state)
{
    const char *hexes[] = {client_hex, client_userpass_hex};
    struct key_method2 *km = new_km();

    (void)state;
    for (size_t h = 0; h < 2; h++) {
        size_t len;
        uint8_t *msg = unhex(hexes[h], &len);
        for (size_t cut = 0; cut < len; cut++) {
            uint8_t *copy = malloc(cut > 0 ? cut : 1);
            assert_non_null(copy);
            memcpy(copy, msg, cut);
            int err = key_method2_parse(copy, cut, true, km);
            assert_true(err == -PE_SHORT || err == -PE_MALFORMED);
            /* nothing is left behind after an error */
            assert_false(km->has_pre_master);
            assert_int_equal(km->options[0], 0);
            free(copy);
        }
        free(msg);
    }
    free(km);
}

/* Build a client message from raw string fields (lengths as given, for malformed cases). */
static size_t build(uint8_t *out, uint8_t method, const char *opt, size_t opt_len, const char *user,
                    size_t user_len, const char *peer, size_t peer_len)
{
    size_t n = 0;
    const char *strs[4] = {opt, user, "", peer};
    size_t lens[4] = {opt_len, user_len, 0, peer_len};

    memset(out, 0, 5);
    out[4] = method;
    n = 5;
    memset(out + n, 0xab, 48 + 64);
    n += 48 + 64;
    for (int i = 0; i < 4; i++) {
        out[n++] = (uint8_t)(lens[i] >> 8);
        out[n++] = (uint8_t)lens[i];
        memcpy(out + n, strs[i], lens[i]);
        n += lens[i];
    }
    return n;
}

static void options_length_limit(void **state)
{
    static char opt[600];
    static uint8_t msg[2048];
    struct key_method2 *km = new_km();
    size_t n;

    (void)state;
    memset(opt, 'x', sizeof(opt));
    opt[511] = '\0'; /* 512 bytes incl. NUL: the largest 2.6 accepts */
    n = build(msg, 2, opt, 512, "", 0, "", 0);
    assert_int_equal(key_method2_parse(msg, n, true, km), 0);
    assert_int_equal(strlen(km->options), 511);

    opt[511] = 'x';
    opt[512] = '\0'; /* 513 bytes incl. NUL */
    n = build(msg, 2, opt, 513, "", 0, "", 0);
    assert_int_equal(key_method2_parse(msg, n, true, km), -PE_MALFORMED);

    /* the writer refuses what the reader would refuse */
    memset(km, 0, sizeof(*km));
    memset(km->options, 'x', sizeof(km->options)); /* no NUL in the field */
    assert_int_equal(key_method2_write(km, true, msg, sizeof(msg), &n), -PE_MALFORMED);
    free(km);
}

static void key_method_nibble(void **state)
{
    static const struct {
        uint8_t method;
        int want;
    } cases[] = {{0x02, 0},
                 {0x12, 0},
                 {0xf2, 0},
                 {0x01, -PE_MALFORMED},
                 {0x00, -PE_MALFORMED},
                 {0x03, -PE_MALFORMED},
                 {0x20, -PE_MALFORMED}};
    uint8_t msg[512];
    struct key_method2 *km = new_km();

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t n = build(msg, cases[i].method, "V4", 3, "", 0, "", 0);
        assert_int_equal(key_method2_parse(msg, n, true, km), cases[i].want);
    }
    free(km);
}

static void missing_nul_is_malformed(void **state)
{
    uint8_t msg[512];
    struct key_method2 *km = new_km();
    size_t n;

    (void)state;
    n = build(msg, 2, "V4x", 3, "", 0, "", 0); /* options without NUL */
    assert_int_equal(key_method2_parse(msg, n, true, km), -PE_MALFORMED);
    n = build(msg, 2, "V4", 3, "bob", 3, "", 0); /* username without NUL */
    assert_int_equal(key_method2_parse(msg, n, true, km), -PE_MALFORMED);
    n = build(msg, 2, "V4", 3, "", 0, "IV_X=1\n", 7); /* peer-info without NUL */
    assert_int_equal(key_method2_parse(msg, n, true, km), -PE_MALFORMED);
    /* an embedded NUL just ends the string */
    n = build(msg, 2, "V4\0zz", 6, "bo\0b", 5, "", 0);
    assert_int_equal(key_method2_parse(msg, n, true, km), 0);
    assert_string_equal(km->options, "V4");
    assert_string_equal(km->username, "bo");
    free(km);
}

/* 2.6 reports an over-long username or password as AUTH_FAILED and still reads the peer-info. */
static void long_username_is_flagged_not_fatal(void **state)
{
    static char user[5000];
    static uint8_t msg[8192];
    struct key_method2 *km = new_km();
    size_t n;

    (void)state;
    memset(user, 'u', sizeof(user));
    user[4095] = '\0'; /* 4096 incl. NUL: fits */
    n = build(msg, 2, "V4", 3, user, 4096, "IV_PROTO=2\n", 12);
    assert_int_equal(key_method2_parse(msg, n, true, km), 0);
    assert_false(km->username_too_long);
    assert_int_equal(strlen(km->username), 4095);

    user[4095] = 'u';
    user[4096] = '\0'; /* 4097 incl. NUL */
    n = build(msg, 2, "V4", 3, user, 4097, "IV_PROTO=2\n", 12);
    assert_int_equal(key_method2_parse(msg, n, true, km), 0);
    assert_true(km->username_too_long);
    assert_false(km->password_too_long);
    assert_string_equal(km->username, "");
    assert_string_equal(km->peer_info, "IV_PROTO=2\n");
    free(km);
}

static void long_peer_info_is_cut_at_a_line(void **state)
{
    static char peer[20000];
    static uint8_t msg[24000];
    struct key_method2 *km = new_km();
    size_t used = 0, n;

    (void)state;
    while (used < 12000) {
        memcpy(peer + used, "UV_PADDING=0123456789\n", 22);
        used += 22;
    }
    memcpy(peer + used, "IV_LAST=1\n", 11); /* includes the NUL */
    n = build(msg, 2, "V4", 3, "", 0, peer, used + 11);
    assert_int_equal(key_method2_parse(msg, n, true, km), 0);
    assert_true(km->peer_info_truncated);
    size_t got = strlen(km->peer_info);
    assert_true(got < KEY_METHOD2_PEER_INFO_MAX);
    assert_true(got > KEY_METHOD2_PEER_INFO_MAX - 23);
    assert_int_equal(km->peer_info[got - 1], '\n');
    assert_memory_equal(km->peer_info, peer, got);
    free(km);
}

static void trailing_bytes_ignored_and_wipe_clears(void **state)
{
    size_t len;
    uint8_t *msg = unhex(client_hex, &len);
    uint8_t *longer = malloc(len + 7);
    struct key_method2 *km = new_km();
    static const struct key_method2 zero;

    (void)state;
    assert_non_null(longer);
    memcpy(longer, msg, len);
    memset(longer + len, 0x5a, 7);
    assert_int_equal(key_method2_parse(longer, len + 7, true, km), 0);
    assert_string_equal(km->peer_info, client_peer_info);
    key_method2_wipe(km);
    assert_memory_equal(km, &zero, sizeof(zero));
    free(km);
    free(longer);
    free(msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(real_client_message_parses),
        cmocka_unit_test(real_client_with_credentials_parses),
        cmocka_unit_test(real_server_message_parses),
        cmocka_unit_test(write_reproduces_captures),
        cmocka_unit_test(server_write_layout),
        cmocka_unit_test(truncated_message_never_parses),
        cmocka_unit_test(options_length_limit),
        cmocka_unit_test(key_method_nibble),
        cmocka_unit_test(missing_nul_is_malformed),
        cmocka_unit_test(long_username_is_flagged_not_fatal),
        cmocka_unit_test(long_peer_info_is_cut_at_a_line),
        cmocka_unit_test(trailing_bytes_ignored_and_wipe_clears),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
