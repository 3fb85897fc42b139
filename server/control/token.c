/* server/control/token.c: the acceptor's side of auth-gen-token
 * (server/hooks/auth_token.h): a token sent as password, the token made after a successful check,
 * its delivery at renegotiation and on the renewal timer. Acceptor thread only. */
#include "server/control/acceptor.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "server/hooks/auth_token.h"

#include "server/control/acceptor_internal.h"

static uint64_t wall_now_s(void)
{
    time_t t = time(NULL);

    return t > 0 ? (uint64_t)t : 0;
}

int acc_token_init(struct acceptor *a)
{
    int err =
        auth_token_ctx_init(&a->checks.token, a->cfg, mbedtls_ctr_drbg_random, &a->crypto.drbg);

    if (err || !a->checks.token.is_enabled) {
        return err;
    }
    if (a->checks.token.is_random_secret) {
        /* As 2.6 ("Using random OpenVPN auth-token server key."), said plainly. */
        log_msg(LOG_INFO, "auth-gen-token: using a random secret made at start-up: tokens stop "
                          "being valid when ovpnd restarts (auth-gen-token-secret keeps them)");
    }
    log_msg(LOG_INFO, "auth-gen-token: renewal-time %llu s, lifetime %llu s%s",
            (unsigned long long)a->checks.token.renewal_s,
            (unsigned long long)a->checks.token.lifetime_s,
            a->checks.token.is_external_auth ? ", external-auth" : "");
    return 0;
}

enum auth_token_verdict acc_token_check(struct acceptor *a, struct ctl_session *cs,
                                        struct key_method2 *client, struct acc_token_env *env,
                                        const char **client_reason, char *why, size_t why_len)
{
    char detail[300];
    enum auth_token_verdict v;
    uint64_t now_s = wall_now_s();

    memset(env, 0, sizeof(*env));
    *client_reason = NULL;
    why[0] = '\0';
    v = auth_token_check(&a->checks.token, &cs->token.at, client->username, client->password, now_s,
                         client_reason, detail, sizeof(detail));
    switch (v) {
    case AUTH_TOKEN_NOT_USED:
        break;
    case AUTH_TOKEN_ACCEPTED:
        acc_cs_log(a, cs, LOG_INFO,
                   "username '%.128s' authenticated by its auth-token (no script or plugin asked)",
                   client->username);
        return v;
    case AUTH_TOKEN_REFUSED:
        snprintf(why, why_len, "username '%.128s': %s", client->username, detail);
        return v;
    case AUTH_TOKEN_EXTERNAL:
        acc_cs_log(a, cs, LOG_INFO, "username '%.128s': %s; external-auth: asking the script",
                   client->username, detail);
        break;
    }
    if (cs->client.username && v == AUTH_TOKEN_EXTERNAL &&
        strcmp(cs->client.username, client->username) != 0) {
        /* A token valid only for "" at a renegotiation: 2.6 then fails to lock the username. */
        snprintf(why, why_len, "username changed at renegotiation (auth-token)");
        auth_token_session_wipe(&cs->token.at);
        return AUTH_TOKEN_REFUSED;
    }
    if (a->checks.token.is_enabled) {
        if (auth_token_env(&a->checks.token, &cs->token.at, client->username, now_s,
                           env->session_id, &env->session_state) == 0) {
            env->is_set = true;
        } else {
            acc_cs_log(a, cs, LOG_WARN, "auth-gen-token: cannot make a session id");
        }
    }
    return v;
}

void acc_token_on_success(struct acceptor *a, struct ctl_session *cs,
                          const struct key_method2 *client)
{
    if (!a->checks.token.is_enabled) {
        return;
    }
    if (auth_token_on_success(&a->checks.token, &cs->token.at, client->username, client->password,
                              wall_now_s())) {
        acc_cs_log(a, cs, LOG_WARN, "auth-gen-token: cannot make a token; none is pushed");
    }
    cs->token.renew_ms = acc_now_ms(a) + a->checks.token.renewal_s * 1000;
    acc_cs_touch(a, cs);
}

void acc_token_rebind(struct acceptor *a, struct ctl_session *cs)
{
    if (!a->checks.token.is_enabled || !cs->token.at.initial[0]) {
        return;
    }
    if (auth_token_renew(&a->checks.token, &cs->token.at, cs->client.username, wall_now_s())) {
        acc_cs_log(a, cs, LOG_WARN, "auth-gen-token: cannot make a token; none is pushed");
    }
}

/* Send the renewed token on the primary key state (2.6 send_push_reply_auth_token). */
static void send_token(struct acceptor *a, struct ctl_session *cs)
{
    char msg[32 + AUTH_TOKEN_LEN];

    if (auth_token_push_message(&cs->token.at, msg, sizeof(msg)) == 0) {
        acc_send_message(a, cs, msg);
        acc_cs_log(a, cs, LOG_DEBUG, "renewed auth-token sent");
    }
}

void acc_token_after_rekey(struct acceptor *a, struct ctl_session *cs)
{
    if (a->checks.token.is_enabled && cs->token.at.initial[0]) {
        send_token(a, cs);
    }
}

void acc_token_tick(struct acceptor *a, struct ctl_session *cs, uint64_t now_ms)
{
    struct key_state *ks;

    /* The timer only runs when renewal-time is below reneg-sec (2.6 do_init_crypto_tls): else
     * every renegotiation renews the token anyway. */
    if (!a->checks.token.is_enabled ||
        a->checks.token.renewal_s >= (uint64_t)a->cfg->timers.reneg_sec || cs->state != CS_ACTIVE ||
        !cs->push.is_sent || !cs->client.username || now_ms < cs->token.renew_ms) {
        return;
    }
    cs->token.renew_ms = now_ms + a->checks.token.renewal_s * 1000;
    for (int i = 0; i < 2; i++) {
        ks = &cs->ks[i];
        if (ks->in_use && ks->state != KS_ACTIVE) {
            return; /* renegotiating: that renews the token (check_send_auth_token skips it) */
        }
    }
    if (auth_token_renew(&a->checks.token, &cs->token.at, cs->client.username, wall_now_s()) == 0) {
        send_token(a, cs);
    }
}

uint64_t acc_token_next_ms(const struct acceptor *a, const struct ctl_session *cs)
{
    /* the conditions of acc_token_tick that no time changes */
    if (!a->checks.token.is_enabled ||
        a->checks.token.renewal_s >= (uint64_t)a->cfg->timers.reneg_sec || cs->state != CS_ACTIVE ||
        !cs->push.is_sent || !cs->client.username) {
        return UINT64_MAX;
    }
    return cs->token.renew_ms;
}

int acc_token_env_add(const struct acceptor *a, const struct ctl_session *cs,
                      struct script_env *env)
{
    char sid[AUTH_TOKEN_SESSION_ID_B64_LEN + 1];
    int err;

    if (!a->checks.token.is_enabled || auth_token_session_id_text(cs->token.at.initial, sid) != 0) {
        return 0;
    }
    err = script_env_add(env, "session_id", sid);
    return err ? err
               : script_env_add(
                     env, "session_state",
                     auth_token_session_state(cs->token.at.has_token_check, cs->token.at.flags));
}

const char *acc_token_client_reason(const struct ctl_session *cs)
{
    return cs->token.at.client_reason;
}

const char *acc_token_for_push(const struct acceptor *a, const struct ctl_session *cs)
{
    return a->checks.token.is_enabled && cs->token.at.token[0] ? cs->token.at.token : NULL;
}

void acc_token_on_free(struct acceptor *a, struct ctl_session *cs)
{
    (void)a;
    auth_token_session_wipe(&cs->token.at);
}
