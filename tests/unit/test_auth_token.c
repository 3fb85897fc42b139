/* tests/unit/test_auth_token.c: auth-gen-token tokens (proto/auth_token.c), their key file, and
 * the server's decisions on them (server/hooks/auth_token.c).
 *
 * tests/unit/data/config/auth-token.key was written by `openvpn --genkey auth-token` (OpenVPN
 * 2.6.14). TOKEN_26_FIRST and TOKEN_26_RENEWED were made by an openvpn 2.6.14 server with that
 * key for username "alice" (its verb 7 log, "Generated token for client"): the first token of
 * the session and the one it renewed 11 s later at a renegotiation. Making them again byte for
 * byte shows the layout, the HMAC input and the key bytes match 2.6.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mbedtls/base64.h>

#include "proto/auth_token.h"
#include "proto/errors.h"
#include "server/hooks/auth_token.h"
#include "server/config/config.h"

#define KEY_FILE OVPND_SOURCE_DIR "/tests/unit/data/config/auth-token.key"
#define TOKEN_26_FIRST                                                                             \
    "SESS_ID_AT_TDoLHhJHVYy1UoFxAAAAAGsNHBgAAAAAaw0cGHkQtxMd5h9XR2917YD0W5b+cbUCDk5EswvgWaalcTJE"
#define TOKEN_26_RENEWED                                                                           \
    "SESS_ID_AT_TDoLHhJHVYy1UoFxAAAAAGsNHBgAAAAAaw0cI/GL9iFu5HCmGr1kTUjPobLrNWE1V6F2vdSIDkSW9r57"
#define T_FIRST 0x6b0d1c18u   /* the timestamps inside them */
#define T_RENEWED 0x6b0d1c23u /* 11 s later */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = calloc(1, 4096);

    assert_non_null(f);
    assert_non_null(buf);
    *len = fread(buf, 1, 4095, f);
    fclose(f);
    return buf;
}

static void load_26_secret(uint8_t secret[AUTH_TOKEN_SECRET_LEN])
{
    size_t len, line = 99;
    const char *why = "unset";
    char *text = slurp(KEY_FILE, &len);

    assert_int_equal(auth_token_key_parse(text, len, secret, &line, &why), 0);
    assert_int_equal(line, 0);
    assert_null(why);
    free(text);
}

static void makes_the_tokens_openvpn_26_made(void **state)
{
    uint8_t secret[AUTH_TOKEN_SECRET_LEN];
    struct auth_token_info info;
    char token[AUTH_TOKEN_LEN + 1];

    (void)state;
    load_26_secret(secret);
    assert_int_equal(auth_token_decode(TOKEN_26_FIRST, &info), 0);
    assert_int_equal(info.initial_s, T_FIRST);
    assert_int_equal(info.issued_s, T_FIRST);
    assert_int_equal(auth_token_make(secret, "alice", info.session_id, T_FIRST, T_FIRST, token), 0);
    assert_string_equal(token, TOKEN_26_FIRST);
    assert_int_equal(strlen(token), AUTH_TOKEN_LEN);
    /* Renewed: same session id and initial timestamp, new timestamp. */
    assert_int_equal(auth_token_make(secret, "alice", info.session_id, T_FIRST, T_RENEWED, token),
                     0);
    assert_string_equal(token, TOKEN_26_RENEWED);
    assert_true(auth_token_same_session(TOKEN_26_FIRST, TOKEN_26_RENEWED));
}

static void verifies_the_tokens_openvpn_26_made(void **state)
{
    uint8_t secret[AUTH_TOKEN_SECRET_LEN];
    struct auth_token_info info;

    (void)state;
    load_26_secret(secret);
    assert_int_equal(
        auth_token_verify(secret, "alice", TOKEN_26_RENEWED, T_RENEWED + 5, 10, 0, &info),
        AUTH_TOKEN_HMAC_OK);
    assert_int_equal(info.initial_s, T_FIRST);
    assert_int_equal(info.issued_s, T_RENEWED);
    /* renewal-time 10: valid for [issued, issued + 20) */
    assert_int_equal(auth_token_verify(secret, "alice", TOKEN_26_FIRST, T_FIRST + 19, 10, 0, NULL),
                     AUTH_TOKEN_HMAC_OK);
    assert_int_equal(auth_token_verify(secret, "alice", TOKEN_26_FIRST, T_FIRST + 20, 10, 0, NULL),
                     AUTH_TOKEN_HMAC_OK | AUTH_TOKEN_EXPIRED);
}

