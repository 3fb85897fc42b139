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
 * With the top bit of the cipher byte set, the same input drives the CBC + HMAC data channel
 * (proto/data_cbc.h) instead: the low bits pick the cipher (AES or CAMELLIA, 128/192/256), the
 * first nonce byte the HMAC digest, the next four the packet_id; the 32 key bytes are the cipher
 * key, and twice over the HMAC key; the AAD length byte is unused. Checked: both backends seal
 * byte-identical packets (HMAC || IV || ciphertext), each opens the other's back to the
 * plaintext and packet_id, one flipped bit anywhere makes both refuse with -PE_AUTH, and the raw
 * plaintext fed to the opener as a packet is refused, never read past its end.
 *
 * Built as a libFuzzer target by scripts/fuzz.sh (clang); tests/fuzz/replay.c runs the same
 * function over the committed corpus in every ctest run.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/cursor.h"
#include "proto/data_aead.h"
#include "proto/data_cbc.h"
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

static void fuzz_cbc(const uint8_t *data, size_t size)
{
    static const enum data_aead_backend backends[2] = {DATA_AEAD_OPENSSL, DATA_AEAD_MBEDTLS};
    static const enum data_cipher ciphers[6] = {
        DATA_CIPHER_AES_128_CBC,      DATA_CIPHER_AES_192_CBC,      DATA_CIPHER_AES_256_CBC,
        DATA_CIPHER_CAMELLIA_128_CBC, DATA_CIPHER_CAMELLIA_192_CBC, DATA_CIPHER_CAMELLIA_256_CBC,
    };
    const uint8_t *key = data + 1, *nonce = key + 32, *plain = data + HEADER_LEN;
    size_t text_len = size - HEADER_LEN, cap = text_len + DATA_CBC_OVERHEAD_MAX, len[2] = {0, 0};
    size_t flip = (size_t)nonce[DATA_AEAD_NONCE_LEN + 1] << 8 | nonce[DATA_AEAD_NONCE_LEN + 2];
    enum data_cipher c = ciphers[(data[0] & 0x7F) % 6];
    enum data_digest d = (enum data_digest)(DATA_DIGEST_SHA1 + nonce[0] % 5);
    uint32_t packet_id = load_be32(nonce + 1), got_id = 0;
    struct data_cbc seal[2], open[2];
    uint8_t hmac_key[64], *pkt[2], *out;
    size_t out_len = 0;
    int err;

    memcpy(hmac_key, key, 32);
    memcpy(hmac_key + 32, key, 32);
    memset(seal, 0, sizeof(seal));
    memset(open, 0, sizeof(open));
    out = malloc(cap);
    CHECK(out != NULL);
    for (int b = 0; b < 2; b++) {
        pkt[b] = malloc(cap);
        CHECK(pkt[b] != NULL);
        CHECK(data_cbc_init(&seal[b], backends[b], c, d, key, hmac_key, true) == 0);
        CHECK(data_cbc_init(&open[b], backends[b], c, d, key, hmac_key, false) == 0);
        CHECK(data_cbc_seal(&seal[b], packet_id, plain, text_len, pkt[b], cap, &len[b]) == 0);
        CHECK(len[b] == data_cbc_sealed_len(&seal[b], text_len));
    }
    CHECK(len[0] == len[1] && memcmp(pkt[0], pkt[1], len[0]) == 0);
    for (int b = 0; b < 2; b++) {
        CHECK(data_cbc_open(&open[b], pkt[1 - b], len[1 - b], out, cap, &out_len, &got_id) == 0);
        CHECK(out_len == text_len && got_id == packet_id);
        CHECK(memcmp(out, plain, text_len) == 0);
        pkt[1 - b][flip % len[1 - b]] ^= (uint8_t)(1u << (flip % 8));
        CHECK(data_cbc_open(&open[b], pkt[1 - b], len[1 - b], out, cap, &out_len, &got_id) ==
              -PE_AUTH);
        pkt[1 - b][flip % len[1 - b]] ^= (uint8_t)(1u << (flip % 8));
    }
    /* hostile bytes as a packet: no HMAC can verify by chance */
    err = data_cbc_open(&open[0], plain, text_len, out, cap, &out_len, &got_id);
    CHECK(err == -PE_AUTH || err == -PE_SHORT);
    for (int b = 0; b < 2; b++) {
        data_cbc_clear(&seal[b]);
        data_cbc_clear(&open[b]);
        free(pkt[b]);
    }
    free(out);
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
    if (data[0] & 0x80) {
        fuzz_cbc(data, size);
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
