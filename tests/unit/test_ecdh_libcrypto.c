/* tests/unit/test_ecdh_libcrypto.c: the X25519 key exchange in libcrypto behind Mbed TLS's ECDH
 * functions (proto/ecdh_libcrypto.c). Every result is compared with what Mbed TLS's own
 * arithmetic (mbedtls_ecp_mul, which is not replaced) gives for the same numbers, and with RFC
 * 7748's test vector; what Mbed TLS refuses is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <mbedtls/ecdh.h>
#include <mbedtls/ecp.h>

#include "proto/ecdh_libcrypto.h"

/* A deterministic RNG for the test (xorshift64): reproducible keys, no entropy needed. */
static int test_rng(void *p_rng, unsigned char *out, size_t len)
{
    uint64_t *s = p_rng;

    for (size_t i = 0; i < len; i++) {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        out[i] = (unsigned char)*s;
    }
    return 0;
}

static void hex_to(const char *hex, unsigned char *out, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned v;

        assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
        out[i] = (unsigned char)v;
    }
}

/* Mbed TLS's X25519 handshakes go through ecdh_libcrypto.c in this executable, as in ovpnd. */
static void test_is_live(void **state)
{
    (void)state;
    assert_true(ecdh_libcrypto_is_live());
}

/* Key generation and shared secrets agree with Mbed TLS's own ladder, for many keys. */
static void test_same_as_mbedtls(void **state)
{
    mbedtls_ecp_group grp;
    uint64_t seed = 0x9e3779b97f4a7c15u;

    (void)state;
    mbedtls_ecp_group_init(&grp);
    assert_int_equal(mbedtls_ecp_group_load(&grp, MBEDTLS_ECP_DP_CURVE25519), 0);
    for (int i = 0; i < 20; i++) {
        mbedtls_mpi da, db, za, zb;
        mbedtls_ecp_point qa, qb, ref;

        mbedtls_mpi_init(&da), mbedtls_mpi_init(&db), mbedtls_mpi_init(&za);
        mbedtls_mpi_init(&zb);
        mbedtls_ecp_point_init(&qa), mbedtls_ecp_point_init(&qb), mbedtls_ecp_point_init(&ref);
        assert_int_equal(mbedtls_ecdh_gen_public(&grp, &da, &qa, test_rng, &seed), 0);
        assert_int_equal(mbedtls_ecdh_gen_public(&grp, &db, &qb, test_rng, &seed), 0);
        assert_int_equal(mbedtls_ecp_check_privkey(&grp, &da), 0);
        assert_int_equal(mbedtls_ecp_check_pubkey(&grp, &qa), 0);
        /* the public point as Mbed TLS computes and leaves it: X, Z = 1, no Y */
        assert_int_equal(mbedtls_ecp_mul(&grp, &ref, &da, &grp.G, test_rng, &seed), 0);
        assert_int_equal(mbedtls_mpi_cmp_mpi(&ref.X, &qa.X), 0);
        assert_int_equal(mbedtls_mpi_cmp_int(&qa.Z, 1), 0);
        assert_int_equal(mbedtls_mpi_cmp_int(&qa.Y, 0), 0);
        /* both sides get the same secret, and it is Mbed TLS's */
        assert_int_equal(mbedtls_ecdh_compute_shared(&grp, &za, &qb, &da, test_rng, &seed), 0);
        assert_int_equal(mbedtls_ecdh_compute_shared(&grp, &zb, &qa, &db, test_rng, &seed), 0);
        assert_int_equal(mbedtls_mpi_cmp_mpi(&za, &zb), 0);
        assert_int_equal(mbedtls_ecp_mul(&grp, &ref, &da, &qb, test_rng, &seed), 0);
        assert_int_equal(mbedtls_mpi_cmp_mpi(&ref.X, &za), 0);
        mbedtls_mpi_free(&da), mbedtls_mpi_free(&db), mbedtls_mpi_free(&za);
        mbedtls_mpi_free(&zb);
        mbedtls_ecp_point_free(&qa), mbedtls_ecp_point_free(&qb), mbedtls_ecp_point_free(&ref);
    }
    mbedtls_ecp_group_free(&grp);
}

