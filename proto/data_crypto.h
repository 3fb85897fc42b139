/* proto/data_crypto.h: the data channel (P_DATA_V1 / P_DATA_V2): AEAD ciphers, and CBC + HMAC
 * for clients that cannot negotiate (proto/data_cbc.h has that layout).
 *
 * AEAD packet layout (OpenVPN 2.6 crypto.c openvpn_encrypt_aead / openvpn_decrypt_aead; section 6.2
 * of docs/openvpn-protocol.md):
 *
 *   header (1 or 4) || packet_id (4) || tag (16) || ciphertext (same length as the plaintext)
 *
 *   nonce (12) = packet_id || implicit IV (first 8 bytes of the sending direction's HMAC slot)
 *   AAD        = P_DATA_V2: the 4 header bytes || packet_id;  P_DATA_V1: packet_id only
 *
 * The cipher itself is proto/data_aead.h, on OpenSSL libcrypto EVP or Mbed TLS; which one
 * data_key_init() uses is fixed at build time (CMake option OVPND_DATA_CRYPTO, default openssl),
 * and data_key_init_backend() picks one explicitly. Both give byte-identical packets.
 *
 * A struct data_key holds one key_id's two directions: their cipher contexts get their keys once
 * in data_key_init(); per packet only the nonce, AAD and tag are set, so data_key_seal() and
 * data_key_open() neither allocate nor lock. A data_key belongs to one thread (the worker that
 * owns the peer); nothing in it may be shared.
 */
#ifndef PROTO_DATA_CRYPTO_H
#define PROTO_DATA_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/data_aead.h" /* enum data_cipher, struct data_aead */
#include "proto/data_cbc.h"  /* enum data_digest, struct data_cbc */
#include "proto/packet_id.h"

#define DATA_V1_HEADER_LEN 1
#define DATA_V2_HEADER_LEN 4
#define DATA_PACKET_ID_LEN 4
#define DATA_TAG_LEN 16
#define DATA_AEAD_OVERHEAD 20 /* packet_id(4) + tag(16), on top of the 1- or 4-byte header */
#define DATA_IMPLICIT_IV_LEN 8
#define DATA_PEER_ID_MAX 0xFFFFFFu /* peer_id is 24 bits */
/* 2.6 starts a renegotiation once its send id reaches this (ssl.c, "packet ID roll over"). */
#define DATA_TX_ID_RENEGOTIATE 0xFF000000u

/* Parse an OpenVPN cipher name ("AES-256-GCM", "aes-128-gcm", "CHACHA20-POLY1305", and OpenSSL's
 * aliases "id-aes128-GCM" / "id-aes256-GCM"; the CBC ciphers "AES-128-CBC", "AES-192-CBC",
 * "AES-256-CBC", "CAMELLIA-128-CBC", "CAMELLIA-192-CBC", "CAMELLIA-256-CBC"), case-insensitive,
 * into *out. Returns 0, or -PE_UNSUPPORTED for anything else (including "none"). Any thread. */
int data_cipher_from_name(const char *name, enum data_cipher *out);

/* The OpenVPN spelling of c ("AES-256-GCM", ..., "AES-256-CBC", ...; "none" for
 * DATA_CIPHER_NONE or an unknown value). Static string, never NULL. Any thread. */
const char *data_cipher_name(enum data_cipher c);

/* Cipher key length in bytes (16, 24 or 32), 0 for DATA_CIPHER_NONE or an unknown value. */
size_t data_cipher_key_len(enum data_cipher c);

/* True for the CBC ciphers (CBC + HMAC by `auth`), false for AEAD, NONE and unknown values. */
bool data_cipher_is_cbc(enum data_cipher c);

/* One key_id's data-channel state: both directions, send counter, replay window. Caller-owned
 * storage; initialise with data_key_init(), release with data_key_clear(). */
