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

size_t udp_steering_program(unsigned n_workers, struct sock_filter *code, size_t cap)
{
    const struct sock_filter prog[] = {
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0),
        BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, P_OPCODE_SHIFT),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, P_DATA_V2, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, 0),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
        BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xFFFFFF),
        /* peer_id_worker() (server/thread/peer_id.h) */
        BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, n_workers),
        BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 1),
        BPF_STMT(BPF_RET | BPF_A, 0),
    };
    size_t n = sizeof(prog) / sizeof(prog[0]);

    if (n > cap) {
        return 0;
    }
    memcpy(code, prog, sizeof(prog));
    return n;
}

static int attach_steering(int fd, unsigned n_workers)
{
    struct sock_filter code[UDP_STEERING_PROGRAM_MAX];
    struct sock_fprog prog = {.filter = code};

    prog.len = (unsigned short)udp_steering_program(n_workers, code, UDP_STEERING_PROGRAM_MAX);
    if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof(prog)) < 0) {
        return -errno;
    }
    return 0;
}

int udp_pktinfo_enable(int fd, int family)
{
    int one = 1;

    if (setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one)) < 0 ||
        (family == AF_INET6 &&
         setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one)) < 0)) {
        return -errno;
    }
    return 0;
}

void udp_pktinfo_read(const struct msghdr *mh, struct udp_local *out)
{
    out->family = 0;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm != NULL;
         cm = CMSG_NXTHDR((struct msghdr *)(uintptr_t)mh, cm)) {
        if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_PKTINFO &&
            cm->cmsg_len >= CMSG_LEN(sizeof(struct in_pktinfo))) {
            struct in_pktinfo pi;

            memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
            out->family = AF_INET;
            out->ifindex = pi.ipi_ifindex;
            out->addr.v4 = pi.ipi_spec_dst;
            return;
        }
        if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_PKTINFO &&
            cm->cmsg_len >= CMSG_LEN(sizeof(struct in6_pktinfo))) {
            struct in6_pktinfo pi;

            memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
            out->family = AF_INET6;
            out->ifindex = (int)pi.ipi6_ifindex;
            out->addr.v6 = pi.ipi6_addr;
            return;
        }
    }
}

size_t udp_pktinfo_write(const struct udp_local *l, void *buf, size_t cap)
{
    struct msghdr mh = {.msg_control = buf, .msg_controllen = cap};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

    if (cm == NULL || cap < UDP_PKTINFO_SPACE) {
        return 0;
    }
    if (l->family == AF_INET) {
        /* as 2.6: the interface and the source address; the kernel routes from there */
        struct in_pktinfo pi = {.ipi_ifindex = l->ifindex, .ipi_spec_dst = l->addr.v4};

        cm->cmsg_level = IPPROTO_IP;
        cm->cmsg_type = IP_PKTINFO;
        cm->cmsg_len = CMSG_LEN(sizeof(pi));
        memcpy(CMSG_DATA(cm), &pi, sizeof(pi));
        return CMSG_SPACE(sizeof(pi));
    }
    if (l->family == AF_INET6) {
        struct in6_pktinfo pi = {.ipi6_addr = l->addr.v6, .ipi6_ifindex = (unsigned)l->ifindex};

        cm->cmsg_level = IPPROTO_IPV6;
        cm->cmsg_type = IPV6_PKTINFO;
        cm->cmsg_len = CMSG_LEN(sizeof(pi));
        memcpy(CMSG_DATA(cm), &pi, sizeof(pi));
        return CMSG_SPACE(sizeof(pi));
    }
    return 0;
}

size_t udp_tos_write(const union udp_addr *dst, uint8_t tos, void *buf, size_t cap)
{
    struct msghdr mh = {.msg_control = buf, .msg_controllen = cap};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    int value = tos;
    bool is_v6 = dst->sa.sa_family == AF_INET6 && !IN6_IS_ADDR_V4MAPPED(&dst->in6.sin6_addr);

    if (tos == 0 || cm == NULL || cap < UDP_TOS_SPACE) {
        return 0;
    }
    cm->cmsg_level = is_v6 ? IPPROTO_IPV6 : IPPROTO_IP;
    cm->cmsg_type = is_v6 ? IPV6_TCLASS : IP_TOS;
    cm->cmsg_len = CMSG_LEN(sizeof(value));
    memcpy(CMSG_DATA(cm), &value, sizeof(value));
    return CMSG_SPACE(sizeof(value));
}

int udp_rcvbuf_for_clients(long max_clients)
{
    long bytes = max_clients > 0 ? max_clients * UDP_RCVBUF_PER_CLIENT : 0;

    return bytes < UDP_RCVBUF_MIN   ? UDP_RCVBUF_MIN
           : bytes > UDP_RCVBUF_MAX ? UDP_RCVBUF_MAX
                                    : (int)bytes;
}

int udp_rcvbuf_force(int fd, int bytes)
{
    int err = 0;

    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)) < 0) {
        err = -errno;
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
    }
    return err;
}

int socket_opts_apply(int fd, const struct socket_opts *o)
{
    if (o->mark != 0 && setsockopt(fd, SOL_SOCKET, SO_MARK, &o->mark, sizeof(o->mark)) < 0) {
        return -errno;
    }
    if (o->bind_dev && setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, o->bind_dev,
                                  (socklen_t)strlen(o->bind_dev)) < 0) {
        return -errno;
    }
    return 0;
}

int udp_group_open(const union udp_addr *addr, const struct socket_opts *so, int n, int *fds,
                   bool want_steering, bool *is_steered)
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
        err = socket_opts_apply(fd, so);
        if (err) {
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
