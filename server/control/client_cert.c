/* server/control/client_cert.c: who a client is from its certificate, and the checks on it at
 * the first negotiation and at each renegotiation (called from admit.c once key method 2 came). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/ctr_drbg.h>

#include "proto/cert_check.h"
#include "proto/cert_name.h"
#include "proto/client_name.h"
#include "proto/cursor.h"
#include "proto/errors.h"
#include "proto/key_method.h"
#include "proto/ncp.h"
#include "proto/peer_info.h"
#include "proto/tls_session.h"
#include "proto/push.h"
#include "server/data/peer.h"
#include "server/hooks/auth.h"
#include "server/hooks/hook_env.h"
#include "server/hooks/script.h"

#include "server/control/acceptor_internal.h"
#include "server/control/crl_dir.h"

/* crl-verify's file changed and cannot be used (crl_watch_unloaded): refuse cs's certificate
 * as a failed verification (counted, logged with the address, rate-limited per session), as
 * openvpn 2.6 ssl_verify.c verify_cert refuses every certificate with "CRL not loaded". The
 * client is sent RESTART, not AUTH_FAILED: as after 2.6's failed TLS handshake (there after
 * hand-window), it tries again by itself and gets in once the file can be read. */
static void acc_refuse_crl_unloaded(struct acceptor *a, struct ctl_session *cs)
{
    char why[sizeof(a->crypto.crl.why) + 96];

    snprintf(why, sizeof(why),
             "client certificate verification failed: crl-verify: CRL not loaded: %s",
             crl_watch_unloaded(&a->crypto.crl));
    acc_refuse(a, cs, why, "RESTART");
}

/* Who the client is from its certificate: CN (or "UNDEF" when verify-client-cert lets it come
 * without one), and the checks on the certificate. Returns false when it was refused. */
bool acc_check_certificate(struct acceptor *a, struct ctl_session *cs, struct key_state *ks)
{
    const mbedtls_x509_crt *crt = mbedtls_ssl_get_peer_cert(&ks->tls->ssl);
    uint32_t flags = mbedtls_ssl_get_verify_result(&ks->tls->ssl);
    char crl_why[CERT_CHECK_SUBJECT_MAX + 4200];
    int err;

    if (!crt) {
        if (a->cfg->tls.verify_client_cert == CONFIG_VERIFY_REQUIRE) {
            acc_auth_failed(a, cs, "no client certificate");
            return false;
        }
        snprintf(cs->client.cn, sizeof(cs->client.cn),
                 "UNDEF"); /* as 2.6 names a client without one */
        return true;
    }
    if (flags != 0) {
        /* verify-client-cert optional: a certificate that is sent must still verify (2.6 with
         * OpenSSL fails the handshake then; mbed TLS reports it here). */
        char info[256];

        if (ks->tls->is_fingerprint_refused) {
            char hex[96];

            tls_fingerprint_format(ks->tls->verify_sha256, hex, sizeof(hex));
            snprintf(info, sizeof(info),
                     "its SHA-256 fingerprint %s is not listed in "
                     "peer-fingerprint",
                     hex);
        } else if (ks->tls->is_verify_hash_refused) {
            char hex[96];

            tls_fingerprint_format_len(ks->tls->verify_issuer_hash, ks->tls->conf->verify_hash_len,
                                       hex, sizeof(hex));
            snprintf(info, sizeof(info),
                     "the fingerprint %s of its CA is not listed in verify-hash", hex);
        } else {
            mbedtls_x509_crt_verify_info(info, sizeof(info), "", flags);
            info[strcspn(info, "\n")] = '\0';
        }
        snprintf(cs->client.cn, sizeof(cs->client.cn), "UNDEF");
        acc_refuse(a, cs, "client certificate verification failed", NULL);
        acc_cs_log(a, cs, LOG_INFO, "certificate problem: %s", info);
        return false;
    }
    if (crl_watch_unloaded(&a->crypto.crl)) {
        acc_refuse_crl_unloaded(a, cs);
        return false;
    }
    if (a->cfg->cert.crl_dir && !crl_dir_admits(a->cfg->cert.crl_dir, crt, &a->crypto.tls->conf.ca,
                                                crl_why, sizeof(crl_why))) {
        acc_auth_failed(a, cs, crl_why);
        return false;
    }
    if (a->cfg->cert.n_username_fields > 0) {
        /* x509-username-field: the client's name from those fields (2.6 verify_cert) */
        char why[400];

        if (cert_name_get(crt, a->cfg->cert.username_fields, a->cfg->cert.n_username_fields,
                          cs->client.cn, sizeof(cs->client.cn), why, sizeof(why))) {
            snprintf(cs->client.cn, sizeof(cs->client.cn), "UNDEF");
            acc_auth_failed(a, cs, why);
            return false;
        }
        err = 0;
    } else {
        err = tls_session_peer_cn(ks->tls, cs->client.cn, sizeof(cs->client.cn));
    }
    if (err || !cs->client.cn[0]) {
        /* A CN cut at a NUL byte or at a length limit could be another client's name
         * (proto/client_name.h). */
        char why[200] = "the client certificate has no common name (CN)";

        if (err == -PE_MALFORMED) {
            snprintf(why, sizeof(why),
                     "the client certificate's common name (CN '%s') holds a NUL byte",
                     ks->tls->verify_cn);
        } else if (err == -PE_NOSPACE) {
            /* its first CLIENT_NAME_CN_MAX bytes, cut where a UTF-8 character starts */
            const char *cn = ks->tls->verify_cn;
            size_t n = strnlen(cn, CLIENT_NAME_CN_MAX);

            while (n > 0 && ((unsigned char)cn[n] & 0xC0) == 0x80) {
                n--;
            }
            snprintf(why, sizeof(why),
                     "the client certificate's common name (CN '%.*s...') is longer than %d "
                     "bytes",
                     (int)n, cn, CLIENT_NAME_CN_MAX);
        }
        snprintf(cs->client.cn, sizeof(cs->client.cn), "UNDEF");
        acc_auth_failed(a, cs, why);
        return false;
    }
    if (a->cfg->tls.verify_x509_name) {
        char why[700];

        if (cert_check_x509_name(crt, cs->client.cn, a->cfg->tls.verify_x509_name,
                                 a->cfg->tls.verify_x509_type, why, sizeof(why))) {
            acc_auth_failed(a, cs, why);
            return false;
        }
    }
    if (a->cfg->tls.remote_cert_tls_client) {
        const char *bad = NULL;

        if (cert_check_remote_tls_client(crt, &bad)) {
            acc_auth_failed(a, cs, bad);
            return false;
        }
    }
    {
        /* Without ns-cert-type, the purpose check that OpenSSL makes on a client certificate by
         * default (2.6 built with it refuses "unsuitable certificate purpose"): Mbed TLS checks
         * the key usages but not the Netscape cert type. */
        int ns = a->cfg->tls.ns_cert_type;
        char why[300], msg[340];

        if (cert_check_ns_cert_type(crt, ns == CONFIG_NS_CERT_TYPE_SERVER, why, sizeof(why))) {
            snprintf(msg, sizeof(msg), "%s%s",
                     ns == CONFIG_NS_CERT_TYPE_NONE     ? ""
                     : ns == CONFIG_NS_CERT_TYPE_CLIENT ? "ns-cert-type client: "
                                                        : "ns-cert-type server: ",
                     why);
            acc_auth_failed(a, cs, msg);
            return false;
        }
    }
    if (a->cfg->tls.has_remote_cert_ku || a->cfg->tls.remote_cert_eku) {
        char why[300];

        if ((a->cfg->tls.has_remote_cert_ku &&
             cert_check_ku(crt, a->cfg->tls.remote_cert_ku, a->cfg->tls.n_remote_cert_ku, why,
                           sizeof(why))) ||
            (a->cfg->tls.remote_cert_eku &&
             cert_check_eku(crt, a->cfg->tls.remote_cert_eku, why, sizeof(why)))) {
            acc_auth_failed(a, cs, why);
            return false;
        }
    }
    return true;
}