static const uint8_t test_secret[AUTH_TOKEN_SECRET_LEN] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
static const uint8_t test_sid[AUTH_TOKEN_SESSION_ID_LEN] = {0xa1, 0xb2, 0xc3, 4,  5,  6,
                                                            7,    8,    9,    10, 11, 12};
#define NOW 1800000000u

static void round_trip(void **state)
{
    char token[AUTH_TOKEN_LEN + 1], sid[AUTH_TOKEN_SESSION_ID_B64_LEN + 1];
    struct auth_token_info info;

    (void)state;
    assert_int_equal(auth_token_make(test_secret, "bob", test_sid, NOW - 100, NOW, token), 0);
    assert_true(auth_token_is_token(token));
    assert_int_equal(auth_token_verify(test_secret, "bob", token, NOW, 3600, 0, &info),
                     AUTH_TOKEN_HMAC_OK);
    assert_memory_equal(info.session_id, test_sid, sizeof(test_sid));
    assert_int_equal(info.initial_s, NOW - 100);
    assert_int_equal(info.issued_s, NOW);
    assert_int_equal(auth_token_session_id_text(token, sid), 0);
    assert_int_equal(strlen(sid), AUTH_TOKEN_SESSION_ID_B64_LEN);
    assert_memory_equal(sid, token + AUTH_TOKEN_PREFIX_LEN, AUTH_TOKEN_SESSION_ID_B64_LEN);
}

static void tampered_token_fails(void **state)
{
    char token[AUTH_TOKEN_LEN + 1], bad[AUTH_TOKEN_LEN + 1];
    uint8_t other_secret[AUTH_TOKEN_SECRET_LEN] = {9};

    (void)state;
    assert_int_equal(auth_token_make(test_secret, "bob", test_sid, NOW, NOW, token), 0);
    /* Every position after the prefix: the session id, both timestamps and the HMAC itself. */
    for (size_t i = AUTH_TOKEN_PREFIX_LEN; i < AUTH_TOKEN_LEN; i++) {
        memcpy(bad, token, sizeof(bad));
        bad[i] = bad[i] == 'A' ? 'B' : 'A';
        if (auth_token_verify(test_secret, "bob", bad, NOW, 3600, 0, NULL) != 0) {
            fail_msg("token changed at character %zu still verifies", i);
        }
    }
    assert_int_equal(auth_token_verify(other_secret, "bob", token, NOW, 3600, 0, NULL), 0);
    /* Wrong length, or not base64: refused before any HMAC. */
    memcpy(bad, token, sizeof(bad));
    bad[AUTH_TOKEN_LEN - 1] = '\0';
    assert_int_equal(auth_token_verify(test_secret, "bob", bad, NOW, 3600, 0, NULL), 0);
    memcpy(bad, token, sizeof(bad));
    bad[40] = '*';
    assert_int_equal(auth_token_verify(test_secret, "bob", bad, NOW, 3600, 0, NULL), 0);
    assert_int_equal(auth_token_verify(test_secret, "bob", "SESS_ID_AT_", NOW, 3600, 0, NULL), 0);
    assert_false(auth_token_is_token("SESS_ID_A"));
    assert_false(auth_token_is_token("secret-bob"));
    assert_true(auth_token_is_token("SESS_ID_AT_x")); /* 2.6.14: the prefix decides */
}

