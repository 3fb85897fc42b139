/* server/control/admit.c: admitting a client after its TLS handshake: the checks of its
 * key-method-2 message in order (certificate, tls-verify, username/password or token,
 * client-connect, learn-address), the refusals, and the hand-window timeout of a pending check.
 * Acceptor thread only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/ctr_drbg.h>

#include "proto/client_name.h"
#include "proto/cursor.h"
#include "proto/errors.h"
#include "proto/key_method.h"
#include "proto/ncp.h"
#include "proto/peer_info.h"
#include "proto/tls_session.h"
#include "proto/push.h"
#include "server/data/peer.h"
#include "server/hooks/auth.h"
#include "server/hooks/hook_env.h"
#include "server/hooks/script.h"

#include "server/control/acceptor_internal.h"

#define PUSH_BUNDLE_MAX 1024 /* 2.6 PUSH_BUNDLE_SIZE: INFO_PRE and its text fit in it */

/* The client reads our key-method-2 message before any control message ("Unknown
 * key_method/flags" otherwise), so a refusal still answers key method 2 first, without keys, as
 * 2.6 does, and then says AUTH_FAILED. */
static void send_empty_key_method2(struct acceptor *a, struct key_state *ks)
{
    acc_km2_give(a, acc_send_key_method2(a, ks));
}

/* The key state a refusal goes on: at a renegotiation the new one once its TLS handshake is
 * done, as a 2.6 client reads control messages only on its newest key state (ssl.c
 * tls_rec_payload) and a 2.6 server sends AUTH_FAILED there; else the primary. */
static struct key_state *refusal_ks(struct ctl_session *cs)
{
    struct key_state *ks = &cs->ks[1 - cs->primary];

    if (cs->peer && ks->in_use && ks->state == KS_TLS && !ks->job && ks->tls->is_handshake_done) {
        return ks;
    }
    return acc_primary_ks(cs);
}

void acc_refuse(struct acceptor *a, struct ctl_session *cs, const char *reason, const char *text)
{
    struct key_state *ks = refusal_ks(cs);

    a->stats.auth_failed++;
    acc_metrics_refused(a, cs);
    acc_cs_log(a, cs, LOG_WARN, "refused: %s", reason);
    if (ks->in_use && !ks->job && !ks->has_sent_key_method2) {
        send_empty_key_method2(a, ks);
    }
    acc_send_message_on(a, cs, ks, text ? text : "AUTH_FAILED");
    acc_cs_close(a, cs, CLOSE_LINGER_MS);
}

void acc_auth_failed(struct acceptor *a, struct ctl_session *cs, const char *reason)
{
    acc_refuse(a, cs, reason, NULL);
}

/* What a key state waits for, in this order (each skipped when nothing is configured for it):
 * tls-verify, the username/password check, then at a renegotiation the new keys; at the first
 * negotiation an address and peer-id, client-connect, learn-address "add", and the install in
 * a worker. All of it counts against hand-window. */
enum wait_stage {
    WAIT_TLS_VERIFY,
    WAIT_AUTH,
    WAIT_REKEY,
    WAIT_PREPARE,
    WAIT_CLIENT_CONNECT,
    WAIT_MGMT_CONFIG,
    WAIT_LEARN,
    WAIT_INSTALL,
    WAIT_TLS_FINAL, /* between WAIT_AUTH and WAIT_REKEY/WAIT_PREPARE (last: stage_names) */
};

struct auth_wait {
    struct acceptor *a;
    struct ctl_session *cs;
    struct key_state *ks;
    struct key_method2 *client; /* owned; wiped when freed */
    enum wait_stage stage;
    struct auth_req *req;     /* the username/password check in progress */
    struct acc_hook_wait *hw; /* the scripts/plugins in progress */
    struct acc_cc_wait *cc;   /* the client-connect handlers in progress */
    bool is_in_tls_final;     /* hw is the TLS_FINAL plugins' run */
    bool has_cert;            /* the client presented a certificate in ks's handshake */
    bool is_user_pass_ok;     /* a username/password check accepted it for ks */
    /* management-client-auth: the management clients were asked and have not answered */
    bool is_mgmt_waiting;
    bool is_req_ok;             /* the script and plugins accepted (or there are none) */
    char *mgmt_config;          /* client-auth's config block, NULL if none */
    struct key_method2 *server; /* our key-method-2 message, once sent before the keys */
};

