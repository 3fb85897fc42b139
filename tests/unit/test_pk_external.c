/* tests/unit/test_pk_external.c: management-external-key's requests and answers
 * (proto/pk_external.h): what is sent for each key type and flag (openvpn 2.6 xkey_helper.c
 * xkey_management_sign, doc/management-notes.txt), signed here as a management client would sign
 * it with the real key, and what is done with good and bad answers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <mbedtls/pk.h>
#include <mbedtls/rsa.h>
#include <mbedtls/sha256.h>
#include <mbedtls/x509_crt.h>

#include "proto/errors.h"
#include "proto/pk_external.h"

#define PK_DIR OVPND_SOURCE_DIR "/tests/unit/data/pk/"

/* Not random: RSA blinding and ECDSA take any bytes in a test. */
static int test_rng(void *ctx, unsigned char *out, size_t len)
{
    unsigned *n = ctx;

    for (size_t i = 0; i < len; i++) {
        out[i] = (unsigned char)(++*n * 131u);
    }
    return 0;
}

/* A request for the SHA-256 of "ServerKeyExchange" with the certificate crt's key, signed with
 * key as the management client would for the algorithm asked; want_alg and want_len: what the
 * request must be. */
static void sign_round(const char *crt, const char *key, unsigned flags, const char *want_alg,
                       size_t want_len)
{
    mbedtls_x509_crt cert;
    mbedtls_pk_context priv, ext;
    struct pk_ext_req r;
    uint8_t data[PK_EXT_DATA_MAX], sig[PK_EXT_SIG_MAX];
    size_t len = 0, sig_len = 0;
    char alg[64];
    unsigned rng = 0;

    mbedtls_x509_crt_init(&cert);
    mbedtls_pk_init(&priv);
    mbedtls_pk_init(&ext);
    assert_int_equal(mbedtls_x509_crt_parse_file(&cert, crt), 0);
    assert_int_equal(mbedtls_pk_parse_keyfile(&priv, key, NULL), 0);
    assert_int_equal(pk_external_setup(&ext, &cert.pk, flags), 0);
    assert_true(pk_external_is(&ext));
    assert_false(pk_external_is(&priv));
    assert_int_equal(mbedtls_pk_get_bitlen(&ext), mbedtls_pk_get_bitlen(&cert.pk));

    memset(&r, 0, sizeof(r));
    assert_int_equal(pk_external_request(&ext, &r, data, sizeof(data), &len, alg, sizeof(alg)),
                     -PE_STATE); /* nothing wanted yet */
    r.state = PK_EXT_WANTED;
    r.md = MBEDTLS_MD_SHA256;
    r.hash_len = 32;
    assert_int_equal(mbedtls_sha256_ret((const unsigned char *)"ServerKeyExchange", 17, r.hash, 0),
                     0);
    assert_int_equal(pk_external_request(&ext, &r, data, sizeof(data), &len, alg, sizeof(alg)), 0);
    assert_string_equal(alg, want_alg);
    assert_int_equal(len, want_len);
    assert_true(r.is_asked);
    assert_memory_equal(data + len - 32, r.hash, 32); /* the hash comes last in every form */

    if (strcmp(alg, "ECDSA") == 0) {
        assert_int_equal(
            mbedtls_pk_sign(&priv, MBEDTLS_MD_SHA256, data, len, sig, &sig_len, test_rng, &rng), 0);
    } else if (strcmp(alg, "RSA_PKCS1_PADDING") == 0) {
        /* PKCS#1 v1.5 padding of DigestInfo and hash, as RSA_private_encrypt does */
        sig_len = mbedtls_pk_get_len(&priv);
        assert_int_equal(mbedtls_rsa_pkcs1_sign(mbedtls_pk_rsa(priv), test_rng, &rng,
                                                MBEDTLS_RSA_PRIVATE, MBEDTLS_MD_NONE, (unsigned)len,
                                                data, sig),
                         0);
    } else {
        /* RSA_NO_PADDING: the block is signed as it is */
        sig_len = mbedtls_pk_get_len(&priv);
        assert_int_equal(data[0], 0x00);
        assert_int_equal(data[1], 0x01);
        assert_int_equal(mbedtls_rsa_private(mbedtls_pk_rsa(priv), test_rng, &rng, data, sig), 0);
    }

    /* a signature with one bit changed fails the request */
    struct pk_ext_req bad = r;

    sig[sig_len / 2] ^= 0x01;
    assert_int_equal(pk_external_answer(&ext, &bad, sig, sig_len), -PE_AUTH);
    assert_int_equal(bad.state, PK_EXT_FAILED);
    sig[sig_len / 2] ^= 0x01;
    assert_int_equal(pk_external_answer(&ext, &r, sig, sig_len - 1), -PE_AUTH); /* cut short */
    r.state = PK_EXT_WANTED;
    assert_int_equal(pk_external_answer(&ext, &r, sig, sig_len), 0);
    assert_int_equal(r.state, PK_EXT_READY);
    assert_int_equal(r.sig_len, sig_len);
    assert_int_equal(pk_external_answer(&ext, &r, sig, sig_len), -PE_STATE); /* one answer */
    pk_external_fail(&r);
    assert_int_equal(r.state, PK_EXT_FAILED);

    mbedtls_pk_free(&ext);
    mbedtls_pk_free(&priv);
    mbedtls_x509_crt_free(&cert);
}

static void ec_key(void **state)
{
    (void)state;
    sign_round(PK_DIR "server-ec.crt", PK_DIR "server-ec.key", 0, "ECDSA", 32);
}

/* without flags (2.6: pkcs1): DigestInfo (19 bytes for SHA-256) and hash */
static void rsa_pkcs1(void **state)
{
    (void)state;
    sign_round(PK_DIR "server-rsa.crt", PK_DIR "server-rsa.key", 0, "RSA_PKCS1_PADDING", 51);
    sign_round(PK_DIR "server-rsa.crt", PK_DIR "server-rsa.key", PK_EXT_PKCS1 | PK_EXT_NOPADDING,
               "RSA_PKCS1_PADDING", 51);
}

/* nopadding alone: the whole EMSA-PKCS1-v1_5 block, as long as the modulus */
static void rsa_nopadding(void **state)
{
    mbedtls_pk_context pk;

    (void)state;
    mbedtls_pk_init(&pk);
    assert_int_equal(mbedtls_pk_parse_keyfile(&pk, PK_DIR "server-rsa.key", NULL), 0);
    sign_round(PK_DIR "server-rsa.crt", PK_DIR "server-rsa.key", PK_EXT_NOPADDING, "RSA_NO_PADDING",
               mbedtls_pk_get_len(&pk));
    mbedtls_pk_free(&pk);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ec_key),
        cmocka_unit_test(rsa_pkcs1),
        cmocka_unit_test(rsa_nopadding),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
