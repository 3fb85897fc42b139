/* proto/ecdh_libcrypto.c: X25519 for Mbed TLS's handshakes in libcrypto, by interposing the
 * library's two ECDH primitives (see the header for why and how). */
#include "proto/ecdh_libcrypto.h"

#include <string.h>

#include <mbedtls/ecdh.h>
#include <mbedtls/ecp.h>
#include <mbedtls/platform_util.h>
#include <openssl/evp.h>

#define X25519_LEN 32

/* out = the X25519 function of the scalar d (little-endian, as RFC 7748 and Mbed TLS's
 * Montgomery encoding) and the u-coordinate u (NULL: the base point), through libcrypto.
 * Returns 0, or MBEDTLS_ERR_ECP_BAD_INPUT_DATA when libcrypto refuses (an all-zero result: u
 * of small order), MBEDTLS_ERR_ECP_ALLOC_FAILED when it cannot allocate. */
static int x25519(const unsigned char d[X25519_LEN], const unsigned char *u,
                  unsigned char out[X25519_LEN])
{
    EVP_PKEY *key = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, d, X25519_LEN);
    EVP_PKEY *peer = NULL;
    EVP_PKEY_CTX *ctx = NULL;
    size_t len = X25519_LEN;
    int ret = MBEDTLS_ERR_ECP_ALLOC_FAILED;

    if (!key) {
        return ret;
    }
    if (!u) {
        if (EVP_PKEY_get_raw_public_key(key, out, &len) == 1 && len == X25519_LEN) {
            ret = 0;
        }
        EVP_PKEY_free(key);
        return ret;
    }
    peer = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, NULL, u, X25519_LEN);
    ctx = EVP_PKEY_CTX_new(key, NULL);
    if (peer && ctx) {
        ret = MBEDTLS_ERR_ECP_BAD_INPUT_DATA;
        if (EVP_PKEY_derive_init(ctx) == 1 && EVP_PKEY_derive_set_peer(ctx, peer) == 1 &&
            EVP_PKEY_derive(ctx, out, &len) == 1 && len == X25519_LEN) {
            ret = 0;
        }
    }
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(peer);
    EVP_PKEY_free(key);
    return ret;
}

/* Replaces the library's function of the same name (ecdh.h): d a new private scalar from
 * f_rng, Q = d * G. X25519: the scalar as Mbed TLS draws it, the point as Mbed TLS leaves it
 * (X the u-coordinate, Z = 1, no Y). Other groups: mbedtls_ecp_gen_keypair, which is what the
 * library's version computes. */
int mbedtls_ecdh_gen_public(mbedtls_ecp_group *grp, mbedtls_mpi *d, mbedtls_ecp_point *Q,
                            int (*f_rng)(void *, unsigned char *, size_t), void *p_rng)
{
    unsigned char scalar[X25519_LEN], u[X25519_LEN];
    int ret;

    if (grp->id != MBEDTLS_ECP_DP_CURVE25519) {
        return mbedtls_ecp_gen_keypair(grp, d, Q, f_rng, p_rng);
    }
    ret = mbedtls_ecp_gen_privkey(grp, d, f_rng, p_rng);
    if (ret == 0) {
        ret = mbedtls_mpi_write_binary_le(d, scalar, sizeof(scalar));
    }
    if (ret == 0) {
        ret = x25519(scalar, NULL, u);
    }
    if (ret == 0) {
        ret = mbedtls_mpi_read_binary_le(&Q->X, u, sizeof(u));
    }
    if (ret == 0) {
        ret = mbedtls_mpi_lset(&Q->Z, 1);
    }
    mbedtls_mpi_free(&Q->Y);
    mbedtls_platform_zeroize(scalar, sizeof(scalar));
    return ret;
}

/* Replaces the library's function of the same name (ecdh.h): z = the x-coordinate of d * Q,
 * after the checks the library's version makes (mbedtls_ecp_mul checks d and Q first; a result
 * at infinity, or X25519's all-zero result, is MBEDTLS_ERR_ECP_BAD_INPUT_DATA). */
int mbedtls_ecdh_compute_shared(mbedtls_ecp_group *grp, mbedtls_mpi *z, const mbedtls_ecp_point *Q,
                                const mbedtls_mpi *d, int (*f_rng)(void *, unsigned char *, size_t),
                                void *p_rng)
{
    unsigned char scalar[X25519_LEN], u[X25519_LEN], out[X25519_LEN];
    mbedtls_ecp_point P;
    int ret;

    if (grp->id != MBEDTLS_ECP_DP_CURVE25519) {
        mbedtls_ecp_point_init(&P);
        ret = mbedtls_ecp_mul(grp, &P, d, Q, f_rng, p_rng);
        if (ret == 0 && mbedtls_ecp_is_zero(&P)) {
            ret = MBEDTLS_ERR_ECP_BAD_INPUT_DATA;
        }
        if (ret == 0) {
            ret = mbedtls_mpi_copy(z, &P.X);
        }
        mbedtls_ecp_point_free(&P);
        return ret;
    }
    ret = mbedtls_ecp_check_privkey(grp, d);
    if (ret == 0) {
        ret = mbedtls_ecp_check_pubkey(grp, Q);
    }
    if (ret == 0) {
        ret = mbedtls_mpi_write_binary_le(d, scalar, sizeof(scalar));
    }
    if (ret == 0) {
        ret = mbedtls_mpi_write_binary_le(&Q->X, u, sizeof(u));
    }
    if (ret == 0) {
        ret = x25519(scalar, u, out);
    }
    if (ret == 0) {
        ret = mbedtls_mpi_read_binary_le(z, out, sizeof(out));
    }
    mbedtls_platform_zeroize(scalar, sizeof(scalar));
    mbedtls_platform_zeroize(out, sizeof(out));
    return ret;
}

/* A throw-away RNG that counts its calls: the library's own X25519 key generation asks it at
 * least twice (the scalar, then the blinding of the ladder's coordinates), ours once. */
static int counting_rng(void *p_rng, unsigned char *out, size_t len)
{
    unsigned *n = p_rng;

    for (size_t i = 0; i < len; i++) {
        out[i] = (unsigned char)(0x5a + *n + i * 131u);
    }
    (*n)++;
    return 0;
}

bool ecdh_libcrypto_is_live(void)
{
    mbedtls_ecdh_context ctx;
    unsigned char buf[128];
    size_t len = 0;
    unsigned n = 0;
    bool is_live;

    mbedtls_ecdh_init(&ctx);
    is_live = mbedtls_ecdh_setup(&ctx, MBEDTLS_ECP_DP_CURVE25519) == 0 &&
              mbedtls_ecdh_make_params(&ctx, &len, buf, sizeof(buf), counting_rng, &n) == 0 &&
              n == 1;
    mbedtls_ecdh_free(&ctx);
    return is_live;
}
