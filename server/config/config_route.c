/* server/config/config_route.c: directives about routing inside the tunnel: client-config-dir,
 * ccd-exclusive, client-to-client, route, route-ipv6, server-ipv6. Rules from openvpn 2.6
 * src/openvpn/options.c (add_option, options_postprocess_verify_ce), helper.c
 * (helper_client_server: server-ipv6) and route.c (route and route-ipv6 arguments). */
#include "proto/client_nat.h"
#include "server/config/config_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int config_parse_ipv6_prefix(struct config_parser *ps, const char *s, uint8_t addr[16], int *bits)
{
    char text[INET6_ADDRSTRLEN + 8];
    char *slash, *end;
    long b;

    if (strlen(s) >= sizeof(text) || (slash = strchr(s, '/')) == NULL) {
        return config_error(ps, "'%s' is not an IPv6 network/prefix length", s);
    }
    memcpy(text, s, (size_t)(slash - s));
    text[slash - s] = '\0';
    b = strtol(slash + 1, &end, 10);
    if (slash[1] == '\0' || *end != '\0' || b < 0 || b > 128) {
        return config_error(ps, "'%s' has no valid prefix length (0-128)", s);
    }
    if (inet_pton(AF_INET6, text, addr) != 1) {
        return config_error(ps, "'%s' is not an IPv6 address", text);
    }
    *bits = (int)b;
    return 0;
}

static bool has_host_bits(const uint8_t *addr, int len, int plen)
{
    for (int i = 0; i < len; i++) {
        int bits = plen - 8 * i;
        uint8_t mask = bits >= 8 ? 0xFF : bits <= 0 ? 0 : (uint8_t)(0xFF << (8 - bits));

        if (addr[i] & (uint8_t)~mask) {
            return true;
        }
    }
    return false;
}

/* Checked and made absolute after the last line (config_check_jail): with `chroot` it names a
 * directory inside the jail. */
int config_h_client_config_dir(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    ps->ccd.where = config_here(ps);
    return config_set_str(ps, &ps->ccd.path, argv[1]);
}

int config_h_ccd_exclusive(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ps->cfg->net.ccd_exclusive = true;
    ps->seen_ccd_exclusive = config_here(ps);
    return 0;
}

int config_h_client_to_client(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ps->cfg->net.client_to_client = true;
    return 0;
}

static int add_route(struct config_parser *ps, const struct config_route *r)
{
    struct config *cfg = ps->cfg;
    struct config_route *grown;

    if (cfg->net.n_routes >= CONFIG_MAX_ROUTES) {
        return config_error(ps, "too many routes (%d max)", CONFIG_MAX_ROUTES);
    }
    grown = realloc(cfg->net.routes, (cfg->net.n_routes + 1) * sizeof(*grown));
    if (!grown) {
        return config_nomem(ps);
    }
    cfg->net.routes = grown;
    cfg->net.routes[cfg->net.n_routes++] = *r;
    return 0;
}

/* The gateway argument: through the tun device it makes no difference, so only the forms
 * openvpn accepts that mean "into the VPN" are taken. */
static int check_gateway(struct config_parser *ps, const char *gw, int family)
{
    uint8_t addr[16];

    if (strcmp(gw, "vpn_gateway") == 0 || strcmp(gw, "default") == 0 ||
        inet_pton(family == 6 ? AF_INET6 : AF_INET, gw, addr) == 1) {
        return 0;
    }
    if (strcmp(gw, "net_gateway") == 0 || strcmp(gw, "remote_host") == 0) {
        return config_not_implemented(ps, "route gateway '%s' (routes go into the tun device)", gw);
    }
    return config_error(ps, "'%s' is not a gateway address", gw);
}

static int parse_metric(struct config_parser *ps, const char *s, int *metric)
{
    if (strcmp(s, "default") == 0) {
        *metric = -1;
        return 0;
    }
    return config_parse_int(ps, "metric", s, 0, 65535, metric);
}

/* route NETWORK [NETMASK [GATEWAY [METRIC]]] (route.c, init_route: netmask defaults to
 * 255.255.255.255, "default" keeps a default). */
