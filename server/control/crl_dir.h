/* server/control/crl_dir.h: `crl-verify DIR dir` (openvpn 2.6 ssl_verify.c,
 * verify_check_crl_dir): a certificate is revoked when DIR holds a file named by its serial
 * number in decimal (the name 2.6 gives it: BN_bn2dec of the serial with OpenSSL, the same with
 * Mbed TLS). 2.6 checks each certificate of the verified chain, the client's own and the CAs
 * above it, at every TLS handshake (so a renegotiation sees a serial added since), and counts a
 * serial as revoked when that file can be opened for reading.
 *
 * Acceptor thread: one open() per certificate of the chain, as 2.6 does in its handshake.
 */
#ifndef SERVER_CONTROL_CRL_DIR_H
#define SERVER_CONTROL_CRL_DIR_H

#include <stdbool.h>
#include <stddef.h>

#include <mbedtls/x509_crt.h>

/* true when no certificate of the chain of leaf (as hook_cert_chain builds it with trusted, the
 * `ca` certificates) is listed in dir; otherwise false, and why (why_len bytes) names the depth,
 * subject and serial, as 2.6 logs "VERIFY CRL: depth=D, SUBJECT, serial=N is revoked". leaf
 * NULL: true. The certificates are borrowed. */
bool crl_dir_admits(const char *dir, const mbedtls_x509_crt *leaf, const mbedtls_x509_crt *trusted,
                    char *why, size_t why_len);

#endif /* SERVER_CONTROL_CRL_DIR_H */
