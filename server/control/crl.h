/* server/control/crl.h: crl-verify at run time: the CRL is handed to the TLS configuration at
 * start-up and read again whenever its file changes, so that revoking a certificate needs no
 * restart (openvpn 2.6 does the same, ssl.c tls_ctx_reload_crl: it compares the file's mtime at
 * each new connection). Acceptor thread only: the TLS configuration is the acceptor's.
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
    uint64_t next_check_ms;
};

/* Give tls the CRL of cfg (if any) and start watching its file. errbuf gets the reason on
 * failure. Returns 0 or -EINVAL. */
int crl_watch_init(struct crl_watch *w, const struct config *cfg, struct tls_server_conf *tls,
                   char *errbuf, size_t errbuf_len);

/* At most once a second (now_ms: the loop's clock): if the file changed, read it and replace
 * the CRL, holding lock for writing meanwhile (handshake steps on other threads read-lock it);
 * a file that cannot be read or parsed is logged and the previous CRL kept. Returns whether the
 * CRL was replaced. */
bool crl_watch_tick(struct crl_watch *w, struct tls_server_conf *tls, pthread_rwlock_t *lock,
                    uint64_t now_ms);

#endif /* SERVER_CONTROL_CRL_H */
