/* tests/unit/test_tls_crypt_v2.c: tls-crypt-v2 key files and wrapped client keys.
 *
 * The key files below were made by the stock openvpn 2.6 (Debian package):
 *   openvpn --genkey tls-crypt-v2-server srv.key          (and srv2.key, another server key)
 *   openvpn --genkey tls-crypt-v2-client cli.key --tls-crypt-v2 srv.key
 *   openvpn --genkey tls-crypt-v2-client cli_meta.key aGVsbG8gd29ybGQ= --tls-crypt-v2 srv.key
 * (the last with user metadata "hello world"). cli.key carries a timestamp made within the
 * minute of the file's creation time, 1796151931.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "proto/errors.h"
#include "proto/tls_crypt_v2.h"

static const char srv_key_text[] =
    "-----BEGIN OpenVPN tls-crypt-v2 server key-----\n"
    "cvnqFBC4SE2M1c/v+UmT1UMTVWb8AKBdRF2dCxZOD9JedowclyGGpNGmq8FbWFhV\n"
    "LRnL4sRpBcc1ryB+3bNZszKfJau/yd9TO2ZKMeD4e0GhwY8Ou6WtvLfmJy9DqUQX\n"
    "m8bGizidWNDuTE2E+fjVZx7J1Q5Fxc1qnsSw5X0Yw3w=\n"
    "-----END OpenVPN tls-crypt-v2 server key-----\n";

static const char srv2_key_text[] =
    "-----BEGIN OpenVPN tls-crypt-v2 server key-----\n"
    "iJaq0+SC8cwZxx7fhbuIwYPb936gYYykWF+qB4xRAK/Ojfidl9c06+oDkakgKN7G\n"
    "Kfd/CJEUItv8jeq1/duu+LUgkcUwiXKiKV58pp2v/bdiRW59my0bFdds9/yy4edK\n"
    "ve2w18alZLQgCZXXNC/vFNYhT1zJMUn5+O0tReV5uTY=\n"
    "-----END OpenVPN tls-crypt-v2 server key-----\n";

static const char cli_key_text[] =
    "-----BEGIN OpenVPN tls-crypt-v2 client key-----\n"
    "pvoz4c4r/CpjZ1Moca+4Ec5YuBeFt11qUlutq4fkpUEH4ZL2hzJR7K8/S+Kq6TXt\n"
    "GwmMlPAdmo9N0BkiA64Mou7FaFcnHVjqkqTpf3QSAAL7pzR+Oa6FMlRhEYVNKX5f\n"
    "tbYqcQ0oC7Fci49Pf915W8UpRU5UNsfrfqIiKtb8fQxz377bIKrOGucUce0cug3N\n"
    "2JxQZF7h+ouYAgx27RWdOGbUomq9FLJzcZzDjhYiygDoxxYz8Quy1y+yfN90IDqT\n"
    "yk+WrpNdgOhhzQQlRvQa7eTtlJX3PBix+wAsfX1Od2VnIpDYSRP+o45zpMEU9kDJ\n"
    "VQ7k2UhjAb8iYRIjRQYuJj34y3bB5/rWKndymi9/kkAPURzxJN7MC5jvZIWxbVGd\n"
    "TtDMjqBZKbHPNQTwbqqDTpKlcKEtZRri4yCI16KIuADZlx8Y6VqGRNY6wVVG6y2o\n"
    "CzeQNs03aLlvGUEKVpY7DUyAUyc78EBXAMaTLHev0M9YqYPjsQjOcB+2Cw0tgCKJ\n"
    "Z80/NldXPKBozdq4/1b/Iunp4t4mqIfDmA0+D01Y9ZsBLl0/FXFkW+ZRqF2jOX3l\n"
    "w+nCcZdVmc11QQt6dSZPdpkVhOEhATyMZg/UtZKxxG7Itq2J8WQsvaL5KxkhsnpI\n"
    "dXDvm/J+cfzVLWbnFJP47j4pUwXn0EOaETBnqDdSux7Liblg59u9a5CPG3OpxSzL\n"
    "YJRAVSzGVaglyNdodknKrzxtQPIOCcdaLQEr\n"
    "-----END OpenVPN tls-crypt-v2 client key-----\n";

static const char cli_meta_key_text[] =
    "-----BEGIN OpenVPN tls-crypt-v2 client key-----\n"
    "u9OHrF9s+ybpiihob9s4hTXEApQWvUQBasisvTb03QngFKyxsbkR2isbA/hltFNe\n"
    "4RKtBkgdKk0ZbQDpzLIe546BAayQYOo/OLIzYHZZUdpauLnLryz06kHEkTRs6Bt+\n"
    "V5bXGpFhC7078yIBaBnZXzRq2+/15Sb7DTHzGs7rIZLnRUXJDrxJeLsJj714x3GY\n"
    "F3Ginjlefmr80SOJR6PKBn7eZdrpn2na4hCQQw0fhaTVS/Ot/7ka25UKgSj0zwKe\n"
    "XVA4+sWrsGUVxvvLmkHOfzvooTDGzgLJ2cYiF9/V/chKiubnnlksNW87qSoGHUYr\n"
    "tZzEIqU59nwzosU6hDV+D3BO02lciTmwbDwmwgD3DQvrm3leh7T2Z8Xn7i+7XiiJ\n"
    "x9O7/hVv66LjyBtLD1MNRphWE0BVcx3x4EEVPPBsBbG//jLwsHr2rk/Ld2ezaUfP\n"
    "giyLJaAAxPOj3OQnEQb7GWIt28Qc7BV23d0XRlLUBWCBTNal3gG2VevQ/ZwP0aCn\n"
    "IR4lFoUSsehT+RD4v4F+x+Oi4f4OCtgVb3eor9Yk0QwAVjW8uhoQLUKNKSFg7VN8\n"
    "hkLCc81vcDRdZdvLonKm5a324OkROaEtvgC2UsoUKZkHPKOJz6q7gGRt2+UDVh6B\n"
    "9EItfBHXUzkEMVhNxa3st4BpHKxIwl6YCpxo7B0tK2pKd4pmzwcb/99JBd0tW9yw\n"
    "dMiNUsyuh/FjnxsqesGwNsdWvxgCsvyLAT8KfAEu\n"
    "-----END OpenVPN tls-crypt-v2 client key-----\n";

#define CLI_KEY_FILE_TIME 1796151931

struct parsed {
    uint8_t kc[TLS_CRYPT_V2_CLIENT_KEY_LEN];
    uint8_t wkc[TLS_CRYPT_V2_MAX_WKC_LEN];
    size_t wkc_len;
};

static void parse_client(const char *text, struct parsed *p)
{
    assert_int_equal(tls_crypt_v2_client_key_parse(text, strlen(text), p->kc, p->wkc,
                                                   sizeof(p->wkc), &p->wkc_len),
                     0);
}

static void unwraps_openvpn_client_key(void **state)
{
    struct tls_crypt_v2_server_key sk;
    struct parsed p;
    uint8_t kc[TLS_CRYPT_V2_CLIENT_KEY_LEN], md[TLS_CRYPT_V2_MAX_METADATA_LEN];
    size_t md_len;
    int64_t ts;

    (void)state;
    assert_int_equal(tls_crypt_v2_server_key_parse(srv_key_text, strlen(srv_key_text), &sk), 0);
    parse_client(cli_key_text, &p);
    assert_int_equal(p.wkc_len, 299); /* 32 + 256 + 9 + 2 */
    assert_int_equal(tls_crypt_v2_unwrap(&sk, p.wkc, p.wkc_len, kc, md, sizeof(md), &md_len), 0);
    assert_memory_equal(kc, p.kc, sizeof(kc));
    assert_int_equal(md_len, 9);
    assert_int_equal(tls_crypt_v2_metadata_timestamp(md, md_len, &ts), 0);
    assert_true(ts >= CLI_KEY_FILE_TIME - 60 && ts <= CLI_KEY_FILE_TIME);
}

