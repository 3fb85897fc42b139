/* tests/unit/test_kdf.c: data-channel key derivation.
 *
 * References used here, none of them computed by the code under test:
 *  - published PRF vectors: the TLS 1.0 PRF vector from the IETF TLS mailing list (secret 48 x
 *    0xab, label "PRF Testvector", seed 64 x 0xcd) and the TLS 1.2 P_SHA256 / P_SHA384 vectors
 *    (IETF TLS WG, msg03416), as also used by BearSSL's test suite;
 *  - the PRF vector of openvpn's own unit tests (tests/unit_tests/openvpn/test_crypto.c);
 *  - OpenSSL 3's EVP_KDF "TLS1-PRF" (MD5-SHA1 for TLS 1.0, SHA256/SHA384 for TLS 1.2), an
 *    implementation independent of the mbedTLS one under test;
 *  - two sessions of the real openvpn 2.6.14 client (PRF key derivation, stock server, loopback
 *    in a private namespace): its --verb 7 log gave pre_master, the randoms and the resulting
 *    cipher keys, its --verb 9 log the implicit IV, the capture gave both session ids.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_hex.h"
#include <mbedtls/ssl.h>
#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include "proto/errors.h"
#include "proto/kdf.h"

/* OpenSSL's TLS1-PRF: out = PRF_digest(secret, label || seed). */
static void ossl_prf(const char *digest, const uint8_t *secret, size_t secret_len,
                     const char *label, const uint8_t *seed, size_t seed_len, uint8_t *out,
                     size_t out_len)
{
    char md[32];
    uint8_t sec[256], full_seed[512];
    size_t label_len = strlen(label);
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "TLS1-PRF", NULL);
    EVP_KDF_CTX *kctx;
    OSSL_PARAM params[4];

    assert_non_null(kdf);
    assert_true(strlen(digest) < sizeof(md) && secret_len <= sizeof(sec));
    assert_true(label_len + seed_len <= sizeof(full_seed));
    strcpy(md, digest);
    memcpy(sec, secret, secret_len);
    memcpy(full_seed, label, label_len);
    memcpy(full_seed + label_len, seed, seed_len);
    kctx = EVP_KDF_CTX_new(kdf);
    assert_non_null(kctx);
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, md, 0);
    params[1] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SECRET, sec, secret_len);
    params[2] =
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SEED, full_seed, label_len + seed_len);
    params[3] = OSSL_PARAM_construct_end();
    assert_int_equal(EVP_KDF_derive(kctx, out, out_len, params), 1);
    EVP_KDF_CTX_free(kctx);
    EVP_KDF_free(kdf);
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)(seed >> 16);
    }
}

static void tls1_prf_published_vector(void **state)
{
    static const char expect_hex[] =
        "d3d4d1e349b5d515044666d51de32bab258cb521b6b053463e354832fd976754"
        "443bcf9a296519bc289abcbc1187e4ebd31e602353776c408aafb74cbc85eff6"
        "9255f9788faa184cbb957a9819d84a5d7eb006eb459d3ae8de9810454b8b2d8f"
        "1afbc655a8c9a013";
    uint8_t secret[48], seed[64], expect[104], out[104], ref[104];

    (void)state;
    memset(secret, 0xab, sizeof(secret));
    memset(seed, 0xcd, sizeof(seed));
    assert_int_equal(unhex(expect_hex, expect, sizeof(expect)), sizeof(expect));
    assert_int_equal(kdf_tls1_prf(secret, sizeof(secret), "PRF Testvector", seed, sizeof(seed), out,
                                  sizeof(out)),
                     0);
    assert_memory_equal(out, expect, sizeof(expect));
    /* and the reference agrees with the published vector, so it can be trusted below */
    ossl_prf("MD5-SHA1", secret, sizeof(secret), "PRF Testvector", seed, sizeof(seed), ref,
             sizeof(ref));
    assert_memory_equal(ref, expect, sizeof(expect));
}