struct data_key {
    enum data_cipher cipher; /* DATA_CIPHER_NONE when not initialised */
    enum data_digest digest; /* CBC ciphers: the HMAC digest; DATA_DIGEST_NONE with AEAD */
    uint8_t key_id;          /* 0..7 */
    struct data_aead enc;    /* AEAD: send direction, key set once */
    struct data_aead dec;    /* AEAD: receive direction, key set once */
    struct data_cbc cbc_enc; /* CBC: send direction (cipher and HMAC keys), set once */
    struct data_cbc cbc_dec; /* CBC: receive direction */
    uint8_t tx_implicit_iv[DATA_IMPLICIT_IV_LEN];
    uint8_t rx_implicit_iv[DATA_IMPLICIT_IV_LEN];
    uint32_t tx_packet_id; /* last id sent; the next packet carries tx_packet_id + 1 */
    struct packet_id_rx rx;
    /* Data packets sent and accepted with this key and their wire bytes, both directions:
     * counted by the key's owner for reneg-bytes / reneg-pkts (2.6 ssl.c, ks->n_packets and
     * ks->n_bytes); zeroed by data_key_init(). */
    uint64_t n_packets, n_bytes;
    /* AEAD: 16-byte blocks of plaintext sealed and opened with this key (2.7 crypto.c
     * plaintext_blocks), for data_key_usage_limit_reached(); zeroed by data_key_init(). */
    uint64_t tx_blocks, rx_blocks;
};

/* The AES-GCM usage limit openvpn 2.7 renegotiates at (crypto.c cipher_get_aead_limits, ssl.c
 * tls_get_limit_aead): blocks plus packets under one key, 7/8 of 2^36 - 1, the bound that keeps
 * an attacker's advantage below 2^-57 (draft-irtf-cfrg-aead-limits), with room for the
 * renegotiation to finish before it is reached. */
#define DATA_AEAD_USAGE_LIMIT (((1ull << 36) - 1) / 8 * 7)

/* Install cipher c for key_id (0..7) from key_block, the 256-byte key2 block of section 5.1
 * (proto/kdf.h). is_server: the server sends with key[1] (bytes 128..255) and receives with
 * key[0] (bytes 0..127); a client the reverse (OpenVPN 2.6 ssl.c key direction handling). In
 * each 128-byte half the cipher key is the first keylen bytes and the implicit IV the first 8
 * bytes of the second 64 (the HMAC slot). replay_window: --replay-window n (see
 * packet_id_rx_init()). k must be zeroed or cleared; key_block is copied, the caller keeps and
 * should wipe it. Uses the build's backend (data_crypto_default_backend()) and allocates its two
 * contexts. Returns 0; -PE_UNSUPPORTED for an unknown or NONE cipher; -PE_MALFORMED for
 * key_id > 7 or a direction whose cipher key is all zero (2.6: "Bad dynamic key generated");
 * -PE_CRYPTO if the crypto library fails. On error k is left cleared. */
int data_key_init(struct data_key *k, enum data_cipher c, uint8_t key_id,
                  const uint8_t key_block[256], bool is_server, uint32_t replay_window);

/* data_key_init() on backend b instead of the build's; -PE_UNSUPPORTED for an unknown b. */
int data_key_init_backend(struct data_key *k, enum data_aead_backend b, enum data_cipher c,
                          uint8_t key_id, const uint8_t key_block[256], bool is_server,
                          uint32_t replay_window);

/* data_key_init_backend() with the HMAC digest d of `auth` for a CBC cipher (the two functions
 * above use SHA1, 2.6's default `auth`; d is ignored for AEAD ciphers). For CBC each direction's
 * cipher key is the first keylen bytes of its cipher slot and its HMAC key the first
 * data_digest_len(d) bytes of its HMAC slot (2.6 ssl.c, key2 slices). -PE_UNSUPPORTED also for a
 * CBC cipher with DATA_DIGEST_NONE (2.6 `auth none` with CBC is not offered). */
int data_key_init_auth(struct data_key *k, enum data_aead_backend b, enum data_cipher c,
                       enum data_digest d, uint8_t key_id, const uint8_t key_block[256],
                       bool is_server, uint32_t replay_window);

