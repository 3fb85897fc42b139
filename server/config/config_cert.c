/* server/config/config_cert.c: handlers for the certificate options beyond ca/cert/key:
 * x509-username-field, x509-track, tls-export-cert, extra-certs, crl-verify DIR dir, pkcs12,
 * askpass, capath (its directory is read by server/config/capath.c). Facts from
 * openvpn 2.6 src/openvpn/options.c (add_option, options_postprocess_verify_ce), ssl.c
 * (init_ssl), ssl_openssl.c (tls_ctx_load_pkcs12, tls_ctx_load_extra_certs), ssl_mbedtls.c
 * (tls_ctx_load_ca) and ssl_verify.c (verify_cert, verify_check_crl_dir).
 *
 * pkcs12 and an encrypted `key` are turned into the PEM text the other certificate options hold
 * (OpenSSL's libcrypto reads PKCS#12 files and encrypted keys that Mbed TLS 2.28 cannot), and
 * extra-certs is appended to the `cert` chain, so the TLS setup sees plain ca/cert/key blobs.
 * The two the management client gives at start-up (management-query-passwords: an encrypted
 * key's password; management-external-cert: the certificate) go the same way, through
 * config_key_unlock and config_cert_set_external.
 */
#include "server/config/config_internal.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <mbedtls/error.h>
#include <mbedtls/pk.h>
#include <mbedtls/platform_util.h>
#include <mbedtls/sha256.h>
#include <mbedtls/x509_crt.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>

#include "proto/cert_name.h"

#define ASKPASS_MAX 256 /* bytes of a password, as 2.6's USER_PASS_LEN for a key password */

void config_cert_clear(struct config_cert *c)
{
    free(c->username_fields);
    free(c->crl_dir);
    free(c->capath);
    free(c->x509_track);
    free(c->tls_export_cert_dir);
    config_blob_clear(&c->extra_certs);
    memset(c, 0, sizeof(*c));
}

void config_cert_pending_clear(struct config_cert_pending *p)
{
    free(p->extra_certs.path);
    free(p->pkcs12.path);
    free(p->askpass.path);
    free(p->crl_dir.path);
    free(p->export_cert.path);
    free(p->capath.path);
    config_blob_clear(&p->pkcs12_inline);
    memset(p, 0, sizeof(*p));
}

/* `extra-certs FILE` (or inline): certificates sent after the server's own, not trusted. */
int config_h_extra_certs(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return config_set_file(ps, &ps->certp.extra_certs, &ps->cfg->cert.extra_certs, argv[1]);
}

/* `pkcs12 FILE` (or an inline block holding the file in base64, as 2.6 takes it). */
int config_h_pkcs12(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return config_set_file(ps, &ps->certp.pkcs12, &ps->certp.pkcs12_inline, argv[1]);
}

/* `askpass [FILE]`: the password of an encrypted key or PKCS#12 file, from the first line of
 * FILE, or from the terminal. */
int config_h_askpass(struct config_parser *ps, int argc, char **argv)
{
    free(ps->certp.askpass.path);
    ps->certp.askpass.path = NULL;
    ps->certp.askpass.where = config_here(ps);
    return argc > 1 ? config_set_str(ps, &ps->certp.askpass.path, argv[1]) : 0;
}

/* `x509-track [+]ATTR`: every line adds one (2.6 options.c). */
int config_h_x509_track(struct config_parser *ps, int argc, char **argv)
{
    struct config_cert *c = &ps->cfg->cert;
    struct cert_track t, *grown;
    const char *why = NULL;

    (void)argc;
    if (cert_track_parse(argv[1], &t, &why)) {
        return config_error(ps, "'%s': %s", argv[1], why);
    }
    grown = realloc(c->x509_track, (c->n_x509_track + 1) * sizeof(*grown));
    if (grown == NULL) {
        return config_nomem(ps);
    }
    c->x509_track = grown;
    c->x509_track[c->n_x509_track++] = t;
    return 0;
}

/* `tls-export-cert DIR`: checked after the last line (a later `cd` moves it). */
int config_h_tls_export_cert(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    free(ps->certp.export_cert.path);
    ps->certp.export_cert.path = NULL;
    ps->certp.export_cert.where = config_here(ps);
    return config_set_str(ps, &ps->certp.export_cert.path, argv[1]);
}

