/* server/udp.h: the UDP socket group of the server.
 *
 * All sockets share one SO_REUSEPORT group on the configured address and port: socket 0 is the
 * acceptor's (control plane), sockets 1..N the workers'. A classic BPF program attached with
 * SO_ATTACH_REUSEPORT_CBPF steers each datagram: control opcodes to socket 0, P_DATA_V2 to
 * socket 1 + (peer_id % N), so a data packet lands on the thread that owns its peer. Where the
 * kernel refuses the program, datagrams spread by the kernel's hash and the threads hand
 * misdelivered ones to their owner (slower, still correct).
 */
#ifndef SERVER_UDP_H
#define SERVER_UDP_H

#include <stdbool.h>
#include <netinet/in.h>

/* Open n (2..65) non-blocking sockets bound to addr into fds[0..n-1], in order, and (when
 * want_steering) try the steering program for n - 1 workers. *is_steered tells whether the
 * kernel took it.
 * Returns 0 or -errno (all sockets closed again). Main thread, at start-up. */
int udp_group_open(const struct sockaddr_in *addr, int n, int *fds, bool want_steering,
                   bool *is_steered);

/* Format a peer address as "a.b.c.d:port" into buf (at least 24 bytes). Returns buf. */
const char *udp_addr_str(const struct sockaddr_in *a, char *buf, size_t len);

/* True if both addresses have the same IPv4 address and port. */
bool udp_addr_equal(const struct sockaddr_in *a, const struct sockaddr_in *b);

#endif /* SERVER_UDP_H */
