/* server/control/crl.h: crl-verify and capath at run time: the CRL is handed to the TLS
 * configuration at start-up and read again whenever its file changes, so that revoking a
 * certificate needs no restart (openvpn 2.6 does the same, ssl.c tls_ctx_reload_crl: it compares
 * the file's mtime at each new connection); the certificates and CRLs of a `capath` directory
 * (capath.h) are read when the configuration is built, and a change to the directory's hashed
 * files is reported so that the caller builds a new one (2.6's OpenSSL opens the hashed files at
 * each verification, so a file added while it runs counts at the next handshake). The checks run
 * once a second on the acceptor's timer, never in a handshake: a handshake does no file I/O for
 * them. Acceptor thread only: the TLS configuration is the acceptor's.
 */
#ifndef SERVER_CONTROL_CRL_H
#define SERVER_CONTROL_CRL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "proto/tls_session.h"
#include "server/config/config.h"

struct crl_watch {
    const char *path; /* borrowed from the config; NULL: inline CRL or none, nothing to watch */
    struct timespec mtime;
    off_t size;
    const char *capath;  /* borrowed from the config (`capath DIR`, inside a chroot); NULL: none */
    uint64_t capath_sig; /* capath_signature of it when tls was built (0: unreadable) */
    uint64_t next_check_ms;
    /* The file changed and cannot be read or parsed: every client certificate is refused until
     * it can (crl_watch_unloaded); why says what went wrong, with the file's name. */
    bool is_unloaded;
    char why[320];
};

/* Give tls the CRL of cfg (if any: the file read again, or the config's copy of it when it
 * cannot be) and the certificates and CRLs of its capath directory, and start watching both.
 * root: prefixed to the paths (the chroot directory, before the server has entered it), NULL
 * for none. prev: the watch of the configuration in force (NULL at start-up): while it refuses
 * every client for an unusable CRL file, so does w, and a file that changed since prev read it
 * and cannot be used makes w refuse them too (crl_watch_tick). w must not be prev. errbuf gets
 * the reason on failure. Returns 0, -EINVAL or -ENOMEM. */
int crl_watch_init(struct crl_watch *w, const struct config *cfg, const char *root,
                   const struct crl_watch *prev, struct tls_server_conf *tls, char *errbuf,
                   size_t errbuf_len);

#define CRL_WATCH_CRL 1u    /* the CRL file changed: tls has the new CRL */
#define CRL_WATCH_CAPATH 2u /* the capath directory changed: build a new TLS configuration */

/* At most once a second (now_ms: the loop's clock): if the CRL file changed, read it and
 * replace the CRL, holding lock for writing meanwhile (handshake steps on other threads
 * read-lock it). A changed file that cannot be read or parsed is logged (once per reason) and
 * makes every client certificate refused until it can be (crl_watch_unloaded): fail closed, as
 * openvpn 2.6 (ssl_openssl.c backend_tls_ctx_reload_crl drops its CRLs, then ssl_verify.c
 * refuses "CRL not loaded"). An unreadable file is read again at each look (a chmod changes
 * neither mtime nor size; 2.6 waits for a new mtime or size), an unparsable one once it changes.
 * A missing file (being replaced) keeps the CRL in force, as 2.6. If the capath directory's
 * hashed files changed, say so (once per change). Returns CRL_WATCH_* bits. */
unsigned crl_watch_tick(struct crl_watch *w, struct tls_server_conf *tls, pthread_rwlock_t *lock,
                        uint64_t now_ms);

/* Why every client certificate is to be refused now (the CRL file changed and cannot be used:
 * a NUL-terminated text naming the file, owned by w), or NULL when the CRL is in force. The
 * first negotiation and each renegotiation of a client with a certificate check it (openvpn 2.6
 * ssl_verify.c verify_cert: "VERIFY ERROR: CRL not loaded"). Acceptor thread. */
const char *crl_watch_unloaded(const struct crl_watch *w);

#endif /* SERVER_CONTROL_CRL_H */