static void auth_wait_free(struct auth_wait *w)
{
    w->ks->auth_wait = NULL;
    acc_cs_touch(w->a, w->cs); /* hand-window applies again, instead of the check's deadline */
    auth_cancel(w->req);
    acc_hook_wait_cancel(w->hw);
    acc_cc_wait_cancel(w->cc);
    acc_km2_give(w->a, w->client);
    acc_km2_give(w->a, w->server);
    free(w->mgmt_config);
    free(w);
}

void acc_auth_abort(struct key_state *ks)
{
    if (ks->auth_wait) {
        auth_wait_free(ks->auth_wait);
    }
}

/* Refuse after a failed username/password check: AUTH_FAILED[,reason] without a trailing
 * newline, the session closed. At a renegotiation the whole session goes, as the client's
 * credentials are no longer good. */
static void refuse_auth(struct acceptor *a, struct ctl_session *cs, const char *log_reason,
                        const char *client_reason)
{
    char text[300];

    auth_failed_message(client_reason, text, sizeof(text));
    acc_refuse(a, cs, log_reason, text);
}

static const char *const stage_names[] = {
    "tls-verify",       "username/password check",       "renegotiation", "address assignment",
    "client-connect",   "management client-auth config", "learn-address", "install",
    "TLS_FINAL plugin",
};

void acc_auth_timeout(struct acceptor *a, struct ctl_session *cs, struct key_state *ks)
{
    struct auth_wait *w = ks->auth_wait;
    char why[300];

    /* The stage has moved on to the next one when its step was started. */
    enum wait_stage st = w && w->stage > WAIT_TLS_VERIFY ? w->stage - 1 : WAIT_TLS_VERIFY;

    if (w && w->req) {
        acc_metrics_auth(a, METRICS_AUTH_USER_PASS, METRICS_AUTH_TIMEOUT);
        snprintf(why, sizeof(why),
                 "username '%.128s': check did not finish within hand-window (%d s)",
                 w->client ? w->client->username : "", a->cfg->timers.hand_window_s);
    } else if (w && w->is_mgmt_waiting) {
        acc_metrics_auth(a, METRICS_AUTH_MANAGEMENT, METRICS_AUTH_TIMEOUT);
        snprintf(why, sizeof(why),
                 "username '%.128s': no client-auth or client-deny from the management "
                 "interface in time (%s)",
                 w->client ? w->client->username : "",
                 ks->auth_deadline_ms ? "client-pending-auth timeout" : "hand-window");
    } else {
        if (st == WAIT_REKEY || st == WAIT_PREPARE) {
            st = WAIT_CLIENT_CONNECT; /* PREPARE and REKEY are never waited for */
        }
        if (w && w->stage == WAIT_TLS_FINAL) {
            st = WAIT_AUTH; /* the stage after the username/password check */
        }
        if (w && w->is_in_tls_final) {
            st = WAIT_TLS_FINAL;
        }
        if (st == WAIT_TLS_VERIFY) {
            acc_metrics_auth(a, METRICS_AUTH_TLS_VERIFY, METRICS_AUTH_TIMEOUT);
        }
        snprintf(why, sizeof(why), "%s did not finish within hand-window (%d s)", stage_names[st],
                 a->cfg->timers.hand_window_s);
    }
    acc_auth_abort(ks);
    refuse_auth(a, cs, why, NULL);
}

static void run_checks(struct auth_wait *w);

static bool start_auth(struct auth_wait *w);

