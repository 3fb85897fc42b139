/* proto/kdf.h: data-channel key derivation (section 5 of docs/openvpn-protocol.md).
 *
 * Both methods produce the 256-byte key2 block that data_key_init() (proto/data_crypto.h) slices:
 * key[0] = bytes 0..127 (client->server: cipher slot 0..63, HMAC slot / implicit IV 64..127),
 * key[1] = bytes 128..255 (server->client). All functions are pure (TLS PRF through mbedTLS),
 * reentrant, callable from any thread, and wipe their intermediate secrets.
 */
#ifndef PROTO_KDF_H
#define PROTO_KDF_H

#include <stddef.h>
#include <stdint.h>

#define KEY_BLOCK_LEN 256
#define KDF_PRE_MASTER_LEN 48
#define KDF_RANDOM_LEN 32
#define KDF_SESSION_ID_LEN 8
#define KDF_MASTER_SECRET_LEN 48 /* TLS master secret, as given to the export-keys callback */

/* The label of the data-channel key exporter (ssl.c, EXPORT_KEY_DATA_LABEL). */
#define KDF_EKM_LABEL_DATAKEYS "EXPORTER-OpenVPN-datakeys"

/* The TLS 1.0/1.1 PRF (RFC 2246 section 5: P_MD5(S1, label || seed) XOR P_SHA1(S2, label ||
 * seed)) over secret[secret_len], writing out_len bytes to out. label is a NUL-terminated
 * string (may be ""), its bytes without the NUL precede seed. Returns 0, -PE_CRYPTO (mbedTLS
 * refused the input or could not allocate), or -PE_UNSUPPORTED when the mbedTLS build lacks the
 * TLS 1.0 PRF (neither MBEDTLS_SSL_PROTO_TLS1 nor _TLS1_1). On error out is zeroed. */
int kdf_tls1_prf(const uint8_t *secret, size_t secret_len, const char *label, const uint8_t *seed,
                 size_t seed_len, uint8_t *out, size_t out_len);

/* OpenVPN's own key expansion, used when tls-ekm is not negotiated (ssl.c
 * generate_key_expansion_openvpn_prf, openvpn_PRF; key-method 2):
 *   master    = PRF(pre_master, "OpenVPN master secret" || client_random1 || server_random1), 48
 *   key_block = PRF(master, "OpenVPN key expansion" || client_random2 || server_random2 ||
 *                   client_session_id || server_session_id), 256
 * with PRF = kdf_tls1_prf(). pre_master and the randoms come from the key-method-2 messages
 * (only the client sends a pre_master); the session ids are the control-channel ones. Writes
 * KEY_BLOCK_LEN bytes to key_block (the caller wipes it after data_key_init()). Returns 0,
 * -PE_UNSUPPORTED, or -PE_CRYPTO; on error key_block is zeroed. */
int kdf_openvpn_prf(const uint8_t pre_master[KDF_PRE_MASTER_LEN],
                    const uint8_t client_random1[KDF_RANDOM_LEN],
                    const uint8_t server_random1[KDF_RANDOM_LEN],
                    const uint8_t client_random2[KDF_RANDOM_LEN],
                    const uint8_t server_random2[KDF_RANDOM_LEN],
                    const uint8_t client_session_id[KDF_SESSION_ID_LEN],
                    const uint8_t server_session_id[KDF_SESSION_ID_LEN],
                    uint8_t key_block[KEY_BLOCK_LEN]);

/* RFC 5705 keying-material exporter for TLS 1.2 (and 1.0/1.1), without context:
 *   out = TLS-PRF(master_secret, label, client_random || server_random, out_len)
 * prf_type is the mbedtls_tls_prf_types value mbedTLS 2.28 passed to the export-keys callback
 * (MBEDTLS_SSL_TLS_PRF_SHA256 or _SHA384 for TLS 1.2, _TLS1 for 1.0/1.1); master_secret and the
 * randoms are from the same callback. This is what 2.6 computes for `key-derivation tls-ekm`
 * (label KDF_EKM_LABEL_DATAKEYS, 256 bytes) and for dyn-tls-crypt
 * ("EXPORTER-OpenVPN-dynamic-tls-crypt", 256 bytes). label is NUL-terminated, not empty.
 * Returns 0, -PE_UNSUPPORTED (other prf_type), or -PE_CRYPTO (also for a NULL or empty label);
 * on error out is zeroed. */
int kdf_tls_ekm(int prf_type, const uint8_t master_secret[KDF_MASTER_SECRET_LEN],
                const uint8_t client_random[KDF_RANDOM_LEN],
                const uint8_t server_random[KDF_RANDOM_LEN], const char *label, uint8_t *out,
                size_t out_len);

#endif /* PROTO_KDF_H */
