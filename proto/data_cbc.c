/* proto/data_cbc.c: CBC + HMAC for the data channel; the layout and the choice of libraries are
 * explained in the header. */
#include "proto/data_cbc.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <mbedtls/cipher.h>
#include <mbedtls/md.h>
#include <mbedtls/platform_util.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "proto/cursor.h"
#include "proto/errors.h"

struct cbc_info {
    enum data_cipher id;
    const char *evp_cbc, *evp_ecb;            /* OpenSSL names */
    mbedtls_cipher_type_t mbed_cbc, mbed_ecb; /* Mbed TLS types */
    unsigned key_bits;
};

static const struct cbc_info cbc_ciphers[] = {
    {DATA_CIPHER_AES_128_CBC, "AES-128-CBC", "AES-128-ECB", MBEDTLS_CIPHER_AES_128_CBC,
     MBEDTLS_CIPHER_AES_128_ECB, 128},
    {DATA_CIPHER_AES_192_CBC, "AES-192-CBC", "AES-192-ECB", MBEDTLS_CIPHER_AES_192_CBC,
     MBEDTLS_CIPHER_AES_192_ECB, 192},
    {DATA_CIPHER_AES_256_CBC, "AES-256-CBC", "AES-256-ECB", MBEDTLS_CIPHER_AES_256_CBC,
     MBEDTLS_CIPHER_AES_256_ECB, 256},
    {DATA_CIPHER_CAMELLIA_128_CBC, "CAMELLIA-128-CBC", "CAMELLIA-128-ECB",
     MBEDTLS_CIPHER_CAMELLIA_128_CBC, MBEDTLS_CIPHER_CAMELLIA_128_ECB, 128},
    {DATA_CIPHER_CAMELLIA_192_CBC, "CAMELLIA-192-CBC", "CAMELLIA-192-ECB",
     MBEDTLS_CIPHER_CAMELLIA_192_CBC, MBEDTLS_CIPHER_CAMELLIA_192_ECB, 192},
    {DATA_CIPHER_CAMELLIA_256_CBC, "CAMELLIA-256-CBC", "CAMELLIA-256-ECB",
     MBEDTLS_CIPHER_CAMELLIA_256_CBC, MBEDTLS_CIPHER_CAMELLIA_256_ECB, 256},
};

struct digest_info {
    enum data_digest id;
    const char *name;
    mbedtls_md_type_t md;
    size_t len;
};

