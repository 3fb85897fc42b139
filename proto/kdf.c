/* proto/kdf.c: OpenVPN PRF key expansion and the TLS keying-material exporter, on mbedTLS. */
#include "proto/kdf.h"

#include <string.h>

#include <mbedtls/platform_util.h>
#include <mbedtls/ssl.h>

#include "proto/errors.h"

#define LABEL_MASTER "OpenVPN master secret"
#define LABEL_EXPANSION "OpenVPN key expansion"

#if !defined(MBEDTLS_SSL_PROTO_TLS1) && !defined(MBEDTLS_SSL_PROTO_TLS1_1)
#define NO_TLS1_PRF 1
#endif

static int prf(mbedtls_tls_prf_types type, const uint8_t *secret, size_t secret_len,
               const char *label, const uint8_t *seed, size_t seed_len, uint8_t *out,
               size_t out_len)
{
    if (mbedtls_ssl_tls_prf(type, secret, secret_len, label, seed, seed_len, out, out_len) != 0) {
        mbedtls_platform_zeroize(out, out_len);
        return -PE_CRYPTO;
    }
    return 0;
}

int kdf_tls1_prf(const uint8_t *secret, size_t secret_len, const char *label, const uint8_t *seed,
                 size_t seed_len, uint8_t *out, size_t out_len)
{
#ifdef NO_TLS1_PRF
    (void)secret;
    (void)secret_len;
    (void)label;
    (void)seed;
    (void)seed_len;
    mbedtls_platform_zeroize(out, out_len);
    return -PE_UNSUPPORTED;
#else
    return prf(MBEDTLS_SSL_TLS_PRF_TLS1, secret, secret_len, label, seed, seed_len, out, out_len);
#endif
}

int kdf_openvpn_prf(const uint8_t pre_master[KDF_PRE_MASTER_LEN],
                    const uint8_t client_random1[KDF_RANDOM_LEN],
                    const uint8_t server_random1[KDF_RANDOM_LEN],
                    const uint8_t client_random2[KDF_RANDOM_LEN],
                    const uint8_t server_random2[KDF_RANDOM_LEN],
                    const uint8_t client_session_id[KDF_SESSION_ID_LEN],
                    const uint8_t server_session_id[KDF_SESSION_ID_LEN],
                    uint8_t key_block[KEY_BLOCK_LEN])
{
    uint8_t master[KDF_MASTER_SECRET_LEN];
    uint8_t seed[2 * KDF_RANDOM_LEN + 2 * KDF_SESSION_ID_LEN];
    int err;

    /* master secret: seed = client random1 || server random1 */
    memcpy(seed, client_random1, KDF_RANDOM_LEN);
    memcpy(seed + KDF_RANDOM_LEN, server_random1, KDF_RANDOM_LEN);
    err = kdf_tls1_prf(pre_master, KDF_PRE_MASTER_LEN, LABEL_MASTER, seed, 2 * KDF_RANDOM_LEN,
                       master, sizeof(master));
    if (err) {
        goto out;
    }

    /* key block: seed = client random2 || server random2 || client sid || server sid */
    memcpy(seed, client_random2, KDF_RANDOM_LEN);
    memcpy(seed + KDF_RANDOM_LEN, server_random2, KDF_RANDOM_LEN);
    memcpy(seed + 2 * KDF_RANDOM_LEN, client_session_id, KDF_SESSION_ID_LEN);
    memcpy(seed + 2 * KDF_RANDOM_LEN + KDF_SESSION_ID_LEN, server_session_id, KDF_SESSION_ID_LEN);
    err = kdf_tls1_prf(master, sizeof(master), LABEL_EXPANSION, seed, sizeof(seed), key_block,
                       KEY_BLOCK_LEN);

out:
    if (err) {
        mbedtls_platform_zeroize(key_block, KEY_BLOCK_LEN);
    }
    mbedtls_platform_zeroize(master, sizeof(master));
    mbedtls_platform_zeroize(seed, sizeof(seed));
    return err;
}

int kdf_tls_ekm(int prf_type, const uint8_t master_secret[KDF_MASTER_SECRET_LEN],
                const uint8_t client_random[KDF_RANDOM_LEN],
                const uint8_t server_random[KDF_RANDOM_LEN], const char *label, uint8_t *out,
                size_t out_len)
{
    uint8_t randoms[2 * KDF_RANDOM_LEN];
    int err;

    if (label == NULL || label[0] == '\0') {
        mbedtls_platform_zeroize(out, out_len);
        return -PE_CRYPTO;
    }
    memcpy(randoms, client_random, KDF_RANDOM_LEN);
    memcpy(randoms + KDF_RANDOM_LEN, server_random, KDF_RANDOM_LEN);
    switch (prf_type) {
    case MBEDTLS_SSL_TLS_PRF_TLS1:
        err = kdf_tls1_prf(master_secret, KDF_MASTER_SECRET_LEN, label, randoms, sizeof(randoms),
                           out, out_len);
        break;
    case MBEDTLS_SSL_TLS_PRF_SHA256:
    case MBEDTLS_SSL_TLS_PRF_SHA384:
        err = prf((mbedtls_tls_prf_types)prf_type, master_secret, KDF_MASTER_SECRET_LEN, label,
                  randoms, sizeof(randoms), out, out_len);
        break;
    default:
        mbedtls_platform_zeroize(out, out_len);
        err = -PE_UNSUPPORTED;
        break;
    }
    mbedtls_platform_zeroize(randoms, sizeof(randoms));
    return err;
}