/* A step of scripts/plugins finished. */
static void hook_step_done(void *ctx, bool is_ok, const char *why)
{
    struct auth_wait *w = ctx;

    w->hw = NULL;
    w->cc = NULL;
    w->is_in_tls_final = false;
    if (w->cs->state == CS_CLOSING) {
        auth_wait_free(w);
        return;
    }
    if (w->stage == WAIT_AUTH) { /* the step that finished was tls-verify */
        acc_metrics_auth(w->a, METRICS_AUTH_TLS_VERIFY,
                         is_ok ? METRICS_AUTH_OK : METRICS_AUTH_REFUSED);
    }
    if (!is_ok) {
        struct acceptor *a = w->a;
        struct ctl_session *cs = w->cs;

        auth_wait_free(w);
        acc_auth_failed(a, cs, why);
        return;
    }
    run_checks(w);
}

/* Start (or skip) the scripts/plugins of one stage. Returns true when w waits for them, false
 * when w is done with them (skipped) or was freed after a refusal (*is_gone). */
static bool start_hook_step(struct auth_wait *w, int rc, const char *what, bool *is_gone)
{
    char why[128];

    if (rc == 0) {
        return true;
    }
    if (rc < 0) {
        struct acceptor *a = w->a;
        struct ctl_session *cs = w->cs;

        snprintf(why, sizeof(why), "cannot run %s: %s", what, strerror(-rc));
        if (w->stage == WAIT_AUTH) {
            acc_metrics_auth(a, METRICS_AUTH_TLS_VERIFY, METRICS_AUTH_ERROR);
        }
        auth_wait_free(w);
        acc_auth_failed(a, cs, why);
        *is_gone = true;
    }
    return false;
}

/* Before ks gets keys: a client without a certificate only after a username/password check
 * accepted it for this key (server/hooks/auth.h auth_admits). Returns false after refusing it (w is
 * freed then). */
static bool admitted(struct auth_wait *w)
{
    struct acceptor *a = w->a;
    struct ctl_session *cs = w->cs;
    const char *why = NULL;

    if (auth_admits(a->cfg, w->has_cert, w->is_user_pass_ok, &why)) {
        return true;
    }
    auth_wait_free(w);
    acc_auth_failed(a, cs, why);
    return false;
}

/* The client-auth block, after the client-connect outputs (2.6 multi.c runs
 * multi_client_connect_mda last). Returns false after refusing the client (w is freed). */
static bool apply_mgmt_config(struct auth_wait *w)
{
    struct acceptor *a = w->a;
    struct ctl_session *cs = w->cs;
    char why[600];

    if (acc_client_connect_apply(a, cs, w->mgmt_config, "management client-auth", why,
                                 sizeof(why)) == 0) {
        return true;
    }
    auth_wait_free(w);
    acc_auth_failed(a, cs, why);
    return false;
}

/* override-username from the client-connect outputs (override_username.c). Returns false
 * after refusing the client (w is freed). */
static bool apply_override_username(struct auth_wait *w)
{
    struct acceptor *a = w->a;
    struct ctl_session *cs = w->cs;
    char why[200];

    if (acc_override_username(a, cs, w->client->peer_info, why, sizeof(why)) == 0) {
        return true;
    }
    auth_wait_free(w);
    acc_auth_failed(a, cs, why);
    return false;
}

