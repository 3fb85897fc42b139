/* server/config/topology.h: what the tunnel-address directives of a server config expand to.
 *
 * openvpn 2.6 turns `server NETWORK NETMASK [nopool]` and `server-ipv6 NETWORK/BITS` into
 * lower-level settings (helper.c helper_client_server), per `topology`:
 *
 *   subnet: ifconfig NETWORK+1 NETMASK; ifconfig-pool NETWORK+2 .. BROADCAST-1 (one address
 *           each); push "route-gateway NETWORK+1"; push "topology subnet"; the pushed ifconfig
 *           is "ADDRESS NETMASK"; ifconfig-push-constraint NETWORK NETMASK.
 *   net30:  ifconfig NETWORK+1 NETWORK+2 (a point-to-point address); ifconfig-pool NETWORK+4 ..
 *           BROADCAST-4 (BROADCAST on a /29) in /30 blocks; route NETWORK NETMASK into the tun;
 *           push "route NETWORK NETMASK" with client-to-client, else push "route NETWORK+1";
 *           push "topology net30"; a client gets "ifconfig BLOCK+2 BLOCK+1".
 *   p2p:    as net30, but one address each from the same range, no "route NETWORK+1" push, and
 *           a client gets "ifconfig ADDRESS NETWORK+1".
 *   server-ipv6: ifconfig-ipv6 NETWORK+1/BITS; ifconfig-ipv6-pool NETWORK+0x1000 (NETWORK+2
 *           from /112 on) with the same BITS.
 *   dev tap: as subnet whatever `topology` says (2.6 ignores it), with a /30 at least, and no
 *           "topology" pushed.
 *   server-bridge GW MASK START END (dev tap): ifconfig-pool START .. END, the pushed ifconfig
 *           is "ADDRESS MASK", push "route-gateway GW"; the device gets no address (it is
 *           meant for a bridge). `server-bridge [nogw]`: no pool, push "route-gateway dhcp"
 *           (nothing with nogw).
 * Without `server` (or with `nopool`) the `ifconfig`, `ifconfig-pool`, `ifconfig-ipv6` and
 * `ifconfig-ipv6-pool` lines are used as written, and nothing is pushed on their behalf.
 *
 * Pure: no I/O. Used by the config check (to refuse bad combinations with their line) and by
 * the server at start-up.
 */
#ifndef SERVER_CONFIG_TOPOLOGY_H
#define SERVER_CONFIG_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/config/config.h"
#include "server/addr/pool.h"

#define TOPOLOGY_PUSH_MAX 3 /* options pushed on behalf of `server` and `server-ipv6` */

struct topology_plan {
    int topology;            /* CONFIG_TOPOLOGY_* */
    uint32_t local;          /* the tun device's IPv4 address, host byte order */
    uint32_t remote_netmask; /* subnet: the tun netmask; net30/p2p: the point-to-point peer */
    bool has_pool;           /* a dynamic IPv4 pool exists (pool.start .. pool.end) */
    struct ip_pool_params pool;
    uint32_t push_netmask; /* subnet: the netmask pushed with each address */
    bool has_route;        /* net30/p2p with `server`: the kernel route into the tun */
    uint32_t route_network, route_netmask;
    char push[TOPOLOGY_PUSH_MAX][48]; /* derived push options, in 2.6's order */
    size_t n_push;
    bool has_constraint; /* ifconfig-push addresses must lie in this network (multi.c) */
    uint32_t constraint_network, constraint_netmask;
    bool has_ipv6;      /* the tun device has an IPv6 address */
    uint8_t local6[16]; /* ... this one, network byte order */
    int ipv6_bits;      /* its prefix length; also the one pushed with pool addresses */
};

/* Fill plan from cfg (a parsed config: topology, server, server-ipv6, ifconfig*, duplicate-cn,
 * client-to-client, ifconfig-push-constraint). Returns 0, or -EINVAL with *directive set to the
 * name of the directive at fault and why (why_len bytes) the reason, for combinations openvpn
 * refuses (`server` with `ifconfig-pool` but without `nopool`, `server-ipv6` with
 * `ifconfig-ipv6-pool`, `ifconfig-ipv6-pool` without `ifconfig-ipv6`, a NETMASK on
 * `ifconfig-pool` outside topology subnet, a pool of fewer than 2 entries) and for those ovpnd
 * refuses: no `server` and no `ifconfig`, a pool that holds the server's own address or, with
 * topology subnet, lies outside the tun subnet, an IPv6 pool without an IPv4 one. */
int topology_plan_make(const struct config *cfg, struct topology_plan *plan, const char **directive,
                       char *why, size_t why_len);

/* "subnet", "net30" or "p2p". */
const char *topology_name(int topology);

#endif /* SERVER_CONFIG_TOPOLOGY_H */
