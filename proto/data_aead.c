/* proto/data_aead.c: argument checks and the choice of backend; the calls into the crypto
 * libraries are in data_aead_openssl.c and data_aead_mbedtls.c. */
#include "proto/data_aead.h"

#include <mbedtls/platform_util.h>

#include "proto/data_aead_internal.h"
#include "proto/errors.h"

const char *data_aead_backend_name(enum data_aead_backend b)
{
    switch (b) {
    case DATA_AEAD_OPENSSL:
        return data_aead_openssl_name();
    case DATA_AEAD_MBEDTLS:
        return data_aead_mbedtls_name();
    }
    return "unknown";
}

static bool is_aead_cipher(enum data_cipher c)
{
    return c == DATA_CIPHER_AES_128_GCM || c == DATA_CIPHER_AES_192_GCM ||
           c == DATA_CIPHER_AES_256_GCM || c == DATA_CIPHER_CHACHA20_POLY1305;
}

int data_aead_init(struct data_aead *a, enum data_aead_backend b, enum data_cipher c,
                   const uint8_t *key, bool is_seal)
{
    int err;

    mbedtls_platform_zeroize(a, sizeof(*a));
    if (!is_aead_cipher(c) || (b != DATA_AEAD_OPENSSL && b != DATA_AEAD_MBEDTLS)) {
        return -PE_UNSUPPORTED;
    }
    a->backend = b;
    a->cipher = c;
    a->is_seal = is_seal;
    err = b == DATA_AEAD_OPENSSL ? data_aead_openssl_init(a, key) : data_aead_mbedtls_init(a, key);
    if (err) {
        data_aead_clear(a);
    }
    return err;
}

void data_aead_clear(struct data_aead *a)
{
    if (a->ctx != NULL) {
        if (a->backend == DATA_AEAD_OPENSSL) {
            data_aead_openssl_clear(a);
        } else {
            data_aead_mbedtls_clear(a);
        }
    }
    mbedtls_platform_zeroize(a, sizeof(*a));
}

int data_aead_seal(struct data_aead *a, const uint8_t nonce[DATA_AEAD_NONCE_LEN],
                   const uint8_t *aad, size_t aad_len, const uint8_t *plain, size_t text_len,
                   uint8_t *ct, uint8_t tag[DATA_AEAD_TAG_LEN])
{
    if (a->ctx == NULL || !a->is_seal) {
        return -PE_STATE;
    }
    if (text_len > DATA_AEAD_TEXT_MAX || aad_len > DATA_AEAD_TEXT_MAX) {
        return -PE_CRYPTO;
    }
    if (a->backend == DATA_AEAD_OPENSSL) {
        return data_aead_openssl_seal(a, nonce, aad, aad_len, plain, text_len, ct, tag);
    }
    return data_aead_mbedtls_seal(a, nonce, aad, aad_len, plain, text_len, ct, tag);
}

int data_aead_open(struct data_aead *a, const uint8_t nonce[DATA_AEAD_NONCE_LEN],
                   const uint8_t *aad, size_t aad_len, const uint8_t *ct, size_t text_len,
                   const uint8_t tag[DATA_AEAD_TAG_LEN], uint8_t *out)
{
    int err;

    if (a->ctx == NULL || a->is_seal) {
        err = -PE_STATE;
    } else if (text_len > DATA_AEAD_TEXT_MAX || aad_len > DATA_AEAD_TEXT_MAX) {
        err = -PE_CRYPTO;
    } else if (a->backend == DATA_AEAD_OPENSSL) {
        err = data_aead_openssl_open(a, nonce, aad, aad_len, ct, text_len, tag, out);
    } else {
        err = data_aead_mbedtls_open(a, nonce, aad, aad_len, ct, text_len, tag, out);
    }
    if (err && text_len <= DATA_AEAD_TEXT_MAX) {
        mbedtls_platform_zeroize(out, text_len); /* never hand out unverified plaintext */
    }
    return err;
}
