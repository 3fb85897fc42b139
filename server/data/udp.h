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

#include "server/addr/udp_addr.h"

struct sock_filter; /* <linux/filter.h> */

#define UDP_STEERING_PROGRAM_MAX 16 /* instructions */

/* The classic BPF program that steers the group's datagrams (SO_ATTACH_REUSEPORT_CBPF), for
 * n_workers (>= 1) workers, into code (cap instructions; UDP_STEERING_PROGRAM_MAX is enough).
 * It returns the index in the group: 0 (the acceptor) for a control packet or a datagram too
 * short to read, 1 + peer_id_worker(peer_id) for P_DATA_V2. The kernel runs it with the UDP
 * header pulled, so offset 0 is the OpenVPN opcode byte. Returns the number of instructions, 0
 * when cap is too small. Pure; any thread. */
size_t udp_steering_program(unsigned n_workers, struct sock_filter *code, size_t cap);

/* Socket options from the config, set on every socket before it is bound: `mark` (SO_MARK, 0 =
 * none) and `bind-dev` (SO_BINDTODEVICE, NULL = none), as 2.6 socket.c does. */
struct socket_opts {
    int mark;
    const char *bind_dev; /* borrowed */
};

/* Set o on fd. Returns 0 or -errno. Main thread, at start-up. */
int socket_opts_apply(int fd, const struct socket_opts *o);

/* Open n (2..65) non-blocking sockets bound to addr (AF_INET, or AF_INET6 with IPV6_V6ONLY off,
 * so that "::" takes IPv4 clients too, as openvpn does without `bind ipv6only`) into
 * fds[0..n-1], in order, each with so (socket_opts_apply), and (when want_steering) try the
 * steering program for n - 1 workers. *is_steered tells whether the kernel took it. Returns 0 or
 * -errno (all sockets closed again). Main thread, at start-up. */
int udp_group_open(const union udp_addr *addr, const struct socket_opts *so, int n, int *fds,
                   bool want_steering, bool *is_steered);

/* The receive buffer of the acceptor's socket for max_clients clients: room for a control packet
 * from each of them at once (an EXIT from every client in the same second, or their hard resets
 * after an outage), so that a burst waits in the socket's queue while the acceptor works through
 * it instead of being dropped there. UDP_RCVBUF_PER_CLIENT bytes each (a small datagram costs the
 * kernel about 1.3 KB of buffer accounting; the kernel doubles what is asked), at least the
 * 4 MB every socket asks for, at most UDP_RCVBUF_MAX. Pure. */
#define UDP_RCVBUF_PER_CLIENT 1024
#define UDP_RCVBUF_MIN (4 * 1024 * 1024)
#define UDP_RCVBUF_MAX (64 * 1024 * 1024)
int udp_rcvbuf_for_clients(long max_clients);

/* Give fd a receive buffer of bytes (the kernel doubles it) with SO_RCVBUFFORCE, which root may
 * set above net.core.rmem_max (212992 on a stock Debian host: about 300 small datagrams); where
 * that is refused, SO_RCVBUF up to rmem_max. Returns 0 or -errno of SO_RCVBUFFORCE (the smaller
 * buffer is set then). Main thread, at start-up, before privileges are dropped. */
int udp_rcvbuf_force(int fd, int bytes);

/* Room for one packet-information control message (IPv4 or IPv6) in a msghdr's control
 * buffer. */
#define UDP_PKTINFO_SPACE CMSG_SPACE(sizeof(struct in6_pktinfo))

/* `multihome`: ask the kernel for each datagram's destination address on fd, a socket of
 * family (IP_PKTINFO; on AF_INET6 also IPV6_RECVPKTINFO, for the dual-stack socket's IPv4 and
 * IPv6 clients). Returns 0 or -errno. Main thread, at start-up. */
int udp_pktinfo_enable(int fd, int family);

/* The destination of a datagram received with mh (its control buffer filled by recvmsg or
 * recvmmsg) into *out; out->family is 0 when mh carries none. Any thread; no allocation. */
void udp_pktinfo_read(const struct msghdr *mh, struct udp_local *out);

/* Write the control message that makes a datagram leave from l into buf (cap bytes, at least
 * UDP_PKTINFO_SPACE, aligned for struct cmsghdr). Returns the bytes used (for msg_controllen),
 * 0 when l is not known. IPv4 (and v4-mapped destinations of a dual-stack socket) use
 * IP_PKTINFO, which Linux also takes on an AF_INET6 socket. Any thread; no allocation. */
size_t udp_pktinfo_write(const struct udp_local *l, void *buf, size_t cap);

/* Room for one TOS or traffic-class control message. */
#define UDP_TOS_SPACE CMSG_SPACE(sizeof(int))

/* `passtos`: write the control message that gives a datagram to dst the TOS byte tos into buf
 * (cap bytes, at least UDP_TOS_SPACE, aligned for struct cmsghdr): IP_TOS for an IPv4
 * destination (also a v4-mapped one of a dual-stack socket, which Linux sends through its IPv4
 * path), IPV6_TCLASS for an IPv6 one. Returns the bytes used, 0 when tos is 0 (the socket's own
 * TOS then). Any thread; no allocation. */
size_t udp_tos_write(const union udp_addr *dst, uint8_t tos, void *buf, size_t cap);

#endif /* SERVER_DATA_UDP_H */