static void expired_token_fails(void **state)
{
    char token[AUTH_TOKEN_LEN + 1];
    const unsigned expired = AUTH_TOKEN_HMAC_OK | AUTH_TOKEN_EXPIRED;

    (void)state;
    assert_int_equal(auth_token_make(test_secret, "bob", test_sid, NOW - 1000, NOW, token), 0);
    /* Not renewed within 2 * renewal-time. */
    assert_int_equal(auth_token_verify(test_secret, "bob", token, NOW + 199, 100, 0, NULL),
                     AUTH_TOKEN_HMAC_OK);
    assert_int_equal(auth_token_verify(test_secret, "bob", token, NOW + 200, 100, 0, NULL),
                     expired);
    /* From the future (clock went back). */
    assert_int_equal(auth_token_verify(test_secret, "bob", token, NOW - 1, 100, 0, NULL), expired);
    /* Past its lifetime, counted from the first token of the session. */
    assert_int_equal(auth_token_verify(test_secret, "bob", token, NOW + 1, 100, 1001, NULL),
                     AUTH_TOKEN_HMAC_OK);
    assert_int_equal(auth_token_verify(test_secret, "bob", token, NOW + 2, 100, 1001, NULL),
                     expired);
    /* Timestamp before the initial one. */
    assert_int_equal(auth_token_make(test_secret, "bob", test_sid, NOW + 5, NOW, token), 0);
    assert_int_equal(auth_token_verify(test_secret, "bob", token, NOW, 100, 0, NULL), expired);
}

static void other_username_fails(void **state)
{
    char token[AUTH_TOKEN_LEN + 1];

    (void)state;
    assert_int_equal(auth_token_make(test_secret, "bob", test_sid, NOW, NOW, token), 0);
    assert_int_equal(auth_token_verify(test_secret, "alice", token, NOW, 100, 0, NULL), 0);
    assert_int_equal(auth_token_verify(test_secret, "bob2", token, NOW, 100, 0, NULL), 0);
    assert_int_equal(auth_token_verify(test_secret, "", token, NOW, 100, 0, NULL), 0);
    /* A token made for "" passes for any username, flagged (openvpn3 clients, 2.6 behaviour). */
    assert_int_equal(auth_token_make(test_secret, "", test_sid, NOW, NOW, token), 0);
    assert_int_equal(auth_token_verify(test_secret, "alice", token, NOW, 100, 0, NULL),
                     AUTH_TOKEN_HMAC_OK | AUTH_TOKEN_VALID_EMPTYUSER);
}

static void session_ids_and_states(void **state)
{
    char a[AUTH_TOKEN_LEN + 1], b[AUTH_TOKEN_LEN + 1];
    uint8_t sid2[AUTH_TOKEN_SESSION_ID_LEN] = {0};

    (void)state;
    assert_int_equal(auth_token_make(test_secret, "bob", test_sid, NOW, NOW, a), 0);
    assert_int_equal(auth_token_make(test_secret, "bob", sid2, NOW, NOW, b), 0);
    assert_false(auth_token_same_session(a, b));
    assert_false(auth_token_same_session(a, "SESS_ID_AT_"));
    assert_string_equal(auth_token_session_state(false, 0), "Initial");
    assert_string_equal(auth_token_session_state(true, 0), "Invalid");
    assert_string_equal(auth_token_session_state(true, AUTH_TOKEN_HMAC_OK), "Authenticated");
    assert_string_equal(auth_token_session_state(true, AUTH_TOKEN_HMAC_OK | AUTH_TOKEN_EXPIRED),
                        "Expired");
    assert_string_equal(
        auth_token_session_state(true, AUTH_TOKEN_HMAC_OK | AUTH_TOKEN_VALID_EMPTYUSER),
        "AuthenticatedEmptyUser");
    assert_string_equal(auth_token_session_state(true, AUTH_TOKEN_HMAC_OK | AUTH_TOKEN_EXPIRED |
                                                           AUTH_TOKEN_VALID_EMPTYUSER),
                        "ExpiredEmptyUser");
}

/* ---- the key file ---- */

