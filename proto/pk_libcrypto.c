/* proto/pk_libcrypto.c: Mbed TLS pk contexts whose sign and verify run in OpenSSL's libcrypto.
 *
 * A wrapped context is a struct pk_lc: Mbed TLS's own key (mbedtls_rsa_context or
 * mbedtls_ecp_keypair, a copy of what the parser made) at offset 0, as mbedtls_pk_rsa() and
 * mbedtls_pk_ec() expect, then the same key as an EVP_PKEY. Its pk_info reports the type and
 * name of Mbed TLS's RSA and EC keys and forwards bit length, can_do and debug output to Mbed
 * TLS's own functions on the embedded key, so nothing but the arithmetic changes.
 *
 * Verification: a signature libcrypto accepts is good (libcrypto's DER and PKCS#1 v1.5 checks
 * are at least as strict as Mbed TLS's); one it refuses is handed to Mbed TLS's own verify, whose
 * verdict and error code stand. A bad signature therefore fails exactly as before, with the same
 * code, at the cost it had before; only good signatures get faster. */
#include "proto/pk_libcrypto.h"

#include <stdlib.h>
#include <string.h>

#include <mbedtls/ecp.h>
#include <mbedtls/pk_internal.h>
#include <mbedtls/platform_util.h>
#include <mbedtls/rsa.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

/* The largest private key DER we hand over (RSA 8192 needs under 5 KiB). */
#define PK_DER_MAX 8192

struct pk_lc {
    union {
        mbedtls_rsa_context rsa;
        mbedtls_ecp_keypair ec;
    } k; /* first: Mbed TLS casts pk_ctx to these */
    EVP_PKEY *evp;
};

static const mbedtls_pk_info_t *base_rsa(void)
{
    return mbedtls_pk_info_from_type(MBEDTLS_PK_RSA);
}

static const mbedtls_pk_info_t *base_ec(void)
{
    return mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY);
}

static const EVP_MD *md_of(mbedtls_md_type_t md)
{
    switch (md) {
    case MBEDTLS_MD_SHA1:
        return EVP_sha1();
    case MBEDTLS_MD_SHA224:
        return EVP_sha224();
    case MBEDTLS_MD_SHA256:
        return EVP_sha256();
    case MBEDTLS_MD_SHA384:
        return EVP_sha384();
    case MBEDTLS_MD_SHA512:
        return EVP_sha512();
    default:
        return NULL; /* MD5, RIPEMD-160, none: Mbed TLS's own code */
    }
}

/* A fresh EVP_PKEY_CTX on k for verify (is_sign false) or sign, RSA with PKCS#1 v1.5 and md.
 * NULL when libcrypto cannot set it up (the caller then uses Mbed TLS). */
static EVP_PKEY_CTX *op_ctx(const struct pk_lc *k, bool is_sign, const EVP_MD *rsa_md)
{
    EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new(k->evp, NULL);
    bool ok = pctx != NULL;

    ok = ok && (is_sign ? EVP_PKEY_sign_init(pctx) : EVP_PKEY_verify_init(pctx)) == 1;
    if (ok && rsa_md) {
        ok = EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) == 1 &&
             EVP_PKEY_CTX_set_signature_md(pctx, rsa_md) == 1;
    }
    if (!ok) {
        EVP_PKEY_CTX_free(pctx);
        ERR_clear_error();
        return NULL;
    }
    return pctx;
}

/* libcrypto's verdict: true when sig (sig_len bytes) is a good signature of hash. */
static bool lc_verify(const struct pk_lc *k, const EVP_MD *rsa_md, const unsigned char *hash,
                      size_t hash_len, const unsigned char *sig, size_t sig_len)
{
    EVP_PKEY_CTX *pctx = op_ctx(k, false, rsa_md);
    bool ok;

    if (!pctx) {
        return false;
    }
    ok = EVP_PKEY_verify(pctx, sig, sig_len, hash, hash_len) == 1;
    EVP_PKEY_CTX_free(pctx);
    ERR_clear_error(); /* a refusal queues errors; this thread's other libcrypto users must not
                          see them */
    return ok;
}

static int lc_sign(const struct pk_lc *k, const EVP_MD *rsa_md, const unsigned char *hash,
                   size_t hash_len, unsigned char *sig, size_t *sig_len)
{
    EVP_PKEY_CTX *pctx = op_ctx(k, true, rsa_md);
    size_t len = (size_t)EVP_PKEY_get_size(k->evp);
    bool ok;

    if (!pctx) {
        return -1;
    }
    ok = EVP_PKEY_sign(pctx, sig, &len, hash, hash_len) == 1;
    EVP_PKEY_CTX_free(pctx);
    if (!ok) {
        ERR_clear_error();
        return -1;
    }
    *sig_len = len;
    return 0;
}

/* As Mbed TLS's rsa_verify_wrap (pk_wrap.c): too short fails, a good signature followed by more
 * bytes is MBEDTLS_ERR_PK_SIG_LEN_MISMATCH. */