/* `capath DIR` (2.6 options.c, OpenSSL builds): the last line wins; checked after the last line
 * (a later `cd` moves it, a `chroot` puts it inside the jail). */
int config_h_capath(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    free(ps->certp.capath.path);
    ps->certp.capath.path = NULL;
    ps->certp.capath.where = config_here(ps);
    return config_set_str(ps, &ps->certp.capath.path, argv[1]);
}

/* `crl-verify DIR dir` (called by config_h_crl_verify for the two-word form): a directory
 * holding one file per revoked certificate, named by its serial number in decimal. */
int config_crl_verify_dir(struct config_parser *ps, const char *dir)
{
    config_blob_clear(&ps->cfg->tls.crl);
    free(ps->crl.path);
    ps->crl.path = NULL;
    free(ps->certp.crl_dir.path);
    ps->certp.crl_dir.path = NULL;
    ps->certp.crl_dir.where = config_here(ps);
    return config_set_str(ps, &ps->certp.crl_dir.path, dir);
}

/* `x509-username-field FIELD...` (2.6 options.c): the last line wins; all-lower-case subject
 * field names are upper-cased with a deprecation warning, as 2.6 does; an unsupported "ext:"
 * stops start-up (2.6: "Unsupported x509-username-field extension"). A subject field OpenSSL
 * does not know is accepted with a warning: 2.6 starts and refuses every client then. */
int config_h_x509_username_field(struct config_parser *ps, int argc, char **argv)
{
    struct cert_name_field *fields = calloc((size_t)argc - 1, sizeof(*fields));
    const char *why = NULL;
    bool is_upcased;
    int err = 0;

    if (fields == NULL) {
        return config_nomem(ps);
    }
    for (int i = 1; i < argc && err == 0; i++) {
        if (cert_name_field_parse(argv[i], &fields[i - 1], &is_upcased, &why)) {
            err = config_error(ps, "'%s': %s", argv[i], why);
        } else if (is_upcased) {
            err = config_warn(ps, NULL,
                              "%s: DEPRECATED FEATURE (as in openvpn 2.6): automatically upcased "
                              "the field name '%s' to '%s'; please update your configuration",
                              argv[0], argv[i], fields[i - 1].name);
        }
        if (err == 0 && fields[i - 1].kind == CERT_NAME_SUBJECT && fields[i - 1].oid_len == 0) {
            err = config_warn(ps, NULL,
                              "%s: '%s' is not an X.509 attribute name: every client "
                              "certificate will be refused (as openvpn 2.6 does)",
                              argv[0], fields[i - 1].name);
        }
    }
    if (err) {
        free(fields);
        return err;
    }
    free(ps->cfg->cert.username_fields);
    ps->cfg->cert.username_fields = fields;
    ps->cfg->cert.n_username_fields = (size_t)argc - 1;
    return 0;
}

/* ---- after the last line ---- */

/* The password of the encrypted file for_what into pw (ASKPASS_MAX bytes): the first line of the
 * askpass FILE, or, with `askpass` alone or none at all, typed at the terminal without echo as
 * 2.6 asks for it ("Enter Private Key Password:"). Without a terminal the error is reported at
 * the askpass line, or at w_file (directive name) without one. Returns 0 or -EINVAL. */
