/* tests/bench/data_crypto_speed.c: data-channel crypto speed of each backend, in one process.
 *
 * usage: data_crypto_speed [PACKETS [BYTES]]   (defaults 200000 packets of 1400 bytes)
 *
 * For each cipher and backend (proto/data_aead.h): seal PACKETS P_DATA_V2 packets of BYTES
 * plaintext bytes with data_key_seal(), then seal and open as many again; prints MB/s of
 * plaintext (10^6 bytes) for sealing and for opening (the second loop's time minus the first's),
 * and the ratio of each backend to the first. Time is this thread's CPU time, so other load on
 * the machine changes the figures little. One thread, no I/O: the figures are the crypto
 * library's cost per byte on this machine, not a tunnel's throughput. Exit status 1 if any call
 * fails or an opened packet differs from what was sealed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/data_crypto.h"

#define MAX_BYTES 9000

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* MB/s sealing and opening n packets of len bytes with cipher c on backend b; 0 on success. */
static int measure(enum data_aead_backend b, enum data_cipher c, long n, size_t len,
                   double *seal_mbs, double *open_mbs)
{
    static uint8_t plain[MAX_BYTES], pkt[MAX_BYTES + 64], out[MAX_BYTES];
    uint8_t block[256];
    struct data_key tx, rx;
    size_t pkt_len, out_len;
    double t0, t1, t2;

    for (size_t i = 0; i < sizeof(block); i++) {
        block[i] = (uint8_t)(i * 7 + 1);
    }
    for (size_t i = 0; i < len; i++) {
        plain[i] = (uint8_t)(i * 13);
    }
    if (data_key_init_backend(&tx, b, c, 0, block, true, 64) != 0) {
        return -1;
    }
    if (data_key_init_backend(&rx, b, c, 0, block, false, 64) != 0) {
        data_key_clear(&tx);
        return -1;
    }
    t0 = now_s();
    for (long i = 0; i < n; i++) {
        if (data_key_seal(&tx, true, 1, plain, len, pkt, sizeof(pkt), &pkt_len) != 0) {
            goto fail;
        }
    }
    t1 = now_s();
    for (long i = 0; i < n; i++) {
        if (data_key_seal(&tx, true, 1, plain, len, pkt, sizeof(pkt), &pkt_len) != 0 ||
            data_key_open(&rx, pkt, pkt_len, out, sizeof(out), &out_len) != 0 || out_len != len) {
            goto fail;
        }
    }
    t2 = now_s();
    if (memcmp(out, plain, len) != 0) {
        goto fail;
    }
    *seal_mbs = (double)n * (double)len / (t1 - t0) / 1e6;
    *open_mbs = (double)n * (double)len / ((t2 - t1) - (t1 - t0)) / 1e6;
    data_key_clear(&tx);
    data_key_clear(&rx);
    return 0;
fail:
    data_key_clear(&tx);
    data_key_clear(&rx);
    return -1;
}

int main(int argc, char **argv)
{
    static const enum data_cipher ciphers[] = {DATA_CIPHER_AES_256_GCM, DATA_CIPHER_AES_128_GCM,
                                               DATA_CIPHER_CHACHA20_POLY1305};
    static const enum data_aead_backend backends[] = {DATA_AEAD_OPENSSL, DATA_AEAD_MBEDTLS};
    long n = argc > 1 ? atol(argv[1]) : 200000;
    long len = argc > 2 ? atol(argv[2]) : 1400;

    if (argc > 3 || n < 1 || len < 1 || len > MAX_BYTES) {
        fprintf(stderr, "usage: data_crypto_speed [PACKETS [BYTES]] (BYTES 1..%d)\n", MAX_BYTES);
        return 2;
    }
    printf("%ld packets of %ld bytes, one thread, MB per CPU second\n\n", n, len);
    printf("| cipher | backend | seal MB/s | open MB/s | seal vs first | open vs first |\n");
    printf("|---|---|---:|---:|---:|---:|\n");
    for (size_t ci = 0; ci < sizeof(ciphers) / sizeof(ciphers[0]); ci++) {
        double first_seal = 0, first_open = 0;

        for (size_t bi = 0; bi < sizeof(backends) / sizeof(backends[0]); bi++) {
            double seal_mbs, open_mbs;

            if (measure(backends[bi], ciphers[ci], n, (size_t)len, &seal_mbs, &open_mbs) != 0) {
                fprintf(stderr, "data_crypto_speed: %s on %s failed\n",
                        data_cipher_name(ciphers[ci]), data_aead_backend_name(backends[bi]));
                return 1;
            }
            if (bi == 0) {
                first_seal = seal_mbs;
                first_open = open_mbs;
            }
            printf("| %s | %s | %.0f | %.0f | %.2fx | %.2fx |\n", data_cipher_name(ciphers[ci]),
                   data_aead_backend_name(backends[bi]), seal_mbs, open_mbs, seal_mbs / first_seal,
                   open_mbs / first_open);
        }
    }
    return 0;
}
