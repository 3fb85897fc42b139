/* proto/auth_token.h: the session tokens of `auth-gen-token`, byte for byte as openvpn 2.6 makes
 * and checks them (src/openvpn/auth_token.c), and the key file `openvpn --genkey auth-token`
 * writes.
 *
 * A token is the text "SESS_ID_AT_" followed by the base64 (RFC 4648, no line breaks, no padding)
 * of 60 bytes:
 *   session_id[12]           random, fixed for the life of the VPN session
 *   initial_timestamp[8]     big-endian seconds since the epoch of the first token
 *   timestamp[8]             big-endian seconds since the epoch of this token
 *   hmac[32]                 HMAC-SHA256(secret, username || session_id || initial_timestamp
 *                            || timestamp), the username without its NUL
 * so a token is always AUTH_TOKEN_LEN (91) characters. The server gives it to the client in
 * PUSH_REPLY ("auth-token TOKEN") and the client sends it as its password from then on.
 *
 * Pure functions: time comes in as seconds, randomness as bytes. Any thread; no allocation.
 */
#ifndef PROTO_AUTH_TOKEN_H
#define PROTO_AUTH_TOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUTH_TOKEN_PREFIX "SESS_ID_AT_" /* auth_token.h SESSION_ID_PREFIX */
#define AUTH_TOKEN_PREFIX_LEN 11
#define AUTH_TOKEN_SESSION_ID_LEN 12     /* random bytes naming the session */
#define AUTH_TOKEN_SESSION_ID_B64_LEN 16 /* the same in base64: the token's characters 11..26 */
#define AUTH_TOKEN_HMAC_LEN 32           /* HMAC-SHA256 */
#define AUTH_TOKEN_DATA_LEN 60           /* session id, two timestamps, HMAC */
#define AUTH_TOKEN_LEN 91                /* prefix and 80 base64 characters, without NUL */
#define AUTH_TOKEN_SECRET_LEN 32         /* HMAC-SHA256 key */

_Static_assert(AUTH_TOKEN_DATA_LEN == AUTH_TOKEN_SESSION_ID_LEN + 16 + AUTH_TOKEN_HMAC_LEN,
               "token layout");
_Static_assert(AUTH_TOKEN_DATA_LEN % 3 == 0, "base64 of the token data has no padding");
_Static_assert(AUTH_TOKEN_LEN == AUTH_TOKEN_PREFIX_LEN + AUTH_TOKEN_DATA_LEN / 3 * 4, "length");

/* The result flags of auth_token_verify(), with openvpn 2.6's values (ssl_common.h). */
#define AUTH_TOKEN_HMAC_OK 0x1         /* the HMAC is right (for username or for "") */
#define AUTH_TOKEN_EXPIRED 0x2         /* right HMAC, but out of the renewal window or lifetime */
#define AUTH_TOKEN_VALID_EMPTYUSER 0x4 /* right only with the empty username (openvpn3 clients) */

/* What auth_token_verify() read from a token. */
struct auth_token_info {
    uint8_t session_id[AUTH_TOKEN_SESSION_ID_LEN];
    uint64_t initial_s; /* initial_timestamp */
    uint64_t issued_s;  /* timestamp */
};

/* Whether password has the token prefix: then a server with auth-gen-token checks it as a token
 * and never hands it to the script or plugins (2.6.14 is_auth_token compares only the prefix, in
 * constant time; a wrong length then fails verification). password is NUL-terminated. */
bool auth_token_is_token(const char *password);

/* Make a token for username (NUL-terminated, may be "") into out (AUTH_TOKEN_LEN + 1 bytes, NUL
 * terminated) with secret, session_id, initial_s and issued_s (seconds since the epoch; a new
 * session has initial_s == issued_s). As 2.6 generate_auth_token. Returns 0 or -PE_CRYPTO. */
int auth_token_make(const uint8_t secret[AUTH_TOKEN_SECRET_LEN], const char *username,
                    const uint8_t session_id[AUTH_TOKEN_SESSION_ID_LEN], uint64_t initial_s,
                    uint64_t issued_s, char out[AUTH_TOKEN_LEN + 1]);

/* Read token (NUL-terminated, prefix included) without checking its HMAC into *info. Returns 0
 * or -PE_MALFORMED (no prefix, not exactly 80 base64 characters after it). */