static const struct digest_info digests[] = {
    {DATA_DIGEST_SHA1, "SHA1", MBEDTLS_MD_SHA1, 20},
    {DATA_DIGEST_SHA224, "SHA224", MBEDTLS_MD_SHA224, 28},
    {DATA_DIGEST_SHA256, "SHA256", MBEDTLS_MD_SHA256, 32},
    {DATA_DIGEST_SHA384, "SHA384", MBEDTLS_MD_SHA384, 48},
    {DATA_DIGEST_SHA512, "SHA512", MBEDTLS_MD_SHA512, 64},
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static const struct cbc_info *cbc_lookup(enum data_cipher c)
{
    for (size_t i = 0; i < N_OF(cbc_ciphers); i++) {
        if (cbc_ciphers[i].id == c) {
            return &cbc_ciphers[i];
        }
    }
    return NULL;
}

static const struct digest_info *digest_lookup(enum data_digest d)
{
    for (size_t i = 0; i < N_OF(digests); i++) {
        if (digests[i].id == d) {
            return &digests[i];
        }
    }
    return NULL;
}

int data_digest_from_name(const char *name, enum data_digest *out)
{
    for (size_t i = 0; name != NULL && i < N_OF(digests); i++) {
        if (strcasecmp(name, digests[i].name) == 0) {
            *out = digests[i].id;
            return 0;
        }
    }
    return -PE_UNSUPPORTED;
}

size_t data_digest_len(enum data_digest d)
{
    const struct digest_info *di = digest_lookup(d);

    return di != NULL ? di->len : 0;
}

const char *data_digest_name(enum data_digest d)
{
    const struct digest_info *di = digest_lookup(d);

    return di != NULL ? di->name : "none";
}

/* One OpenSSL context for name with key; ECB ones without padding. NULL on failure. */
static EVP_CIPHER_CTX *evp_new(const char *name, const uint8_t *key, bool is_enc, bool is_ecb)
{
    EVP_CIPHER *cipher = EVP_CIPHER_fetch(NULL, name, NULL);
    EVP_CIPHER_CTX *ctx = cipher != NULL ? EVP_CIPHER_CTX_new() : NULL;

    if (ctx != NULL && (EVP_CipherInit_ex2(ctx, cipher, key, NULL, is_enc ? 1 : 0, NULL) != 1 ||
                        EVP_CIPHER_CTX_get_block_size(ctx) != DATA_CBC_BLOCK_LEN ||
                        (!is_ecb && EVP_CIPHER_CTX_get_iv_length(ctx) != DATA_CBC_IV_LEN) ||
                        (is_ecb && EVP_CIPHER_CTX_set_padding(ctx, 0) != 1))) {
        EVP_CIPHER_CTX_free(ctx);
        ctx = NULL;
    }
    EVP_CIPHER_free(cipher); /* the context holds its own reference */
    return ctx;
}

/* One Mbed TLS context for type with key; CBC ones with PKCS#7 padding. NULL on failure. */
static mbedtls_cipher_context_t *mbed_new(mbedtls_cipher_type_t type, const uint8_t *key,
                                          unsigned key_bits, bool is_enc, bool is_ecb)
{
    const mbedtls_cipher_info_t *info = mbedtls_cipher_info_from_type(type);
    mbedtls_cipher_context_t *ctx = info != NULL ? calloc(1, sizeof(*ctx)) : NULL;

    if (ctx == NULL) {
        return NULL;
    }
    mbedtls_cipher_init(ctx);
    if (mbedtls_cipher_setup(ctx, info) != 0 ||
        mbedtls_cipher_setkey(ctx, key, (int)key_bits,
                              is_enc ? MBEDTLS_ENCRYPT : MBEDTLS_DECRYPT) != 0 ||
        mbedtls_cipher_get_block_size(ctx) != DATA_CBC_BLOCK_LEN ||
        (!is_ecb && mbedtls_cipher_set_padding_mode(ctx, MBEDTLS_PADDING_PKCS7) != 0)) {
        mbedtls_cipher_free(ctx); /* wipes the key schedule */
        free(ctx);
        return NULL;
    }
    return ctx;
}

static void cipher_free(enum data_aead_backend b, void *ctx)
{
    if (ctx == NULL) {
        return;
    }
    if (b == DATA_AEAD_OPENSSL) {
        EVP_CIPHER_CTX_free(ctx); /* cleanses the key schedule */
    } else {
        mbedtls_cipher_free(ctx);
        free(ctx);
    }
}

int data_cbc_init(struct data_cbc *c, enum data_aead_backend b, enum data_cipher c_id,
                  enum data_digest d, const uint8_t *cipher_key, const uint8_t *hmac_key,
                  bool is_seal)
{
    const struct cbc_info *ci = cbc_lookup(c_id);
    const struct digest_info *di = digest_lookup(d);
    mbedtls_md_context_t *md;

    mbedtls_platform_zeroize(c, sizeof(*c));
    if (ci == NULL || di == NULL || (b != DATA_AEAD_OPENSSL && b != DATA_AEAD_MBEDTLS)) {
        return -PE_UNSUPPORTED;
    }
    c->backend = b;
    c->cipher = c_id;
    c->digest = d;
    c->is_seal = is_seal;
    c->hmac_len = di->len;
    if (b == DATA_AEAD_OPENSSL) {
        c->ctx = evp_new(ci->evp_cbc, cipher_key, is_seal, false);
        c->iv_ctx = is_seal ? evp_new(ci->evp_ecb, cipher_key, true, true) : NULL;
    } else {
        c->ctx = mbed_new(ci->mbed_cbc, cipher_key, ci->key_bits, is_seal, false);
        c->iv_ctx = is_seal ? mbed_new(ci->mbed_ecb, cipher_key, ci->key_bits, true, true) : NULL;
    }
    md = calloc(1, sizeof(*md));
    if (md != NULL) {
        mbedtls_md_init(md);
        c->hmac = md;
    }
    if (c->ctx == NULL || (is_seal && c->iv_ctx == NULL) || md == NULL ||
        mbedtls_md_setup(md, mbedtls_md_info_from_type(di->md), 1) != 0 ||
        mbedtls_md_hmac_starts(md, hmac_key, di->len) != 0) {
        data_cbc_clear(c);
        return -PE_CRYPTO;
    }
    return 0;
}

void data_cbc_clear(struct data_cbc *c)
{
    cipher_free(c->backend, c->ctx);
    cipher_free(c->backend, c->iv_ctx);
    if (c->hmac != NULL) {
        mbedtls_md_free(c->hmac); /* wipes the keyed pads */
        free(c->hmac);
    }
    mbedtls_platform_zeroize(c, sizeof(*c));
}

static size_t padded_len(size_t plain_len)
{
    return (DATA_CBC_PACKET_ID_LEN + plain_len) / DATA_CBC_BLOCK_LEN * DATA_CBC_BLOCK_LEN +
           DATA_CBC_BLOCK_LEN;
}

size_t data_cbc_sealed_len(const struct data_cbc *c, size_t plain_len)
{
    return c->hmac_len + DATA_CBC_IV_LEN + padded_len(plain_len);
}

/* The IV of packet_id: one block, 12 bytes of 0xA5 then packet_id, through the cipher. */
static int make_iv(struct data_cbc *c, uint32_t packet_id, uint8_t iv[DATA_CBC_IV_LEN])
{
    uint8_t block[DATA_CBC_BLOCK_LEN];
    size_t n = 0;
    int n_evp = 0;

    memset(block, 0xA5, sizeof(block));
    store_be32(block + DATA_CBC_BLOCK_LEN - 4, packet_id);
    if (c->backend == DATA_AEAD_OPENSSL) {
        if (EVP_EncryptUpdate(c->iv_ctx, iv, &n_evp, block, DATA_CBC_BLOCK_LEN) != 1 ||
            n_evp != DATA_CBC_BLOCK_LEN) {
            return -PE_CRYPTO;
        }
        return 0;
    }
    if (mbedtls_cipher_update(c->iv_ctx, block, DATA_CBC_BLOCK_LEN, iv, &n) != 0 ||
        n != DATA_CBC_BLOCK_LEN) {
        return -PE_CRYPTO;
    }
    return 0;
}

/* CBC-encrypt pid || plain with iv into ct; *ct_len is what was written. */
static int cbc_encrypt(struct data_cbc *c, const uint8_t iv[DATA_CBC_IV_LEN], const uint8_t *pid,
                       const uint8_t *plain, size_t plain_len, uint8_t *ct, size_t *ct_len)
{
    size_t total = 0, n = 0;

    if (c->backend == DATA_AEAD_OPENSSL) {
        int a = 0, b = 0, f = 0;

        if (EVP_EncryptInit_ex2(c->ctx, NULL, NULL, iv, NULL) != 1 ||
            EVP_EncryptUpdate(c->ctx, ct, &a, pid, DATA_CBC_PACKET_ID_LEN) != 1 ||
            (plain_len > 0 && EVP_EncryptUpdate(c->ctx, ct + a, &b, plain, (int)plain_len) != 1) ||
            EVP_EncryptFinal_ex(c->ctx, ct + a + b, &f) != 1) {
            return -PE_CRYPTO;
        }
        *ct_len = (size_t)a + (size_t)b + (size_t)f;
        return 0;
    }
    if (mbedtls_cipher_set_iv(c->ctx, iv, DATA_CBC_IV_LEN) != 0 || mbedtls_cipher_reset(c->ctx) ||
        mbedtls_cipher_update(c->ctx, pid, DATA_CBC_PACKET_ID_LEN, ct, &n) != 0) {
        return -PE_CRYPTO;
    }
    total = n;
    if (plain_len > 0 && mbedtls_cipher_update(c->ctx, plain, plain_len, ct + total, &n) != 0) {
        return -PE_CRYPTO;
    }
    total += plain_len > 0 ? n : 0;
    if (mbedtls_cipher_finish(c->ctx, ct + total, &n) != 0) {
        return -PE_CRYPTO;
    }
    *ct_len = total + n;
    return 0;
}

/* HMAC over data[0..len) into mac (c->hmac_len bytes). */
static int hmac(struct data_cbc *c, const uint8_t *data, size_t len, uint8_t *mac)
{
    if (mbedtls_md_hmac_reset(c->hmac) != 0 || mbedtls_md_hmac_update(c->hmac, data, len) != 0 ||
        mbedtls_md_hmac_finish(c->hmac, mac) != 0) {
        return -PE_CRYPTO;
    }
    return 0;
}

int data_cbc_seal(struct data_cbc *c, uint32_t packet_id, const uint8_t *plain, size_t plain_len,
                  uint8_t *out, size_t out_cap, size_t *out_len)
{
    uint8_t pid[DATA_CBC_PACKET_ID_LEN];
    uint8_t *iv, *ct;
    size_t ct_len = 0;
    int err;

    *out_len = 0;
    if (c->ctx == NULL || !c->is_seal) {
        return -PE_STATE;
    }
    if (plain_len > (size_t)INT_MAX - 2 * DATA_CBC_BLOCK_LEN ||
        out_cap < data_cbc_sealed_len(c, plain_len)) {
        return -PE_NOSPACE;
    }
    iv = out + c->hmac_len;
    ct = iv + DATA_CBC_IV_LEN;
    store_be32(pid, packet_id);
    err = make_iv(c, packet_id, iv);
    err = err ? err : cbc_encrypt(c, iv, pid, plain, plain_len, ct, &ct_len);
    if (!err && ct_len != padded_len(plain_len)) {
        err = -PE_CRYPTO;
    }
    err = err ? err : hmac(c, iv, DATA_CBC_IV_LEN + ct_len, out);
    if (err) {
        return err;
    }
    *out_len = c->hmac_len + DATA_CBC_IV_LEN + ct_len;
    return 0;
}

/* CBC-decrypt ct into out (ct_len bytes of room) on OpenSSL; *n is the plaintext length. */
static int cbc_decrypt_openssl(struct data_cbc *c, const uint8_t *iv, const uint8_t *ct,
                               size_t ct_len, uint8_t *out, size_t *n)
{
    int a = 0, f = 0;

    if (EVP_DecryptInit_ex2(c->ctx, NULL, NULL, iv, NULL) != 1 ||
        EVP_DecryptUpdate(c->ctx, out, &a, ct, (int)ct_len) != 1) {
        return -PE_CRYPTO;
    }
    if (EVP_DecryptFinal_ex(c->ctx, out + a, &f) != 1) {
        return -PE_MALFORMED; /* bad padding */
    }
    *n = (size_t)a + (size_t)f;
    return 0;
}

/* The same on Mbed TLS. */
static int cbc_decrypt_mbedtls(struct data_cbc *c, const uint8_t *iv, const uint8_t *ct,
                               size_t ct_len, uint8_t *out, size_t *n)
{
    size_t a = 0, f = 0;
    int ret;

    if (mbedtls_cipher_set_iv(c->ctx, iv, DATA_CBC_IV_LEN) != 0 || mbedtls_cipher_reset(c->ctx) ||
        mbedtls_cipher_update(c->ctx, ct, ct_len, out, &a) != 0) {
        return -PE_CRYPTO;
    }
    ret = mbedtls_cipher_finish(c->ctx, out + a, &f);
    if (ret == MBEDTLS_ERR_CIPHER_INVALID_PADDING) {
        return -PE_MALFORMED;
    }
    if (ret != 0) {
        return -PE_CRYPTO;
    }
    *n = a + f;
    return 0;
}

int data_cbc_open(struct data_cbc *c, const uint8_t *in, size_t in_len, uint8_t *out,
                  size_t out_cap, size_t *out_len, uint32_t *packet_id)
{
    uint8_t mac[DATA_CBC_HMAC_MAX];
    const uint8_t *iv, *ct;
    size_t ct_len, n = 0;
    int err;

    *out_len = 0;
    if (c->ctx == NULL || c->is_seal) {
        return -PE_STATE;
    }
    if (in_len < c->hmac_len + DATA_CBC_IV_LEN + DATA_CBC_BLOCK_LEN) {
        return -PE_SHORT;
    }
    iv = in + c->hmac_len;
    ct = iv + DATA_CBC_IV_LEN;
    ct_len = in_len - c->hmac_len - DATA_CBC_IV_LEN;
    if (ct_len > out_cap || ct_len > (size_t)INT_MAX) {
        return -PE_NOSPACE;
    }
    err = hmac(c, iv, DATA_CBC_IV_LEN + ct_len, mac);
    if (err) {
        return err;
    }
    if (CRYPTO_memcmp(mac, in, c->hmac_len) != 0) {
        return -PE_AUTH;
    }
    if (ct_len % DATA_CBC_BLOCK_LEN != 0) {
        return -PE_MALFORMED;
    }
    err = c->backend == DATA_AEAD_OPENSSL ? cbc_decrypt_openssl(c, iv, ct, ct_len, out, &n)
                                          : cbc_decrypt_mbedtls(c, iv, ct, ct_len, out, &n);
    if (!err && n < DATA_CBC_PACKET_ID_LEN) {
        err = -PE_MALFORMED;
    }
    if (err) {
        mbedtls_platform_zeroize(out, ct_len);
        return err;
    }
    *packet_id = load_be32(out);
    memmove(out, out + DATA_CBC_PACKET_ID_LEN, n - DATA_CBC_PACKET_ID_LEN);
    *out_len = n - DATA_CBC_PACKET_ID_LEN;
    return 0;
}
