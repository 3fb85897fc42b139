/* proto/tls_session.h: a TLS session (mbedTLS 2.28) driven through memory buffers: the server
 * side for ovpnd, the client side for the load generator and tests.
 *
 * The control channel carries TLS records inside reliable control packets (ssl.c in OpenVPN
 * 2.6). mbedTLS reads the peer's ciphertext from `in` and writes its own into `out` through
 * custom BIO callbacks; the caller moves bytes between these buffers and the reliability layer.
 * The keying-material exporter (RFC 5705, "tls-ekm") is computed from the secrets mbedTLS hands
 * to the export-keys callback, as OpenVPN's mbedTLS backend does (ssl_mbedtls.c).
 *
 * A struct tls_server_conf is read-only after init (except tls_server_conf_set_crl), so sessions
 * on it may be driven on several threads at once (Debian's mbedTLS is built with
 * MBEDTLS_THREADING_C; the DRBG given as f_rng must be thread-safe, as mbedtls_ctr_drbg_random
 * is there). A session is used by one thread at a time: whoever calls tls_session_handshake owns
 * it, its `in` and `out` queues included, until the call returns.
 */
#ifndef PROTO_TLS_SESSION_H
#define PROTO_TLS_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>
#include <mbedtls/pk.h>

#include "proto/pk_external.h"

struct tls_session;

enum tls_verify_client {
    TLS_VERIFY_CLIENT_REQUIRE = 0,
    TLS_VERIFY_CLIENT_OPTIONAL,
    TLS_VERIFY_CLIENT_NONE,
};

#define TLS_MAX_GROUPS 24
#define TLS_MAX_CIPHERSUITES 32

struct tls_server_conf {
    mbedtls_ssl_config conf;
    mbedtls_x509_crl crl; /* crl-verify, then capath's CRLs; empty until one is set */
    bool has_crl;
    size_t n_crl_own;    /* the first n_crl_own CRLs of crl are crl-verify's (set_crl), the rest
                          * capath's (tls_server_conf_add_trust) */
    mbedtls_x509_crt ca; /* `ca`, then capath's certificates */
    mbedtls_x509_crt cert;
    mbedtls_pk_context key;
    /* ECDHE groups in order of preference, MBEDTLS_ECP_DP_NONE-terminated (tls_groups_default) */
    mbedtls_ecp_group_id groups[TLS_MAX_GROUPS + 1];
    int ciphersuites[TLS_MAX_CIPHERSUITES + 1]; /* tls-cipher, 0-terminated; unused when empty */
    int *suites_no_dhe; /* `dh none`: the offered suites without the DHE ones, 0-terminated;
                         * owned, NULL until tls_server_conf_drop_dhe() */
    uint8_t (*fingerprints)[32]; /* peer-fingerprint: SHA-256 of admitted client certificates;
                                  * owned, NULL when none (tls_server_conf_set_fingerprints) */
    size_t n_fingerprints;
    bool is_fingerprint_no_ca;    /* no CA: the fingerprints stand in for the chain */
    uint8_t (*verify_hashes)[32]; /* verify-hash: fingerprints of the certificate at depth 1,
                                   * verify_hash_len bytes each (20 or 32); owned, NULL when
                                   * none (tls_server_conf_set_verify_hashes) */
    size_t n_verify_hashes, verify_hash_len;
    bool is_external_key;      /* key's signatures come from outside (tls_server_conf_set_
                                * external_key): each session gets a struct pk_ext_req */
    struct pk_ext_rng ext_rng; /* the caller's DRBG, behind pk_external_rng */
    bool is_ecdh_libcrypto;    /* X25519 runs in libcrypto (proto/ecdh_libcrypto.h) */
};

/* A growable byte queue: bytes [off, len) are pending. Owned by the session; freed whenever it
 * runs empty, so an idle session holds none. */
struct tls_bytes {
    uint8_t *data;
    size_t len;
    size_t cap;
    size_t off;
};

/* The record layer of a session whose record buffers were released
 * (tls_session_release_buffers): where Mbed TLS's pointers pointed, as offsets into each buffer,
 * and the bytes in front of the message in each (the incoming record counter is kept there). */
#define TLS_RECORD_PREFIX_MAX 48
struct tls_released {
    bool is_released;
    uint16_t in_off[5];  /* in_ctr, in_hdr, in_len, in_iv, in_msg */
    uint16_t out_off[5]; /* out_ctr, out_hdr, out_len, out_iv, out_msg */
    uint8_t in_prefix[TLS_RECORD_PREFIX_MAX];
    uint8_t out_prefix[TLS_RECORD_PREFIX_MAX];
};

