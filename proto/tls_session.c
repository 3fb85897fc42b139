/* proto/tls_session.c: a TLS session (mbedTLS 2.28) driven through memory buffers. */
#include "proto/tls_session.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <mbedtls/constant_time.h>
#include <mbedtls/dhm.h>
#include <mbedtls/error.h>
#include <mbedtls/oid.h>
#include <mbedtls/platform_util.h>
#include <mbedtls/sha1.h>
#include <mbedtls/sha256.h>
#include <mbedtls/ssl_internal.h> /* MBEDTLS_SSL_IN_BUFFER_LEN, MBEDTLS_SSL_OUT_BUFFER_LEN */

#include "proto/client_name.h"
#include "proto/errors.h"
#include "proto/kdf.h"
#include "proto/ecdh_libcrypto.h"
#include "proto/pk_libcrypto.h"

#define TLS_BYTES_MAX (256u * 1024u)

static void set_err(char *errbuf, size_t errbuf_len, const char *what, int mbed_err)
{
    char reason[160];

    if (!errbuf || !errbuf_len) {
        return;
    }
    mbedtls_strerror(mbed_err, reason, sizeof(reason));
    snprintf(errbuf, errbuf_len, "%s: %s (-0x%04x)", what, reason, (unsigned)-mbed_err);
}

/* The session whose handshake step runs on this thread: mbedTLS 2.28 has the export-keys callback
 * only per configuration, and one configuration serves handshakes on several threads. */
static _Thread_local struct tls_session *export_target;

static int export_keys_cb(void *ctx, const unsigned char *ms, const unsigned char *kb,
                          size_t maclen, size_t keylen, size_t ivlen,
                          const unsigned char client_random[32],
                          const unsigned char server_random[32], mbedtls_tls_prf_types tls_prf_type)
{
    struct tls_session *s = export_target;

    (void)ctx;
    (void)kb;
    (void)maclen;
    (void)keylen;
    (void)ivlen;
    if (!s) {
        return 0;
    }
    memcpy(s->master_secret, ms, sizeof(s->master_secret));
    memcpy(s->client_random, client_random, 32);
    memcpy(s->server_random, server_random, 32);
    s->prf_type = (int)tls_prf_type;
    s->has_export = true;
    return 0;
}

/* Parse CA, certificate and key into c (already zeroed and initialised). Returns 0 or the
 * mbedTLS error, with errbuf filled. */
static int load_credentials(struct tls_server_conf *c, const uint8_t *ca, size_t ca_len,
                            const uint8_t *cert, size_t cert_len, const uint8_t *key,
                            size_t key_len, char *errbuf, size_t errbuf_len)
{
    int ret = ca == NULL ? 0 : mbedtls_x509_crt_parse(&c->ca, ca, ca_len);

    if (ret < 0) {
        set_err(errbuf, errbuf_len, "ca", ret);
        return ret;
    }
    ret = mbedtls_x509_crt_parse(&c->cert, cert, cert_len);
    if (ret < 0) {
        set_err(errbuf, errbuf_len, "cert", ret);
        return ret;
    }
    ret = key == NULL ? 0 : mbedtls_pk_parse_key(&c->key, key, key_len, NULL, 0);
    if (ret < 0) {
        set_err(errbuf, errbuf_len, "key", ret);
        return ret;
    }
    /* Our signature and the CA's checks of chains in libcrypto (proto/pk_libcrypto.h); a key it
     * cannot take keeps Mbed TLS's code, so failing here is not fatal. */
    (void)pk_libcrypto_wrap(&c->key, true, NULL, 0);
    (void)pk_libcrypto_wrap_chain(&c->ca);
    return 0;
}

static void conf_zero_init(struct tls_server_conf *c)
{
    memset(c, 0, sizeof(*c));
    mbedtls_ssl_config_init(&c->conf);
    mbedtls_x509_crt_init(&c->ca);
    mbedtls_x509_crt_init(&c->cert);
    mbedtls_pk_init(&c->key);
}

/* The ECDHE groups in openvpn 2.6's order when tls-groups is not given, which is OpenSSL 3's
 * default (ssl/t1_lib.c: X25519, P-256, X448, P-521, P-384), then every other curve Mbed TLS has,
 * as Mbed TLS also applies this list to the curve of the peer's certificate. Mbed TLS's own
 * default order puts the strongest curves first, so a stock client got secp521r1, many times
 * the work of X25519 per handshake. */
static void tls_groups_default(mbedtls_ecp_group_id *out, size_t cap)
{
    static const mbedtls_ecp_group_id first[] = {
        MBEDTLS_ECP_DP_CURVE25519, MBEDTLS_ECP_DP_SECP256R1, MBEDTLS_ECP_DP_CURVE448,
        MBEDTLS_ECP_DP_SECP521R1, MBEDTLS_ECP_DP_SECP384R1};
    const mbedtls_ecp_group_id *all = mbedtls_ecp_grp_id_list();
    size_t n = 0;

    for (size_t i = 0; i < sizeof(first) / sizeof(first[0]) && n + 1 < cap; i++) {
        if (mbedtls_ecp_curve_info_from_grp_id(first[i])) {
            out[n++] = first[i];
        }
    }
    for (; *all != MBEDTLS_ECP_DP_NONE && n + 1 < cap; all++) {
        bool is_listed = false;

        for (size_t i = 0; i < n; i++) {
            is_listed = is_listed || out[i] == *all;
        }
        if (!is_listed) {
            out[n++] = *all;
        }
    }
    out[n] = MBEDTLS_ECP_DP_NONE;
}

#define MD_FLAGS_SHA2                                                                              \
    (MBEDTLS_X509_ID_FLAG(MBEDTLS_MD_SHA224) | MBEDTLS_X509_ID_FLAG(MBEDTLS_MD_SHA256) |           \
     MBEDTLS_X509_ID_FLAG(MBEDTLS_MD_SHA384) | MBEDTLS_X509_ID_FLAG(MBEDTLS_MD_SHA512))

/* The two profiles of openvpn 2.6's Mbed TLS build; any key type, any curve. */
static const mbedtls_x509_crt_profile cert_profile_legacy = {
    MD_FLAGS_SHA2 | MBEDTLS_X509_ID_FLAG(MBEDTLS_MD_SHA1) |
        MBEDTLS_X509_ID_FLAG(MBEDTLS_MD_RIPEMD160),
    0xFFFFFFF,
    0xFFFFFFF,
    1024,
};
static const mbedtls_x509_crt_profile cert_profile_preferred = {
    MD_FLAGS_SHA2,
    0xFFFFFFF,
    0xFFFFFFF,
    2048,
};

