/* server/ops/pkcs11.c: the server key on a PKCS#11 token through pkcs11-helper; see the header.
 * What is set up follows openvpn 2.6 (pkcs11.c pkcs11_initialize, pkcs11_addProvider,
 * tls_ctx_use_pkcs11, show_pkcs11_ids; pkcs11_mbedtls.c pkcs11_sign): the system engine is
 * pkcs11-helper's default, no fork mode, the PIN cache as pkcs11-pin-cache says, the certificate
 * created with an infinite PIN cache of its own. */
#include "server/ops/pkcs11.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <mbedtls/base64.h>
#include <mbedtls/platform_util.h>
#include <mbedtls/x509_crt.h>
#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <pkcs11-helper-1.0/pkcs11h-certificate.h>
#include <pkcs11-helper-1.0/pkcs11h-core.h>

#include "server/log/log.h"

struct pkcs11_key {
    pkcs11h_certificate_t cert;
};

static bool is_started;
/* Held around every use of the key (open, log-in, signature), PIN prompts included. pkcs11-helper
 * holds its own (non-recursive) locks meanwhile, so listing the ids then would wait for the
 * signature and its PIN, or, on the thread that asks for the PIN, for itself: the listing only
 * tries it (pkcs11_id_count, pkcs11_id_get). */
static pthread_mutex_t key_lock = PTHREAD_MUTEX_INITIALIZER;
static pkcs11_pin_fn pin_fn;
static void *pin_ctx;

/* pkcs11-helper's log lines, at ovpnd's levels (its debug levels below LOG_DEBUG). */
static void on_log(void *global, unsigned flags, const char *fmt, va_list ap)
{
    enum log_level lvl;
    char line[1024];

    (void)global;
    switch (flags) {
    case PKCS11H_LOG_ERROR:
        lvl = LOG_ERR;
        break;
    case PKCS11H_LOG_WARN:
        lvl = LOG_WARN;
        break;
    case PKCS11H_LOG_INFO:
        lvl = LOG_INFO;
        break;
    case PKCS11H_LOG_DEBUG1:
        lvl = LOG_DEBUG;
        break;
    default:
        lvl = LOG_TRACE;
        break;
    }
    if (!log_enabled(lvl)) {
        return;
    }
    vsnprintf(line, sizeof(line), fmt, ap);
    log_msg(lvl, "PKCS#11: %s", line);
}

static unsigned log_level_now(void)
{
    return log_enabled(LOG_TRACE)   ? PKCS11H_LOG_DEBUG2
           : log_enabled(LOG_DEBUG) ? PKCS11H_LOG_DEBUG1
           : log_enabled(LOG_INFO)  ? PKCS11H_LOG_INFO
                                    : PKCS11H_LOG_WARN;
}

static PKCS11H_BOOL on_pin(void *global, void *user, const pkcs11h_token_id_t token, unsigned retry,
                           char *pin, size_t pin_max)
{
    (void)global;
    (void)user;
    if (!pin_fn || pin_max == 0) {
        log_msg(LOG_WARN, "PKCS#11: token '%s' needs its PIN, and nobody is asked for it now",
                token->label);
        return FALSE;
    }
    if (!pin_fn(pin_ctx, token->label, retry, pin, pin_max)) {
        return FALSE;
    }
    return pin[0] != '\0'; /* 2.6: an empty PIN gives up */
}

/* 2.6 asks to insert a missing token (>NEED-OK 'token-insertion-request'); a server cannot wait
 * for that at a handshake: a token that is not there is not found. */
static PKCS11H_BOOL on_token(void *global, void *user, const pkcs11h_token_id_t token,
                             unsigned retry)
{
    (void)global;
    (void)user;
    (void)retry;
    log_msg(LOG_WARN, "PKCS#11: token '%s' is not present", token->label);
    return FALSE;
}

static int rv_error(CK_RV rv, char *errbuf, size_t errbuf_len, const char *what)
{
    snprintf(errbuf, errbuf_len, "PKCS#11: %s: %s (%lu)", what, pkcs11h_getMessage(rv),
             (unsigned long)rv);
    return -EIO;
}