int config_h_route(struct config_parser *ps, int argc, char **argv)
{
    struct config_route r = {
        .family = 4, .plen = 32, .metric = -1, .table = ps->cfg->net.route_table};
    struct in_addr net, mask = {.s_addr = 0xFFFFFFFFu};
    int err;

    if (inet_pton(AF_INET, argv[1], &net) != 1) {
        return config_error(ps, "'%s' is not an IPv4 network address (names are not resolved)",
                            argv[1]);
    }
    if (argc > 2 && strcmp(argv[2], "default") != 0 && inet_pton(AF_INET, argv[2], &mask) != 1) {
        return config_error(ps, "'%s' is not an IPv4 netmask", argv[2]);
    }
    r.plen = config_netmask_bits(ntohl(mask.s_addr));
    if (r.plen < 0) {
        return config_error(ps, "'%s' is not a valid netmask", argv[2]);
    }
    memcpy(r.addr, &net.s_addr, 4);
    if (has_host_bits(r.addr, 4, r.plen)) {
        return config_error(ps, "'%s' is not the network address of a %s subnet", argv[1], argv[2]);
    }
    if (argc > 3 && (err = check_gateway(ps, argv[3], 4))) {
        return err;
    }
    if (argc > 4 && (err = parse_metric(ps, argv[4], &r.metric))) {
        return err;
    }
    return add_route(ps, &r);
}

/* route-ipv6 NETWORK/BITS [GATEWAY [METRIC]] */
int config_h_route_ipv6(struct config_parser *ps, int argc, char **argv)
{
    struct config_route r = {.family = 6, .metric = -1, .table = ps->cfg->net.route_table};
    int err;

    if ((err = config_parse_ipv6_prefix(ps, argv[1], r.addr, &r.plen))) {
        return err;
    }
    if (has_host_bits(r.addr, 16, r.plen)) {
        return config_error(ps, "'%s' has bits set outside its prefix", argv[1]);
    }
    if (argc > 2 && (err = check_gateway(ps, argv[2], 6))) {
        return err;
    }
    if (argc > 3 && (err = parse_metric(ps, argv[3], &r.metric))) {
        return err;
    }
    ps->seen_route_ipv6 = config_here(ps);
    return add_route(ps, &r);
}

/* server-ipv6 NETWORK/BITS: openvpn (helper.c) takes 64..124 bits; the server is NETWORK+1 and
 * the pool starts at NETWORK+0x1000 (NETWORK+2 from /112 on). */
int config_h_server_ipv6(struct config_parser *ps, int argc, char **argv)
{
    struct config *cfg = ps->cfg;
    int err, bits;

    (void)argc;
    if ((err = config_parse_ipv6_prefix(ps, argv[1], cfg->net.server_ipv6_network, &bits))) {
        return err;
    }
    if (bits < 64 || bits > 124) {
        return config_error(ps, "the prefix length must be 64 to 124, not %d", bits);
    }
    if (has_host_bits(cfg->net.server_ipv6_network, 16, bits)) {
        /* 2.6 does not mask it: the server's address is this one plus 1 and the pool starts
         * 0x1000 above it (helper.c, helper_client_server); ovpnd counts the same way. */
        err = config_warn(ps, NULL,
                          "server-ipv6: '%s' has bits set outside its /%d prefix: as in "
                          "openvpn 2.6, the server and pool addresses are counted from it as "
                          "written",
                          argv[1], bits);
        if (err) {
            return err;
        }
    }
    ps->seen_server_ipv6 = config_here(ps);
    cfg->net.server_ipv6_bits = bits;
    cfg->net.has_server_ipv6 = true;
    return 0;
}

/* ifconfig-ipv6 LOCAL/BITS REMOTE: the tun device's own IPv6 address; openvpn (options.c) takes
 * 64..124 bits. A server pushes LOCAL as each client's IPv6 peer (multi.c). */
int config_h_ifconfig_ipv6(struct config_parser *ps, int argc, char **argv)
{
    struct config *cfg = ps->cfg;
    int err, bits;

    (void)argc;
    if ((err = config_parse_ipv6_prefix(ps, argv[1], cfg->net.ifconfig_ipv6_local, &bits))) {
        return err;
    }
    if (bits < 64 || bits > 124) {
        return config_error(ps, "/netbits must be between 64 and 124, not '/%d'", bits);
    }
    if (inet_pton(AF_INET6, argv[2], cfg->net.ifconfig_ipv6_remote) != 1) {
        return config_error(ps, "'%s' is not an IPv6 address", argv[2]);
    }
    ps->seen_ifconfig_ipv6 = config_here(ps);
    cfg->net.ifconfig_ipv6_bits = bits;
    cfg->net.has_ifconfig_ipv6 = true;
    return 0;
}

/* ifconfig-ipv6-pool BASE/BITS: openvpn (options.c) takes 64..124 bits; BASE is the first
 * address handed out (pool.c moves it off a host part of zero). */
