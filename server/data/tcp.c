/* server/data/tcp.c: the TCP listening socket group of the server. */
#include "server/data/tcp.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

int tcp_group_open(const union udp_addr *addr, const struct socket_opts *so, int n, int *fds)
{
    int i, err = 0, one = 1, off = 0;
    int family = addr->sa.sa_family;
    socklen_t len = udp_addr_len(addr);

    /* SO_REUSEPORT would let us join another process's group on the same port (same user):
     * make sure nobody listens there first, with a plain bind. */
    i = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (i < 0) {
        return -errno;
    }
    (void)setsockopt(i, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (family == AF_INET6) {
        (void)setsockopt(i, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
    }
    if (bind(i, &addr->sa, len) < 0) {
        err = -errno;
        close(i);
        return err;
    }
    close(i);
    for (i = 0; i < n; i++) {
        int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

        if (fd < 0) {
            err = -errno;
            goto fail;
        }
        fds[i] = fd;
        /* SO_REUSEADDR: a restarted server binds while old connections sit in TIME_WAIT, as
         * openvpn's listening socket does (socket.c create_socket_tcp) */
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
            setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
            socket_opts_apply(fd, so) < 0 ||
            (family == AF_INET6 &&
             setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) < 0) ||
            bind(fd, &addr->sa, len) < 0 || listen(fd, TCP_LISTEN_BACKLOG) < 0) {
            err = -errno;
            i++;
            goto fail;
        }
    }
    return 0;

fail:
    while (i-- > 0) {
        close(fds[i]);
        fds[i] = -1;
    }
    return err;
}
