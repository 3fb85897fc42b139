/* proto/pk_external.c: a pk context whose signatures come from the management client; see the
 * header for how a handshake waits for one without holding a thread. */
#include "proto/pk_external.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/pk_internal.h>
#include <mbedtls/platform_util.h>

#include "proto/errors.h"

struct ext_key {
    const mbedtls_pk_context *pub; /* the certificate's key, borrowed */
    unsigned flags;
};

/* The session whose handshake step runs on this thread (pk_external_enter). */
static _Thread_local struct pk_ext_req *cur_req;
static _Thread_local const mbedtls_ssl_context *cur_ssl;

/* DigestInfo prefixes for PKCS#1 v1.5 signatures (RFC 8017 section 9.2, note 1). */
static const struct {
    mbedtls_md_type_t md;
    uint8_t len;
    uint8_t der[19];
} digest_info[] = {
    {MBEDTLS_MD_SHA1,
     15,
     {0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02, 0x1a, 0x05, 0x00, 0x04, 0x14}},
    {MBEDTLS_MD_SHA224,
     19,
     {0x30, 0x2d, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x04,
      0x05, 0x00, 0x04, 0x1c}},
    {MBEDTLS_MD_SHA256,
     19,
     {0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01,
      0x05, 0x00, 0x04, 0x20}},
    {MBEDTLS_MD_SHA384,
     19,
     {0x30, 0x41, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02,
      0x05, 0x00, 0x04, 0x30}},
    {MBEDTLS_MD_SHA512,
     19,
     {0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03,
      0x05, 0x00, 0x04, 0x40}},
};

static size_t ext_bitlen(const void *ctx)
{
    const struct ext_key *k = ctx;

    return mbedtls_pk_get_bitlen(k->pub);
}

static int ext_can_do_rsa(mbedtls_pk_type_t type)
{
    return mbedtls_pk_info_from_type(MBEDTLS_PK_RSA)->can_do(type);
}

static int ext_can_do_ec(mbedtls_pk_type_t type)
{
    return mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY)->can_do(type);
}

static int ext_verify(void *ctx, mbedtls_md_type_t md_alg, const unsigned char *hash,
                      size_t hash_len, const unsigned char *sig, size_t sig_len)
{
    struct ext_key *k = ctx;

    return mbedtls_pk_verify((mbedtls_pk_context *)(uintptr_t)k->pub, md_alg, hash, hash_len, sig,
                             sig_len);
}

static bool same_hash(const struct pk_ext_req *r, mbedtls_md_type_t md, const unsigned char *hash,
                      size_t hash_len)
{
    return r->md == md && r->hash_len == hash_len && memcmp(r->hash, hash, hash_len) == 0;
}

/* Mbed TLS's sign call while it builds the ServerKeyExchange: record what is wanted, or hand
 * over what came. */
static int ext_sign(void *ctx, mbedtls_md_type_t md_alg, const unsigned char *hash, size_t hash_len,
                    unsigned char *sig, size_t *sig_len,
                    int (*f_rng)(void *, unsigned char *, size_t), void *p_rng)
{
    struct pk_ext_req *r = cur_req;

    (void)ctx;
    (void)f_rng;
    (void)p_rng;
    if (!r || hash_len == 0 || hash_len > sizeof(r->hash)) {
        return MBEDTLS_ERR_PK_BAD_INPUT_DATA;
    }
    switch (r->state) {
    case PK_EXT_NONE:
        r->md = md_alg;
        memcpy(r->hash, hash, hash_len);
        r->hash_len = hash_len;
        r->state = PK_EXT_WANTED;
        return MBEDTLS_ERR_SSL_ASYNC_IN_PROGRESS;
    case PK_EXT_WANTED:
        return same_hash(r, md_alg, hash, hash_len) ? MBEDTLS_ERR_SSL_ASYNC_IN_PROGRESS
                                                    : MBEDTLS_ERR_PK_BAD_INPUT_DATA;
    case PK_EXT_READY:
        if (!same_hash(r, md_alg, hash, hash_len)) {
            return MBEDTLS_ERR_PK_BAD_INPUT_DATA; /* the replay did not rebuild the message */
        }
        memcpy(sig, r->sig, r->sig_len);
        *sig_len = r->sig_len;
        r->state = PK_EXT_DONE;
        return 0;
    default:
        return MBEDTLS_ERR_PK_BAD_INPUT_DATA;
    }
}

static void *ext_alloc(void)
{
    return calloc(1, sizeof(struct ext_key));
}

static void ext_free(void *ctx)
{
    free(ctx);
}

static const mbedtls_pk_info_t ext_rsa_info = {
    .type = MBEDTLS_PK_RSA,
    .name = "RSA",
    .get_bitlen = ext_bitlen,
    .can_do = ext_can_do_rsa,
    .verify_func = ext_verify,
    .sign_func = ext_sign,
    .ctx_alloc_func = ext_alloc,
    .ctx_free_func = ext_free,
};

static const mbedtls_pk_info_t ext_ec_info = {
    .type = MBEDTLS_PK_ECKEY,
    .name = "EC",
    .get_bitlen = ext_bitlen,
    .can_do = ext_can_do_ec,
    .verify_func = ext_verify,
    .sign_func = ext_sign,
    .ctx_alloc_func = ext_alloc,
    .ctx_free_func = ext_free,
};