static int rsa_verify(void *ctx, mbedtls_md_type_t md_alg, const unsigned char *hash,
                      size_t hash_len, const unsigned char *sig, size_t sig_len)
{
    struct pk_lc *k = ctx;
    size_t rsa_len = mbedtls_rsa_get_len(&k->k.rsa);
    const EVP_MD *md = md_of(md_alg);

    if (md && k->k.rsa.padding == MBEDTLS_RSA_PKCS_V15 && sig_len >= rsa_len &&
        hash_len == (size_t)EVP_MD_get_size(md) && lc_verify(k, md, hash, hash_len, sig, rsa_len)) {
        return sig_len > rsa_len ? MBEDTLS_ERR_PK_SIG_LEN_MISMATCH : 0;
    }
    return base_rsa()->verify_func(ctx, md_alg, hash, hash_len, sig, sig_len);
}

static int rsa_sign(void *ctx, mbedtls_md_type_t md_alg, const unsigned char *hash, size_t hash_len,
                    unsigned char *sig, size_t *sig_len,
                    int (*f_rng)(void *, unsigned char *, size_t), void *p_rng)
{
    struct pk_lc *k = ctx;
    const EVP_MD *md = md_of(md_alg);

    if (md && k->k.rsa.padding == MBEDTLS_RSA_PKCS_V15 && hash_len == (size_t)EVP_MD_get_size(md) &&
        lc_sign(k, md, hash, hash_len, sig, sig_len) == 0) {
        return 0;
    }
    return base_rsa()->sign_func(ctx, md_alg, hash, hash_len, sig, sig_len, f_rng, p_rng);
}

/* An exact DER ECDSA-Sig-Value libcrypto accepts is one Mbed TLS's ecdsa_verify_wrap accepts
 * with 0 too (trailing bytes make libcrypto refuse, and then Mbed TLS names them). */
static int ec_verify(void *ctx, mbedtls_md_type_t md_alg, const unsigned char *hash,
                     size_t hash_len, const unsigned char *sig, size_t sig_len)
{
    struct pk_lc *k = ctx;

    if (lc_verify(k, NULL, hash, hash_len, sig, sig_len)) {
        return 0;
    }
    return base_ec()->verify_func(ctx, md_alg, hash, hash_len, sig, sig_len);
}

static int ec_sign(void *ctx, mbedtls_md_type_t md_alg, const unsigned char *hash, size_t hash_len,
                   unsigned char *sig, size_t *sig_len,
                   int (*f_rng)(void *, unsigned char *, size_t), void *p_rng)
{
    struct pk_lc *k = ctx;

    if (lc_sign(k, NULL, hash, hash_len, sig, sig_len) == 0) {
        return 0;
    }
    return base_ec()->sign_func(ctx, md_alg, hash, hash_len, sig, sig_len, f_rng, p_rng);
}

static size_t rsa_bitlen(const void *ctx)
{
    return base_rsa()->get_bitlen(ctx);
}

static size_t ec_bitlen(const void *ctx)
{
    return base_ec()->get_bitlen(ctx);
}

static int rsa_can_do(mbedtls_pk_type_t type)
{
    return base_rsa()->can_do(type);
}

static int ec_can_do(mbedtls_pk_type_t type)
{
    return base_ec()->can_do(type);
}

static void rsa_debug(const void *ctx, mbedtls_pk_debug_item *items)
{
    base_rsa()->debug_func(ctx, items);
}

static void ec_debug(const void *ctx, mbedtls_pk_debug_item *items)
{
    base_ec()->debug_func(ctx, items);
}

static void *rsa_alloc(void)
{
    struct pk_lc *k = calloc(1, sizeof(*k));

    if (k) {
        mbedtls_rsa_init(&k->k.rsa, MBEDTLS_RSA_PKCS_V15, 0);
    }
    return k;
}

static void *ec_alloc(void)
{
    struct pk_lc *k = calloc(1, sizeof(*k));

    if (k) {
        mbedtls_ecp_keypair_init(&k->k.ec);
    }
    return k;
}

static void rsa_free(void *ctx)
{
    struct pk_lc *k = ctx;

    mbedtls_rsa_free(&k->k.rsa);
    EVP_PKEY_free(k->evp);
    free(k);
}

static void ec_free(void *ctx)
{
    struct pk_lc *k = ctx;

    mbedtls_ecp_keypair_free(&k->k.ec);
    EVP_PKEY_free(k->evp);
    free(k);
}

/* Encryption, decryption and pair checks are left out (NULL: Mbed TLS answers "type mismatch"):
 * the TLS 1.2 suites ovpnd offers only sign and verify, and pair checks run on unwrapped keys. */
static const mbedtls_pk_info_t lc_rsa_info = {
    .type = MBEDTLS_PK_RSA,
    .name = "RSA",
    .get_bitlen = rsa_bitlen,
    .can_do = rsa_can_do,
    .verify_func = rsa_verify,
    .sign_func = rsa_sign,
    .ctx_alloc_func = rsa_alloc,
    .ctx_free_func = rsa_free,
    .debug_func = rsa_debug,
};

