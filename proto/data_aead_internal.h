/* proto/data_aead_internal.h: the two backends behind proto/data_aead.h.
 *
 * proto/data_aead.c checks the arguments (backend, cipher, state, lengths) and wipes out on a
 * failed open; a backend function is only called with a->backend its own, a->cipher one of the
 * three AEAD ciphers and a->is_seal matching the call. Errors are -PE_* (proto/errors.h).
 */
#ifndef PROTO_DATA_AEAD_INTERNAL_H
#define PROTO_DATA_AEAD_INTERNAL_H

#include "proto/data_aead.h"

/* OpenSSL 3 libcrypto EVP: a->ctx is an EVP_CIPHER_CTX with cipher and key set. */
const char *data_aead_openssl_name(void);
int data_aead_openssl_init(struct data_aead *a, const uint8_t *key);
void data_aead_openssl_clear(struct data_aead *a);
int data_aead_openssl_seal(struct data_aead *a, const uint8_t *nonce, const uint8_t *aad,
                           size_t aad_len, const uint8_t *plain, size_t text_len, uint8_t *ct,
                           uint8_t *tag);
int data_aead_openssl_open(struct data_aead *a, const uint8_t *nonce, const uint8_t *aad,
                           size_t aad_len, const uint8_t *ct, size_t text_len, const uint8_t *tag,
                           uint8_t *out);

/* Mbed TLS 2.28: a->ctx holds an mbedtls_gcm_context or mbedtls_chachapoly_context. */
const char *data_aead_mbedtls_name(void);
int data_aead_mbedtls_init(struct data_aead *a, const uint8_t *key);
void data_aead_mbedtls_clear(struct data_aead *a);
int data_aead_mbedtls_seal(struct data_aead *a, const uint8_t *nonce, const uint8_t *aad,
                           size_t aad_len, const uint8_t *plain, size_t text_len, uint8_t *ct,
                           uint8_t *tag);
int data_aead_mbedtls_open(struct data_aead *a, const uint8_t *nonce, const uint8_t *aad,
                           size_t aad_len, const uint8_t *ct, size_t text_len, const uint8_t *tag,
                           uint8_t *out);

#endif /* PROTO_DATA_AEAD_INTERNAL_H */