static void user_metadata(void **state)
{
    struct tls_crypt_v2_server_key sk;
    struct parsed p;
    uint8_t kc[TLS_CRYPT_V2_CLIENT_KEY_LEN], md[TLS_CRYPT_V2_MAX_METADATA_LEN];
    size_t md_len;
    int64_t ts;

    (void)state;
    assert_int_equal(tls_crypt_v2_server_key_parse(srv_key_text, strlen(srv_key_text), &sk), 0);
    parse_client(cli_meta_key_text, &p);
    assert_int_equal(tls_crypt_v2_unwrap(&sk, p.wkc, p.wkc_len, kc, md, sizeof(md), &md_len), 0);
    assert_memory_equal(kc, p.kc, sizeof(kc));
    assert_int_equal(md_len, 12);
    assert_int_equal(md[0], TLS_CRYPT_V2_METADATA_TYPE_USER);
    assert_memory_equal(md + 1, "hello world", 11);
    assert_int_equal(tls_crypt_v2_metadata_timestamp(md, md_len, &ts), -PE_MALFORMED);
}

/* The WKc is a deterministic function of Ks, Kc and the metadata: wrapping what the openvpn key
 * holds again must give openvpn's bytes exactly. */
static void rewrap_equals_openvpn(void **state)
{
    struct tls_crypt_v2_server_key sk;
    struct parsed p;
    uint8_t kc[TLS_CRYPT_V2_CLIENT_KEY_LEN], md[TLS_CRYPT_V2_MAX_METADATA_LEN];
    uint8_t wkc[TLS_CRYPT_V2_MAX_WKC_LEN];
    size_t md_len, wkc_len;
    const char *keys[] = {cli_key_text, cli_meta_key_text};

    (void)state;
    assert_int_equal(tls_crypt_v2_server_key_parse(srv_key_text, strlen(srv_key_text), &sk), 0);
    for (size_t i = 0; i < 2; i++) {
        parse_client(keys[i], &p);
        assert_int_equal(tls_crypt_v2_unwrap(&sk, p.wkc, p.wkc_len, kc, md, sizeof(md), &md_len),
                         0);
        assert_int_equal(tls_crypt_v2_wrap(&sk, kc, md, md_len, wkc, sizeof(wkc), &wkc_len), 0);
        assert_int_equal(wkc_len, p.wkc_len);
        assert_memory_equal(wkc, p.wkc, wkc_len);
    }
}

