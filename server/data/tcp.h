/* server/data/tcp.h: the TCP listening sockets of the server and the ids of TCP connections.
 *
 * Each worker has its own listening socket, all in one SO_REUSEPORT group on the configured
 * address and port, so the kernel picks the worker of a connection when it is accepted (by a
 * hash of the client's address and port) and the connection stays with it: its reads, its
 * writes, and the data channel of the client's session (whose peer-id names that worker). There
 * is no hand-over of connections between threads.
 *
 * A connection is named across threads by its link id: the worker that holds it, its slot in
 * that worker's table and a generation that changes each time the slot is reused, so that a
 * message about a connection that has closed meanwhile never reaches the next one in its slot.
 * Link id 0 is "no connection" (a UDP client).
 */
#ifndef SERVER_DATA_TCP_H
#define SERVER_DATA_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/addr/udp_addr.h"
#include "server/data/udp.h"

#define TCP_LISTEN_BACKLOG 1024

/* The link id of slot (below 2^24) of worker (0..65534) in generation gen. Never 0. */
static inline uint64_t tcp_link_make(int worker, size_t slot, uint32_t gen)
{
    return (uint64_t)(gen & 0xFFFFFFu) << 40 | (uint64_t)(slot & 0xFFFFFFu) << 16 |
           (uint64_t)(worker + 1);
}

/* The worker that holds link (link != 0). */
static inline int tcp_link_worker(uint64_t link)
{
    return (int)(link & 0xFFFFu) - 1;
}

/* The slot of link in its worker's table. */
static inline size_t tcp_link_slot(uint64_t link)
{
    return (size_t)(link >> 16 & 0xFFFFFFu);
}

/* The generation of link's slot. */
static inline uint32_t tcp_link_gen(uint64_t link)
{
    return (uint32_t)(link >> 40 & 0xFFFFFFu);
}

/* Open n (1..65535) non-blocking listening sockets bound to addr (AF_INET, or AF_INET6 with
 * IPV6_V6ONLY off so that "::" takes IPv4 clients too), one SO_REUSEPORT group, into
 * fds[0..n-1], each with so (socket_opts_apply; accepted connections inherit it). Returns 0 or
 * -errno (all sockets closed again). Main thread, at start-up. */
int tcp_group_open(const union udp_addr *addr, const struct socket_opts *so, int n, int *fds);

#endif /* SERVER_DATA_TCP_H */
