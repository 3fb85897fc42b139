/* proto/data_aead_mbedtls.c: the data-channel AEAD on Mbed TLS 2.28 (mbedtls_gcm,
 * mbedtls_chachapoly).
 *
 * The context gets its key once (data_aead_init); the one-shot calls below take the nonce, AAD,
 * text and a separate tag buffer, which fits OpenVPN's layout (tag before the ciphertext)
 * without copying, and allocate nothing. Opening in place (out == ct) is what Mbed TLS's own
 * record layer does with these functions (ssl_msg.c decrypts AEAD records in place).
 */
#include "proto/data_aead_internal.h"

#include <stdlib.h>

#include <mbedtls/chachapoly.h>
#include <mbedtls/gcm.h>
#include <mbedtls/version.h>

#include "proto/errors.h"

const char *data_aead_mbedtls_name(void)
{
    return MBEDTLS_VERSION_STRING_FULL;
}

static bool is_chachapoly(const struct data_aead *a)
{
    return a->cipher == DATA_CIPHER_CHACHA20_POLY1305;
}

int data_aead_mbedtls_init(struct data_aead *a, const uint8_t *key)
{
    int ret;

    if (is_chachapoly(a)) {
        mbedtls_chachapoly_context *ctx = calloc(1, sizeof(*ctx));

        if (ctx == NULL) {
            return -PE_CRYPTO;
        }
        mbedtls_chachapoly_init(ctx);
        a->ctx = ctx;
        ret = mbedtls_chachapoly_setkey(ctx, key);
    } else {
        mbedtls_gcm_context *ctx = calloc(1, sizeof(*ctx));
        unsigned key_bits = a->cipher == DATA_CIPHER_AES_128_GCM   ? 128
                            : a->cipher == DATA_CIPHER_AES_192_GCM ? 192
                                                                   : 256;

        if (ctx == NULL) {
            return -PE_CRYPTO;
        }
        mbedtls_gcm_init(ctx);
        a->ctx = ctx;
        ret = mbedtls_gcm_setkey(ctx, MBEDTLS_CIPHER_ID_AES, key, key_bits);
    }
    return ret == 0 ? 0 : -PE_CRYPTO;
}

void data_aead_mbedtls_clear(struct data_aead *a)
{
    /* both free functions wipe the whole context, key schedule included */
    if (is_chachapoly(a)) {
        mbedtls_chachapoly_free(a->ctx);
    } else {
        mbedtls_gcm_free(a->ctx);
    }
    free(a->ctx);
}

int data_aead_mbedtls_seal(struct data_aead *a, const uint8_t *nonce, const uint8_t *aad,
                           size_t aad_len, const uint8_t *plain, size_t text_len, uint8_t *ct,
                           uint8_t *tag)
{
    int ret;

    if (is_chachapoly(a)) {
        ret = mbedtls_chachapoly_encrypt_and_tag(a->ctx, text_len, nonce, aad, aad_len, plain, ct,
                                                 tag);
    } else {
        ret = mbedtls_gcm_crypt_and_tag(a->ctx, MBEDTLS_GCM_ENCRYPT, text_len, nonce,
                                        DATA_AEAD_NONCE_LEN, aad, aad_len, plain, ct,
                                        DATA_AEAD_TAG_LEN, tag);
    }
    return ret == 0 ? 0 : -PE_CRYPTO;
}

int data_aead_mbedtls_open(struct data_aead *a, const uint8_t *nonce, const uint8_t *aad,
                           size_t aad_len, const uint8_t *ct, size_t text_len, const uint8_t *tag,
                           uint8_t *out)
{
    int ret;

    if (is_chachapoly(a)) {
        ret = mbedtls_chachapoly_auth_decrypt(a->ctx, text_len, nonce, aad, aad_len, tag, ct, out);
        if (ret == MBEDTLS_ERR_CHACHAPOLY_AUTH_FAILED) {
            return -PE_AUTH;
        }
    } else {
        ret = mbedtls_gcm_auth_decrypt(a->ctx, text_len, nonce, DATA_AEAD_NONCE_LEN, aad, aad_len,
                                       tag, DATA_AEAD_TAG_LEN, ct, out);
        if (ret == MBEDTLS_ERR_GCM_AUTH_FAILED) {
            return -PE_AUTH;
        }
    }
    return ret == 0 ? 0 : -PE_CRYPTO;
}
