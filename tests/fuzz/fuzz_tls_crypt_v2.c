/* tests/fuzz/fuzz_tls_crypt_v2.c: tls-crypt-v2's parsers under a coverage-guided fuzzer.
 *
 * The first input byte picks what the rest is fed to:
 *  0: the text of a key file (or inline block): client key, server key, PEM decoding;
 *  1: a received P_CONTROL_HARD_RESET_CLIENT_V3 / P_CONTROL_WKC_V1: the WKc is located at its
 *     end and unwrapped with a fixed server key (server key bytes 0..127 = 0..127), as the
 *     acceptor does before anything else. The corpus holds a packet whose WKc was made with
 *     that key, so the path past the tag is covered too.
 * Checks: lengths stay inside the input and the buffers; a WKc that unwraps gives metadata no
 * longer than allowed, and wrapping Kc and that metadata again gives the same WKc back.
 *
 * Built as a libFuzzer target by scripts/fuzz.sh (clang); tests/fuzz/replay.c runs the same
 * function over the committed corpus in every ctest run.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/tls_crypt_v2.h"
#include "tests/fuzz/fuzz_check.h"

static void key_text(const uint8_t *data, size_t size)
{
    char *text = malloc(size ? size : 1);
    uint8_t kc[TLS_CRYPT_V2_CLIENT_KEY_LEN], wkc[TLS_CRYPT_V2_MAX_WKC_LEN], raw[64];
    struct tls_crypt_v2_server_key sk;
    size_t wkc_len = 0, raw_len = 0;

    CHECK(text != NULL);
    memcpy(text, data, size);
    if (tls_crypt_v2_client_key_parse(text, size, kc, wkc, sizeof(wkc), &wkc_len) == 0) {
        CHECK(wkc_len >= TLS_CRYPT_V2_MIN_WKC_LEN && wkc_len <= TLS_CRYPT_V2_MAX_WKC_LEN);
    } else {
        CHECK(wkc_len == 0);
    }
    (void)tls_crypt_v2_server_key_parse(text, size, &sk);
    if (tls_crypt_v2_pem_decode("X", text, size, raw, sizeof(raw), &raw_len) == 0) {
        CHECK(raw_len <= sizeof(raw));
    }
    free(text);
}

static void received(const uint8_t *data, size_t size)
{
    uint8_t raw[TLS_CRYPT_V2_SERVER_KEY_LEN], kc[TLS_CRYPT_V2_CLIENT_KEY_LEN];
    uint8_t md[TLS_CRYPT_V2_MAX_METADATA_LEN], again[TLS_CRYPT_V2_MAX_WKC_LEN];
    struct tls_crypt_v2_server_key sk;
    size_t off, md_len, again_len;
    uint8_t *pkt = malloc(size ? size : 1);

    CHECK(pkt != NULL);
    memcpy(pkt, data, size);
    for (size_t i = 0; i < sizeof(raw); i++) {
        raw[i] = (uint8_t)i;
    }
    tls_crypt_v2_server_key_init(&sk, raw);
    if (tls_crypt_v2_locate_wkc(pkt, size, &off) == 0) {
        CHECK(off >= 1 && off < size && size - off <= TLS_CRYPT_V2_MAX_WKC_LEN);
        if (tls_crypt_v2_unwrap(&sk, pkt + off, size - off, kc, md, sizeof(md), &md_len) == 0) {
            CHECK(md_len <= TLS_CRYPT_V2_MAX_METADATA_LEN);
            CHECK(md_len + TLS_CRYPT_V2_MIN_WKC_LEN == size - off);
            if (md_len > 0) {
                CHECK(tls_crypt_v2_wrap(&sk, kc, md, md_len, again, sizeof(again), &again_len) ==
                      0);
                CHECK(again_len == size - off && memcmp(again, pkt + off, again_len) == 0);
            }
        }
    }
    free(pkt);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    if (data[0] % 2 == 0) {
        key_text(data + 1, size - 1);
    } else {
        received(data + 1, size - 1);
    }
    return 0;
}
