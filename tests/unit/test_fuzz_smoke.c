/* tests/unit/test_fuzz_smoke.c: every parser that sees network bytes, fed with random and
 * mutated input (fixed seed, so a failure reproduces). Each input is an exact-size heap copy,
 * so the ASan build catches any read past the end; a parser must return, never crash. The
 * checks after each call are the invariants the server relies on (lengths within bounds). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/auth_token.h"
#include "proto/data_crypto.h"
#include "proto/key_method.h"
#include "proto/packet.h"
#include "proto/peer_info.h"
#include "proto/push.h"
#include "proto/static_key.h"
#include "proto/tls_wrap.h"
#include "proto/tun_offload.h"

#define N_ROUNDS 20000
#define MAX_LEN 1700

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint32_t rnd(void)
{
    /* xorshift64*: test input only, not cryptography */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545F4914F6CDD1Dull) >> 32);
}

/* Random bytes, often with a plausible first byte (a control or data opcode, key_id 0). */
static uint8_t *random_packet(size_t *len)
{
    static const uint8_t firsts[] = {0x38, 0x40, 0x20, 0x28, 0x48, 0x30, 0x50, 0x58, 0x19};
    size_t n = rnd() % MAX_LEN;
    uint8_t *p = malloc(n ? n : 1);

    assert_non_null(p);
    for (size_t i = 0; i < n; i++) {
        p[i] = (uint8_t)rnd();
    }
    if (n && rnd() % 4 != 0) {
        p[0] = firsts[rnd() % sizeof(firsts)];
    }
    if (n > 9 && rnd() % 2) {
        p[9] = (uint8_t)(rnd() % 10); /* small ACK counts reach deeper */
    }
    *len = n;
    return p;
}

static void control_packet_parse_survives(void **state)
{
    (void)state;
    for (int i = 0; i < N_ROUNDS; i++) {
        size_t len;
        uint8_t *p = random_packet(&len);
        struct control_packet pkt;

        if (control_packet_parse(p, len, &pkt) == 0) {
            assert_true(pkt.acks.n_acks <= CONTROL_MAX_ACKS);
            assert_true(pkt.payload >= p && pkt.payload + pkt.payload_len <= p + len);
        }
        free(p);
    }
}

static void tls_wrap_open_survives(void **state)
{
    uint8_t key2[STATIC_KEY_LEN];
    struct tls_wrap_ctx crypt, auth;
    uint8_t out[2048];

    (void)state;
    for (size_t i = 0; i < sizeof(key2); i++) {
        key2[i] = (uint8_t)i;
    }
    assert_int_equal(tls_wrap_init(&crypt, TLS_WRAP_CRYPT, key2, -1, NULL, true), 0);
    assert_int_equal(tls_wrap_init(&auth, TLS_WRAP_AUTH, key2, 0, "SHA1", true), 0);
    for (int i = 0; i < N_ROUNDS; i++) {
        size_t len, out_len;
        uint32_t id, t;
        uint8_t *p = random_packet(&len);

        /* Random bytes never authenticate. */
        assert_int_not_equal(tls_wrap_open(&crypt, p, len, out, sizeof(out), &out_len, &id, &t), 0);
        assert_int_not_equal(tls_wrap_open(&auth, p, len, out, sizeof(out), &out_len, &id, &t), 0);
        free(p);
    }
    tls_wrap_wipe(&crypt);
    tls_wrap_wipe(&auth);
}

static void data_key_open_survives(void **state)
{
    uint8_t block[256], out[2048];
    struct data_key k;

    (void)state;
    memset(&k, 0, sizeof(k));
    for (size_t i = 0; i < sizeof(block); i++) {
        block[i] = (uint8_t)(i * 7 + 1);
    }
    assert_int_equal(data_key_init(&k, DATA_CIPHER_AES_256_GCM, 0, block, true, 64), 0);
    for (int i = 0; i < N_ROUNDS; i++) {
        size_t len, out_len = 12345;
        uint8_t *p = random_packet(&len);

        if (len) {
            p[0] = (uint8_t)(rnd() % 2 ? 0x48 : 0x30); /* P_DATA_V2 / P_DATA_V1, key 0 */
        }
        assert_int_not_equal(data_key_open(&k, p, len, out, sizeof(out), &out_len), 0);
        free(p);
    }
    data_key_clear(&k);
}

static void key_method2_and_peer_info_survive(void **state)
{
    struct key_method2 *km = calloc(1, sizeof(*km));
    struct peer_info pi;

    (void)state;
    assert_non_null(km);
    for (int i = 0; i < N_ROUNDS / 4; i++) {
        size_t len;
        uint8_t *p = random_packet(&len);

        if (len > 5) {
            memset(p, 0, 4);
            p[4] = 2; /* key method 2, so the string fields get parsed */
        }
        if (key_method2_parse(p, len, true, km) == 0) {
            assert_non_null(memchr(km->options, '\0', sizeof(km->options)));
            assert_non_null(memchr(km->peer_info, '\0', sizeof(km->peer_info)));
        }
        peer_info_parse((const char *)p, len, &pi);
        assert_non_null(memchr(pi.ciphers, '\0', sizeof(pi.ciphers)));
        free(p);
    }
    key_method2_wipe(km);
    free(km);
}