int config_h_ifconfig_ipv6_pool(struct config_parser *ps, int argc, char **argv)
{
    struct config *cfg = ps->cfg;
    int err, bits;

    (void)argc;
    if ((err = config_parse_ipv6_prefix(ps, argv[1], cfg->net.ifconfig_ipv6_pool_base, &bits))) {
        return err;
    }
    if (bits < 64 || bits > 124) {
        return config_error(ps, "network must be between /64 and /124 (not /%d)", bits);
    }
    ps->seen_ifconfig_ipv6_pool = config_here(ps);
    cfg->net.ifconfig_ipv6_pool_bits = bits;
    cfg->net.has_ifconfig_ipv6_pool = true;
    return 0;
}

/* `route-metric N`: the default metric of `route` and `route-ipv6` lines (2.6 route.c, the
 * routes' default_metric); applied after the last line. */
/* `route-table N` (openvpn 2.7, route.c/options.c): the routing table of the route lines after
 * it, and of the pool route `server` adds for net30 (which takes the last value); 0 is the main
 * table. 2.7 takes any non-negative int. */
int config_h_route_table(struct config_parser *ps, int argc, char **argv)
{
    int table;
    int err = config_parse_int(ps, NULL, argv[1], 0, INT_MAX, &table);

    (void)argc;
    if (err == 0) {
        ps->cfg->net.route_table = (uint32_t)table;
    }
    return err;
}

int config_h_route_metric(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return config_parse_int(ps, NULL, argv[1], 0, 65535, &ps->cfg->net.route_metric);
}

/* `route-gateway GW` / `route-ipv6-gateway GW`: the next hop 2.6 gives routes without one. The
 * routes go into the tun device, where every next hop reaches the same place (the server), so
 * the address is only checked. */
int config_h_route_gateway(struct config_parser *ps, int argc, char **argv)
{
    int err = check_gateway(ps, argv[1], strcmp(argv[0], "route-ipv6-gateway") == 0 ? 6 : 4);

    (void)argc;
    if (err) {
        return err;
    }
    return config_warn(ps, NULL,
                       "%s: accepted: routes go straight into the tun device, where the next "
                       "hop makes no difference",
                       argv[0]);
}

/* `route-noexec`: 2.6 leaves the routes to scripts; ovpnd adds none and logs them. */
int config_h_route_noexec(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ps->cfg->net.route_noexec = true;
    return 0;
}

/* `block-ipv6`: checked once the config is read (config_check.c check_net_needs), as its
 * effect depends on whether the tunnel carries IPv6. */
int config_h_block_ipv6(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ps->seen_block_ipv6 = config_here(ps);
    ps->cfg->net.block_ipv6 = true;
    return 0;
}

int config_h_passtos(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ps->cfg->net.passtos = true;
    return 0;
}

/* `client-nat snat|dnat NETWORK NETMASK ALIAS`: one more rule (proto/client_nat.h); beyond
 * CLIENT_NAT_MAX, 2.6 warns and drops the rule ("client-nat table overflow"), and so does ovpnd. */
int config_h_client_nat(struct config_parser *ps, int argc, char **argv)
{
    struct client_nat_rule rule;
    char why[160];

    (void)argc;
    if (client_nat_parse(argv[1], argv[2], argv[3], argv[4], &rule, why, sizeof(why))) {
        return config_error(ps, "%s", why);
    }
    if (!ps->cfg->net.client_nat) {
        ps->cfg->net.client_nat = calloc(1, sizeof(*ps->cfg->net.client_nat));
        if (!ps->cfg->net.client_nat) {
            return -ENOMEM;
        }
    }
    if (ps->cfg->net.client_nat->n_rules == CLIENT_NAT_MAX) {
        return config_warn(ps, NULL, "more than %d rules: this one is ignored (as openvpn 2.6)",
                           CLIENT_NAT_MAX);
    }
    ps->cfg->net.client_nat->rules[ps->cfg->net.client_nat->n_rules++] = rule;
    return 0;
}

/* `ifconfig-noexec`: 2.6 gives the device no address and leaves it to the up script, which
 * gets the addresses in its arguments and ifconfig_* variables (init.c do_open_tun). */
int config_h_ifconfig_noexec(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ps->cfg->net.ifconfig_noexec = true;
    return 0;
}

/* `dev-node PATH`: the node opened to make the tun device. ovpnd opens the Linux clone device,
 * so only that one is taken. */
int config_h_dev_node(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    if (strcmp(argv[1], "/dev/net/tun") == 0) {
        return 0;
    }
    return config_not_implemented(ps, "a tun node other than /dev/net/tun");
}
