/* proto/data_cbc.h: the CBC + HMAC data channel of one direction of one key (section 6.3 of
 * docs/openvpn-protocol.md), for clients that cannot negotiate an AEAD cipher.
 *
 * Layout of what follows the 1- or 4-byte opcode header (OpenVPN 2.6 crypto.c
 * openvpn_encrypt_v1 / openvpn_decrypt_v1, TLS mode with a CBC cipher):
 *
 *   HMAC (H bytes) || IV (16) || CBC(packet_id (4) || payload), PKCS#7 padded
 *   HMAC = HMAC-<auth>(hmac key, IV || ciphertext); the opcode header is not covered
 *
 * The packet_id is the short 4-byte form inside the encrypted part (2.6 uses the long form only
 * for CFB/OFB ciphers and static keys). The receiver checks the HMAC (constant time) before it
 * decrypts anything.
 *
 * IVs: 2.6 draws each IV from its random generator. Here the IV of packet_id is the block
 * cipher, under the direction's own cipher key, applied to a block holding packet_id (NIST SP
 * 800-38A appendix C, the first of its two ways to make CBC IVs unpredictable): unpredictable
 * without the key, never repeated under a key (packet ids are not), so neither a random
 * generator nor a lock is needed per packet, and both backends give identical packets. The
 * receiver cannot tell the difference: it reads the IV from the packet.
 *
 * Backends, as for proto/data_aead.h: the block cipher on OpenSSL 3 libcrypto EVP
 * (DATA_AEAD_OPENSSL) or Mbed TLS 2.28 mbedtls_cipher (DATA_AEAD_MBEDTLS). The HMAC is Mbed
 * TLS's mbedtls_md_hmac in both: OpenSSL 3.0's EVP_MAC_init() and EVP_DigestInit_ex2() allocate
 * on every reuse (measured with 3.0.x: two allocations per HMAC), Mbed TLS's reset does not.
 *
 * A struct data_cbc belongs to one thread; data_cbc_seal() and data_cbc_open() neither allocate
 * nor lock.
 */
#ifndef PROTO_DATA_CBC_H
#define PROTO_DATA_CBC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/data_aead.h" /* enum data_cipher, enum data_aead_backend */

/* The HMAC digest of `auth` (2.6 default SHA1). */
enum data_digest {
    DATA_DIGEST_NONE = 0, /* not usable for data_cbc_init() */
    DATA_DIGEST_SHA1,
    DATA_DIGEST_SHA224,
    DATA_DIGEST_SHA256,
    DATA_DIGEST_SHA384,
    DATA_DIGEST_SHA512,
};

#define DATA_CBC_BLOCK_LEN 16 /* AES and Camellia; 64-bit block ciphers are not offered */
#define DATA_CBC_IV_LEN 16
#define DATA_CBC_HMAC_MAX 64 /* SHA512 */
#define DATA_CBC_PACKET_ID_LEN 4
/* The most a packet grows beyond its payload after the opcode header: HMAC, IV, packet_id and a
 * full block of padding. */
#define DATA_CBC_OVERHEAD_MAX                                                                      \
    (DATA_CBC_HMAC_MAX + DATA_CBC_IV_LEN + DATA_CBC_PACKET_ID_LEN + DATA_CBC_BLOCK_LEN)

/* One direction of one key. Caller-owned storage; the contexts are allocated by data_cbc_init()
 * and freed by data_cbc_clear(); NULL when not initialised. */
struct data_cbc {
    enum data_aead_backend backend;
    enum data_cipher cipher;
    enum data_digest digest;
    bool is_seal;
    size_t hmac_len;
    void *ctx;    /* CBC: EVP_CIPHER_CTX or mbedtls_cipher_context_t */
    void *iv_ctx; /* sealing only: the same cipher and key as one-block ECB, for IVs */
    void *hmac;   /* mbedtls_md_context_t with its key */
};

/* Parse a digest name of `auth` ("SHA1", "sha256", ...; SHA1, SHA224, SHA256, SHA384, SHA512),
 * case-insensitive. Returns 0 or -PE_UNSUPPORTED (also for "none" and NULL). Any thread. */
int data_digest_from_name(const char *name, enum data_digest *out);

/* HMAC length of d in bytes (20, 28, 32, 48, 64), 0 for NONE or an unknown value. */
size_t data_digest_len(enum data_digest d);

/* The OpenVPN spelling ("SHA1", "SHA256", ...), "none" for NONE or an unknown value. */
const char *data_digest_name(enum data_digest d);

/* Set c up for CBC cipher c_id (a DATA_CIPHER_*_CBC; see data_cipher_is_cbc() in
 * proto/data_crypto.h) with cipher_key (data_cipher_key_len() bytes) and digest d with hmac_key
 * (data_digest_len(d) bytes), for sealing (is_seal) or opening. The caller keeps the keys and
 * should wipe them. c must be zeroed or cleared. Allocates the contexts once. Returns 0;
 * -PE_UNSUPPORTED for an unknown backend, a cipher that is not CBC, or digest NONE; -PE_CRYPTO if
 * a library fails (c is then left cleared). */
int data_cbc_init(struct data_cbc *c, enum data_aead_backend b, enum data_cipher c_id,
                  enum data_digest d, const uint8_t *cipher_key, const uint8_t *hmac_key,
                  bool is_seal);

/* Free the contexts (their key schedules wiped) and zero c. Safe on a zeroed or cleared c. */
void data_cbc_clear(struct data_cbc *c);

/* Bytes data_cbc_seal() writes for plain_len bytes of payload: HMAC + IV + the padded
 * ciphertext of packet_id || payload. */
size_t data_cbc_sealed_len(const struct data_cbc *c, size_t plain_len);

/* Write HMAC || IV || CBC(packet_id || plain) to out (out_cap bytes; at least
 * data_cbc_sealed_len()). plain must not overlap out. packet_id: the caller's send counter, never
 * repeated under this key (it also makes the IV). No allocation. Returns 0 with *out_len set;
 * -PE_NOSPACE; -PE_STATE (c not set up for sealing); -PE_CRYPTO. */
int data_cbc_seal(struct data_cbc *c, uint32_t packet_id, const uint8_t *plain, size_t plain_len,
                  uint8_t *out, size_t out_cap, size_t *out_len);

/* Open in[0..in_len) (HMAC || IV || ciphertext, as data_cbc_seal() writes it): check the HMAC
 * in constant time (-PE_AUTH, before anything is decrypted), decrypt into out (out_cap bytes, at
 * least in_len - HMAC - IV: the ciphertext length), take the 4-byte packet_id from the front of
 * the plaintext into *packet_id and leave the payload at out[0..*out_len). in must not overlap
 * out. The caller checks and commits packet_id in its replay window afterwards. No allocation.
 * Returns 0; -PE_SHORT (no room for HMAC, IV and one block); -PE_MALFORMED (ciphertext not a
 * whole number of blocks, bad padding or no room for the packet_id, all after the HMAC verified);
 * -PE_AUTH; -PE_NOSPACE; -PE_STATE; -PE_CRYPTO. On error out[0..ciphertext length) is wiped when
 * it could hold that much. */
int data_cbc_open(struct data_cbc *c, const uint8_t *in, size_t in_len, uint8_t *out,
                  size_t out_cap, size_t *out_len, uint32_t *packet_id);

#endif /* PROTO_DATA_CBC_H */