static int add_provider(const struct pkcs11_provider *p, char *errbuf, size_t errbuf_len)
{
    PKCS11H_BOOL protected_auth = p->protected_auth, cert_private = p->cert_private;
    unsigned mode = p->private_mode;
    CK_RV rv;

    log_msg(LOG_INFO, "PKCS#11: Adding PKCS#11 provider '%s'", p->path);
    rv = pkcs11h_registerProvider(p->path);
    if (rv != CKR_OK) {
        return rv_error(rv, errbuf, errbuf_len, "cannot register the provider");
    }
    rv = pkcs11h_setProviderProperty(p->path, PKCS11H_PROVIDER_PROPERTY_LOCATION, p->path,
                                     strlen(p->path) + 1);
    if (rv == CKR_OK) {
        rv = pkcs11h_setProviderProperty(p->path, PKCS11H_PROVIDER_PROPERTY_ALLOW_PROTECTED_AUTH,
                                         &protected_auth, sizeof(protected_auth));
    }
    if (rv == CKR_OK) {
        rv = pkcs11h_setProviderProperty(p->path, PKCS11H_PROVIDER_PROPERTY_MASK_PRIVATE_MODE,
                                         &mode, sizeof(mode));
    }
    if (rv == CKR_OK) {
        rv = pkcs11h_setProviderProperty(p->path, PKCS11H_PROVIDER_PROPERTY_CERT_IS_PRIVATE,
                                         &cert_private, sizeof(cert_private));
    }
    if (rv == CKR_OK) {
        rv = pkcs11h_initializeProvider(p->path);
    }
    if (rv != CKR_OK) {
        pkcs11h_removeProvider(p->path);
        snprintf(errbuf, errbuf_len,
                 "pkcs11-providers: cannot load '%s' as a PKCS#11 module: %s (%lu)", p->path,
                 pkcs11h_getMessage(rv), (unsigned long)rv);
        return -EIO;
    }
    return 0;
}

/* pkcs11-helper with its hooks. Protected authentication is allowed globally (2.6 init.c
 * init_crypto_pre); each provider's property decides. */
static int init_helper(int pin_cache_s, char *errbuf, size_t errbuf_len)
{
    CK_RV rv = pkcs11h_initialize();

    if (rv != CKR_OK) {
        return rv_error(rv, errbuf, errbuf_len, "cannot initialize pkcs11-helper");
    }
    is_started = true;
    pkcs11h_setLogHook(on_log, NULL);
    pkcs11h_setLogLevel(log_level_now());
    rv = pkcs11h_setForkMode(FALSE);
    rv = rv == CKR_OK ? pkcs11h_setTokenPromptHook(on_token, NULL) : rv;
    rv = rv == CKR_OK ? pkcs11h_setPINPromptHook(on_pin, NULL) : rv;
    rv = rv == CKR_OK ? pkcs11h_setProtectedAuthentication(TRUE) : rv;
    rv = rv == CKR_OK ? pkcs11h_setPINCachePeriod(pin_cache_s) : rv;
    if (rv != CKR_OK) {
        return rv_error(rv, errbuf, errbuf_len, "cannot set up pkcs11-helper");
    }
    return 0;
}

int pkcs11_start(const struct pkcs11_provider *providers, size_t n, int pin_cache_s,
                 pkcs11_pin_fn fn, void *ctx, char *errbuf, size_t errbuf_len)
{
    int err;

    pin_fn = fn;
    pin_ctx = ctx;
    err = init_helper(pin_cache_s, errbuf, errbuf_len);
    for (size_t i = 0; !err && i < n; i++) {
        err = add_provider(&providers[i], errbuf, errbuf_len);
    }
    if (err) {
        pkcs11_stop();
    }
    return err;
}

void pkcs11_set_pin_fn(pkcs11_pin_fn fn, void *ctx)
{
    pin_fn = fn;
    pin_ctx = ctx;
}

void pkcs11_stop(void)
{
    if (is_started) {
        pkcs11h_terminate();
        is_started = false;
    }
    pin_fn = NULL;
    pin_ctx = NULL;
}

static int cert_der(pkcs11h_certificate_t cert, uint8_t **der, size_t *der_len, char *errbuf,
                    size_t errbuf_len)
{
    size_t len = 0;
    uint8_t *buf;
    CK_RV rv = pkcs11h_certificate_getCertificateBlob(cert, NULL, &len);

    if (rv != CKR_OK) {
        return rv_error(rv, errbuf, errbuf_len, "cannot read the certificate");
    }
    buf = malloc(len ? len : 1);
    if (!buf) {
        snprintf(errbuf, errbuf_len, "out of memory");
        return -ENOMEM;
    }
    rv = pkcs11h_certificate_getCertificateBlob(cert, buf, &len);
    if (rv != CKR_OK) {
        free(buf);
        return rv_error(rv, errbuf, errbuf_len, "cannot read the certificate");
    }
    *der = buf;
    *der_len = len;
    return 0;
}