static int askpass_read(struct config_parser *ps, const struct config_where *w_file,
                        const char *name, const char *for_what, char *pw)
{
    const struct config_where *w = ps->certp.askpass.where.line ? &ps->certp.askpass.where : w_file;
    FILE *f = NULL;
    struct termios saved, quiet;
    bool is_tty = false;
    char *full = NULL;

    pw[0] = '\0';
    if (ps->certp.askpass.path != NULL) {
        full = config_resolve(ps, ps->certp.askpass.path);
        f = full ? fopen(full, "r") : NULL;
        if (f == NULL) {
            int e = errno;

            config_error_at(ps, w, "askpass", "cannot read '%s': %s",
                            full ? full : ps->certp.askpass.path, strerror(e));
            free(full);
            return -EINVAL;
        }
    } else if (isatty(STDIN_FILENO)) {
        f = stdin;
        is_tty = tcgetattr(STDIN_FILENO, &saved) == 0;
        quiet = saved;
        quiet.c_lflag &= ~(tcflag_t)ECHO;
        is_tty = is_tty && tcsetattr(STDIN_FILENO, TCSANOW, &quiet) == 0;
        fprintf(stderr, "Enter Private Key Password (%s): ", for_what);
        fflush(stderr);
    } else {
        return config_error_at(ps, w, ps->certp.askpass.where.line ? "askpass" : name,
                               "%s is encrypted and standard input is not a terminal to ask "
                               "for its password on: give it in a file with 'askpass FILE'",
                               for_what);
    }
    if (fgets(pw, ASKPASS_MAX, f) == NULL) {
        pw[0] = '\0';
    }
    pw[strcspn(pw, "\r\n")] = '\0';
    if (f == stdin) {
        if (is_tty) {
            tcsetattr(STDIN_FILENO, TCSANOW, &saved);
        }
        fputc('\n', stderr);
    } else {
        fclose(f);
    }
    free(full);
    return 0;
}

/* The PEM text OpenSSL wrote into mem, appended to blob (which may be empty). 0 or -ENOMEM. */
static int blob_append_mem(struct config_blob *blob, BIO *mem)
{
    char *data;
    long n = BIO_get_mem_data(mem, &data);
    char *grown;

    if (n <= 0) {
        return 0;
    }
    grown = malloc(blob->len + (size_t)n + 1);
    if (grown == NULL) {
        return -ENOMEM;
    }
    if (blob->len > 0) {
        memcpy(grown, blob->data, blob->len);
    }
    memcpy(grown + blob->len, data, (size_t)n);
    grown[blob->len + (size_t)n] = '\0';
    if (blob->data != NULL) {
        mbedtls_platform_zeroize(blob->data, blob->len);
        free(blob->data);
    }
    blob->data = grown;
    blob->len += (size_t)n;
    return 0;
}

static int blob_append_bio(struct config_parser *ps, struct config_blob *blob, BIO *mem)
{
    return blob_append_mem(blob, mem) ? config_nomem(ps) : 0;
}

/* A PKCS#12 file's bytes: the file (DER), or the inline block (base64). Caller frees *out. */
static PKCS12 *pkcs12_read(struct config_parser *ps, char **origin)
{
    struct config_cert_pending *cp = &ps->certp;
    PKCS12 *p12 = NULL;

    if (cp->pkcs12.path != NULL) {
        char *full = config_resolve(ps, cp->pkcs12.path);
        FILE *f = full ? fopen(full, "rb") : NULL;
        struct stat st;

        if (f == NULL) {
            config_error_at(ps, &cp->pkcs12.where, "pkcs12", "cannot read '%s': %s",
                            full ? full : cp->pkcs12.path, strerror(errno));
            free(full);
            return NULL;
        }
        if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > CONFIG_MAX_BLOB) {
            config_error_at(ps, &cp->pkcs12.where, "pkcs12",
                            "'%s' is not a regular file of at most %d bytes", full,
                            CONFIG_MAX_BLOB);
            fclose(f);
            free(full);
            return NULL;
        }
        p12 = d2i_PKCS12_fp(f, NULL);
        fclose(f);
        *origin = full;
    } else {
        BIO *b64 = BIO_new(BIO_f_base64());
        BIO *mem = BIO_new_mem_buf(cp->pkcs12_inline.data, (int)cp->pkcs12_inline.len);

        if (b64 != NULL && mem != NULL) {
            BIO_push(b64, mem);
            p12 = d2i_PKCS12_bio(b64, NULL);
        }
        BIO_free(b64);
        BIO_free(mem);
        *origin = cp->pkcs12_inline.origin ? strdup(cp->pkcs12_inline.origin) : NULL;
    }
    if (p12 == NULL) {
        config_error_at(ps, &cp->pkcs12.where, "pkcs12", "%s is not a PKCS#12 file",
                        *origin           ? *origin
                        : cp->pkcs12.path ? cp->pkcs12.path
                                          : "the block");
    }
    return p12;
}

/* pkcs12: the key and certificate become `key` and `cert`; its CA certificates the `ca` when
 * there is none, else they are sent after the certificate (2.6 tls_ctx_load_pkcs12). The
 * password is tried empty first, then the askpass one. */