const mbedtls_x509_crt_profile *tls_cert_profile_by_name(const char *name)
{
    if (strcmp(name, "legacy") == 0 || strcmp(name, "insecure") == 0) {
        return &cert_profile_legacy;
    }
    if (strcmp(name, "preferred") == 0) {
        return &cert_profile_preferred;
    }
    if (strcmp(name, "suiteb") == 0) {
        return &mbedtls_x509_crt_profile_suiteb;
    }
    return NULL;
}

void tls_server_conf_set_cert_profile(struct tls_server_conf *c,
                                      const mbedtls_x509_crt_profile *profile)
{
    mbedtls_ssl_conf_cert_profile(&c->conf, profile);
}

/* One name of a ':'-separated list starting at p: copied NUL-terminated into name (cap bytes), or
 * name "" when it is empty or does not fit; *len gets its length in the list. Returns where the
 * next name starts, or NULL after the last one. */
static const char *list_next(const char *p, char *name, size_t cap, size_t *len)
{
    const char *end = strchr(p, ':');

    *len = end ? (size_t)(end - p) : strlen(p);
    name[0] = '\0';
    if (*len < cap) {
        memcpy(name, p, *len);
        name[*len] = '\0';
    }
    return end ? end + 1 : NULL;
}

/* OpenSSL's names for the TLS 1.2 ECDHE suites (the IANA names are in RFC 5289 and RFC 7905). */
static const struct {
    const char *openssl;
    const char *mbedtls;
} cipher_aliases[] = {
    {"ECDHE-ECDSA-AES256-GCM-SHA384", "TLS-ECDHE-ECDSA-WITH-AES-256-GCM-SHA384"},
    {"ECDHE-ECDSA-AES128-GCM-SHA256", "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256"},
    {"ECDHE-ECDSA-CHACHA20-POLY1305", "TLS-ECDHE-ECDSA-WITH-CHACHA20-POLY1305-SHA256"},
    {"ECDHE-RSA-AES256-GCM-SHA384", "TLS-ECDHE-RSA-WITH-AES-256-GCM-SHA384"},
    {"ECDHE-RSA-AES128-GCM-SHA256", "TLS-ECDHE-RSA-WITH-AES-128-GCM-SHA256"},
    {"ECDHE-RSA-CHACHA20-POLY1305", "TLS-ECDHE-RSA-WITH-CHACHA20-POLY1305-SHA256"},
    {"ECDHE-ECDSA-AES256-SHA384", "TLS-ECDHE-ECDSA-WITH-AES-256-CBC-SHA384"},
    {"ECDHE-ECDSA-AES128-SHA256", "TLS-ECDHE-ECDSA-WITH-AES-128-CBC-SHA256"},
    {"ECDHE-RSA-AES256-SHA384", "TLS-ECDHE-RSA-WITH-AES-256-CBC-SHA384"},
    {"ECDHE-RSA-AES128-SHA256", "TLS-ECDHE-RSA-WITH-AES-128-CBC-SHA256"},
};

int tls_ciphers_parse(const char *list, int *out, char *skipped, size_t skipped_len)
{
    size_t n = 0, len;
    const char *p = list;

    skipped[0] = '\0';
    while (p) {
        const char *name_at = p;
        char name[64];
        int id = 0;

        p = list_next(p, name, sizeof(name), &len);
        if (name[0]) {
            for (size_t i = 0; i < sizeof(cipher_aliases) / sizeof(cipher_aliases[0]); i++) {
                if (strcasecmp(name, cipher_aliases[i].openssl) == 0) {
                    snprintf(name, sizeof(name), "%s", cipher_aliases[i].mbedtls);
                }
            }
            for (char *c = name; *c; c++) {
                *c = (char)toupper((unsigned char)*c);
            }
            id = mbedtls_ssl_get_ciphersuite_id(name);
        }
        if (id == 0 && skipped[0] == '\0') {
            snprintf(skipped, skipped_len, "%.*s", (int)(len < 64 ? len : 64), name_at);
        } else if (id != 0) {
            if (n == TLS_MAX_CIPHERSUITES) {
                return -PE_NOSPACE;
            }
            out[n++] = id;
        }
    }
    out[n] = 0;
    return n > 0 ? (int)n : -PE_MALFORMED;
}

int tls_server_conf_set_ciphers(struct tls_server_conf *c, const char *list)
{
    int suites[TLS_MAX_CIPHERSUITES + 1];
    char skipped[80];
    int n = tls_ciphers_parse(list, suites, skipped, sizeof(skipped));

    if (n < 0) {
        return n;
    }
    memcpy(c->ciphersuites, suites, sizeof(suites));
    mbedtls_ssl_conf_ciphersuites(&c->conf, c->ciphersuites);
    return 0;
}

int tls_server_conf_set_dh(struct tls_server_conf *c, const unsigned char *pem, size_t len)
{
    mbedtls_dhm_context dhm;
    int ret;

    mbedtls_dhm_init(&dhm);
    ret = mbedtls_dhm_parse_dhm(&dhm, pem, len);
    if (ret == 0) {
        /* copies P and G into the configuration */
        ret = mbedtls_ssl_conf_dh_param_ctx(&c->conf, &dhm) == 0 ? 0 : -PE_CRYPTO;
    } else {
        ret = -PE_MALFORMED;
    }
    mbedtls_dhm_free(&dhm);
    return ret;
}

int tls_server_conf_drop_dhe(struct tls_server_conf *c)
{
    const int *from = c->ciphersuites[0] ? c->ciphersuites : mbedtls_ssl_list_ciphersuites();
    size_t n = 0, kept = 0;
    int *to;

    while (from[n]) {
        n++;
    }
    to = calloc(n + 1, sizeof(*to));
    if (to == NULL) {
        return -PE_CRYPTO;
    }
    for (size_t i = 0; i < n; i++) {
        const mbedtls_ssl_ciphersuite_t *cs = mbedtls_ssl_ciphersuite_from_id(from[i]);

        if (cs && cs->key_exchange != MBEDTLS_KEY_EXCHANGE_DHE_RSA &&
            cs->key_exchange != MBEDTLS_KEY_EXCHANGE_DHE_PSK) {
            to[kept++] = from[i];
        }
    }
    if (kept == 0) {
        free(to);
        return -PE_MALFORMED;
    }
    free(c->suites_no_dhe);
    c->suites_no_dhe = to;
    mbedtls_ssl_conf_ciphersuites(&c->conf, c->suites_no_dhe);
    return 0;
}

