/* server/hooks/x509_track.c: see x509_track.h. */
#include "server/hooks/x509_track.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

/* value, made safe for the environment as 2.6 does (string_mod CC_CRLF -> '?', then the
 * environment's CC_PRINT rule), added as X509_{depth}_{name}. */
static int add(struct script_env *env, int depth, const char *name, char *value)
{
    char var[128];

    for (char *p = value; *p != '\0'; p++) {
        if (*p == '\r' || *p == '\n') {
            *p = '?';
        } else if ((unsigned char)*p < 0x20 || *p == 0x7f) {
            *p = '_';
        }
    }
    snprintf(var, sizeof(var), "X509_%d_%s", depth, name);
    return script_env_add(env, var, value);
}

static int add_fingerprint(struct script_env *env, int depth, const char *name,
                           const mbedtls_x509_crt *crt, const EVP_MD *md)
{
    static const char hex[] = "0123456789ABCDEF";
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    char text[EVP_MAX_MD_SIZE * 3 + 1];
    size_t o = 0;

    if (!EVP_Digest(crt->raw.p, crt->raw.len, digest, &len, md, NULL)) {
        return -ENOMEM;
    }
    for (unsigned int i = 0; i < len; i++) {
        text[o++] = hex[digest[i] >> 4];
        text[o++] = hex[digest[i] & 15];
        text[o++] = i + 1 < len ? ':' : '\0';
    }
    text[len ? o - 1 : 0] = '\0';
    return add(env, depth, name, text);
}

/* An attribute of the subject (the first of its type), else an extension as OpenSSL prints it;
 * nothing when the certificate has neither. */
static int add_attr(struct script_env *env, int depth, const struct cert_track *t, X509 *x)
{
    X509_NAME *subject = X509_get_subject_name(x);
    int i = X509_NAME_get_index_by_NID(subject, t->nid, -1);
    int err = 0;

    if (i >= 0) {
        X509_NAME_ENTRY *ent = X509_NAME_get_entry(subject, i);
        unsigned char *utf8 = NULL;

        if (ent != NULL && ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(ent)) >= 0) {
            err = add(env, depth, t->name, (char *)utf8);
            OPENSSL_free(utf8);
        }
        return err;
    }
    i = X509_get_ext_by_NID(x, t->nid, -1);
    X509_EXTENSION *ext = i >= 0 ? X509_get_ext(x, i) : NULL;
    BIO *bio = ext != NULL ? BIO_new(BIO_s_mem()) : NULL;

    if (bio != NULL && X509V3_EXT_print(bio, ext, 0, 0) && BIO_write(bio, "", 1) == 1) {
        char *text = NULL;

        BIO_get_mem_data(bio, &text);
        err = add(env, depth, t->name, text);
    }
    BIO_free(bio);
    return err;
}

int x509_track_env(struct script_env *env, int depth, const mbedtls_x509_crt *crt,
                   const struct cert_track *track, size_t n)
{
    const unsigned char *p = crt->raw.p;
    X509 *x = d2i_X509(NULL, &p, (long)crt->raw.len);
    int err = 0;

    if (x == NULL) {
        return -EINVAL;
    }
    for (size_t i = 0; i < n && err == 0; i++) {
        const struct cert_track *t = &track[i];

        if (depth != 0 && !t->is_full_chain) {
            continue;
        }
        if (t->nid == NID_sha1 || t->nid == NID_sha256) {
            err = add_fingerprint(env, depth, t->name, crt,
                                  t->nid == NID_sha1 ? EVP_sha1() : EVP_sha256());
        } else {
            err = add_attr(env, depth, t, x);
        }
    }
    X509_free(x);
    return err;
}
