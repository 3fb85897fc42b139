/* tests/unit/test_data_cbc.c: the CBC + HMAC data channel (proto/data_cbc.h through
 * proto/data_crypto.h), on both backends.
 *
 * The expected packets were computed with the openssl command-line tool, apart from this code,
 * over the key block fill_block() makes: IV = `openssl enc -aes-N-ecb -nopad` of 12 bytes 0xA5
 * and the packet_id; ciphertext = `openssl enc -aes-N-cbc -iv IV` of packet_id || payload; HMAC
 * = `openssl dgst -shaN -mac HMAC -macopt hexkey:K` of IV || ciphertext; keys sliced from the
 * direction's half of the block as section 5.1 of docs/openvpn-protocol.md says.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_hex.h"
#include <openssl/crypto.h>

#include "proto/data_crypto.h"
#include "proto/errors.h"
#include "tests/unit/alloc_count.h"

static const enum data_aead_backend all_backends[] = {DATA_AEAD_OPENSSL, DATA_AEAD_MBEDTLS};
#define N_BACKENDS (sizeof(all_backends) / sizeof(all_backends[0]))

static const enum data_cipher cbc_ciphers[] = {
    DATA_CIPHER_AES_128_CBC,      DATA_CIPHER_AES_192_CBC,      DATA_CIPHER_AES_256_CBC,
    DATA_CIPHER_CAMELLIA_128_CBC, DATA_CIPHER_CAMELLIA_192_CBC, DATA_CIPHER_CAMELLIA_256_CBC,
};
#define N_CBC (sizeof(cbc_ciphers) / sizeof(cbc_ciphers[0]))

static const enum data_digest all_digests[] = {DATA_DIGEST_SHA1, DATA_DIGEST_SHA224,
                                               DATA_DIGEST_SHA256, DATA_DIGEST_SHA384,
                                               DATA_DIGEST_SHA512};
#define N_DIGESTS (sizeof(all_digests) / sizeof(all_digests[0]))

/* Allocation counter: libcrypto through CRYPTO_set_mem_functions, Mbed TLS and the rest through
 * the linker's --wrap (alloc_count.h). */
static void *count_malloc(size_t n, const char *file, int line)
{
    (void)file;
    (void)line;
    n_allocs++;
    return malloc(n);
}

static void *count_realloc(void *p, size_t n, const char *file, int line)
{
    (void)file;
    (void)line;
    n_allocs++;
    return realloc(p, n);
}

static void count_free(void *p, const char *file, int line)
{
    (void)file;
    (void)line;
    free(p);
}

static void fill_block(uint8_t block[256])
{
    for (int i = 0; i < 256; i++) {
        block[i] = (uint8_t)(i * 7 + 3);
    }
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)(seed >> 16);
    }
}

struct cbc_vector {
    enum data_cipher cipher;
    enum data_digest digest;
    bool is_server_sending; /* server -> client (key[1]) or client -> server (key[0]) */
    bool v2;
    uint8_t key_id;
    uint32_t peer_id;
    uint32_t packet_id;
    const char *payload_hex;
    const char *sealed_hex; /* after the header: HMAC || IV || ciphertext */
};

static const struct cbc_vector vectors[] = {
    {DATA_CIPHER_AES_256_CBC, DATA_DIGEST_SHA256, true, true, 2, 0x000102, 1,
     "68656c6c6f2063626320776f726c6421", /* "hello cbc world!" */
     "c7cc2d8bc1bf956003a03699c6d9b25a0db243ca883dce0f23fff09c2579b08b"
     "14e406704ddc9e43ca9bc010600eacbe"
     "8368d753bb8e8666b9a8f02ce3b94575d6eaf31da2943f5934a1709a7b3a53d0"},
    {DATA_CIPHER_AES_128_CBC, DATA_DIGEST_SHA1, false, false, 0, 0, 7, "616263",
     "9bf2caec4fedf48a09415794ff38dea3c180a62f"
     "531fe30ba5d4ee2f735bc3cf94bf59b6"
     "ad5df19cddd89641ff9680c9e42f075e"},
    {DATA_CIPHER_AES_192_CBC, DATA_DIGEST_SHA512, true, false, 5, 0, 0x01020304,
     "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
     "202122232425262728292a2b2c",
     "92b2a4158645485c5076d3bcde9d0f832e842c9515751d2866f762b9376a07d4"
     "c53a372cd41c59b612f07b0985e3398911c079664ef8af5e423a075f05fc7f66"
     "67462f47d5b18f8e1ff130b0dac6da7e"
     "33e7b4224cd0a34965b1cdc780f6effdcac8ea30de6be5e8e57e82c9677e9266"
     "b753dc5d51b68e18ddd185da0c95fe1b6ec3b454c2706a09055e45f82789abf9"},
    {DATA_CIPHER_CAMELLIA_256_CBC, DATA_DIGEST_SHA1, false, true, 1, 0xFFFFFE, 2,
     "70696e67", /* "ping" */
     "eba5bf9fe71d89272b1be135b7560d0199a341a2"
     "21c4fc2b6480590fd54cc3a5cee3df91"
     "89f1de645faf52ef81079dad8d5415fc"},
};