static int pkcs12_load(struct config_parser *ps)
{
    struct config *cfg = ps->cfg;
    struct config_cert_pending *cp = &ps->certp;
    bool has_ca = ps->ca.path != NULL || cfg->tls.ca.data != NULL;
    char pw[ASKPASS_MAX], *origin = NULL;
    EVP_PKEY *pkey = NULL;
    X509 *cert = NULL;
    STACK_OF(X509) *cas = NULL;
    BIO *mem_key = NULL, *mem_cert = NULL, *mem_ca = NULL;
    PKCS12 *p12;
    int err = 0;

    if (ps->cert.path != NULL || cfg->tls.cert.data != NULL || ps->key.path != NULL ||
        cfg->tls.key.data != NULL) {
        return config_error_at(ps, &cp->pkcs12.where, "pkcs12",
                               "cannot be used with cert or key (as in openvpn 2.6)");
    }
    if (cp->capath.path != NULL) { /* 2.6 options.c, options_postprocess_verify_ce */
        return config_error_at(ps, &cp->capath.where, "capath",
                               "cannot be used with pkcs12 (as in openvpn 2.6)");
    }
    p12 = pkcs12_read(ps, &origin);
    if (p12 == NULL) {
        free(origin);
        return -EINVAL;
    }
    if (!PKCS12_parse(p12, "", &pkey, &cert, &cas)) {
        cas = NULL;
        if (cfg->mgmt.query_passwords && cp->askpass.path == NULL) {
            /* (2.6 asks the management client; here the file is read with the config) */
            err = config_error_at(ps, &cp->pkcs12.where, "pkcs12",
                                  "%s is encrypted: its password cannot come from the "
                                  "management interface (management-query-passwords); give it "
                                  "with askpass FILE",
                                  origin ? origin : "the block");
        }
        err = err ? err
                  : askpass_read(ps, &cp->pkcs12.where, "pkcs12", origin ? origin : "pkcs12", pw);
        if (err == 0 && !PKCS12_parse(p12, pw, &pkey, &cert, &cas)) {
            err = config_error_at(ps, &cp->pkcs12.where, "pkcs12",
                                  "cannot decode %s: wrong password (askpass), or an "
                                  "encryption OpenSSL does not offer by default",
                                  origin);
        }
        mbedtls_platform_zeroize(pw, sizeof(pw));
    }
    PKCS12_free(p12);
    if (err == 0 && (pkey == NULL || cert == NULL)) {
        err = config_error_at(ps, &cp->pkcs12.where, "pkcs12",
                              "%s holds no private key and certificate", origin);
    }
    if (err == 0) {
        mem_key = BIO_new(BIO_s_secmem());
        mem_cert = BIO_new(BIO_s_mem());
        mem_ca = BIO_new(BIO_s_mem());
        if (!mem_key || !mem_cert || !mem_ca ||
            !PEM_write_bio_PrivateKey(mem_key, pkey, NULL, NULL, 0, NULL, NULL) ||
            !PEM_write_bio_X509(mem_cert, cert)) {
            err = config_nomem(ps);
        }
        for (int i = 0; err == 0 && cas != NULL && i < sk_X509_num(cas); i++) {
            if (!PEM_write_bio_X509(has_ca ? mem_cert : mem_ca, sk_X509_value(cas, i))) {
                err = config_nomem(ps);
            }
        }
    }
    err = err ? err : blob_append_bio(ps, &cfg->tls.key, mem_key);
    err = err ? err : blob_append_bio(ps, &cfg->tls.cert, mem_cert);
    if (err == 0 && !has_ca) {
        err = blob_append_bio(ps, &cfg->tls.ca, mem_ca);
    }
    if (err == 0) {
        const char *o = origin ? origin : "pkcs12";

        if (asprintf(&cfg->tls.key.origin, "%s (key)", o) < 0 ||
            asprintf(&cfg->tls.cert.origin, "%s (certificate)", o) < 0 ||
            (!has_ca && cfg->tls.ca.data != NULL &&
             asprintf(&cfg->tls.ca.origin, "%s (CA certificates)", o) < 0)) {
            err = config_nomem(ps);
        }
    }
    BIO_free(mem_key);
    BIO_free(mem_cert);
    BIO_free(mem_ca);
    EVP_PKEY_free(pkey);
    X509_free(cert);
    sk_X509_pop_free(cas, X509_free);
    free(origin);
    return err;
}