int pk_external_setup(mbedtls_pk_context *pk, const mbedtls_pk_context *pub, unsigned flags)
{
    const mbedtls_pk_info_t *info;
    int ret;

    switch (mbedtls_pk_get_type(pub)) {
    case MBEDTLS_PK_RSA:
        info = &ext_rsa_info;
        break;
    case MBEDTLS_PK_ECKEY:
        info = &ext_ec_info;
        break;
    default:
        return MBEDTLS_ERR_PK_FEATURE_UNAVAILABLE;
    }
    mbedtls_pk_free(pk);
    mbedtls_pk_init(pk);
    ret = mbedtls_pk_setup(pk, info);
    if (ret) {
        return ret;
    }
    ((struct ext_key *)pk->pk_ctx)->pub = pub;
    ((struct ext_key *)pk->pk_ctx)->flags =
        (flags & (PK_EXT_PKCS1 | PK_EXT_NOPADDING)) ? flags : flags | PK_EXT_PKCS1;
    return 0;
}

bool pk_external_is(const mbedtls_pk_context *pk)
{
    return pk->pk_info == &ext_rsa_info || pk->pk_info == &ext_ec_info;
}

int pk_external_rng(void *ctx, unsigned char *out, size_t len)
{
    const struct pk_ext_rng *rng = ctx;
    struct pk_ext_req *r = cur_req;
    int ret;

    if (!r || !cur_ssl || cur_ssl->state != MBEDTLS_SSL_SERVER_KEY_EXCHANGE ||
        r->state == PK_EXT_DONE) {
        return rng->f_rng(rng->p_rng, out, len);
    }
    if (r->is_replaying) {
        if (len > r->rnd_len - r->rnd_off) {
            return MBEDTLS_ERR_SSL_INTERNAL_ERROR; /* not the draws of the first pass */
        }
        memcpy(out, r->rnd + r->rnd_off, len);
        r->rnd_off += len;
        return 0;
    }
    if (len > sizeof(r->rnd) - r->rnd_len) {
        return MBEDTLS_ERR_SSL_INTERNAL_ERROR;
    }
    ret = rng->f_rng(rng->p_rng, out, len);
    if (ret == 0) {
        memcpy(r->rnd + r->rnd_len, out, len);
        r->rnd_len += len;
    }
    return ret;
}

void pk_external_enter(struct pk_ext_req *r, const mbedtls_ssl_context *ssl)
{
    cur_req = r;
    cur_ssl = ssl;
    if (r && r->state != PK_EXT_NONE) {
        r->is_replaying = true; /* the random bytes of the first pass, from the start */
        r->rnd_off = 0;
    }
}

void pk_external_leave(void)
{
    cur_req = NULL;
    cur_ssl = NULL;
}

static const struct ext_key *ext_of(const mbedtls_pk_context *pk)
{
    return pk_external_is(pk) ? pk->pk_ctx : NULL;
}

int pk_external_request(const mbedtls_pk_context *pk, struct pk_ext_req *r, uint8_t *data,
                        size_t cap, size_t *len, char *alg, size_t alg_cap)
{
    const struct ext_key *k = ext_of(pk);
    size_t di = sizeof(digest_info) / sizeof(digest_info[0]), n, k_len;

    if (!k || r->state != PK_EXT_WANTED) {
        return -PE_STATE;
    }
    if (mbedtls_pk_get_type(pk) == MBEDTLS_PK_ECKEY) {
        if (r->hash_len > cap) {
            return -PE_NOSPACE;
        }
        memcpy(data, r->hash, r->hash_len);
        *len = r->hash_len;
        snprintf(alg, alg_cap, "ECDSA");
        r->is_asked = true;
        return 0;
    }
    for (size_t i = 0; i < sizeof(digest_info) / sizeof(digest_info[0]); i++) {
        if (digest_info[i].md == r->md) {
            di = i;
        }
    }
    if (di == sizeof(digest_info) / sizeof(digest_info[0])) {
        return -PE_UNSUPPORTED;
    }
    n = digest_info[di].len + r->hash_len;
    if (k->flags & PK_EXT_PKCS1) {
        if (n > cap) {
            return -PE_NOSPACE;
        }
        memcpy(data, digest_info[di].der, digest_info[di].len);
        memcpy(data + digest_info[di].len, r->hash, r->hash_len);
        *len = n;
        snprintf(alg, alg_cap, "RSA_PKCS1_PADDING");
    } else {
        /* EMSA-PKCS1-v1_5 (RFC 8017 9.2): 00 01 FF.. 00 DigestInfo, as long as the modulus */
        k_len = mbedtls_pk_get_len(k->pub);
        if (k_len > cap || k_len < n + 11) {
            return -PE_NOSPACE;
        }
        data[0] = 0x00;
        data[1] = 0x01;
        memset(data + 2, 0xff, k_len - n - 3);
        data[k_len - n - 1] = 0x00;
        memcpy(data + k_len - n, digest_info[di].der, digest_info[di].len);
        memcpy(data + k_len - r->hash_len, r->hash, r->hash_len);
        *len = k_len;
        snprintf(alg, alg_cap, "RSA_NO_PADDING");
    }
    r->is_asked = true;
    return 0;
}

int pk_external_answer(const mbedtls_pk_context *pk, struct pk_ext_req *r, const uint8_t *sig,
                       size_t sig_len)
{
    const struct ext_key *k = ext_of(pk);

    if (!k || r->state != PK_EXT_WANTED) {
        return -PE_STATE;
    }
    if (sig_len == 0 || sig_len > sizeof(r->sig) ||
        mbedtls_pk_verify((mbedtls_pk_context *)(uintptr_t)k->pub, r->md, r->hash, r->hash_len, sig,
                          sig_len) != 0) {
        r->state = PK_EXT_FAILED;
        return -PE_AUTH;
    }
    memcpy(r->sig, sig, sig_len);
    r->sig_len = sig_len;
    r->state = PK_EXT_READY;
    return 0;
}

void pk_external_fail(struct pk_ext_req *r)
{
    if (r->state == PK_EXT_WANTED || r->state == PK_EXT_READY) {
        r->state = PK_EXT_FAILED;
    }
}
