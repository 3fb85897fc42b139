/* server/hooks/auth_token.c: auth-gen-token decisions and per-session tokens (openvpn 2.6
 * src/openvpn/auth_token.c and ssl_verify.c verify_user_pass). */
#include "server/hooks/auth_token.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/platform_util.h>

int auth_token_ctx_init(struct auth_token_ctx *ctx, const struct config *cfg, auth_token_rng_fn rng,
                        void *rng_ctx)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->rng = rng;
    ctx->rng_ctx = rng_ctx;
    if (!cfg->auth.auth_gen_token) {
        return 0;
    }
    ctx->is_enabled = true;
    ctx->is_external_auth = cfg->auth.auth_token_external_auth;
    ctx->lifetime_s = (uint64_t)cfg->auth.auth_token_lifetime_s;
    ctx->renewal_s = (uint64_t)(cfg->auth.auth_token_renewal_s > 0 ? cfg->auth.auth_token_renewal_s
                                                                   : cfg->timers.reneg_sec);
    if (cfg->auth.has_auth_token_secret) {
        memcpy(ctx->secret, cfg->auth.auth_token_secret, sizeof(ctx->secret));
        return 0;
    }
    ctx->is_random_secret = true;
    if (rng(rng_ctx, ctx->secret, sizeof(ctx->secret)) != 0) {
        return -EIO;
    }
    return 0;
}

void auth_token_ctx_wipe(struct auth_token_ctx *ctx)
{
    mbedtls_platform_zeroize(ctx->secret, sizeof(ctx->secret));
}

void auth_token_session_wipe(struct auth_token_session *s)
{
    mbedtls_platform_zeroize(s, sizeof(*s));
}

/* 2.6 generate_auth_token: the session id and initial timestamp of the session's first token,
 * or new ones; the HMAC over "" when the last token was only valid for the empty username. */
static int generate(const struct auth_token_ctx *ctx, struct auth_token_session *s,
                    const char *username, uint64_t now_s)
{
    uint8_t sid[AUTH_TOKEN_SESSION_ID_LEN];
    struct auth_token_info info;
    uint64_t initial_s = now_s;
    int err = 0;

    if (s->initial[0] && auth_token_decode(s->initial, &info) == 0) {
        memcpy(sid, info.session_id, sizeof(sid));
        initial_s = info.initial_s;
    } else if (ctx->rng(ctx->rng_ctx, sid, sizeof(sid)) != 0) {
        err = -EIO;
    }
    if (!err &&
        auth_token_make(ctx->secret, (s->flags & AUTH_TOKEN_VALID_EMPTYUSER) ? "" : username, sid,
                        initial_s, now_s, s->token) != 0) {
        err = -EIO;
    }
    mbedtls_platform_zeroize(sid, sizeof(sid));
    if (err) {
        s->token[0] = '\0';
        return err;
    }
    if (!s->initial[0]) {
        memcpy(s->initial, s->token, sizeof(s->initial));
    }
    return 0;
}

enum auth_token_verdict auth_token_check(const struct auth_token_ctx *ctx,
                                         struct auth_token_session *s, char *username,
                                         const char *password, uint64_t now_s,
                                         const char **client_reason, char *log_reason,
                                         size_t log_len)
{
    struct auth_token_info info;
    unsigned flags = 0;
    bool is_decodable;

    *client_reason = NULL;
    log_reason[0] = '\0';
    s->has_token_check = false;
    s->flags = 0;
    s->client_reason = NULL;
    if (!ctx->is_enabled || !auth_token_is_token(password)) {
        return AUTH_TOKEN_NOT_USED;
    }
    s->has_token_check = true;
    is_decodable = auth_token_decode(password, &info) == 0;
    if (!is_decodable) {
        snprintf(log_reason, log_len, "auth-token has the wrong size or is not base64");
    } else {
        flags = auth_token_verify(ctx->secret, username, password, now_s, ctx->renewal_s,
                                  ctx->lifetime_s, &info);
        if (flags == 0) {
            snprintf(log_reason, log_len,
                     "auth-token HMAC check failed (another server's secret, "
                     "or the server restarted without auth-gen-token-secret)");
        } else if (flags & AUTH_TOKEN_EXPIRED) {
            /* 2.6 tells the client so, whatever else is wrong with the token. */
            *client_reason = "SESSION: token expired";
            snprintf(log_reason, log_len,
                     "auth-token expired (issued at %" PRIu64 ", first issued at %" PRIu64
                     ", now %" PRIu64 "; renewal-time %" PRIu64 " s, lifetime %" PRIu64 " s)",
                     info.issued_s, info.initial_s, now_s, ctx->renewal_s, ctx->lifetime_s);
        } else {
            snprintf(log_reason, log_len, "auth-token valid%s",
                     (flags & AUTH_TOKEN_VALID_EMPTYUSER) ? " for the empty username only" : "");
        }
    }
    if (flags && s->initial[0] && !auth_token_same_session(s->initial, password)) {
        snprintf(log_reason, log_len, "session id in the auth-token changed");
        flags = 0;
    }
    if (flags & AUTH_TOKEN_VALID_EMPTYUSER) {
        username[0] = '\0';
    }
    if (!s->initial[0] && (flags & AUTH_TOKEN_HMAC_OK)) {
        /* The first good token seen in this session: renewed tokens keep its id and start time.
         * (2.6.14 kept any token here, and crashed on a malformed one with external-auth,
         * CVE-2026-13122; Debian's fixed 2.6.14 and later releases keep only a verified one.) */
        snprintf(s->initial, sizeof(s->initial), "%s", password);
    }
    s->flags = flags;
    s->client_reason = *client_reason;
    if (ctx->is_external_auth) {
        return AUTH_TOKEN_EXTERNAL;
    }
    if (flags == AUTH_TOKEN_HMAC_OK) {
        return AUTH_TOKEN_ACCEPTED;
    }
    auth_token_session_wipe(s);
    return AUTH_TOKEN_REFUSED;
}