/* The backend data_key_init() uses: DATA_AEAD_MBEDTLS when built with
 * -DOVPND_DATA_CRYPTO=mbedtls, else DATA_AEAD_OPENSSL. Any thread. */
enum data_aead_backend data_crypto_default_backend(void);

/* Free the cipher contexts and wipe all of k. Safe on a zeroed or already cleared struct. */
void data_key_clear(struct data_key *k);

/* True once the send id reached DATA_TX_ID_RENEGOTIATE: time to start a new key_id. */
bool data_key_tx_wants_renegotiation(const struct data_key *k);

/* True once an AES-GCM key's blocks plus packets in either direction passed
 * DATA_AEAD_USAGE_LIMIT: time to start a new key_id (2.7 ssl.c should_trigger_renegotiation,
 * which checks both directions because a 2.6 peer does not count). Never for CHACHA20-POLY1305,
 * whose limit is far beyond 32-bit packet ids, nor for CBC ciphers. Owner thread. */
bool data_key_usage_limit_reached(const struct data_key *k);

/* Build one data packet into out:
 *   v2: header = ((P_DATA_V2 << 3 | key_id) << 24 | peer_id) as 4 bytes big-endian;
 *   v1: header = the single byte (P_DATA_V1 << 3 | key_id);
 * then packet_id || tag || ciphertext. Takes the next send packet id (the first packet of a key
 * carries 1); the id is used up even if encryption then fails, so a nonce never repeats.
 * out must hold header + DATA_AEAD_OVERHEAD + plain_len bytes. plain must not overlap out, except
 * exactly in place: plain == out + header + DATA_AEAD_OVERHEAD. No allocation.
 * A CBC key writes header || HMAC || IV || CBC(packet_id || plain) instead (proto/data_cbc.h):
 * out must hold header + data_cbc_sealed_len() bytes (at most header + DATA_CBC_OVERHEAD_MAX +
 * plain_len) and plain must not overlap out at all.
 * Returns 0 with *out_len set; -PE_NOSPACE (out too small); -PE_MALFORMED (v2 and peer_id above
 * DATA_PEER_ID_MAX); -PE_STATE (k not initialised, or id 0xFFFFFFFF already sent: renegotiate);
 * -PE_CRYPTO. */
int data_key_seal(struct data_key *k, bool v2, uint32_t peer_id, const uint8_t *plain,
                  size_t plain_len, uint8_t *out, size_t out_cap, size_t *out_len);

/* Open in, one whole P_DATA_V1 or P_DATA_V2 packet (UDP payload or TCP frame without its length)
 * whose key_id selected k, into out. Order: opcode and key_id must match (-PE_MALFORMED), length
 * at least header + 20 (-PE_SHORT), out_cap at least the ciphertext length (-PE_NOSPACE), replay
 * check before decrypting (-PE_MALFORMED for id 0, -PE_REPLAY, -PE_TOO_OLD), then the tag
 * (-PE_AUTH, out wiped); the id is committed to the replay window only after the tag verified.
 * A packet with an empty plaintext is valid (0 bytes out). out must not overlap in, except exactly
 * in place: out == in + header + DATA_AEAD_OVERHEAD. No allocation.
 * A CBC key checks the HMAC first (-PE_SHORT, -PE_AUTH), then decrypts (-PE_MALFORMED for bad
 * padding; out_cap at least the ciphertext length, -PE_NOSPACE), then checks the packet_id it
 * found inside against the replay window and commits it (out is wiped on a replay); out must not
 * overlap in at all. Returns 0 with *out_len set,
 * a -PE_* above, -PE_STATE if k is not initialised, or -PE_CRYPTO. The caller still has to
 * check the peer_id of a P_DATA_V2 (it is authenticated, but not interpreted here). */
int data_key_open(struct data_key *k, const uint8_t *in, size_t in_len, uint8_t *out,
                  size_t out_cap, size_t *out_len);

#endif /* PROTO_DATA_CRYPTO_H */