static void expect_key_error(const char *text, size_t line, const char *why_start)
{
    uint8_t secret[AUTH_TOKEN_SECRET_LEN];
    size_t err_line = 99;
    const char *why = NULL;

    memset(secret, 0x55, sizeof(secret));
    assert_int_equal(auth_token_key_parse(text, strlen(text), secret, &err_line, &why),
                     -PE_MALFORMED);
    assert_int_equal(err_line, line);
    assert_non_null(why);
    if (strncmp(why, why_start, strlen(why_start)) != 0) {
        fail_msg("reason '%s' does not start with '%s'", why, why_start);
    }
    for (size_t i = 0; i < sizeof(secret); i++) {
        assert_int_equal(secret[i], 0);
    }
}

static void key_file_parser(void **state)
{
    uint8_t a[AUTH_TOKEN_SECRET_LEN], b[AUTH_TOKEN_SECRET_LEN];
    size_t len, line;
    const char *why;
    char *text = slurp(KEY_FILE, &len), crlf[1024], *o = crlf;

    (void)state;
    load_26_secret(a);
    /* CRLF line ends and text before the block read the same. */
    o += sprintf(o, "written by hand\r\n");
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\n') {
            *o++ = '\r';
        }
        *o++ = text[i];
    }
    *o = '\0';
    assert_int_equal(auth_token_key_parse(crlf, strlen(crlf), b, &line, &why), 0);
    assert_memory_equal(a, b, sizeof(a));

    expect_key_error("", 0, "no '-----BEGIN OpenVPN auth-token server key-----' line");
    expect_key_error("-----BEGIN OpenVPN Static key V1-----\n00\n-----END OpenVPN Static key "
                     "V1-----\n",
                     1, "a PEM block of another kind");
    expect_key_error("-----BEGIN OpenVPN auth-token server key-----\nzBfiCBLaBZD8\nzB*i\n", 3,
                     "not a base64 character");
    expect_key_error("# key\n-----BEGIN OpenVPN auth-token server key-----\nzBfiCBLaBZD8\n", 2,
                     "no '-----END OpenVPN auth-token server key-----' line");
    expect_key_error("-----BEGIN OpenVPN auth-token server key-----\nzBfiCBLaBZD8\n"
                     "-----END OpenVPN auth-token server key-----\n",
                     1, "the key block is too short");
    expect_key_error("-----BEGIN OpenVPN auth-token server key-----\nzBfiCBLaBZD8\n"
                     "-----END OpenVPN Static key V1-----\n",
                     3, "END line does not match");
    /* The real file cut after its second base64 line: too short. */
    text[strstr(text, "kUwR") - text] = '\0';
    strcat(text, "-----END OpenVPN auth-token server key-----\n");
    expect_key_error(text, 1, "the key block is too short");
    free(text);
}

/* What `ovpnd --genkey auth-token` writes for the bytes of the 2.6 key file is that file. */
static void key_file_writer(void **state)
{
    uint8_t data[AUTH_TOKEN_KEY_DATA_LEN + 8], a[AUTH_TOKEN_SECRET_LEN], b[AUTH_TOKEN_SECRET_LEN];
    char b64[400] = "", out[AUTH_TOKEN_KEY_TEXT_MAX], *text, *line, *save = NULL;
    size_t len, olen = 0, out_len = 0, err_line;
    const char *why;

    (void)state;
    text = slurp(KEY_FILE, &len);
    /* The bytes, decoded by Mbed TLS from the base64 lines (not by the code under test). */
    {
        char *copy = strdup(text);

        assert_non_null(copy);
        for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            if (line[0] != '-') {
                strcat(b64, line);
            }
        }
        free(copy);
    }
    assert_int_equal(
        mbedtls_base64_decode(data, sizeof(data), &olen, (const unsigned char *)b64, strlen(b64)),
        0);
    assert_int_equal(olen, AUTH_TOKEN_KEY_DATA_LEN);
    assert_int_equal(auth_token_key_write(data, out, sizeof(out), &out_len), 0);
    assert_int_equal(out_len, len);
    assert_string_equal(out, text);
    assert_int_equal(auth_token_key_parse(out, out_len, a, &err_line, &why), 0);
    load_26_secret(b);
    assert_memory_equal(a, b, sizeof(a));
    assert_int_equal(auth_token_key_write(data, out, 100, &out_len), -PE_NOSPACE);
    free(text);
}

