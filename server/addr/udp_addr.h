/* server/addr/udp_addr.h: a client's UDP address (the transport address a session talks to, as
 * opposed to its tunnel addresses): the type every thread passes around, and how it is shown,
 * compared and hashed. Pure: no I/O.
 */
#ifndef SERVER_ADDR_UDP_ADDR_H
#define SERVER_ADDR_UDP_ADDR_H

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

/* The server's own address a client's datagram arrived on, for `multihome` (IP_PKTINFO /
 * IPV6_PKTINFO): replies leave from it, as openvpn 2.6 sends them (socket.c, the link socket's
 * packet info). family 0: not known (no multihome, or not seen yet); replies then leave from
 * the address the kernel's routing picks. */
struct udp_local {
    sa_family_t family; /* AF_INET (also for v4-mapped clients of a dual-stack socket), AF_INET6 */
    int ifindex;        /* the interface it arrived on */
    union {
        struct in_addr v4; /* in_pktinfo's ipi_spec_dst */
        struct in6_addr v6;
    } addr;
};

#define UDP_ADDR_STR_MAX 56 /* "[" + IPv6 text + "]:" + port + NUL */

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

#endif /* SERVER_ADDR_UDP_ADDR_H */
