/* proto/cert_check.h: certificate usage checks on a verified peer certificate.
 *
 * `remote-cert-tls client` in an OpenVPN server config requires the client certificate to carry
 * a key usage extension and the extended key usage "TLS Web Client Authentication"
 * (openvpn 2.6 options.c: remote-cert-tls sets remote_cert_ku to "required" and remote_cert_eku
 * to the clientAuth name; ssl_verify.c checks both).
 */
#ifndef PROTO_CERT_CHECK_H
#define PROTO_CERT_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include <mbedtls/x509_crt.h>

/* 0 if crt satisfies `remote-cert-tls client`; otherwise -PE_AUTH and *why (a static string)
 * says what is missing. crt is borrowed. */
int cert_check_remote_tls_client(const mbedtls_x509_crt *crt, const char **why);

/* verify-x509-name types (openvpn 2.6 ssl_verify.h VERIFY_X509_*) */
#define CERT_CHECK_X509_SUBJECT 0     /* NAME is the whole subject, "C=.., O=.., CN=.." */
#define CERT_CHECK_X509_NAME 1        /* NAME is the common name */
#define CERT_CHECK_X509_NAME_PREFIX 2 /* the common name starts with NAME */

#define CERT_CHECK_KU_LIST_MAX 80  /* bytes of the wanted key usages named in a refusal */
#define CERT_CHECK_SUBJECT_MAX 256 /* bytes of a subject 2.6 compares (MAX_SUBJECT_LENGTH) */

/* The subject of crt as openvpn 2.6 (Mbed TLS build) compares it for verify-x509-name:
 * mbedtls_x509_dn_gets ("C=US, O=Org, CN=name"), then control characters as '_' and a leading
 * '-' as '_' (ssl_verify.c, verify_cert). out: CERT_CHECK_SUBJECT_MAX bytes at most matter; out
 * is "" on error. Returns 0 or -PE_MALFORMED (no subject, or longer than out). */
int cert_check_subject(const mbedtls_x509_crt *crt, char *out, size_t out_len);

/* verify-x509-name (2.6 ssl_verify.c, verify_peer_cert): 0 when the client's certificate
 * matches name by type (CERT_CHECK_X509_*): the subject (cert_check_subject) equals name, the
 * common name cn (as the server names the client) equals name, or starts with it. Otherwise
 * -PE_AUTH with why (why_len bytes) saying what was found and what was wanted. crt borrowed. */
int cert_check_x509_name(const mbedtls_x509_crt *crt, const char *cn, const char *name, int type,
                         char *why, size_t why_len);

/* `remote-cert-ku [HEX...]` (2.6 ssl_verify_mbedtls.c, x509_verify_cert_ku): crt must carry the
 * key usage extension; with n_ku > 0 its key usage must hold every bit of at least one of
 * ku[0..n_ku) (Mbed TLS's and openvpn's numbering: digitalSignature 0x80, keyEncipherment
 * 0x20, keyAgreement 0x08, ...). 0, or -PE_AUTH with why (why_len bytes) saying what the
 * certificate has. crt borrowed; NULL (no certificate) fails. */
int cert_check_ku(const mbedtls_x509_crt *crt, const unsigned *ku, size_t n_ku, char *why,
                  size_t why_len);

/* `remote-cert-eku OID|NAME` (2.6 x509_verify_cert_eku): one of crt's extended key usages has
 * the dotted OID eku or the name Mbed TLS gives it ("TLS Web Client Authentication"). 0, or
 * -PE_AUTH with why. crt borrowed; NULL fails. */
int cert_check_eku(const mbedtls_x509_crt *crt, const char *eku, char *why, size_t why_len);

/* `ns-cert-type client|server` (openvpn 2.6 built with OpenSSL, ssl_verify_openssl.c
 * x509_verify_ns_cert_type): crt must be fit for TLS client (server) use as OpenSSL's purpose
 * check sees it: an extended key usage extension, when present, lists clientAuth (serverAuth or
 * a Server Gated Crypto OID); a key usage extension, when present, allows digitalSignature or
 * keyAgreement (server: or keyEncipherment); a Netscape cert type extension, when present, has
 * the SSL client (server) bit. A certificate that fails this but has that Netscape bit passes,
 * as 2.6's fallback does. is_server picks the purpose. 0, or -PE_AUTH with why (why_len bytes).
 * crt borrowed; NULL fails. */
int cert_check_ns_cert_type(const mbedtls_x509_crt *crt, bool is_server, char *why, size_t why_len);

#endif /* PROTO_CERT_CHECK_H */