/* OpenSSL's names for curves Mbed TLS knows by another name. */
static const struct {
    const char *openssl;
    const char *mbedtls;
} group_aliases[] = {
    {"prime256v1", "secp256r1"}, {"P-256", "secp256r1"},      {"P-384", "secp384r1"},
    {"P-521", "secp521r1"},      {"prime192v1", "secp192r1"},
};

static const mbedtls_ecp_curve_info *group_by_name(const char *name)
{
    const mbedtls_ecp_curve_info *ci;

    for (size_t i = 0; i < sizeof(group_aliases) / sizeof(group_aliases[0]); i++) {
        if (strcasecmp(name, group_aliases[i].openssl) == 0) {
            name = group_aliases[i].mbedtls;
        }
    }
    for (ci = mbedtls_ecp_curve_list(); ci->grp_id != MBEDTLS_ECP_DP_NONE; ci++) {
        if (strcasecmp(name, ci->name) == 0) {
            return ci;
        }
    }
    return NULL;
}

int tls_groups_parse(const char *list, mbedtls_ecp_group_id *out, char *bad, size_t bad_len)
{
    size_t n = 0, len;
    const char *p = list;

    while (p) {
        const char *name_at = p;
        char name[32];
        const mbedtls_ecp_curve_info *ci;

        p = list_next(p, name, sizeof(name), &len);
        ci = name[0] ? group_by_name(name) : NULL;
        if (!ci) {
            snprintf(bad, bad_len, "%.*s", (int)(len < 64 ? len : 64), name_at);
            return -PE_MALFORMED;
        }
        if (n == TLS_MAX_GROUPS) {
            snprintf(bad, bad_len, "%s", name);
            return -PE_NOSPACE;
        }
        out[n++] = ci->grp_id;
    }
    out[n] = MBEDTLS_ECP_DP_NONE;
    return 0;
}

int tls_server_conf_set_groups(struct tls_server_conf *c, const char *list, char *bad,
                               size_t bad_len)
{
    mbedtls_ecp_group_id groups[TLS_MAX_GROUPS + 1];
    int ret = tls_groups_parse(list, groups, bad, bad_len);

    if (ret) {
        return ret;
    }
    memcpy(c->groups, groups, sizeof(groups));
    mbedtls_ssl_conf_curves(&c->conf, c->groups);
    return 0;
}

/* What both ends share: credentials, defaults for the endpoint, TLS 1.2 at least (the 2.6
 * default tls-version-min on both sides), the DRBG, the CA chain and our certificate. Returns 0
 * or a negative mbedTLS code (errbuf says which step failed). */
static int conf_common(struct tls_server_conf *c, int endpoint, const uint8_t *ca, size_t ca_len,
                       const uint8_t *cert, size_t cert_len, const uint8_t *key, size_t key_len,
                       int (*f_rng)(void *, unsigned char *, size_t), void *p_rng, char *errbuf,
                       size_t errbuf_len)
{
    int ret;

    conf_zero_init(c);
    ret = load_credentials(c, ca, ca_len, cert, cert_len, key, key_len, errbuf, errbuf_len);
    if (ret < 0) {
        return ret;
    }
    ret = mbedtls_ssl_config_defaults(&c->conf, endpoint, MBEDTLS_SSL_TRANSPORT_STREAM,
                                      MBEDTLS_SSL_PRESET_DEFAULT);
    if (ret) {
        set_err(errbuf, errbuf_len, "tls config", ret);
        return ret;
    }
    mbedtls_ssl_conf_min_version(&c->conf, MBEDTLS_SSL_MAJOR_VERSION_3,
                                 MBEDTLS_SSL_MINOR_VERSION_3);
    mbedtls_ssl_conf_rng(&c->conf, f_rng, p_rng);
    mbedtls_ssl_conf_ca_chain(&c->conf, &c->ca, NULL);
    tls_groups_default(c->groups, sizeof(c->groups) / sizeof(c->groups[0]));
    mbedtls_ssl_conf_curves(&c->conf, c->groups);
    c->is_ecdh_libcrypto = ecdh_libcrypto_is_live();
    ret = mbedtls_ssl_conf_own_cert(&c->conf, &c->cert, &c->key);
    if (ret) {
        set_err(errbuf, errbuf_len, "cert/key", ret);
    }
    return ret;
}

