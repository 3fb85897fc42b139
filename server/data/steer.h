/* server/data/steer.h: kernel steering of TUN packets to the worker that owns the destination.
 *
 * A multiqueue TUN device hands each packet the kernel routes into it to one queue. With
 * TUNSETSTEERINGEBPF a small eBPF program chooses that queue: it reads the IPv4 destination and
 * looks it up in a BPF hash map (client tunnel address -> worker index) that the acceptor fills
 * as clients come and go; for IPv6 it looks up the last 32 bits of the destination in a second
 * map (two client addresses sharing them steer one of the two wrongly, and that worker hands
 * the packet over; subnets behind clients, `iroute`, are not in the maps either). Packets for
 * unknown destinations go to queue 0, whose worker drops or hands them over. The program and map
 * are created with libbpf.
 */
#ifndef SERVER_DATA_STEER_H
#define SERVER_DATA_STEER_H

#include <stdint.h>

struct tun_dev;

struct tun_steer {
    int map_fd;  /* -1 when steering is off */
    int map6_fd; /* IPv6: last 32 bits of the address -> queue */
    int prog_fd;
};

/* Create the map (room for max_entries addresses) and the program, and attach it to t.
 * Returns 0, or -errno when the kernel refuses (s is then off: map_fd == -1). Main thread. */
int tun_steer_open(struct tun_steer *s, const struct tun_dev *t, uint32_t max_entries);

/* Steer packets for addr (host byte order) to queue. No-op when off. 0 or -errno. Any thread. */
int tun_steer_set(const struct tun_steer *s, uint32_t addr, uint32_t queue);

/* Forget addr. No-op when off. Any thread. */
void tun_steer_del(const struct tun_steer *s, uint32_t addr);

/* The same for an IPv6 address (16 bytes, network order). No-op when off. 0 or -errno. */
int tun_steer_set6(const struct tun_steer *s, const uint8_t addr[16], uint32_t queue);

/* Forget an IPv6 address. No-op when off. Any thread. */
void tun_steer_del6(const struct tun_steer *s, const uint8_t addr[16]);

/* Close the program and map (the TUN device keeps no reference once closed). */
void tun_steer_close(struct tun_steer *s);

#endif /* SERVER_DATA_STEER_H */