int pkcs11_key_open(const char *id, struct pkcs11_key **key, uint8_t **der, size_t *der_len,
                    char *errbuf, size_t errbuf_len)
{
    pkcs11h_certificate_id_t cid = NULL;
    pkcs11h_certificate_t cert = NULL;
    struct pkcs11_key *k;
    CK_RV rv;
    int err;

    rv = pkcs11h_certificate_deserializeCertificateId(&cid, id);
    if (rv != CKR_OK) {
        snprintf(errbuf, errbuf_len,
                 "pkcs11-id: not a serialized id (ovpnd --show-pkcs11-ids PROVIDER prints them): "
                 "%s (%lu)",
                 pkcs11h_getMessage(rv), (unsigned long)rv);
        return -EINVAL;
    }
    pthread_mutex_lock(&key_lock);
    rv = pkcs11h_certificate_create(cid, NULL, PKCS11H_PROMPT_MASK_ALLOW_ALL,
                                    PKCS11H_PIN_CACHE_INFINITE, &cert);
    pkcs11h_certificate_freeCertificateId(cid);
    if (rv != CKR_OK) {
        pthread_mutex_unlock(&key_lock);
        snprintf(errbuf, errbuf_len, "pkcs11-id: cannot find the certificate it names: %s (%lu)",
                 pkcs11h_getMessage(rv), (unsigned long)rv);
        return -ENOENT;
    }
    err = cert_der(cert, der, der_len, errbuf, errbuf_len);
    pthread_mutex_unlock(&key_lock);
    if (err == -EIO) {
        char why[160];

        snprintf(why, sizeof(why), "%s", errbuf);
        snprintf(errbuf, errbuf_len,
                 "pkcs11-id: no certificate with this id on the token (ovpnd --show-pkcs11-ids "
                 "PROVIDER lists them): %s",
                 why);
    }
    k = err ? NULL : calloc(1, sizeof(*k));
    if (!k) {
        if (!err) {
            free(*der);
            *der = NULL;
            snprintf(errbuf, errbuf_len, "out of memory");
            err = -ENOMEM;
        }
        pkcs11h_certificate_freeCertificate(cert);
        return err == -EIO ? -ENOENT : err;
    }
    k->cert = cert;
    *key = k;
    return 0;
}

int pkcs11_key_login(struct pkcs11_key *key, char *errbuf, size_t errbuf_len)
{
    CK_RV rv;

    pthread_mutex_lock(&key_lock);
    rv = pkcs11h_certificate_ensureKeyAccess(key->cert);
    pthread_mutex_unlock(&key_lock);
    if (rv == CKR_OK) {
        return 0;
    }
    if (rv == CKR_FUNCTION_REJECTED) {
        /* pkcs11-helper's answer when, logged in, it finds no private key object with the
         * certificate's CKA_ID (pkcs11h-certificate.c, _pkcs11h_certificate_resetSession) */
        rv_error(rv, errbuf, errbuf_len,
                 "the token has no private key with the certificate's id (pkcs11-id): import "
                 "the key with the same id as the certificate");
        return -ENOENT;
    }
    rv_error(rv, errbuf, errbuf_len, "cannot log in to the token");
    return rv == CKR_PIN_INCORRECT || rv == CKR_CANCEL || rv == CKR_PIN_LOCKED ||
                   rv == CKR_USER_NOT_LOGGED_IN
               ? -EACCES
               : -EIO;
}

/* PKCS#11 gives ECDSA as r || s, each as long as the group order (PKCS#11 v2.40 section 2.3.1);
 * TLS wants the DER SEQUENCE of two INTEGERs (RFC 8422 section 5.4). */
static int ecdsa_to_der(const uint8_t *raw, size_t raw_len, uint8_t *out, size_t cap,
                        size_t *out_len)
{
    ECDSA_SIG *s = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(raw, (int)(raw_len / 2), NULL);
    BIGNUM *sv = BN_bin2bn(raw + raw_len / 2, (int)(raw_len / 2), NULL);
    int len = -1;

    if (s && r && sv && raw_len % 2 == 0 && ECDSA_SIG_set0(s, r, sv)) {
        r = sv = NULL; /* s owns them */
        len = i2d_ECDSA_SIG(s, NULL);
        if (len > 0 && (size_t)len <= cap) {
            unsigned char *p = out;

            len = i2d_ECDSA_SIG(s, &p);
        } else {
            len = -1;
        }
    }
    BN_free(r);
    BN_free(sv);
    ECDSA_SIG_free(s);
    if (len <= 0) {
        return -ENOSPC;
    }
    *out_len = (size_t)len;
    return 0;
}