static void key_pair(enum data_aead_backend b, enum data_cipher c, enum data_digest d,
                     uint8_t key_id, const uint8_t block[256], struct data_key *server,
                     struct data_key *client)
{
    assert_int_equal(data_key_init_auth(server, b, c, d, key_id, block, true, 64), 0);
    assert_int_equal(data_key_init_auth(client, b, c, d, key_id, block, false, 64), 0);
}

/* Each backend seals exactly the bytes the openssl tool computed, and the other side opens
 * them. */
static void openssl_cli_vectors(void **state)
{
    uint8_t block[256], payload[128], sealed[256], pkt[512], out[512];
    size_t payload_len, sealed_len, len, out_len;

    (void)state;
    fill_block(block);
    for (size_t bi = 0; bi < N_BACKENDS; bi++) {
        for (size_t vi = 0; vi < sizeof(vectors) / sizeof(vectors[0]); vi++) {
            const struct cbc_vector *v = &vectors[vi];
            size_t hdr = v->v2 ? DATA_V2_HEADER_LEN : DATA_V1_HEADER_LEN;
            struct data_key srv, cli;
            struct data_key *tx, *rx;

            payload_len = unhex(v->payload_hex, payload, sizeof(payload));
            sealed_len = unhex(v->sealed_hex, sealed, sizeof(sealed));
            key_pair(all_backends[bi], v->cipher, v->digest, v->key_id, block, &srv, &cli);
            tx = v->is_server_sending ? &srv : &cli;
            rx = v->is_server_sending ? &cli : &srv;
            tx->tx_packet_id = v->packet_id - 1;
            assert_int_equal(
                data_key_seal(tx, v->v2, v->peer_id, payload, payload_len, pkt, sizeof(pkt), &len),
                0);
            assert_int_equal(len, hdr + sealed_len);
            if (v->v2) {
                assert_int_equal(pkt[0], 9 << 3 | v->key_id);
                assert_int_equal(pkt[1] << 16 | pkt[2] << 8 | pkt[3], v->peer_id);
            } else {
                assert_int_equal(pkt[0], 6 << 3 | v->key_id);
            }
            assert_memory_equal(pkt + hdr, sealed, sealed_len);
            assert_int_equal(data_key_open(rx, pkt, len, out, sizeof(out), &out_len), 0);
            assert_int_equal(out_len, payload_len);
            assert_memory_equal(out, payload, payload_len);
            data_key_clear(&srv);
            data_key_clear(&cli);
        }
    }
}

/* Every cipher and digest, both headers, lengths around the block size: the backends give
 * identical packets and open each other's. */