int auth_token_env(const struct auth_token_ctx *ctx, struct auth_token_session *s,
                   const char *username, uint64_t now_s,
                   char sid[AUTH_TOKEN_SESSION_ID_B64_LEN + 1], const char **state)
{
    const char *source;
    int err;

    if (!ctx->is_enabled) {
        return -EINVAL;
    }
    *state = auth_token_session_state(s->has_token_check, s->flags);
    if ((s->flags & AUTH_TOKEN_HMAC_OK) && !(s->flags & AUTH_TOKEN_EXPIRED) && s->initial[0]) {
        source = s->initial; /* the client's token; same session id */
    } else {
        if (!s->initial[0]) {
            err = generate(ctx, s, username, now_s);
            if (err) {
                return err;
            }
        }
        source = s->initial;
    }
    return auth_token_session_id_text(source, sid) == 0 ? 0 : -EIO;
}

int auth_token_on_success(const struct auth_token_ctx *ctx, struct auth_token_session *s,
                          const char *username, const char *password, uint64_t now_s)
{
    if (!ctx->is_enabled) {
        return 0;
    }
    if (!s->token[0] && s->has_token_check && (s->flags & AUTH_TOKEN_HMAC_OK) &&
        !(s->flags & AUTH_TOKEN_EXPIRED)) {
        snprintf(s->token, sizeof(s->token), "%s", password);
    }
    return generate(ctx, s, username, now_s);
}

int auth_token_renew(const struct auth_token_ctx *ctx, struct auth_token_session *s,
                     const char *username, uint64_t now_s)
{
    if (!ctx->is_enabled || !s->initial[0] || !s->token[0]) {
        return -EAGAIN;
    }
    return generate(ctx, s, username, now_s);
}

/* Write all of text to fd. 0 or -errno. */
static int write_all(int fd, const char *text, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, text, len);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return n < 0 ? -errno : -EIO;
        }
        text += n;
        len -= (size_t)n;
    }
    return 0;
}

int auth_token_genkey(const char *path, char *errbuf, size_t errbuf_len)
{
    static const char pers[] = "ovpnd genkey auth-token";
    uint8_t data[AUTH_TOKEN_KEY_DATA_LEN];
    char text[AUTH_TOKEN_KEY_TEXT_MAX];
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context drbg;
    size_t len = 0;
    int fd = STDOUT_FILENO, err = 0;

    mbedtls_entropy_init(&entropy);
    mbedtls_ctr_drbg_init(&drbg);
    if (mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &entropy, (const unsigned char *)pers,
                              sizeof(pers) - 1) != 0 ||
        mbedtls_ctr_drbg_random(&drbg, data, sizeof(data)) != 0 ||
        auth_token_key_write(data, text, sizeof(text), &len) != 0) {
        snprintf(errbuf, errbuf_len, "cannot make a random key");
        err = -EIO;
        goto out;
    }
    if (path != NULL && path[0] != '\0') {
        fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
        if (fd < 0) {
            err = -errno;
            snprintf(errbuf, errbuf_len, "cannot open %s for writing: %s", path, strerror(-err));
            goto out;
        }
    }
    err = write_all(fd, text, len);
    if (fd != STDOUT_FILENO && close(fd) != 0 && err == 0) {
        err = -errno;
    }
    if (err) {
        snprintf(errbuf, errbuf_len, "cannot write %s: %s", fd == STDOUT_FILENO ? "the key" : path,
                 strerror(-err));
    }
out:
    mbedtls_platform_zeroize(data, sizeof(data));
    mbedtls_platform_zeroize(text, sizeof(text));
    mbedtls_ctr_drbg_free(&drbg);
    mbedtls_entropy_free(&entropy);
    return err;
}

int auth_token_push_message(const struct auth_token_session *s, char *out, size_t out_len)
{
    int n;

    if (!s->token[0]) {
        return -EAGAIN;
    }
    n = snprintf(out, out_len, "PUSH_REPLY,auth-token %s", s->token);
    return n > 0 && (size_t)n < out_len ? 0 : -ENOSPC;
}
