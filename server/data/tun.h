/* server/data/tun.h: the Linux TUN device, one non-blocking fd per queue.
 *
 * The device is opened with IFF_TUN | IFF_NO_PI | IFF_MULTI_QUEUE (linux/if_tun.h): each read
 * returns one bare IP packet and each write takes one (IFF_TAP for `dev tap`: Ethernet frames); the
 * kernel spreads outgoing packets over the queues by flow unless a steering program is attached.
 * Needs CAP_NET_ADMIN to open and configure; the fds keep working after privileges are dropped.
 * Each fd is used by one thread only (its worker); open, configure and close run on the main
 * thread.
 */
#ifndef SERVER_DATA_TUN_H
#define SERVER_DATA_TUN_H

#include <stdbool.h>
#include <stdint.h>

#define TUN_MAX_QUEUES 64

struct tun_dev {
    char name[16]; /* the interface name the kernel gave, NUL-terminated (IFNAMSIZ) */
    int fds[TUN_MAX_QUEUES];
    int n_queues;
    bool has_vnet_hdr; /* every read and write starts with a struct virtio_net_hdr (10 bytes) */
    bool has_offload;  /* TSO4/TSO6/CSUM are on: reads may be super-packets (tun_offload.h) */
    int offload_errno; /* why TUNSETOFFLOAD failed, when has_vnet_hdr && !has_offload */
};

/* Create (or attach to) the device and open n_queues queues (1..TUN_MAX_QUEUES), each fd
 * O_NONBLOCK | O_CLOEXEC. With want_offload every queue also gets IFF_VNET_HDR and the device
 * TUNSETOFFLOAD(TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6): reads may then be TCP super-packets of up
 * to 64 KiB or carry a partial checksum, and writes may be super-packets (see
 * proto/tun_offload.h); a kernel refusing the offloads leaves has_offload false (the headers
 * stay, all empty). dev is openvpn's --dev argument: "tun" lets the kernel pick the first
 * free tunN; any other name (e.g. "tun3", "vpn0", at most 15 bytes, no '/' or whitespace or '%')
 * is used as is. With is_tap the device is a tap device (IFF_TAP: each read and write is one
 * Ethernet frame; "tap" lets the kernel pick tapN), never with want_offload (-EINVAL).
 * out is filled on success; the caller then owns the fds (tun_close).
 * Returns 0 or -errno: -EINVAL for a bad name or count, -ENOENT when /dev/net/tun is missing,
 * -EPERM without CAP_NET_ADMIN; -EINVAL or -EBUSY when the name belongs to a device of another
 * kind, to a tun device without multiqueue, or to one already in use. Nothing is left open on
 * error. */
int tun_open(const char *dev, int n_queues, bool want_offload, bool is_tap,
             struct tun_dev *out); /* -EBUSY: dev exists */

/* The device's MAC address (a tap device's; SIOCGIFHWADDR) into mac. 0 or -errno. */
int tun_get_mac(const struct tun_dev *t, uint8_t mac[6]);

/* Give a tap device the MAC address mac (`lladdr`; SIOCSIFHWADDR, before the link is up). 0 or
 * -errno. */
int tun_set_mac(const struct tun_dev *t, const uint8_t mac[6]);

/* Set the device's transmit queue length to qlen packets (SIOCSIFTXQLEN on an AF_INET datagram
 * socket; `txqueuelen`, as openvpn 2.6 tun.c open_tun on Linux). Main thread. Returns 0 or
 * -errno (-EINVAL for qlen < 0 or no device; -EPERM without CAP_NET_ADMIN). */
int tun_set_txqueuelen(const struct tun_dev *t, int qlen);

/* Give the device an IPv4 address and netmask (host byte order), set its MTU in bytes and bring
 * the link up, through ioctls on an AF_INET datagram socket (SIOCSIFADDR, SIOCSIFNETMASK,
 * SIOCSIFMTU, SIOCSIFFLAGS). Like `ip addr add` this makes the kernel route the subnet to the
 * device. Returns 0 or -errno (-EINVAL for an MTU outside 68..65535). */
int tun_configure(const struct tun_dev *t, uint32_t addr, uint32_t netmask, int mtu);

/* Give the device the point-to-point address LOCAL with peer REMOTE (host byte order), set its
 * MTU and bring it up (SIOCSIFADDR, SIOCSIFNETMASK 255.255.255.255, SIOCSIFDSTADDR, ...), as
 * openvpn 2.6 configures a tun with topology net30 or p2p (tun.c: `ip addr add LOCAL peer
 * REMOTE`). Only REMOTE is routed into the device; add the subnet's route with tun_add_route().
 * Returns 0 or -errno (-EINVAL for an MTU outside 68..65535). */
int tun_configure_p2p(const struct tun_dev *t, uint32_t local, uint32_t remote, int mtu);

/* Add an IPv6 address (16 bytes, network order) with prefix length plen (0..128) to the device
 * (SIOCSIFADDR on an AF_INET6 socket, struct in6_ifreq; the kernel adds the prefix route).
 * Call after tun_configure() brought the link up. Returns 0 or -errno. */
int tun_configure_ipv6(const struct tun_dev *t, const uint8_t addr[16], int plen);

/* Add a kernel route for family 4 or 6 (addr 4 or 16 bytes, network order, prefix plen) into
 * the device, in routing table `table` (0: the main table; openvpn 2.7's `route-table`), like
 * openvpn's `route`/`route-ipv6` on a tun server (route.c, networking_sitnl.c). metric < 0
 * leaves the kernel's default (0 for IPv4, 1024 for IPv6). An rtnetlink RTM_NEWROUTE on a
 * socket of its own; main thread or the acceptor's. Returns 0 or -errno (-EEXIST when the route
 * is there already, -EPERM without CAP_NET_ADMIN). */
int tun_add_route(const struct tun_dev *t, int family, const uint8_t *addr, int plen, int metric,
                  uint32_t table);

/* Attach a BPF_PROG_TYPE_SOCKET_FILTER program that picks the queue for each outgoing packet
 * (TUNSETSTEERINGEBPF); prog_fd -1 detaches it. The program is shared by all queues, so one
 * call on any fd suffices. Returns 0 or -errno (-EINVAL on kernels without it). */
int tun_set_steering_ebpf(const struct tun_dev *t, int prog_fd);

/* Close every queue fd; the kernel removes the device with the last one (it is not persistent).
 * Leaves t with n_queues 0 and fds -1; safe to call twice. */
void tun_close(struct tun_dev *t);

#endif /* SERVER_DATA_TUN_H */