static void run_checks(struct auth_wait *w)
{
    struct acceptor *a = w->a;
    struct ctl_session *cs = w->cs;
    struct key_state *ks = w->ks;
    bool is_gone = false;

    for (;;) {
        if (cs->state == CS_CLOSING) {
            auth_wait_free(w);
            return;
        }
        switch (w->stage) {
        case WAIT_TLS_VERIFY:
            w->stage = WAIT_AUTH;
            if (start_hook_step(w, acc_tls_verify_start(a, cs, ks, hook_step_done, w, &w->hw),
                                "tls-verify", &is_gone) ||
                is_gone) {
                return;
            }
            break;
        case WAIT_AUTH:
            w->stage = WAIT_TLS_FINAL;
            if (auth_is_configured(a->checks.auth) || a->cfg->mgmt.client_auth) {
                if (!start_auth(w)) {
                    auth_wait_free(w);
                }
                return; /* run_checks goes on from auth_done (or auth_succeeded) */
            }
            if (w->client->username[0] || w->client->password[0]) {
                acc_cs_log(a, cs, LOG_DEBUG,
                           "client sent a username/password; no auth-user-pass-verify is "
                           "configured, so it is ignored");
            }
            break;
        case WAIT_TLS_FINAL:
            w->stage = cs->peer ? WAIT_REKEY : WAIT_PREPARE;
            if (start_hook_step(
                    w,
                    acc_tls_final_start(a, cs, ks, w->client->username, hook_step_done, w, &w->hw),
                    "TLS_FINAL", &is_gone)) {
                w->is_in_tls_final = true;
                return;
            }
            if (is_gone) {
                return;
            }
            break;
        case WAIT_REKEY:
            if (!admitted(w)) {
                return;
            }
            ks->auth_wait = NULL; /* w is done; a failed rekey clears ks, which would free w */
            acc_rekey(a, cs, ks, w->client, w->server);
            if (ks->in_use && ks->state == KS_ACTIVE && cs->state == CS_ACTIVE) {
                acc_token_after_rekey(a, cs); /* the token renewed by this check */
            }
            auth_wait_free(w);
            return;
        case WAIT_PREPARE:
            if (!admitted(w)) {
                return;
            }
            /* who it is, for the sessions it may replace (acc_install_prepare) */
            cs->client.has_cn =
                w->has_cert || (a->cfg->auth.username_as_common_name && cs->client.cn[0] != '\0');
            if (!acc_install_prepare(a, cs, w->client)) {
                auth_wait_free(w);
                return;
            }
            w->stage = WAIT_CLIENT_CONNECT;
            break;
        case WAIT_CLIENT_CONNECT:
            w->stage = WAIT_MGMT_CONFIG;
            if (start_hook_step(w,
                                acc_client_connect_start(a, cs, w->client->peer_info,
                                                         hook_step_done, w, &w->cc),
                                "client-connect", &is_gone) ||
                is_gone) {
                return;
            }
            break;
        case WAIT_MGMT_CONFIG:
            w->stage = WAIT_LEARN;
            if ((w->mgmt_config && !apply_mgmt_config(w)) || !apply_override_username(w)) {
                return;
            }
            break;
        case WAIT_LEARN:
            w->stage = WAIT_INSTALL;
            if (cs->hooks.needs_reassign) {
                cs->hooks.needs_reassign = false;
                if (!acc_reassign_addresses(a, cs) ||
                    acc_client_env_build(a, cs, w->client->peer_info) != 0) {
                    if (cs->state != CS_CLOSING) {
                        acc_auth_failed(a, cs, "out of memory");
                    }
                    auth_wait_free(w);
                    return;
                }
            }
            if (start_hook_step(w, acc_learn_start(a, cs, hook_step_done, w, &w->hw),
                                "learn-address", &is_gone) ||
                is_gone) {
                return;
            }
            break;
        case WAIT_INSTALL:
            acc_install_finish(a, cs, ks, w->client, w->server);
            auth_wait_free(w);
            return;
        }
    }
}

/* The username/password check succeeded (is_by_token: by its auth-gen-token token, already
 * logged): renew the token, then the next checks. */
static void auth_succeeded(struct auth_wait *w, bool is_by_token)
{
    struct acceptor *a = w->a;
    struct ctl_session *cs = w->cs;
    struct key_method2 *client = w->client;

    w->is_user_pass_ok = true;
    acc_token_on_success(a, cs, client);
    if (cs->peer) {
        if (!is_by_token) {
            acc_cs_log(a, cs, LOG_INFO, "username '%.128s' authenticated again", client->username);
        }
        run_checks(w);
        return;
    }
    if (!is_by_token) {
        acc_cs_log(a, cs, LOG_INFO, "username '%.128s' authenticated", client->username);
    }
    cs->client.username = strdup(client->username);
    if (!cs->client.username) {
        auth_wait_free(w);
        acc_auth_failed(a, cs, "out of memory");
        return;
    }
    if (a->cfg->auth.username_as_common_name) {
        snprintf(cs->client.cn, sizeof(cs->client.cn), "%.*s", (int)sizeof(cs->client.cn) - 1,
                 client->username);
    }
    run_checks(w);
}

