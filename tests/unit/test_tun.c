/* tests/unit/test_tun.c: the TUN device, in a throwaway network namespace.
 *
 * Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN for unshare); skipped otherwise. All work happens
 * in a forked child that first moves into a new, empty network namespace, so no device or
 * address ever appears on the host; the namespace dies with the child. The child reports the
 * first failed check through its exit status and a line on stderr.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "server/data/tun.h"

#define SKIP_STATUS 77

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s (errno %d)\n", __FILE__, __LINE__, #cond,     \
                    errno);                                                                        \
            return __LINE__ % 64 + 1;                                                              \
        }                                                                                          \
    } while (0)

static const uint32_t server_ip = 0xc6130001; /* 198.19.0.1 */
static const uint32_t peer_ip = 0xc6130002;   /* 198.19.0.2: a client behind the tunnel */

/* Run fn in a forked child inside a new network namespace; cmocka asserts on its status. */
static void run_in_netns(int (*fn)(void))
{
    pid_t pid;
    int status;

    if (geteuid() != 0) {
        skip();
    }
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (unshare(CLONE_NEWNET) != 0) {
            _exit(SKIP_STATUS);
        }
        _exit(fn());
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == SKIP_STATUS) {
        skip();
    }
    assert_int_equal(WEXITSTATUS(status), 0);
}

static int get_ifreq(int sock, const char *name, unsigned long req, struct ifreq *ifr)
{
    memset(ifr, 0, sizeof(*ifr));
    snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", name);
    return ioctl(sock, req, ifr);
}

static uint32_t ifr_ipv4(const struct ifreq *ifr)
{
    struct sockaddr_in sin;

    memcpy(&sin, &ifr->ifr_addr, sizeof(sin));
    return ntohl(sin.sin_addr.s_addr);
}

/* Wait for one packet on any queue; returns its length or -1. */
static ssize_t read_any_queue(const struct tun_dev *t, uint8_t *buf, size_t cap)
{
    struct pollfd pfd[TUN_MAX_QUEUES];

    for (int i = 0; i < t->n_queues; i++) {
        pfd[i].fd = t->fds[i];
        pfd[i].events = POLLIN;
    }
    if (poll(pfd, (nfds_t)t->n_queues, 2000) <= 0) {
        return -1;
    }
    for (int i = 0; i < t->n_queues; i++) {
        if (pfd[i].revents & POLLIN) {
            return read(t->fds[i], buf, cap);
        }
    }
    return -1;
}

