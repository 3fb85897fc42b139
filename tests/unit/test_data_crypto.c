/* tests/unit/test_data_crypto.c: the AEAD data channel, on both backends (proto/data_aead.h).
 *
 * Every case of the "backend" groups runs twice, once with keys on OpenSSL libcrypto and once on
 * Mbed TLS (data_key_init_backend()). The "shared vectors" group seals fixed packets on both
 * backends, compares them with stored bytes, and opens each backend's packets with the other.
 *
 * Expected packets come from sources independent of the code under test:
 *  - mbedTLS's GCM and ChaCha20-Poly1305, fed the key / nonce / AAD layout of section 6.2 of
 *    docs/openvpn-protocol.md;
 *  - packets captured from the real openvpn 2.6.14 client and server on loopback in a private
 *    namespace; keys from their --verb 7 logs ("Master Encrypt/Decrypt (cipher ...)" = key[0] /
 *    key[1]), implicit IVs from the --verb 9 "ENCRYPT IV:" lines;
 *  - the shared vectors were produced by the OpenSSL-only data channel this project had before
 *    the backends were split out.
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
#include <mbedtls/chachapoly.h>
#include <mbedtls/gcm.h>
#include <openssl/crypto.h>

#include "proto/data_crypto.h"
#include "proto/errors.h"
#include "tests/unit/alloc_count.h"

static const enum data_aead_backend all_backends[] = {DATA_AEAD_OPENSSL, DATA_AEAD_MBEDTLS};
#define N_BACKENDS (sizeof(all_backends) / sizeof(all_backends[0]))

/* The backend the cases of the current "backend" group put their keys on. */
static enum data_aead_backend backend;

static int use_openssl(void **state)
{
    (void)state;
    backend = DATA_AEAD_OPENSSL;
    return 0;
}

static int use_mbedtls(void **state)
{
    (void)state;
    backend = DATA_AEAD_MBEDTLS;
    return 0;
}

static int key_init(struct data_key *k, enum data_cipher c, uint8_t key_id,
                    const uint8_t block[256], bool is_server, uint32_t replay_window)
{
    int err = data_key_init_backend(k, backend, c, key_id, block, is_server, replay_window);

    if (err == 0) {
        assert_int_equal(k->enc.backend, backend);
        assert_int_equal(k->dec.backend, backend);
    }
    return err;
}

/* The data-channel keepalive ping (ping.c): what the captured packets carry. */
static const uint8_t ping_magic[16] = {0x2a, 0x18, 0x7b, 0xf3, 0x64, 0x1e, 0xb4, 0xcb,
                                       0x07, 0xed, 0x2d, 0x0a, 0x98, 0x1f, 0xc7, 0x48};

static const enum data_cipher all_ciphers[] = {
    DATA_CIPHER_AES_128_GCM,
    DATA_CIPHER_AES_192_GCM,
    DATA_CIPHER_AES_256_GCM,
    DATA_CIPHER_CHACHA20_POLY1305,
};
#define N_CIPHERS (sizeof(all_ciphers) / sizeof(all_ciphers[0]))

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)(seed >> 16);
    }
}

/* A server key and the matching client key over the same random key block. */
static void make_pair(enum data_cipher c, uint8_t key_id, uint32_t seed, uint8_t block[256],
                      struct data_key *server, struct data_key *client)
{
    fill(block, 256, seed);
    assert_int_equal(key_init(server, c, key_id, block, true, 64), 0);
    assert_int_equal(key_init(client, c, key_id, block, false, 64), 0);
}

/* Encrypt with mbedTLS: ct and tag for key/nonce/aad. */
static void mbed_seal(enum data_cipher c, const uint8_t *key, const uint8_t nonce[12],
                      const uint8_t *aad, size_t aad_len, const uint8_t *plain, size_t len,
                      uint8_t *ct, uint8_t tag[16])
{
    if (c == DATA_CIPHER_CHACHA20_POLY1305) {
        mbedtls_chachapoly_context ctx;

        mbedtls_chachapoly_init(&ctx);
        assert_int_equal(mbedtls_chachapoly_setkey(&ctx, key), 0);
        assert_int_equal(
            mbedtls_chachapoly_encrypt_and_tag(&ctx, len, nonce, aad, aad_len, plain, ct, tag), 0);
        mbedtls_chachapoly_free(&ctx);
    } else {
        mbedtls_gcm_context ctx;
        unsigned bits = (unsigned)data_cipher_key_len(c) * 8;

        mbedtls_gcm_init(&ctx);
        assert_int_equal(mbedtls_gcm_setkey(&ctx, MBEDTLS_CIPHER_ID_AES, key, bits), 0);
        assert_int_equal(mbedtls_gcm_crypt_and_tag(&ctx, MBEDTLS_GCM_ENCRYPT, len, nonce, 12, aad,
                                                   aad_len, plain, ct, 16, tag),
                         0);
        mbedtls_gcm_free(&ctx);
    }
}

/* The whole packet of section 6.2 built with mbedTLS from the key2 slice half[0..128). */
static size_t mbed_packet(enum data_cipher c, const uint8_t *half, bool v2, uint8_t key_id,
                          uint32_t peer_id, uint32_t packet_id, const uint8_t *plain, size_t len,
                          uint8_t *out)
{
    size_t hdr = v2 ? 4 : 1;
    uint8_t nonce[12];

    if (v2) {
        out[0] = (uint8_t)(0x48 | key_id);
        out[1] = (uint8_t)(peer_id >> 16);
        out[2] = (uint8_t)(peer_id >> 8);
        out[3] = (uint8_t)peer_id;
    } else {
        out[0] = (uint8_t)(0x30 | key_id);
    }
    out[hdr] = (uint8_t)(packet_id >> 24);
    out[hdr + 1] = (uint8_t)(packet_id >> 16);
    out[hdr + 2] = (uint8_t)(packet_id >> 8);
    out[hdr + 3] = (uint8_t)packet_id;
    memcpy(nonce, out + hdr, 4);
    memcpy(nonce + 4, half + 64, 8);
    mbed_seal(c, half, nonce, v2 ? out : out + hdr, v2 ? 8 : 4, plain, len, out + hdr + 20,
              out + hdr + 4);
    return hdr + 20 + len;
}