static void auth_done(void *ctx, bool is_ok, const char *client_reason, const char *log_reason)
{
    struct auth_wait *w = ctx;
    struct acceptor *a = w->a;
    struct ctl_session *cs = w->cs;
    struct key_method2 *client = w->client;
    char why[400];

    w->req = NULL; /* finished: auth frees it */
    if (cs->state == CS_CLOSING) {
        auth_wait_free(w);
        return;
    }
    acc_metrics_auth(a, METRICS_AUTH_USER_PASS, is_ok ? METRICS_AUTH_OK : METRICS_AUTH_REFUSED);
    if (!is_ok) {
        snprintf(why, sizeof(why), "username '%.128s': %s%s", client->username, log_reason,
                 cs->peer ? " (at renegotiation)" : "");
        if (client_reason == NULL || client_reason[0] == '\0') {
            client_reason = acc_token_client_reason(cs);
        }
        auth_wait_free(w);
        refuse_auth(a, cs, why, client_reason);
        return;
    }
    w->is_req_ok = true;
    if (!w->is_mgmt_waiting) {
        auth_succeeded(w, false);
    }
}

bool acc_mgmt_answer(struct acceptor *a, struct ctl_session *cs, struct key_state *ks, bool is_auth,
                     const char *reason, const char *client_reason, const char *config)
{
    struct auth_wait *w = ks->auth_wait;
    char why[400];

    if (!w || !w->is_mgmt_waiting) {
        if (!is_auth && cs->state == CS_ACTIVE && ks == acc_primary_ks(cs) && ks->in_use) {
            snprintf(why, sizeof(why), "client-deny from the management interface: %.300s",
                     reason ? reason : "");
            refuse_auth(a, cs, why, client_reason);
            return true;
        }
        return false;
    }
    w->is_mgmt_waiting = false;
    acc_metrics_auth(a, METRICS_AUTH_MANAGEMENT, is_auth ? METRICS_AUTH_OK : METRICS_AUTH_REFUSED);
    if (!is_auth) {
        snprintf(why, sizeof(why),
                 "username '%.128s': client-deny from the management interface: %.200s%s",
                 w->client->username, reason ? reason : "", cs->peer ? " (at renegotiation)" : "");
        auth_wait_free(w);
        refuse_auth(a, cs, why, client_reason);
        return true;
    }
    /* 2.6 applies the block at the first connection only (multi.c management_client_auth) */
    if (config && config[0] != '\0' && !cs->peer) {
        w->mgmt_config = strdup(config);
        if (!w->mgmt_config) {
            auth_wait_free(w);
            acc_auth_failed(a, cs, "out of memory");
            return true;
        }
    }
    acc_cs_log(a, cs, LOG_DEBUG, "client-auth from the management interface for KID %u", ks->kid);
    if (w->is_req_ok && !w->req) {
        auth_succeeded(w, false);
    }
    return true;
}