int config_cert_before_files(struct config_parser *ps)
{
    if (ps->certp.pkcs12.path == NULL && ps->certp.pkcs12_inline.data == NULL) {
        return 0;
    }
    return pkcs12_load(ps);
}

/* key (encrypted PEM: traditional or PKCS#8) decrypted with pw by OpenSSL, which reads every
 * cipher and key derivation a current openssl writes (Mbed TLS 2.28 does not: PBES2 with AES and
 * HMAC-SHA256), and replaced by the unencrypted PKCS#8 PEM (origin kept). 0; -EACCES when pw does
 * not decrypt it; -ENOMEM. */
static int key_blob_decrypt(struct config_blob *key, const char *pw)
{
    EVP_PKEY *pkey = NULL;
    BIO *in, *out;
    int err = 0;

    in = BIO_new_mem_buf(key->data, (int)key->len);
    pkey = in ? PEM_read_bio_PrivateKey(in, NULL, NULL, (void *)(uintptr_t)pw) : NULL;
    BIO_free(in);
    if (pkey == NULL) {
        return -EACCES;
    }
    out = BIO_new(BIO_s_secmem());
    if (out == NULL || !PEM_write_bio_PrivateKey(out, pkey, NULL, NULL, 0, NULL, NULL)) {
        err = -ENOMEM;
    } else {
        char *origin = key->origin;

        key->origin = NULL;
        config_blob_clear(key);
        key->origin = origin;
        err = blob_append_mem(key, out);
    }
    BIO_free(out);
    EVP_PKEY_free(pkey);
    return err;
}

/* An encrypted `key` decrypted with the askpass password; with management-query-passwords and no
 * askpass FILE left locked for start-up to ask the management client (2.6 misc.c
 * get_user_pass_cr: a password file first, else the management interface, never the terminal). */
static int key_decrypt(struct config_parser *ps)
{
    struct config_blob *key = &ps->cfg->tls.key;
    mbedtls_pk_context pk;
    char pw[ASKPASS_MAX];
    int rc, err;

    if (key->data == NULL) {
        return 0; /* management-external-key */
    }
    mbedtls_pk_init(&pk);
    rc = mbedtls_pk_parse_key(&pk, (const unsigned char *)key->data, key->len + 1, NULL, 0);
    mbedtls_pk_free(&pk);
    if (rc != MBEDTLS_ERR_PK_PASSWORD_REQUIRED) {
        return 0; /* not encrypted (or not a key: check_certs says so) */
    }
    if (ps->cfg->mgmt.query_passwords && ps->certp.askpass.path == NULL) {
        ps->cfg->tls.is_key_locked = true;
        mbedtls_sha256_ret((const unsigned char *)key->data, key->len,
                           ps->cfg->tls.key_locked_sha256, 0);
        return 0;
    }
    err = askpass_read(ps, &ps->key.where, "key", key->origin, pw);
    if (err) {
        return err;
    }
    err = key_blob_decrypt(key, pw);
    mbedtls_platform_zeroize(pw, sizeof(pw));
    if (err == -EACCES) {
        return config_error_at(ps, &ps->key.where, "key",
                               "cannot decrypt %s: wrong password (askpass)", key->origin);
    }
    return err ? config_nomem(ps) : 0;
}

