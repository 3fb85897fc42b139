/* proto/cert_check.c: certificate usage checks on a verified peer certificate. */
#include "proto/cert_check.h"

#include <mbedtls/oid.h>

#include "proto/errors.h"

int cert_check_remote_tls_client(const mbedtls_x509_crt *crt, const char **why)
{
    if (!crt) {
        *why = "no client certificate";
        return -PE_AUTH;
    }
    if (!(crt->ext_types & MBEDTLS_X509_EXT_KEY_USAGE)) {
        *why = "the client certificate has no key usage extension (remote-cert-tls client)";
        return -PE_AUTH;
    }
    /* mbedTLS accepts a certificate without the extension as "any usage"; openvpn does not. */
    if (!(crt->ext_types & MBEDTLS_X509_EXT_EXTENDED_KEY_USAGE) ||
        mbedtls_x509_crt_check_extended_key_usage(crt, MBEDTLS_OID_CLIENT_AUTH,
                                                  MBEDTLS_OID_SIZE(MBEDTLS_OID_CLIENT_AUTH)) != 0) {
        *why = "the client certificate lacks extended key usage TLS Web Client Authentication "
               "(remote-cert-tls client)";
        return -PE_AUTH;
    }
    return 0;
}