bool acc_auth_pending(struct acceptor *a, struct ctl_session *cs, struct key_state *ks,
                      const char *extra, unsigned timeout_s)
{
    struct auth_wait *w = ks->auth_wait;
    const struct config_timers *t = &a->cfg->timers;
    uint64_t now = acc_now_ms(a);
    uint64_t elapsed_s = (now - ks->start_ms) / 1000;
    unsigned max_s =
        (unsigned)(t->reneg_sec / 2 > t->hand_window_s ? t->reneg_sec / 2 : t->hand_window_s);
    char text[CONTROL_MSG_MAX];

    /* (during the username/password check the stage is already the next one) */
    if (!w || w->stage != WAIT_TLS_FINAL || elapsed_s >= max_s ||
        strlen(extra) + 1 + sizeof("INFO_PRE,") > PUSH_BUNDLE_MAX) {
        return false;
    }
    if (timeout_s > max_s - elapsed_s) {
        timeout_s = (unsigned)(max_s - elapsed_s);
    }
    if (!ks->has_sent_key_method2) {
        w->server = acc_send_key_method2(a, ks);
        if (!w->server) {
            return false;
        }
    }
    if (cs->client.pi.iv_proto & IV_PROTO_AUTH_PENDING_KW) {
        snprintf(text, sizeof(text), "AUTH_PENDING,timeout %u", timeout_s);
        acc_send_message_on(a, cs, ks, text);
    } else {
        acc_send_message_on(a, cs, ks, "AUTH_PENDING");
    }
    snprintf(text, sizeof(text), "INFO_PRE,%s", extra);
    acc_send_message_on(a, cs, ks, text);
    acc_flush(a, cs);
    ks->auth_deadline_ms = now + (uint64_t)timeout_s * 1000;
    acc_cs_touch(a, cs);
    acc_cs_log(a, cs, LOG_INFO, "authentication pending for up to %u s: %.200s", timeout_s, extra);
    return true;
}

void acc_cr_response(struct acceptor *a, struct ctl_session *cs, const struct key_state *ks,
                     const char *response)
{
    const struct auth_wait *w = ks->auth_wait;
    const char *user = w && w->client ? w->client->username : cs->client.username;
    struct script_env env = {0};
    int err = hook_env_append(&env, &a->checks.global_env);

    acc_cs_log(a, cs, LOG_INFO, "CR response was sent by the client");
    if (err == 0 && cs->hooks.tls_env) {
        err = hook_env_append(&env, cs->hooks.tls_env);
    }
    err = err ? err : script_env_add(&env, "common_name", cs->client.cn);
    err = err ? err : hook_env_addr(&env, "untrusted", &cs->remote);
    if (err == 0 && user) {
        err = script_env_add(&env, "username", user);
    }
    if (err == 0 && w && w->req) { /* 2.6 leaves it in the environment: the answer goes there */
        err = script_env_add(&env, "auth_control_file", auth_req_control_file(w->req));
    }
    if (err == 0) {
        acc_mgmt_cr_response(a, cs, ks, response, &env);
        err = acc_crresponse_start(a, cs, &env, response);
    }
    script_env_clear(&env);
    if (err < 0) {
        char why[128];

        snprintf(why, sizeof(why), "cannot run client-crresponse: %s", strerror(-err));
        acc_auth_abort(&cs->ks[0]);
        acc_auth_abort(&cs->ks[1]);
        acc_auth_failed(a, cs, why);
    }
}

/* A deferred script or plugin wrote auth_pending_file (auth_set_pending_cb). */
static bool auth_pending(void *ctx, unsigned timeout_s, const char *extra)
{
    struct auth_wait *w = ctx;

    return acc_auth_pending(w->a, w->cs, w->ks, extra, timeout_s);
}

void acc_auth_init(struct acceptor *a)
{
    auth_set_pending_cb(a->checks.auth, auth_pending);
}

/* Check the client's username and password. Returns true when w is taken care of: the check
 * started (w waits until the answer), or an auth-gen-token token was accepted at once and the
 * checks went on; false when the client was refused at once (the caller frees w). */
