/* server/control/pk_token.c: pkcs11-providers on the acceptor: the server's certificate and key
 * on a PKCS#11 token (server/ops/pkcs11.h), opened at start-up; each handshake's signature made
 * by the token on a thread of its own.
 *
 * openvpn 2.6 signs inside its TLS library's callback (pkcs11_mbedtls.c pkcs11_sign, or
 * pkcs11_openssl.c), on its only thread: while the token works, and while it waits for the PIN
 * at the first handshake, no other client is served. Here a handshake that needs the signature
 * returns from its step (the management-external-key path, proto/pk_external.h): the request,
 * what the token must sign, goes to the token thread, which signs one request at a time in
 * order and posts the signature back to the acceptor (a MSG_CALL); the signature is checked
 * against the certificate's public key and the handshake steps again. Other handshakes and every
 * connected client go on meanwhile; the TLS threads are not held either. The PIN is asked at
 * start-up, before the server serves (mgmt_startup.c), not at the first handshake as 2.6 does.
 * With pkcs11-pin-cache N the log-in runs out N seconds after its last use (pkcs11-helper), and
 * the next signature needs the PIN again: the token thread asks the management client through
 * the acceptor (">PASSWORD:Need 'LABEL token' password", as 2.6 asks at that handshake) and
 * waits for the answer; only the handshakes queued for the token wait with it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/pem.h>
#include <mbedtls/platform_util.h>
#include <mbedtls/x509_crt.h>

#include "proto/pk_external.h"
#include "proto/tls_session.h"
#include "server/ops/mgmt.h"
#include "server/thread/mailbox.h"
#include "server/thread/msg.h"

#include "server/control/acceptor_internal.h"

struct acc_token_job {
    struct acc_token_job *next;
    struct acceptor *a;
    struct acc_pk_token *t; /* a->pk_token */
    unsigned long cid;      /* the session's CID and its key's KID */
    unsigned kid;
    uint8_t data[PK_EXT_DATA_MAX]; /* what the token signs */
    size_t len;
    uint8_t sig[PK_EXT_SIG_MAX]; /* its answer */
    size_t sig_len;
    int err;
    char why[200];
    struct msg *done; /* posted to the acceptor when signed (made ahead: cannot fail) */
};

static void job_free(struct acc_token_job *j)
{
    mbedtls_platform_zeroize(j->data, sizeof(j->data));
    free(j);
}

/* The acceptor's thread (MSG_CALL): the token's answer goes into the handshake. */
static void job_done(void *arg)
{
    struct acc_token_job *j = arg;
    struct acceptor *a = j->a;
    struct ctl_session *cs = NULL;
    struct key_state *ks = acc_pk_sign_find(a, j->cid, j->kid, &cs);

    if (!ks) {
        job_free(j); /* the session ended meanwhile */
        return;
    }
    if (j->err) {
        acc_pk_sign_fail(a, cs, ks, j->why); /* pkcs11_key_sign's reason starts "PKCS#11: " */
    } else if (pk_external_answer(&ks->tls->conf->key, ks->tls->pk_req, j->sig, j->sig_len) != 0) {
        acc_pk_sign_fail(a, cs, ks,
                         "PKCS#11: the token's signature does not verify with the certificate's "
                         "public key");
    } else {
        acc_cs_log(a, cs, LOG_DEBUG, "PKCS#11: signature made by the token");
        acc_tls_step(a, cs, ks);
    }
    job_free(j);
}

static void job_discard(void *arg)
{
    job_free(arg);
}

static void *token_main(void *arg)
{
    struct acc_pk_token *t = arg;

    for (;;) {
        struct acc_token_job *j;

        pthread_mutex_lock(&t->lock);
        while (!t->head && !t->is_stopping) {
            pthread_cond_wait(&t->cond, &t->lock);
        }
        if (t->is_stopping) {
            pthread_mutex_unlock(&t->lock);
            return NULL;
        }
        j = t->head;
        t->head = j->next;
        if (!t->head) {
            t->tail = NULL;
        }
        pthread_mutex_unlock(&t->lock);
        j->err = pkcs11_key_sign(t->key, t->is_ec, j->data, j->len, j->sig, sizeof(j->sig),
                                 &j->sig_len, j->why, sizeof(j->why));
        mailbox_post(j->a->env->mb, MAILBOX_ACCEPTOR, j->done);
    }
}

