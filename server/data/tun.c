/* server/data/tun.c: Linux TUN device; see tun.h. */
#include "server/data/tun.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if_arp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

_Static_assert(sizeof(((struct tun_dev *)0)->name) == IFNAMSIZ, "name holds an interface name");

static bool name_ok(const char *dev)
{
    size_t len = strnlen(dev, IFNAMSIZ);

    if (len == 0 || len >= IFNAMSIZ || strcmp(dev, ".") == 0 || strcmp(dev, "..") == 0) {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)dev[i];
        if (ch <= ' ' || ch == '/' || ch == '%' || ch == ':' || ch >= 0x7f) {
            return false;
        }
    }
    return true;
}

/* Open one queue of the device named in ifr (a pattern like "tun%d" the first time) and copy
 * the name the kernel chose back into ifr. With is_first the device must not exist yet
 * (IFF_TUN_EXCL: -EBUSY), so a second server never joins another one's device as extra queues.
 * Returns the fd or -errno. */
static int open_queue(struct ifreq *ifr, bool is_first, bool has_vnet_hdr, bool is_tap)
{
    int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    int err;

    if (fd < 0) {
        return -errno;
    }
    ifr->ifr_flags = (is_tap ? IFF_TAP : IFF_TUN) | IFF_NO_PI | IFF_MULTI_QUEUE |
                     (is_first ? IFF_TUN_EXCL : 0) | (has_vnet_hdr ? IFF_VNET_HDR : 0);
    if (ioctl(fd, TUNSETIFF, ifr) < 0) {
        err = -errno;
        close(fd);
        return err;
    }
    return fd;
}

int tun_open(const char *dev, int n_queues, bool want_offload, bool is_tap, struct tun_dev *out)
{
    struct tun_dev t;
    struct ifreq ifr;
    int fd;

    if (!dev || n_queues < 1 || n_queues > TUN_MAX_QUEUES || !name_ok(dev)) {
        return -EINVAL;
    }
    memset(&t, 0, sizeof(t));
    for (int i = 0; i < TUN_MAX_QUEUES; i++) {
        t.fds[i] = -1;
    }
    if (is_tap && want_offload) {
        return -EINVAL; /* frames are not IP packets: the offloads do not apply */
    }
    memset(&ifr, 0, sizeof(ifr));
    /* openvpn's "--dev tun" / "--dev tap" means: let the kernel number it. */
    if (strcmp(dev, "tun") == 0 || strcmp(dev, "tap") == 0) {
        snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s%%d", dev);
    } else {
        snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
    }
    for (int i = 0; i < n_queues; i++) {
        fd = open_queue(&ifr, i == 0, want_offload, is_tap);
        if (fd < 0) {
            tun_close(&t);
            return fd;
        }
        t.fds[i] = fd;
        t.n_queues = i + 1;
    }
    memcpy(t.name, ifr.ifr_name, IFNAMSIZ);
    t.name[IFNAMSIZ - 1] = '\0';
    t.has_vnet_hdr = want_offload;
    if (want_offload) {
        /* The device's features, so one call covers every queue. */
        unsigned offloads = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6;

        if (ioctl(t.fds[0], TUNSETOFFLOAD, offloads) == 0) {
            t.has_offload = true;
        } else {
            t.offload_errno = errno;
        }
    }
    *out = t;
    return 0;
}

int tun_get_mac(const struct tun_dev *t, uint8_t mac[6])
{
    struct ifreq ifr;

    if (t->n_queues < 1) {
        return -EINVAL;
    }
    memset(&ifr, 0, sizeof(ifr));
    memcpy(ifr.ifr_name, t->name, IFNAMSIZ);
    if (ioctl(t->fds[0], SIOCGIFHWADDR, &ifr) < 0) {
        return -errno;
    }
    memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
    return 0;
}

int tun_set_mac(const struct tun_dev *t, const uint8_t mac[6])
{
    struct ifreq ifr;

    if (t->n_queues < 1) {
        return -EINVAL;
    }
    memset(&ifr, 0, sizeof(ifr));
    memcpy(ifr.ifr_name, t->name, IFNAMSIZ);
    ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
    memcpy(ifr.ifr_hwaddr.sa_data, mac, 6);
    return ioctl(t->fds[0], SIOCSIFHWADDR, &ifr) < 0 ? -errno : 0;
}

