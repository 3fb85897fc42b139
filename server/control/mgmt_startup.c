/* server/control/mgmt_startup.c: management-query-passwords and management-external-cert (and
 * the PKCS#11 token's id and PIN). Before
 * the TLS configuration is built, start-up asks the management client for what the config
 * lacks and waits for the answers, running the acceptor's loop (where the management interface
 * lives) on the main thread; nothing else is on that loop yet.
 *
 * openvpn 2.6 (openvpn.c main, ssl.c init_ssl and pem_password_callback, misc.c
 * get_user_pass_cr, manage.c management_query_user_pass and management_query_cert, init.c
 * do_init_crypto_tls_c1): once the management interface is open and a management-hold was
 * released, init_ssl asks for the certificate (">NEED-CERTIFICATE:TAG"), then, reading an
 * encrypted key, for its password (">PASSWORD:Need 'Private Key' password"); an `askpass FILE`
 * gives the password instead. Each wait lasts until it is answered (no time limit) or a signal
 * comes. A password that does not decrypt the key gets ">PASSWORD:Verification Failed: 'Private
 * Key'" and the server exits ("Error: private key password verification failed"; only
 * auth-retry, a client option, would make 2.6 ask again); a certificate that does not read ends
 * it too ("Cannot load inline certificate file"). ovpnd does the same at this point of its own
 * start-up, where the TUN device and the UDP socket are set up already; no packet is read
 * before the answers came.
 *
 * With pkcs11-providers the token is opened here too (pk_token.c), after the key password: the
 * id (pkcs11-id-management, ">NEED-STR:Need 'pkcs11-id-request' string") and the token's PIN
 * (">PASSWORD:Need 'LABEL token' password", asked again after a wrong one, three times in all)
 * come from the management client with management-query-passwords, else the PIN from the
 * terminal. 2.6 asks for the PIN at the first handshake instead (its PKCS#11 log-in is lazy).
 *
 * A reload (SIGHUP) asks nothing: 2.6 restarts, asks for the certificate again and decrypts the
 * key with the password it keeps in memory (unless auth-nocache); ovpnd keeps no password. Its
 * reload reuses the certificate given at start-up and the key decrypted then, as long as the
 * key file's encrypted text is the same (acc_mgmt_startup_reload).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/platform_util.h>

#include "server/ops/mgmt.h"
#include "server/ops/notify.h"

#include "server/control/acceptor_internal.h"

#define KEY_PASSWORD_TYPE "Private Key" /* 2.6 UP_TYPE_PRIVATE_KEY */

