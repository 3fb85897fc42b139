/* tests/unit/tls_pair.h: a TLS server and client run against each other in memory, for the
 * tests of proto/tls_session.c and proto/pk_libcrypto.c: the certificates and keys of
 * tests/unit/data/pk/ read from the source tree, one random generator for the program, the
 * configurations made from them, and a handshake pumped between the two ends until both have
 * finished or the server has refused. Include it in one file per program; register
 * tls_pair_setup and tls_pair_teardown as the cmocka group's setup and teardown.
 */
#ifndef TESTS_UNIT_TLS_PAIR_H
#define TESTS_UNIT_TLS_PAIR_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>

#include "proto/errors.h"
#include "proto/tls_session.h"

static mbedtls_entropy_context entropy;
static mbedtls_ctr_drbg_context drbg; /* seeded by tls_pair_setup */

/* Both ends of one connection: their configurations, their sessions, and how each one's last
 * handshake step ended (0, -PE_WANT_IO, or an error described in serr / cerr). */
struct tls_pair {
    struct tls_server_conf srv, cli;
    struct tls_session s, c;
    char serr[256], cerr[256];
    int sret, cret;
};

/* cmocka group setup: seed drbg. */
static inline int tls_pair_setup(void **state)
{
    (void)state;
    mbedtls_entropy_init(&entropy);
    mbedtls_ctr_drbg_init(&drbg);
    return mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &entropy, NULL, 0);
}

/* cmocka group teardown. */
static inline int tls_pair_teardown(void **state)
{
    (void)state;
    mbedtls_ctr_drbg_free(&drbg);
    mbedtls_entropy_free(&entropy);
    return 0;
}

/* The bytes of tests/unit/data/pk/NAME plus a NUL (as the PEM parsers want), *len counting the
 * NUL; the caller frees them. */
static inline uint8_t *tls_pair_slurp(const char *name, size_t *len)
{
    char path[512];
    FILE *f;
    uint8_t *buf;
    long n;

    snprintf(path, sizeof(path), "%s/tests/unit/data/pk/%s", OVPND_SOURCE_DIR, name);
    f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    buf[n] = 0;
    *len = (size_t)n + 1;
    return buf;
}

/* c: a server configuration (is_server, client certificates required) or a client one, with
 * certificate file cert and key file key, both trusting cas.crt. */
static inline void tls_pair_conf(struct tls_server_conf *c, bool is_server, const char *cert,
                                 const char *key)
{
    size_t ca_len, cert_len, key_len;
    uint8_t *ca_b = tls_pair_slurp("cas.crt", &ca_len), *cert_b = tls_pair_slurp(cert, &cert_len),
            *key_b = tls_pair_slurp(key, &key_len);
    char err[256];

    if (is_server) {
        assert_int_equal(tls_server_conf_init(c, ca_b, ca_len, cert_b, cert_len, key_b, key_len,
                                              TLS_VERIFY_CLIENT_REQUIRE, mbedtls_ctr_drbg_random,
                                              &drbg, err, sizeof(err)),
                         0);
    } else {
        assert_int_equal(tls_client_conf_init(c, ca_b, ca_len, cert_b, cert_len, key_b, key_len,
                                              true, mbedtls_ctr_drbg_random, &drbg, err,
                                              sizeof(err)),
                         0);
    }
    free(ca_b);
    free(cert_b);
    free(key_b);
}

/* The same for the certificate and key NAME.crt and NAME.key. */
static inline void tls_pair_conf_named(struct tls_server_conf *c, bool is_server, const char *name)
{
    char crt[64], key[64];

    snprintf(crt, sizeof(crt), "%s.crt", name);
    snprintf(key, sizeof(key), "%s.key", name);
    tls_pair_conf(c, is_server, crt, key);
}

/* Move the ciphertext one end has written to the other. */
static inline void tls_pair_pass(struct tls_session *from, struct tls_session *to)
{
    size_t len;
    const uint8_t *p = tls_session_out_peek(from, &len);

    if (len) {
        assert_int_equal(tls_session_feed(to, p, len), 0);
        tls_session_out_consume(from, len);
    }
}

/* Start both sessions of p (its configurations made) and run the handshake until both ends have
 * finished or failed, or the server has failed (the client then hears no more); the results in
 * p->sret / p->cret. */
static inline void tls_pair_run(struct tls_pair *p)
{
    assert_int_equal(tls_session_init(&p->s, &p->srv), 0);
    assert_int_equal(tls_session_init(&p->c, &p->cli), 0);
    p->sret = p->cret = -PE_WANT_IO;
    p->serr[0] = p->cerr[0] = '\0';
    for (int round = 0; round < 20; round++) {
        if (p->cret == -PE_WANT_IO) {
            p->cret = tls_session_handshake(&p->c, p->cerr, sizeof(p->cerr));
        }
        tls_pair_pass(&p->c, &p->s);
        if (p->sret == -PE_WANT_IO) {
            p->sret = tls_session_handshake(&p->s, p->serr, sizeof(p->serr));
        }
        tls_pair_pass(&p->s, &p->c);
        if (p->sret != -PE_WANT_IO && p->cret != -PE_WANT_IO) {
            break;
        }
        if (p->sret != -PE_WANT_IO && p->sret != 0) {
            break;
        }
    }
}

/* Assert that p's handshake ended with both ends connected, printing both errors if not. */
static inline void tls_pair_assert_connected(const struct tls_pair *p)
{
    if (p->sret || p->cret) {
        print_error("server: %s\nclient: %s\n", p->serr, p->cerr);
    }
    assert_int_equal(p->sret, 0);
    assert_int_equal(p->cret, 0);
}

/* Free both sessions and both configurations of p. */
static inline void tls_pair_clear(struct tls_pair *p)
{
    tls_session_clear(&p->s);
    tls_session_clear(&p->c);
    tls_server_conf_clear(&p->srv);
    tls_server_conf_clear(&p->cli);
}

#endif /* TESTS_UNIT_TLS_PAIR_H */
