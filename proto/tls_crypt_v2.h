/* proto/tls_crypt_v2.h: tls-crypt-v2 per-client control-channel keys: the key file formats, the
 * wrapped client key (WKc) and its metadata, the early-negotiation signals of the client's
 * P_CONTROL_HARD_RESET_CLIENT_V3.
 *
 * Facts from OpenVPN 2.6 doc/tls-crypt-v2.txt, src/openvpn/tls_crypt.[ch], crypto.c
 * (read_pem_key_file/write_pem_key_file), ssl_pkt.h (EARLY_NEG_*, TLV_TYPE_EARLY_NEG_FLAGS) and
 * mudp.c; see also the project's protocol notes, section 3.4 and 3.6:
 *   server key Ks: 128 bytes (one struct key): AES-256 key = bytes 0..31, HMAC-SHA256 key =
 *     bytes 64..95, PEM "OpenVPN tls-crypt-v2 server key"
 *   client key: PEM "OpenVPN tls-crypt-v2 client key" of Kc (256 bytes, a key2 used as a
 *     tls-crypt key) || WKc
 *   WKc = T || AES-256-CTR(Ke, IV = T[0..16), Kc || metadata) || len(u16, the whole WKc),
 *     T = HMAC-SHA256(Ka, len || Kc || metadata); at most 1024 bytes
 *   metadata = type (0 user, 1 timestamp) || data; the timestamp is a big-endian u64 unix time
 * Pure: no I/O; randomness comes from the caller.
 */
#ifndef PROTO_TLS_CRYPT_V2_H
#define PROTO_TLS_CRYPT_V2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/static_key.h"

#define TLS_CRYPT_V2_SERVER_KEY_LEN 128            /* struct key: cipher[64] || hmac[64] */
#define TLS_CRYPT_V2_CLIENT_KEY_LEN STATIC_KEY_LEN /* Kc: 256 bytes */
#define TLS_CRYPT_V2_TAG_LEN 32
#define TLS_CRYPT_V2_MAX_WKC_LEN 1024
#define TLS_CRYPT_V2_MIN_WKC_LEN (TLS_CRYPT_V2_TAG_LEN + TLS_CRYPT_V2_CLIENT_KEY_LEN + 2)
#define TLS_CRYPT_V2_MAX_METADATA_LEN (TLS_CRYPT_V2_MAX_WKC_LEN - TLS_CRYPT_V2_MIN_WKC_LEN) /*734*/
#define TLS_CRYPT_V2_METADATA_TYPE_USER 0x00
#define TLS_CRYPT_V2_METADATA_TYPE_TIMESTAMP 0x01
#define TLS_CRYPT_V2_SERVER_PEM "OpenVPN tls-crypt-v2 server key"
#define TLS_CRYPT_V2_CLIENT_PEM "OpenVPN tls-crypt-v2 client key"
/* A client that sets these bits in the replay packet_id of its V3 reset supports early
 * negotiation (2.6 EARLY_NEG_START, tested under EARLY_NEG_MASK 0xff000000). */
#define TLS_CRYPT_V2_EARLY_NEG_START 0x0f000000u
#define TLS_CRYPT_V2_EARLY_NEG_TLV_LEN 6 /* type u16 || length u16 || flags u16 */

/* The server key, split into its two used parts. Caller-owned; wipe with
 * tls_crypt_v2_server_key_wipe(). Read-only once made: any thread may use it concurrently. */
struct tls_crypt_v2_server_key {
    uint8_t cipher_key[32]; /* AES-256-CTR */
    uint8_t hmac_key[32];   /* HMAC-SHA256 */
};

/* Decode a PEM block "-----BEGIN <name>-----" .. "-----END <name>-----" from text (text_len
 * bytes, need not be NUL-terminated; text before BEGIN and after END is ignored) into out
 * (out_cap bytes, caller-owned), its length in *out_len. Blanks and line ends inside are
 * skipped. Returns 0, -PE_MALFORMED (no such block, bad base64), -PE_NOSPACE. No allocation. */
int tls_crypt_v2_pem_decode(const char *name, const char *text, size_t text_len, uint8_t *out,
                            size_t out_cap, size_t *out_len);

/* Encode data (len bytes) as a PEM block named name, 64 base64 characters a line, each line
 * ending in "\n", as openvpn writes its key files, into out (out_cap bytes, NUL-terminated;
 * *out_len excludes the NUL). Returns 0 or -PE_NOSPACE. */
int tls_crypt_v2_pem_encode(const char *name, const uint8_t *data, size_t len, char *out,
                            size_t out_cap, size_t *out_len);

