/* server/hooks/auth_token.h: auth-gen-token on the server: the secret, the tokens of one VPN
 * session, and what openvpn 2.6 does with a password that is a token (ssl_verify.c
 * verify_user_pass, auth_token.c verify_auth_token, generate_auth_token, add_session_token_env,
 * check_send_auth_token). Token bytes are made and checked by proto/auth_token.h.
 *
 * The flow, as in 2.6: after a username/password check succeeds the server makes a token and
 * pushes it ("auth-token TOKEN" in PUSH_REPLY). The client then sends it as its password at
 * every renegotiation and when it reconnects. A token with the right HMAC for that username,
 * issued less than 2 * renewal-time ago and within the lifetime is accepted without running the
 * script or plugins; any other token is refused ("AUTH_FAILED,SESSION: token expired" when
 * only its time is up, plain AUTH_FAILED otherwise), after which a 2.6 client forgets the token
 * and reconnects with its real password. With `external-auth` the script and plugins run anyway
 * and decide; $session_state tells them how the token fared. Every successful check renews the
 * token (same session id and initial timestamp, new timestamp); at a renegotiation the renewed
 * token goes to the client in "PUSH_REPLY,auth-token TOKEN".
 *
 * Acceptor thread only.
 */
#ifndef SERVER_HOOKS_AUTH_TOKEN_H
#define SERVER_HOOKS_AUTH_TOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/auth_token.h"
#include "server/config/config.h"

/* Source of random bytes, mbedtls_ctr_drbg_random's shape: 0 on success. */
typedef int (*auth_token_rng_fn)(void *ctx, unsigned char *out, size_t len);

/* The server's auth-gen-token settings and secret; read-only after auth_token_ctx_init. */
struct auth_token_ctx {
    bool is_enabled;       /* auth-gen-token */
    bool is_external_auth; /* its external-auth flag */
    bool is_random_secret; /* no auth-gen-token-secret: tokens die with the process */
    uint64_t lifetime_s;   /* 0 = none */
    uint64_t renewal_s;    /* renewal-time (reneg-sec when not given) */
    uint8_t secret[AUTH_TOKEN_SECRET_LEN];
    auth_token_rng_fn rng;
    void *rng_ctx;
};

/* Settings from cfg; the secret from auth-gen-token-secret or, without one, AUTH_TOKEN_SECRET_LEN
 * random bytes from rng (as 2.6 generate_ephemeral_key). rng/rng_ctx are kept for session ids
 * and must outlive ctx. Returns 0, or -EIO when rng fails. Nothing to do (0) when cfg has no
 * auth-gen-token. */
int auth_token_ctx_init(struct auth_token_ctx *ctx, const struct config *cfg, auth_token_rng_fn rng,
                        void *rng_ctx);

/* Wipe the secret. */
void auth_token_ctx_wipe(struct auth_token_ctx *ctx);

/* One VPN session's tokens (2.6 tls_multi auth_token, auth_token_initial), embedded in the
 * session and zeroed at its start. Strings are "" when unset. */
struct auth_token_session {
    char token[AUTH_TOKEN_LEN + 1];   /* the newest token made for the client */
    char initial[AUTH_TOKEN_LEN + 1]; /* the first token of the session: its session id and
                                       * initial timestamp carry over into renewed tokens */
    bool has_token_check;             /* the last password checked was a token */
    unsigned flags;                   /* AUTH_TOKEN_* of that check (0 if none) */
    const char *client_reason;        /* "SESSION: token expired" after an expired token, else
                                       * NULL: with external-auth the AUTH_FAILED text when the
                                       * script refuses without a reason of its own (2.6) */
};

/* Forget s's tokens, wiping them (2.6 wipe_auth_token). */
void auth_token_session_wipe(struct auth_token_session *s);

enum auth_token_verdict {
    AUTH_TOKEN_NOT_USED, /* auth-gen-token off, or the password is no token: check as usual */
    AUTH_TOKEN_ACCEPTED, /* a valid token: skip the script and plugins */
    AUTH_TOKEN_REFUSED,  /* a bad or expired token: refuse the client */
    AUTH_TOKEN_EXTERNAL, /* external-auth: run the script/plugins, which see $session_state */
};

/* Look at the password a client sent (2.6 verify_user_pass, before the script). username
 * (NUL-terminated, writable) is emptied when the token is only valid for the empty username.
 * now_s: wall-clock seconds. *client_reason is the text for "AUTH_FAILED,<text>" ("SESSION:
 * token expired", also kept in s->client_reason) or NULL for a plain AUTH_FAILED; on
 * AUTH_TOKEN_REFUSED s is wiped. log_reason (log_len bytes) says why for the server log in every
 * case but AUTH_TOKEN_NOT_USED. */
enum auth_token_verdict auth_token_check(const struct auth_token_ctx *ctx,
                                         struct auth_token_session *s, char *username,
                                         const char *password, uint64_t now_s,
                                         const char **client_reason, char *log_reason,
                                         size_t log_len);

/* $session_id and $session_state for the script and plugins (2.6 add_session_token_env), after
 * auth_token_check. When the client sent no token a token is made now so that $session_id names
 * the session the coming token will carry. sid gets the 16 base64 characters; *state a static
 * string. Returns 0, -EINVAL when auth-gen-token is off (set nothing), or -EIO. */
int auth_token_env(const struct auth_token_ctx *ctx, struct auth_token_session *s,
                   const char *username, uint64_t now_s,
                   char sid[AUTH_TOKEN_SESSION_ID_B64_LEN + 1], const char **state);

/* The username/password check succeeded (by token or by the script/plugins): keep the client's
 * token if it was valid, then make the renewed token in s->token (2.6 verify_user_pass, success
 * branch, and generate_auth_token). username as checked (after auth_token_check). password is
 * what the client sent. Returns 0, or -EIO when no token could be made (s->token is then ""). No
 * effect when auth-gen-token is off. */
int auth_token_on_success(const struct auth_token_ctx *ctx, struct auth_token_session *s,
                          const char *username, const char *password, uint64_t now_s);

/* A new token for the locked username, for the renewal timer (2.6 check_send_auth_token).
 * Returns 0, -EAGAIN when the session has no token yet (nothing to renew), or -EIO. */
int auth_token_renew(const struct auth_token_ctx *ctx, struct auth_token_session *s,
                     const char *username, uint64_t now_s);

/* The control message that gives the client its renewed token: "PUSH_REPLY,auth-token TOKEN"
 * into out (out_len bytes, at least 128). Returns 0 or -EAGAIN when s has no token. */
int auth_token_push_message(const struct auth_token_session *s, char *out, size_t out_len);

/* `ovpnd --genkey auth-token [FILE]`: write a new key file as `openvpn --genkey auth-token`
 * does (AUTH_TOKEN_KEY_DATA_LEN random bytes from Mbed TLS's CTR-DRBG, PEM text), to path
 * (created or truncated, mode 0600 when created) or, when path is NULL or "", to standard
 * output. Main thread, before anything else. Returns 0 or -errno with errbuf (errbuf_len
 * bytes) saying why. */
int auth_token_genkey(const char *path, char *errbuf, size_t errbuf_len);

#endif /* SERVER_HOOKS_AUTH_TOKEN_H */
