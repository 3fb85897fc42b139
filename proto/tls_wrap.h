/* proto/tls_wrap.h: control-channel wrapping with tls-auth (HMAC) or tls-crypt (AES-256-CTR +
 * HMAC-SHA256), keyed from an "OpenVPN Static key V1" key2 (proto/static_key.h).
 *
 * An unwrapped control packet is byte0 || own session_id(8) || body. The wrapper inserts its
 * replay id (packet_id u32 || net_time u32) and an HMAC after the session id, and tls-crypt
 * encrypts the body:
 *   tls-auth:  byte0 || session_id || HMAC(H) || packet_id || net_time || body
 *              HMAC input order: packet_id || net_time || byte0 || session_id || body
 *   tls-crypt: byte0 || session_id || packet_id || net_time || tag(32) || AES-CTR(body)
 *              tag = HMAC-SHA256(Ka, byte0 || session_id || packet_id || net_time || body),
 *              the AES-256-CTR initial counter block is tag[0..16)
 * (OpenVPN src/openvpn/ssl_pkt.c write_control_auth()/read_control_auth()/swap_hmac(),
 * crypto.c openvpn_encrypt_v1(), tls_crypt.c tls_crypt_wrap()/tls_crypt_unwrap().)
 *
 * The same context serves tls-crypt-v2 (init with the client key Kc) and the dynamic tls-crypt
 * key of renegotiations (init with the exported key2); stripping the WKc is not done here.
 * Replay checking is the caller's: open() only reports packet_id and net_time.
 */
#ifndef PROTO_TLS_WRAP_H
#define PROTO_TLS_WRAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mbedtls/md.h>

#include "proto/static_key.h"

#define TLS_WRAP_HEAD_LEN 9      /* byte0 || session_id, left in clear in front */
#define TLS_WRAP_REPLAY_LEN 8    /* packet_id (u32) || net_time (u32), long form */
#define TLS_WRAP_MAX_HMAC_LEN 64 /* SHA512; also the size of a key2 hmac slot */
#define TLS_CRYPT_TAG_LEN 32     /* HMAC-SHA256 */
#define TLS_CRYPT_KEY_LEN 32     /* AES-256 key and HMAC-SHA256 key, each */
#define TLS_CRYPT_OVERHEAD (TLS_WRAP_REPLAY_LEN + TLS_CRYPT_TAG_LEN) /* 40 */
/* Largest value tls_wrap_overhead() returns (tls-auth with SHA512). */
#define TLS_WRAP_MAX_OVERHEAD (TLS_WRAP_MAX_HMAC_LEN + TLS_WRAP_REPLAY_LEN)

enum tls_wrap_mode { TLS_WRAP_NONE = 0, TLS_WRAP_AUTH, TLS_WRAP_CRYPT };

/* Keys for one side of one session, chosen at init. Read-only afterwards: seal/open take it
 * const and keep all per-call crypto state on their own stack, so any number of threads may use
 * one context at once. Caller-owned storage; call tls_wrap_wipe() when done. */
struct tls_wrap_ctx {
    enum tls_wrap_mode mode;
    const mbedtls_md_info_t *md_info; /* HMAC digest (static mbedTLS table); NULL for NONE */
    size_t hmac_len;                  /* H: HMAC output bytes = HMAC key bytes used */
    uint8_t send_hmac_key[TLS_WRAP_MAX_HMAC_LEN];
    uint8_t recv_hmac_key[TLS_WRAP_MAX_HMAC_LEN];
    uint8_t send_cipher_key[TLS_CRYPT_KEY_LEN]; /* tls-crypt only */
    uint8_t recv_cipher_key[TLS_CRYPT_KEY_LEN]; /* tls-crypt only */
};

/* AES-256-CTR over len bytes with key (32 bytes), the full 16-byte initial counter block taken
 * from iv (tls-crypt and tls-crypt-v2's wrapped client keys use the first 16 bytes of their
 * HMAC tag). in and out may be the same buffer. 0 or -PE_CRYPTO. Any thread. */
int tls_wrap_aes256_ctr(const uint8_t key[TLS_CRYPT_KEY_LEN], const uint8_t iv[16],
                        const uint8_t *in, uint8_t *out, size_t len);

/* Set up ctx (caller-owned, any prior contents overwritten) for one side of a session.
 *
 * key2: the 256-byte key file contents (proto/static_key.h); copied, the caller keeps it.
 * key_direction (tls-auth only): -1 = none, both directions use key[0].hmac; 0 = send with
 * key[0].hmac, receive with key[1].hmac ("tls-auth FILE 0", "key-direction 0"); 1 = the reverse.
 * The direction does not depend on is_server for tls-auth (openvpn: key_direction_state_init()
 * in crypto.c). For tls-crypt key_direction and auth_digest are ignored: the server sends with
 * key[0] and receives with key[1], a client the inverse (tls_crypt.c tls_crypt_init_key());
 * AES key = first 32 bytes of the cipher slot, HMAC key = first 32 bytes of the hmac slot.
 * auth_digest (tls-auth only, "--auth"): "SHA1" (the default when NULL), "SHA224", "SHA256",
 * "SHA384" or "SHA512", case-insensitive; the HMAC key is the first H bytes of the hmac slot.
 * For TLS_WRAP_NONE key2 may be NULL.
 *
 * Returns 0, -PE_UNSUPPORTED (unknown digest), -PE_MALFORMED (bad mode or key_direction, NULL
 * key2). On error ctx is wiped. Any thread.
 */