/* Counts allocations, to prove the per-packet path makes none: libcrypto's through its memory
 * hooks, and every malloc/calloc/realloc call from this program and the project's static
 * libraries (the Mbed TLS backend's included) through the linker's --wrap (tests/CMakeLists.txt).
 * Mbed TLS's own library code is not seen; its GCM and ChaCha20-Poly1305 calls take caller
 * buffers and do not allocate. */

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

static void cipher_names(void **state)
{
    enum data_cipher c;

    (void)state;
    assert_int_equal(data_cipher_from_name("AES-256-GCM", &c), 0);
    assert_int_equal(c, DATA_CIPHER_AES_256_GCM);
    assert_int_equal(data_cipher_from_name("aes-128-gcm", &c), 0);
    assert_int_equal(c, DATA_CIPHER_AES_128_GCM);
    assert_int_equal(data_cipher_from_name("ChaCha20-Poly1305", &c), 0);
    assert_int_equal(c, DATA_CIPHER_CHACHA20_POLY1305);
    assert_int_equal(data_cipher_from_name("AES-192-GCM", &c), 0);
    assert_int_equal(c, DATA_CIPHER_AES_192_GCM);
    assert_int_equal(data_cipher_from_name("id-aes192-GCM", &c), 0);
    assert_int_equal(c, DATA_CIPHER_AES_192_GCM);
    assert_string_equal(data_cipher_name(DATA_CIPHER_AES_192_GCM), "AES-192-GCM");
    assert_int_equal(data_cipher_key_len(DATA_CIPHER_AES_192_GCM), 24);
    assert_int_equal(data_cipher_from_name("id-aes256-GCM", &c), 0);
    assert_int_equal(c, DATA_CIPHER_AES_256_GCM);
    assert_int_equal(data_cipher_from_name("AES-256-CFB", &c), -PE_UNSUPPORTED);
    assert_int_equal(data_cipher_from_name("BF-CBC", &c), -PE_UNSUPPORTED);
    assert_int_equal(data_cipher_from_name("none", &c), -PE_UNSUPPORTED);
    assert_int_equal(data_cipher_from_name("AES-256-GCMX", &c), -PE_UNSUPPORTED);
    assert_int_equal(data_cipher_from_name("", &c), -PE_UNSUPPORTED);
    assert_int_equal(data_cipher_from_name(NULL, &c), -PE_UNSUPPORTED);
    assert_string_equal(data_cipher_name(DATA_CIPHER_AES_256_GCM), "AES-256-GCM");
    assert_string_equal(data_cipher_name(DATA_CIPHER_AES_128_GCM), "AES-128-GCM");
    assert_string_equal(data_cipher_name(DATA_CIPHER_CHACHA20_POLY1305), "CHACHA20-POLY1305");
    assert_string_equal(data_cipher_name(DATA_CIPHER_NONE), "none");
    assert_int_equal(data_cipher_key_len(DATA_CIPHER_AES_128_GCM), 16);
    assert_int_equal(data_cipher_key_len(DATA_CIPHER_AES_256_GCM), 32);
    assert_int_equal(data_cipher_key_len(DATA_CIPHER_CHACHA20_POLY1305), 32);
}

/* Every cipher, both directions, V1 and V2, several lengths: byte-identical to mbedTLS, and the
 * other side opens it. */
static void seal_matches_mbedtls(void **state)
{
    static const size_t lens[] = {0, 1, 15, 16, 17, 100, 1400};
    uint8_t block[256], plain[1400], got[1500], want[1500], back[1500];

    (void)state;
    fill(plain, sizeof(plain), 7);
    for (size_t ci = 0; ci < N_CIPHERS; ci++) {
        enum data_cipher c = all_ciphers[ci];

        for (int v2 = 0; v2 <= 1; v2++) {
            struct data_key srv, cli;
            uint32_t id = 0;

            make_pair(c, 3, (uint32_t)(ci * 2 + (size_t)v2), block, &srv, &cli);
            for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
                size_t got_len, want_len, back_len;

                id++;
                /* server sends with key[1] (bytes 128..255) */
                assert_int_equal(
                    data_key_seal(&srv, v2, 0xABCDEF, plain, lens[li], got, sizeof(got), &got_len),
                    0);
                want_len = mbed_packet(c, block + 128, v2, 3, 0xABCDEF, id, plain, lens[li], want);
                assert_int_equal(got_len, want_len);
                assert_memory_equal(got, want, want_len);
                assert_int_equal(data_key_open(&cli, got, got_len, back, sizeof(back), &back_len),
                                 0);
                assert_int_equal(back_len, lens[li]);
                assert_memory_equal(back, plain, lens[li]);

                /* client sends with key[0] (bytes 0..127) */
                assert_int_equal(
                    data_key_seal(&cli, v2, 7, plain, lens[li], got, sizeof(got), &got_len), 0);
                want_len = mbed_packet(c, block, v2, 3, 7, id, plain, lens[li], want);
                assert_int_equal(got_len, want_len);
                assert_memory_equal(got, want, want_len);
                assert_int_equal(data_key_open(&srv, got, got_len, back, sizeof(back), &back_len),
                                 0);
                assert_int_equal(back_len, lens[li]);
                assert_memory_equal(back, plain, lens[li]);
            }
            data_key_clear(&srv);
            data_key_clear(&cli);
        }
    }
}

/* A packet from the real client, and the key block rebuilt from its logs. */
struct captured_data {
    enum data_cipher cipher;
    const char *key0_cipher, *key0_iv; /* client -> server */
    const char *key1_cipher, *key1_iv; /* server -> client; iv "" when not logged */
    const char *c2s_packet;            /* client -> server ping */
    const char *s2c_packet;            /* server -> client ping, or NULL */
};