static void both_backends_identical(void **state)
{
    uint8_t block[256], plain[1400], a[1600], b[1600], out[1600];
    static const size_t lens[] = {0, 1, 11, 12, 13, 27, 28, 29, 100, 1400};

    (void)state;
    fill(block, sizeof(block), 77);
    fill(plain, sizeof(plain), 78);
    for (size_t ci = 0; ci < N_CBC; ci++) {
        for (size_t di = 0; di < N_DIGESTS; di++) {
            struct data_key os_srv, os_cli, mb_srv, mb_cli;

            key_pair(DATA_AEAD_OPENSSL, cbc_ciphers[ci], all_digests[di], 3, block, &os_srv,
                     &os_cli);
            key_pair(DATA_AEAD_MBEDTLS, cbc_ciphers[ci], all_digests[di], 3, block, &mb_srv,
                     &mb_cli);
            for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
                size_t len = lens[li], a_len, b_len, out_len;
                bool v2 = li % 2 == 0;
                size_t hdr = v2 ? DATA_V2_HEADER_LEN : DATA_V1_HEADER_LEN;

                assert_int_equal(data_key_seal(&os_srv, v2, 42, plain, len, a, sizeof(a), &a_len),
                                 0);
                assert_int_equal(data_key_seal(&mb_srv, v2, 42, plain, len, b, sizeof(b), &b_len),
                                 0);
                assert_int_equal(a_len, b_len);
                assert_memory_equal(a, b, a_len);
                /* HMAC, IV, and packet_id || payload padded to whole blocks */
                assert_int_equal(a_len, hdr + data_digest_len(all_digests[di]) + 16 +
                                            (4 + len) / 16 * 16 + 16);
                assert_true(a_len <= hdr + DATA_CBC_OVERHEAD_MAX + len);
                assert_int_equal(data_key_open(&mb_cli, a, a_len, out, sizeof(out), &out_len), 0);
                assert_int_equal(out_len, len);
                assert_memory_equal(out, plain, len);
                assert_int_equal(data_key_open(&os_cli, b, b_len, out, sizeof(out), &out_len), 0);
                assert_int_equal(out_len, len);
                assert_memory_equal(out, plain, len);
            }
            data_key_clear(&os_srv);
            data_key_clear(&os_cli);
            data_key_clear(&mb_srv);
            data_key_clear(&mb_cli);
        }
    }
}

/* Any changed byte after the header fails the HMAC; a changed header fails the opcode / key_id
 * check; nothing is committed, so the untouched packet still opens once, and only once. */
static void tampering_and_replay(void **state)
{
    uint8_t block[256], plain[100], pkt[300], out[300];
    size_t len, out_len;

    (void)state;
    fill(block, sizeof(block), 5);
    fill(plain, sizeof(plain), 6);
    for (size_t bi = 0; bi < N_BACKENDS; bi++) {
        struct data_key srv, cli;

        key_pair(all_backends[bi], DATA_CIPHER_AES_256_CBC, DATA_DIGEST_SHA256, 4, block, &srv,
                 &cli);
        assert_int_equal(data_key_seal(&cli, true, 7, plain, sizeof(plain), pkt, sizeof(pkt), &len),
                         0);
        for (size_t i = DATA_V2_HEADER_LEN; i < len; i++) {
            pkt[i] ^= 0x40;
            assert_int_equal(data_key_open(&srv, pkt, len, out, sizeof(out), &out_len), -PE_AUTH);
            assert_int_equal(out_len, 0);
            pkt[i] ^= 0x40;
        }
        pkt[0] ^= 1; /* another key_id */
        assert_int_equal(data_key_open(&srv, pkt, len, out, sizeof(out), &out_len), -PE_MALFORMED);
        pkt[0] ^= 1;
        /* cut short: the HMAC no longer covers what is left, or there is no room for it */
        assert_int_equal(data_key_open(&srv, pkt, len - 16, out, sizeof(out), &out_len), -PE_AUTH);
        assert_int_equal(data_key_open(&srv, pkt, len - 1, out, sizeof(out), &out_len), -PE_AUTH);
        assert_int_equal(
            data_key_open(&srv, pkt, DATA_V2_HEADER_LEN + 32 + 16 + 15, out, sizeof(out), &out_len),
            -PE_SHORT);
        assert_int_equal(data_key_open(&srv, pkt, len, out, 20, &out_len), -PE_NOSPACE);
        /* a packet sealed by the server (the other direction's keys) does not open here */
        assert_int_equal(data_key_seal(&srv, true, 7, plain, 10, out, sizeof(out), &out_len), 0);
        assert_int_equal(data_key_open(&srv, out, out_len, pkt + 200, 100, &out_len), -PE_AUTH);
        assert_int_equal(data_key_open(&srv, pkt, len, out, sizeof(out), &out_len), 0);
        assert_int_equal(out_len, sizeof(plain));
        assert_memory_equal(out, plain, sizeof(plain));
        assert_int_equal(data_key_open(&srv, pkt, len, out, sizeof(out), &out_len), -PE_REPLAY);
        assert_int_equal(out_len, 0);
        data_key_clear(&srv);
        data_key_clear(&cli);
    }
}