/* ---- server/hooks/auth_token.c: what the server does with a password ---- */

static int fake_rng(void *ctx, unsigned char *out, size_t len)
{
    unsigned *n = ctx;

    for (size_t i = 0; i < len; i++) {
        out[i] = (unsigned char)(*n + i);
    }
    (*n)++;
    return 0;
}

static void make_ctx(struct auth_token_ctx *ctx, struct config *cfg, unsigned *rng_state,
                     bool external_auth)
{
    config_init(cfg);
    cfg->auth.auth_gen_token = true;
    cfg->auth.auth_token_renewal_s = 100;
    cfg->auth.auth_token_lifetime_s = 0;
    cfg->auth.auth_token_external_auth = external_auth;
    cfg->auth.has_auth_token_secret = true;
    memcpy(cfg->auth.auth_token_secret, test_secret, sizeof(test_secret));
    assert_int_equal(auth_token_ctx_init(ctx, cfg, fake_rng, rng_state), 0);
    assert_true(ctx->is_enabled);
    assert_false(ctx->is_random_secret);
}

static void server_password_token_renegotiation(void **state)
{
    struct auth_token_ctx ctx;
    struct auth_token_session s = {0}, s2 = {0};
    struct config cfg;
    unsigned rng_state = 7;
    char user[32] = "bob", why[300], sid[AUTH_TOKEN_SESSION_ID_B64_LEN + 1], first[100];
    const char *reason, *st;

    (void)state;
    make_ctx(&ctx, &cfg, &rng_state, false);
    /* A password: the usual check runs, with session_state=Initial and the coming session id. */
    assert_int_equal(auth_token_check(&ctx, &s, user, "hunter2", NOW, &reason, why, sizeof(why)),
                     AUTH_TOKEN_NOT_USED);
    assert_int_equal(auth_token_env(&ctx, &s, user, NOW, sid, &st), 0);
    assert_string_equal(st, "Initial");
    assert_int_equal(auth_token_on_success(&ctx, &s, user, "hunter2", NOW), 0);
    assert_int_equal(auth_token_verify(test_secret, "bob", s.token, NOW, 100, 0, NULL),
                     AUTH_TOKEN_HMAC_OK);
    assert_memory_equal(sid, s.token + AUTH_TOKEN_PREFIX_LEN, AUTH_TOKEN_SESSION_ID_B64_LEN);
    snprintf(first, sizeof(first), "%s", s.token);

    /* Renegotiation with the token: accepted; the renewed token keeps the session. */
    assert_int_equal(auth_token_check(&ctx, &s, user, first, NOW + 50, &reason, why, sizeof(why)),
                     AUTH_TOKEN_ACCEPTED);
    assert_int_equal(auth_token_on_success(&ctx, &s, user, first, NOW + 50), 0);
    assert_string_not_equal(s.token, first);
    assert_true(auth_token_same_session(s.token, first));
    {
        struct auth_token_info info;

        assert_int_equal(auth_token_decode(s.token, &info), 0);
        assert_int_equal(info.initial_s, NOW);
        assert_int_equal(info.issued_s, NOW + 50);
    }
    /* A reconnect (new session) with the renewed token: accepted, same session id. */
    assert_int_equal(
        auth_token_check(&ctx, &s2, user, s.token, NOW + 60, &reason, why, sizeof(why)),
        AUTH_TOKEN_ACCEPTED);
    assert_int_equal(auth_token_on_success(&ctx, &s2, user, s.token, NOW + 60), 0);
    assert_true(auth_token_same_session(s2.token, first));

    /* The first token once 2 * renewal-time has passed: refused, "SESSION: token expired". */
    assert_int_equal(auth_token_check(&ctx, &s, user, first, NOW + 200, &reason, why, sizeof(why)),
                     AUTH_TOKEN_REFUSED);
    assert_string_equal(reason, "SESSION: token expired");
    assert_string_equal(s.token, ""); /* wiped, as 2.6 */
    auth_token_ctx_wipe(&ctx);
    config_free(&cfg);
}