static const struct captured_data captured[] = {
    {
        DATA_CIPHER_AES_256_GCM,
        "ffbe63ec 1bd10b72 4e6f37de 1275d678 a2b5f06a a1d8a640 9ceb7ec8 89a17c3c",
        "06fee23d 9ee617a1",
        "7ba7b44a 9c031896 f57c4fc3 925a6d4e f46ebf85 eb1a34b1 0bfc79db e4d22841",
        "",
        "48000000 00000001 a25e4e84 6cefd1ce fc31ce55 0f44bdc1 05ca69cf 623b93e7 b97f02e9 "
        "ccb7fc85",
        NULL,
    },
    {
        DATA_CIPHER_AES_128_GCM,
        "77ee3bbb e9a781ac 6dec2584 ecf0f036",
        "66034ef0 73f74152",
        "9314bde5 d889fdb6 2da0a307 d7ec29bd",
        "",
        "48000000 00000001 26f58523 2707d254 14d03e2f 197498eb b38a4a87 dc5c43b9 65fae2db "
        "fdb79a75",
        NULL,
    },
    {
        DATA_CIPHER_CHACHA20_POLY1305,
        "8856e9fa 9c024c5d 9fd25134 57a4a504 7a8dc876 29df23a7 2b45453e 12f35f17",
        "b629be71 ca4406c8",
        "7b5b23b6 51a6b329 10a5fc53 9a5fb2a1 6efd3d83 49d3755e 7f9e0d60 ff74156b",
        "5fb72ca3 a8327366",
        "48000000 00000001 1bc4747b f448d0c7 c04cfe3e bfc3c51f 8bf4fd4b b3d1bc88 fe645bf9 "
        "497cadc4",
        "48000000 00000001 acc5b831 61d3ba2f eb961e5b d2637caa 4a25ec91 18591bc6 3340b8bc "
        "3414c40f",
    },
    {
        /* client with its pushed peer-id filtered out: it sends P_DATA_V1 (AAD = packet_id
         * only), the server still answers with P_DATA_V2 */
        DATA_CIPHER_AES_256_GCM,
        "a286dcaa 4a992e72 2386bb82 24499334 086f54dd 16ffed0e e3587a55 7505ed4e",
        "4fe13e95 38f8cfef",
        "6af1b8ec c5674a59 a788da69 923ad38f 084dbbaa 8de0d1fa bf853c7e cf5bb767",
        "8c927c40 8b4e01a7",
        "30 00000001 b33a3704 4fa6312e 69209f95 d33ef772 1da4035d dd8da783 4c0d7794 51fc956c",
        "48000000 00000001 3cb41f73 ce01927b e419aa66 f8a82ce2 bb6dbbbe 66a901d4 0f2315c6 "
        "b32ff61d",
    },
};

static void captured_block(const struct captured_data *cd, uint8_t block[256])
{
    /* bytes the log does not show: any non-zero filler, the cipher does not read them */
    memset(block, 0x5a, 256);
    unhex(cd->key0_cipher, block, 32);
    unhex(cd->key0_iv, block + 64, 8);
    unhex(cd->key1_cipher, block + 128, 32);
    unhex(cd->key1_iv, block + 192, 8);
}

static void opens_real_client_packets(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(captured) / sizeof(captured[0]); i++) {
        const struct captured_data *cd = &captured[i];
        uint8_t block[256], pkt[64], out[64];
        size_t pkt_len, out_len;
        struct data_key srv;

        captured_block(cd, block);
        pkt_len = unhex(cd->c2s_packet, pkt, sizeof(pkt));
        assert_int_equal(pkt_len, pkt[0] == 0x30 ? 37 : 40);
        assert_int_equal(key_init(&srv, cd->cipher, 0, block, true, 64), 0);
        assert_int_equal(data_key_open(&srv, pkt, pkt_len, out, sizeof(out), &out_len), 0);
        assert_int_equal(out_len, sizeof(ping_magic));
        assert_memory_equal(out, ping_magic, sizeof(ping_magic));
        /* the same packet again is a replay */
        assert_int_equal(data_key_open(&srv, pkt, pkt_len, out, sizeof(out), &out_len), -PE_REPLAY);
        data_key_clear(&srv);

        /* the client's own key cannot open it: wrong direction */
        assert_int_equal(key_init(&srv, cd->cipher, 0, block, false, 64), 0);
        assert_int_equal(data_key_open(&srv, pkt, pkt_len, out, sizeof(out), &out_len), -PE_AUTH);
        data_key_clear(&srv);
    }
}

/* Our server's first ping must be byte-identical to the real 2.6 server's (same keys). */
static void seal_equals_real_server_packet(void **state)
{
    size_t n_checked = 0;

    (void)state;
    for (size_t i = 0; i < sizeof(captured) / sizeof(captured[0]); i++) {
        const struct captured_data *cd = &captured[i];
        uint8_t block[256], want[64], got[64], out[64];
        size_t want_len, got_len, out_len;
        struct data_key srv, cli;

        if (cd->s2c_packet == NULL) {
            continue;
        }
        captured_block(cd, block);
        want_len = unhex(cd->s2c_packet, want, sizeof(want));
        assert_int_equal(key_init(&srv, cd->cipher, 0, block, true, 64), 0);
        assert_int_equal(data_key_seal(&srv, true, 0, ping_magic, sizeof(ping_magic), got,
                                       sizeof(got), &got_len),
                         0);
        assert_int_equal(got_len, want_len);
        assert_memory_equal(got, want, want_len);
        /* and a client key opens the real server's packet */
        assert_int_equal(key_init(&cli, cd->cipher, 0, block, false, 64), 0);
        assert_int_equal(data_key_open(&cli, want, want_len, out, sizeof(out), &out_len), 0);
        assert_int_equal(out_len, sizeof(ping_magic));
        assert_memory_equal(out, ping_magic, sizeof(ping_magic));
        data_key_clear(&srv);
        data_key_clear(&cli);
        n_checked++;
    }
    assert_int_equal(n_checked, 2);
}

/* Shared vectors: fixed keys (fill(seed)), packet ids and payloads (fill(seed + 1000)). */
struct shared_vector {
    enum data_cipher cipher;
    bool v2, is_server;
    uint8_t key_id;
    uint32_t peer_id, packet_id, seed;
    size_t plain_len;
    const char *packet;
};