int config_key_unlock(struct config *cfg, const char *password, char *errbuf, size_t errbuf_len)
{
    struct config_blob *key = &cfg->tls.key;
    mbedtls_x509_crt cert;
    mbedtls_pk_context pk;
    int err, rc;

    if (!cfg->tls.is_key_locked) {
        return 0;
    }
    err = key_blob_decrypt(key, password);
    if (err) {
        snprintf(errbuf, errbuf_len, "%s",
                 err == -EACCES ? "the password does not decrypt it" : "out of memory");
        return err;
    }
    cfg->tls.is_key_locked = false;
    /* as check_certs does for a key given in clear (2.6 tls_ctx_load_priv_file) */
    mbedtls_x509_crt_init(&cert);
    mbedtls_pk_init(&pk);
    rc = mbedtls_x509_crt_parse(&cert, (const unsigned char *)cfg->tls.cert.data,
                                cfg->tls.cert.len + 1);
    if (rc == 0) {
        rc = mbedtls_pk_parse_key(&pk, (const unsigned char *)key->data, key->len + 1, NULL, 0);
    }
    if (rc == 0) {
        rc = mbedtls_pk_check_pair(&cert.pk, &pk);
    }
    if (rc != 0) {
        snprintf(errbuf, errbuf_len, "Private key does not match the certificate %s",
                 cfg->tls.cert.origin ? cfg->tls.cert.origin : "");
        err = -EINVAL;
    }
    mbedtls_pk_free(&pk);
    mbedtls_x509_crt_free(&cert);
    return err;
}

int config_cert_set_external(struct config *cfg, const char *pem, char *errbuf, size_t errbuf_len)
{
    const struct config_blob *extra = &cfg->cert.extra_certs;
    struct config_blob blob = {0};
    mbedtls_x509_crt cert;
    size_t len = strlen(pem);
    char text[128];
    int rc;

    /* 2.6 tls_ctx_load_cert_file reads PEM only, the first certificate and the chain after it */
    mbedtls_x509_crt_init(&cert);
    rc = strstr(pem, "-----BEGIN CERTIFICATE-----") == NULL
             ? MBEDTLS_ERR_X509_INVALID_FORMAT
             : mbedtls_x509_crt_parse(&cert, (const unsigned char *)pem, len + 1);
    if (rc == 0 && !mbedtls_pk_can_do(&cert.pk, MBEDTLS_PK_RSA) &&
        !mbedtls_pk_can_do(&cert.pk, MBEDTLS_PK_ECKEY)) {
        snprintf(errbuf, errbuf_len, "its key is neither RSA nor EC (management-external-key)");
        mbedtls_x509_crt_free(&cert);
        return -EINVAL;
    }
    mbedtls_x509_crt_free(&cert);
    if (rc != 0) {
        mbedtls_strerror(rc, text, sizeof(text));
        snprintf(errbuf, errbuf_len, "not PEM certificates (%s)", text);
        return -EINVAL;
    }
    blob.len = len + (extra->data ? 1 + extra->len : 0);
    blob.data = malloc(blob.len + 1);
    if (blob.data == NULL ||
        (cfg->mgmt.external_cert
             ? asprintf(&blob.origin, "management-external-cert %s", cfg->mgmt.external_cert)
             : asprintf(&blob.origin, "the certificate of pkcs11-id")) < 0) {
        blob.origin = NULL;
        config_blob_clear(&blob);
        snprintf(errbuf, errbuf_len, "out of memory");
        return -ENOMEM;
    }
    memcpy(blob.data, pem, len + 1);
    if (extra->data) { /* extra-certs: sent after it, as after `cert` (extra_certs_load) */
        blob.data[len] = '\n';
        memcpy(blob.data + len + 1, extra->data, extra->len + 1);
    }
    config_blob_clear(&cfg->tls.cert);
    cfg->tls.cert = blob;
    return 0;
}