static void other_server_key_refused(void **state)
{
    struct tls_crypt_v2_server_key sk2;
    struct parsed p;
    uint8_t kc[TLS_CRYPT_V2_CLIENT_KEY_LEN], md[TLS_CRYPT_V2_MAX_METADATA_LEN];
    size_t md_len = 1;

    (void)state;
    memset(kc, 0xAA, sizeof(kc));
    assert_int_equal(tls_crypt_v2_server_key_parse(srv2_key_text, strlen(srv2_key_text), &sk2), 0);
    parse_client(cli_key_text, &p);
    assert_int_equal(tls_crypt_v2_unwrap(&sk2, p.wkc, p.wkc_len, kc, md, sizeof(md), &md_len),
                     -PE_AUTH);
    assert_int_equal(md_len, 0);
    for (size_t i = 0; i < sizeof(kc); i++) {
        assert_int_equal(kc[i], 0xAA); /* nothing written */
    }
}

/* Every single-bit change anywhere in the WKc is refused. */
static void tampered_wkc_refused(void **state)
{
    struct tls_crypt_v2_server_key sk;
    struct parsed p;
    uint8_t kc[TLS_CRYPT_V2_CLIENT_KEY_LEN], md[TLS_CRYPT_V2_MAX_METADATA_LEN];
    size_t md_len;

    (void)state;
    assert_int_equal(tls_crypt_v2_server_key_parse(srv_key_text, strlen(srv_key_text), &sk), 0);
    parse_client(cli_key_text, &p);
    for (size_t i = 0; i < p.wkc_len; i++) {
        for (int bit = 0; bit < 8; bit++) {
            p.wkc[i] ^= (uint8_t)(1u << bit);
            assert_int_not_equal(
                tls_crypt_v2_unwrap(&sk, p.wkc, p.wkc_len, kc, md, sizeof(md), &md_len), 0);
            p.wkc[i] ^= (uint8_t)(1u << bit);
        }
    }
    /* truncated: the trailing length no longer matches, or too short */
    assert_int_equal(tls_crypt_v2_unwrap(&sk, p.wkc, p.wkc_len - 1, kc, md, sizeof(md), &md_len),
                     -PE_MALFORMED);
    assert_int_equal(tls_crypt_v2_unwrap(&sk, p.wkc, 10, kc, md, sizeof(md), &md_len), -PE_SHORT);
    assert_int_equal(tls_crypt_v2_unwrap(&sk, p.wkc, p.wkc_len, kc, md, sizeof(md), &md_len), 0);
}