/* Where a session's record buffers go when it releases them (tls_session_release_buffers, and
 * tls_session_clear of a session that could release them) and where it takes new ones from
 * (tls_session_read and tls_session_write of a released session), so that a caller can keep a
 * few for the next session instead of having them unmapped and mapped again (each is above
 * glibc's mmap threshold as ovpnd sets it). take: a block of len bytes
 * (tls_session_buf_len()) that is all zero and that free() can release (Mbed TLS frees it so
 * when the session ends with it), or NULL when out of memory. give: such a block, all zero (its
 * bytes were wiped as far as records reached, the rest never written), now the callee's. Both
 * run on the thread that called the session's function. */
struct tls_buf_hooks {
    void *(*take)(void *ctx, size_t len);
    void (*give)(void *ctx, void *block, size_t len);
    void *ctx;
};

struct tls_session {
    mbedtls_ssl_context ssl;
    struct tls_server_conf *conf;          /* borrowed */
    const struct tls_buf_hooks *buf_hooks; /* borrowed; NULL (tls_session_init's): calloc, free */
    struct tls_bytes in;                   /* peer's ciphertext not yet read by mbedTLS */
    struct tls_bytes out;                  /* our ciphertext not yet sent */
    /* how far into Mbed TLS's record buffers records have reached (bytes), to wipe no more */
    size_t in_buf_used, out_buf_used;
    struct tls_released released;
    bool is_handshake_done;
    bool has_export;
    uint8_t master_secret[48];
    uint8_t client_random[32];
    uint8_t server_random[32];
    int prf_type;       /* mbedtls_tls_prf_types */
    char verify_cn[65]; /* server side: CN of the peer's certificate seen by the verification,
                           so that a refused certificate can be named ("" if none) */
    uint8_t verify_sha256[32];      /* server side: SHA-256 of that certificate (DER) */
    bool is_fingerprint_refused;    /* its fingerprint is not in the peer-fingerprint list */
    bool is_verify_hash_refused;    /* the certificate at depth 1 is not in the verify-hash list */
    uint8_t verify_issuer_hash[32]; /* that certificate's fingerprint (verify_hash_len bytes) */
    struct pk_ext_req *pk_req;      /* the signature this handshake waits for, with an external
                                     * key (owned; NULL otherwise) */
};

/* Parse openvpn 2.6's --tls-cipher LIST for TLS 1.2: suite names separated by ':', as Mbed TLS
 * and openvpn's documentation spell them (TLS-ECDHE-ECDSA-WITH-AES-256-GCM-SHA384) or as OpenSSL
 * does for the ECDHE suites (ECDHE-ECDSA-AES256-GCM-SHA384), in any case. Names Mbed TLS does not
 * know are skipped, as OpenSSL skips what it does not know in a cipher list; the first is copied
 * into skipped (skipped_len bytes, "" when none). out gets the suites' ids, 0-terminated
 * (TLS_MAX_CIPHERSUITES + 1 entries). Returns the number of suites, or -PE_MALFORMED when none
 * is usable, -PE_NOSPACE for more than TLS_MAX_CIPHERSUITES. */
int tls_ciphers_parse(const char *list, int *out, char *skipped, size_t skipped_len);

/* The DHE suites' group: PKCS #3 parameters (PEM, NUL-terminated with len counting the NUL, or
 * DER) as `dh FILE` gives them; copied, the caller keeps pem. Without it Mbed TLS uses its
 * built-in 2048-bit group. Call after tls_server_conf_init(), on the thread that owns c.
 * Returns 0, -PE_MALFORMED (not DH parameters) or -PE_CRYPTO (out of memory). */
int tls_server_conf_set_dh(struct tls_server_conf *c, const unsigned char *pem, size_t len);

/* Offer only the suites of list (as tls_ciphers_parse takes it), as --tls-cipher does. Call
 * after tls_server_conf_init(). Returns 0 or what tls_ciphers_parse returns. */
int tls_server_conf_set_ciphers(struct tls_server_conf *c, const char *list);

/* `dh none` (openvpn 2.6 then gives the TLS library no DH group, so its server never picks a
 * DHE suite): offer the suites offered so far (tls-cipher's, or Mbed TLS's defaults) without
 * those whose key exchange is DHE, which Mbed TLS would otherwise run with its built-in group.
 * Call after tls_server_conf_set_ciphers(), on the thread that owns c. Returns 0, -PE_MALFORMED
 * when no suite is left (tls-cipher named DHE suites only), or -PE_CRYPTO (out of memory). */
