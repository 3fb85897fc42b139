/* tests/fuzz/fuzz_aead.c: the data channel's AEAD on its two backends, differentially, under a
 * coverage-guided fuzzer.
 *
 * Input: a cipher byte (AES-128-GCM, AES-256-GCM, CHACHA20-POLY1305), a 32-byte key, a 12-byte
 * nonce, an AAD length byte, a byte naming a bit to flip, then the AAD and the plaintext (any
 * length, 0 included). Checked, beyond "does not crash": OpenSSL and Mbed TLS seal to the same
 * ciphertext and tag (proto/data_aead.h promises byte-identical packets), each opens what the
 * other sealed, in place as well as into another buffer, back to the plaintext; and with one bit
 * flipped in the ciphertext, tag or AAD both refuse with -PE_AUTH and leave the output wiped
 * (no unverified plaintext gets out).
 *
 * Built as a libFuzzer target by scripts/fuzz.sh (clang); tests/fuzz/replay.c runs the same
 * function over the committed corpus in every ctest run.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/data_aead.h"
#include "proto/errors.h"
#include "tests/fuzz/fuzz_check.h"

#define HEADER_LEN (1 + 32 + DATA_AEAD_NONCE_LEN + 1 + 2)

static bool is_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i]) {
            return false;
        }
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const enum data_aead_backend backends[2] = {DATA_AEAD_OPENSSL, DATA_AEAD_MBEDTLS};
    struct data_aead seal[2], open[2];
    enum data_cipher c;
    const uint8_t *key, *nonce, *aad, *plain;
    size_t aad_len, text_len, flip;
    uint8_t *ct[2], *out, tag[2][DATA_AEAD_TAG_LEN];

    if (size < HEADER_LEN) {
        return 0;
    }
    c = (enum data_cipher)(DATA_CIPHER_AES_128_GCM + data[0] % 3);
    key = data + 1;
    nonce = key + 32;
    aad_len = nonce[DATA_AEAD_NONCE_LEN];
    flip = (size_t)nonce[DATA_AEAD_NONCE_LEN + 1] << 8 | nonce[DATA_AEAD_NONCE_LEN + 2];
    aad = data + HEADER_LEN;
    if (aad_len > size - HEADER_LEN) {
        aad_len = size - HEADER_LEN;
    }
    plain = aad + aad_len;
    text_len = size - HEADER_LEN - aad_len;

    memset(seal, 0, sizeof(seal));
    memset(open, 0, sizeof(open));
    out = malloc(text_len + 1);
    CHECK(out != NULL);
    for (int b = 0; b < 2; b++) {
        ct[b] = malloc(text_len + 1);
        CHECK(ct[b] != NULL);
        CHECK(data_aead_init(&seal[b], backends[b], c, key, true) == 0);
        CHECK(data_aead_init(&open[b], backends[b], c, key, false) == 0);
        CHECK(data_aead_seal(&seal[b], nonce, aad, aad_len, plain, text_len, ct[b], tag[b]) == 0);
    }
    CHECK(memcmp(ct[0], ct[1], text_len) == 0);
    CHECK(memcmp(tag[0], tag[1], DATA_AEAD_TAG_LEN) == 0);

    for (int b = 0; b < 2; b++) {
        uint8_t *aad_copy = malloc(aad_len + 1), bad_tag[DATA_AEAD_TAG_LEN];
        size_t where = text_len + DATA_AEAD_TAG_LEN + aad_len
                           ? flip % (text_len + DATA_AEAD_TAG_LEN + aad_len)
                           : 0;

        CHECK(aad_copy != NULL);
        /* the other backend's packet, into another buffer, then in place */
        CHECK(data_aead_open(&open[b], nonce, aad, aad_len, ct[1 - b], text_len, tag[1 - b], out) ==
              0);
        CHECK(memcmp(out, plain, text_len) == 0);
        memcpy(out, ct[1 - b], text_len);
        CHECK(data_aead_open(&open[b], nonce, aad, aad_len, out, text_len, tag[1 - b], out) == 0);
        CHECK(memcmp(out, plain, text_len) == 0);

        /* one bit flipped anywhere the tag covers */
        memcpy(out, ct[b], text_len);
        memcpy(bad_tag, tag[b], DATA_AEAD_TAG_LEN);
        memcpy(aad_copy, aad, aad_len);
        if (where < text_len) {
            out[where] ^= (uint8_t)(1u << (flip % 8));
        } else if (where < text_len + DATA_AEAD_TAG_LEN) {
            bad_tag[where - text_len] ^= (uint8_t)(1u << (flip % 8));
        } else {
            aad_copy[where - text_len - DATA_AEAD_TAG_LEN] ^= (uint8_t)(1u << (flip % 8));
        }
        CHECK(data_aead_open(&open[b], nonce, aad_copy, aad_len, out, text_len, bad_tag, out) ==
              -PE_AUTH);
        CHECK(is_zero(out, text_len));
        free(aad_copy);
    }
    for (int b = 0; b < 2; b++) {
        data_aead_clear(&seal[b]);
        data_aead_clear(&open[b]);
        free(ct[b]);
    }
    free(out);
    return 0;
}
