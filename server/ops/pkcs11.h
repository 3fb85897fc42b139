/* server/ops/pkcs11.h: the server's certificate and private key on a PKCS#11 token, through
 * pkcs11-helper (the library openvpn 2.6 uses; its pkcs11.c and pkcs11_mbedtls.c are the model
 * of what is set up here): providers with 2.6's per-provider properties, the certificate by its
 * serialized id (what `--show-pkcs11-ids` prints), the log-in with the token's PIN, signatures.
 *
 * pkcs11-helper keeps its state in the process (one set of providers): pkcs11_start once, before
 * any other call, on the main thread; pkcs11_stop at the end. A signature may be made on any
 * thread (pkcs11-helper locks its sessions); it blocks until the token answers.
 */
#ifndef SERVER_OPS_PKCS11_H
#define SERVER_OPS_PKCS11_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PKCS11_PIN_MAX 256 /* bytes of a PIN with its NUL, as 2.6's USER_PASS_LEN */

/* One `pkcs11-providers` library with the properties the other pkcs11-* lists give it at the
 * same position (2.6 options.c, pkcs11_addProvider). */
struct pkcs11_provider {
    const char *path;      /* the provider library (dlopen) */
    bool protected_auth;   /* pkcs11-protected-authentication: PIN on the reader's pad */
    unsigned private_mode; /* pkcs11-private-mode: PKCS11H_PRIVATEMODE_MASK_* (0: auto) */
    bool cert_private;     /* pkcs11-cert-private: the certificate is read after the log-in */
};

/* Ask for a token's PIN: label is the token's label (2.6 names the request "LABEL token"),
 * retry counts the wrong ones before (0 first). Writes the PIN (NUL-terminated, pin_cap bytes,
 * PKCS11_PIN_MAX) and returns true, or returns false to give up. Runs on the thread of the call
 * that needs the log-in. */
typedef bool (*pkcs11_pin_fn)(void *ctx, const char *label, unsigned retry, char *pin,
                              size_t pin_cap);

/* Set up pkcs11-helper and load the providers (n of them). pin_cache_s: pkcs11-pin-cache, the
 * seconds a log-in lasts (-1: for good). PIN requests go to pin_fn(ctx) (replaced with
 * pkcs11_set_pin_fn). 0, or -EIO with the reason in errbuf (errbuf_len bytes) when pkcs11-helper
 * fails or a provider does not load (2.6 goes on without a provider that failed; the certificate
 * is then not found and start-up fails there: here the provider is named). Main thread. */
int pkcs11_start(const struct pkcs11_provider *providers, size_t n, int pin_cache_s,
                 pkcs11_pin_fn pin_fn, void *ctx, char *errbuf, size_t errbuf_len);

/* Who is asked for a PIN from now on (NULL: nobody, a log-in fails). Main thread, while no
 * signature is being made. */
void pkcs11_set_pin_fn(pkcs11_pin_fn pin_fn, void *ctx);

/* Unload the providers and pkcs11-helper's state; every key must have been freed. No-op when not
 * started. Main thread. */
void pkcs11_stop(void);

struct pkcs11_key;

/* The certificate named id (a serialized id: `--show-pkcs11-ids`, pkcs11-id) and its key:
 * *key (free with pkcs11_key_free), the certificate's DER into *der (malloc'd, *der_len bytes,
 * the caller frees). With cert_private the log-in (and its PIN) comes first. 0, -EINVAL (id does
 * not parse), -ENOENT (no such certificate on the tokens), -ENOMEM, -EIO; the reason in errbuf.
 * Main thread. */
int pkcs11_key_open(const char *id, struct pkcs11_key **key, uint8_t **der, size_t *der_len,
                    char *errbuf, size_t errbuf_len);

/* Log in to key's token now (the PIN is asked, up to pkcs11-helper's three tries), so that the
 * signatures to come need no PIN. 0, -EACCES (no PIN, or the PIN is wrong: the token refused
 * it), -ENOENT (logged in, but no private key has the certificate's id), -EIO; the reason in
 * errbuf. Main thread. */
int pkcs11_key_login(struct pkcs11_key *key, char *errbuf, size_t errbuf_len);

/* Sign with key: for an RSA key, in is a DigestInfo and the hash (PKCS#1 v1.5, CKM_RSA_PKCS);
 * for an EC key (is_ec), the hash (CKM_ECDSA), and the signature is given DER-encoded (RFC 5480
 * Ecdsa-Sig-Value) as TLS wants it. sig: sig_cap bytes (the modulus length, or 2 x the curve's
 * bytes + 9), *sig_len set. Blocks until the token answers. 0, -EACCES (the log-in is gone and
 * no PIN was given), -ENOSPC, -EIO; the reason in errbuf. Any thread, one call per key at a time.
 */
int pkcs11_key_sign(struct pkcs11_key *key, bool is_ec, const uint8_t *in, size_t in_len,
                    uint8_t *sig, size_t sig_cap, size_t *sig_len, char *errbuf, size_t errbuf_len);

/* Free key (NULL: no-op). Main thread. */
void pkcs11_key_free(struct pkcs11_key *key);

/* `--show-pkcs11-ids PROVIDER [CERT-PRIVATE]` (2.6 show_pkcs11_ids): every certificate the
 * provider's tokens hold, with its subject, serial number and serialized id, to out; a PIN, when
 * one is needed (cert_private), is read from the terminal. 0, or -EIO with the reason in errbuf.
 * Starts and stops pkcs11-helper itself: not with pkcs11_start. Main thread. */
int pkcs11_show_ids(const char *provider, bool cert_private, FILE *out, char *errbuf,
                    size_t errbuf_len);

/* pkcs11-id-count (2.6 pkcs11_management_id_count): how many certificates the loaded
 * providers' tokens show without a log-in (0 when not started), or -EBUSY while the key is in
 * use (a signature, the log-in, a PIN being asked: pkcs11-helper's locks are held until they
 * end). Never waits. Any thread. */
int pkcs11_id_count(void);

/* pkcs11-id-get INDEX (2.6 pkcs11_management_id_get): the serialized id of the certificate at
 * index (in pkcs11_id_count's order) into *id and its DER in base64 into *b64 (both malloc'd,
 * the caller frees). 0, or -ENOENT (no such index, or not started), -EBUSY (the key is in use,
 * as above), -ENOMEM, -EIO. Never waits. Any thread. */
int pkcs11_id_get(int index, char **id, char **b64);

/* Read a PIN from the terminal without echo, after prompt (2.6's console prompt). false when
 * there is no terminal or nothing was typed. pin: pin_cap bytes. Main thread. */
bool pkcs11_pin_from_tty(const char *prompt, char *pin, size_t pin_cap);

#endif /* SERVER_OPS_PKCS11_H */