/* RFC 1071 Internet checksum of an IPv4 header (not cryptography). */
static uint16_t ip_header_checksum(const uint8_t *h, size_t len)
{
    uint32_t sum = 0;

    for (size_t i = 0; i + 1 < len; i += 2) {
        sum += (uint32_t)h[i] << 8 | h[i + 1];
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return (uint16_t)~sum;
}

static int bad_arguments(void)
{
    struct tun_dev t;

    CHECK(tun_open("tun", 0, false, false, &t) == -EINVAL);
    CHECK(tun_open("tun", TUN_MAX_QUEUES + 1, false, false, &t) == -EINVAL);
    CHECK(tun_open("", 1, false, false, &t) == -EINVAL);
    CHECK(tun_open("a/b", 1, false, false, &t) == -EINVAL);
    CHECK(tun_open("tun%d", 1, false, false, &t) == -EINVAL);
    CHECK(tun_open("has space", 1, false, false, &t) == -EINVAL);
    CHECK(tun_open("sixteen-chars-xx", 1, false, false, &t) == -EINVAL);
    CHECK(if_nametoindex("tun0") == 0); /* nothing was created */
    return 0;
}

static int open_configure_close(void)
{
    struct tun_dev t, more;
    struct ifreq ifr;
    int sock;

    CHECK(tun_open("tun", 2, false, false, &t) == 0);
    CHECK(strcmp(t.name, "tun0") == 0); /* first in a fresh namespace */
    CHECK(t.n_queues == 2 && t.fds[0] >= 0 && t.fds[1] >= 0 && t.fds[2] == -1);
    CHECK(tun_configure(&t, server_ip, 0xffffff00, 1400) == 0);

    sock = socket(AF_INET, SOCK_DGRAM, 0);
    CHECK(sock >= 0);
    CHECK(get_ifreq(sock, "tun0", SIOCGIFADDR, &ifr) == 0);
    CHECK(ifr_ipv4(&ifr) == server_ip);
    CHECK(get_ifreq(sock, "tun0", SIOCGIFNETMASK, &ifr) == 0);
    CHECK(ifr_ipv4(&ifr) == 0xffffff00);
    CHECK(get_ifreq(sock, "tun0", SIOCGIFMTU, &ifr) == 0);
    CHECK(ifr.ifr_mtu == 1400);
    CHECK(get_ifreq(sock, "tun0", SIOCGIFFLAGS, &ifr) == 0);
    CHECK(ifr.ifr_flags & IFF_UP);
    CHECK((ifr.ifr_flags & IFF_POINTOPOINT) || (ifr.ifr_flags & IFF_NOARP));
    close(sock);

    CHECK(tun_configure(&t, server_ip, 0xffffff00, 67) == -EINVAL);
    CHECK(tun_set_steering_ebpf(&t, -1) == 0); /* detaching when none is attached is fine */

    /* a device that exists (another server's) is refused, never joined as extra queues; an
     * exact new name is taken as is */
    CHECK(tun_open("tun0", 1, false, false, &more) == -EBUSY);
    CHECK(tun_open("vpn7", 1, false, false, &more) == 0);
    CHECK(strcmp(more.name, "vpn7") == 0);
    tun_close(&more);
    CHECK(if_nametoindex("vpn7") == 0);

    tun_close(&t);
    CHECK(t.n_queues == 0 && t.fds[0] == -1);
    tun_close(&t);                      /* twice is harmless */
    CHECK(if_nametoindex("tun0") == 0); /* not persistent: gone with its last fd */
    return 0;
}

/* A datagram to 198.19.0.2 must come out of a queue as a bare IPv4 packet (no packet-info
 * header), and a packet written to a queue must reach a socket on 198.19.0.1. */
static int packets_both_ways(void)
{
    static const char hello[] = "hello through tun";
    struct tun_dev t;
    struct sockaddr_in peer = {.sin_family = AF_INET, .sin_port = htons(4000)};
    struct sockaddr_in local;
    socklen_t local_len = sizeof(local);
    uint8_t pkt[2048];
    char got[64];
    ssize_t n;
    int s;

    peer.sin_addr.s_addr = htonl(peer_ip);
    CHECK(tun_open("tun", 2, false, false, &t) == 0);
    CHECK(tun_configure(&t, server_ip, 0xffffff00, 1500) == 0);
    s = socket(AF_INET, SOCK_DGRAM, 0);
    CHECK(s >= 0);
    CHECK(connect(s, (struct sockaddr *)&peer, sizeof(peer)) == 0);
    CHECK(getsockname(s, (struct sockaddr *)&local, &local_len) == 0);
    CHECK(ntohl(local.sin_addr.s_addr) == server_ip); /* the kernel routes the subnet to tun0 */
    CHECK(send(s, hello, sizeof(hello), 0) == (ssize_t)sizeof(hello));

    /* the kernel may send its own IPv6 packets (router solicitation, MLD) once the link is up */
    for (int i = 0; i < 50; i++) {
        n = read_any_queue(&t, pkt, sizeof(pkt));
        if (n <= 0 || (pkt[0] >> 4) == 4) {
            break;
        }
    }
    CHECK(n == 20 + 8 + (ssize_t)sizeof(hello));
    CHECK(pkt[0] == 0x45 && pkt[9] == IPPROTO_UDP);
    CHECK(memcmp(pkt + 12, &local.sin_addr, 4) == 0);
    CHECK(memcmp(pkt + 16, &peer.sin_addr, 4) == 0);
    CHECK(memcmp(pkt + 28, hello, sizeof(hello)) == 0);

    /* answer: swap addresses and ports, UDP checksum 0 (allowed over IPv4) */
    uint8_t tmp[4];
    memcpy(tmp, pkt + 12, 4);
    memcpy(pkt + 12, pkt + 16, 4);
    memcpy(pkt + 16, tmp, 4);
    memcpy(tmp, pkt + 20, 2);
    memcpy(pkt + 20, pkt + 22, 2);
    memcpy(pkt + 22, tmp, 2);
    memcpy(pkt + 28, "pong", 4);
    pkt[26] = pkt[27] = 0;
    pkt[8] = 64;
    pkt[10] = pkt[11] = 0;
    uint16_t csum = ip_header_checksum(pkt, 20);
    pkt[10] = (uint8_t)(csum >> 8);
    pkt[11] = (uint8_t)csum;
    CHECK(write(t.fds[1], pkt, (size_t)n) == n);

    struct pollfd pfd = {.fd = s, .events = POLLIN};
    CHECK(poll(&pfd, 1, 2000) == 1);
    n = recv(s, got, sizeof(got), 0);
    CHECK(n == (ssize_t)sizeof(hello));
    CHECK(memcmp(got, "pong", 4) == 0 && memcmp(got + 4, hello + 4, sizeof(hello) - 4) == 0);

    close(s);
    tun_close(&t);
    return 0;
}

static void rejects_bad_arguments(void **state)
{
    (void)state;
    run_in_netns(bad_arguments);
}

static void opens_configures_and_closes(void **state)
{
    (void)state;
    run_in_netns(open_configure_close);
}

static void carries_packets(void **state)
{
    (void)state;
    run_in_netns(packets_both_ways);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rejects_bad_arguments),
        cmocka_unit_test(opens_configures_and_closes),
        cmocka_unit_test(carries_packets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