int pkcs11_key_sign(struct pkcs11_key *key, bool is_ec, const uint8_t *in, size_t in_len,
                    uint8_t *sig, size_t sig_cap, size_t *sig_len, char *errbuf, size_t errbuf_len)
{
    uint8_t raw[1024];
    size_t len = sizeof(raw);
    CK_RV rv;
    int err;

    pthread_mutex_lock(&key_lock);
    rv = pkcs11h_certificate_signAny(key->cert, is_ec ? CKM_ECDSA : CKM_RSA_PKCS, in, in_len, raw,
                                     &len);
    pthread_mutex_unlock(&key_lock);
    if (rv != CKR_OK) {
        rv_error(rv, errbuf, errbuf_len, "the token did not sign");
        return rv == CKR_USER_NOT_LOGGED_IN || rv == CKR_PIN_INCORRECT ? -EACCES : -EIO;
    }
    if (is_ec) {
        err = ecdsa_to_der(raw, len, sig, sig_cap, sig_len);
    } else if (len <= sig_cap) {
        memcpy(sig, raw, len);
        *sig_len = len;
        err = 0;
    } else {
        err = -ENOSPC;
    }
    if (err) {
        snprintf(errbuf, errbuf_len, "PKCS#11: the token's signature (%zu bytes) does not fit",
                 len);
    }
    return err;
}

void pkcs11_key_free(struct pkcs11_key *key)
{
    if (key) {
        pkcs11h_certificate_freeCertificate(key->cert);
        free(key);
    }
}

bool pkcs11_pin_from_tty(const char *prompt, char *pin, size_t pin_cap)
{
    struct termios saved, quiet;
    bool is_tty;
    size_t len;

    if (!isatty(STDIN_FILENO) || pin_cap == 0) {
        return false;
    }
    is_tty = tcgetattr(STDIN_FILENO, &saved) == 0;
    quiet = saved;
    quiet.c_lflag &= ~(tcflag_t)ECHO;
    is_tty = is_tty && tcsetattr(STDIN_FILENO, TCSANOW, &quiet) == 0;
    fprintf(stderr, "%s", prompt);
    fflush(stderr);
    if (!fgets(pin, (int)pin_cap, stdin)) {
        pin[0] = '\0';
    }
    if (is_tty) {
        tcsetattr(STDIN_FILENO, TCSANOW, &saved);
    }
    fprintf(stderr, "\n");
    len = strcspn(pin, "\r\n");
    pin[len] = '\0';
    return len > 0;
}

static bool show_pin(void *ctx, const char *label, unsigned retry, char *pin, size_t pin_cap)
{
    char prompt[300];

    (void)ctx;
    (void)retry;
    snprintf(prompt, sizeof(prompt), "Please enter '%s' token PIN or 'cancel': ", label);
    return pkcs11_pin_from_tty(prompt, pin, pin_cap) && strcmp(pin, "cancel") != 0;
}

/* One line of --show-pkcs11-ids for a certificate: its subject, serial number and id. */
static void show_one(pkcs11h_certificate_id_t id, FILE *out)
{
    pkcs11h_certificate_t cert = NULL;
    mbedtls_x509_crt crt;
    char *ser = NULL, dn[1024] = "", serial[256] = "", why[200];
    uint8_t *der = NULL;
    size_t ser_len = 0, der_len = 0;

    mbedtls_x509_crt_init(&crt);
    if (pkcs11h_certificate_serializeCertificateId(NULL, &ser_len, id) != CKR_OK ||
        (ser = malloc(ser_len)) == NULL ||
        pkcs11h_certificate_serializeCertificateId(ser, &ser_len, id) != CKR_OK) {
        log_msg(LOG_WARN, "PKCS#11: cannot serialize a certificate id");
        goto out;
    }
    if (pkcs11h_certificate_create(id, NULL, PKCS11H_PROMPT_MASK_ALLOW_ALL,
                                   PKCS11H_PIN_CACHE_INFINITE, &cert) == CKR_OK &&
        cert_der(cert, &der, &der_len, why, sizeof(why)) == 0 &&
        mbedtls_x509_crt_parse_der(&crt, der, der_len) == 0) {
        mbedtls_x509_dn_gets(dn, sizeof(dn), &crt.subject);
        mbedtls_x509_serial_gets(serial, sizeof(serial), &crt.serial);
    }
    fprintf(out,
            "\nCertificate\n"
            "       DN:             %s\n"
            "       Serial:         %s\n"
            "       Serialized id:  %s\n",
            dn, serial, ser);
out:
    mbedtls_x509_crt_free(&crt);
    free(der);
    free(ser);
    if (cert) {
        pkcs11h_certificate_freeCertificate(cert);
    }
}

