/* proto/cert_check.c: certificate usage checks on a verified peer certificate. */
#include "proto/cert_check.h"

#include <stdio.h>
#include <string.h>

#include <mbedtls/oid.h>

#include "proto/errors.h"

int cert_check_subject(const mbedtls_x509_crt *crt, char *out, size_t out_len)
{
    size_t cap = out_len < CERT_CHECK_SUBJECT_MAX ? out_len : CERT_CHECK_SUBJECT_MAX;
    int ret;

    if (out_len == 0) {
        return -PE_MALFORMED;
    }
    out[0] = '\0';
    ret = crt ? mbedtls_x509_dn_gets(out, cap - 1, &crt->subject) : -1;
    if (ret <= 0) {
        out[0] = '\0';
        return -PE_MALFORMED;
    }
    for (char *p = out; *p != '\0'; p++) {
        unsigned char c = (unsigned char)*p;

        if (c < 32 || c == 127) {
            *p = '_';
        }
    }
    if (out[0] == '-') {
        out[0] = '_';
    }
    return 0;
}

int cert_check_x509_name(const mbedtls_x509_crt *crt, const char *cn, const char *name, int type,
                         char *why, size_t why_len)
{
    char subject[CERT_CHECK_SUBJECT_MAX];
    bool is_match = false;

    cert_check_subject(crt, subject, sizeof(subject));
    switch (type) {
    case CERT_CHECK_X509_NAME:
        is_match = strcmp(cn, name) == 0;
        break;
    case CERT_CHECK_X509_NAME_PREFIX:
        is_match = strncmp(cn, name, strlen(name)) == 0;
        break;
    default:
        is_match = subject[0] != '\0' && strcmp(subject, name) == 0;
        break;
    }
    if (is_match) {
        return 0;
    }
    if (why_len > 0) {
        snprintf(why, why_len, "verify-x509-name: the certificate's %s '%.256s' %s '%.256s'",
                 type == CERT_CHECK_X509_SUBJECT ? "subject" : "common name",
                 type == CERT_CHECK_X509_SUBJECT ? subject : cn,
                 type == CERT_CHECK_X509_NAME_PREFIX ? "does not start with" : "is not", name);
    }
    return -PE_AUTH;
}

int cert_check_remote_tls_client(const mbedtls_x509_crt *crt, const char **why)
{
    if (!crt) {
        *why = "no client certificate";
        return -PE_AUTH;
    }
    if (!(crt->ext_types & MBEDTLS_X509_EXT_KEY_USAGE)) {
        *why = "the client certificate has no key usage extension (remote-cert-tls client)";
        return -PE_AUTH;
    }
    /* mbedTLS accepts a certificate without the extension as "any usage"; openvpn does not. */
    if (!(crt->ext_types & MBEDTLS_X509_EXT_EXTENDED_KEY_USAGE) ||
        mbedtls_x509_crt_check_extended_key_usage(crt, MBEDTLS_OID_CLIENT_AUTH,
                                                  MBEDTLS_OID_SIZE(MBEDTLS_OID_CLIENT_AUTH)) != 0) {
        *why = "the client certificate lacks extended key usage TLS Web Client Authentication "
               "(remote-cert-tls client)";
        return -PE_AUTH;
    }
    return 0;
}

int cert_check_ku(const mbedtls_x509_crt *crt, const unsigned *ku, size_t n_ku, char *why,
                  size_t why_len)
{
    char want[CERT_CHECK_KU_LIST_MAX] = "";
    size_t used = 0;

    if (!crt || !(crt->ext_types & MBEDTLS_X509_EXT_KEY_USAGE)) {
        snprintf(why, why_len, "remote-cert-ku: %s",
                 crt ? "the client certificate has no key usage extension"
                     : "no client certificate");
        return -PE_AUTH;
    }
    if (n_ku == 0) {
        return 0; /* only the extension is required */
    }
    for (size_t i = 0; i < n_ku; i++) {
        if (ku[i] != 0 && (crt->key_usage & ku[i]) == ku[i]) {
            return 0;
        }
        if (used < sizeof(want)) {
            int n = snprintf(want + used, sizeof(want) - used, "%s%04x", i ? " " : "", ku[i]);

            used += n > 0 ? (size_t)n : 0;
        }
    }
    snprintf(why, why_len,
             "remote-cert-ku: the client certificate's key usage is %04x, not one of %s",
             crt->key_usage, want);
    return -PE_AUTH;
}