static void control_messages_survive(void **state)
{
    char out[CONTROL_MSG_MAX];

    (void)state;
    for (int i = 0; i < N_ROUNDS; i++) {
        size_t len, consumed, out_len;
        uint8_t *p = random_packet(&len);

        if (control_msg_next(p, len, &consumed, out, sizeof(out), &out_len) == 0) {
            assert_true(consumed <= len);
            assert_true(out_len < sizeof(out));
            (void)control_msg_classify(out, out_len);
        }
        free(p);
    }
}

/* A client's password that looks like an auth-gen-token token, and key files: random text after
 * the prefix (often base64 characters, often the token's length). */
static void auth_tokens_and_key_files_survive(void **state)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";
    static const char begin[] = "-----BEGIN OpenVPN auth-token server key-----\n";
    static const uint8_t secret[AUTH_TOKEN_SECRET_LEN] = {1};
    char text[300], sid[AUTH_TOKEN_SESSION_ID_B64_LEN + 1];
    uint8_t key[AUTH_TOKEN_SECRET_LEN];
    struct auth_token_info info;

    (void)state;
    for (int i = 0; i < N_ROUNDS; i++) {
        size_t n = rnd() % 2 ? AUTH_TOKEN_LEN : rnd() % (sizeof(text) - 1), line = 0;
        bool is_b64 = rnd() % 2;
        const char *why = NULL;

        for (size_t j = 0; j < n; j++) {
            text[j] = is_b64 ? b64[rnd() % (sizeof(b64) - 1)] : (char)(rnd() % 255 + 1);
        }
        text[n] = '\0';
        if (n >= AUTH_TOKEN_PREFIX_LEN && rnd() % 4) {
            memcpy(text, AUTH_TOKEN_PREFIX, AUTH_TOKEN_PREFIX_LEN);
        }
        if (auth_token_verify(secret, "user", text, 1800000000u, 3600, 0, &info) != 0) {
            fail_msg("random text verified as a token: %s", text);
        }
        (void)auth_token_decode(text, &info);
        (void)auth_token_session_id_text(text, sid);
        if (n > sizeof(begin) && rnd() % 2) {
            memcpy(text, begin, sizeof(begin) - 1);
        }
        if (auth_token_key_parse(text, n, key, &line, &why) != 0) {
            assert_non_null(why);
        }
    }
}

/* Random IP packets, mostly TCP with lengths that match, from a client of the tunnel. */
static uint8_t *random_ip_packet(size_t *len)
{
    size_t n = rnd() % MAX_LEN;
    uint8_t *p = malloc(n ? n : 1);

    assert_non_null(p);
    for (size_t i = 0; i < n; i++) {
        p[i] = (uint8_t)rnd();
    }
    if (n >= 60 && rnd() % 8 != 0) {
        bool v6 = rnd() % 2;
        size_t iphl = v6 ? 40 : 20;

        p[0] = v6 ? 0x60 : 0x45;
        if (v6) {
            p[4] = (uint8_t)((n - 40) >> 8);
            p[5] = (uint8_t)(n - 40);
            p[6] = 6;
        } else {
            p[2] = (uint8_t)(n >> 8);
            p[3] = (uint8_t)n;
            p[6] = rnd() % 2 ? 0x40 : 0;
            p[7] = 0;
            p[9] = 6;
        }
        p[iphl + 12] = (uint8_t)((5 + rnd() % 4) << 4);
        p[iphl + 13] = rnd() % 2 ? 0x10 : (uint8_t)rnd();
        memset(p + iphl + 4, 0, 3); /* sequence numbers close together: some continue */
    }
    *len = n;
    return p;
}

static size_t n_emitted;

static void count_emitted(void *ctx, const struct vnet_hdr *h, const uint8_t *pkt, size_t len)
{
    (void)ctx;
    (void)pkt;
    assert_true(len <= TUN_OFFLOAD_MAX_PACKET);
    assert_true(h->gso_type == VNET_GSO_NONE || h->hdr_len < len);
    n_emitted++;
}

/* Decrypted packets of a client into the TCP coalescer, and random super-packets (as the TUN
 * device would hand them over) into the segmenter. */
static void tun_offload_survives(void **state)
{
    struct tcp_gro g;
    size_t n_in = 0;

    (void)state;
    assert_int_equal(tcp_gro_init(&g, count_emitted, NULL), 0);
    n_emitted = 0;
    for (int i = 0; i < N_ROUNDS; i++) {
        size_t len, seg_len;
        uint8_t *p = random_ip_packet(&len), seg[2048];
        struct vnet_hdr h = {.gso_type = rnd() % 2 ? VNET_GSO_TCPV4 : VNET_GSO_TCPV6,
                             .gso_size = (uint16_t)(rnd() % 1500)};
        struct tso_iter it;

        tcp_gro_add(&g, p, len);
        n_in++;
        if (rnd() % 16 == 0) {
            tcp_gro_flush(&g);
        }
        if (tso_begin(&it, p, len, &h) == 0) {
            while (tso_next(&it, seg, sizeof(seg), &seg_len) == 1) {
                assert_true(seg_len <= sizeof(seg));
            }
        }
        free(p);
    }
    tcp_gro_flush(&g);
    assert_true(n_emitted > 0 && n_emitted <= n_in);
    tcp_gro_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(control_packet_parse_survives),
        cmocka_unit_test(tls_wrap_open_survives),
        cmocka_unit_test(data_key_open_survives),
        cmocka_unit_test(key_method2_and_peer_info_survive),
        cmocka_unit_test(control_messages_survive),
        cmocka_unit_test(auth_tokens_and_key_files_survive),
        cmocka_unit_test(tun_offload_survives),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