static const struct shared_vector shared_vectors[] = {
    {DATA_CIPHER_AES_256_GCM, true, true, 0, 1, 1, 11, 0,
     "48000001 00000001 2f3c63c5 42fa008f f7e8a989 20925178"},
    {DATA_CIPHER_AES_256_GCM, true, false, 3, 0xABCDEF, 0x01020304, 21, 17,
     "4babcdef 01020304 1708c934 63776809 df9798f5 d8c0307a b3d7e2f3 3905a38f "
     "eae468c7 516cb480 d6"},
    {DATA_CIPHER_AES_256_GCM, false, true, 7, 0, 0xFFFFFFFEu, 31, 64,
     "37ffffff fe940834 47d61efd f44df318 8dfd60f1 c67459fa 1157497b b5129399 "
     "ff92c10f e37fc904 7534e14f c221a4b1 934fdbe7 829cb28f 68e24f3d e57c217b "
     "766d841a 80f18d4f 476366ce 570cef59 2bcc832e eb"},
    {DATA_CIPHER_AES_128_GCM, true, true, 0, 1, 1, 12, 0,
     "48000001 00000001 982363f2 7d7ed60e 844f3fd9 5ff3b783"},
    {DATA_CIPHER_AES_128_GCM, true, false, 3, 0xABCDEF, 0x01020304, 22, 17,
     "4babcdef 01020304 945fbe33 a7e22f3c 8e4b2190 09d2f4ce 639b366e d87331ec "
     "cf7f9bd6 b9497194 bd"},
    {DATA_CIPHER_AES_128_GCM, false, true, 7, 0, 0xFFFFFFFEu, 32, 64,
     "37ffffff fed857bf 6c5a9d55 5085963b bcefdb5b d4a05963 46427d1d 3c9d2807 "
     "642e39b0 70041cbf 7c6c2877 6c1a2974 615423ec a6ed3ba9 c2b3bc3b 36502e2e "
     "a375a8bf 0c8a72a9 44c8e249 9fab565d bdca112a e4"},
    {DATA_CIPHER_CHACHA20_POLY1305, true, true, 0, 1, 1, 13, 0,
     "48000001 00000001 03aca938 afef5cf1 c978eeb8 efef2bf3"},
    {DATA_CIPHER_CHACHA20_POLY1305, true, false, 3, 0xABCDEF, 0x01020304, 23, 17,
     "4babcdef 01020304 6e98a3e0 9fb6dd35 beb611f1 56237b8b c6d70914 ef1f767d "
     "869c9f57 cce10640 1e"},
    {DATA_CIPHER_CHACHA20_POLY1305, false, true, 7, 0, 0xFFFFFFFEu, 33, 64,
     "37ffffff fe432886 eaa89685 163733e4 2920dddb e27f13b1 1c6f9967 09a459cf "
     "f8fe4f6a 3e5a3850 47fb7b3d 84d9258c 0ebc91e4 8c44693a 11ca748e db7985cc "
     "38fa11aa cee7f272 e42e4271 762da61e 6c2f7b20 80"},
};

/* Seal v on backend b: the packet must be the stored bytes. */
static size_t seal_vector(const struct shared_vector *v, enum data_aead_backend b, uint8_t *pkt,
                          size_t cap)
{
    uint8_t block[256], plain[64], want[128];
    size_t want_len, len;
    struct data_key k;

    fill(block, sizeof(block), v->seed);
    fill(plain, v->plain_len, v->seed + 1000);
    want_len = unhex(v->packet, want, sizeof(want));
    assert_int_equal(want_len, (v->v2 ? 4 : 1) + 20 + v->plain_len);
    assert_int_equal(data_key_init_backend(&k, b, v->cipher, v->key_id, block, v->is_server, 64),
                     0);
    k.tx_packet_id = v->packet_id - 1;
    assert_int_equal(data_key_seal(&k, v->v2, v->peer_id, plain, v->plain_len, pkt, cap, &len), 0);
    assert_int_equal(len, want_len);
    assert_memory_equal(pkt, want, want_len);
    data_key_clear(&k);
    return len;
}

/* Open pkt (sealed for v) with a receiving key on backend b: 0 and v's payload, or the error
 * with the output wiped. */
static int open_vector(const struct shared_vector *v, enum data_aead_backend b, const uint8_t *pkt,
                       size_t len)
{
    uint8_t block[256], plain[64], out[128];
    size_t out_len = 99;
    struct data_key k;
    int err;

    fill(block, sizeof(block), v->seed);
    fill(plain, v->plain_len, v->seed + 1000);
    assert_int_equal(data_key_init_backend(&k, b, v->cipher, v->key_id, block, !v->is_server, 64),
                     0);
    memset(out, 0xee, sizeof(out));
    err = data_key_open(&k, pkt, len, out, sizeof(out), &out_len);
    if (err == 0) {
        assert_int_equal(out_len, v->plain_len);
        assert_memory_equal(out, plain, v->plain_len);
        assert_int_equal(k.rx.highest, v->packet_id);
    } else {
        size_t ct_len = len - (v->v2 ? 4 : 1) - 20;

        assert_int_equal(out_len, 0);
        for (size_t i = 0; i < ct_len; i++) {
            assert_int_equal(out[i], 0); /* no unauthenticated plaintext */
        }
        assert_int_equal(k.rx.highest, 0);
    }
    data_key_clear(&k);
    return err;
}

/* Both backends seal every vector to the stored bytes, and each opens the other's packets. */
static void shared_vectors_both_backends(void **state)
{
    size_t n_per_cipher[4] = {0};

    (void)state;
    for (size_t i = 0; i < sizeof(shared_vectors) / sizeof(shared_vectors[0]); i++) {
        const struct shared_vector *v = &shared_vectors[i];

        for (size_t sb = 0; sb < N_BACKENDS; sb++) {
            uint8_t pkt[128];
            size_t len = seal_vector(v, all_backends[sb], pkt, sizeof(pkt));

            for (size_t ob = 0; ob < N_BACKENDS; ob++) {
                assert_int_equal(open_vector(v, all_backends[ob], pkt, len), 0);
            }
        }
        n_per_cipher[v->cipher]++;
    }
    assert_int_equal(n_per_cipher[DATA_CIPHER_AES_128_GCM], 3);
    assert_int_equal(n_per_cipher[DATA_CIPHER_AES_256_GCM], 3);
    assert_int_equal(n_per_cipher[DATA_CIPHER_CHACHA20_POLY1305], 3);
}