static void tls1_prf_openvpn_unit_test_vector(void **state)
{
    static const char secret[] = "Lorem ipsum dolor sit amet, consectetur "
                                 "adipisici elit, sed eiusmod tempor incidunt "
                                 "ut labore et dolore magna aliqua.";
    static const char seed[] = "Quis aute iure reprehenderit in voluptate "
                               "velit esse cillum dolore";
    static const uint8_t expect[32] = {0xd9, 0x8c, 0x85, 0x18, 0xc8, 0x5e, 0x94, 0x69,
                                       0x27, 0x91, 0x6a, 0xcf, 0xc2, 0xd5, 0x92, 0xfb,
                                       0xb1, 0x56, 0x7e, 0x4b, 0x4b, 0x14, 0x59, 0xe6,
                                       0xa9, 0x04, 0xac, 0x2d, 0xda, 0xb7, 0x2d, 0x67};
    uint8_t out[32];

    (void)state;
    /* odd secret length: the two halves overlap by one byte */
    assert_int_equal(strlen(secret) % 2, 1);
    assert_int_equal(kdf_tls1_prf((const uint8_t *)secret, strlen(secret), "",
                                  (const uint8_t *)seed, strlen(seed), out, sizeof(out)),
                     0);
    assert_memory_equal(out, expect, sizeof(expect));
}

static void tls1_prf_matches_openssl(void **state)
{
    static const size_t secret_lens[] = {1, 16, 47, 48, 49, 64, 101};
    static const size_t out_lens[] = {1, 16, 20, 48, 97, 256};
    uint8_t secret[128], seed[80], out[256], ref[256];

    (void)state;
    for (size_t i = 0; i < sizeof(secret_lens) / sizeof(secret_lens[0]); i++) {
        for (size_t j = 0; j < sizeof(out_lens) / sizeof(out_lens[0]); j++) {
            fill(secret, secret_lens[i], (uint32_t)(i * 31 + j));
            fill(seed, sizeof(seed), (uint32_t)(i * 7 + j + 1000));
            assert_int_equal(kdf_tls1_prf(secret, secret_lens[i], "some label", seed, sizeof(seed),
                                          out, out_lens[j]),
                             0);
            ossl_prf("MD5-SHA1", secret, secret_lens[i], "some label", seed, sizeof(seed), ref,
                     out_lens[j]);
            assert_memory_equal(out, ref, out_lens[j]);
        }
    }
}

/* The two PRF steps of key-method 2, computed with OpenSSL. */
static void ossl_openvpn_prf(const uint8_t pre_master[48], const uint8_t cr1[32],
                             const uint8_t sr1[32], const uint8_t cr2[32], const uint8_t sr2[32],
                             const uint8_t csid[8], const uint8_t ssid[8], uint8_t block[256])
{
    uint8_t seed[80], master[48];

    memcpy(seed, cr1, 32);
    memcpy(seed + 32, sr1, 32);
    ossl_prf("MD5-SHA1", pre_master, 48, "OpenVPN master secret", seed, 64, master, 48);
    memcpy(seed, cr2, 32);
    memcpy(seed + 32, sr2, 32);
    memcpy(seed + 64, csid, 8);
    memcpy(seed + 72, ssid, 8);
    ossl_prf("MD5-SHA1", master, 48, "OpenVPN key expansion", seed, 80, block, 256);
}

