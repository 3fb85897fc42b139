/* server/control/crl_dir.c: see crl_dir.h. */
#include "server/control/crl_dir.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <mbedtls/bignum.h>

#include "proto/cert_check.h"
#include "server/hooks/hook_env.h"

/* The serial number of crt in decimal into out (cap bytes); false when it cannot be read. */
static bool serial_decimal(const mbedtls_x509_crt *crt, char *out, size_t cap)
{
    mbedtls_mpi serial;
    size_t olen = 0;
    bool is_ok;

    mbedtls_mpi_init(&serial);
    is_ok = mbedtls_mpi_read_binary(&serial, crt->serial.p, crt->serial.len) == 0 &&
            mbedtls_mpi_write_string(&serial, 10, out, cap, &olen) == 0;
    mbedtls_mpi_free(&serial);
    return is_ok;
}

bool crl_dir_admits(const char *dir, const mbedtls_x509_crt *leaf, const mbedtls_x509_crt *trusted,
                    char *why, size_t why_len)
{
    const mbedtls_x509_crt *chain[HOOK_CERT_DEPTH_MAX];
    size_t n = hook_cert_chain(leaf, trusted, chain, HOOK_CERT_DEPTH_MAX);

    /* from the top down, as 2.6's verify callback sees them */
    for (size_t i = n; i-- > 0;) {
        char serial[160], path[4096], subject[CERT_CHECK_SUBJECT_MAX];
        int fd;

        if (!serial_decimal(chain[i], serial, sizeof(serial))) {
            continue; /* 2.6: "serial number is not available": not revoked */
        }
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, serial) >= sizeof(path)) {
            continue; /* 2.6: "filename overflow": not revoked */
        }
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            continue;
        }
        close(fd);
        cert_check_subject(chain[i], subject, sizeof(subject));
        snprintf(why, why_len,
                 "crl-verify: the certificate at depth %zu (%s), serial=%s, is revoked (%s "
                 "exists)",
                 i, subject, serial, path);
        return false;
    }
    return true;
}
