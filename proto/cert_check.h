/* proto/cert_check.h: certificate usage checks on a verified peer certificate.
 *
 * `remote-cert-tls client` in an OpenVPN server config requires the client certificate to carry
 * a key usage extension and the extended key usage "TLS Web Client Authentication"
 * (openvpn 2.6 options.c: remote-cert-tls sets remote_cert_ku to "required" and remote_cert_eku
 * to the clientAuth name; ssl_verify.c checks both).
 */
#ifndef PROTO_CERT_CHECK_H
#define PROTO_CERT_CHECK_H

#include <mbedtls/x509_crt.h>

/* 0 if crt satisfies `remote-cert-tls client`; otherwise -PE_AUTH and *why (a static string)
 * says what is missing. crt is borrowed. */
int cert_check_remote_tls_client(const mbedtls_x509_crt *crt, const char **why);

#endif /* PROTO_CERT_CHECK_H */