int tls_server_conf_init(struct tls_server_conf *c, const uint8_t *ca, size_t ca_len,
                         const uint8_t *cert, size_t cert_len, const uint8_t *key, size_t key_len,
                         enum tls_verify_client verify,
                         int (*f_rng)(void *, unsigned char *, size_t), void *p_rng, char *errbuf,
                         size_t errbuf_len)
{
    int ret;

    ret = conf_common(c, MBEDTLS_SSL_IS_SERVER, ca, ca_len, cert, cert_len, key, key_len, f_rng,
                      p_rng, errbuf, errbuf_len);
    if (ret) {
        goto fail;
    }
    switch (verify) {
    case TLS_VERIFY_CLIENT_NONE:
        mbedtls_ssl_conf_authmode(&c->conf, MBEDTLS_SSL_VERIFY_NONE);
        break;
    case TLS_VERIFY_CLIENT_OPTIONAL:
        mbedtls_ssl_conf_authmode(&c->conf, MBEDTLS_SSL_VERIFY_OPTIONAL);
        break;
    default:
        mbedtls_ssl_conf_authmode(&c->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
        break;
    }
    mbedtls_ssl_conf_renegotiation(&c->conf, MBEDTLS_SSL_RENEGOTIATION_DISABLED);
    mbedtls_ssl_conf_export_keys_ext_cb(&c->conf, export_keys_cb, NULL);
    return 0;

fail:
    tls_server_conf_clear(c);
    return ret == MBEDTLS_ERR_SSL_ALLOC_FAILED ? -PE_CRYPTO : -PE_MALFORMED;
}

/* The node of list at position n (0: the head), or NULL when the list is shorter. */
static const mbedtls_x509_crl *crl_nth(const mbedtls_x509_crl *list, size_t n)
{
    for (; list && list->version != 0; list = list->next) {
        if (n-- == 0) {
            return list;
        }
    }
    return NULL;
}

/* Append a copy of from and the CRLs after it to *to. 0 or an Mbed TLS error. */
static int crl_copy(mbedtls_x509_crl *to, const mbedtls_x509_crl *from)
{
    for (; from && from->version != 0; from = from->next) {
        int ret = mbedtls_x509_crl_parse_der(to, from->raw.p, from->raw.len);

        if (ret) {
            return ret;
        }
    }
    return 0;
}

static size_t crl_count(const mbedtls_x509_crl *list)
{
    size_t n = 0;

    for (; list && list->version != 0; list = list->next) {
        n++;
    }
    return n;
}

int tls_server_conf_set_crl(struct tls_server_conf *c, const uint8_t *crl, size_t crl_len,
                            char *errbuf, size_t errbuf_len)
{
    mbedtls_x509_crl fresh;
    size_t n_own;
    int ret;

    mbedtls_x509_crl_init(&fresh);
    ret = mbedtls_x509_crl_parse(&fresh, crl, crl_len);
    if (ret) {
        set_err(errbuf, errbuf_len, "CRL", ret);
        mbedtls_x509_crl_free(&fresh);
        return -PE_MALFORMED;
    }
    n_own = crl_count(&fresh);
    /* capath's CRLs stay after crl-verify's */
    ret = c->has_crl ? crl_copy(&fresh, crl_nth(&c->crl, c->n_crl_own)) : 0;
    if (ret) {
        set_err(errbuf, errbuf_len, "CRL", ret);
        mbedtls_x509_crl_free(&fresh);
        return -PE_CRYPTO;
    }
    mbedtls_ssl_conf_ca_chain(&c->conf, &c->ca, NULL);
    if (c->has_crl) {
        mbedtls_x509_crl_free(&c->crl);
    }
    c->crl = fresh; /* the list's own pointers stay valid: only its head moves */
    c->has_crl = true;
    c->n_crl_own = n_own;
    mbedtls_ssl_conf_ca_chain(&c->conf, &c->ca, &c->crl);
    return 0;
}

int tls_server_conf_add_trust(struct tls_server_conf *c, const mbedtls_x509_crt *certs,
                              const mbedtls_x509_crl *crls, char *errbuf, size_t errbuf_len)
{
    int ret = 0;

    c->is_fingerprint_no_ca = false;
    for (; certs && certs->raw.p && ret == 0; certs = certs->next) {
        ret = mbedtls_x509_crt_parse_der(&c->ca, certs->raw.p, certs->raw.len);
    }
    (void)pk_libcrypto_wrap_chain(&c->ca); /* (keys wrapped before are left as they are) */
    if (ret == 0 && crls && crls->version != 0) {
        if (!c->has_crl) {
            mbedtls_x509_crl_init(&c->crl);
            c->n_crl_own = 0;
        }
        ret = crl_copy(&c->crl, crls);
        c->has_crl = c->crl.version != 0;
    }
    mbedtls_ssl_conf_ca_chain(&c->conf, &c->ca, c->has_crl ? &c->crl : NULL);
    if (ret) {
        set_err(errbuf, errbuf_len, "capath", ret);
        return -PE_CRYPTO;
    }
    return 0;
}

int tls_server_conf_set_external_key(struct tls_server_conf *c, unsigned flags, char *errbuf,
                                     size_t errbuf_len)
{
    int ret = pk_external_setup(&c->key, &c->cert.pk, flags);

    if (ret) {
        set_err(errbuf, errbuf_len, "management-external-key", ret);
        return -PE_UNSUPPORTED;
    }
    c->ext_rng.f_rng = c->conf.f_rng;
    c->ext_rng.p_rng = c->conf.p_rng;
    mbedtls_ssl_conf_rng(&c->conf, pk_external_rng, &c->ext_rng);
    c->is_external_key = true;
    return 0;
}

int tls_server_conf_set_fingerprints(struct tls_server_conf *c, const uint8_t (*fps)[32], size_t n)
{
    uint8_t(*copy)[32] = NULL;

    if (n > 0) {
        copy = malloc(n * sizeof(*copy));
        if (!copy) {
            return -PE_CRYPTO;
        }
        memcpy(copy, fps, n * sizeof(*copy));
    }
    free(c->fingerprints);
    c->fingerprints = copy;
    c->n_fingerprints = n;
    c->is_fingerprint_no_ca = n > 0 && c->ca.version == 0;
    return 0;
}

int tls_server_conf_set_verify_hashes(struct tls_server_conf *c, const uint8_t (*hashes)[32],
                                      size_t n, size_t len)
{
    uint8_t(*copy)[32] = NULL;

    if (n > 0) {
        copy = malloc(n * sizeof(*copy));
        if (!copy) {
            return -PE_CRYPTO;
        }
        memcpy(copy, hashes, n * sizeof(*copy));
    }
    free(c->verify_hashes);
    c->verify_hashes = copy;
    c->n_verify_hashes = n;
    c->verify_hash_len = len == 20 ? 20 : 32;
    return 0;
}

void tls_server_conf_clear(struct tls_server_conf *c)
{
    free(c->verify_hashes);
    c->verify_hashes = NULL;
    c->n_verify_hashes = 0;
    free(c->suites_no_dhe);
    c->suites_no_dhe = NULL;
    free(c->fingerprints);
    c->fingerprints = NULL;
    c->n_fingerprints = 0;
    if (c->has_crl) {
        mbedtls_x509_crl_free(&c->crl);
        c->has_crl = false;
    }
    mbedtls_ssl_conf_ca_chain(&c->conf, &c->ca, NULL);
    mbedtls_ssl_config_free(&c->conf);
    mbedtls_x509_crt_free(&c->ca);
    mbedtls_x509_crt_free(&c->cert);
    mbedtls_pk_free(&c->key);
}

/* The peer's own certificate (depth 0), once its chain is checked: its key verifies the peer's
 * signature of the handshake (CertificateVerify on a server, ServerKeyExchange on a client)
 * next, in libcrypto (proto/pk_libcrypto.h; a key libcrypto cannot take stays as it is). */
static void peer_key_to_libcrypto(mbedtls_x509_crt *crt, int depth)
{
    if (depth == 0) {
        (void)pk_libcrypto_wrap(&crt->pk, false, crt->pk_raw.p, crt->pk_raw.len);
    }
}

/* Client side. ctx non-NULL: --remote-cert-tls server, the leaf must carry extendedKeyUsage
 * serverAuth. Like openvpn's x509_verify_cert_eku (ssl_verify_mbedtls.c), a certificate without
 * the extension fails too. */
static int verify_server_eku(void *ctx, mbedtls_x509_crt *crt, int depth, uint32_t *flags)
{
    peer_key_to_libcrypto(crt, depth);
    if (depth != 0 || ctx == NULL) {
        return 0;
    }
    if (!(crt->ext_types & MBEDTLS_X509_EXT_EXTENDED_KEY_USAGE) ||
        mbedtls_x509_crt_check_extended_key_usage(crt, MBEDTLS_OID_SERVER_AUTH,
                                                  MBEDTLS_OID_SIZE(MBEDTLS_OID_SERVER_AUTH)) != 0) {
        *flags |= MBEDTLS_X509_BADCERT_EXT_KEY_USAGE;
    }
    return 0;
}

int tls_client_conf_init(struct tls_server_conf *c, const uint8_t *ca, size_t ca_len,
                         const uint8_t *cert, size_t cert_len, const uint8_t *key, size_t key_len,
                         bool require_server_eku, int (*f_rng)(void *, unsigned char *, size_t),
                         void *p_rng, char *errbuf, size_t errbuf_len)
{
    int ret;

    ret = conf_common(c, MBEDTLS_SSL_IS_CLIENT, ca, ca_len, cert, cert_len, key, key_len, f_rng,
                      p_rng, errbuf, errbuf_len);
    if (ret) {
        goto fail;
    }
    /* The server certificate must chain to ca; openvpn checks no host name. */
    mbedtls_ssl_conf_authmode(&c->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
    mbedtls_ssl_conf_verify(&c->conf, verify_server_eku, require_server_eku ? c : NULL);
    mbedtls_ssl_conf_renegotiation(&c->conf, MBEDTLS_SSL_RENEGOTIATION_DISABLED);
    mbedtls_ssl_conf_export_keys_ext_cb(&c->conf, export_keys_cb, NULL);
    return 0;

fail:
    tls_server_conf_clear(c);
    return ret == MBEDTLS_ERR_SSL_ALLOC_FAILED ? -PE_CRYPTO : -PE_MALFORMED;
}

static int bytes_append(struct tls_bytes *b, const uint8_t *data, size_t len)
{
    if (b->off > 0 && b->off == b->len) {
        b->off = b->len = 0;
    }
    if (b->len - b->off + len > TLS_BYTES_MAX) {
        return -PE_NOSPACE;
    }
    if (b->len + len > b->cap) {
        size_t pending = b->len - b->off;
        size_t ncap = b->cap ? b->cap : 4096;
        uint8_t *nd;

        /* Compact first, then grow. */
        if (b->off > 0) {
            memmove(b->data, b->data + b->off, pending);
            b->len = pending;
            b->off = 0;
        }
        while (ncap < b->len + len) {
            ncap *= 2;
        }
        if (ncap > b->cap) {
            nd = realloc(b->data, ncap);
            if (!nd) {
                return -PE_NOSPACE;
            }
            b->data = nd;
            b->cap = ncap;
        }
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    return 0;
}

static void bytes_free(struct tls_bytes *b)
{
    if (b->data) {
        mbedtls_platform_zeroize(b->data, b->cap);
    }
    free(b->data);
    memset(b, 0, sizeof(*b));
}

/* An idle session keeps no buffer: a connected client's control channel is quiet for minutes,
 * and these two would otherwise hold 4 KiB or more each for its whole life. */
static void bytes_release_if_empty(struct tls_bytes *b)
{
    if (b->data && b->off == b->len) {
        bytes_free(b);
    }
}

/* A record reached [p, p + len) of the record buffer base (cap bytes): raise *used to its end. */
static void note_used(size_t *used, const unsigned char *base, size_t cap, const unsigned char *p,
                      size_t len)
{
    if (base && p >= base && p < base + cap) {
        size_t end = (size_t)(p - base) + len;

        *used = end < cap ? (end > *used ? end : *used) : cap;
    }
}

static int bio_send(void *ctx, const unsigned char *buf, size_t len)
{
    struct tls_session *s = ctx;

    note_used(&s->out_buf_used, s->ssl.out_buf, MBEDTLS_SSL_OUT_BUFFER_LEN, buf, len);
    if (bytes_append(&s->out, buf, len)) {
        return MBEDTLS_ERR_SSL_ALLOC_FAILED;
    }
    return (int)len;
}

static int bio_recv(void *ctx, unsigned char *buf, size_t len)
{
    struct tls_session *s = ctx;
    size_t avail = s->in.len - s->in.off;

    if (avail == 0) {
        return MBEDTLS_ERR_SSL_WANT_READ;
    }
    if (len > avail) {
        len = avail;
    }
    memcpy(buf, s->in.data + s->in.off, len);
    note_used(&s->in_buf_used, s->ssl.in_buf, MBEDTLS_SSL_IN_BUFFER_LEN, buf, len);
    s->in.off += len;
    bytes_release_if_empty(&s->in);
    return (int)len;
}

/* peer-fingerprint on one certificate of the client's chain (see
 * tls_server_conf_set_fingerprints). Without a CA, 2.6 (ssl_verify_mbedtls.c) lets the
 * fingerprint decide on a certificate nobody vouches for or outside its dates; so do we. */
static void check_fingerprint(struct tls_session *s, int depth, uint32_t *flags)
{
    const struct tls_server_conf *c = s->conf;
    bool is_listed = false;

    if (c->n_fingerprints == 0) {
        return;
    }
    if (c->is_fingerprint_no_ca) {
        *flags &= ~(uint32_t)(MBEDTLS_X509_BADCERT_NOT_TRUSTED | MBEDTLS_X509_BADCERT_EXPIRED |
                              MBEDTLS_X509_BADCERT_FUTURE);
    }
    if (depth != 0) {
        return;
    }
    for (size_t i = 0; i < c->n_fingerprints && !is_listed; i++) {
        is_listed = memcmp(c->fingerprints[i], s->verify_sha256, 32) == 0;
    }
    if (!is_listed) {
        s->is_fingerprint_refused = true;
        *flags |= MBEDTLS_X509_BADCERT_OTHER;
    }
}

/* verify-hash on the certificate at depth 1 (tls_server_conf_set_verify_hashes). */
static void check_verify_hash(struct tls_session *s, const mbedtls_x509_crt *crt, int depth,
                              uint32_t *flags)
{
    const struct tls_server_conf *c = s->conf;
    bool is_listed = false;
    int ret;

    if (c->n_verify_hashes == 0 || depth != 1) {
        return;
    }
    memset(s->verify_issuer_hash, 0, sizeof(s->verify_issuer_hash));
    ret = c->verify_hash_len == 20
              ? mbedtls_sha1_ret(crt->raw.p, crt->raw.len, s->verify_issuer_hash)
              : mbedtls_sha256_ret(crt->raw.p, crt->raw.len, s->verify_issuer_hash, 0);
    for (size_t i = 0; ret == 0 && i < c->n_verify_hashes; i++) {
        is_listed |=
            mbedtls_ct_memcmp(c->verify_hashes[i], s->verify_issuer_hash, c->verify_hash_len) == 0;
    }
    if (!is_listed) {
        s->is_verify_hash_refused = true;
        *flags |= MBEDTLS_X509_BADCERT_OTHER;
    }
}

/* Server side, per session: remember the leaf's CN so a refusal can name the certificate (a
 * NUL or control character shows as '_', a long CN is cut: this copy is for messages only), and
 * its SHA-256; apply peer-fingerprint. */
static int remember_cn(void *ctx, mbedtls_x509_crt *crt, int depth, uint32_t *flags)
{
    struct tls_session *s = ctx;

    if (depth == 0) {
        s->is_fingerprint_refused = false;
        if (mbedtls_sha256_ret(crt->raw.p, crt->raw.len, s->verify_sha256, 0) != 0) {
            memset(s->verify_sha256, 0, sizeof(s->verify_sha256));
        }
        s->verify_cn[0] = '\0';
        for (const mbedtls_x509_name *name = &crt->subject; name; name = name->next) {
            if (name->oid.p && MBEDTLS_OID_CMP(MBEDTLS_OID_AT_CN, &name->oid) == 0) {
                size_t n = name->val.len < sizeof(s->verify_cn) - 1 ? name->val.len
                                                                    : sizeof(s->verify_cn) - 1;

                for (size_t i = 0; i < n; i++) {
                    s->verify_cn[i] = name->val.p[i] ? (char)name->val.p[i] : '_';
                }
                s->verify_cn[n] = '\0';
                client_name_remap(s->verify_cn);
                break;
            }
        }
    }
    check_fingerprint(s, depth, flags);
    check_verify_hash(s, crt, depth, flags);
    peer_key_to_libcrypto(crt, depth);
    return 0;
}

void tls_fingerprint_format_len(const uint8_t *fp, size_t len, char *out, size_t out_len)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;

    if (out_len == 0) {
        return;
    }
    for (size_t i = 0; i < len; i++) {
        if (o + (i + 1 < len ? 3 : 2) >= out_len) {
            break;
        }
        out[o++] = hex[fp[i] >> 4];
        out[o++] = hex[fp[i] & 15];
        if (i + 1 < len) {
            out[o++] = ':';
        }
    }
    out[o] = '\0';
}

void tls_fingerprint_format(const uint8_t fp[32], char *out, size_t out_len)
{
    tls_fingerprint_format_len(fp, 32, out, out_len);
}

int tls_session_init(struct tls_session *s, struct tls_server_conf *conf)
{
    int ret;

    memset(s, 0, sizeof(*s));
    s->conf = conf;
    mbedtls_ssl_init(&s->ssl);
    ret = mbedtls_ssl_setup(&s->ssl, &conf->conf);
    if (ret) {
        mbedtls_ssl_free(&s->ssl);
        return -PE_CRYPTO;
    }
    mbedtls_ssl_set_bio(&s->ssl, s, bio_send, bio_recv, NULL);
    if (conf->is_external_key) {
        s->pk_req = calloc(1, sizeof(*s->pk_req));
        if (!s->pk_req) {
            mbedtls_ssl_free(&s->ssl);
            return -PE_CRYPTO;
        }
    }
    if (conf->conf.endpoint == MBEDTLS_SSL_IS_SERVER) {
        /* (A client keeps its configuration's callback: a per-session one replaces it.) */
        mbedtls_ssl_set_verify(&s->ssl, remember_cn, s);
    }
    return 0;
}

size_t tls_session_buf_len(bool is_in)
{
    return is_in ? MBEDTLS_SSL_IN_BUFFER_LEN : MBEDTLS_SSL_OUT_BUFFER_LEN;
}

void tls_session_clear(struct tls_session *s)
{
    if (!s->conf) {
        return;
    }
    /* An idle, established session (one that ends after its EXIT, say): wipe only what records
     * reached, as tls_session_release_buffers does, not both buffers whole as mbedtls_ssl_free
     * would, faulting in pages nothing touched just before they are unmapped. */
    tls_session_release_buffers(s);
    mbedtls_ssl_free(&s->ssl);
    if (s->pk_req) {
        mbedtls_platform_zeroize(s->pk_req, sizeof(*s->pk_req));
        free(s->pk_req);
        s->pk_req = NULL;
    }
    bytes_free(&s->in);
    bytes_free(&s->out);
    mbedtls_platform_zeroize(s->master_secret, sizeof(s->master_secret));
    s->conf = NULL;
    s->has_export = false;
}

int tls_session_feed(struct tls_session *s, const uint8_t *data, size_t len)
{
    return bytes_append(&s->in, data, len);
}

int tls_session_handshake(struct tls_session *s, char *errbuf, size_t errbuf_len)
{
    int ret;

    if (s->is_handshake_done) {
        return 0;
    }
    export_target = s;
    pk_external_enter(s->pk_req, &s->ssl);
    ret = mbedtls_ssl_handshake(&s->ssl);
    pk_external_leave();
    export_target = NULL;
    if (ret == 0) {
        s->is_handshake_done = true;
        return 0;
    }
    if (ret == MBEDTLS_ERR_SSL_ASYNC_IN_PROGRESS && s->pk_req &&
        s->pk_req->state == PK_EXT_WANTED) {
        return -PE_WANT_SIGN;
    }
    if (ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE) {
        return -PE_WANT_IO;
    }
    if (ret == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED) {
        char info[256];
        uint32_t flags = mbedtls_ssl_get_verify_result(&s->ssl);

        mbedtls_x509_crt_verify_info(info, sizeof(info), "", flags);
        /* verify_info ends lines with '\n'; keep the first reason on one line. */
        info[strcspn(info, "\n")] = '\0';
        if (errbuf && errbuf_len && s->is_fingerprint_refused) {
            char hex[32 * 3];

            tls_fingerprint_format(s->verify_sha256, hex, sizeof(hex));
            snprintf(errbuf, errbuf_len,
                     "client certificate refused: its SHA-256 fingerprint %s is not listed in "
                     "peer-fingerprint%s%.64s%s",
                     hex, s->verify_cn[0] ? " (CN '" : "", s->verify_cn,
                     s->verify_cn[0] ? "')" : "");
        } else if (errbuf && errbuf_len && s->is_verify_hash_refused) {
            char hex[32 * 3];

            tls_fingerprint_format_len(s->verify_issuer_hash, s->conf->verify_hash_len, hex,
                                       sizeof(hex));
            snprintf(errbuf, errbuf_len,
                     "client certificate refused: the %s fingerprint %s of its CA (depth 1) is "
                     "not listed in verify-hash%s%.64s%s",
                     s->conf->verify_hash_len == 20 ? "SHA-1" : "SHA-256", hex,
                     s->verify_cn[0] ? " (CN '" : "", s->verify_cn, s->verify_cn[0] ? "')" : "");
        } else if (errbuf && errbuf_len) {
            bool is_client = s->conf->conf.endpoint == MBEDTLS_SSL_IS_CLIENT;

            snprintf(errbuf, errbuf_len, "%s certificate verification failed: %s%s%.64s%s",
                     is_client ? "server" : "client", info,
                     !is_client && s->verify_cn[0] ? " (CN '" : "", is_client ? "" : s->verify_cn,
                     !is_client && s->verify_cn[0] ? "')" : "");
        }
    } else {
        set_err(errbuf, errbuf_len, "TLS handshake failed", ret);
    }
    return -PE_TLS;
}

/* Releasing the record buffers (tls_session_release_buffers).
 *
 * Mbed TLS 2.28 allocates its two record buffers when the session is set up and keeps them until
 * it is freed; Debian builds it without MBEDTLS_SSL_VARIABLE_BUFFER_LENGTH, and
 * mbedtls_ssl_context_save works for DTLS only, so the library offers no way to shrink an idle
 * TLS session. With ovpnd's M_MMAP_THRESHOLD (server/main.c) each buffer is a mapping of its own
 * of which a control channel touches the first page only (the handshake's largest record, the
 * certificate, fits in it), so an idle session holds two resident pages, 8 KiB, for nothing.
 *
 * The context's record-layer fields are public in 2.28, and between two calls on an idle,
 * established TLS session the buffers hold no state but the first bytes: in_buf begins with the
 * 8-byte counter of incoming records (TLS keeps it there and increments it in place after every
 * record; a record decrypted with a wrong counter fails its MAC or AEAD tag), followed by the
 * header and explicit-IV space of the next record, which are written before they are read. The
 * outgoing counter lives in the context (cur_out_ctr) and is copied into out_buf for each record
 * before it is used, and after mbedtls_ssl_flush_output the output pointers are back at their
 * starting offsets. "Idle" is checked on the fields that say otherwise: a record partly received
 * (in_left) or partly sent (out_left), application data not yet read (in_offt), a message kept
 * for the next call (keep_current_message), or a record holding more handshake data than the
 * message just handled (in_msglen beyond in_hslen, which the next read would move to the front).
 * Then the bytes in front of in_msg and out_msg are copied aside with every pointer's offset, the
 * part of each buffer that records reached is wiped (as mbedtls_ssl_free would), and both are
 * freed; the pointers are set to NULL, so a call that bypassed take_back_buffers would crash
 * instead of writing into freed memory. take_back_buffers allocates new ones, restores the
 * prefix and the pointers, and Mbed TLS goes on as if nothing happened. mbedtls_ssl_free skips
 * NULL buffers, so a released session is freed without touching them.
 */
static bool record_layer_is_idle(const mbedtls_ssl_context *ssl)
{
    return ssl->state == MBEDTLS_SSL_HANDSHAKE_OVER && ssl->handshake == NULL &&
           ssl->in_left == 0 && ssl->out_left == 0 && ssl->in_offt == NULL &&
           ssl->keep_current_message == 0 &&
           (ssl->in_msglen == 0 || (ssl->in_hslen != 0 && ssl->in_hslen == ssl->in_msglen));
}

void tls_session_release_buffers(struct tls_session *s)
{
    mbedtls_ssl_context *ssl = &s->ssl;
    struct tls_released *r = &s->released;
    unsigned char *const in_ptrs[5] = {ssl->in_ctr, ssl->in_hdr, ssl->in_len, ssl->in_iv,
                                       ssl->in_msg};
    unsigned char *const out_ptrs[5] = {ssl->out_ctr, ssl->out_hdr, ssl->out_len, ssl->out_iv,
                                        ssl->out_msg};
    size_t in_pre = (size_t)(ssl->in_msg - ssl->in_buf);
    size_t out_pre = (size_t)(ssl->out_msg - ssl->out_buf);

    if (r->is_released || !s->is_handshake_done || !ssl->in_buf || !ssl->out_buf ||
        !record_layer_is_idle(ssl)) {
        return;
    }
    for (int i = 0; i < 5; i++) {
        if (in_ptrs[i] < ssl->in_buf || in_ptrs[i] > ssl->in_msg || out_ptrs[i] < ssl->out_buf ||
            out_ptrs[i] > ssl->out_msg) {
            return; /* not the layout this code knows: keep the buffers */
        }
    }
    if (in_pre > sizeof(r->in_prefix) || out_pre > sizeof(r->out_prefix)) {
        return;
    }
    for (int i = 0; i < 5; i++) {
        r->in_off[i] = (uint16_t)(in_ptrs[i] - ssl->in_buf);
        r->out_off[i] = (uint16_t)(out_ptrs[i] - ssl->out_buf);
    }
    memcpy(r->in_prefix, ssl->in_buf, in_pre);
    memcpy(r->out_prefix, ssl->out_buf, out_pre);
    /* Only what records reached can hold anything but zeros; wiping the rest would fault in
     * pages that were never touched. */
    mbedtls_platform_zeroize(ssl->in_buf, s->in_buf_used > in_pre ? s->in_buf_used : in_pre);
    mbedtls_platform_zeroize(ssl->out_buf, s->out_buf_used > out_pre ? s->out_buf_used : out_pre);
    if (s->buf_hooks) {
        s->buf_hooks->give(s->buf_hooks->ctx, ssl->in_buf, MBEDTLS_SSL_IN_BUFFER_LEN);
        s->buf_hooks->give(s->buf_hooks->ctx, ssl->out_buf, MBEDTLS_SSL_OUT_BUFFER_LEN);
    } else {
        free(ssl->in_buf);
        free(ssl->out_buf);
    }
    ssl->in_buf = ssl->in_ctr = ssl->in_hdr = ssl->in_len = ssl->in_iv = ssl->in_msg = NULL;
    ssl->out_buf = ssl->out_ctr = ssl->out_hdr = ssl->out_len = ssl->out_iv = ssl->out_msg = NULL;
    s->in_buf_used = s->out_buf_used = 0;
    r->is_released = true;
}

/* New record buffers for a released session, as they were. Returns 0 or -PE_TLS (no memory;
 * the session stays released). */
static int take_back_buffers(struct tls_session *s)
{
    mbedtls_ssl_context *ssl = &s->ssl;
    struct tls_released *r = &s->released;
    unsigned char *in, *out;

    if (!r->is_released) {
        return 0;
    }
    /* (mbedtls_calloc is calloc in Debian's build: mbedtls_ssl_free frees these with free) */
    if (s->buf_hooks) {
        in = s->buf_hooks->take(s->buf_hooks->ctx, MBEDTLS_SSL_IN_BUFFER_LEN);
        out = s->buf_hooks->take(s->buf_hooks->ctx, MBEDTLS_SSL_OUT_BUFFER_LEN);
    } else {
        in = calloc(1, MBEDTLS_SSL_IN_BUFFER_LEN);
        out = calloc(1, MBEDTLS_SSL_OUT_BUFFER_LEN);
    }
    if (!in || !out) {
        free(in); /* (a block of the hooks may be freed: see tls_buf_hooks) */
        free(out);
        return -PE_TLS;
    }
    memcpy(in, r->in_prefix, r->in_off[4]);
    memcpy(out, r->out_prefix, r->out_off[4]);
    ssl->in_buf = in;
    ssl->in_ctr = in + r->in_off[0];
    ssl->in_hdr = in + r->in_off[1];
    ssl->in_len = in + r->in_off[2];
    ssl->in_iv = in + r->in_off[3];
    ssl->in_msg = in + r->in_off[4];
    ssl->out_buf = out;
    ssl->out_ctr = out + r->out_off[0];
    ssl->out_hdr = out + r->out_off[1];
    ssl->out_len = out + r->out_off[2];
    ssl->out_iv = out + r->out_off[3];
    ssl->out_msg = out + r->out_off[4];
    mbedtls_platform_zeroize(r, sizeof(*r));
    return 0;
}

void tls_session_release_peer_cert(struct tls_session *s)
{
    mbedtls_ssl_session *session = s->ssl.session;

    if (!s->is_handshake_done || s->ssl.handshake != NULL || !session || !session->peer_cert) {
        return;
    }
    /* as mbedtls_ssl_session_free does it */
    mbedtls_x509_crt_free(session->peer_cert);
    free(session->peer_cert);
    session->peer_cert = NULL;
}

int tls_session_read(struct tls_session *s, uint8_t *buf, size_t cap, size_t *n)
{
    int ret;

    *n = 0;
    if (s->released.is_released && s->in.len == s->in.off) {
        return 0; /* nothing arrived: Mbed TLS would only ask for more */
    }
    if (take_back_buffers(s)) {
        return -PE_TLS;
    }
    ret = mbedtls_ssl_read(&s->ssl, buf, cap);
    if (ret > 0) {
        *n = (size_t)ret;
        return 0;
    }
    if (ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE) {
        return 0;
    }
    return -PE_TLS; /* includes 0 / PEER_CLOSE_NOTIFY */
}

int tls_session_write(struct tls_session *s, const uint8_t *data, size_t len)
{
    size_t done = 0;

    if (take_back_buffers(s)) {
        return -PE_TLS;
    }
    while (done < len) {
        int ret = mbedtls_ssl_write(&s->ssl, data + done, len - done);

        if (ret <= 0) {
            return -PE_TLS; /* the BIO never blocks, so WANT_WRITE cannot happen */
        }
        done += (size_t)ret;
    }
    return 0;
}

const uint8_t *tls_session_out_peek(const struct tls_session *s, size_t *len)
{
    *len = s->out.len - s->out.off;
    return s->out.data ? s->out.data + s->out.off : NULL;
}

void tls_session_out_consume(struct tls_session *s, size_t n)
{
    size_t pending = s->out.len - s->out.off;

    s->out.off += n < pending ? n : pending;
    bytes_release_if_empty(&s->out);
}

int tls_session_export(const struct tls_session *s, const char *label, uint8_t *out, size_t out_len)
{
    if (!s->is_handshake_done || !s->has_export) {
        return -PE_STATE;
    }
    return kdf_tls_ekm(s->prf_type, s->master_secret, s->client_random, s->server_random, label,
                       out, out_len);
}

int tls_session_peer_cn(const struct tls_session *s, char *cn, size_t cap)
{
    const mbedtls_x509_crt *peer = mbedtls_ssl_get_peer_cert(&s->ssl);
    const mbedtls_x509_name *name;

    if (!peer || cap == 0) {
        return -PE_STATE;
    }
    cn[0] = '\0';
    for (name = &peer->subject; name; name = name->next) {
        if (name->oid.p && MBEDTLS_OID_CMP(MBEDTLS_OID_AT_CN, &name->oid) == 0) {
            return client_name_from_cn(name->val.p, name->val.len, cn, cap);
        }
    }
    return -PE_STATE;
}