/* A flipped bit in the tag, the authenticated header (peer_id; packet_id for P_DATA_V1), the
 * packet_id or the ciphertext: neither backend opens it, nor hands out plaintext. */
static void shared_vectors_tampered(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(shared_vectors) / sizeof(shared_vectors[0]); i++) {
        const struct shared_vector *v = &shared_vectors[i];
        size_t hdr = v->v2 ? 4 : 1;
        uint8_t pkt[128], bad[128];
        size_t len = seal_vector(v, DATA_AEAD_OPENSSL, pkt, sizeof(pkt));
        size_t spots[4], n_spots = 0;

        spots[n_spots++] = hdr + 4 + 7; /* tag */
        spots[n_spots++] = hdr + 3;     /* packet_id: nonce and AAD */
        if (v->v2) {
            spots[n_spots++] = 2; /* peer_id: AAD only */
        }
        if (v->plain_len > 0) {
            spots[n_spots++] = len - 1; /* ciphertext */
        }
        for (size_t s = 0; s < n_spots; s++) {
            memcpy(bad, pkt, len);
            bad[spots[s]] ^= 0x10;
            for (size_t ob = 0; ob < N_BACKENDS; ob++) {
                assert_int_equal(open_vector(v, all_backends[ob], bad, len), -PE_AUTH);
            }
        }
        /* and a packet cut short by one byte */
        if (v->plain_len > 0) {
            for (size_t ob = 0; ob < N_BACKENDS; ob++) {
                assert_int_equal(open_vector(v, all_backends[ob], pkt, len - 1), -PE_AUTH);
            }
        }
    }
}

/* The real openvpn 2.6 client's first ping, sealed again with its keys on each backend: byte
 * for byte the captured packet, for every cipher and for P_DATA_V1. */
static void both_backends_seal_real_client_packets(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(captured) / sizeof(captured[0]); i++) {
        const struct captured_data *cd = &captured[i];
        uint8_t block[256], want[64], got[64], out[64];
        size_t want_len, got_len, out_len;
        bool v2;

        captured_block(cd, block);
        want_len = unhex(cd->c2s_packet, want, sizeof(want));
        v2 = want[0] != 0x30;
        for (size_t b = 0; b < N_BACKENDS; b++) {
            struct data_key cli, srv;

            assert_int_equal(
                data_key_init_backend(&cli, all_backends[b], cd->cipher, 0, block, false, 64), 0);
            assert_int_equal(data_key_seal(&cli, v2, 0, ping_magic, sizeof(ping_magic), got,
                                           sizeof(got), &got_len),
                             0);
            assert_int_equal(got_len, want_len);
            assert_memory_equal(got, want, want_len);
            for (size_t ob = 0; ob < N_BACKENDS; ob++) {
                assert_int_equal(
                    data_key_init_backend(&srv, all_backends[ob], cd->cipher, 0, block, true, 64),
                    0);
                assert_int_equal(data_key_open(&srv, got, got_len, out, sizeof(out), &out_len), 0);
                assert_memory_equal(out, ping_magic, sizeof(ping_magic));
                data_key_clear(&srv);
            }
            data_key_clear(&cli);
        }
    }
}

static void default_backend_and_names(void **state)
{
    uint8_t block[256];
    struct data_key k;
    enum data_aead_backend def = data_crypto_default_backend();

    (void)state;
    assert_true(def == DATA_AEAD_OPENSSL || def == DATA_AEAD_MBEDTLS);
    fill(block, sizeof(block), 1200);
    assert_int_equal(data_key_init(&k, DATA_CIPHER_AES_256_GCM, 0, block, true, 64), 0);
    assert_int_equal(k.enc.backend, def);
    assert_int_equal(k.dec.backend, def);
    data_key_clear(&k);
    assert_int_equal(data_key_init_backend(&k, (enum data_aead_backend)7, DATA_CIPHER_AES_256_GCM,
                                           0, block, true, 64),
                     -PE_UNSUPPORTED);
    assert_null(k.enc.ctx);
    assert_non_null(strstr(data_aead_backend_name(DATA_AEAD_OPENSSL), "OpenSSL"));
    assert_non_null(strstr(data_aead_backend_name(DATA_AEAD_MBEDTLS), "mbed TLS"));
    assert_string_equal(data_aead_backend_name((enum data_aead_backend)7), "unknown");
}

static void header_layout(void **state)
{
    uint8_t block[256], pkt[64];
    size_t len;
    struct data_key srv, cli;

    (void)state;
    make_pair(DATA_CIPHER_AES_256_GCM, 5, 11, block, &srv, &cli);
    assert_int_equal(data_key_seal(&srv, true, 0x123456, ping_magic, 16, pkt, sizeof(pkt), &len),
                     0);
    assert_int_equal(len, DATA_V2_HEADER_LEN + DATA_AEAD_OVERHEAD + 16);
    assert_int_equal(pkt[0], (9 << 3) | 5);
    assert_int_equal(pkt[1], 0x12);
    assert_int_equal(pkt[2], 0x34);
    assert_int_equal(pkt[3], 0x56);
    assert_int_equal(pkt[4] | pkt[5] | pkt[6], 0);
    assert_int_equal(pkt[7], 1); /* first packet id is 1 */
    assert_int_equal(data_key_seal(&srv, false, 0, ping_magic, 16, pkt, sizeof(pkt), &len), 0);
    assert_int_equal(len, DATA_V1_HEADER_LEN + DATA_AEAD_OVERHEAD + 16);
    assert_int_equal(pkt[0], (6 << 3) | 5);
    assert_int_equal(pkt[4], 2);
    assert_int_equal(data_key_seal(&srv, true, 0x1000000, ping_magic, 16, pkt, sizeof(pkt), &len),
                     -PE_MALFORMED);
    data_key_clear(&srv);
    data_key_clear(&cli);
}