int tun_set_txqueuelen(const struct tun_dev *t, int qlen)
{
    struct ifreq ifr;
    int sock, err = 0;

    if (t->n_queues < 1 || qlen < 0) {
        return -EINVAL;
    }
    sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (sock < 0) {
        return -errno;
    }
    memset(&ifr, 0, sizeof(ifr));
    memcpy(ifr.ifr_name, t->name, IFNAMSIZ);
    ifr.ifr_qlen = qlen;
    if (ioctl(sock, SIOCSIFTXQLEN, &ifr) < 0) {
        err = -errno;
    }
    close(sock);
    return err;
}

static int set_addr_ioctl(int sock, const char *name, unsigned long req, uint32_t addr)
{
    struct ifreq ifr;
    struct sockaddr_in sin;

    memset(&ifr, 0, sizeof(ifr));
    memset(&sin, 0, sizeof(sin));
    memcpy(ifr.ifr_name, name, IFNAMSIZ);
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(addr);
    memcpy(&ifr.ifr_addr, &sin, sizeof(sin));
    return ioctl(sock, req, &ifr) < 0 ? -errno : 0;
}

static int configure_link(int sock, const char *name, int mtu)
{
    struct ifreq ifr;

    memset(&ifr, 0, sizeof(ifr));
    memcpy(ifr.ifr_name, name, IFNAMSIZ);
    ifr.ifr_mtu = mtu;
    if (ioctl(sock, SIOCSIFMTU, &ifr) < 0) {
        return -errno;
    }
    if (ioctl(sock, SIOCGIFFLAGS, &ifr) < 0) {
        return -errno;
    }
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    return ioctl(sock, SIOCSIFFLAGS, &ifr) < 0 ? -errno : 0;
}

/* IPv4 address, then netmask (SIOCSIFADDR resets the mask to the classful default), then with
 * peer != 0 the point-to-point destination, then link up with mtu. */
static int configure_v4(const struct tun_dev *t, uint32_t addr, uint32_t netmask, uint32_t peer,
                        int mtu)
{
    int sock, err;

    if (t->n_queues < 1 || mtu < 68 || mtu > 65535) {
        return -EINVAL;
    }
    sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (sock < 0) {
        return -errno;
    }
    err = set_addr_ioctl(sock, t->name, SIOCSIFADDR, addr);
    if (!err) {
        err = set_addr_ioctl(sock, t->name, SIOCSIFNETMASK, netmask);
    }
    if (!err && peer != 0) {
        err = set_addr_ioctl(sock, t->name, SIOCSIFDSTADDR, peer);
    }
    if (!err) {
        err = configure_link(sock, t->name, mtu);
    }
    close(sock);
    return err;
}

int tun_configure(const struct tun_dev *t, uint32_t addr, uint32_t netmask, int mtu)
{
    return configure_v4(t, addr, netmask, 0, mtu);
}

int tun_configure_p2p(const struct tun_dev *t, uint32_t local, uint32_t remote, int mtu)
{
    /* As `ifconfig tunN LOCAL pointopoint REMOTE`: a /32 with a peer; the kernel routes REMOTE
     * into the device. */
    return configure_v4(t, local, 0xFFFFFFFFu, remote, mtu);
}

int tun_configure_ipv6(const struct tun_dev *t, const uint8_t addr[16], int plen)
{
    struct in6_ifreq {
        struct in6_addr ifr6_addr;
        uint32_t ifr6_prefixlen;
        int ifr6_ifindex;
    } req; /* linux/ipv6.h's layout; that header clashes with netinet/in.h */
    int sock, err = 0;
    unsigned idx = if_nametoindex(t->name);

    if (idx == 0) {
        return -errno;
    }
    if (plen < 0 || plen > 128) {
        return -EINVAL;
    }
    sock = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (sock < 0) {
        return -errno;
    }
    memset(&req, 0, sizeof(req));
    memcpy(&req.ifr6_addr, addr, 16);
    req.ifr6_prefixlen = (uint32_t)plen;
    req.ifr6_ifindex = (int)idx;
    if (ioctl(sock, SIOCSIFADDR, &req) < 0) {
        err = -errno;
    }
    close(sock);
    return err;
}

