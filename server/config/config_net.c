/* server/config/config_net.c: handlers for the network side: socket, tun device, address pool, MTU,
 * keepalive, push, clients, compression. Facts from openvpn 2.6 src/openvpn/options.c
 * (add_option), helper.c (helper_client_server, helper_keepalive), push.c (push_option_ex) and
 * misc.c (make_extended_arg_array).
 */
#include "server/config/config_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/addr/pool.h"

#define MAX_SECONDS 1000000  /* upper bound for timer values, about 11 days */
#define PEER_ID_MAX 0xFFFFFE /* highest peer-id a client accepts (peer-id 0xFFFFFF = none) */
#define POOL_MIN_NETBITS 16  /* openvpn pool.h IFCONFIG_POOL_MIN_NETBITS */
#define TUN_MAX_NETBITS 29   /* helper.c: a tun server needs at least a /29 */
#define TAP_MAX_NETBITS 30   /* helper.c: a tap server at least a /30 */

static int parse_port(struct config_parser *ps, const char *s, uint16_t *out)
{
    int port;

    for (const char *p = s; *p != '\0'; p++) {
        if (*p < '0' || *p > '9' || p - s > 5) {
            return config_error(ps, "'%s' is not a port number (1-65535)", s);
        }
    }
    port = atoi(s);
    if (s[0] == '\0' || port < 1 || port > 65535) {
        return config_error(ps, "'%s' is not a port number (1-65535)", s);
    }
    *out = (uint16_t)port;
    return 0;
}

int config_h_port(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return parse_port(ps, argv[1], &ps->cfg->net.port);
}

/* A server protocol name as `proto` and `local` take it into *out (CONFIG_PROTO_*). */
static int parse_proto(struct config_parser *ps, const char *p, int *out)
{
    static const char *const names[] = {"udp4", "udp6",        "udp",         "tcp4",      "tcp6",
                                        "tcp",  "tcp4-server", "tcp6-server", "tcp-server"};
    static const int protos[] = {CONFIG_PROTO_UDP4, CONFIG_PROTO_UDP6, CONFIG_PROTO_UDP,
                                 CONFIG_PROTO_TCP4, CONFIG_PROTO_TCP6, CONFIG_PROTO_TCP,
                                 CONFIG_PROTO_TCP4, CONFIG_PROTO_TCP6, CONFIG_PROTO_TCP};

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcmp(p, names[i]) == 0) {
            *out = protos[i];
            return 0;
        }
    }
    if (strcmp(p, "tcp-client") == 0 || strcmp(p, "tcp4-client") == 0 ||
        strcmp(p, "tcp6-client") == 0) {
        return config_error(ps, "'%s' is a client setting, not valid in a server config", p);
    }
    return config_error(ps,
                        "unknown protocol '%s' (udp, udp4, udp6, tcp-server, tcp4-server, "
                        "tcp6-server)",
                        p);
}

int config_h_proto(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return parse_proto(ps, argv[1], &ps->cfg->net.proto);
}

/* 2.6 compares the forced protocol with the profile's as a whole: "udp", "udp4" and "udp6" are
 * all UDP; a server's TCP is "tcp-server" (and its 4/6 forms), so "tcp" or "tcp-client" matches
 * no server profile (2.6 then stops: no usable connection profiles). */
int config_h_proto_force(struct config_parser *ps, int argc, char **argv)
{
    static const char *const udp[] = {"udp", "udp4", "udp6"};
    static const char *const tcp_server[] = {"tcp-server", "tcp4-server", "tcp6-server"};
    static const char *const tcp_other[] = {"tcp",        "tcp4",        "tcp6",
                                            "tcp-client", "tcp4-client", "tcp6-client"};

    (void)argc;
    ps->seen_proto_force = config_here(ps);
    for (size_t i = 0; i < 3; i++) {
        if (strcmp(argv[1], udp[i]) == 0) {
            ps->proto_force = CONFIG_PROTO_UDP;
            return 0;
        }
        if (strcmp(argv[1], tcp_server[i]) == 0) {
            ps->proto_force = CONFIG_PROTO_TCP;
            return 0;
        }
    }
    for (size_t i = 0; i < sizeof(tcp_other) / sizeof(tcp_other[0]); i++) {
        if (strcmp(argv[1], tcp_other[i]) == 0) {
            return config_error(ps,
                                "no usable connection profiles are present ('%s' is not a "
                                "server protocol; a TCP server is tcp-server)",
                                argv[1]);
        }
    }
    return config_error(ps, "bad protocol '%s'", argv[1]);
}

