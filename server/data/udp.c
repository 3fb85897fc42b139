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

socklen_t udp_addr_len(const union udp_addr *a)
{
    return a->sa.sa_family == AF_INET6 ? sizeof(a->in6) : sizeof(a->in4);
}

void udp_addr_plain(const union udp_addr *a, union udp_addr *out)
{
    if (a->sa.sa_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&a->in6.sin6_addr)) {
        memset(out, 0, sizeof(*out));
        out->in4.sin_family = AF_INET;
        out->in4.sin_port = a->in6.sin6_port;
        memcpy(&out->in4.sin_addr, a->in6.sin6_addr.s6_addr + 12, 4);
        return;
    }
    *out = *a;
}

const char *udp_addr_str(const union udp_addr *a, char *buf, size_t len)
{
    char ip[INET6_ADDRSTRLEN];
    union udp_addr p;

    udp_addr_plain(a, &p);
    if (p.sa.sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &p.in6.sin6_addr, ip, sizeof(ip));
        snprintf(buf, len, "[%s]:%u", ip, (unsigned)ntohs(p.in6.sin6_port));
    } else if (p.sa.sa_family == AF_INET) {
        inet_ntop(AF_INET, &p.in4.sin_addr, ip, sizeof(ip));
        snprintf(buf, len, "%s:%u", ip, (unsigned)ntohs(p.in4.sin_port));
    } else {
        snprintf(buf, len, "?");
    }
    return buf;
}

bool udp_addr_equal(const union udp_addr *a, const union udp_addr *b)
{
    if (a->sa.sa_family != b->sa.sa_family) {
        return false;
    }
    if (a->sa.sa_family == AF_INET6) {
        return a->in6.sin6_port == b->in6.sin6_port &&
               memcmp(&a->in6.sin6_addr, &b->in6.sin6_addr, 16) == 0;
    }
    return a->in4.sin_addr.s_addr == b->in4.sin_addr.s_addr && a->in4.sin_port == b->in4.sin_port;
}

size_t udp_addr_bytes(const union udp_addr *a, uint8_t out[18])
{
    if (a->sa.sa_family == AF_INET6) {
        memcpy(out, &a->in6.sin6_addr, 16);
        memcpy(out + 16, &a->in6.sin6_port, 2);
        return 18;
    }
    memcpy(out, &a->in4.sin_addr, 4);
    memcpy(out + 4, &a->in4.sin_port, 2);
    return 6;
}