static const int caught[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
_Static_assert(sizeof(caught) / sizeof(caught[0]) ==
                   sizeof(((struct acc_mgmt_startup *)0)->sigs) /
                       sizeof(((struct acc_mgmt_startup *)0)->sigs[0]),
               "one handle per signal caught");

static const char *sig_name(int signum)
{
    switch (signum) {
    case SIGINT:
        return "SIGINT";
    case SIGTERM:
        return "SIGTERM";
    case SIGHUP:
        return "SIGHUP";
    case SIGUSR1:
        return "SIGUSR1";
    default:
        return "SIGUSR2";
    }
}

static void on_signal(uv_signal_t *h, int signum)
{
    struct acceptor *a = h->data;

    if (signum == SIGINT || signum == SIGTERM) {
        a->mgmt_startup.signum = signum;
        return;
    }
    /* (their default action would end the server without a word) */
    log_msg(LOG_WARN, "%s ignored: start-up waits for the management interface", sig_name(signum));
}

/* While waiting, signals end the wait (SIGINT, SIGTERM) or are ignored, not left to their
 * default action: the main thread's handlers come later (server.c). */
static int catch_signals(struct acceptor *a)
{
    for (size_t i = 0; i < sizeof(caught) / sizeof(caught[0]); i++) {
        uv_signal_t *h = &a->mgmt_startup.sigs[i];
        int err = uv_signal_init(&a->loop, h);

        if (err) {
            return err;
        }
        h->data = a;
        err = uv_signal_start(h, on_signal, caught[i]);
        if (err) {
            return err;
        }
    }
    return 0;
}

static void release_signals(struct acceptor *a)
{
    for (size_t i = 0; i < sizeof(caught) / sizeof(caught[0]); i++) {
        uv_handle_t *h = (uv_handle_t *)&a->mgmt_startup.sigs[i];

        if (h->loop && !uv_is_closing(h)) {
            uv_close(h, NULL); /* the acceptor's loop finishes it (the struct outlives it) */
        }
    }
}

static void on_notify_timer(uv_timer_t *t)
{
    struct acceptor *a = t->data;

    if (a->mgmt_startup.waiting_for) {
        notify_waiting(a->mgmt_startup.waiting_for);
    }
}

/* Run the loop until the hold is released (answer NULL) or an answer came (into *answer), or
 * SIGINT / SIGTERM (-EINTR). A service manager is told what the wait is for (what), and that it
 * goes on, so that a unit's start-up timeout does not end it (notify_waiting). */
static int wait_for(struct acceptor *a, char **answer, const char *what)
{
    struct acc_mgmt_startup *ms = &a->mgmt_startup;
    int err = -EINTR;

    ms->waiting_for = what;
    notify_waiting(what);
    while (ms->signum == 0) {
        if (answer ? mgmt_query_take(a->mgmt, answer) : !mgmt_is_held(a->mgmt)) {
            err = 0;
            break;
        }
        uv_run(&a->loop, UV_RUN_ONCE);
    }
    ms->waiting_for = NULL;
    return err;
}

/* management-external-cert TAG: the certificate, kept for reloads. */
static int get_cert(struct acceptor *a, char *errbuf, size_t errbuf_len)
{
    const char *tag = a->cfg->mgmt.external_cert;
    char *pem = NULL, why[200];
    int err;

    /* 2.6 logs the first words when no management client is connected yet, at verb 3 */
    log_msg(LOG_INFO,
            "Need information from management interface, waiting... (management-external-cert: "
            "the server certificate, >NEED-CERTIFICATE:%s)",
            tag);
    mgmt_query_start(a->mgmt, MGMT_QUERY_CERT, tag);
    err = wait_for(a, &pem,
                   "the management client: the server certificate "
                   "(management-external-cert)");
    if (err) {
        return err;
    }
    err = config_cert_set_external(a->cfg, pem, why, sizeof(why));
    if (err) {
        snprintf(errbuf, errbuf_len,
                 "Cannot load inline certificate file: the certificate the management client "
                 "gave (management-external-cert %s): %s",
                 tag, why);
        free(pem);
        return err;
    }
    a->mgmt_startup.cert = pem;
    log_msg(LOG_INFO,
            "management-external-cert %s: certificate received from the management "
            "interface",
            tag);
    return 0;
}

/* management-query-passwords: the encrypted key's password; the key is decrypted with it. */
static int get_key_password(struct acceptor *a, char *errbuf, size_t errbuf_len)
{
    struct config *cfg = a->cfg;
    const char *origin = cfg->tls.key.origin ? cfg->tls.key.origin : "key";
    char *pw = NULL, why[200];
    int err;

    log_msg(LOG_INFO,
            "Need password(s) from management interface, waiting... (management-query-passwords: "
            "the password of the encrypted key %s, >PASSWORD:Need '%s' password)",
            origin, KEY_PASSWORD_TYPE);
    mgmt_query_start(a->mgmt, MGMT_QUERY_PASSWORD, KEY_PASSWORD_TYPE);
    err = wait_for(a, &pw,
                   "the management client: the password of the private key "
                   "(management-query-passwords)");
    if (err) {
        return err;
    }
    memcpy(a->mgmt_startup.key_sha256, cfg->tls.key_locked_sha256, 32);
    err = config_key_unlock(cfg, pw, why, sizeof(why));
    mbedtls_platform_zeroize(pw, strlen(pw));
    free(pw);
    if (err == -EACCES) {
        mgmt_query_failed(a->mgmt, KEY_PASSWORD_TYPE);
        log_msg(LOG_ERR, "Cannot load private key file %s: %s", origin, why);
        snprintf(errbuf, errbuf_len, "Error: private key password verification failed");
        return err;
    }
    if (err) {
        snprintf(errbuf, errbuf_len, "%s: %s", origin, why);
        return err;
    }
    a->mgmt_startup.has_key_sha256 = true;
    log_msg(LOG_INFO,
            "management-query-passwords: %s decrypted with the password from the management "
            "interface",
            origin);
    return 0;
}

/* pkcs11-providers with management-query-passwords: the token's PIN, as 2.6 asks for it
 * (pkcs11.c _pkcs11_openvpn_pin_prompt: ">PASSWORD:Need 'LABEL token' password"); pkcs11-helper
 * asks again after a wrong one, up to three times. */
static bool ask_pin_mgmt(void *ctx, const char *label, unsigned retry, char *pin, size_t pin_cap)
{
    struct acceptor *a = ctx;
    char type[300];
    char *pw = NULL;

    snprintf(type, sizeof(type), "%s token", label);
    log_msg(LOG_INFO,
            "Need password(s) from management interface, waiting... (management-query-passwords: "
            "the PIN of the PKCS#11 token '%s'%s, >PASSWORD:Need '%s' password)",
            label, retry ? ", again after a wrong one" : "", type);
    mgmt_query_start(a->mgmt, MGMT_QUERY_PASSWORD, type);
    if (wait_for(a, &pw,
                 "the management client: the PIN of the PKCS#11 token "
                 "(management-query-passwords)") != 0) {
        return false;
    }
    snprintf(pin, pin_cap, "%s", pw);
    mbedtls_platform_zeroize(pw, strlen(pw));
    free(pw);
    return true;
}

/* Without management-query-passwords: at the terminal, as 2.6's console prompt. */
static bool ask_pin_tty(void *ctx, const char *label, unsigned retry, char *pin, size_t pin_cap)
{
    char prompt[300];

    (void)ctx;
    (void)retry;
    snprintf(prompt, sizeof(prompt), "Enter %s token Password: ", label);
    if (pkcs11_pin_from_tty(prompt, pin, pin_cap)) {
        return true;
    }
    log_msg(LOG_ERR,
            "PKCS#11: the PIN of token '%s' is needed and there is no terminal to ask "
            "it on: add management-query-passwords (and a management client to answer)",
            label);
    return false;
}

/* pkcs11-id-management: the id, as 2.6 asks for it (pkcs11.c tls_ctx_use_pkcs11,
 * ">NEED-STR:Need 'pkcs11-id-request' string MSG:..."); meanwhile the management client may
 * list the ids with pkcs11-id-count and pkcs11-id-get. */
static char *ask_id_mgmt(void *ctx)
{
    struct acceptor *a = ctx;
    char *id = NULL;

    log_msg(LOG_INFO, "Need information from management interface, waiting... "
                      "(pkcs11-id-management: the PKCS#11 id, >NEED-STR:Need 'pkcs11-id-request' "
                      "string)");
    mgmt_query_start_str(a->mgmt, "pkcs11-id-request", "Please specify PKCS#11 id to use");
    if (wait_for(a, &id, "the management client: the PKCS#11 id (pkcs11-id-management)") != 0) {
        return NULL;
    }
    return id;
}

/* pkcs11-providers: open the token, its PIN from the management client or the terminal. */
static int start_token(struct acceptor *a, char *errbuf, size_t errbuf_len)
{
    bool is_mgmt = a->mgmt && a->cfg->mgmt.query_passwords;
    int err = acc_pk_token_start(a, is_mgmt ? ask_pin_mgmt : ask_pin_tty,
                                 is_mgmt ? ask_id_mgmt : NULL, a, errbuf, errbuf_len);

    if (err && a->mgmt_startup.signum) {
        return -EINTR; /* the wait for the PIN ended by a signal */
    }
    if (err == -EACCES) {
        log_msg(LOG_ERR, "%s", errbuf);
        snprintf(errbuf, errbuf_len,
                 "PKCS#11: the token refused the PIN (or none was given): cannot use pkcs11-id");
    }
    return err;
}

bool acc_mgmt_startup_pending(const struct config *cfg)
{
    return cfg->tls.is_key_locked || (cfg->mgmt.external_cert && !cfg->tls.cert.data) ||
           cfg->pkcs11.n_providers > 0;
}

int acc_mgmt_startup(struct acceptor *a, char *errbuf, size_t errbuf_len)
{
    struct acc_mgmt_startup *ms = &a->mgmt_startup;
    int err;

    if (!acc_mgmt_startup_pending(a->cfg)) {
        return 0;
    }
    if (!a->mgmt) {
        /* (config_check_mgmt: neither a certificate nor a key password comes without
         * `management`) */
        return a->cfg->pkcs11.n_providers > 0 ? start_token(a, errbuf, errbuf_len) : 0;
    }
    ms->is_waiting = true;
    err = catch_signals(a);
    if (err) {
        snprintf(errbuf, errbuf_len, "cannot catch signals: %s", uv_strerror(err));
    }
    if (!err && notify_is_enabled()) {
        err = uv_timer_init(&a->loop, &ms->notify_timer);
        if (!err) {
            ms->notify_timer.data = a;
            err = uv_timer_start(&ms->notify_timer, on_notify_timer, NOTIFY_WAIT_EVERY_MS,
                                 NOTIFY_WAIT_EVERY_MS);
        }
        if (err) {
            snprintf(errbuf, errbuf_len, "cannot start a timer: %s", uv_strerror(err));
        }
    }
    if (!err && mgmt_is_held(a->mgmt)) {
        log_msg(LOG_INFO, "Need hold release from management interface, waiting...");
        err = wait_for(a, NULL, "the management client: hold release (management-hold)");
    }
    if (!err && a->cfg->mgmt.external_cert) {
        err = get_cert(a, errbuf, errbuf_len);
    }
    if (!err && a->cfg->tls.is_key_locked) {
        err = get_key_password(a, errbuf, errbuf_len);
    }
    if (!err && a->cfg->pkcs11.n_providers > 0) {
        err = start_token(a, errbuf, errbuf_len);
    }
    if (err == -EINTR) {
        mgmt_query_start(a->mgmt, MGMT_QUERY_NONE, "");
        snprintf(errbuf, errbuf_len,
                 "%s received while waiting for the management interface: "
                 "exiting",
                 sig_name(ms->signum));
    }
    /* the last lines (SUCCESS, or >PASSWORD:Verification Failed) out before anything else */
    uv_run(&a->loop, UV_RUN_NOWAIT);
    release_signals(a);
    if (ms->notify_timer.loop && !uv_is_closing((uv_handle_t *)&ms->notify_timer)) {
        uv_close((uv_handle_t *)&ms->notify_timer, NULL);
    }
    ms->is_waiting = false;
    return err;
}

/* next's locked key: the one start-up decrypted, when the file's encrypted text is the same. */
static int reload_key(struct acceptor *a, struct config *next, char *errbuf, size_t errbuf_len)
{
    const struct config_blob *running = &a->env->cfg->tls.key;
    struct config_blob *key = &next->tls.key;
    char *copy;

    if (!a->mgmt_startup.has_key_sha256 ||
        memcmp(a->mgmt_startup.key_sha256, next->tls.key_locked_sha256, 32) != 0) {
        snprintf(errbuf, errbuf_len,
                 "%s: the encrypted key is not the one start-up decrypted, and its password is "
                 "asked on the management interface at start-up only "
                 "(management-query-passwords): restart ovpnd, or give the password with "
                 "askpass FILE",
                 key->origin ? key->origin : "key");
        return -EINVAL;
    }
    copy = malloc(running->len + 1);
    if (!copy) {
        snprintf(errbuf, errbuf_len, "out of memory");
        return -ENOMEM;
    }
    memcpy(copy, running->data, running->len + 1);
    mbedtls_platform_zeroize(key->data, key->len);
    free(key->data);
    key->data = copy;
    key->len = running->len;
    next->tls.is_key_locked = false;
    return 0;
}

int acc_mgmt_startup_reload(struct acceptor *a, struct config *next, char *errbuf,
                            size_t errbuf_len)
{
    char why[200];
    int err;

    if (next->mgmt.external_cert && !next->tls.cert.data) {
        if (!a->mgmt_startup.cert) {
            snprintf(errbuf, errbuf_len,
                     "management-external-cert: the certificate is asked on the management "
                     "interface at start-up only: restart ovpnd");
            return -EINVAL;
        }
        err = config_cert_set_external(next, a->mgmt_startup.cert, why, sizeof(why));
        if (err) {
            snprintf(errbuf, errbuf_len, "management-external-cert: %s", why);
            return err;
        }
    }
    if (next->pkcs11.n_providers > 0) {
        err = acc_pk_token_reload(a, next, errbuf, errbuf_len);
        if (err) {
            return err;
        }
    }
    return next->tls.is_key_locked ? reload_key(a, next, errbuf, errbuf_len) : 0;
}

void acc_mgmt_startup_free(struct acceptor *a)
{
    free(a->mgmt_startup.cert);
    a->mgmt_startup.cert = NULL;
}
