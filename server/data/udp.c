/* server/data/udp.c: the UDP socket group of the server and its kernel steering program. */
#include "server/data/udp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/packet.h"

#ifndef SO_ATTACH_REUSEPORT_CBPF
#define SO_ATTACH_REUSEPORT_CBPF 51
#endif

/* Returns the index in the reuseport group: 0 for control packets, 1 + peer_id % n_workers for
 * P_DATA_V2. For UDP the kernel runs the program with the UDP header pulled, so offset 0 is the
 * OpenVPN opcode byte. A load beyond the packet ends the program with 0 (the acceptor). */
static int attach_steering(int fd, unsigned n_workers)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0),
        BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, P_OPCODE_SHIFT),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, P_DATA_V2, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, 0),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
        BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xFFFFFF),
        BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, n_workers),
        BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 1),
        BPF_STMT(BPF_RET | BPF_A, 0),
    };
    struct sock_fprog prog = {.len = sizeof(code) / sizeof(code[0]), .filter = code};

    if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof(prog)) < 0) {
        return -errno;
    }
    return 0;
}

int udp_group_open(const union udp_addr *addr, int n, int *fds, bool want_steering,
                   bool *is_steered)
{
    int i, err = 0, one = 1, off = 0;
    int family = addr->sa.sa_family;
    socklen_t len = udp_addr_len(addr);

    *is_steered = false;
    /* SO_REUSEPORT would let us join another process's group on the same port (same user):
     * make sure nobody holds it first, with a plain bind. */
    i = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (i < 0) {
        return -errno;
    }
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
        int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        int bufsz = 4 * 1024 * 1024;

        if (fd < 0) {
            err = -errno;
            goto fail;
        }
        fds[i] = fd;
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
            (family == AF_INET6 &&
             setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) < 0)) {
            err = -errno;
            i++;
            goto fail;
        }
        /* Best effort: bigger buffers absorb bursts; the kernel caps them at rmem_max. */
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof(bufsz));
        (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof(bufsz));
        if (bind(fd, &addr->sa, len) < 0) {
            err = -errno;
            i++;
            goto fail;
        }
    }
    *is_steered = want_steering && attach_steering(fds[0], (unsigned)(n - 1)) == 0;
    return 0;

fail:
    while (i-- > 0) {
        close(fds[i]);
        fds[i] = -1;
    }
    return err;
}
