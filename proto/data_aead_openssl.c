/* proto/data_aead_openssl.c: the data-channel AEAD on OpenSSL 3 libcrypto EVP.
 *
 * The EVP_CIPHER_CTX gets its cipher and key once; per packet EVP_CipherInit_ex2() with only a
 * nonce keeps the key schedule, so sealing and opening make no allocation.
 */
#include "proto/data_aead_internal.h"

#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "proto/errors.h"

const char *data_aead_openssl_name(void)
{
    return OpenSSL_version(OPENSSL_VERSION);
}

static const char *evp_name(enum data_cipher c)
{
    switch (c) {
    case DATA_CIPHER_AES_128_GCM:
        return "AES-128-GCM";
    case DATA_CIPHER_AES_192_GCM:
        return "AES-192-GCM";
    case DATA_CIPHER_AES_256_GCM:
        return "AES-256-GCM";
    case DATA_CIPHER_CHACHA20_POLY1305:
        return "ChaCha20-Poly1305";
    default: /* NONE and the CBC ciphers (proto/data_cbc.c) */
        break;
    }
    return NULL;
}

int data_aead_openssl_init(struct data_aead *a, const uint8_t *key)
{
    EVP_CIPHER *cipher = EVP_CIPHER_fetch(NULL, evp_name(a->cipher), NULL);
    EVP_CIPHER_CTX *ctx;
    int err = 0;

    if (cipher == NULL) {
        return -PE_CRYPTO;
    }
    ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL) {
        EVP_CIPHER_free(cipher);
        return -PE_CRYPTO;
    }
    a->ctx = ctx; /* from here data_aead_clear() frees it */
    if (EVP_CipherInit_ex2(ctx, cipher, key, NULL, a->is_seal ? 1 : 0, NULL) != 1 ||
        EVP_CIPHER_CTX_get_iv_length(ctx) != DATA_AEAD_NONCE_LEN) {
        err = -PE_CRYPTO;
    }
    EVP_CIPHER_free(cipher); /* the context holds its own reference */
    return err;
}

void data_aead_openssl_clear(struct data_aead *a)
{
    EVP_CIPHER_CTX_free(a->ctx); /* cleanses the key schedule */
}

int data_aead_openssl_seal(struct data_aead *a, const uint8_t *nonce, const uint8_t *aad,
                           size_t aad_len, const uint8_t *plain, size_t text_len, uint8_t *ct,
                           uint8_t *tag)
{
    EVP_CIPHER_CTX *ctx = a->ctx;
    int n = 0, n_final = 0;

    if (EVP_EncryptInit_ex2(ctx, NULL, NULL, nonce, NULL) != 1 ||
        EVP_EncryptUpdate(ctx, NULL, &n, aad, (int)aad_len) != 1) {
        return -PE_CRYPTO;
    }
    n = 0;
    if (text_len > 0 && EVP_EncryptUpdate(ctx, ct, &n, plain, (int)text_len) != 1) {
        return -PE_CRYPTO;
    }
    if (EVP_EncryptFinal_ex(ctx, ct + n, &n_final) != 1 ||
        (size_t)n + (size_t)n_final != text_len ||
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, DATA_AEAD_TAG_LEN, tag) != 1) {
        return -PE_CRYPTO;
    }
    return 0;
}

int data_aead_openssl_open(struct data_aead *a, const uint8_t *nonce, const uint8_t *aad,
                           size_t aad_len, const uint8_t *ct, size_t text_len, const uint8_t *tag,
                           uint8_t *out)
{
    EVP_CIPHER_CTX *ctx = a->ctx;
    uint8_t tag_copy[DATA_AEAD_TAG_LEN]; /* the ctrl takes a writable buffer */
    int n = 0, n_final = 0;

    memcpy(tag_copy, tag, DATA_AEAD_TAG_LEN);
    if (EVP_DecryptInit_ex2(ctx, NULL, NULL, nonce, NULL) != 1 ||
        EVP_DecryptUpdate(ctx, NULL, &n, aad, (int)aad_len) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, DATA_AEAD_TAG_LEN, tag_copy) != 1) {
        return -PE_CRYPTO;
    }
    n = 0;
    if (text_len > 0 && EVP_DecryptUpdate(ctx, out, &n, ct, (int)text_len) != 1) {
        return -PE_AUTH;
    }
    if (EVP_DecryptFinal_ex(ctx, out + n, &n_final) != 1 ||
        (size_t)n + (size_t)n_final != text_len) {
        return -PE_AUTH;
    }
    return 0;
}