/* Flip every bit of a packet: nothing opens, and the untouched packet still does afterwards. */
static void tampering_is_rejected(void **state)
{
    uint8_t block[256], pkt[80], bad[80], out[80];
    size_t len, out_len;

    (void)state;
    for (size_t ci = 0; ci < N_CIPHERS; ci++) {
        for (int v2 = 0; v2 <= 1; v2++) {
            struct data_key srv, cli;
            size_t hdr = v2 ? 4 : 1;

            make_pair(all_ciphers[ci], 2, (uint32_t)(100 + ci), block, &srv, &cli);
            for (int i = 0; i < 5; i++) { /* packet id 5: no single bit flip makes it 0 */
                assert_int_equal(
                    data_key_seal(&cli, v2, 42, ping_magic, 16, pkt, sizeof(pkt), &len), 0);
            }
            for (size_t pos = 0; pos < len; pos++) {
                for (int bit = 0; bit < 8; bit++) {
                    memcpy(bad, pkt, len);
                    bad[pos] ^= (uint8_t)(1u << bit);
                    memset(out, 0xee, sizeof(out));
                    int err = data_key_open(&srv, bad, len, out, sizeof(out), &out_len);
                    if (pos == 0) {
                        assert_int_equal(err, -PE_MALFORMED); /* opcode or key_id changed */
                    } else {
                        assert_int_equal(err, -PE_AUTH);
                        for (size_t k = 0; k < len - hdr - 20; k++) {
                            assert_int_equal(out[k], 0); /* no unauthenticated plaintext */
                        }
                    }
                    assert_int_equal(out_len, 0);
                }
            }
            assert_int_equal(srv.rx.highest, 0); /* nothing was committed */
            assert_int_equal(data_key_open(&srv, pkt, len, out, sizeof(out), &out_len), 0);
            assert_memory_equal(out, ping_magic, 16);
            assert_int_equal(srv.rx.highest, 5);
            data_key_clear(&srv);
            data_key_clear(&cli);
        }
    }
}

static void truncated_packets_are_rejected(void **state)
{
    uint8_t block[256], pkt[80], out[80];
    size_t len, out_len;

    (void)state;
    for (size_t ci = 0; ci < N_CIPHERS; ci++) {
        for (int v2 = 0; v2 <= 1; v2++) {
            struct data_key srv, cli;
            size_t min = (v2 ? 4 : 1) + 20;

            make_pair(all_ciphers[ci], 0, (uint32_t)(200 + ci), block, &srv, &cli);
            assert_int_equal(data_key_seal(&cli, v2, 1, ping_magic, 16, pkt, sizeof(pkt), &len), 0);
            for (size_t cut = 0; cut < len; cut++) {
                /* a copy of exactly cut bytes, so ASan sees any read past the end */
                uint8_t *p = malloc(cut ? cut : 1);

                assert_non_null(p);
                memcpy(p, pkt, cut);
                int err = data_key_open(&srv, p, cut, out, sizeof(out), &out_len);
                assert_int_equal(err, cut < min ? -PE_SHORT : -PE_AUTH);
                free(p);
            }
            assert_int_equal(data_key_open(&srv, pkt, len, out, sizeof(out), &out_len), 0);
            data_key_clear(&srv);
            data_key_clear(&cli);
        }
    }
}

static void wrong_opcode_or_key_id(void **state)
{
    uint8_t block[256], pkt[64], out[64];
    size_t len, out_len;
    struct data_key srv, cli, other;

    (void)state;
    make_pair(DATA_CIPHER_AES_128_GCM, 1, 300, block, &srv, &cli);
    assert_int_equal(key_init(&other, DATA_CIPHER_AES_128_GCM, 2, block, true, 64), 0);
    assert_int_equal(data_key_seal(&cli, true, 9, ping_magic, 16, pkt, sizeof(pkt), &len), 0);
    assert_int_equal(data_key_open(&other, pkt, len, out, sizeof(out), &out_len), -PE_MALFORMED);
    pkt[0] = (4 << 3) | 1; /* P_CONTROL_V1 */
    assert_int_equal(data_key_open(&srv, pkt, len, out, sizeof(out), &out_len), -PE_MALFORMED);
    data_key_clear(&srv);
    data_key_clear(&cli);
    data_key_clear(&other);
}

static void replay_and_reorder(void **state)
{
    uint8_t block[256], pkts[4][64], out[64];
    size_t lens[4], out_len;
    struct data_key srv, cli;

    (void)state;
    make_pair(DATA_CIPHER_CHACHA20_POLY1305, 0, 400, block, &srv, &cli);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(
            data_key_seal(&cli, true, 0, ping_magic, 16, pkts[i], sizeof(pkts[i]), &lens[i]), 0);
    }
    assert_int_equal(data_key_open(&srv, pkts[2], lens[2], out, sizeof(out), &out_len), 0);
    assert_int_equal(data_key_open(&srv, pkts[0], lens[0], out, sizeof(out), &out_len), 0);
    assert_int_equal(data_key_open(&srv, pkts[0], lens[0], out, sizeof(out), &out_len), -PE_REPLAY);
    assert_int_equal(data_key_open(&srv, pkts[3], lens[3], out, sizeof(out), &out_len), 0);
    assert_int_equal(data_key_open(&srv, pkts[1], lens[1], out, sizeof(out), &out_len), 0);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(data_key_open(&srv, pkts[i], lens[i], out, sizeof(out), &out_len),
                         -PE_REPLAY);
    }
    data_key_clear(&srv);
    data_key_clear(&cli);
}

