/* proto/ecdh_libcrypto.h: the TLS handshake's X25519 key exchange computed by OpenSSL's
 * libcrypto instead of Mbed TLS's generic bignum code.
 *
 * Mbed TLS 2.28 offers no run-time hook for ECDH (only the compile-time MBEDTLS_ECDH_*_ALT of a
 * library built by hand), and its X25519 costs about 0.5 ms per operation, two per handshake:
 * about half of a server's handshake CPU once the signatures run in libcrypto
 * (proto/pk_libcrypto.h, docs/benchmarks.md). Debian's libmbedcrypto calls its two ECDH
 * primitives, mbedtls_ecdh_gen_public and mbedtls_ecdh_compute_shared, through the PLT, so
 * ecdh_libcrypto.c defines both in the executable that links it and the dynamic linker binds
 * the library's calls to them (symbol interposition; the README says so). For X25519 they
 * compute with libcrypto's EVP_PKEY_X25519; for every other group they do exactly what the
 * library's own versions do, through its public functions. The private scalar is still drawn
 * by Mbed TLS (mbedtls_ecp_gen_privkey, from the handshake's RNG), the results are the same
 * numbers Mbed TLS would compute, and the same checks of the peer's point and of the result
 * apply (tests/unit/test_ecdh_libcrypto.c compares both ways).
 *
 * If a future library stopped calling through the PLT, the handshake would keep working on
 * Mbed TLS's own code, only slower: ecdh_libcrypto_is_live tells which one runs.
 *
 * No global state; any thread. */
#ifndef PROTO_ECDH_LIBCRYPTO_H
#define PROTO_ECDH_LIBCRYPTO_H

#include <stdbool.h>

/* Whether Mbed TLS's ECDH key exchange (mbedtls_ecdh_make_params) reaches the libcrypto X25519
 * code of ecdh_libcrypto.c in this process: runs one X25519 key generation through the
 * library. Costs about one key generation. Any thread. */
bool ecdh_libcrypto_is_live(void);

#endif /* PROTO_ECDH_LIBCRYPTO_H */
