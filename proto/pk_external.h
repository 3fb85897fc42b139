/* proto/pk_external.h: the server's private key held by a management client
 * (management-external-key, openvpn 2.6 doc/management-notes.txt, ">PK_SIGN").
 *
 * The key is an Mbed TLS pk context whose sign operation asks for a signature instead of making
 * one. Mbed TLS 2.28 signs inside mbedtls_ssl_handshake() and Debian's build has no
 * MBEDTLS_SSL_ASYNC_PRIVATE, so the sign callback cannot wait without holding the thread that
 * runs the step. It does not wait: the first time it records the hash to be signed and fails
 * with MBEDTLS_ERR_SSL_ASYNC_IN_PROGRESS. Mbed TLS (ssl_srv.c ssl_write_server_key_exchange)
 * then discards the half-written ServerKeyExchange and stays in that state, so a later
 * mbedtls_ssl_handshake() builds the message again from the start. Building it draws fresh
 * random bytes for the ECDHE key, which would change what is signed; the random bytes drawn in
 * that state are therefore recorded on the first pass and given back unchanged on the next one
 * (pk_external_rng), which makes the same parameters and the same hash, and the sign callback
 * hands over the signature that arrived meanwhile.
 *
 * One struct pk_ext_req per TLS session (one signature per handshake: the server signs its
 * ServerKeyExchange once). Used by the thread that runs the session's step (pk_external_enter
 * names the session to the callbacks, thread-local); between steps by the session's owner.
 */
#ifndef PROTO_PK_EXTERNAL_H
#define PROTO_PK_EXTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mbedtls/md.h>
#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>

#define PK_EXT_SIG_MAX 1024 /* RSA 8192 bits */
#define PK_EXT_RND_MAX 2048 /* random bytes of one ServerKeyExchange (ECDHE key and blinding) */
#define PK_EXT_DATA_MAX PK_EXT_SIG_MAX /* what is sent to be signed: at most the modulus */

/* management-external-key's flags (2.6 options.c); without pkcs1 or nopadding, pkcs1. */
#define PK_EXT_PKCS1 1u     /* RSA_PKCS1_PADDING: the client pads a DigestInfo */
#define PK_EXT_NOPADDING 2u /* RSA_NO_PADDING: the client signs the padded block as it is */
#define PK_EXT_PSS 4u       /* RSA_PKCS1_PSS_PADDING: TLS 1.3 only, never asked over TLS 1.2 */
#define PK_EXT_DIGEST 8u    /* the client may hash: ovpnd always sends the hash */

enum pk_ext_state {
    PK_EXT_NONE = 0, /* nothing asked yet */
    PK_EXT_WANTED,   /* the handshake waits for the signature of hash */
    PK_EXT_READY,    /* sig holds a signature that verified: the next step uses it */
    PK_EXT_FAILED,   /* no signature will come: the next step fails */
    PK_EXT_DONE,     /* the signature went into the ServerKeyExchange */
};

struct pk_ext_req {
    enum pk_ext_state state;
    bool is_asked; /* the owner passed the request on (pk_external_request) */
    mbedtls_md_type_t md;
    uint8_t hash[MBEDTLS_MD_MAX_SIZE];
    size_t hash_len;
    uint8_t sig[PK_EXT_SIG_MAX];
    size_t sig_len;
    uint8_t rnd[PK_EXT_RND_MAX]; /* random bytes drawn while building the ServerKeyExchange */
    size_t rnd_len, rnd_off;
    bool is_replaying;
};

/* The DRBG the configuration had: pk_external_rng's context. */
struct pk_ext_rng {
    int (*f_rng)(void *, unsigned char *, size_t);
    void *p_rng;
};

/* Make pk a key whose signatures the management client makes, for the certificate public key
 * pub (RSA or EC; borrowed, must outlive pk). flags: PK_EXT_*. Returns 0, or
 * MBEDTLS_ERR_PK_FEATURE_UNAVAILABLE for another key type, MBEDTLS_ERR_PK_ALLOC_FAILED. Any
 * thread; pk must be initialised and unused (it is freed first). */
int pk_external_setup(mbedtls_pk_context *pk, const mbedtls_pk_context *pub, unsigned flags);

/* Whether pk came from pk_external_setup. */
bool pk_external_is(const mbedtls_pk_context *pk);

/* An f_rng for mbedtls_ssl_conf_rng, ctx a struct pk_ext_rng: draws from ctx's DRBG, except in
 * the ServerKeyExchange state of the session named by pk_external_enter, where it records (first
 * pass) or replays (later passes) the bytes. Thread-safe as the DRBG is. */
int pk_external_rng(void *ctx, unsigned char *out, size_t len);

/* Around mbedtls_ssl_handshake(ssl) of a session with request r (NULL: none): names them to the
 * callbacks on this thread (enter), and forgets them (leave). */
void pk_external_enter(struct pk_ext_req *r, const mbedtls_ssl_context *ssl);
void pk_external_leave(void);

/* What to send to the management client for r (state PK_EXT_WANTED) with key pk: the bytes to
 * sign into data (cap bytes, PK_EXT_DATA_MAX is enough), *len set, and 2.6's algorithm name
 * into alg (alg_cap bytes, 64 is enough): "RSA_PKCS1_PADDING" (DigestInfo and hash),
 * "RSA_NO_PADDING" (the whole EMSA-PKCS1-v1_5 block, nopadding without pkcs1) or "ECDSA" (the
 * hash). Sets r->is_asked. Returns 0, -PE_STATE (nothing wanted), -PE_UNSUPPORTED (a digest
 * without a DigestInfo), -PE_NOSPACE. */
int pk_external_request(const mbedtls_pk_context *pk, struct pk_ext_req *r, uint8_t *data,
                        size_t cap, size_t *len, char *alg, size_t alg_cap);

/* The management client's answer sig (sig_len bytes, decoded) for r: kept when it is a valid
 * signature of r's hash by pk's public key (PKCS#1 v1.5 for RSA, DER ECDSA for EC), else r
 * fails. Returns 0 (state PK_EXT_READY), -PE_STATE (nothing wanted), -PE_AUTH (does not
 * verify; state PK_EXT_FAILED). */
int pk_external_answer(const mbedtls_pk_context *pk, struct pk_ext_req *r, const uint8_t *sig,
                       size_t sig_len);

/* No answer will come (timeout, no management client, a refused answer): the next step fails. */
void pk_external_fail(struct pk_ext_req *r);

#endif /* PROTO_PK_EXTERNAL_H */
