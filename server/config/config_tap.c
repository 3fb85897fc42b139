/* server/config/config_tap.c: the directives of a tap server: `server-bridge` and `lladdr`
 * (openvpn 2.6 options.c add_option; what server-bridge expands to is topology.c's, the checks
 * that need the device type config_check.c's). `dev tap` / `dev-type tap` are config_net.c's.
 */
#include "server/config/config_internal.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "server/addr/pool.h"

static int parse_ipv4(struct config_parser *ps, const char *s, const char *what, uint32_t *out)
{
    struct in_addr in;

    if (inet_pton(AF_INET, s, &in) != 1) {
        return config_error(ps, "'%s' is not an IPv4 %s", s, what);
    }
    *out = ntohl(in.s_addr);
    return 0;
}

/* 2.6 helper.c verify_common_subnet, for server-bridge. */
static int same_subnet(struct config_parser *ps, uint32_t a, uint32_t b, uint32_t mask)
{
    char sa[INET_ADDRSTRLEN], sb[INET_ADDRSTRLEN], sm[INET_ADDRSTRLEN];
    struct in_addr in;

    if ((a & mask) == (b & mask)) {
        return 0;
    }
    in.s_addr = htonl(a);
    inet_ntop(AF_INET, &in, sa, sizeof(sa));
    in.s_addr = htonl(b);
    inet_ntop(AF_INET, &in, sb, sizeof(sb));
    in.s_addr = htonl(mask);
    inet_ntop(AF_INET, &in, sm, sizeof(sm));
    return config_error(ps, "IP addresses %s and %s are not in the same %s subnet", sa, sb, sm);
}

/* `server-bridge GW MASK POOL_START POOL_END`, `server-bridge nogw` or `server-bridge` (2.6
 * options.c; what they expand to is topology.c's, the checks needing dev are config_check.c's). */
int config_h_server_bridge(struct config_parser *ps, int argc, char **argv)
{
    struct config_net *net = &ps->cfg->net;
    uint32_t gw = 0, mask = 0, start = 0, end = 0;
    int err;

    ps->seen_server_bridge = config_here(ps);
    if (argc == 1 || (argc == 2 && strcmp(argv[1], "nogw") == 0)) {
        net->has_server_bridge = false;
        net->server_bridge_dhcp = true;
        net->server_bridge_nogw = argc == 2;
        return 0;
    }
    if (argc != 5) {
        return config_error(ps, "takes GATEWAY NETMASK POOL-START POOL-END, 'nogw', or nothing");
    }
    if ((err = parse_ipv4(ps, argv[1], "address", &gw)) ||
        (err = parse_ipv4(ps, argv[2], "netmask", &mask)) ||
        (err = parse_ipv4(ps, argv[3], "address", &start)) ||
        (err = parse_ipv4(ps, argv[4], "address", &end))) {
        return err;
    }
    if (gw == 0 || mask == 0 || start == 0 || end == 0) {
        return config_error(ps, "error parsing server-bridge parameters (0.0.0.0)");
    }
    if (config_netmask_bits(mask) < 0) {
        return config_error(ps, "'%s' is not a valid netmask", argv[2]);
    }
    if ((err = same_subnet(ps, gw, start, mask)) || (err = same_subnet(ps, start, end, mask)) ||
        (err = same_subnet(ps, gw, end, mask))) {
        return err;
    }
    if (start > end) {
        return config_error(ps, "start IP [%s] is greater than end IP [%s]", argv[3], argv[4]);
    }
    if (end - start >= IP_POOL_MAX) {
        return config_error(ps, "address range is too large [%s -> %s] (%d addresses at most)",
                            argv[3], argv[4], IP_POOL_MAX);
    }
    net->has_server_bridge = true;
    net->server_bridge_dhcp = false;
    net->server_bridge_gw = gw;
    net->server_bridge_netmask = mask;
    net->server_bridge_pool_start = start;
    net->server_bridge_pool_end = end;
    return 0;
}

/* `lladdr MAC`: the tap device's MAC address (2.6 options.c mac_addr_safe: six hex pairs). */
int config_h_lladdr(struct config_parser *ps, int argc, char **argv)
{
    unsigned b[6];
    char tail;

    (void)argc;
    if (strlen(argv[1]) != 17 || sscanf(argv[1], "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2],
                                        &b[3], &b[4], &b[5], &tail) != 6) {
        return config_error(ps, "lladdr parm '%s' must be a MAC address", argv[1]);
    }
    if (b[0] & 1) {
        return config_error(ps, "'%s' is a multicast address, not one a device can have", argv[1]);
    }
    for (int i = 0; i < 6; i++) {
        ps->cfg->net.lladdr[i] = (uint8_t)b[i];
    }
    ps->cfg->net.has_lladdr = true;
    ps->seen_lladdr = config_here(ps);
    return 0;
}

/* `vlan-tagging` (2.6 options.c; the checks needing dev are config_check.c's). */
int config_h_vlan_tagging(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ps->cfg->net.vlan_tagging = true;
    ps->seen_vlan_tagging = config_here(ps);
    return 0;
}

/* `vlan-accept tagged|untagged|all` (2.6 options.c). */
int config_h_vlan_accept(struct config_parser *ps, int argc, char **argv)
{
    static const struct {
        const char *name;
        enum vlan_accept accept;
    } modes[] = {
        {"all", VLAN_ACCEPT_ALL},
        {"tagged", VLAN_ACCEPT_TAGGED},
        {"untagged", VLAN_ACCEPT_UNTAGGED},
    };

    (void)argc;
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        if (strcmp(argv[1], modes[i].name) == 0) {
            ps->cfg->net.vlan_accept = modes[i].accept;
            ps->seen_vlan_accept = config_here(ps);
            return 0;
        }
    }
    return config_error(ps, "'%s' must be 'tagged', 'untagged' or 'all'", argv[1]);
}

/* `vlan-pvid VID`: 1..4094 (2.6 options.c, OPENVPN_8021Q_MIN_VID .. OPENVPN_8021Q_MAX_VID). */
int config_h_vlan_pvid(struct config_parser *ps, int argc, char **argv)
{
    int vid, err;

    (void)argc;
    if ((err = config_parse_int(ps, "VLAN id", argv[1], VLAN_VID_MIN, VLAN_VID_MAX, &vid))) {
        return err;
    }
    ps->cfg->net.vlan_pvid = (uint16_t)vid;
    ps->seen_vlan_pvid = config_here(ps);
    return 0;
}
