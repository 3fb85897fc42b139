/* tests/unit/test_pk_libcrypto.c: sign and verify in libcrypto behind Mbed TLS pk contexts
 * (proto/pk_libcrypto.c), alone and in whole TLS handshakes run in memory between a
 * tls_server_conf and a tls_client_conf (proto/tls_session.c).
 *
 * Certificates in tests/unit/data/pk/ (made with openssl, valid for 100 years, SHA-256):
 *   ca-ec.crt, ca-rsa.crt   CAs with a P-256 and an RSA 2048 key; cas.crt holds both
 *   server-ec, server-rsa   server certificates and keys from each CA
 *   client-ec, client-rsa   client certificates and keys from each CA
 *   client-p384             a P-384 client key, from ca-ec
 *   client-rsa1024          an RSA 1024 client key, from ca-rsa
 *   client-foreign          a P-256 client from a CA nobody trusts
 *   wrong-ec.key, wrong-rsa.key   keys that match no certificate
 * What must fail fails as it did with Mbed TLS's own arithmetic: the same Mbed TLS error codes
 * (checked against unwrapped contexts where the code is the point), the same refusals.
 */
#include <mbedtls/ecp.h>
#include <mbedtls/error.h>
#include <mbedtls/rsa.h>
#include <mbedtls/sha256.h>

#include "proto/pk_libcrypto.h"

#include "tls_pair.h"

static void parse_key(mbedtls_pk_context *pk, const char *name)
{
    size_t len;
    uint8_t *b = tls_pair_slurp(name, &len);

    mbedtls_pk_init(pk);
    assert_int_equal(mbedtls_pk_parse_key(pk, b, len, NULL, 0), 0);
    free(b);
}

static void parse_crt(mbedtls_x509_crt *crt, const char *name)
{
    size_t len;
    uint8_t *b = tls_pair_slurp(name, &len);

    mbedtls_x509_crt_init(crt);
    assert_int_equal(mbedtls_x509_crt_parse(crt, b, len), 0);
    free(b);
}

/* A wrapped key reports what the unwrapped one reports to everything that is not arithmetic:
 * type, name, bit length, what it can do, its curve. */
static void same_face(mbedtls_pk_context *plain, mbedtls_pk_context *wrapped)
{
    static const mbedtls_pk_type_t types[] = {MBEDTLS_PK_RSA,      MBEDTLS_PK_ECKEY,
                                              MBEDTLS_PK_ECKEY_DH, MBEDTLS_PK_ECDSA,
                                              MBEDTLS_PK_RSA_ALT,  MBEDTLS_PK_RSASSA_PSS};

    assert_true(pk_libcrypto_is_wrapped(wrapped));
    assert_false(pk_libcrypto_is_wrapped(plain));
    assert_int_equal(mbedtls_pk_get_type(wrapped), mbedtls_pk_get_type(plain));
    assert_string_equal(mbedtls_pk_get_name(wrapped), mbedtls_pk_get_name(plain));
    assert_int_equal(mbedtls_pk_get_bitlen(wrapped), mbedtls_pk_get_bitlen(plain));
    assert_int_equal(mbedtls_pk_get_len(wrapped), mbedtls_pk_get_len(plain));
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        assert_int_equal(mbedtls_pk_can_do(wrapped, types[i]), mbedtls_pk_can_do(plain, types[i]));
    }
    if (mbedtls_pk_get_type(plain) == MBEDTLS_PK_ECKEY) {
        assert_int_equal(mbedtls_pk_ec(*wrapped)->grp.id, mbedtls_pk_ec(*plain)->grp.id);
        assert_int_equal(
            mbedtls_ecp_point_cmp(&mbedtls_pk_ec(*wrapped)->Q, &mbedtls_pk_ec(*plain)->Q), 0);
    } else {
        assert_int_equal(
            mbedtls_mpi_cmp_mpi(&mbedtls_pk_rsa(*wrapped)->N, &mbedtls_pk_rsa(*plain)->N), 0);
    }
}

