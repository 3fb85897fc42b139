/* tests/fuzz/fuzz_control.c: the control channel's parsers under a coverage-guided fuzzer.
 *
 * The first input byte picks what the rest is fed to, in the order the acceptor meets them:
 *  0: a sequence of unwrapped control packets ([length][bytes] records; the length byte is the
 *     record's size, 0 meaning 256) through control_packet_parse() and a reliable layer with
 *     three packets of its own outstanding (ACKs, out-of-order storage, in-order delivery). A
 *     server without tls-auth/tls-crypt takes these from anyone who can reach its port;
 *  1: a key-method-2 message from a client, then its peer-info (also as the variables scripts
 *     and plugins get) and options strings;
 *  2: TLS plaintext split into control-channel messages, each classified;
 *  3: a password as an auth-gen-token token;
 *  4: a tls-crypt and a tls-auth wrapped packet, and a data-channel packet (the fuzzer cannot
 *     forge their tags: this covers the header checks before them).
 * Besides "does not crash" (ASan/UBSan in the fuzzing build), the checks are the bounds the
 * server relies on: parsed lengths inside the input, strings terminated, the reliable layer
 * delivering each message id once, in order, with the payload that arrived for it.
 *
 * Built as a libFuzzer target by scripts/fuzz.sh (clang); tests/fuzz/replay.c runs the same
 * function over the committed corpus in every ctest run.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/auth_token.h"
#include "proto/data_crypto.h"
#include "proto/key_method.h"
#include "proto/occ.h"
#include "proto/packet.h"
#include "proto/peer_info.h"
#include "proto/push.h"
#include "proto/reliable.h"
#include "proto/static_key.h"
#include "proto/tls_wrap.h"
#include "server/hooks/hook_env.h"
#include "server/hooks/script.h"
#include "tests/fuzz/fuzz_check.h"

#define MAX_RECORDS 48

/* An exact-size heap copy, so ASan catches a read past the end. */
static uint8_t *dup_exact(const uint8_t *data, size_t len)
{
    uint8_t *p = malloc(len ? len : 1);

    CHECK(p != NULL);
    memcpy(p, data, len);
    return p;
}

/* What arrived for each message id, to check what the reliable layer hands on. */
struct arrival {
    uint8_t *payload;
    size_t len;
};

static void control_packets(const uint8_t *data, size_t size)
{
    static struct arrival arrived[256];
    struct reliable r;
    uint8_t *payload, *to_free;
    size_t len;
    uint32_t expect_id = 0, id;
    unsigned n = 0;

    reliable_init(&r, 0, 0, 2000);
    for (int i = 0; i < 3; i++) {
        uint8_t msg[100] = {(uint8_t)i};

        CHECK(reliable_queue(&r, 0x20, msg, sizeof(msg), 0, &id) == 0 && id == (uint32_t)i);
    }
    while (size >= 1 && n++ < MAX_RECORDS) {
        size_t rec_len = data[0] ? data[0] : 256;
        struct control_packet pkt;
        uint8_t *p;

        data++;
        size--;
        rec_len = rec_len < size ? rec_len : size;
        p = dup_exact(data, rec_len);
        data += rec_len;
        size -= rec_len;
        if (control_packet_parse(p, rec_len, &pkt) == 0) {
            CHECK(pkt.acks.n_acks <= CONTROL_MAX_ACKS);
            CHECK(pkt.payload_len == 0 ||
                  (pkt.payload >= p && pkt.payload + pkt.payload_len <= p + rec_len));
            CHECK(packet_is_control(pkt.opcode));
            reliable_process_acks(&r, &pkt.acks, n * 100u);
            if (pkt.has_message_id) {
                int rc = reliable_receive(&r, pkt.message_id, pkt.payload, pkt.payload_len);

                if (rc == 0) {
                    /* stored: the first arrival of an id inside the window */
                    CHECK(pkt.message_id >= expect_id &&
                          pkt.message_id < expect_id + RELIABLE_N_RECV);
                    free(arrived[pkt.message_id % 256].payload);
                    arrived[pkt.message_id % 256].payload = dup_exact(pkt.payload, pkt.payload_len);
                    arrived[pkt.message_id % 256].len = pkt.payload_len;
                }
            }
            while (reliable_pop(&r, &payload, &len, &to_free)) {
                struct arrival *a = &arrived[expect_id % 256];

                CHECK(a->payload != NULL && a->len == len);
                CHECK(len == 0 || memcmp(a->payload, payload, len) == 0);
                free(a->payload);
                a->payload = NULL;
                free(to_free);
                expect_id++;
            }
            (void)reliable_next_due(&r, n * 100u);
        }
        free(p);
    }
    reliable_clear(&r);
    for (size_t i = 0; i < 256; i++) {
        free(arrived[i].payload);
        arrived[i].payload = NULL;
    }
}

/* The client's IV_/UV_ peer-info lines become script and plugin variables: each must be one
 * NAME=value line with a name of letters, digits and '_' (no way to set PATH or inject a line). */