/* The acceptor's thread (MSG_CALL): the token thread wants the PIN again: ask for it. */
static void pin_ask(void *arg)
{
    struct acc_pk_token *t = arg;
    struct acceptor *a = t->a;
    char type[sizeof(t->pin_type)];

    pthread_mutex_lock(&t->lock);
    memcpy(type, t->pin_type, sizeof(type));
    pthread_mutex_unlock(&t->lock);
    if (!a->mgmt) {
        pthread_mutex_lock(&t->lock);
        t->is_pin_given = true; /* (no answer: the log-in fails) */
        pthread_cond_broadcast(&t->cond);
        pthread_mutex_unlock(&t->lock);
        return;
    }
    log_msg(LOG_INFO,
            "Need password(s) from management interface, waiting... (PKCS#11: the log-in to the "
            "token ran out (pkcs11-pin-cache): the handshakes that need its signature wait for "
            ">PASSWORD:Need '%s' password)",
            type);
    mgmt_query_start(a->mgmt, MGMT_QUERY_PASSWORD, type);
    t->is_pin_asked = true;
}

static void pin_ask_discard(void *arg)
{
    (void)arg; /* the acceptor stopped: acc_pk_token_free wakes the token thread */
}

/* The token thread (pkcs11-helper's PIN hook once the server serves): ask the acceptor, wait. */
static bool pin_at_run(void *ctx, const char *label, unsigned retry, char *pin, size_t pin_cap)
{
    struct acc_pk_token *t = ctx;
    struct msg *m = msg_call_new(pin_ask, pin_ask_discard, t);
    bool ok = false;

    (void)retry;
    if (!m) {
        return false;
    }
    pthread_mutex_lock(&t->lock);
    snprintf(t->pin_type, sizeof(t->pin_type), "%s token", label);
    t->is_pin_given = false;
    pthread_mutex_unlock(&t->lock);
    mailbox_post(t->a->env->mb, MAILBOX_ACCEPTOR, m);
    pthread_mutex_lock(&t->lock);
    while (!t->is_pin_given && !t->is_stopping) {
        pthread_cond_wait(&t->cond, &t->lock);
    }
    if (t->is_pin_given && t->pin) {
        snprintf(pin, pin_cap, "%s", t->pin);
        ok = true;
    }
    if (t->pin) {
        mbedtls_platform_zeroize(t->pin, strlen(t->pin));
        free(t->pin);
        t->pin = NULL;
    }
    t->is_pin_given = false;
    pthread_mutex_unlock(&t->lock);
    return ok;
}

void acc_pk_token_tick(struct acceptor *a)
{
    struct acc_pk_token *t = &a->pk_token;
    char *pw = NULL;

    if (!t->is_pin_asked || !a->mgmt || !mgmt_query_take(a->mgmt, &pw)) {
        return;
    }
    t->is_pin_asked = false;
    pthread_mutex_lock(&t->lock);
    t->pin = pw;
    t->is_pin_given = true;
    pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->lock);
}

bool acc_pk_token_is_on(const struct acceptor *a)
{
    return a->pk_token.has_thread && a->cfg->pkcs11.n_providers > 0;
}

void acc_pk_token_wanted(struct acceptor *a, struct ctl_session *cs, struct key_state *ks)
{
    struct acc_pk_token *t = &a->pk_token;
    struct pk_ext_req *r = ks->tls->pk_req;
    struct acc_token_job *j;
    char alg[64];

    acc_flush(a, cs); /* ServerHello and Certificate go out meanwhile */
    if (r->is_asked) {
        return; /* a step ran again before the answer: it is already waiting */
    }
    j = calloc(1, sizeof(*j));
    if (j) {
        j->done = msg_call_new(job_done, job_discard, j);
    }
    if (!j || !j->done) {
        free(j);
        acc_pk_sign_fail(a, cs, ks, "PKCS#11: out of memory");
        return;
    }
    j->a = a;
    j->t = t;
    j->cid = cs->cid;
    j->kid = ks->kid;
    /* the DigestInfo and hash for RSA (CKM_RSA_PKCS pads them), the hash for ECDSA */
    if (pk_external_request(&ks->tls->conf->key, r, j->data, sizeof(j->data), &j->len, alg,
                            sizeof(alg)) != 0) {
        msg_discard(j->done); /* (frees j) */
        acc_pk_sign_fail(a, cs, ks, "PKCS#11: the data to sign cannot be built");
        return;
    }
    pthread_mutex_lock(&t->lock);
    if (t->tail) {
        t->tail->next = j;
    } else {
        t->head = j;
    }
    t->tail = j;
    pthread_cond_signal(&t->cond);
    pthread_mutex_unlock(&t->lock);
}