int tls_wrap_init(struct tls_wrap_ctx *ctx, enum tls_wrap_mode mode,
                  const uint8_t key2[STATIC_KEY_LEN], int key_direction, const char *auth_digest,
                  bool is_server);

/* dyn-tls-crypt (openvpn 2.6, tls_crypt.c tls_session_generate_dynamic_tls_crypt_key): the
 * TLS exporter label of the key that wraps a session's renegotiations (control packets with
 * key_id > 0) once both sides announced it (IV_PROTO_DYN_TLS_CRYPT, pushed as
 * `protocol-flags ... dyn-tls-crypt`). */
#define TLS_WRAP_DYN_LABEL "EXPORTER-OpenVPN-dynamic-tls-crypt"

/* Set up ctx as tls-crypt with a session's dynamic key: the STATIC_KEY_LEN bytes the TLS
 * exporter gave for TLS_WRAP_DYN_LABEL (ekm), XORed byte for byte with the key that wraps the
 * session's first handshake when there is one (wrap_key2: the tls-auth or tls-crypt key file,
 * or the tls-crypt-v2 client key Kc; NULL without tls-auth / tls-crypt), as 2.6 XORs its key2
 * structs; directions as tls_wrap_init's for tls-crypt (is_server). Neither input is kept.
 * Returns what tls_wrap_init returns. Any thread. */
int tls_wrap_init_dyn(struct tls_wrap_ctx *ctx, const uint8_t ekm[STATIC_KEY_LEN],
                      const uint8_t *wrap_key2, bool is_server);

/* The bytes of a key2 that a tls-crypt context (tls_wrap_init with TLS_WRAP_CRYPT and the same
 * is_server) uses, in their places, the others zero: enough to XOR it into a dyn-tls-crypt key,
 * whose context uses the same bytes (the tls-crypt-v2 client key Kc is kept only as a
 * context). key2: STATIC_KEY_LEN bytes, caller-owned. -PE_MALFORMED when ctx is not tls-crypt.
 * Any thread. */
int tls_wrap_crypt_key2(const struct tls_wrap_ctx *ctx, bool is_server,
                        uint8_t key2[STATIC_KEY_LEN]);

/* Zeroize all of ctx with mbedtls_platform_zeroize (it then reads as TLS_WRAP_NONE; init it
 * again before further use). Any thread, once no other thread uses ctx. */
void tls_wrap_wipe(struct tls_wrap_ctx *ctx);

/* Bytes the wrapper adds to an unwrapped control packet: 0 for NONE, H + 8 for tls-auth
 * (28 with SHA1), 8 + 32 = 40 for tls-crypt. (openvpn reserves 16 more for tls-crypt when it
 * sizes buffers; no padding is ever sent.) */
size_t tls_wrap_overhead(const struct tls_wrap_ctx *ctx);

/* Wrap one control packet for sending.
 *
 * in: in_len bytes = byte0 || own session_id(8) || body (body may be empty). packet_id and
 * net_time are the wrapper's replay id (starts at 1 per session, never 0) and the unix time in
 * seconds when that counter was started; they are written as given. Both are ignored for NONE,
 * which copies in to out.
 * out: out_cap bytes, caller-owned; receives in_len + tls_wrap_overhead(ctx) bytes, *out_len is
 * set to that on success (0 on failure). out may overlap in (in-place sealing is fine).
 *
 * Returns 0, -PE_SHORT (in_len < 9), -PE_NOSPACE (out_cap too small; nothing written),
 * -PE_CRYPTO (mbedTLS failed; out is zeroed). Any thread; ctx is not modified.
 */
int tls_wrap_seal(const struct tls_wrap_ctx *ctx, uint32_t packet_id, uint32_t net_time,
                  const uint8_t *in, size_t in_len, uint8_t *out, size_t out_cap, size_t *out_len);

/* Verify and unwrap one received control packet.
 *
 * in: the in_len bytes of one datagram (or one TCP frame without its length prefix); untrusted.
 * out: out_cap bytes, caller-owned, must not overlap in; receives byte0 || session_id || body,
 * in_len - tls_wrap_overhead(ctx) bytes, length in *out_len (0 on failure). *packet_id and
 * *net_time receive the replay id and time from the packet on success (0 for NONE and on
 * failure); the caller must run its replay check on them before acting on the packet. The HMAC
 * or tag is compared in constant time. On failure out holds no unauthenticated plaintext.
 *
 * Returns 0, -PE_SHORT (in_len < 9 + overhead), -PE_NOSPACE (out_cap too small), -PE_AUTH (HMAC
 * or tag mismatch: drop silently), -PE_CRYPTO (mbedTLS failed). Any thread; ctx is not modified.
 */
int tls_wrap_open(const struct tls_wrap_ctx *ctx, const uint8_t *in, size_t in_len, uint8_t *out,
                  size_t out_cap, size_t *out_len, uint32_t *packet_id, uint32_t *net_time);

#endif /* PROTO_TLS_WRAP_H */