static bool start_auth(struct auth_wait *w)
{
    struct acceptor *a = w->a;
    struct ctl_session *cs = w->cs;
    struct key_method2 *client = w->client;
    struct auth_client who;
    struct acc_token_env tenv;
    const char *token_reason;
    char token_why[400];
    int err;

    if (client->username_too_long || client->password_too_long) {
        acc_metrics_auth(a, METRICS_AUTH_USER_PASS, METRICS_AUTH_REFUSED);
        acc_auth_failed(a, cs, "username or password too long");
        return false;
    }
    if (!client->username[0] && !a->cfg->auth.auth_user_pass_optional) {
        /* ssl_verify.c: "peer provided a blank username". */
        acc_metrics_auth(a, METRICS_AUTH_USER_PASS, METRICS_AUTH_REFUSED);
        acc_auth_failed(a, cs, "no username sent (is auth-user-pass in the client's profile?)");
        return false;
    }
    if (a->cfg->auth.username_as_common_name && strlen(client->username) >= TLS_USERNAME_LEN) {
        /* ssl_verify.c ssl_verify_username_length: a CN is at most 64 characters. */
        acc_auth_failed(a, cs, "username too long to become the common name");
        return false;
    }
    acc_override_username_map(a, cs, client->username, sizeof(client->username));
    if (cs->client.username && strcmp(cs->client.username, client->username) != 0) {
        /* As 2.6: "username attempted to change ... tunnel disabled". */
        acc_auth_failed(a, cs, "username changed at renegotiation");
        return false;
    }
    switch (acc_token_check(a, cs, client, &tenv, &token_reason, token_why, sizeof(token_why))) {
    case AUTH_TOKEN_REFUSED:
        acc_metrics_auth(a, METRICS_AUTH_TOKEN, METRICS_AUTH_REFUSED);
        refuse_auth(a, cs, token_why, token_reason);
        return false;
    case AUTH_TOKEN_ACCEPTED:
        acc_metrics_auth(a, METRICS_AUTH_TOKEN, METRICS_AUTH_OK);
        auth_succeeded(w, true);
        return true;
    default:
        break;
    }
    if (a->cfg->mgmt.client_auth) {
        /* asked at the same time as the script and plugins; all must accept (2.6
         * verify_user_pass); a valid token skips it as it skips them */
        if (acc_mgmt_ask(a, cs, w->ks, client) != 0) {
            acc_auth_failed(a, cs, "out of memory");
            return false;
        }
        w->is_mgmt_waiting = true;
    }
    if (!auth_is_configured(a->checks.auth)) {
        w->is_req_ok = true;
        return true; /* run_checks goes on from acc_mgmt_answer */
    }
    memset(&who, 0, sizeof(who));
    who.common_name = cs->client.cn;
    who.username = client->username;
    who.password = client->password;
    who.remote = cs->remote;
    who.peer_info = client->peer_info;
    who.session_id = tenv.is_set ? tenv.session_id : NULL;
    who.session_state = tenv.is_set ? tenv.session_state : NULL;
    who.client = cs->hooks.plugin_client;
    err = auth_start(a->checks.auth, &who, auth_done, w, &w->req);
    if (err) {
        char why[128];

        snprintf(why, sizeof(why), "cannot run auth-user-pass-verify: %s", strerror(-err));
        acc_metrics_auth(a, METRICS_AUTH_USER_PASS, METRICS_AUTH_ERROR);
        acc_auth_failed(a, cs, why);
        return false;
    }
    acc_cs_log(a, cs, LOG_DEBUG, "checking username '%.128s'", client->username);
    return true;
}

/* ks received the client's key-method-2 message (client, which w takes over): run the checks.
 * ks waits (ks->auth_wait) while any of them runs. */
static void begin_checks(struct acceptor *a, struct ctl_session *cs, struct key_state *ks,
                         struct key_method2 *client)
{
    struct auth_wait *w = calloc(1, sizeof(*w));

    if (!w) {
        acc_km2_give(a, client);
        acc_auth_failed(a, cs, "out of memory");
        return;
    }
    w->a = a;
    w->cs = cs;
    w->ks = ks;
    w->client = client;
    w->stage = WAIT_TLS_VERIFY;
    ks->kid = cs->next_kid++;
    /* The handshake is over: no step on the thread pool holds ks->tls any more. */
    w->has_cert = mbedtls_ssl_get_peer_cert(&ks->tls->ssl) != NULL;
    ks->auth_wait = w;
    run_checks(w);
}