int tls_server_conf_drop_dhe(struct tls_server_conf *c);

/* openvpn 2.6's --tls-cert-profile NAME for Mbed TLS (ssl_mbedtls.c tls_ctx_set_cert_profile):
 * what a peer certificate chain may use. "legacy" and "insecure": SHA-1 and up, RSA 1024 bits
 * and up, any key type and curve; "preferred": SHA-224 and up, RSA 2048 and up; "suiteb": Mbed
 * TLS's Suite B profile (SHA-256/384, ECDSA on P-256/P-384). Without the directive ovpnd keeps
 * Mbed TLS's default profile (SHA-224 and up, RSA 2048 and up). Returns the profile, or NULL for
 * another name. The returned object is static. */
const mbedtls_x509_crt_profile *tls_cert_profile_by_name(const char *name);

/* Verify peer certificates with profile (from tls_cert_profile_by_name) from now on. Call after
 * tls_server_conf_init(). */
void tls_server_conf_set_cert_profile(struct tls_server_conf *c,
                                      const mbedtls_x509_crt_profile *profile);

/* Parse openvpn 2.6's --tls-groups LIST (ssl_mbedtls.c tls_ctx_set_tls_groups): curve names
 * separated by ':', as Mbed TLS names them (x25519, secp256r1, brainpoolP256r1, ...) or as
 * OpenSSL does for the same curves (X25519, prime256v1, P-256, P-384, P-521), in any case. out
 * gets the groups in order, MBEDTLS_ECP_DP_NONE-terminated (TLS_MAX_GROUPS + 1 entries). Returns
 * 0, or -PE_MALFORMED with the first unknown (or empty) name copied into bad (bad_len bytes,
 * NUL-terminated), or -PE_NOSPACE for more than TLS_MAX_GROUPS names. */
int tls_groups_parse(const char *list, mbedtls_ecp_group_id *out, char *bad, size_t bad_len);

/* Use list (as tls_groups_parse takes it) instead of the default order for the ECDHE group and
 * the curves accepted in peer certificates, as --tls-groups does. Call after
 * tls_server_conf_init(). Returns 0 or what tls_groups_parse returns (the default order stays). */
int tls_server_conf_set_groups(struct tls_server_conf *c, const char *list, char *bad,
                               size_t bad_len);

/* Parse the PEM (or DER) blobs and build the server configuration: TLS 1.2 (mbedTLS 2.28 has no
 * TLS 1.3 server), client certificates verified against ca per `verify` (ca may be NULL, then no
 * certificate chains and tls_server_conf_set_fingerprints must follow), the export-keys
 * callback wired to the session whose handshake step runs on the calling thread. f_rng/p_rng is the
 * caller's DRBG (must outlive c). Each blob must be NUL-terminated for PEM (len includes the NUL,
 * as mbedtls_x509_crt_parse wants). errbuf gets a readable reason ("cert: ..."). Returns 0 or
 * -PE_MALFORMED, -PE_CRYPTO. */
int tls_server_conf_init(struct tls_server_conf *c, const uint8_t *ca, size_t ca_len,
                         const uint8_t *cert, size_t cert_len, const uint8_t *key, size_t key_len,
                         enum tls_verify_client verify,
                         int (*f_rng)(void *, unsigned char *, size_t), void *p_rng, char *errbuf,
                         size_t errbuf_len);

/* crl-verify: check client certificates against the CRL(s) in crl (PEM, NUL-terminated and
 * counted in crl_len, or DER) from now on; replaces an earlier CRL. The CRL must be signed by
 * the CA (mbedTLS checks each chain certificate against the CRLs of its issuer; a revoked one
 * fails the handshake with "The certificate has been revoked (is on a CRL)"). Call between
 * handshake steps only (acceptor thread). Returns 0 or -PE_MALFORMED (errbuf says why; the old
 * CRL stays). */
/* verify-hash (openvpn 2.6 ssl_verify.c, deprecated there): the certificate at depth 1 of a
 * client's verified chain (the CA that signed its certificate) must have one of the n
 * fingerprints hashes (len bytes used of each: 20 for SHA-1, 32 for SHA-256), else the
 * handshake fails and the session's is_verify_hash_refused says why. A chain of one certificate
 * has no depth 1 and is not checked, as in 2.6. The list is copied. Call after
 * tls_server_conf_init(). Returns 0 or -PE_CRYPTO (out of memory). */