/* Signatures made by libcrypto verify with Mbed TLS's code and the other way round; a bad one
 * (one bit flipped, one byte cut, one byte appended, the wrong key) fails on the wrapped key
 * with the very code the plain one gives. */
static void sign_verify(const char *key_name, const char *wrong_name)
{
    mbedtls_pk_context plain, wrapped, plain_pub, wrapped_pub, wrong;
    unsigned char hash[32], sig[MBEDTLS_PK_SIGNATURE_MAX_SIZE + 1], sig2[sizeof(sig)];
    size_t sig_len = 0, sig2_len = 0;

    parse_key(&plain, key_name);
    parse_key(&wrapped, key_name);
    parse_key(&wrong, wrong_name);
    assert_int_equal(pk_libcrypto_wrap(&wrapped, true, NULL, 0), 0);
    same_face(&plain, &wrapped);
    /* public halves, as a certificate's key */
    parse_key(&plain_pub, key_name);
    parse_key(&wrapped_pub, key_name);
    assert_int_equal(pk_libcrypto_wrap(&wrapped_pub, false, NULL, 0), 0);
    assert_true(pk_libcrypto_is_wrapped(&wrapped_pub));
    assert_int_equal(pk_libcrypto_wrap(&wrong, false, NULL, 0), 0);

    assert_int_equal(mbedtls_sha256_ret((const unsigned char *)"handshake", 9, hash, 0), 0);
    assert_int_equal(mbedtls_pk_sign(&wrapped, MBEDTLS_MD_SHA256, hash, 32, sig, &sig_len,
                                     mbedtls_ctr_drbg_random, &drbg),
                     0);
    assert_int_equal(mbedtls_pk_verify(&plain_pub, MBEDTLS_MD_SHA256, hash, 32, sig, sig_len), 0);
    assert_int_equal(mbedtls_pk_verify(&wrapped_pub, MBEDTLS_MD_SHA256, hash, 32, sig, sig_len), 0);
    assert_int_equal(mbedtls_pk_sign(&plain, MBEDTLS_MD_SHA256, hash, 32, sig2, &sig2_len,
                                     mbedtls_ctr_drbg_random, &drbg),
                     0);
    assert_int_equal(mbedtls_pk_verify(&wrapped_pub, MBEDTLS_MD_SHA256, hash, 32, sig2, sig2_len),
                     0);

    /* the wrong key */
    assert_int_not_equal(mbedtls_pk_verify(&wrong, MBEDTLS_MD_SHA256, hash, 32, sig, sig_len), 0);
    /* a flipped bit in the middle and at the end */
    for (int i = 0; i < 2; i++) {
        size_t at = i == 0 ? sig_len / 2 : sig_len - 1;
        int want, got;

        sig[at] ^= 0x01;
        want = mbedtls_pk_verify(&plain_pub, MBEDTLS_MD_SHA256, hash, 32, sig, sig_len);
        got = mbedtls_pk_verify(&wrapped_pub, MBEDTLS_MD_SHA256, hash, 32, sig, sig_len);
        assert_int_not_equal(want, 0);
        assert_int_equal(got, want);
        sig[at] ^= 0x01;
    }
    /* cut short, and one byte too many */
    assert_int_equal(mbedtls_pk_verify(&wrapped_pub, MBEDTLS_MD_SHA256, hash, 32, sig, sig_len - 1),
                     mbedtls_pk_verify(&plain_pub, MBEDTLS_MD_SHA256, hash, 32, sig, sig_len - 1));
    sig[sig_len] = 0;
    {
        int want = mbedtls_pk_verify(&plain_pub, MBEDTLS_MD_SHA256, hash, 32, sig, sig_len + 1);

        assert_int_not_equal(want, 0);
        assert_int_equal(
            mbedtls_pk_verify(&wrapped_pub, MBEDTLS_MD_SHA256, hash, 32, sig, sig_len + 1), want);
    }
    /* a different hash */
    hash[0] ^= 0x80;
    assert_int_equal(mbedtls_pk_verify(&wrapped_pub, MBEDTLS_MD_SHA256, hash, 32, sig, sig_len),
                     mbedtls_pk_verify(&plain_pub, MBEDTLS_MD_SHA256, hash, 32, sig, sig_len));
    assert_int_not_equal(mbedtls_pk_verify(&plain_pub, MBEDTLS_MD_SHA256, hash, 32, sig, sig_len),
                         0);

    mbedtls_pk_free(&plain);
    mbedtls_pk_free(&wrapped);
    mbedtls_pk_free(&plain_pub);
    mbedtls_pk_free(&wrapped_pub);
    mbedtls_pk_free(&wrong);
}