static void server_refuses_bad_tokens(void **state)
{
    struct auth_token_ctx ctx;
    struct auth_token_session s = {0};
    struct config cfg;
    unsigned rng_state = 1;
    char user[32] = "bob", why[300], other[AUTH_TOKEN_LEN + 1], mine[AUTH_TOKEN_LEN + 1];
    const char *reason;
    uint8_t sid2[AUTH_TOKEN_SESSION_ID_LEN] = {0};

    (void)state;
    make_ctx(&ctx, &cfg, &rng_state, false);
    /* Wrong HMAC: plain AUTH_FAILED, the script is not asked. */
    assert_int_equal(
        auth_token_check(&ctx, &s, user, TOKEN_26_FIRST, T_FIRST, &reason, why, sizeof(why)),
        AUTH_TOKEN_REFUSED);
    assert_null(reason);
    assert_non_null(strstr(why, "HMAC"));
    /* Another user's token. */
    assert_int_equal(auth_token_make(test_secret, "alice", test_sid, NOW, NOW, other), 0);
    assert_int_equal(auth_token_check(&ctx, &s, user, other, NOW, &reason, why, sizeof(why)),
                     AUTH_TOKEN_REFUSED);
    /* A valid token from another session than this one's. */
    assert_int_equal(auth_token_make(test_secret, "bob", test_sid, NOW, NOW, mine), 0);
    assert_int_equal(auth_token_make(test_secret, "bob", sid2, NOW, NOW, other), 0);
    assert_int_equal(auth_token_check(&ctx, &s, user, mine, NOW, &reason, why, sizeof(why)),
                     AUTH_TOKEN_ACCEPTED);
    assert_int_equal(auth_token_check(&ctx, &s, user, other, NOW, &reason, why, sizeof(why)),
                     AUTH_TOKEN_REFUSED);
    assert_non_null(strstr(why, "session id"));
    auth_token_ctx_wipe(&ctx);
    config_free(&cfg);
}