int config_h_tcp_queue_limit(struct config_parser *ps, int argc, char **argv)
{
    char *end;
    long n = strtol(argv[1], &end, 10);

    (void)argc;
    /* 2.6 options.c: "--tcp-queue-limit must be >= 1" */
    if (argv[1][0] == '\0' || *end != '\0' || n < 1 || n > 65536) {
        return config_error(ps, "'%s' is not a packet count (1-65536)", argv[1]);
    }
    ps->cfg->net.tcp_queue_limit = (int)n;
    return 0;
}

int config_h_port_share(struct config_parser *ps, int argc, char **argv)
{
    struct config_net *net = &ps->cfg->net;
    int err;

    if (argv[1][0] == '\0') {
        return config_error(ps, "the address is empty");
    }
    err = parse_port(ps, argv[2], &net->port_share_port);
    err = err ? err : config_set_str(ps, &net->port_share_host, argv[1]);
    if (!err && argc > 3) {
        err = config_set_str(ps, &net->port_share_dir, argv[3]);
    }
    ps->seen_port_share = config_here(ps);
    return err;
}

int config_h_local(struct config_parser *ps, int argc, char **argv)
{
    struct config_net *net = &ps->cfg->net;
    struct config_socket *sock;
    int err;

    if (argv[1][0] == '\0') {
        return config_error(ps, "the address is empty");
    }
    /* openvpn 2.7: `local HOST|* [PORT] [PROTO]`, one line per socket of a server */
    if (net->n_sockets == CONFIG_MAX_SOCKETS) {
        return config_not_implemented(ps, "more than %d sockets (one UDP and one TCP)",
                                      CONFIG_MAX_SOCKETS);
    }
    sock = &net->sockets[net->n_sockets];
    if (argc > 2 && (err = parse_port(ps, argv[2], &sock->port)) != 0) {
        return err;
    }
    if (argc > 3 && (err = parse_proto(ps, argv[3], &sock->proto)) != 0) {
        return err;
    }
    if (strcmp(argv[1], "*") != 0 && (err = config_set_str(ps, &sock->host, argv[1])) != 0) {
        return err;
    }
    ps->seen_local = config_here(ps);
    /* the first line's address is `local` as 2.6 has it (one socket; also $local_1) */
    if (net->n_sockets++ == 0 && sock->host) {
        return config_set_str(ps, &net->local, sock->host);
    }
    return 0;
}

int config_h_dev(struct config_parser *ps, int argc, char **argv)
{
    const char *name = argv[1];
    size_t len = strlen(name);

    (void)argc;
    /* Linux interface names: IFNAMSIZ - 1 bytes, no '/' or blanks, not "." or "..". */
    if (len == 0 || len > 15 || strpbrk(name, "/ \t:") != NULL || strcmp(name, ".") == 0 ||
        strcmp(name, "..") == 0) {
        return config_error(ps,
                            "'%s' is not a valid interface name (1-15 characters, no '/', "
                            "':' or blanks)",
                            name);
    }
    ps->seen_dev = config_here(ps);
    return config_set_str(ps, &ps->cfg->net.dev, name);
}

int config_h_dev_type(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    ps->seen_dev_type = config_here(ps);
    if (strcmp(argv[1], "tun") == 0) {
        ps->is_dev_type_tun = true;
        ps->is_dev_type_tap = false;
        return 0;
    }
    if (strcmp(argv[1], "tap") == 0) {
        ps->is_dev_type_tap = true;
        ps->is_dev_type_tun = false;
        return 0;
    }
    if (strcmp(argv[1], "null") == 0) {
        return config_not_implemented(ps, "null devices; use tun");
    }
    return config_error(ps, "'%s' is not a device type (tun or tap)", argv[1]);
}

/* `txqueuelen N` (2.6 options.c and tun.c open_tun, Linux): the device's transmit queue length
 * in packets, set once it is created. As 2.6 reads it (positive_atoi), a negative number counts
 * as 0, which leaves the kernel's length (a warning says so); words that are not numbers, which
 * 2.6 also reads as 0, are refused. */
