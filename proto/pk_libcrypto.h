/* proto/pk_libcrypto.h: Mbed TLS public-key contexts whose signatures are made and checked by
 * OpenSSL's libcrypto.
 *
 * Mbed TLS 2.28's RSA and ECDSA arithmetic is many times slower than libcrypto's, and a TLS
 * handshake spends most of its CPU there (docs/benchmarks.md). Mbed TLS lets a pk context carry
 * its own operations (struct mbedtls_pk_info_t, pk_internal.h): pk_libcrypto_wrap turns a parsed
 * RSA or EC key into one whose sign and verify call libcrypto's EVP_PKEY, while the context
 * still starts with the very mbedtls_rsa_context or mbedtls_ecp_keypair Mbed TLS parsed. So
 * everything Mbed TLS reads from a key outside sign and verify (its type, bit length, curve, what
 * it can do: the tls-cert-profile checks, the curve checks of the handshake, RSA-PSS
 * verification, debug output) sees exactly what it saw before, and a signature that does not
 * verify fails with the same Mbed TLS error codes as before (MBEDTLS_ERR_RSA_VERIFY_FAILED,
 * MBEDTLS_ERR_ECP_VERIFY_FAILED, MBEDTLS_ERR_PK_SIG_LEN_MISMATCH for trailing bytes after a
 * valid signature). Where libcrypto cannot take over (another key type, a curve or digest
 * libcrypto lacks, no digest), the key keeps Mbed TLS's own code.
 *
 * No global state; a wrapped key may be used by several threads at once (each operation makes
 * its own EVP_PKEY_CTX). */
#ifndef PROTO_PK_LIBCRYPTO_H
#define PROTO_PK_LIBCRYPTO_H

#include <stdbool.h>
#include <stddef.h>

#include <mbedtls/pk.h>
#include <mbedtls/x509_crt.h>

/* Let libcrypto sign (is_private: pk holds a private key) or verify with pk, a context that
 * mbedtls_pk_parse_key or the X.509 parser filled. spki/spki_len: the key's DER
 * SubjectPublicKeyInfo when the caller has it (a certificate's pk_raw), else NULL and it is
 * written from pk. Keys other than RSA and EC, and keys libcrypto does not take, are left as
 * they are (returns 0). Returns 0 or a negative Mbed TLS error (out of memory, a key that cannot
 * be encoded); pk is unchanged on error and still works. Any thread; pk must not be in use. */
int pk_libcrypto_wrap(mbedtls_pk_context *pk, bool is_private, const unsigned char *spki,
                      size_t spki_len);

/* pk_libcrypto_wrap on the public key of every certificate in chain (a parsed CA list). Returns
 * the number of keys that now use libcrypto. */
size_t pk_libcrypto_wrap_chain(mbedtls_x509_crt *chain);

/* Whether pk uses libcrypto (pk_libcrypto_wrap took it). */
bool pk_libcrypto_is_wrapped(const mbedtls_pk_context *pk);

#endif /* PROTO_PK_LIBCRYPTO_H */