static void peer_info_env(const char *peer_info)
{
    struct script_env env = {0};

    CHECK(hook_env_peer_info(&env, peer_info) == 0);
    for (size_t i = 0; i < env.n; i++) {
        const char *v = env.vars[i], *eq = strchr(v, '=');

        CHECK(eq != NULL && eq > v && strpbrk(v, "\r\n") == NULL);
        CHECK(strncmp(v, "IV_", 3) == 0 || strncmp(v, "UV_", 3) == 0);
        for (const char *p = v; p < eq; p++) {
            CHECK((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                  (*p >= '0' && *p <= '9') || *p == '_');
        }
    }
    script_env_clear(&env);
}

static void key_method2(const uint8_t *data, size_t size)
{
    static struct key_method2 km;
    struct peer_info pi;
    char value[256];
    uint8_t *p = dup_exact(data, size);

    if (key_method2_parse(p, size, true, &km) == 0) {
        CHECK(memchr(km.options, '\0', sizeof(km.options)) != NULL);
        CHECK(memchr(km.username, '\0', sizeof(km.username)) != NULL);
        CHECK(memchr(km.password, '\0', sizeof(km.password)) != NULL);
        CHECK(memchr(km.peer_info, '\0', sizeof(km.peer_info)) != NULL);
        CHECK(peer_info_parse(km.peer_info, strlen(km.peer_info), &pi) == 0);
        CHECK(memchr(pi.ciphers, '\0', sizeof(pi.ciphers)) != NULL);
        if (occ_options_get(km.options, "cipher", value, sizeof(value))) {
            CHECK(memchr(value, '\0', sizeof(value)) != NULL);
        }
        (void)occ_options_has_comp(km.options);
        (void)peer_info_supports_ncp(&pi);
        peer_info_env(km.peer_info);
    }
    key_method2_wipe(&km);
    free(p);
}

static void control_messages(const uint8_t *data, size_t size)
{
    static char out[CONTROL_MSG_MAX];
    uint8_t *p = dup_exact(data, size);
    size_t off = 0;

    while (off < size) {
        size_t consumed = 0, out_len = 0;
        int rc = control_msg_next(p + off, size - off, &consumed, out, sizeof(out), &out_len);

        CHECK(consumed > 0 && consumed <= size - off);
        if (rc == 0) {
            CHECK(out_len < sizeof(out) && out[out_len] == '\0');
            (void)control_msg_classify(out, out_len);
        }
        off += consumed;
    }
    free(p);
}

static void auth_token(const uint8_t *data, size_t size)
{
    static const uint8_t secret[AUTH_TOKEN_SECRET_LEN] = {1, 2, 3};
    char *text = malloc(size + 1);
    char sid[AUTH_TOKEN_SESSION_ID_B64_LEN + 1];
    struct auth_token_info info;

    CHECK(text != NULL);
    memcpy(text, data, size);
    text[size] = '\0';
    /* No input forges an HMAC-SHA256 under a secret it does not know. */
    CHECK(auth_token_verify(secret, "user", text, 1800000000u, 3600, 0, &info) == 0);
    (void)auth_token_decode(text, &info);
    if (auth_token_session_id_text(text, sid) == 0) {
        CHECK(strlen(sid) == AUTH_TOKEN_SESSION_ID_B64_LEN);
    }
    free(text);
}

static void wrapped(const uint8_t *data, size_t size)
{
    static struct tls_wrap_ctx crypt, auth;
    static struct data_key dk;
    static bool is_ready;
    static uint8_t out[4096];
    uint8_t *p = dup_exact(data, size);
    size_t out_len;
    uint32_t pid, t;

    if (!is_ready) {
        uint8_t key2[STATIC_KEY_LEN], block[256];

        for (size_t i = 0; i < sizeof(key2); i++) {
            key2[i] = (uint8_t)i;
        }
        for (size_t i = 0; i < sizeof(block); i++) {
            block[i] = (uint8_t)(i * 7 + 1);
        }
        CHECK(tls_wrap_init(&crypt, TLS_WRAP_CRYPT, key2, -1, NULL, true) == 0);
        CHECK(tls_wrap_init(&auth, TLS_WRAP_AUTH, key2, 0, "SHA256", true) == 0);
        CHECK(data_key_init(&dk, DATA_CIPHER_AES_256_GCM, 0, block, true, 64) == 0);
        is_ready = true;
    }
    CHECK(tls_wrap_open(&crypt, p, size, out, sizeof(out), &out_len, &pid, &t) != 0);
    CHECK(tls_wrap_open(&auth, p, size, out, sizeof(out), &out_len, &pid, &t) != 0);
    CHECK(data_key_open(&dk, p, size, out, sizeof(out), &out_len) != 0);
    free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    switch (data[0] % 5) {
    case 0:
        control_packets(data + 1, size - 1);
        break;
    case 1:
        key_method2(data + 1, size - 1);
        break;
    case 2:
        control_messages(data + 1, size - 1);
        break;
    case 3:
        auth_token(data + 1, size - 1);
        break;
    default:
        wrapped(data + 1, size - 1);
        break;
    }
    return 0;
}