/* The server key from the 128 raw bytes of its file (Ke = 0..31, Ka = 64..95). */
void tls_crypt_v2_server_key_init(struct tls_crypt_v2_server_key *key,
                                  const uint8_t raw[TLS_CRYPT_V2_SERVER_KEY_LEN]);

/* Parse the text of a server key file (or inline block) into key. 0 or -PE_MALFORMED (not a
 * "OpenVPN tls-crypt-v2 server key" PEM block of exactly 128 bytes; key is wiped then). */
int tls_crypt_v2_server_key_parse(const char *text, size_t text_len,
                                  struct tls_crypt_v2_server_key *key);

/* Zeroize key. */
void tls_crypt_v2_server_key_wipe(struct tls_crypt_v2_server_key *key);

/* Parse the text of a client key file: Kc into kc, WKc into wkc (wkc_cap bytes; at least
 * TLS_CRYPT_V2_MAX_WKC_LEN is always enough), its length in *wkc_len. 0 or -PE_MALFORMED (wrong
 * PEM name, fewer than 256 + TLS_CRYPT_V2_MIN_WKC_LEN bytes, more than 256 + 1024, or a WKc
 * whose trailing length is not its own), -PE_NOSPACE. */
int tls_crypt_v2_client_key_parse(const char *text, size_t text_len,
                                  uint8_t kc[TLS_CRYPT_V2_CLIENT_KEY_LEN], uint8_t *wkc,
                                  size_t wkc_cap, size_t *wkc_len);

/* Wrap Kc and metadata (md_len bytes, the type byte first; at most
 * TLS_CRYPT_V2_MAX_METADATA_LEN) with the server key into wkc (wkc_cap bytes), *wkc_len = 32 +
 * 256 + md_len + 2. Returns 0, -PE_MALFORMED (metadata too long or empty), -PE_NOSPACE,
 * -PE_CRYPTO. Any thread. */
int tls_crypt_v2_wrap(const struct tls_crypt_v2_server_key *key,
                      const uint8_t kc[TLS_CRYPT_V2_CLIENT_KEY_LEN], const uint8_t *metadata,
                      size_t md_len, uint8_t *wkc, size_t wkc_cap, size_t *wkc_len);

/* Authenticate and decrypt a WKc (untrusted, wkc_len bytes) with the server key: Kc into kc,
 * the metadata (type byte first) into metadata (md_cap bytes; TLS_CRYPT_V2_MAX_METADATA_LEN is
 * always enough), its length in *md_len. The tag is compared in constant time; on any failure
 * kc and metadata hold nothing from the WKc.
 * Returns 0, -PE_SHORT (shorter than TLS_CRYPT_V2_MIN_WKC_LEN), -PE_MALFORMED (longer than 1024
 * or its trailing length is not its length), -PE_AUTH (wrong server key or altered),
 * -PE_NOSPACE, -PE_CRYPTO. Any thread; no allocation. */
int tls_crypt_v2_unwrap(const struct tls_crypt_v2_server_key *key, const uint8_t *wkc,
                        size_t wkc_len, uint8_t kc[TLS_CRYPT_V2_CLIENT_KEY_LEN], uint8_t *metadata,
                        size_t md_cap, size_t *md_len);

/* Where the WKc appended to a received P_CONTROL_HARD_RESET_CLIENT_V3 or P_CONTROL_WKC_V1
 * (pkt, pkt_len bytes, untrusted) begins: its last two bytes give the WKc's length L; *wkc_off =
 * pkt_len - L. The packet before it must keep at least its first byte. Returns 0, -PE_SHORT,
 * -PE_MALFORMED (L < TLS_CRYPT_V2_MIN_WKC_LEN, L > 1024, or L >= pkt_len). */
int tls_crypt_v2_locate_wkc(const uint8_t *pkt, size_t pkt_len, size_t *wkc_off);

/* Whether the wrap packet_id of a client's V3 reset announces early negotiation (2.6 mudp.c). */
bool tls_crypt_v2_is_early_neg(uint32_t packet_id);

/* The early-negotiation TLV a server puts in its HARD_RESET_SERVER_V2 to an early-negotiation
 * client: EARLY_NEG_FLAGS (type 1, length 2) with RESEND_WKC (1): 00 01 00 02 00 01. */
void tls_crypt_v2_early_neg_tlv(uint8_t out[TLS_CRYPT_V2_EARLY_NEG_TLV_LEN]);

/* The creation time in a timestamp metadata (type byte 1, then a big-endian u64 unix time in
 * seconds): into *unix_s. 0 or -PE_MALFORMED (another type, or shorter than 9 bytes). */
int tls_crypt_v2_metadata_timestamp(const uint8_t *metadata, size_t md_len, int64_t *unix_s);

#endif /* PROTO_TLS_CRYPT_V2_H */
