/* proto/data_aead.h: the AEAD primitive under the data channel, with two backends.
 *
 * One struct data_aead is one direction of one key: a cipher and its key, set once by
 * data_aead_init(); per packet only the nonce, AAD, text and tag change. Two backends give
 * byte-identical results (tests/unit/test_data_crypto.c checks both against the same vectors):
 *   DATA_AEAD_OPENSSL  OpenSSL 3 libcrypto EVP (the default data-channel backend);
 *   DATA_AEAD_MBEDTLS  Mbed TLS 2.28 mbedtls_gcm / mbedtls_chachapoly.
 * Both backends are always compiled; proto/data_crypto.c picks one for data_key_init() at build
 * time (CMake option OVPND_DATA_CRYPTO). The packet layout around these calls is in
 * proto/data_crypto.h.
 *
 * AES-GCM (NIST SP 800-38D) and ChaCha20-Poly1305 (RFC 8439) as OpenVPN 2.6 uses them
 * (crypto.c openvpn_encrypt_aead): 12-byte nonce, 16-byte tag, any AAD length.
 *
 * A struct data_aead belongs to one thread; data_aead_seal() and data_aead_open() neither
 * allocate nor lock.
 */
#ifndef PROTO_DATA_AEAD_H
#define PROTO_DATA_AEAD_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum data_cipher {
    DATA_CIPHER_NONE = 0, /* no key installed; not usable for data_key_init() */
    DATA_CIPHER_AES_128_GCM,
    DATA_CIPHER_AES_256_GCM,
    DATA_CIPHER_CHACHA20_POLY1305,
    DATA_CIPHER_AES_192_GCM,
    /* CBC + HMAC (proto/data_cbc.h), not AEAD: data_aead_init() refuses them */
    DATA_CIPHER_AES_128_CBC,
    DATA_CIPHER_AES_192_CBC,
    DATA_CIPHER_AES_256_CBC,
    DATA_CIPHER_CAMELLIA_128_CBC,
    DATA_CIPHER_CAMELLIA_192_CBC,
    DATA_CIPHER_CAMELLIA_256_CBC,
};

enum data_aead_backend {
    DATA_AEAD_OPENSSL = 0,
    DATA_AEAD_MBEDTLS,
};

#define DATA_AEAD_NONCE_LEN 12
#define DATA_AEAD_TAG_LEN 16
#define DATA_AEAD_KEY_MAX 32 /* AES-256 and ChaCha20 keys */
/* The longest text either backend takes in one call (EVP counts in int). */
#define DATA_AEAD_TEXT_MAX ((size_t)INT_MAX)

/* One direction of one key. Caller-owned storage; ctx is the backend's state, allocated by
 * data_aead_init() and freed by data_aead_clear(); NULL when not initialised. */
struct data_aead {
    enum data_aead_backend backend;
    enum data_cipher cipher;
    bool is_seal;
    void *ctx;
};

/* The library behind backend b, with its version, for logs: "OpenSSL 3.0.x ..." or
 * "Mbed TLS 2.28.x". Static string, never NULL ("unknown" for an invalid b). Any thread. */
const char *data_aead_backend_name(enum data_aead_backend b);

/* Set a up for cipher c with key (16 bytes for AES-128-GCM, 24 for AES-192-GCM, 32 for the others;
 * the caller keeps and should wipe it), for sealing (is_seal) or opening. a must be zeroed or
 * cleared. Allocates the backend context once. Returns 0; -PE_UNSUPPORTED for an unknown backend or
 * cipher (DATA_CIPHER_NONE included); -PE_CRYPTO if the library fails (a is then left cleared). */
int data_aead_init(struct data_aead *a, enum data_aead_backend b, enum data_cipher c,
                   const uint8_t *key, bool is_seal);

/* Free the backend context (its key schedule is wiped) and zero a. Safe on a zeroed or cleared
 * struct. */
void data_aead_clear(struct data_aead *a);

/* Encrypt text_len bytes of plain into ct (same length) and write the 16-byte tag, over aad.
 * ct may equal plain (in place); otherwise they must not overlap. text_len may be 0 and at most
 * DATA_AEAD_TEXT_MAX. a must have been set up with is_seal. No allocation. Returns 0, -PE_STATE
 * (a not set up for sealing) or -PE_CRYPTO. */
int data_aead_seal(struct data_aead *a, const uint8_t nonce[DATA_AEAD_NONCE_LEN],
                   const uint8_t *aad, size_t aad_len, const uint8_t *plain, size_t text_len,
                   uint8_t *ct, uint8_t tag[DATA_AEAD_TAG_LEN]);

/* Verify tag over aad and ct and decrypt text_len bytes of ct into out. out may equal ct (in
 * place); otherwise they must not overlap. a must have been set up without is_seal. No
 * allocation. Returns 0; -PE_AUTH when the tag does not verify; -PE_STATE (a not set up for
 * opening); -PE_CRYPTO. On any error the first text_len bytes of out are wiped, so unverified
 * plaintext never leaves. */
int data_aead_open(struct data_aead *a, const uint8_t nonce[DATA_AEAD_NONCE_LEN],
                   const uint8_t *aad, size_t aad_len, const uint8_t *ct, size_t text_len,
                   const uint8_t tag[DATA_AEAD_TAG_LEN], uint8_t *out);

#endif /* PROTO_DATA_AEAD_H */