/* A renegotiation's certificate: the first negotiation's (the same DER; a client without one
 * stays without), which must still verify: the CRL may have been reloaded, the certificate may
 * have expired. With verify-client-cert require a failed verification has ended the TLS
 * handshake already; with optional the TLS library reports it here, and acc_check_certificate would
 * have refused it at the first negotiation. The rest of acc_check_certificate (common name,
 * remote-cert-tls) depends on the certificate alone. Returns false when the client was
 * refused. */
bool acc_recheck_certificate(struct acceptor *a, struct ctl_session *cs, struct key_state *ks)
{
    const mbedtls_x509_crt *crt = mbedtls_ssl_get_peer_cert(&ks->tls->ssl);
    uint32_t flags = mbedtls_ssl_get_verify_result(&ks->tls->ssl);
    char cn[PEER_CN_MAX] = "", info[256], why[PEER_CN_MAX + 128];
    uint8_t fp[32];

    acc_cert_fingerprint(ks->tls, fp);
    if (memcmp(fp, cs->client.cert_sha256, sizeof(fp)) != 0) {
        /* As 2.6: "client-provided SSL certs unexpectedly changed during mid-session reauth". */
        tls_session_peer_cn(ks->tls, cn, sizeof(cn));
        snprintf(why, sizeof(why), "renegotiation with a different client certificate (CN '%.64s')",
                 cn);
        acc_auth_failed(a, cs, why);
        return false;
    }
    if (crt && flags != 0) {
        mbedtls_x509_crt_verify_info(info, sizeof(info), "", flags);
        info[strcspn(info, "\n")] = '\0';
        snprintf(why, sizeof(why), "client certificate verification failed at renegotiation: %s",
                 info);
        acc_auth_failed(a, cs, why);
        return false;
    }
    if (crt && crl_watch_unloaded(&a->crypto.crl)) {
        acc_refuse_crl_unloaded(a, cs);
        return false;
    }
    if (crt && a->cfg->cert.crl_dir) {
        char crl_why[CERT_CHECK_SUBJECT_MAX + 4200];

        if (!crl_dir_admits(a->cfg->cert.crl_dir, crt, &a->crypto.tls->conf.ca, crl_why,
                            sizeof(crl_why))) {
            acc_auth_failed(a, cs, crl_why);
            return false;
        }
    }
    return true;
}

/* The client's key-method-2 message arrived on ks: authenticate, choose, answer, install. */