static void ec_sign_verify(void **state)
{
    (void)state;
    sign_verify("client-ec.key", "wrong-ec.key");
    sign_verify("client-p384.key", "wrong-ec.key");
}

static void rsa_sign_verify(void **state)
{
    (void)state;
    sign_verify("client-rsa.key", "wrong-rsa.key");
    sign_verify("client-rsa1024.key", "wrong-rsa.key");
}

/* A CA chain with wrapped keys judges certificates as the plain one does: good ones verify, a
 * signature with one bit changed does not, the profile still refuses RSA 1024. */
static void chain_verdicts(void **state)
{
    mbedtls_x509_crt plain_ca, wrapped_ca, leaf;
    static const char *const leaves[] = {"client-ec.crt", "client-rsa.crt", "client-p384.crt",
                                         "client-rsa1024.crt", "client-foreign.crt"};

    (void)state;
    parse_crt(&plain_ca, "cas.crt");
    parse_crt(&wrapped_ca, "cas.crt");
    assert_int_equal(pk_libcrypto_wrap_chain(&wrapped_ca), 2);
    same_face(&plain_ca.pk, &wrapped_ca.pk);
    same_face(&plain_ca.next->pk, &wrapped_ca.next->pk);
    for (size_t i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++) {
        for (int tamper = 0; tamper < 2; tamper++) {
            uint32_t want = 0, got = 0;
            int want_ret, got_ret;

            parse_crt(&leaf, leaves[i]);
            if (tamper) {
                /* the last byte of the DER is the last byte of the signature */
                leaf.sig.p[leaf.sig.len - 1] ^= 0x01;
            }
            want_ret = mbedtls_x509_crt_verify_with_profile(
                &leaf, &plain_ca, NULL, &mbedtls_x509_crt_profile_default, NULL, &want, NULL, NULL);
            got_ret = mbedtls_x509_crt_verify_with_profile(&leaf, &wrapped_ca, NULL,
                                                           &mbedtls_x509_crt_profile_default, NULL,
                                                           &got, NULL, NULL);
            assert_int_equal(got_ret, want_ret);
            assert_int_equal(got, want);
            if (tamper || strstr(leaves[i], "foreign")) {
                assert_true(got & MBEDTLS_X509_BADCERT_NOT_TRUSTED);
            } else if (strstr(leaves[i], "1024")) {
                assert_int_equal(got, MBEDTLS_X509_BADCERT_BAD_KEY);
            } else {
                assert_int_equal(got_ret, 0);
            }
            mbedtls_x509_crt_free(&leaf);
        }
    }
    mbedtls_x509_crt_free(&plain_ca);
    mbedtls_x509_crt_free(&wrapped_ca);
}

/* --- whole handshakes in memory ---------------------------------------------------------- */

/* A good client connects; every key on the way went through libcrypto. */
static void handshake_ok(const char *server, const char *client)
{
    struct tls_pair e;

    memset(&e, 0, sizeof(e));
    tls_pair_conf_named(&e.srv, true, server);
    tls_pair_conf_named(&e.cli, false, client);
    assert_true(pk_libcrypto_is_wrapped(&e.srv.key));
    assert_true(pk_libcrypto_is_wrapped(&e.srv.ca.pk));
    assert_true(pk_libcrypto_is_wrapped(&e.srv.ca.next->pk));
    assert_true(pk_libcrypto_is_wrapped(&e.cli.key));
    tls_pair_run(&e);
    tls_pair_assert_connected(&e);
    /* each side checked the other's handshake signature with a libcrypto key */
    assert_true(pk_libcrypto_is_wrapped(&mbedtls_ssl_get_peer_cert(&e.s.ssl)->pk));
    assert_true(pk_libcrypto_is_wrapped(&mbedtls_ssl_get_peer_cert(&e.c.ssl)->pk));
    tls_pair_clear(&e);
}

