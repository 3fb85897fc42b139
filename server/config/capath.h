/* server/config/capath.h: `capath DIR`, a directory of CA certificates and CRLs in OpenSSL's
 * hashed layout, as openvpn 2.6 built with OpenSSL takes it (ssl_openssl.c tls_ctx_load_ca: an
 * X509_LOOKUP_hash_dir on DIR in the same store as the `ca` file, with X509_V_FLAG_CRL_CHECK |
 * X509_V_FLAG_CRL_CHECK_ALL).
 *
 * OpenSSL opens, at verification time, the files named after the hash of the name it looks for:
 * HASH.0, HASH.1, ... for certificates (by subject) and HASH.r0, HASH.r1, ... for CRLs (by
 * issuer), HASH being X509_NAME_hash_ex of the name in eight lower-case hex digits, as `openssl
 * rehash` and c_rehash name them; it reads PEM only, and stops at the first index it cannot read.
 * Other files in the directory are never opened. ovpnd reads the same files into its Mbed TLS
 * configuration (tls_server_conf_add_trust) when the configuration is built, and again whenever
 * the set of hashed files changes (crl.h), so that a file added while the server runs counts at
 * the next handshake, as it does in 2.6.
 *
 * Every certificate of a client's chain is checked against the CRL of its issuer when there is
 * one. A CA without a CRL does not refuse its clients: 2.6's verify callback
 * (ssl_verify_openssl.c verify_callback) logs X509_V_ERR_UNABLE_TO_GET_CRL and carries on, and
 * Mbed TLS checks a certificate only against CRLs of its issuer that it has.
 */
#ifndef SERVER_CONFIG_CAPATH_H
#define SERVER_CONFIG_CAPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mbedtls/x509_crt.h>

#include "proto/tls_session.h"

#define CAPATH_MAX_FILES 4096 /* hashed files read from one directory; more are left out */
#define CAPATH_NAME_MAX 20    /* "0123abcd.r" and up to nine digits, NUL */

/* One hashed file name. */
struct capath_entry {
    uint32_t hash;  /* the eight hex digits */
    bool is_crl;    /* HASH.rN: CRLs, else HASH.N: certificates */
    unsigned index; /* N */
    bool is_read;   /* capath_select: OpenSSL would open it */
    char name[CAPATH_NAME_MAX];
};

/* Whether name is one OpenSSL's hash directory opens: eight lower-case hex digits, '.', 'r' for
 * a CRL, and the index in decimal without leading zeros (by_dir.c writes "%08lx.%s%d"), e.g.
 * "9d66eef0.0" or "9d66eef0.r1". Fills *out (is_read false) when it is. */
bool capath_name_parse(const char *name, struct capath_entry *out);

/* Sort e[0..n) by hash, kind and index and mark the entries OpenSSL would open: for each hash
 * and kind, index 0, 1, 2, ... up to the first one missing (by_dir.c get_cert_by_subject_ex
 * counts up until a file cannot be loaded). Returns how many are marked. */
size_t capath_select(struct capath_entry *e, size_t n);

/* What capath_load read. */
struct capath_stats {
    size_t n_files; /* hashed files read and used */
    size_t n_certs, n_crls;
    size_t n_skipped; /* hashed files not used (each logged with the reason) */
};

/* Read the hashed files of dir (capath_select) into tls with tls_server_conf_add_trust: each
 * file must be PEM and hold only certificates (HASH.N) or CRLs (HASH.rN) that parse, named with
 * OpenSSL's hash of their subject (issuer for a CRL); a file that is not, or cannot be read, is
 * logged (LOG_WARN, the file and the reason) and left out, with the later indices of its hash as
 * OpenSSL stops there too. st gets the counts. Main or acceptor thread, on a configuration no
 * session uses yet; file I/O. Returns 0, or -errno when dir cannot be read (logged; nothing is
 * added), -ENOMEM. */
int capath_load(const char *dir, struct tls_server_conf *tls, struct capath_stats *st);

/* The same selection and checks as capath_load, for the certificates only (HASH.N files): each
 * is appended to certs (initialised by the caller, who frees it). For tools that need the CA
 * certificates themselves (ovpnd profile). Any thread; file I/O. Returns 0, -errno when dir
 * cannot be read, -ENOMEM. */
int capath_certs(const char *dir, mbedtls_x509_crt *certs, struct capath_stats *st);

/* A 64-bit digest of dir's hashed files: their names, inode numbers, sizes and modification
 * times (the target's, for symbolic links as `openssl rehash` makes them). It changes when a
 * hashed file is added, removed, renamed or rewritten. Any thread; one readdir and a stat per
 * hashed file. Returns 0, or -errno when dir cannot be read. */
int capath_signature(const char *dir, uint64_t *out);

#endif /* SERVER_CONFIG_CAPATH_H */