static const mbedtls_pk_info_t lc_ec_info = {
    .type = MBEDTLS_PK_ECKEY,
    .name = "EC",
    .get_bitlen = ec_bitlen,
    .can_do = ec_can_do,
    .verify_func = ec_verify,
    .sign_func = ec_sign,
    .ctx_alloc_func = ec_alloc,
    .ctx_free_func = ec_free,
    .debug_func = ec_debug,
};

bool pk_libcrypto_is_wrapped(const mbedtls_pk_context *pk)
{
    return pk->pk_info == &lc_rsa_info || pk->pk_info == &lc_ec_info;
}

/* pk as an EVP_PKEY: its private key (DER RSAPrivateKey or SEC1 ECPrivateKey, as Mbed TLS
 * writes them), or its public key from spki (or written from pk). NULL on failure. */
static EVP_PKEY *to_evp(mbedtls_pk_context *pk, bool is_private, const unsigned char *spki,
                        size_t spki_len)
{
    unsigned char *buf = NULL;
    const unsigned char *p;
    EVP_PKEY *evp = NULL;
    int n;

    if (!is_private && spki) {
        p = spki;
        evp = d2i_PUBKEY(NULL, &p, (long)spki_len);
        ERR_clear_error();
        return evp;
    }
    buf = malloc(PK_DER_MAX);
    if (!buf) {
        return NULL;
    }
    n = is_private ? mbedtls_pk_write_key_der(pk, buf, PK_DER_MAX)
                   : mbedtls_pk_write_pubkey_der(pk, buf, PK_DER_MAX);
    if (n > 0) {
        /* Mbed TLS writes at the end of the buffer */
        p = buf + PK_DER_MAX - n;
        evp = is_private ? d2i_PrivateKey(mbedtls_pk_get_type(pk) == MBEDTLS_PK_RSA ? EVP_PKEY_RSA
                                                                                    : EVP_PKEY_EC,
                                          NULL, &p, n)
                         : d2i_PUBKEY(NULL, &p, n);
        ERR_clear_error();
    }
    mbedtls_platform_zeroize(buf, PK_DER_MAX);
    free(buf);
    return evp;
}

static int copy_key(mbedtls_pk_type_t type, struct pk_lc *dst, mbedtls_pk_context *src)
{
    const mbedtls_ecp_keypair *ec;
    int ret;

    if (type == MBEDTLS_PK_RSA) {
        return mbedtls_rsa_copy(&dst->k.rsa, mbedtls_pk_rsa(*src));
    }
    ec = mbedtls_pk_ec(*src);
    ret = mbedtls_ecp_group_copy(&dst->k.ec.grp, &ec->grp);
    if (ret == 0) {
        ret = mbedtls_mpi_copy(&dst->k.ec.d, &ec->d);
    }
    if (ret == 0) {
        ret = mbedtls_ecp_copy(&dst->k.ec.Q, &ec->Q);
    }
    return ret;
}

int pk_libcrypto_wrap(mbedtls_pk_context *pk, bool is_private, const unsigned char *spki,
                      size_t spki_len)
{
    mbedtls_pk_type_t type = mbedtls_pk_get_type(pk);
    const mbedtls_pk_info_t *info;
    mbedtls_pk_context fresh;
    EVP_PKEY *evp;
    int ret;

    if (pk_libcrypto_is_wrapped(pk)) {
        return 0;
    }
    if (type == MBEDTLS_PK_RSA) {
        info = &lc_rsa_info;
    } else if (type == MBEDTLS_PK_ECKEY) {
        info = &lc_ec_info;
    } else {
        return 0;
    }
    evp = to_evp(pk, is_private, spki, spki_len);
    if (!evp) {
        return 0; /* a curve libcrypto lacks, say: Mbed TLS keeps it */
    }
    mbedtls_pk_init(&fresh);
    ret = mbedtls_pk_setup(&fresh, info);
    if (ret) {
        EVP_PKEY_free(evp);
        return ret;
    }
    ret = copy_key(type, fresh.pk_ctx, pk);
    if (ret) {
        EVP_PKEY_free(evp);
        mbedtls_pk_free(&fresh);
        return ret;
    }
    ((struct pk_lc *)fresh.pk_ctx)->evp = evp;
    mbedtls_pk_free(pk);
    *pk = fresh;
    return 0;
}

size_t pk_libcrypto_wrap_chain(mbedtls_x509_crt *chain)
{
    size_t n = 0;

    for (mbedtls_x509_crt *crt = chain; crt && crt->raw.p; crt = crt->next) {
        if (pk_libcrypto_wrap(&crt->pk, false, crt->pk_raw.p, crt->pk_raw.len) == 0 &&
            pk_libcrypto_is_wrapped(&crt->pk)) {
            n++;
        }
    }
    return n;
}