/* The token's certificate as PEM (what config_cert_set_external reads): *pem malloc'd. */
static int der_to_pem(const uint8_t *der, size_t der_len, char **pem, char *errbuf,
                      size_t errbuf_len)
{
    size_t cap = der_len * 2 + 128, olen = 0;
    char *buf = malloc(cap);

    if (!buf) {
        snprintf(errbuf, errbuf_len, "out of memory");
        return -ENOMEM;
    }
    if (mbedtls_pem_write_buffer("-----BEGIN CERTIFICATE-----\n", "-----END CERTIFICATE-----\n",
                                 der, der_len, (unsigned char *)buf, cap, &olen) != 0) {
        free(buf);
        snprintf(errbuf, errbuf_len, "PKCS#11: the token's certificate cannot be encoded");
        return -EIO;
    }
    *pem = buf;
    return 0;
}

static bool is_ec_cert(const uint8_t *der, size_t der_len)
{
    mbedtls_x509_crt crt;
    bool is_ec;

    mbedtls_x509_crt_init(&crt);
    is_ec = mbedtls_x509_crt_parse_der(&crt, der, der_len) == 0 &&
            mbedtls_pk_can_do(&crt.pk, MBEDTLS_PK_ECKEY);
    mbedtls_x509_crt_free(&crt);
    return is_ec;
}

/* errbuf = "WHERE: " + errbuf, where the config line is known (NULL: left as it is). */
static void prefix_where(const char *where, char *errbuf, size_t errbuf_len)
{
    char text[512];

    if (where && errbuf_len > 0) {
        snprintf(text, sizeof(text), "%s", errbuf);
        snprintf(errbuf, errbuf_len, "%s: %s", where, text);
    }
}

/* The config's providers as server/ops/pkcs11.h takes them; the paths are borrowed. */
static void fill_providers(const struct config_pkcs11 *c, struct pkcs11_provider *providers)
{
    for (size_t i = 0; i < c->n_providers; i++) {
        providers[i] = (struct pkcs11_provider){.path = c->providers[i],
                                                .protected_auth = c->protected_auth[i],
                                                .private_mode = c->private_mode[i],
                                                .cert_private = c->cert_private[i]};
    }
}

int acc_pk_token_check(const struct config *cfg, char *errbuf, size_t errbuf_len)
{
    const struct config_pkcs11 *c = &cfg->pkcs11;
    struct pkcs11_provider providers[CONFIG_PKCS11_MAX];
    struct pkcs11_key *key = NULL;
    bool is_cert_private = false;
    uint8_t *der = NULL;
    size_t der_len = 0;
    int err;

    fill_providers(c, providers);
    for (size_t i = 0; i < c->n_providers; i++) {
        is_cert_private = is_cert_private || c->cert_private[i];
    }
    err = pkcs11_start(providers, c->n_providers, c->pin_cache_s, NULL, NULL, errbuf, errbuf_len);
    if (err) {
        prefix_where(c->providers_where, errbuf, errbuf_len);
        return err;
    }
    if (c->id_management || is_cert_private) {
        log_msg(LOG_INFO,
                "pkcs11-providers: loaded; the certificate on the token is not checked "
                "at --test-config (%s)",
                c->id_management ? "pkcs11-id-management: its id comes from the management "
                                   "client at start-up"
                                 : "pkcs11-cert-private: it is read after the log-in");
    } else {
        err = pkcs11_key_open(c->id, &key, &der, &der_len, errbuf, errbuf_len);
        if (err) {
            prefix_where(c->id_where, errbuf, errbuf_len);
        } else {
            log_msg(LOG_INFO, "pkcs11-id: the certificate is on the token (the PIN and the key "
                              "are checked at start-up)");
        }
        pkcs11_key_free(key);
        free(der);
    }
    pkcs11_stop();
    return err;
}

