/* proto/dh_params.c: X9.42 DH parameters rewritten as PKCS #3 (proto/dh_params.h). */
#include "proto/dh_params.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>

#include "proto/errors.h"

/* The PKCS #3 ("DH") key of the group p, g: NULL when libcrypto refuses it. */
static EVP_PKEY *pkcs3_group(const BIGNUM *p, const BIGNUM *g)
{
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "DH", NULL);
    EVP_PKEY *dh = NULL;

    if (bld && ctx && OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_FFC_P, p) == 1 &&
        OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_FFC_G, g) == 1 &&
        (params = OSSL_PARAM_BLD_to_param(bld)) != NULL && EVP_PKEY_fromdata_init(ctx) == 1 &&
        EVP_PKEY_fromdata(ctx, &dh, EVP_PKEY_KEY_PARAMETERS, params) != 1) {
        dh = NULL;
    }
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    EVP_PKEY_CTX_free(ctx);
    return dh;
}

int dh_params_x942_to_pkcs3(const char *text, size_t len, char **out, size_t *out_len)
{
    BIO *in = NULL, *mem = NULL;
    EVP_PKEY *x942 = NULL, *dh = NULL;
    BIGNUM *p = NULL, *g = NULL;
    char *pem;
    long n;
    int ret = -PE_CRYPTO;

    *out = NULL;
    *out_len = 0;
    if (len > INT_MAX || (in = BIO_new_mem_buf(text, (int)len)) == NULL) {
        return -PE_CRYPTO;
    }
    x942 = PEM_read_bio_Parameters(in, NULL);
    if (x942 == NULL || EVP_PKEY_get_base_id(x942) != EVP_PKEY_DHX) {
        ret = -PE_MALFORMED;
        goto out;
    }
    if (EVP_PKEY_get_bn_param(x942, OSSL_PKEY_PARAM_FFC_P, &p) != 1 ||
        EVP_PKEY_get_bn_param(x942, OSSL_PKEY_PARAM_FFC_G, &g) != 1) {
        ret = -PE_MALFORMED;
        goto out;
    }
    dh = pkcs3_group(p, g);
    mem = BIO_new(BIO_s_mem());
    if (dh == NULL || mem == NULL || PEM_write_bio_Parameters(mem, dh) != 1) {
        goto out;
    }
    n = BIO_get_mem_data(mem, &pem);
    if (n <= 0 || (*out = malloc((size_t)n + 1)) == NULL) {
        goto out;
    }
    memcpy(*out, pem, (size_t)n);
    (*out)[n] = '\0';
    *out_len = (size_t)n;
    ret = 0;
out:
    BN_free(p);
    BN_free(g);
    EVP_PKEY_free(dh);
    EVP_PKEY_free(x942);
    BIO_free(mem);
    BIO_free(in);
    return ret;
}