/* A forged packet carrying a fresh id must not burn that id for the genuine packet. */
static void auth_failure_does_not_commit(void **state)
{
    uint8_t block[256], pkt[64], forged[64], out[64];
    size_t len, out_len;
    struct data_key srv, cli;

    (void)state;
    make_pair(DATA_CIPHER_AES_256_GCM, 0, 500, block, &srv, &cli);
    assert_int_equal(data_key_seal(&cli, true, 0, ping_magic, 16, pkt, sizeof(pkt), &len), 0);
    memcpy(forged, pkt, len);
    forged[len - 1] ^= 1;
    assert_int_equal(data_key_open(&srv, forged, len, out, sizeof(out), &out_len), -PE_AUTH);
    assert_int_equal(data_key_open(&srv, forged, len, out, sizeof(out), &out_len), -PE_AUTH);
    assert_int_equal(data_key_open(&srv, pkt, len, out, sizeof(out), &out_len), 0);
    assert_int_equal(data_key_open(&srv, forged, len, out, sizeof(out), &out_len), -PE_REPLAY);
    data_key_clear(&srv);
    data_key_clear(&cli);
}

static void buffers_too_small(void **state)
{
    uint8_t block[256], pkt[64], out[64];
    size_t len, out_len;
    struct data_key srv, cli;

    (void)state;
    make_pair(DATA_CIPHER_AES_128_GCM, 0, 600, block, &srv, &cli);
    assert_int_equal(data_key_seal(&cli, true, 0, ping_magic, 16, pkt, 4 + 20 + 15, &len),
                     -PE_NOSPACE);
    assert_int_equal(data_key_seal(&cli, false, 0, ping_magic, 16, pkt, 1 + 20 + 15, &len),
                     -PE_NOSPACE);
    assert_int_equal(data_key_seal(&cli, true, 0, ping_magic, 16, pkt, 3, &len), -PE_NOSPACE);
    assert_int_equal(cli.tx_packet_id, 0); /* no id used up */
    assert_int_equal(data_key_seal(&cli, true, 0, ping_magic, 16, pkt, 4 + 20 + 16, &len), 0);
    assert_int_equal(data_key_open(&srv, pkt, len, out, 15, &out_len), -PE_NOSPACE);
    assert_int_equal(srv.rx.highest, 0);
    assert_int_equal(data_key_open(&srv, pkt, len, out, 16, &out_len), 0);
    data_key_clear(&srv);
    data_key_clear(&cli);
}

static void in_place(void **state)
{
    uint8_t block[256], buf[4 + 20 + 100], plain[100];
    size_t len, out_len;
    struct data_key srv, cli;

    (void)state;
    make_pair(DATA_CIPHER_AES_256_GCM, 0, 700, block, &srv, &cli);
    fill(plain, sizeof(plain), 3);
    memcpy(buf + 24, plain, sizeof(plain));
    assert_int_equal(data_key_seal(&cli, true, 0, buf + 24, 100, buf, sizeof(buf), &len), 0);
    assert_int_equal(len, sizeof(buf));
    assert_int_equal(data_key_open(&srv, buf, len, buf + 24, 100, &out_len), 0);
    assert_int_equal(out_len, 100);
    assert_memory_equal(buf + 24, plain, sizeof(plain));
    data_key_clear(&srv);
    data_key_clear(&cli);
}

/* 2.7's AES-GCM usage limit: blocks of plaintext plus packets, each direction; not for
 * CHACHA20-POLY1305. */
static void aead_usage_limit(void **state)
{
    uint8_t block[256], pkt[128], out[128], plain[33] = {0};
    size_t len, out_len;
    struct data_key srv, cli;

    (void)state;
    make_pair(DATA_CIPHER_AES_256_GCM, 0, 900, block, &srv, &cli);
    assert_int_equal(data_key_seal(&cli, true, 0, plain, 33, pkt, sizeof(pkt), &len), 0);
    assert_int_equal(cli.tx_blocks, 3); /* 33 bytes: 3 blocks */
    assert_int_equal(data_key_open(&srv, pkt, len, out, sizeof(out), &out_len), 0);
    assert_int_equal(srv.rx_blocks, 3);
    assert_false(data_key_usage_limit_reached(&cli));
    assert_false(data_key_usage_limit_reached(&srv));
    cli.tx_blocks = DATA_AEAD_USAGE_LIMIT - cli.tx_packet_id; /* at the limit, not past it */
    assert_false(data_key_usage_limit_reached(&cli));
    assert_int_equal(data_key_seal(&cli, true, 0, plain, 1, pkt, sizeof(pkt), &len), 0);
    assert_true(data_key_usage_limit_reached(&cli));
    srv.rx_blocks = DATA_AEAD_USAGE_LIMIT - srv.rx.highest - 1;
    assert_false(data_key_usage_limit_reached(&srv));
    assert_int_equal(data_key_open(&srv, pkt, len, out, sizeof(out), &out_len), 0);
    assert_true(data_key_usage_limit_reached(&srv)); /* the receive side counts too */
    data_key_clear(&srv);
    data_key_clear(&cli);
    make_pair(DATA_CIPHER_CHACHA20_POLY1305, 0, 900, block, &srv, &cli);
    cli.tx_blocks = DATA_AEAD_USAGE_LIMIT * 2;
    assert_false(data_key_usage_limit_reached(&cli));
    data_key_clear(&srv);
    data_key_clear(&cli);
}

static void tx_packet_id_exhaustion(void **state)
{
    uint8_t block[256], pkt[64], out[64];
    size_t len, out_len;
    struct data_key srv, cli;

    (void)state;
    make_pair(DATA_CIPHER_AES_128_GCM, 0, 800, block, &srv, &cli);
    assert_false(data_key_tx_wants_renegotiation(&cli));
    cli.tx_packet_id = DATA_TX_ID_RENEGOTIATE - 1;
    assert_false(data_key_tx_wants_renegotiation(&cli));
    assert_int_equal(data_key_seal(&cli, true, 0, ping_magic, 16, pkt, sizeof(pkt), &len), 0);
    assert_true(data_key_tx_wants_renegotiation(&cli));
    cli.tx_packet_id = UINT32_MAX - 1;
    assert_int_equal(data_key_seal(&cli, true, 0, ping_magic, 16, pkt, sizeof(pkt), &len), 0);
    assert_int_equal(data_key_open(&srv, pkt, len, out, sizeof(out), &out_len), 0);
    assert_int_equal(srv.rx.highest, UINT32_MAX);
    assert_int_equal(data_key_seal(&cli, true, 0, ping_magic, 16, pkt, sizeof(pkt), &len),
                     -PE_STATE);
    assert_int_equal(data_key_seal(&cli, true, 0, ping_magic, 16, pkt, sizeof(pkt), &len),
                     -PE_STATE);
    data_key_clear(&srv);
    data_key_clear(&cli);
}