int cert_check_eku(const mbedtls_x509_crt *crt, const char *eku, char *why, size_t why_len)
{
    if (!crt || !(crt->ext_types & MBEDTLS_X509_EXT_EXTENDED_KEY_USAGE)) {
        snprintf(why, why_len, "remote-cert-eku: %s",
                 crt ? "the client certificate has no extended key usage extension"
                     : "no client certificate");
        return -PE_AUTH;
    }
    for (const mbedtls_x509_sequence *seq = &crt->ext_key_usage; seq; seq = seq->next) {
        const char *name = NULL;
        char dotted[128];

        if (mbedtls_oid_get_extended_key_usage(&seq->buf, &name) == 0 && name &&
            strcmp(name, eku) == 0) {
            return 0;
        }
        if (mbedtls_oid_get_numeric_string(dotted, sizeof(dotted), &seq->buf) > 0 &&
            strcmp(dotted, eku) == 0) {
            return 0;
        }
    }
    snprintf(why, why_len,
             "remote-cert-eku: the client certificate lacks extended key usage '%.200s'", eku);
    return -PE_AUTH;
}

/* The extended key usage extension, if any, lists oid (or one of the Server Gated Crypto OIDs
 * OpenSSL counts as server use, with is_server). */
static bool eku_allows(const mbedtls_x509_crt *crt, bool is_server)
{
    static const char ns_sgc[] = "\x60\x86\x48\x01\x86\xf8\x42\x04\x01"; /* 2.16.840.1.113730.4.1 */
    static const char ms_sgc[] =
        "\x2b\x06\x01\x04\x01\x82\x37\x0a\x03\x03"; /* 1.3.6.1.4.1.311.10.3.3 */
    const char *oid = is_server ? MBEDTLS_OID_SERVER_AUTH : MBEDTLS_OID_CLIENT_AUTH;
    size_t oid_len = is_server ? MBEDTLS_OID_SIZE(MBEDTLS_OID_SERVER_AUTH)
                               : MBEDTLS_OID_SIZE(MBEDTLS_OID_CLIENT_AUTH);

    if (!(crt->ext_types & MBEDTLS_X509_EXT_EXTENDED_KEY_USAGE)) {
        return true;
    }
    for (const mbedtls_x509_sequence *seq = &crt->ext_key_usage; seq; seq = seq->next) {
        const mbedtls_x509_buf *b = &seq->buf;

        if ((b->len == oid_len && memcmp(b->p, oid, oid_len) == 0) ||
            (is_server && b->len == sizeof(ns_sgc) - 1 && memcmp(b->p, ns_sgc, b->len) == 0) ||
            (is_server && b->len == sizeof(ms_sgc) - 1 && memcmp(b->p, ms_sgc, b->len) == 0)) {
            return true;
        }
    }
    return false;
}

int cert_check_ns_cert_type(const mbedtls_x509_crt *crt, bool is_server, char *why, size_t why_len)
{
    unsigned ku_any = MBEDTLS_X509_KU_DIGITAL_SIGNATURE | MBEDTLS_X509_KU_KEY_AGREEMENT |
                      (is_server ? MBEDTLS_X509_KU_KEY_ENCIPHERMENT : 0);
    unsigned char ns_bit =
        is_server ? MBEDTLS_X509_NS_CERT_TYPE_SSL_SERVER : MBEDTLS_X509_NS_CERT_TYPE_SSL_CLIENT;
    bool has_ns = crt && (crt->ext_types & MBEDTLS_X509_EXT_NS_CERT_TYPE);
    const char *what = is_server ? "server" : "client";
    const char *bad;

    if (!crt) {
        snprintf(why, why_len, "no client certificate");
        return -PE_AUTH;
    }
    if (!eku_allows(crt, is_server)) {
        bad = is_server ? "its extended key usage lacks TLS Web Server Authentication"
                        : "its extended key usage lacks TLS Web Client Authentication";
    } else if ((crt->ext_types & MBEDTLS_X509_EXT_KEY_USAGE) && !(crt->key_usage & ku_any)) {
        bad = "its key usage does not allow a TLS key exchange";
    } else if (has_ns && !(crt->ns_cert_type & ns_bit)) {
        bad = is_server ? "its Netscape cert type lacks SSL server"
                        : "its Netscape cert type lacks SSL client";
    } else {
        return 0;
    }
    if (has_ns && (crt->ns_cert_type & ns_bit)) {
        return 0; /* 2.6's fallback: the Netscape cert type alone says so */
    }
    snprintf(why, why_len, "the client certificate is not fit for TLS %s use (%s)", what, bad);
    return -PE_AUTH;
}