/* The replay window over packet ids read from inside the ciphertext: reordering within the
 * window is fine, a repeat is not, an id far below the window is too old. */
static void replay_window(void **state)
{
    uint8_t block[256], plain[20], pkts[80][100], out[100];
    size_t lens[80], out_len;

    (void)state;
    fill(block, sizeof(block), 9);
    fill(plain, sizeof(plain), 10);
    for (size_t bi = 0; bi < N_BACKENDS; bi++) {
        struct data_key srv, cli;

        key_pair(all_backends[bi], DATA_CIPHER_AES_128_CBC, DATA_DIGEST_SHA1, 0, block, &srv, &cli);
        for (int i = 0; i < 80; i++) {
            assert_int_equal(data_key_seal(&cli, false, 0, plain, sizeof(plain), pkts[i],
                                           sizeof(pkts[i]), &lens[i]),
                             0);
        }
        assert_int_equal(data_key_open(&srv, pkts[70], lens[70], out, sizeof(out), &out_len), 0);
        assert_int_equal(data_key_open(&srv, pkts[69], lens[69], out, sizeof(out), &out_len), 0);
        assert_int_equal(data_key_open(&srv, pkts[20], lens[20], out, sizeof(out), &out_len), 0);
        assert_int_equal(data_key_open(&srv, pkts[20], lens[20], out, sizeof(out), &out_len),
                         -PE_REPLAY);
        assert_int_equal(data_key_open(&srv, pkts[2], lens[2], out, sizeof(out), &out_len),
                         -PE_TOO_OLD);
        assert_int_equal(data_key_open(&srv, pkts[79], lens[79], out, sizeof(out), &out_len), 0);
        data_key_clear(&srv);
        data_key_clear(&cli);
    }
}

/* Both ends must be configured with the same `auth`: another digest does not open. */
static void digest_mismatch(void **state)
{
    uint8_t block[256], plain[40], pkt[200], out[200];
    size_t len, out_len;
    struct data_key srv, cli;

    (void)state;
    fill(block, sizeof(block), 11);
    fill(plain, sizeof(plain), 12);
    assert_int_equal(data_key_init_auth(&srv, DATA_AEAD_OPENSSL, DATA_CIPHER_AES_256_CBC,
                                        DATA_DIGEST_SHA256, 0, block, true, 64),
                     0);
    assert_int_equal(data_key_init_auth(&cli, DATA_AEAD_OPENSSL, DATA_CIPHER_AES_256_CBC,
                                        DATA_DIGEST_SHA1, 0, block, false, 64),
                     0);
    assert_int_equal(data_key_seal(&cli, true, 1, plain, sizeof(plain), pkt, sizeof(pkt), &len), 0);
    assert_int_equal(data_key_open(&srv, pkt, len, out, sizeof(out), &out_len), -PE_AUTH);
    data_key_clear(&srv);
    data_key_clear(&cli);
}