static void init_rejects_bad_keys(void **state)
{
    uint8_t block[256], pkt[64];
    size_t len;
    struct data_key k;

    (void)state;
    fill(block, sizeof(block), 900);
    assert_int_equal(key_init(&k, DATA_CIPHER_NONE, 0, block, true, 64), -PE_UNSUPPORTED);
    assert_int_equal(key_init(&k, (enum data_cipher)99, 0, block, true, 64), -PE_UNSUPPORTED);
    assert_int_equal(key_init(&k, DATA_CIPHER_AES_256_GCM, 8, block, true, 64), -PE_MALFORMED);
    for (size_t ci = 0; ci < N_CIPHERS; ci++) {
        size_t key_len = data_cipher_key_len(all_ciphers[ci]);

        for (size_t half = 0; half < 2; half++) {
            fill(block, sizeof(block), 901);
            memset(block + half * 128, 0, key_len);
            assert_int_equal(key_init(&k, all_ciphers[ci], 0, block, true, 64), -PE_MALFORMED);
            assert_int_equal(key_init(&k, all_ciphers[ci], 0, block, false, 64), -PE_MALFORMED);
            assert_null(k.enc.ctx);
            /* one non-zero byte anywhere in the key is enough */
            block[half * 128 + key_len - 1] = 1;
            assert_int_equal(key_init(&k, all_ciphers[ci], 0, block, true, 64), 0);
            data_key_clear(&k);
        }
    }
    assert_int_equal(data_key_seal(&k, true, 0, ping_magic, 16, pkt, sizeof(pkt), &len), -PE_STATE);
}

static void clear_is_safe(void **state)
{
    uint8_t block[256], out[64];
    size_t out_len;
    struct data_key k;

    (void)state;
    memset(&k, 0, sizeof(k));
    data_key_clear(&k);
    fill(block, sizeof(block), 1000);
    assert_int_equal(key_init(&k, DATA_CIPHER_AES_256_GCM, 0, block, true, 64), 0);
    data_key_clear(&k);
    data_key_clear(&k);
    assert_null(k.enc.ctx);
    assert_null(k.dec.ctx);
    assert_int_equal(data_key_open(&k, block, 64, out, sizeof(out), &out_len), -PE_STATE);
}

static void hot_path_does_not_allocate(void **state)
{
    uint8_t block[256], plain[1400], pkt[1500], out[1500];
    size_t len, out_len;

    (void)state;
    fill(plain, sizeof(plain), 5);
    for (size_t ci = 0; ci < N_CIPHERS; ci++) {
        struct data_key srv, cli;
        unsigned long before;

        before = n_allocs;
        make_pair(all_ciphers[ci], 0, (uint32_t)(1100 + ci), block, &srv, &cli);
        assert_true(n_allocs > before); /* the counter works: init allocates */
        before = n_allocs;
        for (int i = 0; i < 100; i++) {
            assert_int_equal(
                data_key_seal(&cli, i % 2, 0, plain, sizeof(plain), pkt, sizeof(pkt), &len), 0);
            pkt[len - 1] ^= 1; /* the failure path too */
            assert_int_equal(data_key_open(&srv, pkt, len, out, sizeof(out), &out_len), -PE_AUTH);
            pkt[len - 1] ^= 1;
            assert_int_equal(data_key_open(&srv, pkt, len, out, sizeof(out), &out_len), 0);
            assert_int_equal(data_key_open(&srv, pkt, len, out, sizeof(out), &out_len), -PE_REPLAY);
        }
        assert_int_equal(n_allocs, before);
        data_key_clear(&srv);
        data_key_clear(&cli);
    }
}

int main(void)
{
    /* every case on the backend the group's setup picks */
    const struct CMUnitTest backend_tests[] = {
        cmocka_unit_test(seal_matches_mbedtls),
        cmocka_unit_test(opens_real_client_packets),
        cmocka_unit_test(seal_equals_real_server_packet),
        cmocka_unit_test(header_layout),
        cmocka_unit_test(tampering_is_rejected),
        cmocka_unit_test(truncated_packets_are_rejected),
        cmocka_unit_test(wrong_opcode_or_key_id),
        cmocka_unit_test(replay_and_reorder),
        cmocka_unit_test(auth_failure_does_not_commit),
        cmocka_unit_test(buffers_too_small),
        cmocka_unit_test(in_place),
        cmocka_unit_test(tx_packet_id_exhaustion),
        cmocka_unit_test(aead_usage_limit),
        cmocka_unit_test(init_rejects_bad_keys),
        cmocka_unit_test(clear_is_safe),
        cmocka_unit_test(hot_path_does_not_allocate),
    };
    /* cases that name their backends themselves */
    const struct CMUnitTest shared_tests[] = {
        cmocka_unit_test(cipher_names),
        cmocka_unit_test(default_backend_and_names),
        cmocka_unit_test(shared_vectors_both_backends),
        cmocka_unit_test(shared_vectors_tampered),
        cmocka_unit_test(both_backends_seal_real_client_packets),
    };
    int failed = 0;

    /* must run before libcrypto allocates anything */
    if (CRYPTO_set_mem_functions(count_malloc, count_realloc, count_free) != 1) {
        return 1;
    }
    failed += cmocka_run_group_tests_name("backend OpenSSL", backend_tests, use_openssl, NULL);
    failed += cmocka_run_group_tests_name("backend Mbed TLS", backend_tests, use_mbedtls, NULL);
    failed += cmocka_run_group_tests_name("shared vectors", shared_tests, NULL, NULL);
    return failed;
}
