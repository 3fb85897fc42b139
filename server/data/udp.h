/* server/data/udp.h: the UDP socket group of the server.
 *
 * All sockets share one SO_REUSEPORT group on the configured address and port: socket 0 is the
 * acceptor's (control plane), sockets 1..N the workers'. A classic BPF program attached with
 * SO_ATTACH_REUSEPORT_CBPF steers each datagram: control opcodes to socket 0, P_DATA_V2 to
 * socket 1 + (peer_id % N), so a data packet lands on the thread that owns its peer. Where the
 * kernel refuses the program, datagrams spread by the kernel's hash and the threads hand
 * misdelivered ones to their owner (slower, still correct).
 */
#ifndef SERVER_DATA_UDP_H
#define SERVER_DATA_UDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

/* A client's UDP address: IPv4 (an AF_INET socket) or IPv6 (an AF_INET6 socket, where IPv4
 * clients of a dual-stack socket appear as v4-mapped ::ffff:a.b.c.d). Kept as the kernel gave
 * it, so it can be handed back to sendmmsg() unchanged; udp_addr_str() and udp_addr_plain()
 * show v4-mapped addresses as IPv4. */
union udp_addr {
    struct sockaddr sa;
    struct sockaddr_in in4;
    struct sockaddr_in6 in6;
};

#define UDP_ADDR_STR_MAX 56 /* "[" + IPv6 text + "]:" + port + NUL */

/* Open n (2..65) non-blocking sockets bound to addr (AF_INET, or AF_INET6 with IPV6_V6ONLY off,
 * so that "::" takes IPv4 clients too, as openvpn does without `bind ipv6only`) into
 * fds[0..n-1], in order, and (when want_steering) try the steering program for n - 1 workers.
 * *is_steered tells whether the kernel took it.
 * Returns 0 or -errno (all sockets closed again). Main thread, at start-up. */
int udp_group_open(const union udp_addr *addr, int n, int *fds, bool want_steering,
                   bool *is_steered);

/* The socklen_t of a's family (sizeof struct sockaddr_in or sockaddr_in6). */
socklen_t udp_addr_len(const union udp_addr *a);

/* Format a client address as "a.b.c.d:port" (IPv4 and v4-mapped IPv6) or "[v6addr]:port" into
 * buf (UDP_ADDR_STR_MAX bytes is always enough). Returns buf. */
const char *udp_addr_str(const union udp_addr *a, char *buf, size_t len);

/* a as the user knows it: a v4-mapped IPv6 address becomes the AF_INET one, anything else is
 * copied. For logs, the status file and script environments, never for sending. */
void udp_addr_plain(const union udp_addr *a, union udp_addr *out);

/* True if both are the same address family, address and port. */
bool udp_addr_equal(const union udp_addr *a, const union udp_addr *b);

/* The address and port bytes of a (6 for IPv4, 18 for IPv6) into out (at least 18 bytes), for
 * hashing and keyed MACs. Returns the number of bytes written. */
size_t udp_addr_bytes(const union udp_addr *a, uint8_t out[18]);

#endif /* SERVER_DATA_UDP_H */