int config_h_txqueuelen(struct config_parser *ps, int argc, char **argv)
{
    int n, err;

    (void)argc;
    err = config_parse_int(ps, NULL, argv[1], INT_MIN, INT_MAX, &n);
    if (err) {
        return err;
    }
    if (n < 0) {
        n = 0;
        err = config_warn(
            ps, NULL,
            "txqueuelen: %s is read as 0, as openvpn 2.6 does: the kernel's queue length is kept",
            argv[1]);
    }
    ps->cfg->net.txqueuelen = n;
    return err;
}

int config_h_topology(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    ps->seen_topology = config_here(ps);
    if (strcmp(argv[1], "subnet") == 0) {
        ps->cfg->net.topology = CONFIG_TOPOLOGY_SUBNET;
        return 0;
    }
    if (strcmp(argv[1], "net30") == 0) {
        ps->cfg->net.topology = CONFIG_TOPOLOGY_NET30;
        return 0;
    }
    if (strcmp(argv[1], "p2p") == 0) {
        ps->cfg->net.topology = CONFIG_TOPOLOGY_P2P;
        return 0;
    }
    return config_error(ps, "unknown topology '%s' (net30, p2p or subnet)", argv[1]);
}

int config_netmask_bits(uint32_t mask)
{
    int bits = 0;

    while (bits < 32 && (mask & (0x80000000u >> bits))) {
        bits++;
    }
    return (bits == 32 || (mask << bits) == 0) ? bits : -1;
}

int config_h_server(struct config_parser *ps, int argc, char **argv)
{
    struct in_addr net, mask;
    uint32_t n, m;
    int bits;

    if (inet_pton(AF_INET, argv[1], &net) != 1) {
        return config_error(ps, "'%s' is not an IPv4 network address", argv[1]);
    }
    if (inet_pton(AF_INET, argv[2], &mask) != 1) {
        return config_error(ps, "'%s' is not an IPv4 netmask", argv[2]);
    }
    if (argc == 4) {
        if (strcmp(argv[3], "nopool") != 0) {
            return config_error(ps, "'%s' is not a flag of server (only 'nopool')", argv[3]);
        }
        ps->cfg->net.server_nopool = true;
    }
    n = ntohl(net.s_addr);
    m = ntohl(mask.s_addr);
    bits = config_netmask_bits(m);
    if (bits < 0) {
        return config_error(ps, "'%s' is not a valid netmask", argv[2]);
    }
    if (n == 0 || (n & ~m) != 0) {
        return config_error(ps, "'%s' is not the network address of a %s subnet", argv[1], argv[2]);
    }
    if (bits < POOL_MIN_NETBITS) {
        return config_error(ps,
                            "netmask %s allows for too many addresses (/%d at most: "
                            "255.255.0.0)",
                            argv[2], POOL_MIN_NETBITS);
    }
    if (bits > TAP_MAX_NETBITS) {
        /* /29 with dev tun is checked once the device type is known (topology.c) */
        return config_error(ps,
                            "netmask %s leaves too few addresses (/%d at least: "
                            "255.255.255.248; with dev tap /%d: 255.255.255.252)",
                            argv[2], TUN_MAX_NETBITS, TAP_MAX_NETBITS);
    }
    ps->seen_server = config_here(ps);
    ps->cfg->net.has_server = true;
    ps->cfg->net.server_netbits = bits;
    ps->cfg->net.server_network = n;
    ps->cfg->net.server_netmask = m;
    return 0;
}

static int parse_ipv4(struct config_parser *ps, const char *s, const char *what, uint32_t *out)
{
    struct in_addr in;

    if (inet_pton(AF_INET, s, &in) != 1) {
        return config_error(ps, "'%s' is not an IPv4 %s", s, what);
    }
    *out = ntohl(in.s_addr);
    return 0;
}

/* ifconfig LOCAL REMOTE_OR_NETMASK: the tun device's own address; the second word is the
 * netmask with topology subnet and the point-to-point peer with net30/p2p (options.c). */
