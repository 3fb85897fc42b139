/* proto/dh_params.h: the `dh` file's group for Mbed TLS.
 *
 * openvpn 2.6 hands the `dh` file to OpenSSL, which reads both PKCS #3 DH parameters
 * ("BEGIN DH PARAMETERS", what `openssl dhparam` writes) and the X9.42 form ("BEGIN X9.42 DH
 * PARAMETERS", what `openssl dhparam -dsaparam` writes: p, q, g and optional seed). Mbed TLS 2.28
 * parses only PKCS #3. A TLS 1.2 ServerKeyExchange carries p and g alone, so the X9.42 group is
 * rewritten as PKCS #3 with the same p and g, and then serves the DHE suites as it does in 2.6.
 * Parsing and writing are libcrypto's. No global state; any thread. */
#ifndef PROTO_DH_PARAMS_H
#define PROTO_DH_PARAMS_H

#include <stddef.h>

/* X9.42 DH parameters in PEM (text, len bytes, need not be NUL-terminated) rewritten as PKCS #3
 * PEM: *out gets a NUL-terminated malloc'd string the caller frees, *out_len its length without
 * the NUL. Returns 0, -PE_MALFORMED when text is not X9.42 DH parameters in PEM, -PE_CRYPTO
 * (out of memory, or libcrypto refused the group). */
int dh_params_x942_to_pkcs3(const char *text, size_t len, char **out, size_t *out_len);

#endif /* PROTO_DH_PARAMS_H */