int tls_server_conf_set_verify_hashes(struct tls_server_conf *c, const uint8_t (*hashes)[32],
                                      size_t n, size_t len);

int tls_server_conf_set_crl(struct tls_server_conf *c, const uint8_t *crl, size_t crl_len,
                            char *errbuf, size_t errbuf_len);

/* capath (openvpn 2.6 with OpenSSL, ssl_openssl.c tls_ctx_load_ca: a hash directory beside the
 * `ca` file in one store): trust the certificates of certs as well as the `ca` ones, and check
 * chains against the CRLs of crls as well as crl-verify's (tls_server_conf_set_crl keeps them).
 * Both lists are copied (the caller keeps and frees them); either may be NULL or empty. From
 * here on the configuration has a CA even when the certificates are none: peer-fingerprint no
 * longer stands in for one (2.6 options.c sets verify_hash_no_ca only without ca and capath).
 * Call on a configuration no session uses yet, after tls_server_conf_init (and after
 * tls_server_conf_set_fingerprints); main or acceptor thread. Returns 0, or -PE_CRYPTO (out of
 * memory; errbuf says so; c keeps what was added before the failure). */
int tls_server_conf_add_trust(struct tls_server_conf *c, const mbedtls_x509_crt *certs,
                              const mbedtls_x509_crl *crls, char *errbuf, size_t errbuf_len);

/* peer-fingerprint (openvpn 2.6 ssl_verify.c, verify_cert; ssl_verify_mbedtls.c): from now on
 * the client's own certificate (depth 0) must have one of the n SHA-256 fingerprints in fps
 * (copied). When c was built without a CA (ca NULL in tls_server_conf_init) they replace the
 * chain: a certificate that is not trusted, expired or not yet valid is judged by its
 * fingerprint alone (every other fault still fails it). With a CA the chain must verify as well.
 * A certificate that is not listed fails the handshake (verify-client-cert optional: its verify
 * result says so, MBEDTLS_X509_BADCERT_OTHER) with s->is_fingerprint_refused set. Call after
 * tls_server_conf_init, before any session runs; main thread. Returns 0 or -PE_CRYPTO (out of
 * memory). */
int tls_server_conf_set_fingerprints(struct tls_server_conf *c, const uint8_t (*fps)[32], size_t n);

/* fp as "AB:CD:..." (upper case, as `openssl x509 -fingerprint` prints it) into out (out_len
 * bytes, 96 for all of it; cut short and NUL-terminated when smaller). */
void tls_fingerprint_format(const uint8_t fp[32], char *out, size_t out_len);

/* The same for a fingerprint of len bytes (20 for SHA-1): out needs len * 3 bytes. */
void tls_fingerprint_format_len(const uint8_t *fp, size_t len, char *out, size_t out_len);

/* management-external-key: the server's signature in each handshake comes from outside (proto/
 * pk_external.h) for the certificate's public key; flags PK_EXT_*. c must have been made by
 * tls_server_conf_init with key NULL. A handshake step that needs the signature returns
 * -PE_WANT_SIGN; the owner passes s->pk_req on (pk_external_request), gives the answer
 * (pk_external_answer or pk_external_fail) and steps again. Main thread, before any session.
 * Returns 0 or -PE_UNSUPPORTED (a key type other than RSA and EC; errbuf says so). */
int tls_server_conf_set_external_key(struct tls_server_conf *c, unsigned flags, char *errbuf,
                                     size_t errbuf_len);

/* Free everything held by c (a server or a client configuration). */
void tls_server_conf_clear(struct tls_server_conf *c);

/* Build a TLS client configuration into c (the struct serves either side: it is one
 * mbedtls_ssl_config with its CA, own certificate and key; free it with
 * tls_server_conf_clear). Sessions on it (tls_session_init) are TLS clients: the first
 * tls_session_handshake() call writes the ClientHello to s->out. Same blob rules as
 * tls_server_conf_init. TLS 1.2 or later; the server certificate must chain to ca (no host name
 * check, as in openvpn). require_server_eku: like openvpn --remote-cert-tls server, the server's
 * certificate must have extendedKeyUsage serverAuth ("TLS Web Server Authentication"); a
 * certificate without the extension fails as well (openvpn ssl_verify_mbedtls.c
 * x509_verify_cert_eku). Used by the load generator and tests, never by the server.
 * Returns 0 or -PE_MALFORMED (bad PEM, key does not match), -PE_CRYPTO; errbuf gets a reason. */