/* Names, lengths, refusals at init, and the state checks. */
static void names_and_init(void **state)
{
    uint8_t block[256], out[100];
    enum data_cipher c;
    enum data_digest d;
    struct data_key k;
    size_t out_len;

    (void)state;
    assert_int_equal(data_cipher_from_name("aes-256-cbc", &c), 0);
    assert_int_equal(c, DATA_CIPHER_AES_256_CBC);
    assert_true(data_cipher_is_cbc(c));
    assert_false(data_cipher_is_cbc(DATA_CIPHER_AES_256_GCM));
    assert_int_equal(data_cipher_from_name("CAMELLIA-128-CBC", &c), 0);
    assert_string_equal(data_cipher_name(c), "CAMELLIA-128-CBC");
    assert_int_equal(data_cipher_key_len(DATA_CIPHER_AES_192_CBC), 24);
    assert_int_equal(data_cipher_from_name("BF-CBC", &c), -PE_UNSUPPORTED);
    assert_int_equal(data_cipher_from_name("AES-256-CFB", &c), -PE_UNSUPPORTED);
    assert_int_equal(data_digest_from_name("sha512", &d), 0);
    assert_int_equal(d, DATA_DIGEST_SHA512);
    assert_int_equal(data_digest_len(d), 64);
    assert_string_equal(data_digest_name(DATA_DIGEST_SHA1), "SHA1");
    assert_int_equal(data_digest_from_name("none", &d), -PE_UNSUPPORTED);
    assert_int_equal(data_digest_from_name("MD5", &d), -PE_UNSUPPORTED);

    fill_block(block);
    assert_int_equal(data_key_init_auth(&k, DATA_AEAD_OPENSSL, DATA_CIPHER_AES_256_CBC,
                                        DATA_DIGEST_NONE, 0, block, true, 64),
                     -PE_UNSUPPORTED);
    assert_null(k.cbc_enc.ctx);
    assert_int_equal(data_key_init_auth(&k, (enum data_aead_backend)9, DATA_CIPHER_AES_256_CBC,
                                        DATA_DIGEST_SHA1, 0, block, true, 64),
                     -PE_UNSUPPORTED);
    /* the AEAD primitive refuses a CBC cipher */
    {
        struct data_aead a;

        assert_int_equal(
            data_aead_init(&a, DATA_AEAD_OPENSSL, DATA_CIPHER_AES_128_CBC, block, true),
            -PE_UNSUPPORTED);
    }
    /* default auth is SHA1, as in 2.6 */
    assert_int_equal(data_key_init(&k, DATA_CIPHER_AES_128_CBC, 0, block, true, 64), 0);
    assert_int_equal(k.digest, DATA_DIGEST_SHA1);
    assert_int_equal(data_key_seal(&k, false, 0, block, 10, out, sizeof(out), &out_len), 0);
    assert_int_equal(out_len, 1 + 20 + 16 + 16);
    assert_int_equal(data_key_seal(&k, false, 0, block, 10, out, 52, &out_len), -PE_NOSPACE);
    assert_int_equal(data_key_seal(&k, true, 0x1000000, block, 10, out, sizeof(out), &out_len),
                     -PE_MALFORMED);
    k.tx_packet_id = UINT32_MAX;
    assert_int_equal(data_key_seal(&k, false, 0, block, 10, out, sizeof(out), &out_len), -PE_STATE);
    data_key_clear(&k);
    data_key_clear(&k);
    assert_int_equal(data_key_seal(&k, false, 0, block, 10, out, sizeof(out), &out_len), -PE_STATE);
}

/* Sealing and opening (accepted, tampered, replayed) allocate nothing on either backend. */
static void hot_path_does_not_allocate(void **state)
{
    uint8_t block[256], plain[1400], pkt[1600], out[1600];
    size_t len, out_len;

    (void)state;
    fill(block, sizeof(block), 13);
    fill(plain, sizeof(plain), 14);
    for (size_t bi = 0; bi < N_BACKENDS; bi++) {
        for (size_t di = 0; di < N_DIGESTS; di++) {
            struct data_key srv, cli;
            unsigned long before = n_allocs;

            key_pair(all_backends[bi], DATA_CIPHER_AES_256_CBC, all_digests[di], 0, block, &srv,
                     &cli);
            assert_true(n_allocs > before); /* the counter works: init allocates */
            before = n_allocs;
            for (int i = 0; i < 50; i++) {
                assert_int_equal(
                    data_key_seal(&cli, i % 2, 0, plain, sizeof(plain), pkt, sizeof(pkt), &len), 0);
                pkt[len - 1] ^= 1;
                assert_int_equal(data_key_open(&srv, pkt, len, out, sizeof(out), &out_len),
                                 -PE_AUTH);
                pkt[len - 1] ^= 1;
                assert_int_equal(data_key_open(&srv, pkt, len, out, sizeof(out), &out_len), 0);
                assert_int_equal(data_key_open(&srv, pkt, len, out, sizeof(out), &out_len),
                                 -PE_REPLAY);
            }
            assert_int_equal(n_allocs, before);
            data_key_clear(&srv);
            data_key_clear(&cli);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(openssl_cli_vectors),
        cmocka_unit_test(both_backends_identical),
        cmocka_unit_test(tampering_and_replay),
        cmocka_unit_test(replay_window),
        cmocka_unit_test(digest_mismatch),
        cmocka_unit_test(names_and_init),
        cmocka_unit_test(hot_path_does_not_allocate),
    };

    /* must run before libcrypto allocates anything */
    if (CRYPTO_set_mem_functions(count_malloc, count_realloc, count_free) != 1) {
        return 1;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