static void openvpn_prf_matches_openssl(void **state)
{
    uint8_t pm[48], cr1[32], sr1[32], cr2[32], sr2[32], csid[8], ssid[8];
    uint8_t block[KEY_BLOCK_LEN], ref[KEY_BLOCK_LEN];

    (void)state;
    for (uint32_t round = 0; round < 8; round++) {
        fill(pm, sizeof(pm), round + 1);
        fill(cr1, sizeof(cr1), round + 2);
        fill(sr1, sizeof(sr1), round + 3);
        fill(cr2, sizeof(cr2), round + 4);
        fill(sr2, sizeof(sr2), round + 5);
        fill(csid, sizeof(csid), round + 6);
        fill(ssid, sizeof(ssid), round + 7);
        assert_int_equal(kdf_openvpn_prf(pm, cr1, sr1, cr2, sr2, csid, ssid, block), 0);
        ossl_openvpn_prf(pm, cr1, sr1, cr2, sr2, csid, ssid, ref);
        assert_memory_equal(block, ref, KEY_BLOCK_LEN);
    }
    /* every input matters, including both session ids (the draft RFC omits them) */
    fill(ssid, sizeof(ssid), 99);
    assert_int_equal(kdf_openvpn_prf(pm, cr1, sr1, cr2, sr2, csid, ssid, ref), 0);
    assert_memory_not_equal(block, ref, KEY_BLOCK_LEN);
}

/* One key-method-2 exchange of the real openvpn 2.6.14 client (pull-filter made it use the
 * PRF): the client sends with key[0] and receives with key[1]. */
struct captured_prf {
    const char *pre_master, *client_random1, *client_random2, *server_random1, *server_random2,
        *client_sid, *server_sid;
    const char *key0_cipher; /* "Master Encrypt (cipher, ...)" */
    const char *key1_cipher; /* "Master Decrypt (cipher, ...)" */
    const char *key0_iv;     /* last 8 bytes of "ENCRYPT IV:" = key[0] HMAC slot */
};

static const struct captured_prf captured[] = {
    {
        /* data-ciphers AES-256-GCM */
        "69967a0e bf11e5b1 b2556d68 fa6bf23e 623cb808 509063d8 fcb1e5e8 e7c57999 "
        "ff5e78d2 24e0b95b cef967f9 d1fb0b79",
        "83c569c5 d92b8a23 0a51d832 a75e5922 f483b3c6 7871a38f 3025747b 7ebf1ed8",
        "10709132 7bb96dd7 ed351c55 a0a25343 8ed10a25 69cb6ed2 5c236bb4 f8d3d402",
        "7ced7a4b cfd28427 0dd37c54 6c8082e2 78718eff 4331ba58 5e635aee ecad2075",
        "a9af5da8 2b8349db 5cac51f5 ad88c447 2334699d 84e61d86 f20ff7e3 89a5175c",
        "0f98e901063a8f9a",
        "0ff86eef64860073",
        "ffbe63ec 1bd10b72 4e6f37de 1275d678 a2b5f06a a1d8a640 9ceb7ec8 89a17c3c",
        "7ba7b44a 9c031896 f57c4fc3 925a6d4e f46ebf85 eb1a34b1 0bfc79db e4d22841",
        "06fee23d 9ee617a1",
    },
    {
        /* data-ciphers AES-128-GCM */
        "051a0d02 3a30d421 89d8fc04 eaec0134 084eea81 896419d6 76c9664d 54c2da68 "
        "f7499cb2 eef92ebd ad0f8f4e a10c0b5a",
        "30b350b4 cef8509d 75f03419 99e0a012 daec19bc 202f3709 0747f380 672b3b0b",
        "b3b2c8fd a9523122 45c78127 cb1b26e3 3610ca32 f8146eb2 86d6eb65 b4cf572c",
        "13d974ec e4cabf63 bb1d3c72 c9af558a 7bb8230d 157f0612 92e19b27 212aac07",
        "488cbcd5 7b427223 a67e35a7 ebc6beac c2596d88 6c3d6fae d4f95f9a a0b80dcd",
        "5b24a09c7ba4d396",
        "1ffcc029895cb95f",
        "77ee3bbb e9a781ac 6dec2584 ecf0f036",
        "9314bde5 d889fdb6 2da0a307 d7ec29bd",
        "66034ef0 73f74152",
    },
};