/* An RTM_NEWROUTE request: the message, its rtmsg and room for its attributes. */
struct route_req {
    struct nlmsghdr nh;
    struct rtmsg rt;
    uint8_t attrs[64]; /* RTA_DST (16), RTA_OIF, RTA_TABLE, RTA_PRIORITY (4 each), headers */
};

static void route_attr(struct route_req *r, unsigned short type, const void *data, size_t len)
{
    struct rtattr *a = (struct rtattr *)(void *)((uint8_t *)r + NLMSG_ALIGN(r->nh.nlmsg_len));

    a->rta_type = type;
    a->rta_len = (unsigned short)RTA_LENGTH(len);
    memcpy(RTA_DATA(a), data, len);
    r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/* Send req on a new NETLINK_ROUTE socket and read the kernel's acknowledgement: 0 or -errno. */
static int route_send(struct route_req *req)
{
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    struct {
        struct nlmsghdr nh;
        struct nlmsgerr err;
    } ack;
    ssize_t n;
    int sock = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE), err;

    if (sock < 0) {
        return -errno;
    }
    if (sendto(sock, req, req->nh.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
        err = -errno;
    } else if ((n = recv(sock, &ack, sizeof(ack), 0)) < 0) {
        err = -errno;
    } else if ((size_t)n < sizeof(ack.nh) + sizeof(ack.err.error) ||
               ack.nh.nlmsg_type != NLMSG_ERROR) {
        err = -EPROTO;
    } else {
        err = ack.err.error; /* 0, or -errno */
    }
    close(sock);
    return err;
}

int tun_add_route(const struct tun_dev *t, int family, const uint8_t *addr, int plen, int metric,
                  uint32_t table)
{
    struct route_req req;
    size_t addr_len = family == 4 ? 4 : 16;
    uint32_t oif, tbl = table != 0 ? table : RT_TABLE_MAIN, prio;

    if ((family != 4 && family != 6) || plen < 0 || plen > (int)addr_len * 8) {
        return -EINVAL;
    }
    oif = if_nametoindex(t->name);
    if (oif == 0) {
        return -errno;
    }
    memset(&req, 0, sizeof(req));
    req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
    req.nh.nlmsg_type = RTM_NEWROUTE;
    req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
    req.nh.nlmsg_seq = 1;
    req.rt.rtm_family = family == 4 ? AF_INET : AF_INET6;
    req.rt.rtm_dst_len = (unsigned char)plen;
    req.rt.rtm_table = tbl < 256 ? (unsigned char)tbl : RT_TABLE_UNSPEC; /* RTA_TABLE has it */
    req.rt.rtm_protocol = RTPROT_BOOT;
    /* on-link through the device: link scope for IPv4, as `ip route add NET dev DEV` */
    req.rt.rtm_scope = family == 4 ? RT_SCOPE_LINK : RT_SCOPE_UNIVERSE;
    req.rt.rtm_type = RTN_UNICAST;
    route_attr(&req, RTA_DST, addr, addr_len);
    route_attr(&req, RTA_OIF, &oif, sizeof(oif));
    route_attr(&req, RTA_TABLE, &tbl, sizeof(tbl));
    if (metric >= 0) {
        prio = (uint32_t)metric;
        route_attr(&req, RTA_PRIORITY, &prio, sizeof(prio));
    }
    return route_send(&req);
}

int tun_set_steering_ebpf(const struct tun_dev *t, int prog_fd)
{
    if (t->n_queues < 1) {
        return -EINVAL;
    }
    return ioctl(t->fds[0], TUNSETSTEERINGEBPF, &prog_fd) < 0 ? -errno : 0;
}

void tun_close(struct tun_dev *t)
{
    for (int i = 0; i < t->n_queues && i < TUN_MAX_QUEUES; i++) {
        if (t->fds[i] >= 0) {
            close(t->fds[i]);
        }
    }
    for (int i = 0; i < TUN_MAX_QUEUES; i++) {
        t->fds[i] = -1;
    }
    t->n_queues = 0;
}