void acc_handle_key_method2(struct acceptor *a, struct ctl_session *cs, struct key_state *ks,
                            const uint8_t *msg, size_t len)
{
    struct key_method2 *client = acc_km2_take(a);
    enum data_cipher cipher;
    int err;

    if (!client) {
        acc_cs_log(a, cs, LOG_ERR, "out of memory");
        acc_cs_close(a, cs, 0);
        return;
    }
    err = key_method2_parse(msg, len, true, client);
    if (err) {
        acc_cs_log(a, cs, LOG_WARN, "bad key-method 2 message: %s", proto_strerror(err));
        if (ks->key_id == 0) {
            acc_cs_close(a, cs, 0);
        } else {
            acc_reneg_failed(a, cs, ks, "bad key-method 2 message");
        }
        goto out;
    }
    /* As 2.6 verify_user_pass: control characters in the username and password are '_' before
     * any check, log line, script, plugin or file sees them (a newline would be a line of its
     * own in the via-file file and the status file). */
    client_name_remap(client->username);
    client_name_remap(client->password);
    if (cs->peer) {
        if (!acc_recheck_certificate(a, cs, ks)) {
            acc_metrics_auth(a, METRICS_AUTH_CERTIFICATE, METRICS_AUTH_REFUSED);
            goto out;
        }
        if (mbedtls_ssl_get_peer_cert(&ks->tls->ssl)) {
            acc_metrics_auth(a, METRICS_AUTH_CERTIFICATE, METRICS_AUTH_OK);
        }
        begin_checks(a, cs, ks, client); /* takes client */
        return;
    }
    peer_info_parse(client->peer_info, strnlen(client->peer_info, sizeof(client->peer_info)),
                    &cs->client.pi);
    if (!acc_check_certificate(a, cs, ks)) {
        acc_metrics_auth(a, METRICS_AUTH_CERTIFICATE, METRICS_AUTH_REFUSED);
        goto out;
    }
    if (mbedtls_ssl_get_peer_cert(&ks->tls->ssl)) {
        acc_metrics_auth(a, METRICS_AUTH_CERTIFICATE, METRICS_AUTH_OK);
    }
    acc_cert_fingerprint(ks->tls, cs->client.cert_sha256);
    acc_cert_identity(ks, cs);
    if (acc_cert_is_revoked(a, cs)) {
        /* a handshake that began on the configuration a reload replaced, checked against the
         * CRL in force now */
        acc_auth_failed(a, cs, "certificate revoked: the CRL now lists it (crl-verify)");
        goto out;
    }
    acc_cs_log(a, cs, LOG_INFO, "TLS handshake done, peer info: IV_VER=%s IV_PLAT=%s IV_PROTO=%u",
               cs->client.pi.version, cs->client.pi.platform, (unsigned)cs->client.pi.iv_proto);
    if (ncp_select(a->cfg->tls.data_ciphers, &cs->client.pi, client->options,
                   a->cfg->tls.data_ciphers_fallback, cs->client.cipher_name,
                   sizeof(cs->client.cipher_name)) ||
        data_cipher_from_name(cs->client.cipher_name, &cipher)) {
        char reason[600];

        snprintf(reason, sizeof(reason),
                 "no shared data cipher (client offers '%s', server has '%s')",
                 cs->client.pi.ciphers, a->cfg->tls.data_ciphers);
        acc_refuse(a, cs, reason,
                   "AUTH_FAILED,Data channel cipher negotiation failed (no shared cipher)");
        goto out;
    }
    if (a->cfg->tls.force_ekm && !(cs->client.pi.iv_proto & IV_PROTO_TLS_KEY_EXPORT)) {
        /* 2.6 multi.c, multi_client_set_protocol_options */
        acc_refuse(a, cs,
                   "client does not support TLS Keying Material Exporters but "
                   "force-tls-key-material-export is enabled",
                   "AUTH_FAILED,Client incompatible with this server. Keying Material Exporters "
                   "(RFC 5705) support missing. Upgrade to a client that supports this feature "
                   "(OpenVPN 2.6.0+).");
        goto out;
    }
    begin_checks(a, cs, ks, client); /* takes client */
    return;
out:
    acc_km2_give(a, client);
}