int config_h_ifconfig(struct config_parser *ps, int argc, char **argv)
{
    struct config *cfg = ps->cfg;
    int err;

    (void)argc;
    if ((err = parse_ipv4(ps, argv[1], "address", &cfg->net.ifconfig_local)) ||
        (err = parse_ipv4(ps, argv[2], "address or netmask", &cfg->net.ifconfig_remote_netmask))) {
        return err;
    }
    ps->seen_ifconfig = config_here(ps);
    cfg->net.has_ifconfig = true;
    return 0;
}

/* ifconfig-pool START END [NETMASK] (options.c; the range checks are pool.c's, made when the
 * whole config is known). */
int config_h_ifconfig_pool(struct config_parser *ps, int argc, char **argv)
{
    struct config *cfg = ps->cfg;
    int err;

    cfg->net.ifconfig_pool_netmask = 0;
    if ((err = parse_ipv4(ps, argv[1], "address", &cfg->net.ifconfig_pool_start)) ||
        (err = parse_ipv4(ps, argv[2], "address", &cfg->net.ifconfig_pool_end)) ||
        (argc == 4 &&
         (err = parse_ipv4(ps, argv[3], "netmask", &cfg->net.ifconfig_pool_netmask)))) {
        return err;
    }
    if (argc == 4 && config_netmask_bits(cfg->net.ifconfig_pool_netmask) < 0) {
        return config_error(ps, "'%s' is not a valid netmask", argv[3]);
    }
    if (cfg->net.ifconfig_pool_start > cfg->net.ifconfig_pool_end) {
        return config_error(ps, "start IP [%s] is greater than end IP [%s]", argv[1], argv[2]);
    }
    if (cfg->net.ifconfig_pool_end - cfg->net.ifconfig_pool_start >= IP_POOL_MAX) {
        return config_error(ps, "address range is too large [%s -> %s] (%d addresses at most)",
                            argv[1], argv[2], IP_POOL_MAX);
    }
    ps->seen_ifconfig_pool = config_here(ps);
    cfg->net.has_ifconfig_pool = true;
    return 0;
}

/* ifconfig-pool-persist FILE [SECONDS]: SECONDS default 600, 0 = read only (options.c takes
 * it through positive_atoi: a negative or non-numeric value counts as 0). */
int config_h_ifconfig_pool_persist(struct config_parser *ps, int argc, char **argv)
{
    struct config *cfg = ps->cfg;
    int s = 600, err;

    if (argc == 3 && (err = config_parse_int(ps, "seconds", argv[2], 0, INT32_MAX, &s))) {
        return err;
    }
    ps->seen_ifconfig_pool_persist = config_here(ps);
    cfg->net.ifconfig_pool_persist_s = s;
    return config_set_str(ps, &cfg->net.ifconfig_pool_persist, argv[1]);
}

/* ifconfig-push-constraint NETWORK NETMASK (options.c; checked in multi.c). */
int config_h_ifconfig_push_constraint(struct config_parser *ps, int argc, char **argv)
{
    struct config *cfg = ps->cfg;
    uint32_t net = 0, mask = 0;
    int err;

    (void)argc;
    if ((err = parse_ipv4(ps, argv[1], "network", &net)) ||
        (err = parse_ipv4(ps, argv[2], "netmask", &mask))) {
        return err;
    }
    if (net == 0 || mask == 0) {
        return config_error(ps, "cannot use %s %s as a constraint", argv[1], argv[2]);
    }
    cfg->net.has_ifconfig_push_constraint = true;
    cfg->net.ifconfig_push_constraint_network = net;
    cfg->net.ifconfig_push_constraint_netmask = mask;
    return 0;
}

int config_h_mode(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    if (strcmp(argv[1], "server") == 0) {
        return 0;
    }
    if (strcmp(argv[1], "p2p") == 0) {
        return config_not_implemented(ps, "point-to-point mode");
    }
    return config_error(ps, "'%s' is not a mode (server or p2p)", argv[1]);
}

int config_h_tun_mtu(struct config_parser *ps, int argc, char **argv)
{
    int err = config_parse_int(ps, NULL, argv[1], TUN_MTU_MIN, 65535, &ps->cfg->net.tun_mtu);

    ps->seen_tun_mtu = config_here(ps);

    if (err == 0 && argc == 3) {
        err = config_parse_int(ps, "OCC MTU", argv[2], 0, 65535, &ps->cfg->net.tun_mtu_occ);
    } else if (err == 0) {
        ps->cfg->net.tun_mtu_occ = 0;
    }
    return err;
}