static void good_clients_connect(void **state)
{
    (void)state;
    handshake_ok("server-ec", "client-ec");
    handshake_ok("server-rsa", "client-rsa");
    handshake_ok("server-ec", "client-rsa");
    handshake_ok("server-rsa", "client-p384");
}

/* The server refuses client (certificate crt, key key) and says want in its error. */
static void refused(const char *crt, const char *key, const char *groups,
                    const mbedtls_x509_crt_profile *profile, const char *want)
{
    struct tls_pair e;

    memset(&e, 0, sizeof(e));
    tls_pair_conf(&e.srv, true, "server-ec.crt", "server-ec.key");
    if (groups) {
        char bad[32];

        assert_int_equal(tls_server_conf_set_groups(&e.srv, groups, bad, sizeof(bad)), 0);
    }
    if (profile) {
        tls_server_conf_set_cert_profile(&e.srv, profile);
    }
    tls_pair_conf(&e.cli, false, crt, key);
    tls_pair_run(&e);
    assert_int_equal(e.sret, -PE_TLS);
    if (!strstr(e.serr, want)) {
        print_error("server said: %s\nwanted: %s\n", e.serr, want);
        fail();
    }
    tls_pair_clear(&e);
}

static void bad_clients_refused(void **state)
{
    char want[64];

    (void)state;
    /* CertificateVerify signed with a key that is not the certificate's: Mbed TLS's own codes,
     * MBEDTLS_ERR_ECP_VERIFY_FAILED and MBEDTLS_ERR_RSA_VERIFY_FAILED */
    snprintf(want, sizeof(want), "(-0x%04x)", (unsigned)-MBEDTLS_ERR_ECP_VERIFY_FAILED);
    refused("client-ec.crt", "wrong-ec.key", NULL, NULL, want);
    snprintf(want, sizeof(want), "(-0x%04x)", (unsigned)-MBEDTLS_ERR_RSA_VERIFY_FAILED);
    refused("client-rsa.crt", "wrong-rsa.key", NULL, NULL, want);
    /* a chain nobody trusts */
    refused("client-foreign.crt", "client-foreign.key", NULL, NULL,
            "client certificate verification failed: The certificate is not correctly signed "
            "by the trusted CA");
    /* RSA 1024 under the default profile, and accepted under "legacy" */
    refused("client-rsa1024.crt", "client-rsa1024.key", NULL, NULL,
            "client certificate verification failed: The certificate is signed with an "
            "unacceptable key");
    {
        struct tls_pair e;

        memset(&e, 0, sizeof(e));
        tls_pair_conf(&e.srv, true, "server-ec.crt", "server-ec.key");
        tls_server_conf_set_cert_profile(&e.srv, tls_cert_profile_by_name("legacy"));
        tls_pair_conf(&e.cli, false, "client-rsa1024.crt", "client-rsa1024.key");
        tls_pair_run(&e);
        assert_int_equal(e.sret, 0);
        assert_true(pk_libcrypto_is_wrapped(&mbedtls_ssl_get_peer_cert(&e.s.ssl)->pk));
        tls_pair_clear(&e);
    }
    /* a P-384 certificate where tls-groups allows P-256 only (Mbed TLS reads the curve of the
     * wrapped key after the swap) */
    refused("client-p384.crt", "client-p384.key", "secp256r1", NULL, "(-0x");
    /* and under suiteb, an RSA client */
    refused("client-rsa.crt", "client-rsa.key", NULL, tls_cert_profile_by_name("suiteb"),
            "client certificate verification failed");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ec_sign_verify),      cmocka_unit_test(rsa_sign_verify),
        cmocka_unit_test(chain_verdicts),      cmocka_unit_test(good_clients_connect),
        cmocka_unit_test(bad_clients_refused),
    };

    return cmocka_run_group_tests(tests, tls_pair_setup, tls_pair_teardown);
}