int tls_client_conf_init(struct tls_server_conf *c, const uint8_t *ca, size_t ca_len,
                         const uint8_t *cert, size_t cert_len, const uint8_t *key, size_t key_len,
                         bool require_server_eku, int (*f_rng)(void *, unsigned char *, size_t),
                         void *p_rng, char *errbuf, size_t errbuf_len);

/* Set up caller-owned s on conf, a server (tls_server_conf_init) or client (tls_client_conf_init)
 * configuration. Returns 0 or -PE_CRYPTO (out of memory). */
int tls_session_init(struct tls_session *s, struct tls_server_conf *conf);

/* The length of Mbed TLS's incoming (is_in) or outgoing record buffer in bytes (about 16.7 KB,
 * fixed when the library is built), as tls_buf_hooks sees them. */
size_t tls_session_buf_len(bool is_in);

/* Free s, wiping its secrets. Safe on a zeroed struct. */
void tls_session_clear(struct tls_session *s);

/* Append ciphertext received from the peer (copied). Returns 0 or -PE_NOSPACE (no memory, or more
 * than 256 KiB pending, which no honest peer reaches). */
int tls_session_feed(struct tls_session *s, const uint8_t *data, size_t len);

/* Advance the handshake with what was fed. Returns 0 when the handshake is complete (then
 * s->is_handshake_done), -PE_WANT_IO when it needs more input, -PE_WANT_SIGN when it waits for
 * the external key's signature (s->pk_req; tls_server_conf_set_external_key), -PE_TLS on a fatal
 * TLS error (errbuf gets mbedTLS's reason and, for certificate failures, the verify result: "client
 * certificate verification failed: ..." on a server, followed by " (CN 'name')" when the
 * certificate has one; "server certificate ..." on a client). */
int tls_session_handshake(struct tls_session *s, char *errbuf, size_t errbuf_len);

/* Read decrypted application data (one record at most) into buf (cap bytes). *n = 0 when none.
 * Returns 0 or -PE_TLS (fatal; includes the peer's close_notify). */
int tls_session_read(struct tls_session *s, uint8_t *buf, size_t cap, size_t *n);

/* Encrypt len bytes of application data as one record into s->out. Returns 0 or -PE_TLS. */
int tls_session_write(struct tls_session *s, const uint8_t *data, size_t len);

/* Give the two record buffers of an established, idle session back to the allocator (about
 * 16.7 KB each in Debian's Mbed TLS 2.28, MBEDTLS_SSL_IN/OUT_BUFFER_LEN). Does nothing during
 * the handshake, while decrypted data waits to be read, or while a record is half sent or half
 * received; s keeps working as before: the next tls_session_read or tls_session_write takes
 * new buffers first. Calling thread: whoever owns s. */
void tls_session_release_buffers(struct tls_session *s);

/* Free the peer's certificate that Mbed TLS keeps after the handshake
 * (MBEDTLS_SSL_KEEP_PEER_CERTIFICATE, about 2 KB with its key). Only once whatever reads it
 * (mbedtls_ssl_get_peer_cert, tls_session_peer_cn) is done for good: both see no certificate
 * afterwards. Does nothing before the handshake is complete. TLS renegotiation, which would
 * compare a new certificate with it, is off in every configuration made here; an OpenVPN
 * renegotiation is a new TLS session with a certificate of its own. Calling thread: whoever
 * owns s. */
void tls_session_release_peer_cert(struct tls_session *s);

/* Pending ciphertext to send: pointer and length (borrowed until the next call on s). */
const uint8_t *tls_session_out_peek(const struct tls_session *s, size_t *len);

/* Mark n bytes of the pending ciphertext as sent. */
void tls_session_out_consume(struct tls_session *s, size_t n);

/* RFC 5705 exporter (no context) on the finished handshake: out_len bytes with label. Returns 0,
 * -PE_STATE (handshake not finished / no secrets), -PE_CRYPTO. */
int tls_session_export(const struct tls_session *s, const char *label, uint8_t *out,
                       size_t out_len);

/* Common name of the verified peer certificate (its first CN attribute) into cn (cap bytes,
 * NUL-terminated), control characters as '_' (client_name_from_cn, openvpn 2.6's rules).
 * Returns 0, -PE_STATE (no peer certificate, or one without a CN), -PE_MALFORMED (the CN holds
 * a NUL byte) or -PE_NOSPACE (longer than CLIENT_NAME_CN_MAX bytes, or than cap - 1); cn is ""
 * on error. */
int tls_session_peer_cn(const struct tls_session *s, char *cn, size_t cap);

#endif /* PROTO_TLS_SESSION_H */