int acc_pk_token_start(struct acceptor *a, pkcs11_pin_fn pin_fn, char *(*id_fn)(void *ctx),
                       void *ctx, char *errbuf, size_t errbuf_len)
{
    const struct config_pkcs11 *c = &a->cfg->pkcs11;
    struct acc_pk_token *t = &a->pk_token;
    struct pkcs11_provider providers[CONFIG_PKCS11_MAX];
    uint8_t *der = NULL;
    size_t der_len = 0;
    char why[200];
    int err;

    fill_providers(c, providers);
    err = pkcs11_start(providers, c->n_providers, c->pin_cache_s, pin_fn, ctx, errbuf, errbuf_len);
    if (err) {
        prefix_where(c->providers_where, errbuf, errbuf_len);
        return err;
    }
    if (c->id_management) {
        char *id = id_fn ? id_fn(ctx) : NULL;

        if (!id) {
            snprintf(errbuf, errbuf_len,
                     "PKCS#11: pkcs11-id-management: no id came from the management client");
            return -EINVAL;
        }
        err = pkcs11_key_open(id, &t->key, &der, &der_len, errbuf, errbuf_len);
        free(id);
    } else {
        err = pkcs11_key_open(c->id, &t->key, &der, &der_len, errbuf, errbuf_len);
    }
    if (!err) {
        t->is_ec = is_ec_cert(der, der_len);
        err = der_to_pem(der, der_len, &t->cert_pem, errbuf, errbuf_len);
    }
    free(der);
    if (!err) {
        err = config_cert_set_external(a->cfg, t->cert_pem, why, sizeof(why));
        if (err) {
            snprintf(errbuf, errbuf_len, "PKCS#11: the token's certificate: %s", why);
        }
    }
    if (!err) {
        err = pkcs11_key_login(t->key, errbuf, errbuf_len);
    }
    if (err) {
        prefix_where(c->id_where, errbuf, errbuf_len);
    }
    /* once the server serves, a log-in that ran out (pkcs11-pin-cache N) asks the management
     * client from the token thread (config_check_pkcs11: N >= 0 needs
     * management-query-passwords); with the default, pkcs11-helper never asks again */
    t->a = a;
    pkcs11_set_pin_fn(a->cfg->pkcs11.pin_cache_s >= 0 ? pin_at_run : NULL, t);
    if (!err) {
        err = -pthread_mutex_init(&t->lock, NULL);
        err = err ? err : -pthread_cond_init(&t->cond, NULL);
        err = err ? err : -pthread_create(&t->thread, NULL, token_main, t);
        if (err) {
            snprintf(errbuf, errbuf_len, "PKCS#11: cannot start the signing thread: %s",
                     strerror(-err));
        }
    }
    if (err) {
        return err;
    }
    t->has_thread = true;
    log_msg(LOG_INFO,
            "PKCS#11: the server's certificate and %s key are on the token (pkcs11-id); each "
            "handshake's signature is made there on a thread of its own, without holding other "
            "clients",
            t->is_ec ? "EC" : "RSA");
    return 0;
}

static bool same_token(const struct config_pkcs11 *x, const struct config_pkcs11 *y)
{
    if (x->n_providers != y->n_providers || x->pin_cache_s != y->pin_cache_s ||
        x->id_management != y->id_management) {
        return false;
    }
    if (!x->id_management && (!x->id || !y->id || strcmp(x->id, y->id) != 0)) {
        return false; /* (with pkcs11-id-management, the id start-up was given stays) */
    }
    for (size_t i = 0; i < x->n_providers; i++) {
        if (strcmp(x->providers[i], y->providers[i]) != 0 ||
            x->protected_auth[i] != y->protected_auth[i] ||
            x->private_mode[i] != y->private_mode[i] || x->cert_private[i] != y->cert_private[i]) {
            return false;
        }
    }
    return true;
}

int acc_pk_token_reload(struct acceptor *a, struct config *next, char *errbuf, size_t errbuf_len)
{
    char why[200];
    int err;

    if (!a->pk_token.key || !same_token(&a->env->cfg->pkcs11, &next->pkcs11)) {
        snprintf(errbuf, errbuf_len,
                 "pkcs11-providers / pkcs11-id: the token is opened at start-up only, and these "
                 "lines are not the ones it was opened with: restart ovpnd");
        return -EINVAL;
    }
    err = config_cert_set_external(next, a->pk_token.cert_pem, why, sizeof(why));
    if (err) {
        snprintf(errbuf, errbuf_len, "PKCS#11: the token's certificate: %s", why);
    }
    return err;
}

void acc_pk_token_free(struct acceptor *a)
{
    struct acc_pk_token *t = &a->pk_token;

    if (t->has_thread) {
        pthread_mutex_lock(&t->lock);
        t->is_stopping = true;
        pthread_cond_broadcast(&t->cond);
        pthread_mutex_unlock(&t->lock);
        pthread_join(t->thread, NULL);
        while (t->head) {
            struct acc_token_job *j = t->head;

            t->head = j->next;
            msg_discard(j->done); /* (frees j) */
        }
        t->tail = NULL;
        pthread_cond_destroy(&t->cond);
        pthread_mutex_destroy(&t->lock);
        t->has_thread = false;
    }
    pkcs11_key_free(t->key);
    t->key = NULL;
    pkcs11_stop();
    if (t->pin) {
        mbedtls_platform_zeroize(t->pin, strlen(t->pin));
        free(t->pin);
        t->pin = NULL;
    }
    free(t->cert_pem);
    t->cert_pem = NULL;
}