int config_h_mssfix(struct config_parser *ps, int argc, char **argv)
{
    struct config *cfg = ps->cfg;
    int err;

    if (argc == 1) {
        ps->is_mssfix_default = true; /* filled in from tun-mtu after the last line */
        return 0;
    }
    err = config_parse_int(ps, NULL, argv[1], 0, 65535, &cfg->net.mssfix);
    if (err) {
        return err;
    }
    ps->is_mssfix_default = false;
    cfg->net.mssfix_mode = CONFIG_MSSFIX_PAYLOAD;
    if (argc == 3) {
        if (strcmp(argv[2], "mtu") == 0) {
            cfg->net.mssfix_mode = CONFIG_MSSFIX_MTU;
        } else if (strcmp(argv[2], "fixed") == 0) {
            cfg->net.mssfix_mode = CONFIG_MSSFIX_FIXED;
        } else {
            return config_error(ps, "unknown flag '%s' (mtu or fixed)", argv[2]);
        }
    }
    return 0;
}

int config_h_keepalive(struct config_parser *ps, int argc, char **argv)
{
    int ping, restart, err;

    (void)argc;
    err = config_parse_int(ps, "ping interval", argv[1], 1, MAX_SECONDS, &ping);
    if (err == 0) {
        err = config_parse_int(ps, "restart timeout", argv[2], 1, MAX_SECONDS, &restart);
    }
    if (err) {
        return err;
    }
    if (restart < 2 * ping) { /* helper.c, helper_keepalive */
        return config_error(ps,
                            "the restart timeout (%d) must be at least twice the ping "
                            "interval (%d); 'keepalive 10 60' is a good choice",
                            restart, ping);
    }
    ps->cfg->timers.keepalive_ping_s = ping;
    ps->cfg->timers.keepalive_restart_s = restart;
    ps->seen_keepalive = config_here(ps);
    return 0;
}

int config_h_ping(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    ps->seen_ping = config_here(ps);
    return config_parse_int(ps, NULL, argv[1], 0, MAX_SECONDS, &ps->cfg->timers.ping_s);
}

int config_h_ping_restart(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    ps->seen_ping_restart = config_here(ps);
    ps->cfg->timers.is_ping_exit = false;
    return config_parse_int(ps, NULL, argv[1], 0, MAX_SECONDS, &ps->cfg->timers.ping_restart_s);
}

/* `ping-exit N`: in 2.6 a client instance of a server that hears nothing for N seconds gets
 * SIGTERM (ping.c), which closes that instance only (multi.c, multi_close_instance_on_signal):
 * for a server the same as ping-restart. The last of ping-exit and ping-restart wins. */
int config_h_ping_exit(struct config_parser *ps, int argc, char **argv)
{
    int err;

    (void)argc;
    ps->seen_ping_exit = config_here(ps);
    err = config_parse_int(ps, NULL, argv[1], 0, MAX_SECONDS, &ps->cfg->timers.ping_restart_s);
    ps->cfg->timers.is_ping_exit = err == 0;
    return err;
}

/* `socket-flags FLAG...` (2.6 options.c: TCP_NODELAY is the only flag; others are warned about).
 * The flag only changes TCP sockets: check_sockets warns when no TCP socket is configured. */
int config_h_socket_flags(struct config_parser *ps, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        int err = 0;

        if (strcmp(argv[i], "TCP_NODELAY") == 0) {
            ps->cfg->net.tcp_nodelay = true;
            ps->seen_socket_flags_nodelay = config_here(ps);
        } else {
            err = config_warn(ps, NULL, "socket-flags: unknown socket flag '%s' ignored", argv[i]);
        }
        if (err) {
            return err;
        }
    }
    return 0;
}

/* `tcp-nodelay`: in server mode 2.6 sets TCP_NODELAY on its sockets and pushes
 * "socket-flags TCP_NODELAY" to clients (helper.c, helper_tcp_nodelay). */
