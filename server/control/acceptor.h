/* server/control/acceptor.h: the control-plane thread.
 *
 * Owns socket 0 of the UDP group: the stateless HMAC-cookie exchange (nothing is stored for a
 * spoofed reset), the reliability layer, the TLS session (mbedTLS), key method 2, cipher
 * negotiation, address assignment and PUSH_REPLY. When a client's data keys are ready it hands
 * the peer to its worker (MSG_INSTALL). It also writes the status file.
 */
#ifndef SERVER_CONTROL_ACCEPTOR_H
#define SERVER_CONTROL_ACCEPTOR_H

#include <stddef.h>

struct server;
struct acceptor;
struct msg;

/* Build the acceptor of srv: TLS configuration from the certificate blobs, the tls-auth /
 * tls-crypt key, the UDP socket srv->udp_fds[0]. errbuf gets a readable reason on failure.
 * Main thread. Returns 0 or a negative code; on failure everything it set up is released and
 * *out is left as it was. */
int acceptor_new(struct server *srv, struct acceptor **out, char *errbuf, size_t errbuf_len);

/* Start the acceptor's thread. 0 or -errno. */
int acceptor_start(struct acceptor *a);

/* Ask the acceptor to tell clients goodbye (explicit-exit-notify) and stop; waits for its
 * thread. Main thread. */
void acceptor_stop(struct acceptor *a);

/* Free a (stopped, or never started) acceptor with its sessions and peers. Call only after every
 * worker has stopped, since workers use the peers. Main thread. */
void acceptor_free(struct acceptor *a);

/* Push m into the acceptor's inbox and wake it. Any thread; m is owned by the acceptor after. */
void acceptor_post(struct acceptor *a, struct msg *m);

#endif /* SERVER_CONTROL_ACCEPTOR_H */