int pkcs11_show_ids(const char *provider, bool cert_private, FILE *out, char *errbuf,
                    size_t errbuf_len)
{
    const struct pkcs11_provider p = {
        .path = provider, .protected_auth = true, .cert_private = cert_private};
    pkcs11h_certificate_id_list_t list = NULL;
    CK_RV rv;
    int err = pkcs11_start(&p, 1, PKCS11H_PIN_CACHE_INFINITE, show_pin, NULL, errbuf, errbuf_len);

    if (err) {
        return err;
    }
    rv = pkcs11h_certificate_enumCertificateIds(PKCS11H_ENUM_METHOD_CACHE_EXIST, NULL,
                                                PKCS11H_PROMPT_MASK_ALLOW_ALL, NULL, &list);
    if (rv != CKR_OK) {
        err = rv_error(rv, errbuf, errbuf_len, "cannot list the certificates");
    } else {
        /* 2.6's words, for those who read them */
        fprintf(out, "\nThe following objects are available for use.\n"
                     "Each object shown below may be used as parameter to\n"
                     "--pkcs11-id option please remember to use single quote mark.\n");
        for (pkcs11h_certificate_id_list_t c = list; c; c = c->next) {
            show_one(c->certificate_id, out);
        }
    }
    pkcs11h_certificate_freeCertificateIdList(list);
    pkcs11_stop();
    return err;
}

/* The certificates the tokens show without asking for a PIN: a management command runs on the
 * loop that waits for the management client's PIN, and cannot wait for it again. */
static pkcs11h_certificate_id_list_t id_list(void)
{
    pkcs11h_certificate_id_list_t list = NULL;

    if (!is_started || pkcs11h_certificate_enumCertificateIds(PKCS11H_ENUM_METHOD_CACHE_EXIST, NULL,
                                                              0, NULL, &list) != CKR_OK) {
        return NULL;
    }
    return list;
}

int pkcs11_id_count(void)
{
    pkcs11h_certificate_id_list_t list;
    int n = 0;

    if (pthread_mutex_trylock(&key_lock) != 0) {
        return -EBUSY;
    }
    list = id_list();
    for (pkcs11h_certificate_id_list_t c = list; c; c = c->next) {
        n++;
    }
    pkcs11h_certificate_freeCertificateIdList(list);
    pthread_mutex_unlock(&key_lock);
    return n;
}

int pkcs11_id_get(int index, char **id, char **b64)
{
    pkcs11h_certificate_id_list_t list, c;
    pkcs11h_certificate_t cert = NULL;
    uint8_t *der = NULL;
    size_t der_len = 0, len = 0, b64_len = 0;
    char why[200];
    int err = -ENOENT;

    *id = *b64 = NULL;
    if (pthread_mutex_trylock(&key_lock) != 0) {
        return -EBUSY;
    }
    list = c = id_list();
    for (int i = 0; c && i < index; i++) {
        c = c->next;
    }
    if (!c || index < 0) {
        goto out;
    }
    err = -EIO;
    if (pkcs11h_certificate_serializeCertificateId(NULL, &len, c->certificate_id) != CKR_OK ||
        (*id = malloc(len)) == NULL ||
        pkcs11h_certificate_serializeCertificateId(*id, &len, c->certificate_id) != CKR_OK ||
        pkcs11h_certificate_create(c->certificate_id, NULL, 0, PKCS11H_PIN_CACHE_INFINITE, &cert) !=
            CKR_OK ||
        cert_der(cert, &der, &der_len, why, sizeof(why)) != 0) {
        goto out;
    }
    mbedtls_base64_encode(NULL, 0, &b64_len, der, der_len);
    *b64 = malloc(b64_len);
    if (*b64 &&
        mbedtls_base64_encode((unsigned char *)*b64, b64_len, &b64_len, der, der_len) == 0) {
        err = 0;
    }
out:
    if (err) {
        free(*id);
        free(*b64);
        *id = *b64 = NULL;
    }
    free(der);
    if (cert) {
        pkcs11h_certificate_freeCertificate(cert);
    }
    pkcs11h_certificate_freeCertificateIdList(list);
    pthread_mutex_unlock(&key_lock);
    return err;
}