/* extra-certs: read, every certificate checked, appended to the `cert` chain (PEM). */
static int extra_certs_load(struct config_parser *ps)
{
    struct config *cfg = ps->cfg;
    struct config_blob *extra = &cfg->cert.extra_certs;
    const struct config_where *w = &ps->certp.extra_certs.where;
    mbedtls_x509_crt chain;
    int rc, err = 0;

    if (ps->certp.extra_certs.path != NULL) {
        err = config_read_blob(ps, w, "extra-certs", ps->certp.extra_certs.path, extra);
    }
    if (err || extra->data == NULL) {
        return err;
    }
    mbedtls_x509_crt_init(&chain);
    rc = strstr(extra->data, "-----BEGIN CERTIFICATE-----") == NULL
             ? -1
             : mbedtls_x509_crt_parse(&chain, (const unsigned char *)extra->data, extra->len + 1);
    mbedtls_x509_crt_free(&chain);
    if (rc != 0) {
        return config_error_at(ps, w, "extra-certs",
                               "%s: not PEM certificates (or one of them "
                               "cannot be read)",
                               extra->origin);
    }
    if (cfg->mgmt.external_cert) {
        return 0; /* appended to the certificate from the management client */
    }
    if (strstr(cfg->tls.cert.data, "-----BEGIN") == NULL) {
        return config_error_at(ps, w, "extra-certs",
                               "the certificate %s is not PEM: give it in "
                               "PEM form to add extra-certs after it",
                               cfg->tls.cert.origin);
    }
    struct config_blob sep = {.data = "\n", .len = 1};
    char *joined = malloc(cfg->tls.cert.len + sep.len + extra->len + 1);

    if (joined == NULL) {
        return config_nomem(ps);
    }
    memcpy(joined, cfg->tls.cert.data, cfg->tls.cert.len);
    memcpy(joined + cfg->tls.cert.len, sep.data, sep.len);
    memcpy(joined + cfg->tls.cert.len + sep.len, extra->data, extra->len + 1);
    free(cfg->tls.cert.data);
    cfg->tls.cert.data = joined;
    cfg->tls.cert.len += sep.len + extra->len;
    return 0;
}

/* crl-verify DIR dir and tls-export-cert DIR: 2.6 requires a directory it can read and search
 * (options.c check_file_access for "--crl-verify directory"), and write for tls-export-cert.
 * The absolute path goes to *out. */
static int dir_check(struct config_parser *ps, const struct config_pending *pending,
                     const char *name, int mode, char **out)
{
    const struct config_where *w = &pending->where;
    char *full = NULL, *runtime = NULL;
    struct stat st;

    if (pending->path == NULL) {
        return 0;
    }
    /* used after the chroot: inside the jail */
    if (config_jail_path(ps, pending->path, &full, &runtime) != 0) {
        return config_nomem(ps);
    }
    const char *why = NULL;

    if (stat(full, &st) != 0) {
        why = strerror(errno);
    } else if (!S_ISDIR(st.st_mode)) {
        why = "not a directory";
    } else if (access(full, mode) != 0) {
        why = strerror(errno);
    }
    if (why != NULL) {
        config_error_at(ps, w, name, "'%s' is not a directory ovpnd can %s: %s", full,
                        mode & W_OK ? "write to" : "read", why);
        free(full);
        free(runtime);
        return -EINVAL;
    }
    free(full);
    free(*out);
    *out = runtime;
    return 0;
}

/* capath DIR: 2.6 checks only that it can read DIR (options.c check_file_access_chroot, R_OK) and
 * starts; OpenSSL then finds nothing in what is not a directory. The same here, with a warning
 * for that case. The path as the running server sees it goes to cfg->cert.capath. */
static int capath_check(struct config_parser *ps)
{
    const struct config_pending *p = &ps->certp.capath;
    char *full = NULL, *runtime = NULL;
    struct stat st;
    int err = 0;

    if (p->path == NULL) {
        return 0;
    }
    if (config_jail_path(ps, p->path, &full, &runtime) != 0) {
        return config_nomem(ps);
    }
    if (stat(full, &st) != 0 || access(full, R_OK) != 0) {
        err =
            config_error_at(ps, &p->where, "capath", "cannot read '%s': %s", full, strerror(errno));
    } else if (!S_ISDIR(st.st_mode)) {
        err = config_warn(ps, &p->where,
                          "capath: '%s' is not a directory: no CA certificate or CRL is "
                          "read from it (openvpn 2.6 starts with it too)",
                          full);
    }
    free(full);
    if (err) {
        free(runtime);
        return err;
    }
    free(ps->cfg->cert.capath);
    ps->cfg->cert.capath = runtime;
    return 0;
}

int config_cert_after_files(struct config_parser *ps)
{
    int err = key_decrypt(ps);

    err = err ? err : extra_certs_load(ps);
    err = err ? err : capath_check(ps);
    err =
        err ? err
            : dir_check(ps, &ps->certp.crl_dir, "crl-verify", R_OK | X_OK, &ps->cfg->cert.crl_dir);
    return err ? err
               : dir_check(ps, &ps->certp.export_cert, "tls-export-cert", R_OK | W_OK | X_OK,
                           &ps->cfg->cert.tls_export_cert_dir);
}