int config_h_tcp_nodelay(struct config_parser *ps, int argc, char **argv)
{
    char text[] = "socket-flags TCP_NODELAY";
    char *push_argv[] = {argv[0], text, NULL};

    (void)argc;
    if (!ps->cfg->net.tcp_nodelay) {
        int err = config_warn(ps, NULL,
                              "tcp-nodelay: TCP_NODELAY only applies to TCP connections; "
                              "clients get 'socket-flags TCP_NODELAY' pushed, as from 2.6");

        if (err) {
            return err;
        }
    }
    ps->cfg->net.tcp_nodelay = true;
    return config_h_push(ps, 2, push_argv);
}

/* openvpn keeps the pushed text as written (push_options: a single argument is copied, not
 * re-split; checked against openvpn 2.6.14's --verb 4 dump) and refuses commas, which separate
 * options in PUSH_REPLY (push.c, push_option_ex). The client splits each option like a config
 * line into a 256-byte buffer (options.c, apply_push_options), so the text must split cleanly
 * and fit in 255 characters. */
int config_push_text_check(const char *text, char *why, size_t why_len)
{
    size_t text_len = strlen(text);
    char *words[CONFIG_MAX_ARGS], *scratch, lex_why[200];
    int n, err;

    if (strchr(text, ',') != NULL) {
        snprintf(why, why_len, "a pushed option cannot contain a comma (','): '%s'", text);
        return -EINVAL;
    }
    if (text_len > CONFIG_PUSH_MAX_LEN) {
        snprintf(why, why_len, "the pushed option is %zu characters long (%d max)", text_len,
                 CONFIG_PUSH_MAX_LEN);
        return -EINVAL;
    }
    scratch = malloc(text_len + CONFIG_MAX_ARGS);
    if (scratch == NULL) {
        snprintf(why, why_len, "out of memory");
        return -ENOMEM;
    }
    err = config_split_line(text, text_len, scratch, words, &n, lex_why, sizeof(lex_why));
    free(scratch);
    if (err) {
        snprintf(why, why_len, "clients could not read the pushed option: %s", lex_why);
        return -EINVAL;
    }
    if (n == 0) {
        snprintf(why, why_len, "the pushed option is empty");
        return -EINVAL;
    }
    return 0;
}

int config_h_push(struct config_parser *ps, int argc, char **argv)
{
    struct config_push *push = &ps->cfg->net.push;
    char **grown, why[400];
    int err;

    (void)argc;
    if (push->n_items >= CONFIG_MAX_PUSH) {
        return config_error(ps, "too many push lines (%d max)", CONFIG_MAX_PUSH);
    }
    err = config_push_text_check(argv[1], why, sizeof(why));
    if (err == -ENOMEM) {
        return config_nomem(ps);
    }
    if (err) {
        return config_error(ps, "%s", why);
    }
    grown = realloc(push->items, (push->n_items + 1) * sizeof(*grown));
    if (grown == NULL) {
        return config_nomem(ps);
    }
    push->items = grown;
    push->items[push->n_items] = strdup(argv[1]);
    if (push->items[push->n_items] == NULL) {
        return config_nomem(ps);
    }
    push->n_items++;
    return 0;
}

int config_h_max_clients(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    return config_parse_int(ps, NULL, argv[1], 1, PEER_ID_MAX, &ps->cfg->clients.max_clients);
}

/* `connect-freq N SECS` and `connect-freq-initial N SECS`: integers >= 0 (options.c). */
int config_h_connect_freq(struct config_parser *ps, int argc, char **argv)
{
    int err;

    (void)argc;
    err = config_parse_int(ps, "count", argv[1], 0, INT_MAX, &ps->cfg->clients.connect_freq_max);
    return err ? err
               : config_parse_int(ps, "seconds", argv[2], 0, INT_MAX,
                                  &ps->cfg->clients.connect_freq_per_s);
}

int config_h_connect_freq_initial(struct config_parser *ps, int argc, char **argv)
{
    int err;

    (void)argc;
    err = config_parse_int(ps, "count", argv[1], 0, INT_MAX,
                           &ps->cfg->clients.connect_freq_initial_max);
    return err ? err
               : config_parse_int(ps, "seconds", argv[2], 0, INT_MAX,
                                  &ps->cfg->clients.connect_freq_initial_per_s);
}

int config_h_duplicate_cn(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ps->cfg->clients.duplicate_cn = true;
    return 0;
}