static void locate_wkc(void **state)
{
    uint8_t pkt[400] = {0x50};
    size_t off;

    (void)state;
    pkt[398] = 0x01;
    pkt[399] = 0x2b; /* 299 */
    assert_int_equal(tls_crypt_v2_locate_wkc(pkt, sizeof(pkt), &off), 0);
    assert_int_equal(off, 101);
    assert_int_equal(tls_crypt_v2_locate_wkc(pkt, 299, &off), -PE_MALFORMED); /* nothing left */
    pkt[398] = 0x04;
    pkt[399] = 0x01; /* 1025 */
    assert_int_equal(tls_crypt_v2_locate_wkc(pkt, sizeof(pkt), &off), -PE_MALFORMED);
    pkt[398] = 0x00;
    pkt[399] = 0x10; /* shorter than any WKc */
    assert_int_equal(tls_crypt_v2_locate_wkc(pkt, sizeof(pkt), &off), -PE_MALFORMED);
    assert_int_equal(tls_crypt_v2_locate_wkc(pkt, 2, &off), -PE_SHORT);
}

static void pem_round_trip(void **state)
{
    char text[2048];
    uint8_t raw[TLS_CRYPT_V2_SERVER_KEY_LEN], back[TLS_CRYPT_V2_SERVER_KEY_LEN + 4];
    size_t len, back_len;

    (void)state;
    assert_int_equal(tls_crypt_v2_pem_decode(TLS_CRYPT_V2_SERVER_PEM, srv_key_text,
                                             strlen(srv_key_text), raw, sizeof(raw), &len),
                     0);
    assert_int_equal(len, TLS_CRYPT_V2_SERVER_KEY_LEN);
    assert_int_equal(
        tls_crypt_v2_pem_encode(TLS_CRYPT_V2_SERVER_PEM, raw, len, text, sizeof(text), &len), 0);
    assert_string_equal(text, srv_key_text); /* byte for byte what openvpn writes */
    assert_int_equal(
        tls_crypt_v2_pem_decode(TLS_CRYPT_V2_SERVER_PEM, text, len, back, sizeof(back), &back_len),
        0);
    assert_memory_equal(back, raw, sizeof(raw));
    /* a client key is not a server key, and the reverse */
    struct tls_crypt_v2_server_key sk;
    struct parsed p;

    assert_int_equal(tls_crypt_v2_server_key_parse(cli_key_text, strlen(cli_key_text), &sk),
                     -PE_MALFORMED);
    assert_int_not_equal(tls_crypt_v2_client_key_parse(srv_key_text, strlen(srv_key_text), p.kc,
                                                       p.wkc, sizeof(p.wkc), &p.wkc_len),
                         0);
}

static void early_neg(void **state)
{
    uint8_t tlv[TLS_CRYPT_V2_EARLY_NEG_TLV_LEN];
    static const uint8_t want[] = {0, 1, 0, 2, 0, 1};

    (void)state;
    assert_true(tls_crypt_v2_is_early_neg(0x0f000001u));
    assert_true(tls_crypt_v2_is_early_neg(0xff000001u));
    assert_false(tls_crypt_v2_is_early_neg(1));
    assert_false(tls_crypt_v2_is_early_neg(0x0e000001u));
    tls_crypt_v2_early_neg_tlv(tlv);
    assert_memory_equal(tlv, want, sizeof(want));
}

static void static_key_format_round_trip(void **state)
{
    uint8_t key2[STATIC_KEY_LEN], back[STATIC_KEY_LEN];
    char text[STATIC_KEY_FORMAT_LEN + 1];
    size_t len;

    (void)state;
    for (size_t i = 0; i < sizeof(key2); i++) {
        key2[i] = (uint8_t)(i * 7 + 3);
    }
    assert_int_equal(static_key_format(key2, text, sizeof(text), &len), 0);
    assert_int_equal(len, STATIC_KEY_FORMAT_LEN);
    assert_int_equal(strncmp(text,
                             "#\n# 2048 bit OpenVPN static key\n#\n-----BEGIN OpenVPN "
                             "Static key V1-----\n030a11",
                             72 + 6),
                     0);
    assert_int_equal(static_key_parse(text, len, back), 0);
    assert_memory_equal(back, key2, sizeof(key2));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unwraps_openvpn_client_key),
        cmocka_unit_test(user_metadata),
        cmocka_unit_test(rewrap_equals_openvpn),
        cmocka_unit_test(other_server_key_refused),
        cmocka_unit_test(tampered_wkc_refused),
        cmocka_unit_test(locate_wkc),
        cmocka_unit_test(pem_round_trip),
        cmocka_unit_test(early_neg),
        cmocka_unit_test(static_key_format_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
