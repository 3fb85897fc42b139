/* server/hooks/x509_track.h: the certificate variables scripts get with `x509-track`
 * (openvpn 2.6 ssl_verify_openssl.c x509_setenv_track; ssl_verify.c verify_cert_set_env).
 *
 * With x509-track, 2.6 sets only the tracked variables instead of one X509_{depth}_{field} per
 * subject field: X509_{depth}_{ATTR} for the client's certificate (depth 0), and for every
 * certificate of the chain with '+ATTR'. ATTR SHA1 / SHA256: the certificate's fingerprint
 * (upper-case hex, ':' between bytes); a subject attribute: its first value, as UTF-8; an
 * extension the subject lacks: OpenSSL's text for it (X509V3_EXT_print, "TLS Web Client
 * Authentication" for extendedKeyUsage clientAuth). CR and LF in a value become '?', other
 * control characters '_'. The certificate is read with OpenSSL's libcrypto, as 2.6 reads it.
 *
 * Acceptor thread (any thread: no shared state).
 */
#ifndef SERVER_HOOKS_X509_TRACK_H
#define SERVER_HOOKS_X509_TRACK_H

#include <stddef.h>

#include <mbedtls/x509_crt.h>

#include "proto/cert_name.h"
#include "server/hooks/script.h"

/* Add the tracked variables of crt, the certificate at depth of the chain, to env (n entries of
 * track). Returns 0, -EINVAL (the certificate's DER cannot be read) or -ENOMEM. */
int x509_track_env(struct script_env *env, int depth, const mbedtls_x509_crt *crt,
                   const struct cert_track *track, size_t n);

#endif /* SERVER_HOOKS_X509_TRACK_H */