static void openvpn_prf_matches_real_client(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(captured) / sizeof(captured[0]); i++) {
        const struct captured_prf *c = &captured[i];
        uint8_t pm[48], cr1[32], cr2[32], sr1[32], sr2[32], csid[8], ssid[8];
        uint8_t key0[32], key1[32], iv[8], block[KEY_BLOCK_LEN];
        size_t key_len;

        assert_int_equal(unhex(c->pre_master, pm, sizeof(pm)), 48);
        assert_int_equal(unhex(c->client_random1, cr1, sizeof(cr1)), 32);
        assert_int_equal(unhex(c->client_random2, cr2, sizeof(cr2)), 32);
        assert_int_equal(unhex(c->server_random1, sr1, sizeof(sr1)), 32);
        assert_int_equal(unhex(c->server_random2, sr2, sizeof(sr2)), 32);
        assert_int_equal(unhex(c->client_sid, csid, sizeof(csid)), 8);
        assert_int_equal(unhex(c->server_sid, ssid, sizeof(ssid)), 8);
        key_len = unhex(c->key0_cipher, key0, sizeof(key0));
        assert_int_equal(unhex(c->key1_cipher, key1, sizeof(key1)), key_len);
        assert_int_equal(unhex(c->key0_iv, iv, sizeof(iv)), 8);

        assert_int_equal(kdf_openvpn_prf(pm, cr1, sr1, cr2, sr2, csid, ssid, block), 0);
        assert_memory_equal(block, key0, key_len);
        assert_memory_equal(block + 64, iv, 8);
        assert_memory_equal(block + 128, key1, key_len);
    }
}

static void tls12_published_vectors_via_openssl(void **state)
{
    static const char sha256_hex[] =
        "e3f229ba727be17b8d122620557cd453c2aab21d07c3d495329b52d4e61edb5a"
        "6b301791e90d35c9c9a46b4e14baf9af0fa022f7077def17abfd3797c0564bab"
        "4fbc91666e9def9b97fce34f796789baa48082d122ee42c5a72e5a5110fff701"
        "87347b66";
    static const char sha384_hex[] =
        "7b0c18e9ced410ed1804f2cfa34a336a1c14dffb4900bb5fd7942107e81c83cd"
        "e9ca0faa60be9fe34f82b1233c9146a0e534cb400fed2700884f9dc236f80edd"
        "8bfa961144c9e8d792eca722a7b32fc3d416d473ebc2c5fd4abfdad05d918425"
        "9b5bf8cd4d90fa0d31e2dec479e4f1a26066f2eea9a69236a3e52655c9e9aee6"
        "91c8f3a26854308d5eaa3be85e0990703d73e56f";
    uint8_t secret[16], seed[16], expect[148], out[148];

    (void)state;
    /* Establishes the reference used for kdf_tls_ekm below (its secret is always 48 bytes, so
     * the 16-byte published vectors cannot be fed to it directly). */
    unhex("9bbe436ba940f017b17652849a71db35", secret, sizeof(secret));
    unhex("a0ba9f936cda311827a6f796ffd5198c", seed, sizeof(seed));
    assert_int_equal(unhex(sha256_hex, expect, sizeof(expect)), 100);
    ossl_prf("SHA256", secret, 16, "test label", seed, 16, out, 100);
    assert_memory_equal(out, expect, 100);
    assert_int_equal(mbedtls_ssl_tls_prf(MBEDTLS_SSL_TLS_PRF_SHA256, secret, 16, "test label", seed,
                                         16, out, 100),
                     0);
    assert_memory_equal(out, expect, 100);

    unhex("b80b733d6ceefcdc71566ea48e5567df", secret, sizeof(secret));
    unhex("cd665cf6a8447dd6ff8b27555edb7465", seed, sizeof(seed));
    assert_int_equal(unhex(sha384_hex, expect, sizeof(expect)), 148);
    ossl_prf("SHA384", secret, 16, "test label", seed, 16, out, 148);
    assert_memory_equal(out, expect, 148);
}