int auth_token_decode(const char *token, struct auth_token_info *info);

/* Check token as 2.6 verify_auth_token does and return its AUTH_TOKEN_* flags; 0 means invalid
 * (malformed or a wrong HMAC). The HMAC is tried with username, then with "" (VALID_EMPTYUSER,
 * the caller then treats the username as ""). EXPIRED is added when now_s is before issued_s or
 * not before issued_s + 2 * renewal_s (the token was not renewed in time), when issued_s is
 * before initial_s, or when lifetime_s > 0 and now_s > initial_s + lifetime_s. The HMAC is
 * compared in constant time. *info (may be NULL) gets the decoded fields when the result is not
 * 0. renewal_s and lifetime_s in seconds. */
unsigned auth_token_verify(const uint8_t secret[AUTH_TOKEN_SECRET_LEN], const char *username,
                           const char *token, uint64_t now_s, uint64_t renewal_s,
                           uint64_t lifetime_s, struct auth_token_info *info);

/* Whether tokens a and b (NUL-terminated) carry the same session id: the prefix and the first
 * AUTH_TOKEN_SESSION_ID_B64_LEN base64 characters compared in constant time, as 2.6 does to
 * refuse a token from another session. False when either is shorter. */
bool auth_token_same_session(const char *a, const char *b);

/* The session id of token as the text scripts get in $session_id: its 16 base64 characters,
 * into out (AUTH_TOKEN_SESSION_ID_B64_LEN + 1 bytes). Returns 0 or -PE_MALFORMED (too short). */
int auth_token_session_id_text(const char *token, char out[AUTH_TOKEN_SESSION_ID_B64_LEN + 1]);

/* $session_state for scripts (2.6 add_session_token_env): "Initial" when the client sent no
 * token (has_token false), else by flags: "Authenticated", "Expired", "AuthenticatedEmptyUser",
 * "ExpiredEmptyUser", or "Invalid" without AUTH_TOKEN_HMAC_OK. Static string. */
const char *auth_token_session_state(bool has_token, unsigned flags);

/* The PEM label of the key file (crypto.c/auth_token.c auth_token_pem_name). */
#define AUTH_TOKEN_PEM_NAME "OpenVPN auth-token server key"
#define AUTH_TOKEN_KEY_DATA_LEN 128 /* one struct key: cipher[64] then hmac[64] */
#define AUTH_TOKEN_KEY_HMAC_OFF 64  /* the secret is the first 32 bytes of the hmac half */

/* Parse the text of a file written by `openvpn --genkey auth-token` (text_len bytes, need not be
 * NUL-terminated): lines before "-----BEGIN OpenVPN auth-token server key-----" are ignored (as
 * OpenSSL's PEM reader does), then base64 lines up to the matching END line. The block must hold
 * at least AUTH_TOKEN_KEY_DATA_LEN bytes (2.6 reads one struct key and ignores the rest); the
 * HMAC-SHA256 key 2.6 uses is bytes 64..95, which go into secret. Lines end with "\n" or "\r\n".
 * Returns 0, or -PE_MALFORMED with *err_line (1-based; 0 when the problem is the whole file) and
 * *why (a static string) saying what is wrong. secret is zeroed on failure; the decoded bytes are
 * wiped before returning. */
int auth_token_key_parse(const char *text, size_t text_len, uint8_t secret[AUTH_TOKEN_SECRET_LEN],
                         size_t *err_line, const char **why);

#define AUTH_TOKEN_KEY_TEXT_MAX 320 /* bytes of a key file written by auth_token_key_write */

/* The text of a key file for data (AUTH_TOKEN_KEY_DATA_LEN bytes, normally random) as
 * `openvpn --genkey auth-token` writes it (crypto.c write_pem_key_file, OpenSSL's PEM writer):
 * the BEGIN line, the base64 of data in lines of 64 characters, the END line, each ending in
 * "\n". Into out (cap bytes, AUTH_TOKEN_KEY_TEXT_MAX is enough), NUL-terminated; *out_len gets
 * the length. Returns 0 or -PE_NOSPACE. */
int auth_token_key_write(const uint8_t data[AUTH_TOKEN_KEY_DATA_LEN], char *out, size_t cap,
                         size_t *out_len);

#endif /* PROTO_AUTH_TOKEN_H */
