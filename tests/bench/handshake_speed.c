/* tests/bench/handshake_speed.c: the CPU one TLS handshake of the control channel costs each
 * side, without a network: a tls_server_conf and a tls_client_conf (proto/tls_session.c) run N
 * full handshakes in memory on one thread, and each side's steps are timed with the thread's CPU
 * clock, so other work on the machine barely moves the figures (an A/B of builds or
 * allocators on a busy machine).
 *
 * usage: handshake_speed DIR PKI N
 *   DIR  a directory with cas.crt (the CAs), PKI-server.crt/.key and PKI-client.crt/.key as
 *        tests/unit/data/pk/ holds them (server-ec, client-ec, server-rsa, client-rsa)
 *   PKI  ec or rsa
 *   N    handshakes (1..100000)
 * Prints "PKI: server X us, client Y us per handshake (N handshakes)". Exit status 1 on error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>

#include "proto/errors.h"
#include "proto/tls_session.h"

static uint8_t *slurp(const char *dir, const char *name, size_t *len)
{
    char path[1024];
    FILE *f;
    uint8_t *buf;
    long n;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "%s: cannot read\n", path);
        exit(1);
    }
    fclose(f);
    buf[n] = 0;
    *len = (size_t)n + 1;
    return buf;
}

static double thread_cpu_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void pass(struct tls_session *from, struct tls_session *to)
{
    size_t len;
    const uint8_t *p = tls_session_out_peek(from, &len);

    if (len) {
        if (tls_session_feed(to, p, len) != 0) {
            fprintf(stderr, "feed failed\n");
            exit(1);
        }
        tls_session_out_consume(from, len);
    }
}

int main(int argc, char **argv)
{
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context drbg;
    struct tls_server_conf srv, cli;
    char name[64], err[256];
    size_t ca_len, sc_len, sk_len, cc_len, ck_len;
    uint8_t *ca, *sc, *sk, *cc, *ck;
    double server_us = 0, client_us = 0;
    long n;

    if (argc != 4 || (strcmp(argv[2], "ec") && strcmp(argv[2], "rsa")) ||
        (n = strtol(argv[3], NULL, 10)) < 1 || n > 100000) {
        fprintf(stderr, "usage: handshake_speed DIR ec|rsa N\n");
        return 1;
    }
    ca = slurp(argv[1], "cas.crt", &ca_len);
    snprintf(name, sizeof(name), "server-%s.crt", argv[2]);
    sc = slurp(argv[1], name, &sc_len);
    snprintf(name, sizeof(name), "server-%s.key", argv[2]);
    sk = slurp(argv[1], name, &sk_len);
    snprintf(name, sizeof(name), "client-%s.crt", argv[2]);
    cc = slurp(argv[1], name, &cc_len);
    snprintf(name, sizeof(name), "client-%s.key", argv[2]);
    ck = slurp(argv[1], name, &ck_len);
    mbedtls_entropy_init(&entropy);
    mbedtls_ctr_drbg_init(&drbg);
    if (mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &entropy, NULL, 0) != 0 ||
        tls_server_conf_init(&srv, ca, ca_len, sc, sc_len, sk, sk_len, TLS_VERIFY_CLIENT_REQUIRE,
                             mbedtls_ctr_drbg_random, &drbg, err, sizeof(err)) != 0 ||
        tls_client_conf_init(&cli, ca, ca_len, cc, cc_len, ck, ck_len, true,
                             mbedtls_ctr_drbg_random, &drbg, err, sizeof(err)) != 0) {
        fprintf(stderr, "set-up failed: %s\n", err);
        return 1;
    }
    for (long i = 0; i < n; i++) {
        struct tls_session s, c;
        int sret = -PE_WANT_IO, cret = -PE_WANT_IO;
        double t;

        t = thread_cpu_us();
        if (tls_session_init(&s, &srv) != 0) {
            return 1;
        }
        server_us += thread_cpu_us() - t;
        t = thread_cpu_us();
        if (tls_session_init(&c, &cli) != 0) {
            return 1;
        }
        client_us += thread_cpu_us() - t;
        for (int round = 0; round < 20 && (sret == -PE_WANT_IO || cret == -PE_WANT_IO); round++) {
            if (cret == -PE_WANT_IO) {
                t = thread_cpu_us();
                cret = tls_session_handshake(&c, err, sizeof(err));
                client_us += thread_cpu_us() - t;
            }
            pass(&c, &s);
            if (sret == -PE_WANT_IO) {
                t = thread_cpu_us();
                sret = tls_session_handshake(&s, err, sizeof(err));
                server_us += thread_cpu_us() - t;
            }
            pass(&s, &c);
        }
        if (sret != 0 || cret != 0) {
            fprintf(stderr, "handshake %ld failed: %s\n", i, err);
            return 1;
        }
        t = thread_cpu_us();
        tls_session_clear(&s);
        server_us += thread_cpu_us() - t;
        t = thread_cpu_us();
        tls_session_clear(&c);
        client_us += thread_cpu_us() - t;
    }
    printf("%s: server %.0f us, client %.0f us per handshake (%ld handshakes)\n", argv[2],
           server_us / (double)n, client_us / (double)n, n);
    tls_server_conf_clear(&srv);
    tls_server_conf_clear(&cli);
    mbedtls_ctr_drbg_free(&drbg);
    mbedtls_entropy_free(&entropy);
    free(ca);
    free(sc);
    free(sk);
    free(cc);
    free(ck);
    return 0;
}