int config_h_explicit_exit_notify(struct config_parser *ps, int argc, char **argv)
{
    if (argc == 1) {
        ps->cfg->clients.explicit_exit_notify = 1;
        return 0;
    }
    return config_parse_int(ps, NULL, argv[1], 0, 1000, &ps->cfg->clients.explicit_exit_notify);
}

/* 2.6 options.c show_compression_warning: a compressing algorithm without allow-compression
 * yes (so far) decompresses only. A compressing algorithm after allow-compression no is refused
 * (2.6 check_compression_settings_valid, fatal there too). */
static int comp_alg_set(struct config_parser *ps, const char *directive, enum comp_framing alg)
{
    struct comp_config *c = &ps->cfg->net.comp;

    c->alg = alg;
    if (!comp_framing_compresses(alg)) {
        return config_warn(ps, NULL, "%s: %s", directive, COMP_MIGRATE_NOTE);
    }
    if (c->allow == COMP_ALLOW_NO) {
        return config_error(ps, "compression is not allowed since allow-compression is 'no'");
    }
    if (c->allow != COMP_ALLOW_YES) {
        return config_warn(ps, NULL,
                           "%s: Compression for receiving enabled. Compression has been "
                           "used in the past to break encryption. Sent packets are not "
                           "compressed unless \"allow-compression yes\" is also set.",
                           directive);
    }
    return 0;
}

int config_h_comp_lzo(struct config_parser *ps, int argc, char **argv)
{
    struct comp_config *c = &ps->cfg->net.comp;

    ps->seen_compression = true;
    if (argc == 2 && strcmp(argv[1], "no") == 0) {
        c->is_adaptive = false;
        return comp_alg_set(ps, "comp-lzo", COMP_FRAMING_LZO_STUB);
    }
    if (argc == 1 || strcmp(argv[1], "adaptive") == 0) {
        c->is_adaptive = true;
        return comp_alg_set(ps, "comp-lzo", COMP_FRAMING_LZO);
    }
    if (strcmp(argv[1], "yes") == 0) {
        c->is_adaptive = false;
        return comp_alg_set(ps, "comp-lzo", COMP_FRAMING_LZO);
    }
    return config_error(ps, "'%s' must be yes, no or adaptive", argv[1]);
}

int config_h_comp_noadapt(struct config_parser *ps, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    ps->cfg->net.comp.is_adaptive = false;
    ps->seen_compression = true;
    return 0;
}

int config_h_compress(struct config_parser *ps, int argc, char **argv)
{
    enum comp_framing f;
    char option[64];

    ps->seen_compression = true;
    snprintf(option, sizeof(option), "compress %s", argc == 2 ? argv[1] : "");
    if (!comp_option_parse(option, &f)) {
        return config_error(ps, "'%s' must be stub, stub-v2, migrate, lzo, lz4 or lz4-v2", argv[1]);
    }
    if (f == COMP_FRAMING_LZO) {
        ps->cfg->net.comp.is_adaptive = false; /* "compress lzo" is never adaptive */
    }
    return comp_alg_set(ps, "compress", f);
}

int config_h_allow_compression(struct config_parser *ps, int argc, char **argv)
{
    struct comp_config *c = &ps->cfg->net.comp;

    (void)argc;
    ps->seen_compression = true;
    if (strcmp(argv[1], "no") == 0) {
        if (comp_framing_compresses(c->alg)) {
            return config_error(ps, "'allow-compression no' conflicts with enabling compression");
        }
        c->allow = COMP_ALLOW_NO;
        return 0;
    }
    if (strcmp(argv[1], "asym") != 0 && strcmp(argv[1], "yes") != 0) {
        return config_error(ps, "'%s' must be no, asym or yes", argv[1]);
    }
    if (c->allow == COMP_ALLOW_NO) {
        return config_error(ps, "cannot set allow-compression to '%s' after 'no'", argv[1]);
    }
    if (strcmp(argv[1], "asym") == 0) {
        c->allow = COMP_ALLOW_ASYM;
        return 0;
    }
    c->allow = COMP_ALLOW_YES;
    return config_warn(ps, NULL,
                       "Compression for sending and receiving enabled. Compression has "
                       "been used in the past to break encryption. Allowing compression allows "
                       "attacks that break encryption. Using \"--allow-compression yes\" is "
                       "strongly discouraged for common usage. See --compress in the manual "
                       "page for more information");
}