static void tls_ekm_matches_openssl(void **state)
{
    static const struct {
        int prf_type;
        const char *digest;
    } types[] = {
        {MBEDTLS_SSL_TLS_PRF_SHA256, "SHA256"},
        {MBEDTLS_SSL_TLS_PRF_SHA384, "SHA384"},
        {MBEDTLS_SSL_TLS_PRF_TLS1, "MD5-SHA1"},
    };
    static const char *const labels[] = {KDF_EKM_LABEL_DATAKEYS,
                                         "EXPORTER-OpenVPN-dynamic-tls-crypt",
                                         "EXPORTER-OpenVPN-p2p-peerid"};
    static const size_t lens[] = {256, 256, 3};
    uint8_t ms[48], cr[32], sr[32], randoms[64], out[256], ref[256];

    (void)state;
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
        for (size_t l = 0; l < sizeof(labels) / sizeof(labels[0]); l++) {
            fill(ms, sizeof(ms), (uint32_t)(t * 10 + l));
            fill(cr, sizeof(cr), (uint32_t)(t * 10 + l + 100));
            fill(sr, sizeof(sr), (uint32_t)(t * 10 + l + 200));
            memcpy(randoms, cr, 32);
            memcpy(randoms + 32, sr, 32);
            assert_int_equal(kdf_tls_ekm(types[t].prf_type, ms, cr, sr, labels[l], out, lens[l]),
                             0);
            ossl_prf(types[t].digest, ms, 48, labels[l], randoms, 64, ref, lens[l]);
            assert_memory_equal(out, ref, lens[l]);
        }
    }
    /* client random first: swapping the randoms changes the result */
    assert_int_equal(
        kdf_tls_ekm(MBEDTLS_SSL_TLS_PRF_SHA256, ms, sr, cr, KDF_EKM_LABEL_DATAKEYS, out, 256), 0);
    ossl_prf("SHA256", ms, 48, KDF_EKM_LABEL_DATAKEYS, randoms, 64, ref, 256);
    assert_memory_not_equal(out, ref, 256);
}

static void tls_ekm_rejects_bad_arguments(void **state)
{
    uint8_t ms[48] = {1}, cr[32] = {2}, sr[32] = {3}, out[16];

    (void)state;
    memset(out, 0x55, sizeof(out));
    assert_int_equal(
        kdf_tls_ekm(MBEDTLS_SSL_TLS_PRF_NONE, ms, cr, sr, KDF_EKM_LABEL_DATAKEYS, out, 16),
        -PE_UNSUPPORTED);
    assert_int_equal(
        kdf_tls_ekm(MBEDTLS_SSL_TLS_PRF_SSL3, ms, cr, sr, KDF_EKM_LABEL_DATAKEYS, out, 16),
        -PE_UNSUPPORTED);
    assert_int_equal(kdf_tls_ekm(77, ms, cr, sr, KDF_EKM_LABEL_DATAKEYS, out, 16), -PE_UNSUPPORTED);
    assert_int_equal(kdf_tls_ekm(-1, ms, cr, sr, KDF_EKM_LABEL_DATAKEYS, out, 16), -PE_UNSUPPORTED);
    for (size_t i = 0; i < sizeof(out); i++) {
        assert_int_equal(out[i], 0); /* never leaves stale bytes that look like keys */
    }
    assert_int_not_equal(kdf_tls_ekm(MBEDTLS_SSL_TLS_PRF_SHA256, ms, cr, sr, "", out, 16), 0);
    assert_int_not_equal(kdf_tls_ekm(MBEDTLS_SSL_TLS_PRF_SHA256, ms, cr, sr, NULL, out, 16), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tls1_prf_published_vector),
        cmocka_unit_test(tls1_prf_openvpn_unit_test_vector),
        cmocka_unit_test(tls1_prf_matches_openssl),
        cmocka_unit_test(openvpn_prf_matches_openssl),
        cmocka_unit_test(openvpn_prf_matches_real_client),
        cmocka_unit_test(tls12_published_vectors_via_openssl),
        cmocka_unit_test(tls_ekm_matches_openssl),
        cmocka_unit_test(tls_ekm_rejects_bad_arguments),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