static void server_external_auth(void **state)
{
    struct auth_token_ctx ctx;
    struct auth_token_session s = {0};
    struct config cfg;
    unsigned rng_state = 3;
    char user[32] = "bob", why[300], sid[AUTH_TOKEN_SESSION_ID_B64_LEN + 1];
    char token[AUTH_TOKEN_LEN + 1];
    const char *reason, *st;

    (void)state;
    make_ctx(&ctx, &cfg, &rng_state, true);
    assert_int_equal(auth_token_make(test_secret, "bob", test_sid, NOW, NOW, token), 0);
    /* Valid: the script still decides, told "Authenticated" and the token's session id. */
    assert_int_equal(auth_token_check(&ctx, &s, user, token, NOW + 1, &reason, why, sizeof(why)),
                     AUTH_TOKEN_EXTERNAL);
    assert_null(s.client_reason);
    assert_int_equal(auth_token_env(&ctx, &s, user, NOW + 1, sid, &st), 0);
    assert_string_equal(st, "Authenticated");
    assert_memory_equal(sid, token + AUTH_TOKEN_PREFIX_LEN, AUTH_TOKEN_SESSION_ID_B64_LEN);
    /* Expired: the script is told so. */
    auth_token_session_wipe(&s);
    assert_int_equal(auth_token_check(&ctx, &s, user, token, NOW + 500, &reason, why, sizeof(why)),
                     AUTH_TOKEN_EXTERNAL);
    assert_int_equal(auth_token_env(&ctx, &s, user, NOW + 500, sid, &st), 0);
    assert_string_equal(st, "Expired");
    /* Should the script refuse without a reason, the client is told why (2.6). */
    assert_string_equal(reason, "SESSION: token expired");
    assert_string_equal(s.client_reason, "SESSION: token expired");
    /* Garbage after the prefix: "Invalid". */
    auth_token_session_wipe(&s);
    assert_int_equal(
        auth_token_check(&ctx, &s, user, "SESS_ID_AT_nonsense", NOW, &reason, why, sizeof(why)),
        AUTH_TOKEN_EXTERNAL);
    assert_int_equal(auth_token_env(&ctx, &s, user, NOW, sid, &st), 0);
    assert_string_equal(st, "Invalid");
    /* A well-formed token with a wrong HMAC: "Invalid", and a session id of its own, not the
     * token's (openvpn 2.6 with the CVE-2026-13122 fix). */
    auth_token_session_wipe(&s);
    assert_int_equal(
        auth_token_check(&ctx, &s, user, TOKEN_26_FIRST, NOW, &reason, why, sizeof(why)),
        AUTH_TOKEN_EXTERNAL);
    assert_int_equal(auth_token_env(&ctx, &s, user, NOW, sid, &st), 0);
    assert_string_equal(st, "Invalid");
    assert_memory_not_equal(sid, TOKEN_26_FIRST + AUTH_TOKEN_PREFIX_LEN,
                            AUTH_TOKEN_SESSION_ID_B64_LEN);
    /* Only valid for "": the username is emptied. */
    auth_token_session_wipe(&s);
    assert_int_equal(auth_token_make(test_secret, "", test_sid, NOW, NOW, token), 0);
    assert_int_equal(auth_token_check(&ctx, &s, user, token, NOW, &reason, why, sizeof(why)),
                     AUTH_TOKEN_EXTERNAL);
    assert_string_equal(user, "");
    assert_int_equal(auth_token_env(&ctx, &s, user, NOW, sid, &st), 0);
    assert_string_equal(st, "AuthenticatedEmptyUser");
    auth_token_ctx_wipe(&ctx);
    config_free(&cfg);
}

static void server_random_secret_and_off(void **state)
{
    struct auth_token_ctx ctx;
    struct auth_token_session s = {0};
    struct config cfg;
    unsigned rng_state = 5;
    char user[32] = "bob", why[300];
    const char *reason;

    (void)state;
    config_init(&cfg);
    cfg.timers.reneg_sec = 3600;
    assert_int_equal(auth_token_ctx_init(&ctx, &cfg, fake_rng, &rng_state), 0);
    assert_false(ctx.is_enabled);
    /* Off: a password that looks like a token goes to the script as it is. */
    assert_int_equal(
        auth_token_check(&ctx, &s, user, TOKEN_26_FIRST, NOW, &reason, why, sizeof(why)),
        AUTH_TOKEN_NOT_USED);
    cfg.auth.auth_gen_token = true;
    assert_int_equal(auth_token_ctx_init(&ctx, &cfg, fake_rng, &rng_state), 0);
    assert_true(ctx.is_random_secret);
    assert_int_equal(ctx.renewal_s, 3600);
    assert_int_equal(ctx.secret[0], 5); /* from the rng */
    auth_token_ctx_wipe(&ctx);
    config_free(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(makes_the_tokens_openvpn_26_made),
        cmocka_unit_test(verifies_the_tokens_openvpn_26_made),
        cmocka_unit_test(round_trip),
        cmocka_unit_test(tampered_token_fails),
        cmocka_unit_test(expired_token_fails),
        cmocka_unit_test(other_username_fails),
        cmocka_unit_test(session_ids_and_states),
        cmocka_unit_test(key_file_parser),
        cmocka_unit_test(key_file_writer),
        cmocka_unit_test(server_password_token_renegotiation),
        cmocka_unit_test(server_refuses_bad_tokens),
        cmocka_unit_test(server_external_auth),
        cmocka_unit_test(server_random_secret_and_off),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