/* RFC 7748 section 6.1: Alice's (clamped) scalar with Bob's public key gives K. */
static void test_rfc7748_vector(void **state)
{
    unsigned char a[32], bob[32], k[32], got[32];
    mbedtls_ecp_group grp;
    mbedtls_mpi d, z;
    mbedtls_ecp_point q;
    uint64_t seed = 1;

    (void)state;
    hex_to("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a", a, 32);
    hex_to("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f", bob, 32);
    hex_to("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742", k, 32);
    a[0] &= 248; /* the clamping X25519 applies, which Mbed TLS's scalars already have */
    a[31] = (unsigned char)((a[31] & 127) | 64);
    mbedtls_ecp_group_init(&grp);
    mbedtls_mpi_init(&d), mbedtls_mpi_init(&z);
    mbedtls_ecp_point_init(&q);
    assert_int_equal(mbedtls_ecp_group_load(&grp, MBEDTLS_ECP_DP_CURVE25519), 0);
    assert_int_equal(mbedtls_mpi_read_binary_le(&d, a, 32), 0);
    assert_int_equal(mbedtls_ecp_point_read_binary(&grp, &q, bob, 32), 0);
    assert_int_equal(mbedtls_ecdh_compute_shared(&grp, &z, &q, &d, test_rng, &seed), 0);
    assert_int_equal(mbedtls_mpi_write_binary_le(&z, got, 32), 0);
    assert_memory_equal(got, k, 32);
    /* a point of small order (u = 0): an all-zero secret, refused as Mbed TLS refuses it */
    memset(bob, 0, sizeof(bob));
    assert_int_equal(mbedtls_ecp_point_read_binary(&grp, &q, bob, 32), 0);
    assert_int_not_equal(mbedtls_ecdh_compute_shared(&grp, &z, &q, &d, test_rng, &seed), 0);
    /* a scalar Mbed TLS would not have made (low bits set): refused before any arithmetic */
    a[0] |= 1;
    assert_int_equal(mbedtls_mpi_read_binary_le(&d, a, 32), 0);
    hex_to("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f", bob, 32);
    assert_int_equal(mbedtls_ecp_point_read_binary(&grp, &q, bob, 32), 0);
    assert_int_equal(mbedtls_ecdh_compute_shared(&grp, &z, &q, &d, test_rng, &seed),
                     MBEDTLS_ERR_ECP_INVALID_KEY);
    mbedtls_mpi_free(&d), mbedtls_mpi_free(&z);
    mbedtls_ecp_point_free(&q);
    mbedtls_ecp_group_free(&grp);
}

/* Whole key exchanges through the library (make_params / read_params / make_public /
 * read_public / calc_secret, as the TLS handshake calls them): X25519 in libcrypto and P-256
 * on Mbed TLS's code give both sides the same secret. */
static void test_exchange_through_library(void **state)
{
    static const mbedtls_ecp_group_id groups[] = {MBEDTLS_ECP_DP_CURVE25519,
                                                  MBEDTLS_ECP_DP_SECP256R1};
    uint64_t seed = 42;

    (void)state;
    for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
        mbedtls_ecdh_context srv, cli;
        unsigned char params[200], pub[200], s1[80], s2[80];
        const unsigned char *p = params;
        size_t params_len, pub_len, n1, n2;

        mbedtls_ecdh_init(&srv), mbedtls_ecdh_init(&cli);
        assert_int_equal(mbedtls_ecdh_setup(&srv, groups[g]), 0);
        assert_int_equal(
            mbedtls_ecdh_make_params(&srv, &params_len, params, sizeof(params), test_rng, &seed),
            0);
        assert_int_equal(mbedtls_ecdh_read_params(&cli, &p, params + params_len), 0);
        assert_int_equal(
            mbedtls_ecdh_make_public(&cli, &pub_len, pub, sizeof(pub), test_rng, &seed), 0);
        assert_int_equal(mbedtls_ecdh_read_public(&srv, pub, pub_len), 0);
        assert_int_equal(mbedtls_ecdh_calc_secret(&srv, &n1, s1, sizeof(s1), test_rng, &seed), 0);
        assert_int_equal(mbedtls_ecdh_calc_secret(&cli, &n2, s2, sizeof(s2), test_rng, &seed), 0);
        assert_int_equal(n1, n2);
        assert_memory_equal(s1, s2, n1);
        mbedtls_ecdh_free(&srv), mbedtls_ecdh_free(&cli);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_is_live),
        cmocka_unit_test(test_same_as_mbedtls),
        cmocka_unit_test(test_rfc7748_vector),
        cmocka_unit_test(test_exchange_through_library),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
